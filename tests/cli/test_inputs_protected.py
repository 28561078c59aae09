"""No command destroys or mislabels what it reads (issue 36).

An output that is, contains or lies inside an input is refused in one line (exit 2) before
anything is touched, with or without --overwrite; an output that cannot be written is refused
before any work; a damaged input dataset fails before the output folder exists, without telling
to resume; a rerun after a kill during a video write removes the temporary files it left.

The refusals run the command line in this process (``main``): they must happen before any work.
Each input is a copy of a pipeline's tiny dataset in a folder of its own (``holder/in``), so the
test can hand a command the input itself, a folder inside it and the folder holding it, and
compare the sha256 of every file under the holder before and after.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from dfhelpers import SHARED, run_cli, tree_digest

from dataforge.cli.main import main
from dataforge.errors import UsageError
from dataforge.outputs import check_apart
from dataforge.registry import registered
from dataforge.store.atomic import TMP_PREFIX, remove_temporaries
from dataforge.validation import validate

slow = pytest.mark.slow  # the tiny datasets of five pipelines, made by the real command

Tiny = Callable[..., Path]
# every generation command that reads something: its tiny example (a new one is covered too)
DERIVED = sorted(
    name for name, p in registered().items() if p.tiny is not None and (p.tiny.reads or p.tiny.data)
)


def test_the_rule_compares_resolved_paths(tmp_path: Path) -> None:
    given = tmp_path / "in"
    (given / "deep").mkdir(parents=True)
    (given / "f.json").write_text("{}")
    (tmp_path / "link").symlink_to(given)
    os.link(given / "f.json", tmp_path / "hard.json")
    refused = {
        given: "is",
        tmp_path / "link": "is",
        tmp_path / "in" / ".." / "in": "is",
        tmp_path / "hard.json": "is",  # the input's file under another name
        given / "deep" / "new": "lies inside",
        tmp_path / "link" / "new": "lies inside",
        tmp_path: "contains",
    }
    for out, relation in refused.items():
        inputs = [given / "f.json"] if out.name == "hard.json" else [given]
        with pytest.raises(
            UsageError, match=f"refusing --out {re.escape(str(out))}: it {relation}"
        ):
            check_apart(out, "--out", inputs)
    for out in (tmp_path / "in2", tmp_path / "i", tmp_path / "other" / "in"):
        check_apart(out, "--out", [given, None, tmp_path / "missing"])  # apart: no error
    check_apart(given, "--out", [tmp_path / "gone"])  # an input that is not there holds nothing


def test_an_input_file_inside_a_dataset_protects_the_whole_dataset(tmp_path: Path) -> None:
    """``ir2r score --tours ds/tours.json --per-episode ds/x.json`` would leave ``ds`` failing
    validate ([extra]): a file of a dataset protects the dataset. A folder with a manifest.json
    that is not a dataforge manifest (no integer format_version) is not a dataset."""
    ds = tmp_path / "ds"
    (ds / "tours").mkdir(parents=True)
    (ds / "manifest.json").write_text('{"format_version": 1, "files": {}}')
    tours = ds / "tours" / "val.json"
    tours.write_text("{}")
    for out in (ds / "per_episode.json", ds / "tours" / "new.json"):
        with pytest.raises(UsageError, match=f"lies inside the dataset {re.escape(str(ds))} "):
            check_apart(out, "--per-episode", [tours])
    with pytest.raises(UsageError, match="it contains the input"):
        check_apart(ds, "--per-episode", [tours])
    check_apart(tmp_path / "beside.json", "--per-episode", [tours])  # apart
    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text('{"name": "a web app"}')
    (other / "in.json").write_text("{}")
    check_apart(other / "out.json", "--out", [other / "in.json"])  # not a dataset: allowed


def test_temporaries_are_removed_anywhere_but_data_is_kept(tmp_path: Path) -> None:
    for rel in (
        "videos/.tmp-a.mp4.1",
        "videos/x/.tmp-.tmp-b.mp4.2.2.0",
        ".tmp-c.json.3",
        ".dataforge/.tmp-run.json.4",
        "videos/.tmp-kept.mp4",
        "videos/a.mp4",
        "shards/u.zarr/c/0",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    (tmp_path / "shards" / ".tmp-u.zarr.5" / "c").mkdir(parents=True)
    removed = remove_temporaries(tmp_path, keep={"videos/.tmp-kept.mp4"})
    assert sorted(removed) == [
        ".dataforge/.tmp-run.json.4",
        ".tmp-c.json.3",
        "shards/.tmp-u.zarr.5",
        "videos/.tmp-a.mp4.1",
        "videos/x/.tmp-.tmp-b.mp4.2.2.0",
    ]
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["shards/u.zarr/c/0", "videos/.tmp-kept.mp4", "videos/a.mp4"]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 2) -> str:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert rc == code, (argv, out[-1000:], err[-1000:])
    assert err.startswith("error: ") and err.count("\n") == 1, (argv, err)
    assert "Traceback" not in err and "internal error" not in err
    return err


def _holder(src: Path, base: Path, name: str) -> Path:
    """A copy of ``src`` at ``base/name/in``: the folder ``base/name`` holds only the input."""
    dst = base / name / "in"
    shutil.copytree(src, dst, symlinks=True)
    return dst


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared data files the tiny examples read, copied (a run may not write among them)."""
    base = tmp_path_factory.mktemp("data") / "in"
    for p in registered().values():
        for rel in p.tiny.data if p.tiny is not None else ():
            if not (SHARED / "data" / rel).is_file():
                pytest.skip(f"{p.name}'s tiny example needs {rel} in {SHARED / 'data'}")
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(SHARED / "data" / rel, base / rel)
    return base


@pytest.fixture(scope="module")
def inputs(tiny_dataset: Tiny, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Copies of the tiny datasets the commands below read, by pipeline."""
    base = tmp_path_factory.mktemp("inputs")
    names = {up for n in DERIVED for up in registered()[n].tiny.read_pipelines}  # type: ignore[union-attr]
    names |= {"spamem-tasks", "findingdory-tasks", "ir2r"}
    return {name: _holder(tiny_dataset(name), base, name) for name in sorted(names)}


def _places(given: Path) -> list[tuple[str, Path]]:
    """Where an output may not be: the input itself, inside it, the folder holding it."""
    return [("is", given), ("lies inside", given / "sub"), ("contains", given.parent)]


FILE_ONLY = ("lies inside",)  # an option taking a file: click refuses a folder itself


def _check_refusals(
    make: Callable[[Path], list[str]],
    given: Path,
    capsys: pytest.CaptureFixture[str],
    what: str = "--out",
    extra: tuple[tuple[str, ...], ...] = ((),),
    relations: tuple[str, ...] = ("is", "lies inside", "contains"),
) -> None:
    before = tree_digest(given.parent)
    for relation, out in _places(given):
        if relation not in relations:
            continue
        for more in extra:
            err = _refused([*make(out), *more], capsys)
            assert f"refusing {what} {out}: it {relation} the input" in err, err
    assert tree_digest(given.parent) == before
    assert not (given / "sub").exists()


@slow
@pytest.mark.parametrize("name", DERIVED)
def test_a_run_never_writes_into_what_it_reads(
    name: str, inputs: dict[str, Path], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline = registered()[name]
    assert pipeline.tiny is not None
    reads = {up: inputs[up] for up in pipeline.tiny.read_pipelines}
    # the input the output is placed against: the dataset read, else the data folder
    given = next(iter(reads.values())) if reads else data_dir
    _check_refusals(
        lambda out: pipeline.example_args(out, data_dir=data_dir, reads=reads),
        given,
        capsys,
        extra=((), ("--overwrite",)),
    )


@slow
@pytest.mark.parametrize(
    ("argv", "read"),
    [
        (["spamem", "tasks"], "spamem"),
        (["findingdory", "collect"], "findingdory"),
        (["findingdory", "tasks"], "findingdory-collect"),
        (["multion", "oracle"], "multion"),
    ],
)
def test_commands_taking_the_dataset_as_argument(
    argv: list[str], read: str, inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    given = inputs[read]
    _check_refusals(
        lambda out: [*argv, given, "--out", out, "--quiet"],
        given,
        capsys,
        extra=((), ("--overwrite",)),
    )
    # a link to the input is the input
    link = given.parent.parent / f"{read}-link"
    link.symlink_to(given)
    try:
        err = _refused([*argv, link, "--out", given, "--overwrite"], capsys)
        assert "it is the input" in err
    finally:
        link.unlink()


@slow
def test_file_outputs_never_land_in_what_they_read(
    inputs: dict[str, Path], data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm = ["--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m"]
    every = ("is", "lies inside", "contains")
    for argv, given, what, relations in [
        (
            ["spamem", "baseline", "{in}", "--kind", "oracle", "--out"],
            "spamem-tasks",
            "--out",
            FILE_ONLY,
        ),
        (
            ["findingdory", "baseline", "{in}", "--kind", "oracle", "--out"],
            "findingdory-tasks",
            "--out",
            FILE_ONLY,
        ),
        (["spamem", "evaluate", "{in}", *llm, "--out"], "spamem-tasks", "--out", FILE_ONLY),
        (
            ["findingdory", "evaluate", "{in}", *llm, "--out"],
            "findingdory-tasks",
            "--out",
            FILE_ONLY,
        ),
        (["ir2r", "export", "{in}", "--out"], "ir2r", "--out", FILE_ONLY),
        (["stats", "{in}", "--plot"], "spamem", "--plot", every),
        (["inspect", "{in}", "--preview"], "multion", "--preview", every),
        (["reproduce", "{in}", "--quiet", "--keep"], "spamem-tasks", "--keep", every),
    ]:
        root = inputs[given]
        _check_refusals(
            lambda out: [root if a == "{in}" else a for a in argv] + [out],  # noqa: B023
            root,
            capsys,
            what=what,
            relations=relations,
        )
    # ir2r score reads files and --data-dir: --per-episode may be none of them, nor lie inside
    tours = inputs["ir2r"] / "tours_val_seen.json"
    reference = data_dir / "r2r" / "R2R_val_seen.json"
    before = {p: p.read_bytes() for p in (tours, reference)}
    score = [
        "ir2r",
        "score",
        "--tours",
        tours,
        "--reference",
        reference,
        "--predictions",
        reference,
        "--data-dir",
        data_dir,
        "--per-episode",
    ]
    for out, relation in [(reference, "is"), (tours, "is"), (data_dir / "x.json", "inside")]:
        assert relation in _refused([*score, out], capsys)
    assert {p: p.read_bytes() for p in before} == before


@slow
def test_unwritable_outputs_fail_first_in_one_line(
    inputs: dict[str, Path], data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tours = inputs["ir2r"] / "tours_val_seen.json"
    reference = data_dir / "r2r" / "R2R_val_seen.json"
    commands = [
        ["spamem", "baseline", inputs["spamem-tasks"], "--kind", "prior", "--out"],
        ["findingdory", "baseline", inputs["findingdory-tasks"], "--kind", "oracle", "--out"],
        [
            "ir2r",
            "score",
            "--tours",
            tours,
            "--reference",
            reference,
            "--predictions",
            reference,
            "--data-dir",
            data_dir,
            "--per-episode",
        ],
    ]
    for argv in commands:
        for out, needle in [
            (tmp_path / "no" / "such" / "p.jsonl", "does not exist"),
            (Path("/proc/p.jsonl"), "cannot write"),
        ]:
            err = _refused([*argv, out], capsys)
            assert needle in err and str(out) in err, err
            assert capsys.readouterr().out == ""
    assert not (tmp_path / "no").exists()


def _damage(root: Path, *, truncate: bool) -> None:
    """Change a chunk of the first unit's world graphs (what every question reads): cut it
    short, or flip a byte (same size: only decoding finds it)."""
    chunk = sorted((root / "shards").glob("*/graphs/c/*"))[0]
    data = bytearray(chunk.read_bytes())
    if truncate:
        del data[len(data) // 2 :]
    else:
        data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))


@slow
@pytest.mark.parametrize("how", ["not a dataset", "truncated", "same size"])
def test_a_bad_input_dataset_leaves_no_output_and_no_resume_hint(
    how: str, inputs: dict[str, Path], tmp_path: Path
) -> None:
    src = tmp_path / "seq"
    if how == "not a dataset":
        src.mkdir()
        (src / "notes.txt").write_text("hello\n")
    else:
        shutil.copytree(inputs["spamem"], src)
        _damage(src, truncate=how == "truncated")
    out = tmp_path / "made" / "tasks"
    r = run_cli("spamem", "tasks", str(src), "--out", str(out), "--quiet", "--workers", "1")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert str(src) in r.stderr and "resume" not in r.stderr, r.stderr
    assert not (tmp_path / "made").exists()


# A collect run killed (SIGKILL) as it finishes its first video (encoded under its temporary
# name, not yet renamed), after every unit committed.
KILLED_IN_VIDEO = """
import os, signal, sys
from dataforge.viz import video
def killed(path):
    os.kill(os.getpid(), signal.SIGKILL)
video.fsync_tree = killed
from dataforge.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@slow
def test_a_rerun_after_a_kill_in_a_video_write_leaves_no_temporaries(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "experience"
    args = [
        "findingdory",
        "collect",
        str(inputs["findingdory"]),
        "--resolution",
        "48x64",
        "--limit",
        "1",
        "--video",
        "mp4",
        "--out",
        str(out),
        "--quiet",
    ]
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_IN_VIDEO, *args], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == -9, proc.stderr
    left = [p for p in out.rglob("*") if p.name.startswith(TMP_PREFIX)]
    assert left and all(out / "videos" in p.parents for p in left), left
    r = run_cli(*args, timeout=600)
    assert r.returncode == 0, r.stderr
    assert not [p for p in out.rglob("*") if p.name.startswith(TMP_PREFIX)]
    report = validate(out)
    assert report.ok, [p.line() for p in report.problems]
    videos = [p for p in (out / "videos").rglob("*") if p.is_file()]
    assert videos and all(p.suffix == ".mp4" for p in videos)
