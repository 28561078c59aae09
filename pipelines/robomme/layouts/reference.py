"""Upstream layouts of the reference suite: PickHighlight, VideoRepick, VideoPlaceButton,
VideoPlaceOrder.

Each function replays the torch draws of ``src/robomme/robomme_env/<Task>.py`` (RoboMME
benchmark @a3842d1) in upstream order, with the shared samplers of
:mod:`dataforge.pipelines.robomme.placement`.

Recovery (``robomme_failure_recovery``, on for metadata episodes 0-5; section 5 of
``docs/robomme_upstream.md``): upstream's ``utils/task4recovery.py::inject_fail_grasp`` draws
``randint(0, n_picks)`` over the task list's non-video ``solve_pickup`` entries, on the task's
layout generator; the harness always passes the mode, so no mode draw. In these four tasks it is
the last draw of its generator (PickHighlight, VideoPlaceButton: end of ``_load_scene``;
VideoRepick, VideoPlaceOrder: end of ``_initialize_episode``, which runs twice, so two draws and
the second is used), hence it never moves the layout. With ``recovery=True`` the params carry
``recovery`` = {"choice": the drawn index among the picks, "task_index": upstream's
``fail_grasp_task_index``: its position in ``task_list``).
"""

from __future__ import annotations

from typing import Any

import torch

from dataforge.pipelines.robomme import placement as pl
from dataforge.pipelines.robomme.layouts import LayoutFn, Pose7, UpstreamLayout
from dataforge.pipelines.robomme.layouts.imitation import (
    CUBE_HALF,
    PANDA_QPOS,
    body_dict,
    generator,
    layout,
    parked,
    rand,
    randint,
    randperm,
    spawn_cube,
    spawn_target,
)

# The colour lists the tasks index into (names as used in actor names).
RBG = ("red", "blue", "green")  # PickHighlight, VideoRepick, VideoPlace*: color_groups / options


def _recovery(g: torch.Generator, pick_task_indices: list[int]) -> dict[str, Any]:
    """``inject_fail_grasp``: one ``randint(0, n)`` over the non-video pick entries (the mode is
    always given by the harness: no second draw)."""
    return {"recovery": pl.recovery_draw(g, pick_task_indices, "z")}


def _button_layout(
    task: str,
    seed: int,
    difficulty: str,
    actors: dict[str, Pose7],
    button: pl.Button,
    params: dict[str, Any],
) -> UpstreamLayout:
    """A layout of these tasks: ``actors``, the ``button`` articulation, the Panda reset qpos."""
    return layout(
        task,
        seed,
        difficulty,
        actors=actors,
        articulations={"button": button.pose},
        robot_qpos=PANDA_QPOS,
        params=params,
    )


# ---------------------------------------------------------------------------------------------
# PickHighlight (PickHighlight.py)
# ---------------------------------------------------------------------------------------------

PICKHIGHLIGHT_CUBES = {"easy": 3, "medium": 4, "hard": 6}  # configs[...]["spawn"]
PICKHIGHLIGHT_PICKS = {"easy": 1, "medium": 2, "hard": 3}  # configs[...]["pickup"]


def pickhighlight_layout(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """PickHighlight: generator re-seeded at ``_load_scene``.

    Button ``rand(2)`` at (-0.2, 0) + (u - 0.5) * (0.1, 0.4); per cube ``randint(3)`` colour of
    (red, blue, green) then its trials (region (-0.1, 0) +-0.2, gap 0.04, avoiding the button
    and earlier cubes; a failure stops spawning); ``randperm(n)[:k]`` highlighted cubes, in
    pick order. Task list: press, then per highlighted cube a pick (and a put-down between
    picks), so the picks sit at task indices 1, 3, 5.
    """
    g = generator(seed)
    button = pl.place_button(g, (-0.2, 0.0), (0.1, 0.4))
    avoid: list[pl.Avoid] = [button.obb]
    cubes: list[pl.Body] = []
    colors: list[str] = []
    for i in range(PICKHIGHLIGHT_CUBES[difficulty]):
        color = RBG[randint(g, 0, len(RBG))]
        try:
            cube = spawn_cube(
                g, f"cube_{color}_{i}", (-0.1, 0.0), 0.2, avoid, min_gap=CUBE_HALF * 2
            )
        except pl.PlacementError:
            break  # PickHighlight.py: RuntimeError -> stop spawning
        cubes.append(cube)
        colors.append(color)
        avoid.append(cube)
    chosen = randperm(g, len(cubes))[: PICKHIGHLIGHT_PICKS[difficulty]]
    params: dict[str, Any] = {
        "cube_colors": colors,
        "highlighted": [cubes[i].name for i in chosen],
        "highlighted_colors": [colors[i] for i in chosen],
    }
    if recovery:
        params |= _recovery(g, [1 + 2 * j for j in range(len(chosen))])
    return _button_layout("PickHighlight", seed, difficulty, body_dict(cubes), button, params)


# ---------------------------------------------------------------------------------------------
# VideoRepick (VideoRepick.py, utils/statechange.py::rotate_points_random)
# ---------------------------------------------------------------------------------------------

VIDEOREPICK_SWAPS = {"easy": (1, 2), "medium": (2, 3), "hard": (0, 0)}  # swap_min, swap_max
VIDEOREPICK_HARD_ROUNDS = 5  # hard: 5 rounds of one red, blue and green cube
# VideoRepick.py: region3_tri / region3_line (easy and medium spawn 3 cubes)
TRIANGLE = ((-0.05, -0.1), (-0.05, 0.1), (0.1, 0.0))
LINE = ((0.0, -0.15), (0.0, 0.15), (0.0, 0.0))


def rotated_points(
    g: torch.Generator, points: tuple[tuple[float, float], ...]
) -> tuple[float, list[list[float]]]:
    """statechange.py::rotate_points_random with range (0, 180): angle = u * 180 used as
    RADIANS (upstream unit slip); float32 points times the float32 rotation's transpose."""
    pts = torch.tensor(points, dtype=torch.float32)
    angle = torch.rand(1, generator=g) * 180.0
    c, s = torch.cos(angle), torch.sin(angle)
    rot = torch.tensor([[c, -s], [s, c]], dtype=torch.float32).squeeze()
    return angle.item(), torch.matmul(pts, rot.T).tolist()


def _videorepick_hard(
    g: torch.Generator, avoid: list[pl.Avoid]
) -> tuple[list[pl.Body], dict[str, Any]]:
    """Hard: 5 x (``randperm(3)`` colour order, one cube each: region (-0.1, 0) half
    (0.2, 0.25), gap 0.02); ``randint(15)`` goal cube; no swaps."""
    cubes: list[pl.Body] = []
    for rnd in range(VIDEOREPICK_HARD_ROUNDS):
        for k in randperm(g, len(RBG)):
            cube = spawn_cube(g, f"cube_{RBG[k]}_{rnd}", (-0.1, 0.0), (0.2, 0.25), avoid)
            cubes.append(cube)
            avoid.append(cube)
    goal = cubes[randint(g, 0, len(cubes))]
    return cubes, {"goal_cube": goal.name, "swap_first": []}


def _videorepick_easy(
    g: torch.Generator, avoid: list[pl.Avoid]
) -> tuple[list[pl.Body], dict[str, Any]]:
    """Easy/medium: ``randint(3)`` one colour for all; ``randperm(4)`` (no effect);
    ``randint(2)`` triangle/line; rotation; cubes ``bin_0..2`` at the points +-0.07 (gap 0.02,
    ``include_existing`` on); ``randperm(3)[:1]`` goal; ``randperm(2)`` order of the two others.
    ``swap_first``: the first cube of swap 1, 2, 3 (partners are chosen at run time)."""
    color = RBG[randint(g, 0, len(RBG))]
    randperm(g, 4)  # shuffles four copies of the same colour
    shape = TRIANGLE if randint(g, 0, 2) == 0 else LINE
    angle, points = rotated_points(g, shape)
    spawned = pl.Spawned()
    cubes: list[pl.Body] = []
    for i, center in enumerate(points):
        cube = pl.spawn_random_cube(
            g,
            name=f"bin_{i}",
            region_center=center,
            region_half_size=0.07,
            half_size=CUBE_HALF,
            min_gap=CUBE_HALF,
            avoid=avoid,
            spawned=spawned,
        )
        cubes.append(cube)
        avoid.append(cube)
    goal = randperm(g, len(cubes))[0]
    others = [i for i in range(len(cubes)) if i != goal]
    order = [others[i] for i in randperm(g, len(others))[:2]]
    params = {
        "cube_color": color,
        "layout_shape": "triangle" if shape is TRIANGLE else "line",
        "rotation": angle,
        "goal_cube": cubes[goal].name,
        "swap_first": [cubes[i].name for i in [goal, *order]],
    }
    return cubes, params


def _videorepick_pick_indices(repeats: int, swaps: int) -> list[int]:
    """Task indices of the execution picks: after pick, drop, [static + one static per swap],
    NO RECORD, each repetition is (pick, put down)."""
    video = 2 + (1 + swaps if swaps >= 1 else 0) + 1
    return [video + 2 * j for j in range(repeats)]


def videorepick_layout(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """VideoRepick: one persistent generator made in ``__init__``.

    ``__init__``: repeats ``randint(1, 4)``; swaps ``randint(min, max + 1)``. ``_load_scene``:
    button ``rand(2)`` at (-0.2, 0) + (u - 0.5) * (0.1, 0.1); the cubes (hard / easy-medium).
    ``_initialize_episode`` (x2): recovery draw only.
    """
    g = generator(seed)
    repeats = randint(g, 1, 4)
    lo, hi = VIDEOREPICK_SWAPS[difficulty]
    swaps = randint(g, lo, hi + 1)
    button = pl.place_button(g, (-0.2, 0.0), (0.1, 0.1))
    avoid: list[pl.Avoid] = [button.obb]
    build = _videorepick_hard if difficulty == "hard" else _videorepick_easy
    cubes, params = build(g, avoid)
    params = {"repeats": repeats, "swaps": swaps, **params}
    params["swap_first"] = params["swap_first"][:swaps]
    if recovery:
        picks = _videorepick_pick_indices(repeats, swaps)
        params |= [_recovery(g, picks) for _ in range(2)][-1]
    return _button_layout("VideoRepick", seed, difficulty, body_dict(cubes), button, params)


# ---------------------------------------------------------------------------------------------
# VideoPlaceButton / VideoPlaceOrder (VideoPlaceButton.py, VideoPlaceOrder.py)
# ---------------------------------------------------------------------------------------------

VIDEOPLACE_COLORS = {"easy": 1, "medium": 3, "hard": 3}  # configs[...]["color"]
VIDEOPLACEBUTTON_TARGETS = {"easy": 3, "medium": 4, "hard": 4}  # configs[...]["targets"]
VIDEOPLACEORDER_TARGETS = 4  # every difficulty
GOAL_SITE_PARKED_Z = -0.05  # _initialize_episode lowers the hidden goal site under the table


def _videoplace_scene(
    g: torch.Generator, difficulty: str, goal_radius: float, n_targets: int
) -> tuple[pl.Body, pl.Button, list[pl.Body], list[pl.Body], dict[str, Any]]:
    """The common ``_load_scene`` part of both tasks.

    ``goal_site`` (purple, radius ``goal_radius``, region (-0.1, 0) +-0.1, gap 0.02); button
    ``rand(2)`` at (0.1, 0) + (u - 0.5) * (0.05, 0.3); ``randperm(3)`` of (red, blue, green),
    the first 1/3/3 colours get a cube (region (0, 0) +-0.2, gap 0.02); ``target_0..`` (r 0.04,
    region (0, 0) +-0.2, gap 0.02); ``randint(n_cubes)`` goal cube; hard: ``randperm(n)``, its
    first two targets swap. Every sampler avoids all earlier objects (the goal site as a circle
    for targets; cubes cannot avoid it, it has no collision).
    """
    goal_site = spawn_target(g, "goal_site", (-0.1, 0.0), 0.1, radius=goal_radius)
    button = pl.place_button(g, (0.1, 0.0), (0.05, 0.3))
    avoid: list[pl.Avoid] = [goal_site, button.obb]
    colors = [RBG[i] for i in randperm(g, len(RBG))][: VIDEOPLACE_COLORS[difficulty]]
    cubes = []
    for color in colors:
        cube = spawn_cube(g, f"cube_{color}_0", (0.0, 0.0), 0.2, avoid)
        cubes.append(cube)
        avoid.append(cube)
    targets = []
    for i in range(n_targets):
        target = spawn_target(g, f"target_{i}", (0.0, 0.0), 0.2, avoid)
        targets.append(target)
        avoid.append(target)
    params: dict[str, Any] = {
        "cube_colors": colors,
        "goal_cube": cubes[randint(g, 0, len(cubes))].name,
    }
    params["swap_targets"] = []
    if difficulty == "hard":
        perm = randperm(g, len(targets))
        params["swap_targets"] = [targets[perm[0]].name, targets[perm[1]].name]
    return goal_site, button, cubes, targets, params


def _videoplace_layout(
    task: str,
    seed: int,
    difficulty: str,
    scene: tuple[pl.Body, pl.Button, list[pl.Body], list[pl.Body], dict[str, Any]],
    params: dict[str, Any],
) -> UpstreamLayout:
    """Actors in build order (goal site parked at z -0.05, cubes, targets), button articulation."""
    goal_site, button, cubes, targets, scene_params = scene
    actors: dict[str, Pose7] = {"goal_site": parked(goal_site, GOAL_SITE_PARKED_Z)}
    actors |= body_dict(cubes) | body_dict(targets)
    params = {**scene_params, "goal_site_xy": list(goal_site.pose[:2]), **params}
    return _button_layout(task, seed, difficulty, actors, button, params)


def videoplacebutton_layout(
    seed: int, difficulty: str, *, recovery: bool = False
) -> UpstreamLayout:
    """VideoPlaceButton: fresh generator in ``_load_scene``; goal site r 0.06, 3/4/4 targets.

    After the scene: ``rand < 0.5`` -> answer ``target_0`` ("before" the press) else
    ``target_1`` ("after"); recovery draw (one pick: the execution pick, task index 10, after
    pick/drop t0, press, pick/drop t1, pick/drop goal, static, static, NO RECORD).
    """
    g = generator(seed)
    scene = _videoplace_scene(g, difficulty, CUBE_HALF * 3, VIDEOPLACEBUTTON_TARGETS[difficulty])
    before = rand(g) < 0.5
    params: dict[str, Any] = {
        "answer_target": "target_0" if before else "target_1",
        "answer_relation": "before" if before else "after",
        "visit_order": ["target_0", "target_1"],
    }
    if recovery:
        params |= _recovery(g, [10])
    return _videoplace_layout("VideoPlaceButton", seed, difficulty, scene, params)


def videoplaceorder_layout(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """VideoPlaceOrder: one persistent generator made in ``__init__``; goal site r 0.1 (always
    exactly (-0.1, 0)), 4 targets.

    After the scene: n = ``randint(2, 5)`` visits; ``randperm(4)[:n]`` visit order; answer =
    the m-th visited target, m = ``randint(1, n + 1)``; ``randint(0, n)`` = k, the press comes
    after placement k + 1. ``_initialize_episode`` (x2): recovery draw; the execution pick is
    task index 2n + 6 (2n pick/drop + press + pick, drop goal, static, static, NO RECORD).
    """
    g = generator(seed)
    scene = _videoplace_scene(g, difficulty, CUBE_HALF * 5, VIDEOPLACEORDER_TARGETS)
    targets = scene[3]
    n = randint(g, 2, len(targets) + 1)
    order = [targets[i].name for i in randperm(g, len(targets))[:n]]
    m = randint(g, 1, n + 1)
    k = randint(g, 0, n)
    params: dict[str, Any] = {
        "visit_order": order,
        "answer_index": m,
        "answer_target": order[m - 1],
        "press_after_placement": k + 1,
    }
    if recovery:
        params |= [_recovery(g, [2 * n + 6]) for _ in range(2)][-1]
    return _videoplace_layout("VideoPlaceOrder", seed, difficulty, scene, params)


LAYOUTS: dict[str, LayoutFn] = {
    "PickHighlight": pickhighlight_layout,
    "VideoRepick": videorepick_layout,
    "VideoPlaceButton": videoplacebutton_layout,
    "VideoPlaceOrder": videoplaceorder_layout,
}
