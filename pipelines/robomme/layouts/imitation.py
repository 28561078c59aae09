"""Upstream layouts of the imitation suite: MoveCube, InsertPeg, PatternLock, RouteStick.

Each function replays the torch draws of ``src/robomme/robomme_env/<Task>.py`` (RoboMME
benchmark @a3842d1) in upstream order: which generator (``__init__``, ``_load_scene`` or
``_initialize_episode``), the discarded draws, and ``_initialize_episode`` running twice
(constructor reset + harness reset), so a persistent generator's draws there take their second
values. None of these four tasks calls ``inject_fail_grasp``, so ``recovery`` changes nothing
(section 5 of ``docs/robomme_upstream.md``). MoveCube and InsertPeg ignore the difficulty
(section 1.4); PatternLock and RouteStick take their grid size / walk length from it.

The small helpers at the top are also used by ``reference.py`` and ``counting.py``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from dataforge.pipelines.robomme import placement as pl
from dataforge.pipelines.robomme.layouts import LayoutFn, Pose7, UpstreamLayout
from dataforge.pipelines.robomme.placement import make_generator as generator
from dataforge.pipelines.robomme.placement import rand, randint, randperm

# ---------------------------------------------------------------------------------------------
# Shared helpers (also imported by reference.py and counting.py)
# ---------------------------------------------------------------------------------------------

PANDA_QPOS = pl.PANDA_RESET_QPOS  # utils/reset_panda.py, set by every _initialize_episode
STICK_QPOS: tuple[float, ...] = PANDA_QPOS[:7]  # gripper="stick": the first 7 joints
CUBE_HALF = pl.CUBE_HALF_SIZE  # PICK_CUBE_CONFIGS["panda"]["cube_half_size"]
IDENTITY_Q = (1.0, 0.0, 0.0, 0.0)


def f32(value: float) -> float:
    """``value`` rounded to float32, as a ``(tensor).item()`` upstream returns it."""
    return float(np.float32(value))


def yaw_pose(x: float, y: float, z: float, yaw: float) -> Pose7:
    """Float32 pose at (x, y, z) turned by ``yaw`` about z (euler XYZ (0, 0, yaw) -> quaternion)."""
    return pl.pose7((x, y, z), pl.yaw_quaternion(yaw))


def body_dict(bodies: Sequence[pl.Body]) -> dict[str, Pose7]:
    """name -> pose of placed bodies, in the given (build) order."""
    return {b.name: b.pose for b in bodies}


def parked(body: pl.Body, z: float) -> Pose7:
    """``body``'s pose with z replaced (upstream lowers a hidden goal site this way)."""
    return (*body.pose[:2], float(np.float32(z)), *body.pose[3:])


def layout(task: str, seed: int, difficulty: str, **fields: Any) -> UpstreamLayout:
    """An :class:`UpstreamLayout` (thin wrapper to keep the task functions short)."""
    return UpstreamLayout(task=task, seed=seed, difficulty=difficulty, **fields)


def spawn_cube(
    g: torch.Generator,
    name: str,
    center: Sequence[float],
    half: float | Sequence[float],
    avoid: Sequence[pl.Avoid],
    *,
    min_gap: float = CUBE_HALF,
) -> pl.Body:
    """``spawn_random_cube`` as the tasks call it: a 2 cm cube in ``center`` +- ``half``, gap
    ``min_gap`` (default 0.02), avoiding only ``avoid`` (``include_existing`` off)."""
    return pl.spawn_random_cube(
        g,
        name=name,
        region_center=center,
        region_half_size=half,
        half_size=CUBE_HALF,
        min_gap=min_gap,
        avoid=avoid,
        include_existing=False,
    )


def spawn_target(
    g: torch.Generator,
    name: str,
    center: Sequence[float],
    half: float,
    avoid: Sequence[pl.Avoid] = (),
    *,
    radius: float = CUBE_HALF * 2,
    min_gap: float = CUBE_HALF,
) -> pl.Body:
    """``spawn_random_target`` as the tasks call it: a 5 mm thick disc (default r 0.04) in
    ``center`` +- ``half``, gap ``min_gap`` (default 0.02), avoiding only ``avoid``
    (``include_existing`` off)."""
    return pl.spawn_random_target(
        g,
        name=name,
        region_center=center,
        region_half_size=half,
        radius=radius,
        thickness=0.005,
        min_gap=min_gap,
        avoid=avoid,
        include_existing=False,
    )


# ---------------------------------------------------------------------------------------------
# MoveCube (MoveCube.py)
# ---------------------------------------------------------------------------------------------

MOVECUBE_MANNERS = ("peg_push", "gripper_push", "grasp_putdown")  # MoveCube.py: self.ways
MOVECUBE_PEG_LENGTH = f32(0.1)  # MoveCube.py: length = (0.1 + 0 * rand).item() (float32)
MOVECUBE_CUBE_TRIALS = 128  # MoveCube.py: max_cube_spawn_trials


def _movecube_peg_pose(g: torch.Generator) -> Pose7:
    """One peg pose (4 draws): y = -0.2 if u < 0.5 else 0.2; x/y jitter (u - 0.5) * 0.1 added in
    float32; yaw = u * pi/2 - pi/4. The peg articulation's root sits at z = 0."""
    base_y = -0.2 if rand(g) < 0.5 else 0.2
    xy = np.array([0.0, base_y], dtype=np.float32)
    jitter = [(rand(g) - 0.5) * 0.1, (rand(g) - 0.5) * 0.1]
    xy += np.array(jitter, dtype=np.float32)
    yaw = rand(g) * (np.pi / 2) - (np.pi / 4)
    return yaw_pose(float(xy[0]), float(xy[1]), 0.0, yaw)


def _movecube_cube_center(g: torch.Generator, goal: pl.Body) -> tuple[float, float]:
    """Cube region centre: (u * 0.2 - 0.1, u * 0.2 - 0.1) until farther than 5 cube halves
    (0.1) from the goal site, at most 128 trials (upstream then crashes on None)."""
    goal_xy = goal.xy
    for _ in range(MOVECUBE_CUBE_TRIALS):
        candidate = np.array([rand(g) * 0.2 - 0.1, rand(g) * 0.2 - 0.1], dtype=np.float64)
        if np.linalg.norm(candidate - goal_xy) > CUBE_HALF * 5:
            return float(candidate[0]), float(candidate[1])
    raise pl.PlacementError("MoveCube: no cube centre away from the goal site")


def _movecube_cube(g: torch.Generator, name: str, goal: pl.Body, spawned: pl.Spawned) -> pl.Body:
    """``spawn_random_cube`` around a sampled centre (half 0.05, default gap 0.005) with
    ``include_existing`` on: the second cube avoids the first (``self.cube``)."""
    cx, cy = _movecube_cube_center(g, goal)
    return pl.spawn_random_cube(
        g,
        name=name,
        region_center=(cx, cy),
        region_half_size=0.05,
        half_size=CUBE_HALF,
        min_gap=0.005,
        spawned=spawned,
    )


def movecube_layout(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """MoveCube: one persistent generator made in ``__init__``.

    ``_load_scene``: 2 unused draws (length, radius); the peg pose; the restaged peg pose;
    ``randint(2)`` x2 (grasp end, direction: both overridden/unused); ``goal_site`` (region
    (0,0) +-0.15) and ``goal_site_2`` (+-0.1); ``fixed_cube`` then ``fixed_cube_2``.
    ``_initialize_episode`` (x2): ``randint(3)`` manner (second value used); ``fixed_cube_2``
    parked at (10, 10, 1) and ``goal_site_2`` at (10, -10, 1), identity rotation.
    """
    del recovery  # MoveCube has no pick to fail
    g = generator(seed)
    rand(g), rand(g)  # length_tensor, radius_tensor: multiplied by 0
    peg = _movecube_peg_pose(g)
    peg_2 = _movecube_peg_pose(g)
    randint(g, 0, 2)  # obj_sample: evaluate() forces obj_flag = -1 (grasp the tail)
    randint(g, 0, 2)  # dir_sample: unused
    goal = spawn_target(g, "goal_site", (0.0, 0.0), 0.15)  # purple, nothing avoided
    goal_2 = spawn_target(g, "goal_site_2", (0.0, 0.0), 0.1)
    spawned = pl.Spawned()
    cube = _movecube_cube(g, "fixed_cube", goal, spawned)
    spawned.main_cube = cube  # self.cube
    cube_2 = _movecube_cube(g, "fixed_cube_2", goal_2, spawned)
    manner = [MOVECUBE_MANNERS[randint(g, 0, 3)] for _ in range(2)][-1]
    actors = {
        "goal_site": goal.pose,
        "goal_site_2": pl.pose7((10, -10, 1), IDENTITY_Q),
        "fixed_cube": cube.pose,
        "fixed_cube_2": pl.pose7((10, 10, 1), IDENTITY_Q),
    }
    params = {
        "manner": manner,
        "peg_grasp_end": "tail",  # MoveCube.evaluate: obj_flag = -1 -> grasp_target = peg_tail
        "peg_length": MOVECUBE_PEG_LENGTH,
        "second_poses": {
            "peg": list(peg_2),
            "goal_site": list(goal_2.pose),
            "fixed_cube": list(cube_2.pose),
        },
    }
    return layout(
        "MoveCube",
        seed,
        difficulty,
        actors=actors,
        articulations={"peg": peg},
        robot_qpos=PANDA_QPOS,
        params=params,
    )


# ---------------------------------------------------------------------------------------------
# InsertPeg (InsertPeg.py)
# ---------------------------------------------------------------------------------------------

INSERTPEG_RADIUS = f32(0.01)  # InsertPeg.py: radius = (0.01 + 0 * rand).item()
INSERTPEG_LENGTH = f32(0.05)  # InsertPeg.py: length = (0.05 + 0 * rand).item()
INSERTPEG_PEGS = 3
INSERTPEG_TRIALS = 512  # InsertPeg.py: max_sampling_attempts
AGENT_X = -0.615  # every task: _load_agent(sapien.Pose(p=[-0.615, 0, 0]))


def _insertpeg_box(g: torch.Generator) -> Pose7:
    """Box with hole: x, y jitter (u - 0.5) * 0.2, z = 4 radii, yaw 90 deg + (2u - 1) * 20 deg."""
    x = (rand(g) - 0.5) * 0.2
    y = (rand(g) - 0.5) * 0.2
    yaw = np.pi / 2 + (rand(g) * 2 - 1) * np.radians(20)
    return yaw_pose(x, y, INSERTPEG_RADIUS * 4, yaw)


def _insertpeg_pegs(g: torch.Generator, box_xy: np.ndarray) -> list[Pose7]:
    """Per peg: (u * 0.4 - 0.2, u * 0.6 - 0.3) (float32) until farther than 6 radii from the box
    and 1.5 lengths from earlier pegs (<= 512 trials, else RuntimeError); then yaw
    (2u - 1) * 45 deg. Roots at z = 0."""
    poses: list[Pose7] = []
    placed: list[np.ndarray] = []
    for _ in range(INSERTPEG_PEGS):
        for _ in range(INSERTPEG_TRIALS):
            xy = np.array([rand(g) * 0.4 - 0.2, rand(g) * 0.6 - 0.3], dtype=np.float32)
            if np.linalg.norm(xy - box_xy) <= INSERTPEG_RADIUS * 6:
                continue
            if any(np.linalg.norm(xy - p) <= INSERTPEG_LENGTH * 1.5 for p in placed):
                continue
            break
        else:
            raise pl.PlacementError("InsertPeg: failed to sample peg positions")
        yaw = (rand(g) * 2 - 1) * np.radians(45)
        poses.append(yaw_pose(float(xy[0]), float(xy[1]), 0.0, yaw))
        placed.append(xy)
    return poses


def _insertpeg_episode(g: torch.Generator) -> tuple[Pose7, list[Pose7], int, int]:
    """One ``_initialize_episode``: box, pegs, ``randint(2)`` grasp end, ``randint(2)`` side."""
    box = _insertpeg_box(g)
    pegs = _insertpeg_pegs(g, np.array(box[:2], dtype=np.float32))
    obj_sample = randint(g, 0, 2)
    dir_sample = randint(g, 0, 2)
    return box, pegs, obj_sample, dir_sample


def _peg_end_xs(root: Pose7, length: float) -> tuple[float, float]:
    """World x of the head (at the root) and the tail (root + R (-length, 0, 0))."""
    qw, qz = root[3], root[6]  # a pure yaw rotation: cos(yaw) = qw^2 - qz^2
    return root[0], root[0] - length * (qw * qw - qz * qz)


def insertpeg_layout(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """InsertPeg: one persistent generator made in ``__init__``.

    ``_load_scene``: 2 unused draws; head colour ``rand(3)`` (tail = 1 - head); ``randint(3)``
    (overridden: the goal peg is ``peg_0``). ``_initialize_episode`` (x2, second used): box,
    the three pegs, grasp end (0 -> head, 1 -> tail), side (0 -> left, 1 -> right).
    """
    del recovery  # InsertPeg has no pick to fail
    g = generator(seed)
    rand(g), rand(g)  # length_tensor, radius_tensor: multiplied by 0
    head = [float(v) for v in torch.rand(3, generator=g).tolist()]
    randint(g, 0, 3)  # random_peg_idx, then overwritten with 0
    box, pegs, obj_sample, dir_sample = [_insertpeg_episode(g) for _ in range(2)][-1]
    grasp_end = "head" if obj_sample == 0 else "tail"
    head_x, tail_x = _peg_end_xs(pegs[0], INSERTPEG_LENGTH)
    near = "head" if abs(head_x - AGENT_X) <= abs(tail_x - AGENT_X) else "tail"
    params = {
        "goal_peg": "peg_0",
        "grasp_end": grasp_end,
        "grasp_end_distance": "near" if grasp_end == near else "far",
        "insert_side": "left" if dir_sample == 0 else "right",
        "head_color": head,
        "tail_color": [1.0 - c for c in head],
    }
    articulations = {f"peg_{i}": pose for i, pose in enumerate(pegs)}
    return layout(
        "InsertPeg",
        seed,
        difficulty,
        actors={"box_with_hole": box},
        articulations=articulations,
        robot_qpos=PANDA_QPOS,
        params=params,
    )


# ---------------------------------------------------------------------------------------------
# PatternLock (PatternLock.py, utils/adjacent.py, utils/subgoal_evaluate_func.py::direction)
# ---------------------------------------------------------------------------------------------

PATTERNLOCK_GRID = {"easy": 3, "medium": 4, "hard": 5}  # PatternLock.py: configs[...]["grid"]
PATTERNLOCK_LENGTH = {"easy": (2, 4), "medium": (3, 5), "hard": (4, 8)}  # nodes in the path
PATTERNLOCK_ATTEMPTS = 1000
GRID_CENTER = (-0.1, 0.0)
# adjacent.py::grid_adjacency: 4-neighbours then diagonals, in this order.
_NEIGHBOUR_STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
# subgoal_evaluate_func.py::direction (8 directions, first maximum wins).
_DIRECTIONS = (
    ("forward", (1.0, 0.0)),
    ("backward", (-1.0, 0.0)),
    ("left", (0.0, 1.0)),
    ("right", (0.0, -1.0)),
    ("forward-left", (1.0, 1.0)),
    ("forward-right", (1.0, -1.0)),
    ("backward-left", (-1.0, 1.0)),
    ("backward-right", (-1.0, -1.0)),
)


def _grid_neighbours(n: int) -> dict[int, list[int]]:
    """8-connected neighbours of a row-major n x n grid, upstream's order."""
    adj: dict[int, list[int]] = {}
    for r in range(n):
        for c in range(n):
            steps = ((r + dr, c + dc) for dr, dc in _NEIGHBOUR_STEPS)
            adj[r * n + c] = [nr * n + nc for nr, nc in steps if 0 <= nr < n and 0 <= nc < n]
    return adj


def _dfs_path(adj: dict[int, list[int]], start: int, goal: int, g: torch.Generator) -> list[int]:
    """adjacent.py::dfs_path: recursive DFS; at each newly visited node (goal excluded) its
    neighbour list is shuffled with ``randperm(len)``; the first path reaching the goal."""
    visited: set[int] = set()
    path: list[int] = []

    def visit(node: int) -> bool:
        visited.add(node)
        path.append(node)
        if node == goal:
            return True
        order = randperm(g, len(adj[node]))
        for nxt in (adj[node][i] for i in order):
            if nxt not in visited and visit(nxt):
                return True
        path.pop()
        return False

    visit(start)
    return path


def _direction(delta: np.ndarray) -> str:
    """The compass word whose unit vector has the largest dot product with ``delta``."""
    unit = delta / np.linalg.norm(delta)
    scores = [float(np.dot(unit, np.array(v) / np.linalg.norm(v))) for _, v in _DIRECTIONS]
    return _DIRECTIONS[int(np.argmax(scores))][0]


def _patternlock_targets(n: int) -> dict[str, Pose7]:
    """target_<i>, row-major: x = -0.1 + (row - c) * 0.1, y = (col - c) * 0.1, z 0.01, upright."""
    q = pl.target_quaternion()
    c = (n - 1) / 2
    poses = {}
    for i in range(n * n):
        row, col = divmod(i, n)
        x = GRID_CENTER[0] + (row - c) * 0.1
        y = GRID_CENTER[1] + (col - c) * 0.1
        poses[f"target_{i}"] = pl.pose7((x, y, 0.01), q)
    return poses


def patternlock_layout(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """PatternLock: fixed grid; a fresh generator in ``_load_scene`` draws the path.

    Up to 1000 attempts: ``randperm(n*n)[:2]`` start/end, DFS path; accept when its node count
    is in the difficulty's range (after 1000 the last path is kept).
    """
    del recovery  # PatternLock has no pick to fail
    n = PATTERNLOCK_GRID[difficulty]
    lo, hi = PATTERNLOCK_LENGTH[difficulty]
    targets = _patternlock_targets(n)
    adj = _grid_neighbours(n)
    g = generator(seed)
    for _ in range(PATTERNLOCK_ATTEMPTS):
        start, end = randperm(g, n * n)[:2]
        path = _dfs_path(adj, start, end, g)
        if lo <= len(path) <= hi:
            break
    xy = [np.array(targets[f"target_{i}"][:2], dtype=np.float64) for i in path]
    directions = [_direction(b - a) for a, b in itertools.pairwise(xy)]
    params = {
        "grid": n,
        "path": path,
        "path_targets": [f"target_{i}" for i in path],
        "directions": directions,
    }
    return layout(
        "PatternLock", seed, difficulty, actors=targets, robot_qpos=STICK_QPOS, params=params
    )


# ---------------------------------------------------------------------------------------------
# RouteStick (RouteStick.py, utils/route.py)
# ---------------------------------------------------------------------------------------------

ROUTESTICK_STEPS = {"easy": (2, 3), "medium": (4, 5), "hard": (4, 7)}  # configs[...]["length"]
ROUTESTICK_BACKTRACK = {"easy": False, "medium": False, "hard": True}
ROUTESTICK_SLOTS = 9  # one row of 9 slots, 0.07 apart along y, centred (-0.1, 0)
ROUTESTICK_TARGETS = (0, 2, 4, 6, 8)  # raised targets (z 0.01); the others sit at -0.01
ROUTESTICK_OBSTACLES = (1, 3, 5, 7)  # target_cube_<k>, 10 cm tall, centre z 0.05


def _routestick_slots(theta: float) -> list[tuple[float, float]]:
    """Slot centres rotated by ``theta`` about the world origin."""
    c, s = math.cos(theta), math.sin(theta)
    out = []
    for col in range(ROUTESTICK_SLOTS):
        x, y = GRID_CENTER[0], GRID_CENTER[1] + (col - (ROUTESTICK_SLOTS - 1) / 2) * 0.07
        out.append((x * c - y * s, x * s + y * c))
    return out


def _routestick_obstacle_q(theta: float) -> np.ndarray:
    """Obstacle rotation: euler XYZ (0, 0, theta) @ euler XYZ (0, 90 deg, 0), float32."""
    twist = pl.euler_xyz_matrix(torch.tensor([0.0, 0.0, theta], dtype=torch.float32))
    upright = pl.euler_xyz_matrix(
        torch.deg2rad(torch.tensor([0.0, 90.0, 0.0], dtype=torch.float32))
    )
    return pl.matrix_quaternion(twist @ upright).numpy()


def _walk(g: torch.Generator, steps: int, backtrack: bool) -> list[int]:
    """route.py::generate_dynamic_walk over the 5 targets: start ``randint(5)``; per step the
    neighbours (-1, +1 in range), minus the previous one unless backtracking (or no other way),
    one chosen by ``randint(len)``. Returns target slots (0, 2, ..., 8)."""
    idx = [randint(g, 0, len(ROUTESTICK_TARGETS))]
    for _ in range(steps):
        cur = idx[-1]
        nbrs = [i for i in (cur - 1, cur + 1) if 0 <= i < len(ROUTESTICK_TARGETS)]
        cands = nbrs
        if not backtrack and len(idx) > 1:
            cands = [i for i in nbrs if i != idx[-2]] or nbrs
        idx.append(cands[randint(g, 0, len(cands))])
    return [ROUTESTICK_TARGETS[i] for i in idx]


def routestick_layout(seed: int, difficulty: str, *, recovery: bool = False) -> UpstreamLayout:
    """RouteStick: fresh generator in ``_load_scene``: line angle ``u * 60 - 30`` deg; per
    obstacle a colour ``rand(3)``; steps ``randint(lo, hi + 1)``; the walk; per move
    ``rand < 0.5`` -> clockwise. Side of a move: "left" when the next target's y is larger."""
    del recovery  # RouteStick has no pick to fail
    g = generator(seed)
    theta = math.radians(rand(g) * 60 - 30)
    slots = _routestick_slots(theta)
    q_target = pl.target_quaternion()
    actors: dict[str, Pose7] = {}
    for i, (x, y) in enumerate(slots):
        actors[f"target_{i}"] = pl.pose7(
            (x, y, 0.01 if i in ROUTESTICK_TARGETS else -0.01), q_target
        )
    q_obstacle = _routestick_obstacle_q(theta)
    colors = {}
    for k in ROUTESTICK_OBSTACLES:
        colors[f"target_cube_{k}"] = [float(v) for v in torch.rand(3, generator=g).tolist()]
        x, y = actors[f"target_{k}"][:2]
        actors[f"target_cube_{k}"] = pl.pose7((x, y, 0.05), q_obstacle)
    lo, hi = ROUTESTICK_STEPS[difficulty]
    steps = randint(g, lo, hi + 1)
    route = _walk(g, steps, ROUTESTICK_BACKTRACK[difficulty])
    spins = ["clockwise" if rand(g) < 0.5 else "counterclockwise" for _ in route[1:]]
    ys = [actors[f"target_{i}"][1] for i in route]
    sides = ["left" if b > a else "right" for a, b in itertools.pairwise(ys)]
    params = {
        "theta": theta,
        "steps": steps,
        "route": route,
        "route_targets": [f"target_{i}" for i in route],
        "directions": spins,
        "sides": sides,
        "obstacle_colors": colors,
    }
    return layout(
        "RouteStick", seed, difficulty, actors=actors, robot_qpos=STICK_QPOS, params=params
    )


LAYOUTS: dict[str, LayoutFn] = {
    "MoveCube": movecube_layout,
    "InsertPeg": insertpeg_layout,
    "PatternLock": patternlock_layout,
    "RouteStick": routestick_layout,
}
