"""Oracle success of RoboMME tasks: pass 1 (plan + physics, no noise by default), and with
``--two-pass`` also pass 2 of every kept episode (its states replayed through both cameras in
the worker's reused rendering env, as the generator does).

    python scripts/robomme_oracle.py [--tasks all|T1,T2] [--episodes 12] [--noise 0] [--recovery]
        [--two-pass]

For each task and difficulty, runs the first N train-scheme seeds once each (no retry) and
prints a markdown row: successes per difficulty, the mean steps of the successful episodes
weighted 50/25/25 (easy/medium/hard, the released mix) and the paper's Table 1 average; then
the failure reasons. This is the table in docs/robomme.md ("Per task").
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

MIX = {"easy": 0.5, "medium": 0.25, "hard": 0.25}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="all")
    ap.add_argument("--episodes", type=int, default=12)
    ap.add_argument("--noise", type=float, default=0.0, help="--noise waypoint probability")
    ap.add_argument(
        "--recovery", action="store_true", help="RoboMME's missed grasp in episodes 0-5"
    )
    ap.add_argument(
        "--two-pass", action="store_true", help="also render every kept episode (32 x 32)"
    )
    args = ap.parse_args()

    from dataforge.manip.executor import Noise
    from dataforge.pipelines.robomme.env import FRONT_CAMERA, WRIST_CAMERA
    from dataforge.pipelines.robomme.episode import run_pass1, run_pass2
    from dataforge.pipelines.robomme.seeds import EpisodeSpec, scheme_seed
    from dataforge.pipelines.robomme.suites import PAPER_AVG_STEPS, TASKS

    tasks = list(TASKS) if args.tasks == "all" else args.tasks.split(",")
    print("| task | easy | medium | hard | our avg steps (50/25/25 mix) | paper |")
    print("|---|---|---|---|---|---|")
    for task in tasks:
        cells, means, reasons = [], {}, Counter()
        for difficulty in MIX:
            steps = []
            for k in range(args.episodes):
                spec = EpisodeSpec(task, k, scheme_seed(task, "train", k), difficulty)
                run, filtered = run_pass1(
                    spec, Noise(args.noise, 0.05), max_retries=0, recovery=args.recovery
                )
                if run is None:
                    reasons[f"{difficulty}: {filtered[0].reason[:90]}"] += 1
                else:
                    if args.two_pass:  # raises where pass 2 cannot replay pass 1's states
                        frames = run_pass2(spec, run, (FRONT_CAMERA, WRIST_CAMERA), 32)
                        assert len(frames[FRONT_CAMERA].rgb) == len(run.recording.state)
                    steps.append(len(run.recording))
            cells.append(f"{len(steps)}/{args.episodes}")
            means[difficulty] = float(np.mean(steps)) if steps else float("nan")
        mix = sum(MIX[d] * means[d] for d in MIX)
        row = f"| {task} | {' | '.join(cells)} | ~{mix:.0f} | {PAPER_AVG_STEPS[task]} |"
        print(row, flush=True)
        for reason, n in reasons.most_common():
            print(f"    {n}x {reason}", flush=True)


if __name__ == "__main__":
    main()
