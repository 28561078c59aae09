"""Oracle success of RoboMME tasks: pass 1 (plan + physics, no noise by default), and with
``--two-pass`` also pass 2 of every kept episode (its states replayed through both cameras in
the worker's reused rendering env, as the generator does).

    python scripts/robomme_oracle.py [--tasks all|T1,T2] [--episodes 12] [--noise 0] [--recovery]
        [--two-pass [--render-every N]]

For each task and difficulty, runs the first N train-scheme seeds once each (no retry) and
prints a markdown row: successes per difficulty (of the seeds whose scene can be laid out:
upstream's samplers give up on some, and its generator, like ours, takes the next seed), the
mean steps of the successful episodes weighted 50/25/25 (easy/medium/hard, the released mix)
and the paper's Table 1 average; then the failure reasons; last, the success rate of all.
This is the table in docs/robomme.md ("Oracle success").

Pass 2 costs ~0.2 s a state on a CPU (lavapipe), 50x pass 1: ``--render-every N`` replays
every N-th state of each episode and its final one (each state is a whole scene, so a replay
that cannot take pass 1's states fails on any of them) to check all 576 episodes in minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections import Counter
from typing import Any

import numpy as np

MIX = {"easy": 0.5, "medium": 0.25, "hard": 0.25}


def sparse(run: Any, every: int) -> Any:
    """``run`` with every ``every``-th recorded state (pass 2 renders the states after the
    actions: ``state[1:]`` and the final one) and no subgoal grounding."""
    if every <= 1:
        return run
    rec = run.recording
    states = [rec.state[0], *rec.state[1::every]]
    return dataclasses.replace(run, recording=dataclasses.replace(rec, state=states, subgoals=[]))


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
    ap.add_argument("--render-every", type=int, default=1, help="with --two-pass: every N-th state")
    args = ap.parse_args()

    from dataforge.manip.executor import Noise
    from dataforge.pipelines.robomme.env import FRONT_CAMERA, WRIST_CAMERA
    from dataforge.pipelines.robomme.episode import run_pass1, run_pass2
    from dataforge.pipelines.robomme.seeds import EpisodeSpec, scheme_seed
    from dataforge.pipelines.robomme.suites import PAPER_AVG_STEPS, TASKS

    CAMERAS = (FRONT_CAMERA, WRIST_CAMERA)
    tasks = list(TASKS) if args.tasks == "all" else args.tasks.split(",")
    print("| task | easy | medium | hard | our avg steps (50/25/25 mix) | paper |")
    print("|---|---|---|---|---|---|")
    total = [0, 0]  # successes, episodes with a layout
    for task in tasks:
        cells, means, reasons = [], {}, Counter()
        for difficulty in MIX:
            steps, unplaceable = [], 0
            for k in range(args.episodes):
                spec = EpisodeSpec(task, k, scheme_seed(task, "train", k), difficulty)
                run, filtered = run_pass1(
                    spec, Noise(args.noise, 0.05), max_retries=0, recovery=args.recovery
                )
                if run is None:
                    reasons[f"{difficulty}: {filtered[0].reason[:90]}"] += 1
                    # a seed upstream cannot lay out either (its SceneGenerationError): the
                    # generator, like upstream's, moves on to the next seed
                    unplaceable += filtered[0].reason.startswith("PlacementError")
                else:
                    if args.two_pass:  # raises where pass 2 cannot replay pass 1's states
                        frames = run_pass2(spec, sparse(run, args.render_every), CAMERAS, 32)
                        n = len(range(1, len(run.recording.state), args.render_every)) + 1
                        assert len(frames[FRONT_CAMERA].rgb) == n
                    spans = run.recording.subgoals  # the recorded steps (no NO RECORD ones)
                    steps.append(sum(sg["end"] - sg["start"] for sg in spans if sg["record"]))
            laid = args.episodes - unplaceable
            cells.append(
                f"{len(steps)}/{laid}" + (f" (+{unplaceable} no layout)" if unplaceable else "")
            )
            total[0] += len(steps)
            total[1] += laid
            means[difficulty] = float(np.mean(steps)) if steps else float("nan")
        mix = sum(MIX[d] * means[d] for d in MIX)
        row = f"| {task} | {' | '.join(cells)} | ~{mix:.0f} | {PAPER_AVG_STEPS[task]} |"
        print(row, flush=True)
        for reason, n in reasons.most_common():
            print(f"    {n}x {reason}", flush=True)
    print(f"oracle success: {total[0]}/{total[1]} = {100 * total[0] / max(total[1], 1):.1f}%")


if __name__ == "__main__":
    main()
