"""MultiON: episode generation (episodes/s per core) and oracle demonstrations (frames/s per core).

Both are whole commands in a new process pinned to one core (``taskset -c CPU``, with
``LP_NUM_THREADS=1`` and ``OMP_NUM_THREADS=1``), on one ProcTHOR house (``--house``, default
``procthor_train_1.json`` of ../shared/data/procthor_houses) copied into a temp folder that is
given as ``--scenes``:

1. ``dataforge multion generate --m 3 --split train --episodes-per-scene N`` (N = ``--episodes``,
   default the paper's 50,000 per scene): wall, episodes/s/core, CPU share (the child's CPU
   seconds over its wall: below ~0.95 something else ran on that core), peak RSS; the hub count,
   free-cell count and abandoned draws from the stored metadata (``hubs``, ``cells``,
   ``sampling``). The time inside is split by measuring the stages again in this process,
   pinned to the same core, on the same house: the navigable space (``GridSpace``: the nav grid,
   then ``HubGeodesics``' corner hubs and one distance field per hub), sampling
   (``draw_episodes`` with the unit's own random stream: the same draws as the command, checked
   against the stored tally), the room lookup of the episode arrays (``room_indices`` of every
   start and goal) and the challenge files (``<split>/content/<scene>.json.gz``, the house
   JSON) written from the stored dataset; the rest of the command's wall is the process start,
   imports and the store (zarr shards, manifest, sha256, croissant).
2. ``dataforge multion oracle OUT --limit K`` (K = ``--oracle-episodes``, default 20) with
   ``--render rgb,depth,semantic --resolution 256x256`` and without ``--render`` (actions and
   poses only): frames/s/core (frames = actions + 1 per episode, read back from the oracle's
   dataset) and episodes/s, oracle success (every episode's metadata ``success``). Its time is
   split the same way: the stored scene's space rebuilt (``stored_space``), the follower
   (``follow`` for the K episodes), the renderer's setup (house meshes, EGL context) and the
   rendering (``render`` of every pose, depth to mm, ids to uint16); the rest is the process
   start, imports and the store (blosc encoding and writing the images).

Timed commands are repeated (generation ``--repeat``, default 1: it is long; the oracle
``--oracle-repeat``, default 3) and the fastest kept. Targets (issue 20): 50,000 episodes in
under 5 minutes on one core (>= 170 episodes/s/core); >= 40 observation frames/s/core at 256x256.

    python benchmarks/bench_multion.py [--house PATH] [--episodes 50000] [--oracle-episodes 20]
        [--repeat 1] [--oracle-repeat 3] [--cpu 0] [--keep DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Before Mesa and numpy load (the in-process measurements render too).
os.environ.setdefault("LP_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

DEFAULT_HOUSE = (
    Path(__file__).resolve().parents[1].parent / "shared/data/procthor_houses/procthor_train_1.json"
)
DATAFORGE = Path(sys.executable).with_name("dataforge")
TARGET_EPISODES_PER_CORE = 170.0  # 50,000 in < 5 minutes on one core
TARGET_FRAMES_PER_CORE = 40.0  # at 256x256
RENDER = "rgb,depth,semantic"
RESOLUTION = "256x256"
PIN_ENV = {"LP_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def run_pinned(cmd: list[str], cpu: int) -> dict[str, Any]:
    """Run ``cmd`` pinned to ``cpu``: wall, the child's CPU seconds and peak RSS (wait4)."""
    env = {**os.environ, **PIN_ENV}
    t0 = time.perf_counter()
    p = subprocess.Popen(["taskset", "-c", str(cpu), *cmd], env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}")
    cpu_s = ru.ru_utime + ru.ru_stime
    return {"wall_s": wall, "cpu_s": cpu_s, "cpu_share": cpu_s / wall, "rss_mb": ru.ru_maxrss / 1e3}


def best_of(repeat: int, fn: Any, *args: Any) -> dict[str, Any]:
    runs = [fn(*args) for _ in range(max(1, repeat))]
    best = min(runs, key=lambda r: r["wall_s"])
    best["walls_s"] = [r["wall_s"] for r in runs]
    return best


def pin(cpus: set[int]) -> None:
    """Run every thread of this process on ``cpus``."""
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(tid), cpus)


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "load_before": os.getloadavg()}  # fmt: skip


# -- generation --------------------------------------------------------------------------------


def generate(scenes: Path, out: Path, episodes: int, cpu: int) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(DATAFORGE), "multion", "generate", "--m", "3", "--split", "train",
           "--episodes-per-scene", str(episodes), "--scenes", str(scenes), "--out", str(out),
           "--quiet"]  # fmt: skip
    r = run_pinned(cmd, cpu)
    r["episodes"] = episodes
    r["episodes_per_s"] = episodes / r["wall_s"]
    return r


def generation_split(house_path: Path, out: Path, work: Path) -> dict[str, Any]:
    """The command's stages again in this process (already pinned), on the same house."""
    import numpy as np

    from dataforge.nav.hubs import HubGeodesics
    from dataforge.pipelines.multion.config import MultionConfig
    from dataforge.pipelines.multion.generate import challenge_files, rules_of
    from dataforge.pipelines.multion.sampling import draw_episodes
    from dataforge.pipelines.multion.scenes import GridSpace
    from dataforge.run.units import unit_rng
    from dataforge.store import open_dataset
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house
    from dataforge.world.navigation import house_nav_grid

    with open_dataset(out) as ds:
        cfg = MultionConfig.from_dict(ds.manifest.config)
        (scene,) = ds.episode_ids
        meta = dict(ds[scene].metadata)
    catalogue = load_catalogue()
    raw = json.loads(json.dumps(json.loads(house_path.read_text()), sort_keys=True))
    house = load_house(raw, name=scene, catalogue=catalogue)
    res: dict[str, Any] = {"scene": scene, "hubs": meta.get("hubs"), "cells": meta.get("cells"),
                           "sampling": meta["sampling"]}  # fmt: skip

    t0 = time.perf_counter()
    grid = house_nav_grid(house, catalogue, agent_radius=cfg.agent_radius, cell=cfg.cell)
    t1 = time.perf_counter()
    HubGeodesics(grid)
    t2 = time.perf_counter()
    res["grid_s"], res["hubs_s"] = t1 - t0, t2 - t1
    res["grid_shape"] = list(grid.free.shape)
    t0 = time.perf_counter()
    space = GridSpace(house, catalogue, agent_radius=cfg.agent_radius, cell=cfg.cell)
    res["space_s"] = time.perf_counter() - t0

    rng = unit_rng(0, scene)  # the command's --seed 0: the same draws
    t0 = time.perf_counter()
    drawn, tally = draw_episodes(space, rules_of(cfg), rng, cfg.episodes, scene=scene)
    res["sampling_s"] = time.perf_counter() - t0
    res["same_draws"] = tally.to_dict() == meta["sampling"]

    t0 = time.perf_counter()  # as produce builds start_room and goal_room
    n, m = len(drawn), cfg.m
    space.room_indices(np.array([d.start for d in drawn]).reshape(n, 3))
    space.room_indices(np.array([d.goals for d in drawn]).reshape(n * m, 3))
    res["rooms_s"] = time.perf_counter() - t0
    del drawn

    files_dir = work / "challenge_files"
    shutil.rmtree(files_dir, ignore_errors=True)
    t0 = time.perf_counter()
    with open_dataset(out) as ds:
        for rel, data in sorted(challenge_files(ds, cfg.split).items()):
            path = files_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, bytes):
                path.write_bytes(data)
            else:
                data(path)
    res["files_s"] = time.perf_counter() - t0
    res["files_bytes"] = sum(p.stat().st_size for p in files_dir.rglob("*") if p.is_file())
    shutil.rmtree(files_dir, ignore_errors=True)
    return res


# -- oracle ------------------------------------------------------------------------------------


def oracle(episodes: Path, out: Path, limit: int, render: bool, cpu: int) -> dict[str, Any]:
    from dataforge.store import open_dataset

    shutil.rmtree(out, ignore_errors=True)
    cmd = [str(DATAFORGE), "multion", "oracle", str(episodes), "--limit", str(limit),
           "--out", str(out), "--quiet"]  # fmt: skip
    if render:
        cmd += ["--render", RENDER, "--resolution", RESOLUTION]
    r = run_pinned(cmd, cpu)
    frames = actions = success = n = 0
    with open_dataset(out) as ds:
        for ep in ds.episodes():
            a = ep["action"].shape[0]
            actions += a
            frames += a + 1
            success += bool(ep.metadata["success"])
            n += 1
    r.update(episodes=n, actions=actions, frames=frames, success=success)
    r["episodes_per_s"] = n / r["wall_s"]
    r["frames_per_s"] = frames / r["wall_s"]
    r["bytes"] = sum(p.stat().st_size for p in (out / "shards").rglob("*") if p.is_file())
    return r


def oracle_split(episodes: Path, demos: Path) -> dict[str, Any]:
    """The oracle's stages again in this process (already pinned), on the same episodes."""
    import numpy as np

    from dataforge.pipelines.multion.agent import start_pose
    from dataforge.pipelines.multion.config import OracleConfig
    from dataforge.pipelines.multion.oracle import SceneRenderer, follow
    from dataforge.pipelines.multion.scenes import stored_space
    from dataforge.render.renderer import depth_mm, to_uint16
    from dataforge.store import open_dataset
    from dataforge.world.assets import load_catalogue

    with open_dataset(demos) as ds:
        cfg = OracleConfig.from_dict(ds.manifest.config)
    with open_dataset(episodes) as ds:
        econf = dict(ds.manifest.config)
        (scene,) = ds.episode_ids
        stored = ds[scene]
        meta = dict(stored.metadata)
        arrays = {k: stored[k].read() for k in stored}
    n = min(len(arrays["episode_id"]), cfg.limit or len(arrays["episode_id"]))
    res: dict[str, Any] = {}
    t0 = time.perf_counter()
    space = stored_space(meta, arrays["house_json"].tobytes(), econf)
    res["space_s"] = time.perf_counter() - t0
    radius = float(econf["agent_radius"]) + float(econf["cylinder_radius"])
    runs = []
    t0 = time.perf_counter()
    for i in range(n):
        goals = arrays["goal_position"][i]
        block = econf.get("block", True)
        move = space.grid.with_discs_blocked(goals, radius) if block else space.grid
        run = follow(space, move,
                     start_pose(arrays["start_position"][i], arrays["start_rotation"][i]), goals,
                     success_distance=cfg.success_distance, forward=cfg.forward_step,
                     turn=cfg.turn_angle, max_steps=cfg.max_steps)  # fmt: skip
        runs.append(run)
    res["follow_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    renderer = SceneRenderer(cfg.with_(render=tuple(RENDER.split(","))), space.house,
                             load_catalogue(), None)  # fmt: skip
    renderer.set_episode(arrays["goal_position"][0], arrays["goal_category"][0])
    renderer.render(runs[0].poses[0])  # the first draw compiles llvmpipe's shaders
    res["renderer_setup_s"] = time.perf_counter() - t0
    frames = 0
    t0 = time.perf_counter()
    for i, run in enumerate(runs):
        renderer.set_episode(arrays["goal_position"][i], arrays["goal_category"][i])
        fs = [renderer.render(p) for p in run.poses]
        np.stack([f.rgb for f in fs])
        np.stack([depth_mm(f.depth) for f in fs])
        np.stack([to_uint16(f.semantic, "semantic") for f in fs])
        frames += len(fs)
    res["render_s"] = time.perf_counter() - t0
    res["frames"] = frames
    res["render_fps"] = frames / res["render_s"]
    return res


# -- main --------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--house", type=Path, default=DEFAULT_HOUSE)
    ap.add_argument("--episodes", type=int, default=50_000, help="episodes per scene to generate")
    ap.add_argument("--oracle-episodes", type=int, default=20, help="oracle --limit")
    ap.add_argument("--repeat", type=int, default=1, help="generation runs (the fastest counts)")
    ap.add_argument("--oracle-repeat", type=int, default=3, help="oracle runs of each kind")
    ap.add_argument("--cpu", type=int, default=0, help="the core every timed run is pinned to")
    ap.add_argument("--no-split", action="store_true", help="skip the in-process stage timings")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_multion_"))
    work.mkdir(parents=True, exist_ok=True)
    scenes = work / "scenes"
    scenes.mkdir(exist_ok=True)
    shutil.copyfile(args.house, scenes / args.house.name)
    res: dict[str, Any] = {"machine": machine(), "house": args.house.name,
                           "settings": vars(args).copy()}  # fmt: skip
    all_cpus = os.sched_getaffinity(0)
    try:
        out, demos, acts = work / "episodes", work / "demos", work / "actions"
        res["generate"] = best_of(args.repeat, generate, scenes, out, args.episodes, args.cpu)
        res["oracle_render"] = best_of(
            args.oracle_repeat, oracle, out, demos, args.oracle_episodes, True, args.cpu
        )
        res["oracle_actions"] = best_of(
            args.oracle_repeat, oracle, out, acts, args.oracle_episodes, False, args.cpu
        )
        if not args.no_split:
            pin({args.cpu})
            res["generate_split"] = generation_split(scenes / args.house.name, out, work)
            res["oracle_split"] = oracle_split(out, demos)
            pin(all_cpus)
        res["machine"]["load_after"] = os.getloadavg()
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    report(res, args)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))


def report(res: dict[str, Any], args: argparse.Namespace) -> None:
    m = res["machine"]
    lb, la = m["load_before"], m["load_after"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average "
          f"{lb[0]:.2f} / {lb[1]:.2f} / {lb[2]:.2f} before, {la[0]:.2f} / {la[1]:.2f} / "
          f"{la[2]:.2f} after (1 / 5 / 15 min)")  # fmt: skip
    print(f"house: {res['house']}; every command pinned to core {args.cpu} "
          f"(taskset, LP_NUM_THREADS=1, OMP_NUM_THREADS=1)\n")  # fmt: skip
    g, o, a = res["generate"], res["oracle_render"], res["oracle_actions"]
    print("| command | work | wall | rate (1 core) | CPU share | peak RSS |")
    print("|---|---|---|---|---|---|")
    print(f"| `multion generate --m 3` | {g['episodes']:,} episodes | {g['wall_s']:.1f} s | "
          f"**{g['episodes_per_s']:,.0f} episodes/s** | {g['cpu_share']:.2f} | "
          f"{g['rss_mb']:,.0f} MB |")  # fmt: skip
    print(f"| `multion oracle --render {RENDER} --resolution {RESOLUTION}` | {o['episodes']} "
          f"episodes, {o['frames']:,} frames | {o['wall_s']:.1f} s | **{o['frames_per_s']:.1f} "
          f"frames/s** ({o['episodes_per_s']:.2f} episodes/s) | {o['cpu_share']:.2f} | "
          f"{o['rss_mb']:,.0f} MB |")  # fmt: skip
    print(f"| `multion oracle` (actions only) | {a['episodes']} episodes, {a['actions']:,} "
          f"actions | {a['wall_s']:.1f} s | **{a['episodes_per_s']:.2f} episodes/s** "
          f"({a['actions'] / a['wall_s']:,.0f} actions/s) | {a['cpu_share']:.2f} | "
          f"{a['rss_mb']:,.0f} MB |")  # fmt: skip
    for label, r in (("generate", g), ("oracle render", o), ("oracle actions", a)):
        if len(r["walls_s"]) > 1:
            print(
                f"  walls of the {label} runs: "
                + ", ".join(f"{w:.1f}" for w in r["walls_s"])
                + " s (the fastest counts)"
            )
    ok = g["episodes_per_s"] >= TARGET_EPISODES_PER_CORE
    print(f"\n>= {TARGET_EPISODES_PER_CORE:.0f} episodes/s/core: {'yes' if ok else 'NO'} "
          f"({g['episodes_per_s']:,.0f}; 50,000 episodes would take "
          f"{50_000 / g['episodes_per_s']:.0f} s on one core)")  # fmt: skip
    ok = o["frames_per_s"] >= TARGET_FRAMES_PER_CORE
    print(f">= {TARGET_FRAMES_PER_CORE:.0f} frames/s/core at {RESOLUTION}: "
          f"{'yes' if ok else 'NO'} ({o['frames_per_s']:.1f})")  # fmt: skip
    print(f"oracle success: {o['success']}/{o['episodes']} (rendered run), "
          f"{a['success']}/{a['episodes']} (actions only); demos {o['bytes'] / 1e6:.1f} MB "
          f"({o['bytes'] / o['frames'] / 1e3:.1f} KB per frame)")  # fmt: skip

    if "generate_split" in res:
        s = res["generate_split"]
        smp = s["sampling"]
        ab = smp["abandoned"]
        print(
            f"\nscene: {s['hubs']} hubs, {s['cells']:,} free cells (grid "
            f"{s['grid_shape'][0]} x {s['grid_shape'][1]}); abandoned draws: "
            + (", ".join(f"{k} {v:,}" for k, v in ab.items()) or "none")
            + f" (total {sum(ab.values()):,} for {smp['episodes']:,} episodes); longest leg "
            f"{smp['longest_leg_m']:.2f} m; in-process draws "
            f"{'identical to' if s['same_draws'] else 'DIFFERENT from'} the command's"
        )
        rest = g["wall_s"] - s["space_s"] - s["sampling_s"] - s["rooms_s"] - s["files_s"]
        rows = [
            (f"navigable space (`GridSpace`): nav grid {s['grid_s']:.2f} s + corner hubs "
             f"({s['hubs']} distance fields) {s['hubs_s']:.2f} s, timed apart", s["space_s"]),
            ("sampling (`draw_episodes`)", s["sampling_s"]),
            ("room of every start and goal (`room_indices`, episode arrays)", s["rooms_s"]),
            (f"challenge files (content json.gz + house, {s['files_bytes'] / 1e6:.1f} MB)",
             s["files_s"]),
            ("rest: process start, imports, store (shards, manifest, sha256)", rest),
        ]  # fmt: skip
        print(f"\ngeneration, where the {g['wall_s']:.1f} s go (stages re-timed in this process "
              f"on core {args.cpu}; the rest is the difference, within the noise of the "
              f"others):\n")  # fmt: skip
        print("| stage | seconds | share | per episode |")
        print("|---|---|---|---|")
        for label, sec in rows:
            print(f"| {label} | {sec:.2f} s | {100 * sec / g['wall_s']:.0f}% | "
                  f"{1e3 * sec / g['episodes']:.3f} ms |")  # fmt: skip
    if "oracle_split" in res:
        s = res["oracle_split"]
        rest = o["wall_s"] - s["space_s"] - s["follow_s"] - s["renderer_setup_s"] - s["render_s"]
        rows = [
            ("scene's space rebuilt (`stored_space`: grid + hubs)", s["space_s"]),
            (f"follower (`follow`, {o['episodes']} episodes)", s["follow_s"]),
            ("renderer setup (house meshes, EGL context, first draw)", s["renderer_setup_s"]),
            (f"rendering ({s['frames']:,} frames x 3 outputs; {s['render_fps']:.0f} frames/s)",
             s["render_s"]),
            ("rest: process start, imports, store (encoding, writing the images)", rest),
        ]  # fmt: skip
        print(f"\noracle with --render, where the {o['wall_s']:.1f} s go (re-timed in this "
              f"process):\n")  # fmt: skip
        print("| stage | seconds | share |")
        print("|---|---|---|")
        for label, sec in rows:
            print(f"| {label} | {sec:.2f} s | {100 * sec / o['wall_s']:.0f}% |")
        print(f"\nwithout the fixed costs (space rebuild, renderer setup): "
              f"{o['frames'] / (o['wall_s'] - s['space_s'] - s['renderer_setup_s']):.0f} "
              f"frames/s; the actions-only run spends {s['space_s']:.1f} of its "
              f"{a['wall_s']:.1f} s rebuilding the space")  # fmt: skip


if __name__ == "__main__":
    main()
