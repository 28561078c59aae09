"""Where houses come from (dataforge.world.house_sources): folders of *.json and JSON-lines files,
plain or gzip-compressed, and the one-line errors for everything else."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from dfhelpers import SHARED

from dataforge.errors import InputNotFoundError, MalformedInputError, UsageError
from dataforge.world import load_house
from dataforge.world.house_sources import HouseSource, open_source

HOUSES = SHARED / "data" / "procthor_houses"
needs_houses = pytest.mark.skipif(
    not HOUSES.is_dir(), reason=f"example ProcTHOR houses not present ({HOUSES})"
)
TINY = [{"id": f"house-{k}", "rooms": [], "n": k, "text": "é"} for k in range(5)]


def write_jsonl(path: Path, lines: list[str]) -> Path:
    data = "".join(f"{line}\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)
    return path


def one_line_error(exc: pytest.ExceptionInfo[Exception], *parts: str) -> str:
    text = str(exc.value)
    assert "\n" not in text
    for part in parts:
        assert part in text, (part, text)
    return text


# -- folders ---------------------------------------------------------------------------------


def test_folder_lists_json_files_in_sorted_order(tmp_path: Path) -> None:
    names = ["b.json", "a.json", "c10.json", "c2.json", "A.json"]
    for k, name in enumerate(names):
        (tmp_path / name).write_text(json.dumps(TINY[k]))
    (tmp_path / "notes.txt").write_text("not a house")
    (tmp_path / "skip.json.gz").write_bytes(gzip.compress(b"{}"))
    (tmp_path / "dir.json").mkdir()  # a folder named like a house file is not one
    src = open_source(tmp_path)
    assert isinstance(src, HouseSource) and src.kind == "dir" and src.path == tmp_path
    assert (
        src.names == tuple(sorted(names)) == ("A.json", "a.json", "b.json", "c10.json", "c2.json")
    )
    assert len(src) == 5
    for k, name in enumerate(src.names):
        assert src.rel(k) == name
        assert src.read(k) == json.loads((tmp_path / name).read_text())
    assert open_source(str(tmp_path)) == src  # a string path is the same source


@needs_houses
def test_folder_of_real_houses(tmp_path: Path) -> None:
    src = open_source(HOUSES)
    files = sorted(p.name for p in HOUSES.glob("*.json"))
    assert list(src.names) == files and len(src) >= 3
    for k, name in enumerate(files):
        data = src.read(k)
        assert data == json.loads((HOUSES / name).read_text())
        assert load_house(data, name=name).rooms  # a usable house


def test_empty_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("x")
    with pytest.raises(InputNotFoundError) as exc:
        open_source(tmp_path)
    one_line_error(exc, str(tmp_path), "*.json")


def test_bad_file_in_a_folder_names_it(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(TINY[0]))
    (tmp_path / "b.json").write_text("{not json")
    (tmp_path / "c.json").write_text("[1, 2]")
    src = open_source(tmp_path)
    assert src.read(0) == TINY[0]
    with pytest.raises(MalformedInputError) as exc:
        src.read(1)
    one_line_error(exc, "b.json")
    with pytest.raises(MalformedInputError) as exc:
        src.read(2)
    one_line_error(exc, "house 2", "not a JSON object")


# -- JSON lines ------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_jsonl_houses_in_line_order(tmp_path: Path, suffix: str) -> None:
    # blank and whitespace-only lines are not houses
    lines = [json.dumps(TINY[0]), "", json.dumps(TINY[1]), "   ", *map(json.dumps, TINY[2:])]
    path = write_jsonl(tmp_path / f"houses{suffix}", lines)
    src = open_source(path)
    assert src.kind == "jsonl" and len(src) == len(TINY)
    assert src.names == tuple(f"line-{k}" for k in range(len(TINY)))
    assert [src.read(k) for k in range(len(src))] == TINY
    assert src.read(3) == TINY[3]  # any order, independently
    assert src.rel(0) == ""


@needs_houses
@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_jsonl_of_real_houses(tmp_path: Path, suffix: str) -> None:
    files = sorted(HOUSES.glob("*.json"))
    houses = [json.loads(p.read_text()) for p in files]
    path = write_jsonl(tmp_path / f"procthor{suffix}", [json.dumps(h) for h in reversed(houses)])
    src = open_source(path)
    assert len(src) == len(houses)
    for k, want in enumerate(reversed(houses)):
        got = src.read(k)
        assert got == want
        assert load_house(got).walls


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_empty_jsonl_is_refused(tmp_path: Path, suffix: str) -> None:
    for lines in ([], ["", "  ", ""]):
        path = write_jsonl(tmp_path / f"empty{suffix}", lines)
        with pytest.raises(MalformedInputError) as exc:
            open_source(path)
        one_line_error(exc, str(path), "no houses")


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_bad_line_names_its_house_and_file_line(tmp_path: Path, suffix: str) -> None:
    lines = [json.dumps(TINY[0]), "", "", "{broken", json.dumps(TINY[1]), "[1, 2]"]
    path = write_jsonl(tmp_path / f"h{suffix}", lines)
    src = open_source(path)  # counting lines does not parse them
    assert len(src) == 4
    assert src.read(0) == TINY[0] and src.read(2) == TINY[1]
    with pytest.raises(MalformedInputError) as exc:
        src.read(1)
    # house 1 is on the file's 4th line (after two blank ones)
    one_line_error(exc, str(path), "house 1", "(line 4)", "not valid JSON")
    with pytest.raises(MalformedInputError) as exc:
        src.read(3)
    one_line_error(exc, "house 3", "not a JSON object")


def test_unreadable_files_are_malformed(tmp_path: Path) -> None:
    fake_gz = tmp_path / "fake.jsonl.gz"
    fake_gz.write_text(json.dumps(TINY[0]) + "\n")  # not gzip
    with pytest.raises(MalformedInputError) as exc:
        open_source(fake_gz)
    one_line_error(exc, str(fake_gz), "cannot read houses")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"name": "\xe9"}\n')  # not UTF-8
    with pytest.raises(MalformedInputError) as exc:
        open_source(latin)
    one_line_error(exc, str(latin), "cannot read houses")


# -- usage errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["dir", ".jsonl", ".jsonl.gz"])
def test_out_of_range_index_is_a_usage_error(tmp_path: Path, kind: str) -> None:
    if kind == "dir":
        for k in range(3):
            (tmp_path / f"{k}.json").write_text(json.dumps(TINY[k]))
        src = open_source(tmp_path)
    else:
        src = open_source(write_jsonl(tmp_path / f"h{kind}", [json.dumps(h) for h in TINY[:3]]))
    assert src.read(2) == TINY[2]
    for k in (3, 10, -1):
        with pytest.raises(UsageError) as exc:
            src.read(k)
        assert type(exc.value) is UsageError  # not an input error: the caller asked wrongly
        one_line_error(exc, "3 houses", f"no house {k}")


@pytest.mark.parametrize("name", ["houses.json", "houses.txt", "houses.json.gz", "houses.gz"])
def test_wrong_file_suffix_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(TINY[0]) + "\n")
    with pytest.raises(UsageError) as exc:
        open_source(path)
    assert type(exc.value) is UsageError
    one_line_error(exc, name, ".jsonl")


def test_missing_path_is_not_found(tmp_path: Path) -> None:
    for path in (tmp_path / "nowhere", tmp_path / "nowhere.jsonl", tmp_path / "a" / "b.jsonl.gz"):
        with pytest.raises(InputNotFoundError) as exc:
            open_source(path)
        assert isinstance(exc.value, FileNotFoundError)
        one_line_error(exc, str(path), "not found")


def test_source_is_a_frozen_value(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "h.jsonl", [json.dumps(TINY[0])])
    src = open_source(path)
    with pytest.raises(AttributeError):
        src.names = ()  # type: ignore[misc]
    assert src == HouseSource(path, "jsonl", ("line-0",))
    data: dict[str, Any] = src.read(0)
    data["n"] = 99  # the caller's copy: reading again gives the file's house
    assert src.read(0) == TINY[0]
