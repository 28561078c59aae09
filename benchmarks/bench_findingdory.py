"""FindingDory: experience collection (frames/s per core at the head camera's 480x640, all
four modalities, render + write) and task instantiation (seconds per episode).

Every stage is the real command in a new process pinned to one core (``taskset -c CPU`` with
``LP_NUM_THREADS=1``, ``OMP_NUM_THREADS=1``), on one ProcTHOR house (``--house``, default
``procthor_train_1.json`` of ../shared/data/procthor_houses: 10 rooms) copied into a temp folder
given as ``--scenes``:

1. ``dataforge findingdory episodes --episodes E --rearrangements R`` (defaults 2 and 11, the
   paper's most): wall seconds per episode, rejected draws;
2. ``dataforge findingdory collect`` at 480x640 (RGB with its clock stamp, depth, instance and
   semantic masks, streamed to Zarr shards): frames, wall, **frames/s/core** (the child's CPU
   share is printed: below ~0.95 something else ran on that core), peak RSS; then the same with
   ``--video mp4`` (the MP4 encoding is the difference);
3. ``dataforge findingdory tasks``: seconds per episode (template instantiation, a final-world
   render of every frame, geodesics, tours) and tasks per episode.

Target (issue 23): >= 20 frames/s/core, so a 1,500-frame episode is collected in under 90 s.

    python benchmarks/bench_findingdory.py [--house PATH] [--episodes 2] [--rearrangements 11]
        [--cpu 0] [--keep DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_HOUSE = (
    Path(__file__).resolve().parents[1].parent / "shared/data/procthor_houses/procthor_train_1.json"
)


def run(cpu: int, *args: str) -> dict[str, Any]:
    """Run ``dataforge ARGS`` pinned to ``cpu``: wall seconds, the child's CPU seconds, and its
    peak RSS (MiB)."""
    env = {**os.environ, "LP_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    cmd = ["taskset", "-c", str(cpu), sys.executable, "-m", "dataforge.cli.main", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args[:2])} failed: {r.stderr.strip()}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = round(after.ru_maxrss / 1024)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu_s, 2),
        "cpu_share": round(cpu_s / wall, 2),
        "peak_rss_mib": rss,
    }


def frames_of(root: Path) -> list[int]:
    from dataforge.store import open_dataset

    with open_dataset(root) as ds:
        return [len(ds[e]["action"]) for e in ds.episode_ids]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--house", type=Path, default=DEFAULT_HOUSE)
    ap.add_argument("--episodes", type=int, default=2)
    ap.add_argument("--rearrangements", default="11")
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    if not a.house.is_file():
        sys.exit(f"no house {a.house} (pass --house)")
    tmp = Path(tempfile.mkdtemp(prefix="bench-findingdory-"))
    try:
        scenes = tmp / "scenes"
        scenes.mkdir()
        shutil.copy(a.house, scenes / a.house.name)
        eps, exp, vid, tasks = tmp / "episodes", tmp / "experience", tmp / "video", tmp / "tasks"
        machine = platform.processor() or platform.machine()
        out: dict[str, Any] = {
            "machine": machine,
            "house": a.house.name,
            "rearrangements": a.rearrangements,
        }
        r = run(
            a.cpu,
            "findingdory",
            "episodes",
            "--scenes",
            str(scenes),
            "--episodes",
            str(a.episodes),
            "--rearrangements",
            a.rearrangements,
            "--out",
            str(eps),
            "--quiet",
        )
        from dataforge.store import open_dataset

        with open_dataset(eps) as ds:
            meta = ds[ds.episode_ids[0]].metadata
            made = len(meta["episodes"])
            r.update(episodes=made, rejected=meta["rejected"], given_up=meta["given_up"])
        out["episodes"] = r
        if not made:
            sys.exit(f"no episode could be made: {meta['rejected']}")
        r = run(a.cpu, "findingdory", "collect", str(eps), "--out", str(exp), "--quiet")
        frames = frames_of(exp)
        r.update(
            frames=frames,
            frames_per_s_core=round(sum(frames) / r["wall_s"], 1),
            bytes=sum(p.stat().st_size for p in exp.rglob("*") if p.is_file()),
        )
        out["collect"] = r
        r = run(
            a.cpu,
            "findingdory",
            "collect",
            str(eps),
            "--video",
            "mp4",
            "--out",
            str(vid),
            "--quiet",
        )
        r.update(frames_per_s_core=round(sum(frames) / r["wall_s"], 1))
        out["collect_mp4"] = r
        r = run(a.cpu, "findingdory", "tasks", str(exp), "--out", str(tasks), "--quiet")
        with open_dataset(tasks) as ds:
            per = [len(ds[e].metadata["tasks"]) for e in ds.episode_ids]
            solv = sum(t["solvable"] for e in ds.episode_ids for t in ds[e].metadata["tasks"])
        r.update(tasks=per, solvable=solv, s_per_episode=round(r["wall_s"] / len(per), 2))
        out["tasks"] = r
        text = json.dumps(out, indent=1)
        print(text)
        if a.json:
            a.json.write_text(text + "\n")
        if a.keep:
            shutil.copytree(tmp, a.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
