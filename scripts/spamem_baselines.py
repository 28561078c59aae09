"""Score the prior and blind baselines on a SpaMEM tasks directory and print the paper-style
table (markdown) that docs/spamem.md shows:

    python scripts/spamem_baselines.py demo_out/spamem_tasks [--modality rgb]
"""

from __future__ import annotations

import argparse

from dataforge.pipelines.spamem import qa
from dataforge.pipelines.spamem.baselines import answers
from dataforge.pipelines.spamem.records import load_questions
from dataforge.pipelines.spamem.score import score


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tasks_dir")
    ap.add_argument("--modality", default="rgb", choices=qa.MODALITIES)
    args = ap.parse_args()
    questions = [q for q in load_questions(args.tasks_dir) if q["modality"] == args.modality]
    print(f"{len(questions)} {args.modality} questions\n")
    print("| level | horizon | task | metric | prior | blind |")
    print("|---|---|---|---|---|---|")
    reports = {}
    for kind in ("prior", "blind"):
        preds = {p["id"]: p for p in answers(questions, kind)}
        reports[kind] = {
            (g["level"], g["horizon"], g["task"]): g
            for g in score(questions, preds, by=("level", "horizon", "task")).to_json()["groups"]
        }
    for key, g in reports["prior"].items():
        for metric in qa.TASKS[key[2]].metrics:
            cells = []
            for kind in ("prior", "blind"):
                m = reports[kind][key]["metrics"][metric]
                cells.append("-" if m["mean"] is None else f"{m['mean']:.2f} ± {m['sd']:.2f}")
            n = g["questions"]
            print(f"| L{key[0]} | {key[1]} | {key[2]} ({n}) | {metric} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
