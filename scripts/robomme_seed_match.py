"""Do our demonstrations fail where upstream's generator failed? The released metadata
(``record_dataset_<Task>_metadata.json``) keeps each episode's seed: the split scheme's seed
plus the number of seeds upstream's generator filtered before one succeeded
(``_run_episode_with_retry``). For the first N records of every task:

- ``released``: pass 1 on the released (seed, difficulty), no retry, upstream's recovery
  rule: does ours succeed where upstream's did?
- ``scheme`` (``--retries``): pass 1 from the scheme's seed with retries: is the seed we keep
  the released one (we filter the seeds upstream filtered, and no other)?

    python scripts/robomme_seed_match.py --data-dir ../shared/data [--split train]
        [--episodes 12] [--tasks all|T1,T2] [--retries]

Prints one line per task, a cell per record: ``episode:ok`` (or ``FAIL(reason)``) for the
released seed, then with ``--retries`` ``released retries/ours`` (``!`` where they differ), and
the totals: the numbers in docs/robomme.md ("Oracle success").
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--split", default="train")
    ap.add_argument("--episodes", type=int, default=12)
    ap.add_argument("--tasks", default="all")
    ap.add_argument("--retries", action="store_true", help="also run from the scheme's seed")
    args = ap.parse_args()

    from dataforge.manip.executor import Noise
    from dataforge.pipelines.robomme.episode import run_pass1
    from dataforge.pipelines.robomme.recovery import recovery_mode
    from dataforge.pipelines.robomme.seeds import EpisodeSpec, load_metadata, scheme_seed
    from dataforge.pipelines.robomme.suites import TASKS

    tasks = list(TASKS) if args.tasks == "all" else args.tasks.split(",")
    folder = args.data_dir / "robomme" / "env_metadata" / args.split
    kept, released_ok, total = 0, 0, 0
    for task in tasks:
        cells = []
        for released in load_metadata(folder, task)[: args.episodes]:
            ep, base = released.episode, scheme_seed(task, args.split, released.episode)
            retries = released.seed - base
            recovery = recovery_mode(task, ep) is not None
            run, filtered = run_pass1(released, Noise(), max_retries=0, recovery=recovery)
            total += 1
            released_ok += run is not None
            cell = f"{ep}:" + ("ok" if run is not None else f"FAIL({filtered[0].reason[:60]})")
            if args.retries:
                spec = EpisodeSpec(task, ep, base, released.difficulty)
                run, filtered = run_pass1(spec, Noise(), max_retries=retries + 1, recovery=recovery)
                ours = None if run is None else run.seed - base
                kept += ours == retries
                cell += f" {retries}/{ours}" + ("" if ours == retries else "!")
            cells.append(cell)
        print(task, " ".join(cells), flush=True)
    print(f"released seeds that succeed: {released_ok}/{total}")
    if args.retries:
        print(f"kept seed = released seed: {kept}/{total}")


if __name__ == "__main__":
    main()
