"""Store throughput: write and read 640x480 frames (RGB, depth, instance, semantic) in both
formats, next to the raw throughput of the same codec on the same buffers in memory.

    python benchmarks/bench_store.py [--frames 480] [--out bench_out] [--json results.json]

Targets (issue 3): the writer sustains >= 50% of the raw codec's throughput; one random frame
reads in < 20 ms. Frames come from the synthetic renderer (real images: smooth shading, edges,
a checker floor), so compression ratios are those of rendered data, not of noise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
from numcodecs import Blosc, blosc

from dataforge.pipelines.synthetic.scene import intrinsics, orbit, random_scene, render
from dataforge.store import ArraySpec, DatasetWriter, Episode, Schema, open_dataset

W, H = 640, 480
SCHEMA = Schema(
    {
        "rgb": ArraySpec("uint8", (None, H, W, 3), kind="rgb"),
        "depth": ArraySpec("float32", (None, H, W), kind="depth", units="m"),
        "instance": ArraySpec("int32", (None, H, W), kind="mask"),
        "semantic": ArraySpec("uint8", (None, H, W), kind="mask"),
    }
)


def make_frames(n_distinct: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    spheres = random_scene(rng, 12)
    K = intrinsics(W, H, 79.0)
    frames = [render(spheres, p, K, W, H) for p in orbit(rng, n_distinct)]
    return {k: np.stack([f[k] for f in frames]) for k in SCHEMA}


def tile(frames: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    reps = -(-n // len(frames["rgb"]))
    return {k: np.concatenate([v] * reps)[:n] for k, v in frames.items()}


def raw_codec_mbps(frames: dict[str, np.ndarray], cname: str = "lz4", clevel: int = 5) -> float:
    """Compress each frame of each modality in memory with the store's codec settings, as
    numcodecs does by default (blosc's own threads, one per core)."""
    saved = blosc.use_threads
    blosc.use_threads = None  # numcodecs' default; dataforge's writer sets False (determinism)
    try:
        return _compress_all(frames, cname, clevel)
    finally:
        blosc.use_threads = saved


def _compress_all(frames: dict[str, np.ndarray], cname: str, clevel: int) -> float:
    nbytes, t0 = 0, time.perf_counter()
    for arr in frames.values():
        itemsize = arr.dtype.itemsize
        codec = Blosc(
            cname=cname, clevel=clevel, shuffle=Blosc.SHUFFLE if itemsize > 1 else Blosc.NOSHUFFLE
        )
        for f in arr:
            codec.encode(np.ascontiguousarray(f))
            nbytes += f.nbytes
    return nbytes / (time.perf_counter() - t0) / 1e6


def write_dataset(root: Path, fmt: str, frames: dict[str, np.ndarray], episodes: int) -> float:
    shutil.rmtree(root, ignore_errors=True)
    per = len(frames["rgb"]) // episodes
    nbytes = sum(v.nbytes for v in frames.values())
    t0 = time.perf_counter()
    with DatasetWriter(root, schema=SCHEMA, name="bench", fmt=fmt, units=["u0", "u1"]) as w:
        for u, unit in enumerate(("u0", "u1")):
            eps = []
            for e in range(episodes // 2):
                i = (u * episodes // 2 + e) * per
                eps.append(Episode(f"{unit}/e{e}", {k: v[i : i + per] for k, v in frames.items()}))
            w.write_unit(unit, eps)
    return nbytes / (time.perf_counter() - t0) / 1e6


def read_all_mbps(root: Path) -> float:
    nbytes, t0 = 0, time.perf_counter()
    with open_dataset(root) as ds:
        for ep in ds.episodes():
            for name in ep:
                nbytes += ep[name].read().nbytes
    return nbytes / (time.perf_counter() - t0) / 1e6


def random_frame_ms(root: Path, samples: int = 60, seed: int = 1) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    out = {}
    with open_dataset(root) as ds:
        ids = ds.episode_ids
        for name in SCHEMA:
            times = []
            for _ in range(samples):
                ep = ds[ids[int(rng.integers(len(ids)))]]
                arr = ep[name]
                i = int(rng.integers(len(arr)))
                t0 = time.perf_counter()
                arr[i]
                times.append((time.perf_counter() - t0) * 1e3)
            times.sort()
            out[name] = {
                "median": statistics.median(times),
                "p95": times[int(0.95 * (len(times) - 1))],
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=int, default=480, help="frames per modality written")
    ap.add_argument("--distinct", type=int, default=24, help="distinct rendered frames")
    ap.add_argument("--out", type=Path, default=Path("bench_out"))
    ap.add_argument("--json", type=Path, default=None, help="also write results here")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = ap.parse_args()

    frames = tile(make_frames(args.distinct), args.frames)
    raw_mb = sum(v.nbytes for v in frames.values()) / 1e6
    # best of --repeat: this machine's timings are noisy; the best run is the repeatable one
    raw = max(raw_codec_mbps(frames) for _ in range(args.repeat))
    results: dict[str, object] = {
        "frames": args.frames,
        "raw_mb": raw_mb,
        "cpu_count": os.cpu_count(),
        "raw_codec_mbps": raw,
        "blosc_threads": blosc.get_nthreads(),
        "formats": {},
    }
    print(f"{args.frames} frames x 4 modalities at {W}x{H}: {raw_mb:.0f} MB raw")
    print(
        f"raw blosc-lz4 compress, in memory: {raw:.0f} MB/s "
        f"(numcodecs, {blosc.get_nthreads()} blosc threads)"
    )
    for fmt in ("zarr", "hdf5"):
        root = args.out / f"store-{fmt}"
        w = max(write_dataset(root, fmt, frames, episodes=4) for _ in range(args.repeat))
        r = max(read_all_mbps(root) for _ in range(args.repeat))
        lat = random_frame_ms(root)
        on_disk = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 1e6
        results["formats"][fmt] = {
            "write_mbps": w,
            "write_vs_raw": w / raw,
            "read_mbps": r,
            "on_disk_mb": on_disk,
            "random_frame_ms": lat,
        }
        worst = max(v["p95"] for v in lat.values())
        print(
            f"{fmt:5s} write {w:6.0f} MB/s ({100 * w / raw:3.0f}% of raw codec)  "
            f"read {r:6.0f} MB/s  on disk {on_disk:.0f} MB  "
            f"random frame p95 {worst:.1f} ms  "
            + " ".join(f"{k}={v['median']:.1f}" for k, v in lat.items())
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
