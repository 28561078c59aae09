"""One conformance suite over every registered pipeline (as ManiSkill's tests run over its
registered envs): each pipeline's tiny example (declared beside its registration) generates
and validates; 1 and 2 workers write identical files; a flipped byte in any data file is caught
and named; SIGKILL mid-run then a rerun gives the files of an uninterrupted run; `dataforge
reproduce` passes; the golden checksums hold; and every registered invariant catches a breaker
that breaks exactly it while keeping the manifest consistent. A new pipeline is covered by
registering (and adding tests/golden/<name>.json and tests/pipelines/<name>/breakers.py)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dfhelpers import SHARED, run_cli, tree_digest

from dataforge import golden
from dataforge.registry import get_pipeline, registered
from dataforge.store.layout import CONTROL_DIR, JOURNAL_FILE, MANIFEST
from dataforge.store.manifest import read_manifest
from dataforge.validation import validate

TESTS = Path(__file__).parent
GOLDEN = TESTS / "golden"
DATA = SHARED / "data"
NAMES = [name for name, p in registered().items() if p.tiny is not None]
pytestmark = pytest.mark.slow


def data_files(root: Path) -> dict[str, str]:
    """sha256 of every file but the manifest (whose provenance differs between runs)."""
    return {k: v for k, v in tree_digest(root).items() if k != MANIFEST and not k.startswith(".")}


def breakers(name: str) -> dict[str, Callable[[Path], None]]:
    path = TESTS / "pipelines" / name / "breakers.py"
    if not path.is_file():
        return {}
    spec = importlib.util.spec_from_file_location(f"breakers_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.BREAKERS)


def test_every_pipeline_has_a_tiny_example() -> None:
    assert list(registered()) == NAMES, "every pipeline declares a tiny example"


@pytest.mark.parametrize("name", NAMES)
def test_tiny_example_validates(name: str, tiny_dataset: Callable[..., Path]) -> None:
    root = tiny_dataset(name)
    report = validate(root)
    assert report.ok, [p.line() for p in report.problems]
    pipeline = get_pipeline(name)
    assert pipeline is not None
    assert report.checked["invariants"] == list(pipeline.hooks.invariants)
    manifest = read_manifest(root)
    assert len(manifest.shards) >= 2, "the tiny example has at least two units"
    assert len(manifest.episodes) >= 2


@pytest.mark.parametrize("name", NAMES)
def test_one_and_two_workers_write_identical_files(
    name: str, tiny_dataset: Callable[..., Path]
) -> None:
    one, two = data_files(tiny_dataset(name)), data_files(tiny_dataset(name, workers=2))
    assert one == two, sorted(k for k in one.keys() | two.keys() if one.get(k) != two.get(k))


@pytest.mark.parametrize("name", NAMES)
def test_a_flipped_byte_in_any_data_file_is_caught_and_named(
    name: str, tiny_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    copy = Path(shutil.copytree(tiny_dataset(name), tmp_path / "copy"))
    for rel in read_manifest(copy).files:
        path = copy / rel
        original = path.read_bytes()
        flipped = bytearray(original)
        flipped[len(flipped) // 2] ^= 0x01
        path.write_bytes(bytes(flipped))
        try:
            report = validate(copy, invariants=False)
            found = [(p.kind, p.path) for p in report.problems]
            assert found[0] == ("altered", rel), (rel, found)
            # what follows (a shard that no longer decodes) concerns the same file
            assert all(path and rel.startswith(path) for _, path in found), (rel, found)
        finally:
            path.write_bytes(original)


# A run that commits its first unit and then waits (the test SIGKILLs it there): the units are
# run in this process (--workers 1), the second one only after a pause.
PAUSED_RUN = """
import sys, time
import dataforge.run.runner as runner
first = runner.run_unit
done = []
def paused(task):
    if done:
        time.sleep(600)
    done.append(task)
    return first(task)
runner.run_unit = paused
from dataforge.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _journal_lines(root: Path) -> int:
    journal = root / CONTROL_DIR / JOURNAL_FILE
    return journal.read_text().count("\n") if journal.is_file() else 0


@pytest.mark.parametrize("name", NAMES)
def test_sigkill_then_rerun_gives_the_uninterrupted_files(
    name: str, tiny_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    clean = tiny_dataset(name)
    pipeline = get_pipeline(name)
    assert pipeline is not None
    root = tmp_path / "killed"
    assert pipeline.tiny is not None
    reads = {up: tiny_dataset(up) for up in pipeline.tiny.read_pipelines}
    args = pipeline.example_args(root, data_dir=DATA, reads=reads)
    proc = subprocess.Popen(
        [sys.executable, "-c", PAUSED_RUN, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        t0 = time.time()
        while _journal_lines(root) < 1:
            assert proc.poll() is None, f"the run ended early: {proc.communicate()}"
            assert time.time() - t0 < 1200, "no unit was committed"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert not (root / MANIFEST).exists()
    r = run_cli(*args, timeout=1800)
    assert r.returncode == 0, r.stderr
    assert "1 resumed" in r.stdout
    assert data_files(root) == data_files(clean)
    assert validate(root).ok


@pytest.mark.parametrize("name", NAMES)
def test_reproduce_passes(name: str, tiny_dataset: Callable[..., Path]) -> None:
    root = tiny_dataset(name)
    r = run_cli("reproduce", str(root), "--quiet", timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(read_manifest(root).files)
    assert r.stdout.strip().endswith(
        f"all {n} data files are identical (sha256) to a fresh {name} rebuild"
    )


def extra_files(root: Path) -> set[str]:
    """The files beside the shards a pipeline wrote (its registered ``extras``)."""
    m = read_manifest(root)
    fixed = {"episodes.csv", "croissant.json"}
    return {rel for rel in m.files if m.shard_of(rel) is None and rel not in fixed}


@pytest.mark.parametrize("name", NAMES)
def test_a_subset_of_one_unit_validates_and_reproduces(
    name: str, tiny_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    """``dataforge subset`` keeps the first unit of the tiny dataset: the result passes the
    pipeline's checks (its files beside the shards made again by the registered ``extras``,
    its upstream datasets found through the inherited inputs) and reproduces from its parent."""
    root = tiny_dataset(name)
    m = read_manifest(root)
    unit = m.shards[0].unit
    out = tmp_path / "subset"
    where = f"unit == {unit!r}"
    r = run_cli("subset", str(root), "--where", where, "--out", str(out), "--quiet", timeout=1800)
    assert r.returncode == 0, r.stderr
    sub = read_manifest(out)
    assert list(sub.episodes) == [e for e, loc in m.episodes.items() if loc.unit == unit]
    report = validate(out)
    assert report.ok, [p.line() for p in report.problems]
    assert report.checked["invariants"] == list(get_pipeline(name).hooks.invariants)  # type: ignore[union-attr]
    assert bool(extra_files(out)) == bool(extra_files(root)), "register the pipeline's extras"
    r = run_cli("reproduce", str(out), "--quiet", timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("name", NAMES)
def test_golden_checksums(name: str, tiny_dataset: Callable[..., Path]) -> None:
    path = GOLDEN / f"{name}.json"
    assert path.is_file(), f"{path} is missing: write it with '{golden.REWRITE}'"
    record = json.loads(path.read_text())
    pipeline = get_pipeline(name)
    assert pipeline is not None
    assert record["command"] == golden.example_command(pipeline), f"rewrite: {golden.REWRITE}"
    problems = golden.compare(pipeline, tiny_dataset(name), record)
    assert not problems, "\n".join(problems)


def _invariant_cases() -> list[Any]:
    cases = []
    for name in NAMES:
        pipeline = registered()[name]
        for key in pipeline.hooks.invariants:
            cases.append(pytest.param(name, key, id=f"{name}-{key}"))
    return cases


@pytest.mark.parametrize(("name", "key"), _invariant_cases())
def test_each_invariant_catches_what_breaks_it(
    name: str, key: str, tiny_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    breaker = breakers(name).get(key)
    assert breaker is not None, f"tests/pipelines/{name}/breakers.py has no breaker for {key!r}"
    copy = Path(shutil.copytree(tiny_dataset(name), tmp_path / "copy"))
    breaker(copy)
    report = validate(copy)
    assert report.problems, f"breaking {key!r} went unnoticed"
    assert {p.kind for p in report.problems} == {"invariant"}, [p.line() for p in report.problems]
    assert {p.invariant for p in report.problems} == {key}, [p.line() for p in report.problems]
