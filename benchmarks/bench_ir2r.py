"""IR2R tour building: time per split on one core, and tour cost against the proven optimum.

For each split it times the whole ``dataforge ir2r tours`` run (one worker, one core: planning,
oracle distances, LKH-3 through elkai, the store), then solves every set again with CP-SAT and
reports the total gap of elkai's tours to the proven optimum.

Splits: the R2R files found under --data-dir. Without ``R2R_train.json`` (not in the shared
fixtures) a *train-like proxy* is used: for each of the 61 Matterport scans with the most
viewpoints outside val_unseen, 76 random R2R-like paths (start and end 5-20 m apart on the
graph), matching the paper's train mean of 76.6 paths per scan.

Targets (issue 4): every split < 60 s on one core, val splits in seconds; 0.0% gap on val.
Usage: python benchmarks/bench_ir2r.py [--data-dir ../shared/data] [--skip-exact]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from dataforge.inputs import Inputs
from dataforge.nav.connectivity import load_connectivity
from dataforge.pipelines.ir2r.config import IR2RConfig
from dataforge.pipelines.ir2r.episodes import NavPath
from dataforge.pipelines.ir2r.generate import build_job, plan_discrete, scene_oracle
from dataforge.pipelines.ir2r.tours import transition_costs
from dataforge.run import ExecutionOptions, run_job
from dataforge.tsp import mutually_reachable_groups, solve_open_path, to_integer_costs


def proxy_train(data_dir: Path, work: Path, seed: int = 0) -> Path:
    """A data dir whose R2R_train.json holds R2R-like random paths (see the docstring)."""
    rng = np.random.default_rng(seed)
    conn = data_dir / "mp3d_connectivity"
    unseen = {r["scan"] for r in json.loads((data_dir / "r2r/R2R_val_unseen.json").read_text())}
    scans = sorted(p.name.split("_")[0] for p in conn.glob("*_connectivity.json"))
    graphs = {
        s: load_connectivity(conn / f"{s}_connectivity.json") for s in scans if s not in unseen
    }
    chosen = sorted(graphs, key=lambda s: -len(graphs[s]))[:61]
    records, pid = [], 0
    for scan in chosen:
        g = graphs[scan]
        d = g.distances(list(g.ids))
        pairs = np.argwhere((d >= 5) & (d <= 20))
        for i, j in pairs[rng.choice(len(pairs), size=min(76, len(pairs)), replace=False)]:
            route = g.shortest_path(g.ids[i], g.ids[j])
            records.append({"path_id": pid, "scan": scan, "path": route, "instructions": ["a"] * 3})
            pid += 1
    out = work / "proxy"
    (out / "r2r").mkdir(parents=True)
    (out / "mp3d_connectivity").symlink_to(conn.resolve())
    (out / "r2r" / "R2R_train.json").write_text(json.dumps(records))
    return out


def gap_to_optimum(split: str, data_dir: Path, runs: int) -> tuple[int, int, int, int]:
    """(elkai total cm, optimum total cm, sets proven, sets) over every set of the split."""
    cfg = IR2RConfig(split=split, runs=runs)
    units, _ = plan_discrete(cfg, Inputs({"data-dir": data_dir}))
    total_h = total_opt = proven = n_sets = 0
    for unit in units:
        paths = [NavPath.from_dict(d) for d in unit.params["paths"]]
        cost = transition_costs(paths, scene_oracle(cfg, unit.params), cfg.ordering)
        for group in mutually_reachable_groups(np.isfinite(cost)):
            c = to_integer_costs(cost[np.ix_(group, group)])
            h = solve_open_path(c, "elkai", runs=runs)
            e = solve_open_path(c, "exact", time_limit_s=120)
            total_h += h.cost
            total_opt += e.cost if e.optimal else (e.bound or 0)
            proven += bool(e.optimal)
            n_sets += 1
    return total_h, total_opt, proven, n_sets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("DATAFORGE_DATA", "data")))
    ap.add_argument("--runs", type=int, default=IR2RConfig.runs)
    ap.add_argument("--skip-exact", action="store_true", help="time only, no CP-SAT gap")
    args = ap.parse_args()
    if not (args.data_dir / "r2r" / "R2R_val_seen.json").is_file():
        raise SystemExit(f"no R2R inputs under {args.data_dir} (use --data-dir)")
    os.environ.setdefault("DATAFORGE_ENCODE_THREADS", "1")
    work = Path(tempfile.mkdtemp(prefix="bench_ir2r_"))
    try:
        splits: list[tuple[str, str, Path]] = []
        for split in ("val_seen", "val_unseen", "train"):
            if (args.data_dir / "r2r" / f"R2R_{split}.json").is_file():
                splits.append((split, split, args.data_dir))
        if not any(s == "train" for s, _, _ in splits):
            splits.append(("train (proxy)", "train", proxy_train(args.data_dir, work)))
        print("| split | paths | tours | time, 1 core | elkai vs optimum | sets proven |")
        print("|---|---|---|---|---|---|")
        for label, split, data in splits:
            t0 = time.perf_counter()
            cfg = IR2RConfig(split=split, runs=args.runs)
            job = build_job(cfg, seed=0, fmt="zarr", inputs=Inputs({"data-dir": data}))
            report = run_job(job, work / split, ExecutionOptions())
            dt = time.perf_counter() - t0
            n_paths = len(json.loads((data / "r2r" / f"R2R_{split}.json").read_text()))
            tours = len(report.manifest.episodes) if report.manifest else 0
            gap = proven = "-"
            if not args.skip_exact:
                h, opt, n_proven, n_sets = gap_to_optimum(split, data, args.runs)
                gap = f"{100 * (h - opt) / opt:+.3f}% ({h} vs {opt} cm)"
                proven = f"{n_proven}/{n_sets}"
            print(f"| {label} | {n_paths} | {tours} | {dt:.1f} s | {gap} | {proven} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
