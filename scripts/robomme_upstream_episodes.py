"""Record episodes with upstream RoboMME's own generation harness and writer, and keep their
non-image content as a test fixture (issue 39: lengths, keyframes, texts, field structure).

Dev script: not imported by the package, not run by the tests. It drives the public RoboMME
benchmark code (a read-only checkout of the whole repository: ``src/`` and the harness
``tests/_shared/dataset_generation.py``; nothing of it is copied here), in this project's venv
(stock ManiSkill 3.0.1), with three scratch-only patches applied at run time:

- gymnasium 1.x stopped forwarding public attributes through ``gym.Wrapper.__getattr__``; the
  writer relies on it (0.29 behaviour restored);
- ``gym.make`` gets ``sim_backend="physx_cpu", render_backend="cpu"`` (no GPU here);
- ManiSkill 3.0.1's ``PandaStickMotionPlanningSolver.__init__`` passes one argument too many to
  its base class (the fork's signature differs); the arguments are passed as the base expects.

The stick tasks use the fork's ``panda_stick`` with its hand camera (``pipelines/robomme/
robots.py`` registers it). Each run is one metadata record, seed as released (the harness's
retry on a failed seed is not used: a failure is reported)::

    .venv/bin/python scripts/robomme_upstream_episodes.py run --repo /tmp/up \\
        --metadata-dir ../shared/data/robomme/env_metadata/val --episode 6 --out /tmp/up_eps
    .venv/bin/python scripts/robomme_upstream_episodes.py extract /tmp/up_eps \\
        --out tests/pipelines/robomme/fixtures/upstream_val_episodes.json.gz

``extract`` reads each ``hdf5_files/<Task>_ep<k>_seed<s>.h5`` and writes gzip JSON (mtime 0):
per episode the setup fields (images excluded), every field's dtype and shape, the recorded
steps, the runs of (simple subgoal, is_video_demo) with their lengths, and per step
``joint_action``, ``eef_action``, ``waypoint_action``, ``eef_state`` (rounded to
``--decimals``), the flags and ``choice_action``. ``--lengths-only`` roots (runs made with
``--camera-size``, whose pixels differ) give the steps and runs alone. One episode takes 0.5-3
minutes here at 256 px (the cameras render every step).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from typing import Any

PER_STEP = ("joint_action", "eef_action", "waypoint_action", "eef_state")
FLAGS = ("is_video_demo", "is_subgoal_boundary", "is_completed", "is_gripper_close")


def run(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from dataforge.manip.vulkan import ensure_vulkan

    ensure_vulkan()
    import dataforge.numerics  # MKL's compatible path, as the fixtures assume
    from dataforge.pipelines.robomme.sim import require_sim

    require_sim()
    import gymnasium as gym
    from mani_skill.examples.motionplanning.base_motionplanner.motionplanner import (
        BaseMotionPlanningSolver,
    )
    from mani_skill.examples.motionplanning.panda import motionplanner_stick

    import dataforge.pipelines.robomme.robots  # noqa: F401  (the fork's panda_stick)

    def forward(self: Any, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.env, name)

    gym.Wrapper.__getattr__ = forward
    make = gym.make

    def cpu_make(*a: Any, **k: Any) -> Any:
        k.setdefault("sim_backend", "physx_cpu")
        k.setdefault("render_backend", "cpu")
        if args.camera_size:  # lengths only: the physics does not depend on the cameras
            k["sensor_configs"] = {"width": args.camera_size, "height": args.camera_size}
        return make(*a, **k)

    gym.make = cpu_make

    def stick_init(
        self: Any,
        env: Any,
        debug: bool = False,
        vis: bool = True,
        base_pose: Any = None,
        visualize_target_grasp_pose: bool = True,
        print_env_info: bool = True,
        joint_vel_limits: float = 0.9,
        joint_acc_limits: float = 0.9,
    ) -> None:
        BaseMotionPlanningSolver.__init__(
            self, env, debug, vis, base_pose, print_env_info, joint_vel_limits, joint_acc_limits
        )

    motionplanner_stick.PandaStickMotionPlanningSolver.__init__ = stick_init
    sys.path.insert(0, str(Path(args.repo).resolve()))
    from tests._shared import dataset_generation as harness  # upstream's harness

    tasks = args.tasks.split(",") if args.tasks != "all" else None
    files = sorted(Path(args.metadata_dir).glob("record_dataset_*_metadata.json"))
    for path in files:
        meta = json.loads(path.read_text())
        task = meta["env_id"]
        if tasks is not None and task not in tasks:
            continue
        rec = next(r for r in meta["records"] if r["episode"] == args.episode)
        case = harness.DatasetCase(task, args.episode, rec["seed"], rec["difficulty"], True, "df")
        out = Path(args.out) / f"{task}_ep{args.episode}"
        out.mkdir(parents=True, exist_ok=True)
        t0 = time.time()
        ok = harness._run_one_episode(case, rec["seed"], out)
        print(json.dumps({"task": task, "ok": bool(ok), "s": round(time.time() - t0, 1)}))


def _value(v: Any) -> Any:
    import numpy as np

    v = v[()]
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "OS":
            return [x.decode() if isinstance(x, bytes) else str(x) for x in v.reshape(-1)]
        return v.tolist()
    return v.item() if hasattr(v, "item") else v


def _structure(group: Any) -> dict[str, list[Any]]:
    """Every dataset under ``group``: name -> [dtype, shape]."""
    import h5py

    out: dict[str, list[Any]] = {}

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset):
            out[name] = [str(obj.dtype), list(obj.shape)]

    group.visititems(visit)
    return out


def extract(args: argparse.Namespace) -> None:
    import h5py
    import numpy as np

    episodes = []
    roots = [(Path(r), False) for r in args.root] + [(Path(r), True) for r in args.lengths_only]
    for h5, short in ((h, s) for r, s in roots for h in sorted(r.glob("*/hdf5_files/*.h5"))):
        with h5py.File(h5, "r") as f:
            (name,) = list(f)
            ep = f[name]
            steps = sorted((k for k in ep if k.startswith("timestep_")), key=lambda k: int(k[9:]))
            setup = {k: _value(v) for k, v in ep["setup"].items()}
            structure = _structure(ep[steps[0]])
            runs: list[list[Any]] = []
            rows: dict[str, list[Any]] = {k: [] for k in (*PER_STEP, *FLAGS, "choice_action")}
            for k in steps:
                g = ep[k]
                text = _value(g["info/simple_subgoal"])
                demo = bool(g["info/is_video_demo"][()])
                if runs and runs[-1][0] == text and runs[-1][1] == demo:
                    runs[-1][2] += 1
                else:
                    runs.append([text, demo, 1])
                for field in PER_STEP:
                    group = "obs" if field == "eef_state" else "action"
                    row = np.asarray(g[f"{group}/{field}"][()], dtype=np.float64)
                    rows[field].append(
                        [
                            None if not np.isfinite(x) else round(float(x), args.decimals)
                            for x in row
                        ]
                    )
                for flag in FLAGS:
                    group = "obs" if flag == "is_gripper_close" else "info"
                    rows[flag].append(int(bool(g[f"{group}/{flag}"][()])))
                rows["choice_action"].append(_value(g["action/choice_action"]))
            entry = {
                "task": h5.name.split("_ep")[0],
                "episode": int(name.split("_")[1]),
                "seed": int(setup["seed"]),
                "difficulty": setup["difficulty"],
                "steps": len(steps),
                "runs": runs,
            }
            if not short:
                entry.update(setup=setup, structure=structure, per_step=rows)
            episodes.append(entry)
    header = {
        "source": "RoboMME/robomme_benchmark tests/_shared/dataset_generation.py "
        "(_run_one_episode) + RobommeRecordWrapper, run by scripts/robomme_upstream_episodes.py",
        "commit": args.commit,
        "date": time.strftime("%Y-%m-%d"),
        "decimals": args.decimals,
    }
    text = json.dumps({"header": header, "episodes": episodes}, sort_keys=True)
    with open(args.out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write(text.encode())
    print(f"{len(episodes)} episodes -> {args.out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--repo", required=True, help="a checkout of RoboMME/robomme_benchmark")
    r.add_argument("--metadata-dir", required=True)
    r.add_argument("--episode", type=int, default=6)
    r.add_argument("--tasks", default="all")
    r.add_argument("--out", required=True)
    r.add_argument("--camera-size", type=int, default=0, help="square cameras (lengths only)")
    e = sub.add_parser("extract")
    e.add_argument("root", nargs="*", default=[])
    e.add_argument("--lengths-only", nargs="*", default=[])
    e.add_argument("--out", required=True)
    e.add_argument("--decimals", type=int, default=5)
    e.add_argument("--commit", default="598e3b4")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else extract(args)


if __name__ == "__main__":
    main()
