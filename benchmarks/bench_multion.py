"""MultiON: episode generation (episodes/s per core) and oracle demonstrations (frames/s per core).

Both are whole commands in a new process pinned to one core (``taskset -c CPU``, with
``LP_NUM_THREADS=1`` and ``OMP_NUM_THREADS=1``), on one ProcTHOR house (``--house``, default
``procthor_train_1.json`` of ../shared/data/procthor_houses) copied into a temp folder that is
given as ``--scenes``:

1. ``dataforge multion generate --m 3 --split train --episodes-per-scene N --quiet`` (N =
   ``--episodes``, default the paper's 50,000 per scene): wall, episodes/s/core, CPU share (the
   child's CPU seconds over its wall: below ~0.95 something else ran on that core), peak RSS; the
   hub count, free-cell count and abandoned draws from the stored metadata (``hubs``, ``cells``,
   ``sampling``).
2. ``dataforge multion oracle OUT --limit K --quiet`` (K = ``--oracle-episodes``, default 20)
   with ``--render rgb,depth,semantic --resolution 256x256``, and without ``--render`` (actions
   and poses only): frames/s/core (frames = actions + 1 per episode, read back from the oracle's
   dataset), episodes/s, oracle success (every episode's metadata ``success``).

Where the time goes: the command runs as ``dataforge``'s own ``cli.main.main`` in the child
(``python bench_multion.py --instrumented TIMES -- ARGS``), with ``time.perf_counter`` around the
pipeline's stages (the child sums them and writes them to TIMES): the navigable space
(``house_space``: the nav grid, then ``HubGeodesics``' corner hubs, one distance field per hub),
sampling (``draw_episodes``), the room lookup of the episode arrays (``room_indices``), the
rest of ``produce``, the shard write (``write_shard`` less the produce it drives: encoding,
writing, fsync, sha256), the challenge files (``<split>/content/<scene>.json.gz`` and the house
JSON), the rest of ``finalize`` (episodes.csv, croissant, manifest, hashes); for the oracle the
scene's space rebuilt (``stored_space``), the follower (``follow``), the renderer's setup, the
episodes' scenes (``set_episode``) and ``render_stored`` (frames in their stored formats).
"Start" is everything before the shard writer starts: the interpreter, imports, planning (and the
interpreter's exit: the wall less the child's own clock). The timers cost nothing measurable (a
few thousand calls). ``render_stored`` returns once the frames are read back, so it holds
llvmpipe's drawing.

Timed commands are repeated (generation ``--repeat``, default 1: it is long; the oracle
``--oracle-repeat``, default 3) and the fastest kept, with its own split. Targets (issue 20):
50,000 episodes in under 5 minutes on one core (>= 170 episodes/s/core); >= 40 observation
frames/s/core at 256x256.

    python benchmarks/bench_multion.py [--house PATH] [--episodes 50000] [--oracle-episodes 20]
        [--repeat 1] [--oracle-repeat 3] [--cpu 0] [--keep DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

T_START = time.perf_counter()

DEFAULT_HOUSE = (
    Path(__file__).resolve().parents[1].parent / "shared/data/procthor_houses/procthor_train_1.json"
)
TARGET_EPISODES_PER_CORE = 170.0  # 50,000 in < 5 minutes on one core
TARGET_FRAMES_PER_CORE = 40.0  # at 256x256
RENDER = "rgb,depth,semantic"
RESOLUTION = "256x256"
PIN_ENV = {"LP_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


# -- the child: the command with timers --------------------------------------------------------


def instrumented(times_path: str, argv: list[str]) -> int:
    """Run ``dataforge ARGV`` in this process with timers around the pipeline's stages."""
    from dataforge.cli.main import main as dataforge_main
    from dataforge.nav import hubs
    from dataforge.pipelines.multion import generate, oracle, sampling, scenes
    from dataforge.run import task
    from dataforge.store.builder import DatasetBuilder
    from dataforge.world import navigation

    seconds: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    marks: dict[str, float] = {}

    def timed(owner: Any, name: str, key: str) -> None:
        f = getattr(owner, name, None)
        if f is None:
            return

        def wrapper(*args: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            marks.setdefault(f"first_{key}", t0)
            try:
                return f(*args, **kw)
            finally:
                seconds[key] += time.perf_counter() - t0
                calls[key] += 1

        setattr(owner, name, wrapper)

    def timed_generator(owner: Any, name: str, key: str) -> None:
        """A generator function: the time spent inside it (not in its consumer)."""
        f = getattr(owner, name)

        def wrapper(*args: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            it = f(*args, **kw)
            seconds[key] += time.perf_counter() - t0
            while True:
                t0 = time.perf_counter()
                try:
                    item = next(it)
                except StopIteration:
                    seconds[key] += time.perf_counter() - t0
                    return
                seconds[key] += time.perf_counter() - t0
                calls[key] += 1
                yield item

        setattr(owner, name, wrapper)

    def timed_files(owner: Any, name: str, key: str) -> None:
        """``extra_files``: building the dict, and every file writer it returns."""
        f = getattr(owner, name)

        def timed_writer(write: Any) -> Any:
            def writer(path: Any) -> None:
                t0 = time.perf_counter()
                try:
                    write(path)
                finally:
                    seconds[key] += time.perf_counter() - t0

            return writer

        def wrapper(*args: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                files = f(*args, **kw)
                return {k: v if isinstance(v, bytes) else timed_writer(v) for k, v in files.items()}
            finally:
                seconds[key] += time.perf_counter() - t0
                calls[key] += 1

        setattr(owner, name, wrapper)

    # produce and extra_files are read from the modules when build_job makes the job
    timed_generator(generate, "produce", "produce")
    timed_generator(oracle, "produce", "produce")
    timed_files(generate, "challenge_files", "challenge_files")
    timed(task, "write_shard", "write_shard")
    timed(DatasetBuilder, "finalize", "finalize")
    timed(scenes, "house_space", "grid_space")
    timed(navigation, "house_nav_grid", "nav_grid")
    timed(hubs.HubGeodesics, "__init__", "hubs")
    timed(sampling, "draw_episodes", "draw_episodes")
    timed(scenes.SceneSpace, "room_indices", "room_indices")
    timed(scenes, "stored_space", "stored_space")
    timed(oracle, "follow", "follow")
    timed(oracle.SceneRenderer, "__init__", "renderer_setup")
    timed(oracle.SceneRenderer, "set_episode", "set_episode")
    timed(oracle.SceneRenderer, "render_stored", "render")
    marks["main"] = time.perf_counter()
    rc = dataforge_main(argv)
    marks["end"] = time.perf_counter()
    since_start = {k: v - T_START for k, v in marks.items()}
    doc = {"seconds": seconds, "calls": calls, "marks": since_start}
    Path(times_path).write_text(json.dumps(doc))
    return rc


# -- the parent --------------------------------------------------------------------------------


def run_pinned(args: list[str], cpu: int, work: Path) -> dict[str, Any]:
    """``dataforge ARGS`` pinned to ``cpu``, instrumented: wall, the child's CPU seconds and peak
    RSS (wait4), and the stage times."""
    env = {**os.environ, **PIN_ENV}
    times = work / "times.json"
    times.unlink(missing_ok=True)
    cmd = [
        "taskset",
        "-c",
        str(cpu),
        sys.executable,
        __file__,
        "--instrumented",
        str(times),
        "--",
        *args,
    ]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"failed ({p.returncode}): dataforge {' '.join(args)}")
    cpu_s = ru.ru_utime + ru.ru_stime
    t = json.loads(times.read_text())
    return {
        "wall_s": wall,
        "cpu_s": cpu_s,
        "cpu_share": cpu_s / wall,
        "rss_mb": ru.ru_maxrss / 1e3,
        "times": t,
    }


def best_of(repeat: int, fn: Any, *args: Any) -> dict[str, Any]:
    runs = [fn(*args) for _ in range(max(1, repeat))]
    best = min(runs, key=lambda r: r["wall_s"])
    best["walls_s"] = [r["wall_s"] for r in runs]
    return best


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_before": os.getloadavg(),
    }


def generate(scenes: Path, out: Path, episodes: int, cpu: int, work: Path) -> dict[str, Any]:
    from dataforge.store import open_dataset

    shutil.rmtree(out, ignore_errors=True)
    args = [
        "multion",
        "generate",
        "--m",
        "3",
        "--split",
        "train",
        "--episodes-per-scene",
        str(episodes),
        "--scenes",
        str(scenes),
        "--out",
        str(out),
        "--quiet",
    ]
    r = run_pinned(args, cpu, work)
    with open_dataset(out) as ds:
        (scene,) = ds.episode_ids
        meta = dict(ds[scene].metadata)
        stored = ds[scene]["episode_id"].shape[0]
    r.update(
        episodes=stored, hubs=meta.get("hubs"), cells=meta.get("cells"), sampling=meta["sampling"]
    )
    r["episodes_per_s"] = stored / r["wall_s"]
    return r


def oracle(episodes: Path, out: Path, limit: int, render: bool, cpu: int, work: Path) -> dict:
    from dataforge.store import open_dataset

    shutil.rmtree(out, ignore_errors=True)
    args = ["multion", "oracle", str(episodes), "--limit", str(limit), "--out", str(out), "--quiet"]
    if render:
        args += ["--render", RENDER, "--resolution", RESOLUTION]
    r = run_pinned(args, cpu, work)
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


def split_rows(r: dict[str, Any], stages: list[tuple[str, str]]) -> list[tuple[str, float]]:
    """(label, seconds) rows summing to the run's wall: start, the stages, produce's and
    finalize's remainders, the shard write, other."""
    t = r["times"]
    s, marks = t["seconds"], t["marks"]
    g = lambda k: float(s.get(k, 0.0))  # noqa: E731
    start = marks["first_write_shard"] + (r["wall_s"] - marks["end"])
    rows = [("start: interpreter, imports, planning (and exit)", start)]
    inner = 0.0
    for key, label in stages:
        rows.append((label, g(key)))
        if key not in ("nav_grid", "hubs"):  # nested in grid_space / stored_space
            inner += g(key)
    rows.append(("rest of produce (house read, episode arrays, stacking)", g("produce") - inner))
    rows.append(("shard write (encode, write, fsync, sha256)", g("write_shard") - g("produce")))
    if "challenge_files" in s:
        rows.append(("challenge files (content json.gz, house JSON)", g("challenge_files")))
    rows.append(
        ("finalize (episodes.csv, croissant, manifest)", g("finalize") - g("challenge_files"))
    )
    counted = sum(v for (lbl, v) in rows if not lbl.startswith("  "))
    rows.append(("other (commit, between stages)", r["wall_s"] - counted))
    return rows


def print_split(title: str, r: dict[str, Any], rows: list[tuple[str, float]], per: int) -> None:
    print(f"\n{title}\n")
    print("| stage | seconds | share | per item |")
    print("|---|---|---|---|")
    for label, sec in rows:
        print(
            f"| {label} | {sec:.2f} s | {100 * sec / r['wall_s']:.0f}% | {1e3 * sec / per:.3f} ms |"
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--instrumented":
        argv = sys.argv[3:]
        sys.exit(instrumented(sys.argv[2], argv[1:] if argv[:1] == ["--"] else argv))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--house", type=Path, default=DEFAULT_HOUSE)
    ap.add_argument("--episodes", type=int, default=50_000, help="episodes per scene to generate")
    ap.add_argument("--oracle-episodes", type=int, default=20, help="oracle --limit")
    ap.add_argument("--repeat", type=int, default=1, help="generation runs (the fastest counts)")
    ap.add_argument("--oracle-repeat", type=int, default=3, help="oracle runs of each kind")
    ap.add_argument("--cpu", type=int, default=0, help="the core every timed run is pinned to")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_multion_"))
    work.mkdir(parents=True, exist_ok=True)
    scenes = work / "scenes"
    scenes.mkdir(exist_ok=True)
    shutil.copyfile(args.house, scenes / args.house.name)
    res: dict[str, Any] = {
        "machine": machine(),
        "house": args.house.name,
        "settings": {k: str(v) for k, v in vars(args).items()},
    }
    try:
        out, demos, acts = work / "episodes", work / "demos", work / "actions"
        res["generate"] = best_of(args.repeat, generate, scenes, out, args.episodes, args.cpu, work)
        res["oracle_render"] = best_of(
            args.oracle_repeat, oracle, out, demos, args.oracle_episodes, True, args.cpu, work
        )
        res["oracle_actions"] = best_of(
            args.oracle_repeat, oracle, out, acts, args.oracle_episodes, False, args.cpu, work
        )
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
    print(
        f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average "
        f"{lb[0]:.2f} / {lb[1]:.2f} / {lb[2]:.2f} before, {la[0]:.2f} / {la[1]:.2f} / "
        f"{la[2]:.2f} after (1 / 5 / 15 min)"
    )
    print(
        f"house: {res['house']}; every command pinned to core {args.cpu} "
        f"(taskset, LP_NUM_THREADS=1, OMP_NUM_THREADS=1)\n"
    )
    g, o, a = res["generate"], res["oracle_render"], res["oracle_actions"]
    print("| command | work | wall | rate (1 core) | CPU share | peak RSS |")
    print("|---|---|---|---|---|---|")
    print(
        f"| `multion generate --m 3` | {g['episodes']:,} episodes | {g['wall_s']:.1f} s | "
        f"**{g['episodes_per_s']:,.0f} episodes/s** | {g['cpu_share']:.2f} | "
        f"{g['rss_mb']:,.0f} MB |"
    )
    print(
        f"| `multion oracle --render {RENDER} --resolution {RESOLUTION}` | {o['episodes']} "
        f"episodes, {o['frames']:,} frames | {o['wall_s']:.1f} s | **{o['frames_per_s']:.1f} "
        f"frames/s** ({o['episodes_per_s']:.2f} episodes/s) | {o['cpu_share']:.2f} | "
        f"{o['rss_mb']:,.0f} MB |"
    )
    print(
        f"| `multion oracle` (actions only) | {a['episodes']} episodes, {a['actions']:,} "
        f"actions | {a['wall_s']:.1f} s | **{a['episodes_per_s']:.2f} episodes/s** "
        f"({a['actions'] / a['wall_s']:,.0f} actions/s) | {a['cpu_share']:.2f} | "
        f"{a['rss_mb']:,.0f} MB |"
    )
    for label, r in (("generate", g), ("oracle render", o), ("oracle actions", a)):
        if len(r["walls_s"]) > 1:
            walls = ", ".join(f"{w:.1f}" for w in r["walls_s"])
            print(f"  walls of the {label} runs: {walls} s (the fastest counts)")
    ok = g["episodes_per_s"] >= TARGET_EPISODES_PER_CORE
    print(
        f"\n>= {TARGET_EPISODES_PER_CORE:.0f} episodes/s/core: {'yes' if ok else 'NO'} "
        f"({g['episodes_per_s']:,.0f}; 50,000 episodes take "
        f"{50_000 / g['episodes_per_s']:.0f} s on one core at this rate)"
    )
    ok = o["frames_per_s"] >= TARGET_FRAMES_PER_CORE
    print(
        f">= {TARGET_FRAMES_PER_CORE:.0f} frames/s/core at {RESOLUTION}: "
        f"{'yes' if ok else 'NO'} ({o['frames_per_s']:.1f})"
    )
    print(
        f"oracle success: {o['success']}/{o['episodes']} (rendered run), "
        f"{a['success']}/{a['episodes']} (actions only); demos {o['bytes'] / 1e6:.1f} MB "
        f"({o['bytes'] / o['frames'] / 1e3:.1f} KB per frame)"
    )
    smp = g["sampling"]
    ab = smp["abandoned"]
    print(
        f"scene: {g['hubs']} hubs, {g['cells']:,} free cells; abandoned draws: "
        + (", ".join(f"{k} {v:,}" for k, v in ab.items()) or "none")
        + f" (total {sum(ab.values()):,} for {smp['episodes']:,} episodes); longest leg "
        f"{smp['longest_leg_m']:.2f} m"
    )

    rows = split_rows(
        g,
        [
            ("grid_space", "navigable space (`house_space`)"),
            ("nav_grid", "  of which the nav grid (`house_nav_grid`)"),
            ("hubs", f"  of which the corner hubs (`HubGeodesics`, {g['hubs']} distance fields)"),
            ("draw_episodes", "sampling (`draw_episodes`)"),
            ("room_indices", "rooms of the starts and goals (`room_indices`)"),
        ],
    )
    print_split(
        f"generation, where the {g['wall_s']:.1f} s go (per item: per episode):",
        g,
        rows,
        g["episodes"],
    )
    for label, r, per, what in (
        (f"oracle --render {RENDER}", o, o["frames"], "frame"),
        ("oracle, actions only", a, a["actions"] + a["episodes"], "pose"),
    ):
        s = r["times"]["seconds"]
        stages = [
            ("stored_space", "scene's space rebuilt (`stored_space`)"),
            ("hubs", "  of which the corner hubs (`HubGeodesics`)"),
            ("follow", f"follower (`follow`, {r['episodes']} episodes)"),
        ]
        if "render" in s:
            stages += [
                ("renderer_setup", "renderer setup (house meshes, EGL context)"),
                ("set_episode", "episode scenes (`set_episode`: cylinders, upload)"),
                (
                    "render",
                    f"rendering (`render_stored`, {r['frames']:,} frames in their stored "
                    f"formats: {r['frames'] / s['render']:.0f}/s)",
                ),
            ]
        print_split(
            f"{label}, where the {r['wall_s']:.1f} s go (per item: per {what}):",
            r,
            split_rows(r, stages),
            per,
        )


if __name__ == "__main__":
    main()
