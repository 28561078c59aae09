"""Pictures of FindingDory episodes: the plan view of one episode's rearrangements."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dataforge.errors import UsageError

if TYPE_CHECKING:
    from dataforge.store.reader import StoredEpisode


def plan_figure(ep: StoredEpisode, path: Path, row: int) -> None:
    """Episode ``row`` of a stored scene on the house's plan: receptacle viewpoints (grey),
    each rearrangement as a numbered arrow from the object's start to its goal, the
    distractors (x), the start pose and the walk-away end pose (triangles)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dataforge.outputs import check_output_file
    from dataforge.pipelines.findingdory.day_world import is_habitat
    from dataforge.pipelines.findingdory.plan import EpisodePlan
    from dataforge.viz.plots import save_figure
    from dataforge.world.assets import load_catalogue
    from dataforge.world.house import load_house
    from dataforge.world.show import draw_plan

    plans = ep.metadata.get("episodes") or []
    if plans and not 0 <= row < len(plans):
        raise UsageError(f"--step {row}: scene {ep.id} has episodes 0..{len(plans) - 1}")
    out = check_output_file(Path(path), "preview")
    plan = EpisodePlan.from_dict(plans[row]) if plans else None
    fig, ax = plt.subplots(figsize=(9, 8))
    if is_habitat(ep.metadata):
        ax.set_aspect("equal")  # an HSSD scene: no house to draw; the viewpoints outline it
    else:
        catalogue = load_catalogue()
        house = load_house(
            json.loads(ep["house_json"].read().tobytes()), name=ep.id, catalogue=catalogue
        )
        draw_plan(ax, house, catalogue, None)
    views = np.asarray(ep["viewpoints"].read(), dtype=np.float64)
    if len(views):
        ax.scatter(views[:, 0], views[:, 2], s=1, c="#999999", alpha=0.5)
    if plan is None:  # every draw of this scene was rejected: show the scene and why
        rejected = ", ".join(f"{k} {v}" for k, v in (ep.metadata.get("rejected") or {}).items())
        ax.set_title(f"{ep.id}: no episode (rejected draws: {rejected or 'none'})", fontsize=9)
        save_figure(fig, out)
        plt.close(fig)
        return
    for k, r in enumerate(plan.rearrangements):
        a, b = r.start_position, r.goal_position
        ax.annotate(
            "",
            xy=(b[0], b[2]),
            xytext=(a[0], a[2]),
            arrowprops={"arrowstyle": "->", "color": "#d62728", "lw": 1.5},
        )
        ax.text(a[0], a[2], f"{k + 1}:{r.category}", fontsize=7, color="#d62728")
        for s in r.pick_spots[:1] + r.place_spots[:1]:
            ax.plot(s.position[0], s.position[2], "o", ms=3, color="#1f77b4")
    for d in plan.distractors:
        ax.plot(d.position[0], d.position[2], "x", ms=6, color="#9467bd")
    for spot, colour, label in ((plan.start, "#2ca02c", "start"), (plan.end, "#ff7f0e", "end")):
        yaw = np.radians(spot.yaw)
        ax.plot(
            spot.position[0],
            spot.position[2],
            marker=(3, 0, -spot.yaw),
            ms=11,
            color=colour,
            label=label,
            ls="",
        )
        ax.arrow(
            spot.position[0],
            spot.position[2],
            0.4 * np.sin(yaw),
            0.4 * np.cos(yaw),
            color=colour,
            width=0.02,
        )
    ax.legend(loc="upper right", fontsize=7)
    ax.set_title(
        f"{plans[row]['id']}: {len(plan.rearrangements)} rearrangements "
        "(arrows: start -> goal; x: distractors)",
        fontsize=9,
    )
    save_figure(fig, out)
    plt.close(fig)


def keyframes_figure(ep: StoredEpisode, path: Path) -> None:
    """One row of keyframes of a collected day: the spawn, the frame before each pick, each
    place frame and the last frame, titled with the frame, clock and what happens."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dataforge.outputs import check_output_file
    from dataforge.pipelines.findingdory.stamps import rgb_is_clean, stamp_frame
    from dataforge.viz.plots import save_figure

    out = check_output_file(Path(path), "preview")
    log = ep.metadata["log"]
    n = len(ep["rgb"])
    minutes = ep["clock"].read()
    drawn = not rgb_is_clean(ep.dataset.manifest.config)
    picks: list[tuple[int, str]] = [(0, "spawn")]
    names = {o["id"]: o["category"] for o in log["objects"]}
    for i in log["interactions"]:
        obj = names.get(i["object"], i["object"])
        picks.append((max(0, i["pick"][1] - 1), f"pick {obj}"))
        picks.append((i["place"][1], f"placed {obj}"))
    picks.append((n - 1, "end (walked away)"))
    cols = min(len(picks), 6)
    rows = math.ceil(len(picks) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.2 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, (k, what) in zip(axes.ravel(), picks, strict=False):
        ax.imshow(stamp_frame(ep["rgb"][k], int(minutes[k]), clock_drawn=drawn))
        ax.set_title(f"{k}: {what}", fontsize=7)
    fig.suptitle(f"{ep.id}: {n} frames, {len(log['interactions'])} rearrangements", fontsize=9)
    save_figure(fig, out)
    plt.close(fig)


def task_figure(ep: StoredEpisode, path: Path, row: int) -> None:
    """Task ``row`` of a tasks record: its instruction and up to six valid goal frames per
    subgoal, read from the experience dataset the tasks were made from."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dataforge.outputs import check_output_file
    from dataforge.pipelines.findingdory.stamps import rgb_is_clean, stamp_frame
    from dataforge.store import open_dataset
    from dataforge.viz.plots import save_figure
    from dataforge.viz.preview import frame_indices

    tasks = ep.metadata["tasks"]
    if not 0 <= row < len(tasks):
        raise UsageError(f"--step {row}: episode {ep.id} has tasks 0..{len(tasks) - 1}")
    task = tasks[row]
    loc = ep.dataset.manifest.inputs.get("locations", {}).get("experience")
    if not loc:
        raise UsageError("the tasks' experience dataset location is not recorded")
    out = check_output_file(Path(path), "preview")
    rows = max(1, len(task["valid_frames"]))
    fig, axes = plt.subplots(rows, 6, figsize=(12, 3.2 * rows), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    with open_dataset(loc) as ds:
        rgb, minutes = ds[ep.id]["rgb"], ds[ep.id]["clock"].read()
        drawn = not rgb_is_clean(ds.manifest.config)
        for r, frames in enumerate(task["valid_frames"]):
            for c, k in enumerate(frame_indices(len(frames), 6) if frames else []):
                f = frames[k]
                axes[r, c].imshow(stamp_frame(rgb[f], int(minutes[f]), clock_drawn=drawn))
                axes[r, c].set_title(f"frame {f}", fontsize=7)
            if not frames:
                axes[r, 0].text(0, 0.5, "no valid frame (unsolvable)", fontsize=9)
    n = sum(len(f) for f in task["valid_frames"])
    fig.suptitle(
        f"{task['id']}: {task['text']}\n({task['predicate']}, {n} valid frames)", fontsize=9
    )
    save_figure(fig, out)
    plt.close(fig)
