"""Baselines for FindingDory tasks (``dataforge findingdory baseline``): predictions made
without a model, in the format ``evaluate`` writes.

- ``oracle``: the valid goal frames nearest to the day's final pose (one per subgoal, the
  shortest tour's for multi-goal tasks; :mod:`.tasks`), so HL-SR and HL-SPL-frames are 1 on
  solvable tasks (HL-SPL, over entities, is below 1 where that frame's entity is not the
  nearest one); on an unsolvable task it names the last frame (and fails).
- ``last-frame``: the day's last frame for every subgoal: the walk-away makes it a poor answer.
- ``random``: frames drawn uniformly (``--seed``), one per subgoal.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dataforge.errors import UsageError

KINDS = ("oracle", "last-frame", "random")


def run_baseline(tasks_dir: str | Path, *, kind: str, out: str | Path, seed: int = 0) -> int:
    """Write the baseline's predictions for every task of ``tasks_dir`` to ``out`` (atomically);
    return how many."""
    from dataforge.store import open_dataset
    from dataforge.store.atomic import atomic_write_bytes

    if kind not in KINDS:
        raise UsageError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    rng = np.random.default_rng(seed)
    lines = []
    with open_dataset(tasks_dir) as ds:
        if ds.manifest.pipeline != "findingdory-tasks":
            raise UsageError(f"{tasks_dir} is not a tasks dataset (dataforge findingdory tasks)")
        for eid in ds.episode_ids:
            meta = ds[eid].metadata
            last = int(meta["frames"]) - 1
            for t in meta["tasks"]:
                n = len(t["goals"])
                if kind == "oracle":
                    frames = t.get("oracle_frames") or [last] * n
                elif kind == "last-frame":
                    frames = [last] * n
                else:
                    frames = [int(f) for f in rng.integers(0, last + 1, size=n)]
                rec = {
                    "id": t["id"],
                    "frame_indices": [int(f) for f in frames],
                    "error": None,
                    "baseline": kind,
                }
                lines.append(json.dumps(rec, sort_keys=True) + "\n")
    atomic_write_bytes(Path(out), "".join(lines).encode())
    return len(lines)
