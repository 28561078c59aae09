"""Upstream layouts of the counting tasks: PickXtimes, BinFill, SwingXtimes, StopCube.

Each function replays the torch draws of ``src/robomme/robomme_env/<Task>.py`` (RoboMME
@a3842d1) in order: ``__init__`` (generator ``G0``), ``_load_scene`` (once) and
``_initialize_episode`` (twice: constructor reset + harness reset). Samplers are in
:mod:`dataforge.pipelines.robomme.placement`. ``recovery=True`` adds the failed-grasp draw the
harness enables for metadata episodes 0-5 (``robomme_failure_recovery`` +
``robomme_failure_recovery_mode`` env kwargs); the recorded fixture has it off.
``recovery_mode`` is the mode the harness passes ("z" for episodes 0-2, "xy" for 3-5): it
only labels ``params["recovery"]``, both make the same single ``randint``; ``None`` (never
used by the harness) makes upstream draw the mode too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from dataforge.pipelines.robomme import placement as pl
from dataforge.pipelines.robomme.layouts import LayoutFn, UpstreamLayout
from dataforge.pipelines.robomme.layouts.imitation import spawn_cube, spawn_target

CUBE_HALF = pl.CUBE_HALF_SIZE
COLORS_RBG = ("red", "blue", "green")  # PickXtimes / SwingXtimes / BinFill colour groups


def _layout(task: str, seed: int, difficulty: str) -> UpstreamLayout:
    return UpstreamLayout(task, seed, difficulty, robot_qpos=pl.PANDA_RESET_QPOS)


def _add_recovery(
    layout: UpstreamLayout,
    generator: torch.Generator,
    picks: list[int],
    recovery: bool,
    mode: str | None,
) -> None:
    """Make the recovery draw (when enabled) and record it under ``params["recovery"]``."""
    if recovery:
        layout.params["recovery"] = pl.recovery_draw(generator, picks, mode)


# --------------------------------------------------------------------------------------------
# PickXtimes (PickXtimes.py)
# --------------------------------------------------------------------------------------------

# PickXtimes.py: config_easy/medium/hard -> (colours, repeats min, repeats max)
PICKX_CONFIG = {"easy": (1, 1, 3), "medium": (3, 1, 3), "hard": (3, 4, 5)}


def _spawn_colour_cubes(
    generator: torch.Generator,
    colours: list[str],
    n_colours: int,
    avoid: list[pl.Avoid],
    region_half: float,
    *,
    stop_on_failure: bool,
) -> list[pl.Body]:
    """One cube ``cube_<colour>_0`` per colour of the first ``n_colours`` (region (-0.1, 0)).

    PickXtimes skips a colour whose cube finds no spot (``break`` out of that colour's loop);
    SwingXtimes raises ``SceneGenerationError``.
    """
    cubes = []
    for colour in colours[:n_colours]:
        try:
            cube = spawn_cube(generator, f"cube_{colour}_0", (-0.1, 0.0), region_half, avoid)
        except pl.PlacementError:
            if stop_on_failure:
                raise
            continue
        cubes.append(cube)
        avoid.append(cube)
    return cubes


@dataclass
class _ColourScene:
    """What PickXtimes and SwingXtimes draw before their targets (:func:`_colour_scene`)."""

    layout: UpstreamLayout
    g: torch.Generator
    repeats: int
    button: pl.Button
    avoid: list[pl.Avoid]
    colours: list[str]
    unused_colour: int
    cubes: list[pl.Body]


def _colour_scene(
    task: str,
    seed: int,
    difficulty: str,
    config: dict[str, tuple[int, int, int]],
    region_half: float,
    *,
    stop_on_failure: bool,
) -> _ColourScene:
    """The start shared by PickXtimes and SwingXtimes.

    ``__init__`` (``G0``): the repeat count ``randint(lo, hi + 1)``. ``_load_scene`` (``G``):
    button at (-0.2, 0), ``randperm(3)`` colour order, an unused ``randint(3)``
    (``target_color_idx``, overwritten later), then :func:`_spawn_colour_cubes`.
    """
    n_colours, lo, hi = config[difficulty]
    layout = _layout(task, seed, difficulty)
    repeats = pl.randint(pl.make_generator(seed), lo, hi + 1)  # __init__, G0

    g = pl.make_generator(seed)  # _load_scene
    button = pl.place_button(g, (-0.2, 0.0))
    avoid: list[pl.Avoid] = [button.obb]
    colours = [COLORS_RBG[i] for i in pl.randperm(g, 3)]
    unused_colour = pl.randint(g, 0, 3)
    cubes = _spawn_colour_cubes(
        g, colours, n_colours, avoid, region_half, stop_on_failure=stop_on_failure
    )
    return _ColourScene(layout, g, repeats, button, avoid, colours, unused_colour, cubes)


def _colour_layout(
    scene: _ColourScene, targets: list[pl.Body], goal: pl.Body | None, **params: Any
) -> UpstreamLayout:
    """``scene.layout`` filled: cubes then ``targets`` as actors, the button, the params."""
    layout = scene.layout
    for body in (*scene.cubes, *targets):
        layout.actors[body.name] = body.pose
    layout.articulations["button"] = scene.button.pose
    layout.params.update(
        repeats=scene.repeats,
        colour_order=scene.colours,
        unused_colour_index=scene.unused_colour,
        cubes=[c.name for c in scene.cubes],
        goal_cube=goal.name if goal else None,
        goal_colour=goal.name.split("_")[1] if goal else None,
        **params,
    )
    return layout


def pick_x_times(
    seed: int, difficulty: str, *, recovery: bool = False, recovery_mode: str | None = "z"
) -> UpstreamLayout:
    """PickXtimes: button, 1/3/3 cubes, one purple target; ``G0`` draws the repeat count."""
    scene = _colour_scene("PickXtimes", seed, difficulty, PICKX_CONFIG, 0.2, stop_on_failure=False)
    g, cubes = scene.g, scene.cubes
    target = spawn_target(g, "target", (-0.1, 0.0), 0.2, scene.avoid, min_gap=CUBE_HALF * 2)
    goal = cubes[pl.randint(g, 0, len(cubes))] if cubes else None
    # task list: repeats x [pick, place] + press; the picks are the even entries
    picks = [2 * i for i in range(scene.repeats)]
    _add_recovery(scene.layout, g, picks, recovery, recovery_mode)
    return _colour_layout(scene, [target], goal)


# --------------------------------------------------------------------------------------------
# BinFill (BinFill.py)
# --------------------------------------------------------------------------------------------

# BinFill.py config_*: colours, spawn range, put-in colour range, put-in count range
BINFILL_CONFIG = {
    "easy": (1, (4, 6), (1, 1), (1, 3)),
    "medium": (2, (8, 10), (1, 2), (2, 4)),
    "hard": (3, (10, 12), (2, 3), (3, 5)),
}
BINFILL_BOARD = (0.1, 0.08, 0.05)  # board side, hole side, thickness (BinFill._load_scene)
BINFILL_SUBGOAL_COLOURS = ("blue", "red", "green")  # _initialize_episode color_task_definitions


def _binfill_counts(
    g: torch.Generator, difficulty: str
) -> tuple[list[int], int, list[int], list[int]]:
    """Colour pool, put-in colour count, target and spawn counts per [red, blue, green]."""
    n_colours, spawn_range, put_colour_range, put_range = BINFILL_CONFIG[difficulty]
    pool = pl.randperm(g, 3)[:n_colours]
    put_colours = pl.randint(g, put_colour_range[0], put_colour_range[1] + 1)
    put_colours = min(max(1, min(3, put_colours)), max(1, n_colours))
    active = pool[:put_colours]
    targets = [0, 0, 0]
    if put_colours == 1:
        targets[active[0]] = pl.randint(g, put_range[0], put_range[1] + 1)
    else:
        for _ in range(pl.randint(g, put_range[0], put_range[1] + 1)):
            targets[active[pl.randint(g, 0, len(active))]] += 1
    total_spawn = pl.randint(g, spawn_range[0], spawn_range[1] + 1)
    spawns = [0, 0, 0]
    if n_colours == 1:
        only = next((i for i in pool if targets[i] > 0), pool[0])
        spawns[only] = max(total_spawn, targets[only])
    else:
        for i in pool:
            spawns[i] = max(targets[i], 1)
        for _ in range(max(0, total_spawn - sum(spawns[i] for i in pool))):
            spawns[pool[pl.randint(g, 0, len(pool))]] += 1
    return pool, put_colours, targets, spawns


def bin_fill(
    seed: int, difficulty: str, *, recovery: bool = False, recovery_mode: str | None = "z"
) -> UpstreamLayout:
    """BinFill: one persistent generator from ``__init__`` for everything.

    ``__init__``: streaming flag; ``_load_scene``: button, board, counts, shuffled spawn order,
    cubes (skipped on failure); ``_initialize_episode`` x2: subgoal colour order (the second
    ``randperm`` is used) and, with recovery, one pick draw after each.
    """
    layout = _layout("BinFill", seed, difficulty)
    g = pl.make_generator(seed)
    streaming = bool(pl.randint(g, 0, 2))

    button = pl.place_button(g, (-0.2, 0.0))
    x_var = pl.rand(g) * 0.2 - 0.2
    y_var = pl.rand(g) * 0.4 - 0.2
    yaw_deg = pl.rand(g) * 40.0 - 20.0
    yaw_rad = float(torch.deg2rad(torch.tensor(yaw_deg)))  # float32, as upstream
    side, hole, thickness = BINFILL_BOARD
    board_pose = pl.pose7((0.15 + x_var, y_var, thickness / 2), pl.yaw_quaternion(yaw_rad))
    avoid: list[pl.Avoid] = [button.obb, *pl.board_obb2ds(board_pose[:2], side, hole)]

    pool, put_colours, targets, spawns = _binfill_counts(g, difficulty)
    jobs = [(COLORS_RBG[c], k) for c in range(3) for k in range(spawns[c])]
    jobs = [jobs[i] for i in pl.randperm(g, len(jobs))]
    by_colour: dict[str, list[str]] = {c: [] for c in COLORS_RBG}
    cubes = []
    for colour, k in jobs:
        try:
            cube = spawn_cube(g, f"cube_{colour}_{k}", (-0.1, 0.0), (0.2, 0.25), avoid)
        except pl.PlacementError:
            continue
        cubes.append(cube)
        avoid.append(cube)
        by_colour[colour].append(cube.name)

    n_picks = sum(targets)
    for _ in range(2):  # _initialize_episode: constructor reset, then the harness reset
        order = [BINFILL_SUBGOAL_COLOURS[i] for i in pl.randperm(g, 3)]
        _add_recovery(layout, g, [2 * i for i in range(n_picks)], recovery, recovery_mode)

    layout.actors["board_with_hole"] = board_pose
    for cube in cubes:
        layout.actors[cube.name] = cube.pose
    layout.articulations["button"] = button.pose
    colour_of = dict(zip(COLORS_RBG, range(3), strict=True))
    layout.params.update(
        streaming=streaming,
        colour_pool=[COLORS_RBG[i] for i in pool],
        put_in_colours=put_colours,
        targets={c: targets[i] for c, i in colour_of.items()},
        spawns={c: spawns[i] for c, i in colour_of.items()},
        cubes=[c.name for c in cubes],
        cubes_by_colour=by_colour,
        subgoal_colour_order=[c for c in order if targets[colour_of[c]] > 0],
        # BinFill.step: with streaming, list entry k >= 1 of each colour is teleported to
        # (10, 10, 10) from step 0 and dropped back on its own pose at step 50 * k
        stream_return_step=(
            {name: 50 * k for names in by_colour.values() for k, name in enumerate(names) if k}
            if streaming
            else {}
        ),
    )
    return layout


# --------------------------------------------------------------------------------------------
# SwingXtimes (SwingXtimes.py)
# --------------------------------------------------------------------------------------------

SWING_CONFIG = {"easy": (1, 1, 3), "medium": (3, 1, 2), "hard": (3, 3, 3)}


def swing_x_times(
    seed: int, difficulty: str, *, recovery: bool = False, recovery_mode: str | None = "z"
) -> UpstreamLayout:
    """SwingXtimes: as PickXtimes, cubes in +-0.25, then two gray targets (right = smaller y)."""
    scene = _colour_scene("SwingXtimes", seed, difficulty, SWING_CONFIG, 0.25, stop_on_failure=True)
    g, avoid = scene.g, scene.avoid
    # SwingXtimes._load_scene: gray targets r 0.04 in (-0.1, -+0.2) +- 0.1, gap 0.02
    first = spawn_target(g, "temp_target_0", (-0.1, -0.2), 0.1, avoid)
    avoid.append(first)
    second = spawn_target(g, "temp_target_1", (-0.1, 0.2), 0.1, avoid)
    right, left = (first, second) if first.pose[1] < second.pose[1] else (second, first)
    goal = scene.cubes[pl.randint(g, 0, len(scene.cubes))]
    _add_recovery(scene.layout, g, [0], recovery, recovery_mode)  # only the first task picks
    return _colour_layout(
        scene, [first, second], goal, target_right=right.name, target_left=left.name
    )


# --------------------------------------------------------------------------------------------
# StopCube (StopCube.py)
# --------------------------------------------------------------------------------------------

STOPCUBE_PASS_STEPS = (60, 80, 120)  # StopCube._initialize_episode: move_interval_list
STOPCUBE_HALF_LINE = 0.3  # the cube's line runs from (0, -0.3) to (0, 0.3), rotated


def stop_cube(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """StopCube (difficulty ignored): button, target, cube colour; the motion is drawn from a
    fresh generator in ``_initialize_episode`` (same values both times), which also puts the
    kinematic cube at the start of its line. No pick, so ``recovery`` changes nothing
    (StopCube never calls ``inject_fail_grasp``)."""
    del recovery
    layout = _layout("StopCube", seed, difficulty)
    g = pl.make_generator(seed)
    button = pl.place_button(g, (-0.2, 0.0))
    target_x = pl.uniform(g, -0.1, 0.1)
    target_y = pl.uniform(g, -0.1, 0.1)
    colour = torch.rand(3, generator=g).tolist()
    target_pose = pl.pose7((target_x, target_y, 0.01), pl.target_quaternion())

    g_init = pl.make_generator(seed)
    pl.randint(g_init, 27, 33)  # interval, overwritten by 30
    pass_steps = STOPCUBE_PASS_STEPS[pl.randint(g_init, 0, 3)]
    visit = pl.randint(g_init, 2, 6)
    angle_deg = pl.uniform(g_init, -30, 30)
    theta = np.deg2rad(angle_deg)
    rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    centre = np.array(target_pose[:2])
    start = rotation @ np.array([0, -STOPCUBE_HALF_LINE]) + centre
    end = rotation @ np.array([0, STOPCUBE_HALF_LINE]) + centre

    layout.actors["target"] = target_pose
    layout.actors["target_cube"] = pl.pose7((start[0], start[1], CUBE_HALF / 2), (1, 0, 0, 0))
    layout.articulations["button"] = button.pose
    layout.params.update(
        cube_color=colour,
        cube_built_at=[-0.3, -0.3, CUBE_HALF / 2],
        interval=30,
        pass_steps=pass_steps,
        visit=visit,
        stop_step_range=[pass_steps * (visit - 1), pass_steps * visit],
        steps_press=pass_steps * visit - pass_steps / 2,
        line_angle_deg=angle_deg,
        line_start=start.tolist(),
        line_end=end.tolist(),
    )
    return layout


LAYOUTS: dict[str, LayoutFn] = {
    "PickXtimes": pick_x_times,
    "BinFill": bin_fill,
    "SwingXtimes": swing_x_times,
    "StopCube": stop_cube,
}
