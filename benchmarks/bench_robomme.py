"""RoboMME generation speed on this machine, per core (run single-process).

Measures, for each task asked for (default PickXtimes):
- pass 1 (plan + physics, no rendering): env steps per second, in the steady state of a worker
  (its env already built by an earlier episode of the task);
- pass 2 (replaying the saved states through the front and wrist cameras): steps per second,
  against the raw ManiSkill camera rate (stepping the same env with both cameras rendering);
- demos per core-hour (pass 1 + pass 2 + writing excluded).
Targets (issue 9): pass 2 >= 80% of the raw camera rate; pass 1 >= 150 steps/s.

    python benchmarks/bench_robomme.py [--tasks all|PickXtimes,BinFill] [--size 256] [--seed 1000]
                                       [--pass1-only]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def raw_camera_rate(task: str, difficulty: str, seed: int, size: int, steps: int) -> float:
    """Steps/s of the env stepping with both cameras rendered each step (ManiSkill's own loop)."""
    from dataforge.pipelines.robomme.sim import make_env

    env = make_env(task, difficulty, render=True, size=size)
    env.reset(seed=seed)
    hold = env.unwrapped.agent.robot.get_qpos()[0, :7].cpu().numpy()
    grip = [1.0] if env.unwrapped.has_gripper else []  # the stick robot takes the 7 joints
    action = np.concatenate([hold, grip]).astype(np.float32)
    env.step(action)
    t = time.perf_counter()
    for _ in range(steps):
        env.step(action)
    rate = steps / (time.perf_counter() - t)
    env.close()
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="PickXtimes")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--difficulty", default="easy")
    ap.add_argument("--raw-steps", type=int, default=60)
    ap.add_argument(
        "--pass1-only", action="store_true", help="skip the cameras (pass 2 and the raw rate)"
    )
    args = ap.parse_args()

    from dataforge.manip.executor import Noise
    from dataforge.manip.replay import render_states
    from dataforge.pipelines.robomme.env import FRONT_CAMERA, WRIST_CAMERA
    from dataforge.pipelines.robomme.episode import run_pass1
    from dataforge.pipelines.robomme.seeds import EpisodeSpec
    from dataforge.pipelines.robomme.sim import make_env
    from dataforge.pipelines.robomme.suites import TASKS

    tasks = list(TASKS) if args.tasks == "all" else args.tasks.split(",")
    results = []
    for task in tasks:
        spec = EpisodeSpec(task, 0, args.seed, args.difficulty)
        # Warm up: a worker builds its physics env once and reuses it for every episode of the
        # same task and difficulty, so the steady state is what counts.
        run_pass1(EpisodeSpec(task, 0, args.seed + 500, args.difficulty), Noise(), max_retries=5)
        t0 = time.perf_counter()
        run, _ = run_pass1(spec, Noise(), max_retries=5)
        t1 = time.perf_counter()
        if run is None:
            print(f"{task}: every seed failed")
            continue
        steps = len(run.recording)
        if args.pass1_only:
            row = {"task": task, "steps": steps, "pass1_steps_per_s": round(steps / (t1 - t0), 1)}
            results.append(row)
            print(json.dumps(row))
            continue
        env = make_env(task, args.difficulty, render=True, size=args.size)
        env.reset(seed=run.seed)
        t2 = time.perf_counter()
        render_states(env, run.recording.state, (FRONT_CAMERA, WRIST_CAMERA))
        t3 = time.perf_counter()
        env.close()
        raw = raw_camera_rate(task, args.difficulty, run.seed, args.size, args.raw_steps)
        row = {
            "task": task,
            "steps": steps,
            "pass1_steps_per_s": round(steps / (t1 - t0), 1),
            "pass2_steps_per_s": round(steps / (t3 - t2), 1),
            "raw_camera_steps_per_s": round(raw, 1),
            "pass2_vs_raw": round(steps / (t3 - t2) / raw, 2),
            "demos_per_core_hour": round(3600 / ((t1 - t0) + (t3 - t2)), 1),
        }
        results.append(row)
        print(json.dumps(row))
    if results:
        p1 = min(r["pass1_steps_per_s"] for r in results)
        print(f"pass 1 >= 150 steps/s: {'yes' if p1 >= 150 else 'NO'} (min {p1})")
        if args.pass1_only:
            return
        ratio = min(r["pass2_vs_raw"] for r in results)
        print(f"pass 2 >= 80% of raw camera rate: {'yes' if ratio >= 0.8 else 'NO'} (min {ratio})")


if __name__ == "__main__":
    main()
