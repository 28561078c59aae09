"""A real two-node Ray cluster on this machine (scripts/ray_cluster.sh): a run through
``--executor ray --ray-address ADDR`` uses both nodes and writes the bytes of a 1-worker local
run, and a run that loses a node mid-way retries its unit on the other node and still does.

Each node is a full Ray node (its own raylet, object store, worker processes, temp dir), so
this is the multi-node path of RayExecutor: scheduling across raylets, results coming back from
another node's workers, a node dying under a running unit. Both nodes see the same file system,
as a real cluster must (docs/ray.md)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dfhelpers import SHARED, dataforge_cmd, run_cli, tree_digest

from dataforge.registry import get_pipeline
from dataforge.store import open_dataset
from dataforge.validation import validate

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ray_cluster.sh"
START_TIMEOUT = 120  # seconds for both nodes (about 12 s here)
UNITS = 10
# The synthetic tiny example with more and slower units (~0.7 s each on one core): the second
# node's first worker takes seconds to start, and units of milliseconds would all be done on
# the head by then. Ten of them keep both nodes busy for several seconds.
EXTRA = ("--scenes", str(UNITS), "--frames", "32", "--resolution", "256x192")
SEED = "7"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("ray") is None,
        reason="ray is not installed (pip install 'dataforge[ray]')",
    ),
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or not all(map(shutil.which, ("setsid", "pkill"))),
        reason="scripts/ray_cluster.sh needs Linux with setsid and pkill",
    ),
]


def _args(out: Path) -> list[str]:
    pipeline = get_pipeline("synthetic")
    assert pipeline is not None
    # later options win: EXTRA overrides the tiny example's --scenes, --frames, --resolution
    args = pipeline.example_args(out)
    args[args.index("--seed") + 1] = SEED
    return [*args, *EXTRA]


def _data_files(root: Path) -> dict[str, str]:
    """sha256 of every file but the manifest (whose provenance differs between runs)."""
    return {k: v for k, v in tree_digest(root).items() if k != "manifest.json"}


def _sessions_alive(sids: set[int]) -> list[int]:
    """Pids of live processes in the given sessions (each node is one setsid session)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) in sids and fields[0] != "Z":  # fields[3]: the session id
            found.append(int(entry))
    return found


@dataclass
class Cluster:
    dir: Path
    address: str
    env: dict[str, str]  # what a driver needs: token authentication, RAY_ADDRESS

    def script(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(SCRIPT), *args],
            env={**os.environ, "DATAFORGE_RAY_DIR": str(self.dir), "PYTHON": sys.executable},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def units_started(self, node: str) -> int:
        """Units a node's workers started, counting the ``:task_name:`` marker a Ray worker
        writes to its log before each task it runs."""
        sessions = [p for p in (self.dir / node).glob("session_*") if not p.is_symlink()]
        return sum(
            f.read_text(errors="replace").splitlines().count(":task_name:run_unit")
            for session in sessions  # not session_latest, a link to the one session
            for f in session.glob("logs/worker-*.out")
        )

    def node_name(self, node: dict) -> str:
        """``head`` or ``node2``: the temp dir its raylet's socket is in."""
        return Path(node["socket"]).relative_to(self.dir).parts[0]

    def nodes(self) -> list[dict]:
        """``ray.nodes()`` as a driver on the cluster sees it."""
        code = (
            "import json, sys, ray\n"
            "ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False)\n"
            "nodes = [{'alive': n['Alive'], 'cpu': n['Resources'].get('CPU', 0),"
            " 'socket': n['RayletSocketName']} for n in ray.nodes()]\n"
            "print('NODES', json.dumps(nodes))\n"
        )
        cmd = [sys.executable, "-c", code, self.address]
        r = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        # Ray prints its own messages (a node marked dead, ...) to a driver's stdout too
        line = next(x for x in r.stdout.splitlines() if x.startswith("NODES "))
        return json.loads(line.removeprefix("NODES "))


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    # Ray's unix sockets live under the temp dir and their paths must stay short: not tmp_path
    root = Path(tempfile.mkdtemp(prefix="dfray-", dir="/tmp"))
    c = Cluster(root, "", {})
    env = {"RAY_START_TIMEOUT": str(START_TIMEOUT // 2)}
    sessions: set[int] = set()
    try:
        try:
            r = subprocess.run(
                ["bash", str(SCRIPT), "start"],
                env={**os.environ, **env, "DATAFORGE_RAY_DIR": str(root), "PYTHON": sys.executable},
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            r = None
        sessions = {int(p.read_text()) for p in root.glob("*.pid")}
        if r is None or r.returncode != 0:
            why = "timed out" if r is None else (r.stderr.strip().splitlines() or ["?"])[-1]
            pytest.skip(f"cannot start a two-node Ray cluster on this machine: {why}")
        c.address = (root / "address").read_text().strip()
        c.env = {**os.environ}
        for line in c.script("env").stdout.splitlines():
            key, _, value = line.removeprefix("export ").partition("=")
            c.env[key] = value
        yield c
    finally:
        c.script("stop")
        deadline = time.time() + 10
        while (left := _sessions_alive(sessions)) and time.time() < deadline:
            time.sleep(0.2)
        for pid in left:  # never leave them running, but say so
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
        assert not left, f"scripts/ray_cluster.sh stop left Ray processes behind: {left}"


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same command and seed with one local worker (no Ray)."""
    out = tmp_path_factory.mktemp("ray-cluster-reference") / "ds"
    r = run_cli(*_args(out), "--workers", "1")
    assert r.returncode == 0, r.stderr
    return out


def _check_dataset(root: Path, reference: Path) -> None:
    assert _data_files(root) == _data_files(reference)
    files = lambda p: json.loads((p / "manifest.json").read_text())["files"]  # noqa: E731
    assert files(root) == files(reference)
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["execution"]["executor"] == "ray"
    units = [s["unit"] for s in manifest["shards"]]
    assert units == [f"scene-{i:04d}" for i in range(UNITS)], "each unit committed once, in order"
    report = validate(root)
    assert report.ok, [p.line() for p in report.problems]
    with open_dataset(root) as ds:
        assert len(ds.episode_ids) == len(set(ds.episode_ids)) == 2 * UNITS
    assert not (root / ".dataforge").exists(), "journal and staging are gone after finalize"


def test_two_node_cluster_gives_the_bytes_of_one_worker(
    cluster: Cluster, one_worker: Path, tmp_path: Path
) -> None:
    nodes = cluster.nodes()
    alive = [n for n in nodes if n["alive"] and n["cpu"] >= 1]
    assert len(alive) == 2, nodes
    assert sorted(map(cluster.node_name, alive)) == ["head", "node2"]

    out = tmp_path / "ray"
    env = {k: v for k, v in cluster.env.items() if k != "RAY_ADDRESS"}  # the flag says where
    r = subprocess.run(
        dataforge_cmd(*_args(out), "--executor", "ray", "--ray-address", cluster.address),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    on = {node: cluster.units_started(node) for node in ("head", "node2")}
    assert on["head"] >= 1 and on["node2"] >= 1, f"units did not run on both nodes: {on}"
    assert sum(on.values()) == UNITS, on
    _check_dataset(out, one_worker)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["execution"]["ray_address"] == cluster.address


def test_a_node_lost_mid_run_is_retried_and_changes_no_byte(
    cluster: Cluster, one_worker: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ray"
    # --ray-address auto: the address comes from RAY_ADDRESS, which `ray_cluster.sh env` sets
    proc = subprocess.Popen(
        dataforge_cmd(*_args(out), "--executor", "ray", "--ray-address", "auto"),
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        t0 = time.time()
        while cluster.units_started("node2") == 0:
            assert proc.poll() is None, (
                f"the run ended before node2 got a unit: {proc.communicate()}"
            )
            assert time.time() - t0 < 120, "node2 never started a unit"
            time.sleep(0.02)
        # node2 is running a unit (~0.7 s): every process of it dies at once, as with a lost
        # machine (raylet, agents, workers); the unit's partial shard stays in staging
        killed = cluster.script("kill", "node2")
        assert killed.returncode == 0, killed.stderr
        stderr = proc.communicate(timeout=240)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    t0 = time.time()  # the GCS marks a node dead once it misses its health checks
    while (alive := [cluster.node_name(n) for n in cluster.nodes() if n["alive"]]) != ["head"]:
        assert time.time() - t0 < 60, f"node2 still alive after its processes died: {alive}"
        time.sleep(1)
    on = {node: cluster.units_started(node) for node in ("head", "node2")}
    # every unit ran to the end once on the head or on node2 before it died; the one node2 lost
    # ran again on the head: more starts than units
    assert on["node2"] >= 1 and sum(on.values()) > UNITS, on
    _check_dataset(out, one_worker)


RETRY_PROBE = r"""
import json, os, sys
from dataclasses import dataclass
from pathlib import Path

import ray

from dataforge.errors import UnitFailedError
from dataforge.run.executors import RAY_MAX_RETRIES, RayExecutor

log = Path(sys.argv[1])


@dataclass(frozen=True)
class Unit:
    id: str


@dataclass(frozen=True)
class Task:
    unit: Unit
    how: str


def attempt(task):
    with open(log, "a") as f:
        f.write(task.unit.id + "\n")
    tried = log.read_text().split().count(task.unit.id)
    if task.how == "raises":
        raise ValueError("a unit's own error")
    if task.how == "dies" or (task.how == "dies once" and tried == 1):
        os._exit(1)  # the worker process vanishes, as on a lost node
    return task.unit.id


def run(how):
    ex = RayExecutor(workers=1)
    try:
        return list(ex.imap_unordered(attempt, [Task(Unit(how.replace(" ", "-")), how)]))
    except ValueError as exc:  # a unit's own error, with the worker's traceback as its cause
        return [f"{type(exc).__name__}: {exc}", str(exc.__cause__)]
    except UnitFailedError as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        ex.close()


# one local Ray instance for the three runs (the executor uses it and leaves it running)
ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
result = {how: run(how) for how in ("raises", "dies once", "dies")}
Path(sys.argv[2]).write_text(json.dumps({"retries": RAY_MAX_RETRIES, **result}))
"""


def test_ray_retries_a_lost_worker_not_a_unit_that_raises(tmp_path: Path) -> None:
    """What the node-death test relies on, on a local Ray instance: a unit whose worker dies is
    run again (RAY_MAX_RETRIES times), a unit that raises is not, and a unit that keeps dying
    fails the run with a one-line error naming it."""
    log, out = tmp_path / "attempts", tmp_path / "result.json"
    r = subprocess.run(
        [sys.executable, "-c", RETRY_PROBE, str(log), str(out)],
        env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    retries = result["retries"]
    assert retries >= 1
    own, where = result["raises"]
    assert own == "ValueError: a unit's own error"
    assert "in attempt" in where and "a unit's own error" in where  # --debug shows the worker
    assert result["dies once"] == ["dies-once"]
    assert result["dies"].startswith(
        f"UnitFailedError: unit dies failed on Ray ({retries} retries)"
    )
    attempts = log.read_text().split()
    assert attempts.count("raises") == 1, "a unit's own error is not retried"
    assert attempts.count("dies-once") == 2
    assert attempts.count("dies") == 1 + retries


SPAMEM_HOUSES = SHARED / "data" / "procthor_houses"


@pytest.mark.skipif(not SPAMEM_HOUSES.is_dir(), reason="needs ../shared/data/procthor_houses")
def test_spamem_on_two_nodes_gives_the_bytes_of_one_worker(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The design card's headline command on the cluster: three houses, rendered on both nodes
    (EGL in Ray workers), the same files as one local worker."""
    args = [
        "spamem",
        "generate",
        "--houses",
        "3",
        "--house-source",
        str(SPAMEM_HOUSES),
        "--sequences-per-house",
        "2",
        "--steps",
        "3",
        "--resolution",
        "320x240",
        "--seed",
        "1",
        "--quiet",
    ]
    one = subprocess.run(
        dataforge_cmd(*args, "--out", str(tmp_path / "one")),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert one.returncode == 0, one.stderr
    env = {k: v for k, v in cluster.env.items() if k != "RAY_ADDRESS"}
    r = subprocess.run(
        dataforge_cmd(
            *args,
            "--out",
            str(tmp_path / "ray"),
            "--executor",
            "ray",
            "--ray-address",
            cluster.address,
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    on = {node: cluster.units_started(node) for node in ("head", "node2")}
    assert sum(on.values()) == 3 and min(on.values()) >= 1, on
    assert _data_files(tmp_path / "ray") == _data_files(tmp_path / "one")
