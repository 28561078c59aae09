"""Record the initial layouts of the upstream RoboMME envs as a test fixture (issue 21).

Dev script: not imported by the package, not run by the tests. It drives the public RoboMME
benchmark code (a read-only checkout of its ``src/`` folder; nothing of it is copied here) and
writes what each episode looks like after ``gym.make(<Task>, seed=…, difficulty=…)`` followed by
``env.reset()`` (no seed, no options) -- the sequence the upstream generation harness uses.

For every record of ``record_dataset_<Task>_metadata.json`` in ``--metadata-dir`` it stores

- ``actors``: every actor of ``env.unwrapped.scene.actors`` except ``table-workspace`` and
  ``ground``, in that dict's order, as ``name -> [x, y, z, qw, qx, qy, qz]`` (world pose);
- ``articulations``: every articulation of ``scene.articulations`` (robot included) as
  ``name -> {"root": [x, y, z, qw, qx, qy, qz], "qpos": [...]}``;
- ``attrs``: a few task-level facts the env exposes as attributes (repeat counts, goal colours
  and cubes, swap schedules, visit orders, highlighted cubes, ...), actors given by name, plus
  ``task_list`` (the ``name`` of every task-list entry) and ``fail_grasp_task_index``;
- ``error`` (instead of the three above) when make or reset raises, e.g. SceneGenerationError.

Numbers are rounded to ``--decimals`` (default 6). Like the harness, metadata episodes 0-5 are
made with ``robomme_failure_recovery=True`` and mode ``"z"`` (0-2) or ``"xy"`` (3-5), because the
recovery draw comes from the layout generator in some tasks (``--no-recovery-kwargs`` turns that
off); the make kwargs are ``obs_mode="state"``, ``control_mode="pd_joint_pos"`` (as the harness),
``sim_backend="physx_cpu"``, ``render_backend="none"``. The output is gzip-compressed JSON
``{"header": {...}, "records": [...]}`` (header: upstream commit, package versions, date, make
kwargs), byte-identical for identical values (gzip mtime 0; the header holds the date, though).
On stderr it logs progress, errors, and per task what ``env.reset()`` changed compared with the
state right after ``gym.make`` (actors, articulations, attrs).

Run (CPU only; 0.4-0.8 s per episode, all 800 val records in 6-10 min; ``VK_ICD_FILENAMES``
defaults to the repo's lavapipe ICD)::

    .venv/bin/python scripts/robomme_upstream_fixture.py \\
        --upstream-src /work/upstream_robomme/src \\
        --out tests/pipelines/robomme/fixtures/upstream_val_initial.json.gz [--tasks BinFill ...]

The script imports ``dataforge`` first, which pins Intel MKL to its compatible code path
(``dataforge.numerics``): upstream's layouts of some seeds depend on MKL's path (its float32
``torch.sqrt``), and the released data hold the compatible path's. The header records the CPU
and the path ``torch.sqrt`` took. Upstream's layouts on an Intel CPU with AVX-512 (MKL's
AVX-512 path) are recorded on any AVX-512 machine by forcing that path, and only the records
that differ from the main fixture are kept (docs/robomme_upstream.md, "CPU-dependent
layouts")::

    cc -shared -fPIC -o /tmp/libmkl_intel.so tests/mkl_intel_path.c
    LD_PRELOAD=/tmp/libmkl_intel.so MKL_CBWR=AUTO .venv/bin/python \\
        scripts/robomme_upstream_fixture.py --upstream-src /work/upstream_robomme/src \\
        --only-differing-from tests/pipelines/robomme/fixtures/upstream_val_initial.json.gz \\
        --out tests/pipelines/robomme/fixtures/upstream_val_initial_mkl_avx512.json.gz

Likewise numpy's loops: on a CPU without AVX-512, numpy's AVX2 (or baseline) loops give some
layouts differently (trimesh's box fit); forced on any machine with
``NPY_DISABLE_CPU_FEATURES="AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX
AVX512_CNL AVX512_ICL"`` and recorded as ``upstream_val_initial_numpy_avx2.json.gz``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gzip
import importlib
import io
import json
import logging
import math
import os
import platform
import signal
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_METADATA_DIR = REPO.parent / "shared" / "data" / "robomme" / "env_metadata" / "val"
DEFAULT_ICD = REPO / ".venv" / "share" / "dataforge" / "vulkan" / "lvp_icd.json"
UPSTREAM_COMMIT = "a3842d1b77bc79e2f70cefcbab136207e7067065"

# Task order of the seed scheme (task code = index + 1).
TASKS: tuple[str, ...] = (
    "PickXtimes",
    "StopCube",
    "SwingXtimes",
    "BinFill",
    "VideoUnmaskSwap",
    "VideoUnmask",
    "ButtonUnmaskSwap",
    "ButtonUnmask",
    "VideoRepick",
    "VideoPlaceButton",
    "VideoPlaceOrder",
    "PickHighlight",
    "InsertPeg",
    "MoveCube",
    "PatternLock",
    "RouteStick",
)
SKIPPED_ACTORS = frozenset({"table-workspace", "ground"})
VERSIONED_PACKAGES = ("torch", "trimesh", "sapien", "mani_skill", "numpy", "gymnasium")

_SWAP_ATTRS = (
    "color_names",
    "bin_to_color",
    "selected_bin_indices",
    "cube_bin_indices",
    "other_cube_bin_indices",
    "pick_times",
    "swap_times",
    "swap_schedule",
    "target_bin",
    "target_bin_index",
    "target_bin_1",
    "target_bin_2",
    "target_cube_name",
    "target_label",
)
_PLACE_ATTRS = (
    "target_color_name",
    "target_cube",
    "all_cubes",
    "targets",
    "target_target",
    "swap_target_a",
    "swap_target_b",
)
# Per task: env attributes worth keeping (read after reset; missing ones are skipped).
TASK_ATTRS: dict[str, tuple[str, ...]] = {
    "PickXtimes": (
        "num_repeats",
        "target_color_name",
        "target_cube",
        "all_cubes",
        "red_cube_names",
        "blue_cube_names",
        "green_cube_names",
    ),
    "StopCube": (
        "interval",
        "move_interval",
        "stop_time",
        "steps_press",
        "stop_time_range",
        "start_pos_xy",
        "end_pos_xy",
        "current_task_specialflag",
    ),
    "SwingXtimes": (
        "num_repeats",
        "max_swings",
        "target_color_name",
        "target_cube",
        "target_left",
        "target_right",
        "all_cubes",
    ),
    "BinFill": (
        "dynamic",
        "binfill_language_sequence",
        "red_cubes_spawn_number",
        "blue_cubes_spawn_number",
        "green_cubes_spawn_number",
        "red_cubes_target_number",
        "blue_cubes_target_number",
        "green_cubes_target_number",
        "all_cubes",
    ),
    "VideoUnmaskSwap": _SWAP_ATTRS,
    "VideoUnmask": ("color_names", "spawned_bins"),
    "ButtonUnmaskSwap": _SWAP_ATTRS,
    "ButtonUnmask": ("num_repeats", "color_names", "spawned_bins"),
    "VideoRepick": (
        "num_repeats",
        "swap_times",
        "swap_schedule",
        "static_flag",
        "target_cube_1",
        "spawned_cubes",
    ),
    "VideoPlaceButton": (*_PLACE_ATTRS, "target_target_language"),
    "VideoPlaceOrder": (
        *_PLACE_ATTRS,
        "which_targets_to_pick",
        "which_in_subset",
        "button_task_index",
    ),
    "PickHighlight": ("all_cube_names", "all_cube_colors", "target_cube_names"),
    "InsertPeg": (
        "peg",
        "obj_flag",
        "grasp_target_distance",
        "direction",
        "insert_way",
        "peg_init_poses",
    ),
    "MoveCube": (
        "way",
        "obj_flag",
        "direction1",
        "direction2",
        "goal_site_1_pose_p",
        "goal_site_2_pose_p",
        "cube_init_pose",
        "cube_init_pose_2",
        "peg_init_poses",
        "peg_init_poses_2",
    ),
    "PatternLock": ("selected_buttons",),
    "RouteStick": (
        "selected_buttons",
        "swing_directions",
        "route_button_indices",
        "target_cube_indices",
    ),
}
COMMON_ATTRS = ("fail_grasp_task_index",)
MAX_ATTR_ITEMS = 64


class Unconvertible(Exception):
    """An attribute value that has no small JSON form."""


class StopRequest:
    """SIGINT handler: the first Ctrl-C stops after the current episode, a second one at once.

    (A KeyboardInterrupt raised inside SAPIEN's destructors is swallowed by Python, so a plain
    ``except KeyboardInterrupt`` can miss the first Ctrl-C.)
    """

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum: int, frame: Any) -> None:
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)


class Rounder:
    """Turns env values into rounded, JSON-able Python values."""

    def __init__(self, decimals: int) -> None:
        self.decimals = decimals

    def num(self, x: float) -> float:
        value = float(x)
        if not math.isfinite(value):
            raise Unconvertible(f"non-finite {value}")
        return round(value, self.decimals) + 0.0  # + 0.0 turns -0.0 into 0.0

    def nums(self, values: Iterable[Any]) -> list[float]:
        return [self.num(v) for v in values]

    def plain(self, value: Any, depth: int = 0) -> Any:
        """A JSON-able copy of ``value``; mani_skill structs become their names."""
        if depth > 4:
            raise Unconvertible("too deep")
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return self.num(value)
        module = type(value).__module__
        if module.startswith("mani_skill.utils.structs") and type(value).__name__ != "Pose":
            return str(value.name)
        if hasattr(value, "raw_pose"):  # mani_skill Pose
            return self.nums(value.raw_pose.reshape(-1)[:7].tolist())
        if module.startswith("sapien") and hasattr(value, "p") and hasattr(value, "q"):
            return self.nums([*value.p, *value.q])
        if hasattr(value, "tolist") and hasattr(value, "shape"):  # torch tensor / numpy array
            size = int(math.prod(value.shape))
            if size > MAX_ATTR_ITEMS:
                raise Unconvertible(f"array of {size}")
            return self.plain(value.tolist(), depth + 1)
        if hasattr(value, "item") and callable(value.item):  # numpy scalar
            return self.plain(value.item(), depth + 1)
        if isinstance(value, (list, tuple)):
            if len(value) > MAX_ATTR_ITEMS:
                raise Unconvertible(f"sequence of {len(value)}")
            return [self.plain(v, depth + 1) for v in value]
        if isinstance(value, dict):
            if len(value) > MAX_ATTR_ITEMS:
                raise Unconvertible(f"dict of {len(value)}")
            return {str(k): self.plain(v, depth + 1) for k, v in value.items()}
        raise Unconvertible(type(value).__name__)

    def pose7(self, pose: Any) -> list[float]:
        """World pose of a batched mani_skill pose as [x, y, z, qw, qx, qy, qz]."""
        return self.nums([*pose.p[0].tolist(), *pose.q[0].tolist()])


def load_records(metadata_dir: Path, tasks: Sequence[str]) -> list[dict[str, Any]]:
    """Records of the metadata files, in the seed-scheme task order, then file order."""
    records: list[dict[str, Any]] = []
    for task in tasks:
        path = metadata_dir / f"record_dataset_{task}_metadata.json"
        data = json.loads(path.read_text())
        for rec in data["records"]:
            if rec["task"] != task:
                raise ValueError(f"{path}: record of task {rec['task']!r}")
            records.append(
                {
                    "task": task,
                    "episode": int(rec["episode"]),
                    "seed": int(rec["seed"]),
                    "difficulty": rec["difficulty"],
                }
            )
    return records


def make_kwargs(rec: dict[str, Any], recovery_kwargs: bool) -> dict[str, Any]:
    """gym.make keyword arguments for one record (harness rules, state obs on physx_cpu)."""
    kwargs: dict[str, Any] = {
        "obs_mode": "state",
        "control_mode": "pd_joint_pos",
        "sim_backend": "physx_cpu",
        "render_backend": "none",
        "seed": rec["seed"],
        "difficulty": rec["difficulty"],
    }
    if recovery_kwargs and rec["episode"] <= 5:
        kwargs["robomme_failure_recovery"] = True
        kwargs["robomme_failure_recovery_mode"] = "z" if rec["episode"] <= 2 else "xy"
    return kwargs


def actor_poses(scene: Any, rnd: Rounder) -> dict[str, list[float]]:
    return {
        name: rnd.pose7(actor.pose)
        for name, actor in scene.actors.items()
        if name not in SKIPPED_ACTORS
    }


def articulation_states(scene: Any, rnd: Rounder) -> dict[str, dict[str, list[float]]]:
    return {
        name: {"root": rnd.pose7(art.pose), "qpos": rnd.nums(art.qpos[0].tolist())}
        for name, art in scene.articulations.items()
    }


def task_attrs(env: Any, task: str, rnd: Rounder) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for name in (*TASK_ATTRS.get(task, ()), *COMMON_ATTRS):
        try:
            attrs[name] = rnd.plain(getattr(env, name))
        except Exception:  # missing or unwieldy attribute: skip it
            continue
    with contextlib.suppress(Exception):
        attrs["task_list"] = [str(entry["name"]) for entry in env.task_list]
    return attrs


def _changed(before: dict[str, Any], after: dict[str, Any], prefix: str) -> list[str]:
    return [f"{prefix}{k}" for k, v in after.items() if before.get(k) != v]


def record_episode(
    gym: Any, rec: dict[str, Any], rnd: Rounder, recovery_kwargs: bool
) -> tuple[dict[str, Any], list[str]]:
    """One fixture record, and what reset changed (actor/articulation/attr names, prefixed)."""
    out: dict[str, Any] = dict(rec)
    env = None
    changed: list[str] = []
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env = gym.make(rec["task"], **make_kwargs(rec, recovery_kwargs))
            base, scene = env.unwrapped, env.unwrapped.scene
            made = (
                actor_poses(scene, rnd),
                articulation_states(scene, rnd),
                task_attrs(base, rec["task"], rnd),
            )
            env.reset()
            out["actors"] = actor_poses(scene, rnd)
            out["articulations"] = articulation_states(scene, rnd)
            out["attrs"] = task_attrs(base, rec["task"], rnd)
        keys = ("actors", "articulations", "attrs")
        for before, key, prefix in zip(made, keys, ("actor:", "art:", "attr:"), strict=True):
            changed += _changed(before, out[key], prefix)
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        for key in ("actors", "articulations", "attrs"):
            out.pop(key, None)
        out["error"] = {"type": type(exc).__name__, "message": str(exc)[:500]}
    finally:
        if env is not None:
            with contextlib.suppress(Exception), contextlib.redirect_stdout(sink):
                env.close()
    return out, changed


def package_versions() -> dict[str, str]:
    versions: dict[str, str] = {"python": platform.python_version()}
    for pkg in VERSIONED_PACKAGES:
        try:
            versions[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            versions[pkg] = "missing"
    return versions


def write_fixture(path: Path, payload: dict[str, Any]) -> int:
    """Write gzip JSON atomically (mtime 0, no file name in the header); returns its size."""
    data = json.dumps(payload, separators=(",", ":"), sort_keys=False).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write(data)
    tmp.replace(path)
    return path.stat().st_size


def only_differing(
    records: list[dict[str, Any]], fixture: Path, header: dict[str, Any]
) -> list[dict[str, Any]]:
    """The records whose recorded values differ from ``fixture``'s record of the same task and
    episode; ``header`` notes what was compared."""
    with gzip.open(fixture, "rt") as f:
        main = {(r["task"], r["episode"]): r for r in json.load(f)["records"]}
    if {(r["task"], r["episode"]) for r in records} != set(main):
        raise SystemExit(f"{fixture} holds other records than this run")
    kept = [r for r in records if r != main[(r["task"], r["episode"])]]
    header.update(
        compared_with=fixture.name,
        compared_records=len(records),
        identical_records=len(records) - len(kept),
    )
    return kept


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream-src", type=Path, required=True, help="upstream src/ folder")
    parser.add_argument("--metadata-dir", type=Path, default=DEFAULT_METADATA_DIR)
    parser.add_argument("--out", type=Path, required=True, help="output .json.gz")
    parser.add_argument("--tasks", nargs="+", choices=TASKS, help="only these tasks")
    parser.add_argument("--limit", type=int, default=0, help="at most N records per task")
    parser.add_argument("--decimals", type=int, default=6)
    parser.add_argument("--upstream-commit", default=UPSTREAM_COMMIT)
    parser.add_argument(
        "--only-differing-from",
        type=Path,
        help="keep only the records whose values differ from this fixture's",
    )
    parser.add_argument(
        "--no-recovery-kwargs",
        dest="recovery_kwargs",
        action="store_false",
        help="do not pass the harness's failure-recovery kwargs for episodes 0-5",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    tasks = [t for t in TASKS if args.tasks is None or t in args.tasks]
    records = load_records(args.metadata_dir, tasks)
    if args.limit > 0:
        per_task = {t: [r for r in records if r["task"] == t][: args.limit] for t in tasks}
        records = [r for t in tasks for r in per_task[t]]

    from dataforge import numerics  # pins MKL's code path before torch runs

    if DEFAULT_ICD.exists():
        os.environ.setdefault("VK_ICD_FILENAMES", str(DEFAULT_ICD))
    sys.path.insert(0, str(args.upstream_src.resolve()))
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gym = importlib.import_module("gymnasium")
        importlib.import_module("robomme.robomme_env")  # registers the 16 envs
    for name in ("mani_skill", "mani_skill "):  # ManiSkill's own logger has the trailing space
        logging.getLogger(name).setLevel(logging.ERROR)

    rnd = Rounder(args.decimals)
    out_records: list[dict[str, Any]] = []
    changed_by_task: dict[str, dict[str, int]] = {}
    start = time.time()
    stop = StopRequest()
    previous_handler = signal.signal(signal.SIGINT, stop)
    try:
        for i, rec in enumerate(records):
            if stop.requested:
                raise KeyboardInterrupt
            result, changed = record_episode(gym, rec, rnd, args.recovery_kwargs)
            out_records.append(result)
            counts = changed_by_task.setdefault(rec["task"], {})
            for name in changed:
                counts[name] = counts.get(name, 0) + 1
            if "error" in result:
                print(f"ERROR {rec} {result['error']}", file=sys.stderr, flush=True)
            if i + 1 == len(records) or records[i + 1]["task"] != rec["task"]:
                n = sum(r["task"] == rec["task"] for r in out_records)
                print(
                    f"{rec['task']}: {n} records, {time.time() - start:.0f}s elapsed",
                    file=sys.stderr,
                    flush=True,
                )
    except KeyboardInterrupt:
        print(f"interrupted after {len(out_records)} records; nothing written", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous_handler)

    for task, counts in changed_by_task.items():
        if counts:
            print(f"changed by reset (make -> reset), {task}: {counts}", file=sys.stderr)
    header = {
        "what": "upstream RoboMME initial layouts after gym.make + env.reset()",
        "upstream_commit": args.upstream_commit,
        "versions": package_versions(),
        "date": datetime.date.today().isoformat(),
        "make_kwargs": {
            k: v
            for k, v in make_kwargs(records[0], False).items()
            if k not in ("seed", "difficulty")
        }
        if records
        else {},
        "recovery_kwargs_for_episodes_0_5": args.recovery_kwargs,
        "decimals": args.decimals,
        "pose_format": "[x, y, z, qw, qx, qy, qz]",
        "skipped_actors": sorted(SKIPPED_ACTORS),
        "cpu": numerics.cpu_model(),
        "MKL_CBWR": os.environ.get("MKL_CBWR"),
        "torch_sqrt": numerics.torch_sqrt_path(),
        "numpy_avx512": numerics.numpy_avx512(),
    }
    if args.only_differing_from is not None:
        out_records = only_differing(out_records, args.only_differing_from, header)
    size = write_fixture(args.out, {"header": header, "records": out_records})
    errors = sum("error" in r for r in out_records)
    print(
        f"wrote {args.out} ({size} bytes, {len(out_records)} records, {errors} errors)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
