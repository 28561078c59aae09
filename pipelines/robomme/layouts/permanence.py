"""Upstream layouts of the permanence tasks: VideoUnmask, ButtonUnmask, VideoUnmaskSwap,
ButtonUnmaskSwap.

Containers (``bin_<i>``, opening down) are placed by ``spawn_random_bin``; the first three (or
the three ``selected_bins`` of the swap tasks) hide a 3.3 cm cube ``target_cube_<colour>``
(``spawn_fixed_cube``, no draws). Draw order per ``src/robomme/robomme_env/<Task>.py``
(RoboMME @a3842d1); see :mod:`dataforge.pipelines.robomme.layouts.counting` for the
conventions (``G0`` in ``__init__``, ``_initialize_episode`` twice, ``recovery``).

All four move every container away at step 0 (``lift_and_drop_objects_back_to_original``,
window 0..64) and drop it back on its own pose at step 32; the layout is the pose after reset,
which is also where the containers come back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from dataforge.pipelines.robomme import placement as pl
from dataforge.pipelines.robomme.layouts import LayoutFn, UpstreamLayout

HIDDEN_CUBE_HALF = pl.CUBE_HALF_SIZE / 1.2  # spawn_fixed_cube(half_size=cube_half_size / 1.2)
CUBE_COLOURS = ("red", "green", "blue")  # cube_colors / color_names before the shuffle
COVER_STEP = 32  # lift_and_drop_objects_back_to_original(start 0, end 64): drop at 32


def _layout(task: str, seed: int, difficulty: str) -> UpstreamLayout:
    return UpstreamLayout(task, seed, difficulty, robot_qpos=pl.PANDA_RESET_QPOS)


def _spawn_bins(
    g: torch.Generator,
    centres: Sequence[Sequence[float]],
    half: float,
    min_gap: float,
    avoid: list[pl.Avoid],
) -> list[pl.Body]:
    """``bin_0..`` at the given region centres; stops at the first bin that finds no spot."""
    bins = []
    for i, centre in enumerate(centres):
        try:
            body = pl.spawn_random_bin(
                g,
                name=f"bin_{i}",
                region_center=centre,
                region_half_size=half,
                min_gap=min_gap,
                avoid=avoid,
            )
        except pl.PlacementError:
            break
        bins.append(body)
        avoid.append(body)
    return bins


def _hidden_cubes(bins: Sequence[pl.Body], colours: Sequence[str]) -> list[pl.Body]:
    """``target_cube_<colour i>`` under ``bins[i]``: (bin x, bin y, half), no rotation."""
    return [
        pl.fixed_cube(f"target_cube_{colour}", body.pose[:2], HIDDEN_CUBE_HALF)
        for body, colour in zip(bins, colours, strict=False)
    ]


def _pick_tasks(first: int, pick_times: int) -> list[int]:
    """Task-list indices of the container picks: ``first``, then after a put-down."""
    return [first] if pick_times < 2 else [first, first + 2]


def _fill(
    layout: UpstreamLayout, bins: list[pl.Body], cubes: list[pl.Body], buttons: list[pl.Button]
) -> None:
    for body in (*bins, *cubes):
        layout.actors[body.name] = body.pose
    for button in buttons:
        layout.articulations[button.name] = button.pose


# --------------------------------------------------------------------------------------------
# VideoUnmask / ButtonUnmask
# --------------------------------------------------------------------------------------------

UNMASK_CONFIG = {"easy": (3, 1), "medium": (5, 1), "hard": (15, 2)}  # bins, picks


def unmask(
    task: str, seed: int, difficulty: str, recovery: bool = False, recovery_mode: str | None = "z"
) -> UpstreamLayout:
    """VideoUnmask or ButtonUnmask (``task``), on the ``_load_scene`` generator ``G``.

    VideoUnmask: 3/5/15 containers, cubes red/green/blue shuffled under bins 0-2. ButtonUnmask:
    the same, but it first places its button (range (0.1, 0.1)) and bins avoid its square; its
    recovery draw uses ``G0`` (made in ``__init__`` after one unused ``randint(1, 6)``).
    """
    with_button = task == "ButtonUnmask"
    n_bins, picks = UNMASK_CONFIG[difficulty]
    layout = _layout(task, seed, difficulty)
    g0 = pl.make_generator(seed)
    if with_button:
        layout.params["unused_repeats"] = pl.randint(g0, 1, 6)  # ButtonUnmask.__init__

    g = pl.make_generator(seed)
    avoid: list[pl.Avoid] = []
    buttons = []
    if with_button:
        buttons.append(pl.place_button(g, (-0.2, 0.0), (0.1, 0.1)))
        avoid.append(buttons[0].obb)
    # VideoUnmask / ButtonUnmask._load_scene: region (0, 0) +- 0.2, gap 2 * cube half
    bins = _spawn_bins(g, [(0.0, 0.0)] * n_bins, 0.2, pl.CUBE_HALF_SIZE * 2, avoid)
    colours = [CUBE_COLOURS[i] for i in pl.randperm(g, 3)]
    cubes = _hidden_cubes(bins[:3], colours)
    first_pick = 1  # after "static" (video) or "press the button"
    if recovery:
        layout.params["recovery"] = pl.recovery_draw(
            g0 if with_button else g, _pick_tasks(first_pick, picks), recovery_mode
        )

    _fill(layout, bins, cubes, buttons)
    layout.params.update(
        colour_names=colours,
        bins=[b.name for b in bins],
        pick_times=picks,
        goal_bins=[bins[i].name for i in range(min(picks, len(bins)))],
        cover_step=COVER_STEP,
    )
    return layout


# --------------------------------------------------------------------------------------------
# VideoUnmaskSwap / ButtonUnmaskSwap
# --------------------------------------------------------------------------------------------

# <Task>Swap.py config_*: bins, swaps min/max, picks min/max
SWAP_CONFIG = {
    "easy": (3, (1, 2), (1, 2)),
    "medium": (4, (1, 2), (1, 1)),
    "hard": (4, (2, 3), (2, 2)),
}
VIDEO_SWAP_SQUARE = [(-0.05, -0.1), (-0.05, 0.1), (0.1, 0.1), (0.1, -0.1)]
VIDEO_SWAP_TRIANGLE = [(-0.05, -0.1), (-0.05, 0.1), (0.1, 0.0)]
VIDEO_SWAP_LINE = [(0.0, -0.15), (0.0, 0.15), (0.0, 0.0)]
SWAP_REGION_HALF = 0.07  # spawn_random_bin(region_half_size=0.07, min_gap=cube half)


def _rotate_points(
    g: torch.Generator, points: Sequence[Sequence[float]]
) -> tuple[float, list[list[float]]]:
    """``statechange.py::rotate_points_random(points, (0, 180), g)`` in float32.

    The angle ``rand * 180`` is used as RADIANS by ``cos``/``sin`` (an upstream unit slip).
    """
    pts = torch.tensor(points, dtype=torch.float32)
    angle = torch.rand(1, generator=g) * (180 - 0) + 0
    cos, sin = torch.cos(angle), torch.sin(angle)
    rotation = torch.stack([torch.cat([cos, -sin]), torch.cat([sin, cos])])
    return angle.item(), torch.matmul(pts, rotation.T).tolist()


def _swap_picks(
    g: torch.Generator, bins: list[pl.Body], layout: UpstreamLayout
) -> tuple[list[str], list[pl.Body]]:
    """Colours, selected bins and the swap draws shared by both swap tasks (after the bins)."""
    colours = [CUBE_COLOURS[i] for i in pl.randperm(g, 3)]
    selected = pl.randperm(g, 3)[: min(3, len(bins))]
    cubes = _hidden_cubes([bins[i] for i in selected], colours)
    target_choice = pl.randint(g, 0, len(cubes)) if cubes else None  # unused by the tasks
    target_idx = pl.randperm(g, len(selected))[:2]
    remaining = [i for i in range(len(bins)) if i not in target_idx]
    third = remaining[pl.randint(g, 0, len(remaining))] if remaining else None
    swap_first = [*target_idx, *([third] if third is not None else [])]
    layout.params.update(
        colour_names=colours,
        selected_bin_indices=selected,
        selected_bins=[bins[i].name for i in selected],
        # target_bin / target_cube: drawn, but no rule of either task reads them
        target_bin=bins[selected[target_choice]].name if target_choice is not None else None,
        target_bins=[bins[selected[i]].name for i in target_idx],
        target_bin_colours=[colours[i] for i in target_idx],
        # swap_pair<k>_idx1 = spawned_bins[swap_first[k]]: the first two indices were drawn
        # over selected_bins, but upstream applies them to spawned_bins
        swap_first_bins=[bins[i].name for i in swap_first],
        cover_step=COVER_STEP,
    )
    return colours, cubes


SwapScene = tuple[list[pl.Body], list[pl.Button], dict[str, Any]]
"""What a swap task's ``_load_scene`` places before :func:`_swap_picks`: bins, buttons and
the params of its bin layout (shape, rotation, region centres)."""


def _video_swap_scene(g: torch.Generator, n_bins: int) -> SwapScene:
    """VideoUnmaskSwap: 3 bins on a rotated triangle/line or 4 on a rotated square."""
    line = pl.randint(g, 0, 2) == 1  # drawn even when the 4-bin square is used
    if n_bins == 4:
        shape, points = "square", VIDEO_SWAP_SQUARE
    else:
        shape, points = ("line", VIDEO_SWAP_LINE) if line else ("triangle", VIDEO_SWAP_TRIANGLE)
    angle, centres = _rotate_points(g, points)
    bins = _spawn_bins(g, centres[:n_bins], SWAP_REGION_HALF, pl.CUBE_HALF_SIZE, [])
    return bins, [], {"shape": shape, "rotation_rad": angle, "region_centres": centres[:n_bins]}


def _button_swap_scene(g: torch.Generator, n_bins: int) -> SwapScene:
    """ButtonUnmaskSwap: two buttons, then bins on jittered (not rotated) points."""
    left = pl.place_button(g, (-0.2, -0.1), (0.05, 0.05), name="button_left")
    right = pl.place_button(g, (-0.2, 0.1), (0.05, 0.05), name="button_right")
    y1, y2 = pl.rand(g) * 0.1, pl.rand(g) * 0.1
    x_tri = [pl.rand(g) * 0.1 for _ in range(3)]
    x_line = [pl.rand(g) * 0.1 for _ in range(3)]
    square = [[0, -0.1 + y1], [0, 0.1 + y1], [0.1, 0.1 + y2], [0.1, -0.1 + y2]]
    triangle = [[-0.05 + x_tri[0], -0.15], [-0.05 + x_tri[1], 0.15], [0.05 + x_tri[2], 0]]
    line_pts = [[-0.05 + x_line[0], -0.15], [-0.05 + x_line[1], 0.15], [-0.05 + x_line[2], 0]]
    line = pl.randint(g, 0, 2) == 1
    if n_bins == 4:
        shape, centres = "square", square
    else:
        shape, centres = ("line", line_pts) if line else ("triangle", triangle)
    # only button_left's square is avoided (ButtonUnmaskSwap._load_scene: avoid = [obb_1])
    bins = _spawn_bins(g, centres[:n_bins], SWAP_REGION_HALF, pl.CUBE_HALF_SIZE, [left.obb])
    return bins, [left, right], {"shape": shape, "region_centres": centres[:n_bins]}


# task -> (scene, task index of the first pick, recovery draws). VideoUnmaskSwap: static
# (video), pick, [put down, pick], one draw after the scene. ButtonUnmaskSwap: press, press,
# pick, [put down, pick], drawn in each ``_initialize_episode`` on the kept ``G`` (made twice;
# the second draw is used).
SWAP_SCENES: dict[str, tuple[Callable[[torch.Generator, int], SwapScene], int, int]] = {
    "VideoUnmaskSwap": (_video_swap_scene, 1, 1),
    "ButtonUnmaskSwap": (_button_swap_scene, 2, 2),
}


def unmask_swap(
    task: str, seed: int, difficulty: str, recovery: bool = False, recovery_mode: str | None = "z"
) -> UpstreamLayout:
    """VideoUnmaskSwap or ButtonUnmaskSwap (``task``).

    ``G0`` (``__init__``) draws the swap and pick counts; ``G`` (``_load_scene``) the task's
    scene (:data:`SWAP_SCENES`), :func:`_swap_picks`, then, with ``recovery``, the pick draw(s).
    """
    scene, first_pick, draws = SWAP_SCENES[task]
    n_bins, swap_range, pick_range = SWAP_CONFIG[difficulty]
    layout = _layout(task, seed, difficulty)
    g0 = pl.make_generator(seed)
    swaps = pl.randint(g0, swap_range[0], swap_range[1] + 1)
    picks = pl.randint(g0, pick_range[0], pick_range[1] + 1)

    g = pl.make_generator(seed)
    bins, buttons, scene_params = scene(g, n_bins)
    _, cubes = _swap_picks(g, bins, layout)
    for _ in range(draws if recovery else 0):
        pick_tasks = _pick_tasks(first_pick, picks)
        layout.params["recovery"] = pl.recovery_draw(g, pick_tasks, recovery_mode)

    _fill(layout, bins, cubes, buttons)
    layout.params.update(swap_times=swaps, pick_times=picks, **scene_params)
    layout.params["bins"] = [b.name for b in bins]
    return layout


LAYOUTS: dict[str, LayoutFn] = {
    **{task: functools.partial(unmask, task) for task in ("VideoUnmask", "ButtonUnmask")},
    **{task: functools.partial(unmask_swap, task) for task in SWAP_SCENES},
}
