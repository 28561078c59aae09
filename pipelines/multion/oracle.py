"""MultiON oracle trajectories: the shortest-path follower's discrete actions through each
episode's goals, and optionally the egocentric observations along them (imitation-learning
demonstrations).

Inputs
    a ``multion`` dataset (``dataforge multion generate``; its manifest is recorded with its
    sha256, which covers every file of it), and optionally ``--data-dir`` with the challenge's
    goal meshes ``multion/objects/cylinder_<colour>.glb`` (recorded) to render; default: the
    cylinders built from the same facts.
Randomization and seeds
    none: the follower is deterministic. One work unit per scene of the input dataset.
Outputs
    one stored episode per MultiON episode (``<scene>/<episode_id>``), one row per observation
    (the start, then one after each action): ``position`` float64 (x, y, z), ``rotation``
    float64 ([x, y, z, w], the episode file's convention, :mod:`.agent`), ``goal_index`` int8
    (the goal being looked for; m once all are found), ``geodesic_to_goal`` float32 (m, to that
    goal; 0 once all are found); ``action`` int8 per action (FOUND 0, MOVE_FORWARD 1, TURN_LEFT
    2, TURN_RIGHT 3); with ``--render``: ``rgb`` uint8, ``depth`` uint16 mm (0: nothing;
    habitat's depth sensor gives min(d, 10 m) / 10), ``semantic`` uint16 (ids of
    ``semantic_classes.json``: 0 nothing, the house's classes, then ``cylinder_<colour>``);
    ``intrinsics`` (3 x 3). Metadata: scene, episode id, goals' categories, success, the steps
    at which FOUND was called, path length.
Invariants checked by validate
    see ``oracle_checks.INVARIANTS``: actions replay to the stored poses; every FOUND is within
    the success distance of its goal; every episode succeeds within the step limit.
Where it departs from the reference
    habitat's ShortestPathFollower turns toward the next point of the navmesh's shortest path;
    this follower, on the embedded world's grid, takes the free move (the current heading or a
    turn first) that brings it closest to the goal by the geodesic field of the grid with the
    goal cylinders in it (they block navigation unless the episodes were made with
    ``--no-block``). FOUND is called as soon as the geodesic to the goal is within the success
    distance, as the reference's oracle does with ``goal_radius`` = the success distance.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import DatasetError, UsageError
from dataforge.inputs import Inputs
from dataforge.nav.follower import Pose2D
from dataforge.nav.grid import NavGrid
from dataforge.nav.space import NavSpace
from dataforge.pipelines.multion.agent import (
    FOUND,
    MOVE_FORWARD,
    TURN_LEFT,
    TURN_RIGHT,
    rotation_from_yaw,
    start_pose,
    step,
)
from dataforge.pipelines.multion.config import OracleConfig
from dataforge.pipelines.multion.cylinders import NAMES, OBJECTS_DIR, cylinders
from dataforge.run import Job, WorkUnit
from dataforge.store import ArraySpec, Episode, Schema

if TYPE_CHECKING:
    from dataforge.render.renderer import Frame, Renderer, StoredFrames
    from dataforge.store.reader import Dataset
    from dataforge.world.assets import AssetCatalogue

PIPELINE = "multion-oracle"
EPISODES = "episodes"
DATA_DIR = "data-dir"
SEMANTICS_FILE = "semantic_classes.json"
_renderers: dict[tuple[int, int, float], Renderer] = {}  # this worker's renderer, across scenes


def vfov(cfg: OracleConfig) -> float:
    """The vertical field of view (degrees) of a ``hfov`` camera at ``resolution``."""
    w, h = cfg.resolution
    return math.degrees(2 * math.atan(math.tan(math.radians(cfg.hfov) / 2) * h / w))


def schema(cfg: OracleConfig) -> Schema:
    w, h = cfg.resolution
    arrays = {
        "action": ArraySpec("int8", (None,), description="FOUND 0, FORWARD 1, LEFT 2, RIGHT 3"),
        "position": ArraySpec(
            "float64", (None, 3), units="m", description="agent position per observation"
        ),
        "rotation": ArraySpec(
            "float64", (None, 4), description="agent heading per observation: x, y, z, w"
        ),
        "goal_index": ArraySpec("int8", (None,), description="current goal (m: all found)"),
        "geodesic_to_goal": ArraySpec(
            "float32", (None,), units="m", description="geodesic to the current goal"
        ),
    }
    img: dict[str, Any] = {"chunk_rows": 1}
    if "rgb" in cfg.render:
        arrays["rgb"] = ArraySpec("uint8", (None, h, w, 3), kind="rgb", **img)
    if "depth" in cfg.render:
        arrays["depth"] = ArraySpec(
            "uint16", (None, h, w), kind="depth", units="mm", description="0: nothing", **img
        )
    if "semantic" in cfg.render:
        arrays["semantic"] = ArraySpec(
            "uint16", (None, h, w), kind="mask", description="semantic_classes.json ids", **img
        )
    if cfg.render:
        arrays["intrinsics"] = ArraySpec("float32", (3, 3), description="pinhole K in pixels")
    return Schema(arrays)


# -- the follower ------------------------------------------------------------------------------


@dataclass(frozen=True)
class OracleRun:
    actions: list[int]
    poses: list[Pose2D]
    goal_index: list[int]  # per pose
    to_goal: list[float]  # per pose
    found_steps: list[int]  # action index of each successful FOUND
    success: bool
    ended: str  # success | max_steps | stuck

    @property
    def path_length(self) -> float:
        return float(
            sum(math.hypot(b.x - a.x, b.z - a.z) for a, b in itertools.pairwise(self.poses))
        )


def headings(turn: float) -> list[int]:
    """Turn counts to try from the current heading: 0, -1, +1, -2, +2, ... (left first)."""
    n = round(360.0 / turn)
    out = [0]
    for k in range(1, n // 2 + 1):
        out += [-k, k] if k != n - k else [k]
    return out


def follow(
    space: NavSpace,
    move_grid: NavGrid,
    start: Pose2D,
    goals: Sequence[Sequence[float]] | Sequence[np.ndarray],
    *,
    success_distance: float,
    forward: float,
    turn: float,
    max_steps: int,
) -> OracleRun:
    """The oracle's actions from ``start`` through ``goals`` in order (see the module
    docstring). ``space`` measures the geodesic FOUND is judged by; ``move_grid`` is where the
    agent can move (the cylinders blocked in it). Greedy steps on the grid's geodesic field,
    and :func:`search_leg` where no free step gets closer."""
    pose = start
    actions: list[int] = []
    poses, gidx = [pose], [0]
    found: list[int] = []
    tries = headings(turn)
    ended = "success"
    goals = [np.asarray(g, dtype=np.float64) for g in goals]
    for k, goal in enumerate(goals):
        target = approach_point(move_grid, goal, pose)
        while ended == "success" and space.distance(pose.xyz, goal) > success_distance:
            action = _next_action(move_grid, pose, target, tries, forward, turn)
            plan = [action] if action is not None else None
            if plan is None:
                plan = search_leg(
                    space,
                    move_grid,
                    pose,
                    goal,
                    target,
                    success_distance=success_distance,
                    forward=forward,
                    turn=turn,
                )
            if not plan:
                ended = "stuck"
            for a in plan or ():
                if len(actions) >= max_steps:
                    ended = "max_steps"
                    break
                pose = step(pose, a, move_grid, forward, turn)
                actions.append(a)
                poses.append(pose)
                gidx.append(k)
        if ended == "success" and len(actions) >= max_steps:
            ended = "max_steps"
        if ended != "success":
            break
        actions.append(FOUND)
        found.append(len(actions) - 1)
        poses.append(pose)
        gidx.append(k + 1)
    to_goal = [
        space.distance(p.xyz, goals[g]) if g < len(goals) else 0.0
        for p, g in zip(poses, gidx, strict=True)
    ]
    success = ended == "success" and len(found) == len(goals)
    return OracleRun(actions, poses, gidx, to_goal, found, success, ended)


def approach_point(grid: NavGrid, goal: np.ndarray, pose: Pose2D) -> np.ndarray:
    """Where the follower heads for ``goal``: the goal itself when the agent may stand there,
    else the centre of the free cell nearest to it that the agent can reach (a cylinder blocks
    its own position; the free cell nearest to it may lie in a pocket cut off by it)."""
    labels = grid.components()
    here = grid.cell_of(pose.xyz)
    label = labels[here] if grid.inside(here) else 0
    gc = grid.cell_of(goal)
    if grid.inside(gc) and label and labels[gc] == label:
        return goal
    cells = np.argwhere(labels == label)
    if not len(cells):
        return goal
    centres = np.asarray(grid.origin)[::-1] + (cells + 0.5) * grid.cell  # (z, x)
    d = np.hypot(centres[:, 0] - goal[2], centres[:, 1] - goal[0])
    i, j = cells[int(np.argmin(d))]
    return grid.center((int(i), int(j)), float(goal[1]))


def _next_action(
    grid: NavGrid, pose: Pose2D, goal: np.ndarray, tries: list[int], forward: float, turn: float
) -> int | None:
    """MOVE_FORWARD when the current heading's free step is the best one, else the first
    turn toward the best heading; None when no free step gets closer to the goal."""
    ends = [pose.turned(k * turn).moved(forward).xyz for k in tries]
    values = grid.distances([goal], [pose.xyz, *ends])[0]
    here, dist = values[0], values[1:]
    # closest first; among ties the fewest turns, left first (the order of ``tries``)
    for i in sorted(range(len(tries)), key=lambda i: (dist[i], i)):
        if not dist[i] < here - 1e-9:
            return None
        if grid.segment_clear(pose.xyz, ends[i]):
            k = tries[i]
            return MOVE_FORWARD if k == 0 else (TURN_LEFT if k < 0 else TURN_RIGHT)
    return None


def search_leg(
    space: NavSpace,
    grid: NavGrid,
    pose: Pose2D,
    goal: np.ndarray,
    target: np.ndarray,
    *,
    success_distance: float,
    forward: float,
    turn: float,
    max_nodes: int = 200_000,
) -> list[int] | None:
    """The fewest actions that bring ``pose`` within ``success_distance`` of ``goal`` (A* over
    poses, one state per grid cell and heading; the heuristic: the grid's geodesic beyond the
    success distance in forward steps, toward ``target``, the goal's :func:`approach_point`), or
    None. Used where the greedy step finds no free move
    that gets closer (a doorway at an awkward angle)."""
    import heapq

    field = grid.distance_field(target)

    def h(p: Pose2D) -> float:
        c = grid.cell_of(p.xyz)
        d = float(field[c]) if grid.inside(c) else math.inf
        return max(0.0, d - success_distance) / forward

    nodes: list[tuple[Pose2D, int, int]] = [(pose, -1, -1)]  # pose, parent, action
    heap = [(h(pose), 0, 0)]
    best: dict[tuple[int, int, int], int] = {}
    while heap and len(nodes) < max_nodes:
        _, g, n = heapq.heappop(heap)
        p = nodes[n][0]
        if space.distance(p.xyz, goal) <= success_distance:
            out = []
            while nodes[n][1] >= 0:
                out.append(nodes[n][2])
                n = nodes[n][1]
            return out[::-1]
        for action in (MOVE_FORWARD, TURN_LEFT, TURN_RIGHT):
            q = step(p, action, grid, forward, turn)
            if action == MOVE_FORWARD and q is p:
                continue  # blocked
            c = grid.cell_of(q.xyz)
            key = (c[0], c[1], round(q.yaw / turn) % round(360 / turn))
            if best.get(key, math.inf) <= g + 1:
                continue
            best[key] = g + 1
            nodes.append((q, n, action))
            hq = h(q)
            if math.isfinite(hq):
                heapq.heappush(heap, (g + 1 + hq, g + 1, len(nodes) - 1))
    return None


# -- rendering ---------------------------------------------------------------------------------


class SceneRenderer:
    """A house's meshes with each episode's goal cylinders, seen from the agent's camera."""

    def __init__(
        self, cfg: OracleConfig, house: Any, catalogue: AssetCatalogue, objects: Path | None
    ):
        from dataforge.render.mesh import Scene
        from dataforge.render.renderer import Renderer
        from dataforge.world.scene import house_scene

        self.cfg = cfg
        self.base = house_scene(house, catalogue)
        self.semantic = {name: self.base.semantics.add(name) for name in NAMES}
        self.meshes = cylinders(objects)
        self.first_id = max(self.base.instances, default=0) + 1
        # the house's corner buffers, made once: each episode's scene starts from a copy
        self.corners: dict[int, Any] = {}
        Scene(self.base.scene.meshes, corners=self.corners).buffers()
        w, h = cfg.resolution
        key = (w, h, vfov(cfg))
        if key not in _renderers:
            _renderers[key] = Renderer(w, h, vfov(cfg), near=0.05, far=100.0)
        self.renderer = _renderers[key]

    @property
    def class_names(self) -> list[str]:
        return list(self.base.semantics.names)

    def set_episode(self, goals: np.ndarray, categories: Sequence[int]) -> None:
        from dataforge.render.mesh import Mesh, Scene

        meshes = list(self.base.scene.meshes)
        for k, (g, c) in enumerate(zip(goals, categories, strict=True)):
            cyl = self.meshes[NAMES[int(c)]]
            meshes.append(
                Mesh(
                    cyl.vertices + np.asarray(g, dtype=np.float64),
                    cyl.faces,
                    color=cyl.color,
                    instance_id=self.first_id + k,
                    semantic_id=self.semantic[cyl.category],
                )
            )
        self.renderer.set_scene(Scene(meshes, corners=dict(self.corners)))

    def render(self, pose: Pose2D) -> Frame:
        return self.renderer.render(self.camera_pose(pose))

    def render_stored(self, poses: Sequence[Pose2D]) -> StoredFrames:
        """The frames of ``poses`` as datasets store them (all drawn before any is read)."""
        from dataforge.render.renderer import StoredFrames

        out = StoredFrames.empty(len(poses), self.renderer.width, self.renderer.height)
        self.renderer.render_stored([self.camera_pose(p) for p in poses], out)
        return out

    def camera_pose(self, pose: Pose2D) -> np.ndarray:
        from dataforge.render.camera import thor_camera_pose

        eye = np.array([pose.x, pose.y + self.cfg.camera_height, pose.z])
        return thor_camera_pose(eye, pose.yaw, 0.0)


# -- one unit ----------------------------------------------------------------------------------


def produce(
    cfg: OracleConfig,
    episodes_root: str,
    episodes_config: dict[str, Any],
    objects: str | None,
    unit: WorkUnit,
    rng: np.random.Generator,
) -> Iterator[Episode]:
    from dataforge.pipelines.multion.scenes import stored_space
    from dataforge.store import open_dataset

    with open_dataset(episodes_root) as ds:
        stored = ds[unit.params["scene"]]
        meta = dict(stored.metadata)
        arrays = {k: stored[k].read() for k in stored}
    n = len(arrays["episode_id"])
    if cfg.limit is not None:
        n = min(n, cfg.limit)
    house = arrays["house_json"].tobytes()
    space = stored_space(meta, house, episodes_config)
    if space.house is None:
        raise UsageError(
            "the oracle runs on the embedded world; for Habitat scenes use habitat-lab's "
            "ShortestPathFollower"
        )
    renderer = None
    if cfg.render:
        from dataforge.world.assets import load_catalogue

        renderer = SceneRenderer(
            cfg, space.house, load_catalogue(), Path(objects) if objects else None
        )
    for i in range(n):
        goals = arrays["goal_position"][i]
        move_grid = space.move_grid(goals, episodes_config)
        run = follow(
            space.nav,
            move_grid,
            start_pose(arrays["start_position"][i], arrays["start_rotation"][i]),
            goals,
            success_distance=cfg.success_distance,
            forward=cfg.forward_step,
            turn=cfg.turn_angle,
            max_steps=cfg.max_steps,
        )
        out: dict[str, np.ndarray] = {
            "action": np.array(run.actions, dtype=np.int8),
            "position": np.array([p.xyz for p in run.poses], dtype=np.float64).reshape(-1, 3),
            "rotation": np.array([rotation_from_yaw(p.yaw) for p in run.poses]).reshape(-1, 4),
            "goal_index": np.array(run.goal_index, dtype=np.int8),
            "geodesic_to_goal": np.array(run.to_goal, dtype=np.float32),
        }
        if renderer is not None:
            renderer.set_episode(goals, arrays["goal_category"][i])
            frames = renderer.render_stored(run.poses)
            if "rgb" in cfg.render:
                out["rgb"] = frames.rgb
            if "depth" in cfg.render:
                out["depth"] = frames.depth
            if "semantic" in cfg.render:
                out["semantic"] = frames.semantic
            out["intrinsics"] = renderer.renderer.K.astype(np.float32)
            del frames
        eid = str(int(arrays["episode_id"][i]))
        yield Episode(
            f"{unit.id}/{eid}",
            out,
            {
                "scene": unit.id,
                "episode_id": eid,
                "goals": [NAMES[int(c)] for c in arrays["goal_category"][i]],
                "success": run.success,
                "ended": run.ended,
                "found_steps": run.found_steps,
                "path_length_m": round(run.path_length, 6),
                "geodesic_distance_m": float(arrays["geodesic_distance"][i]),
            },
        )


# -- the job -----------------------------------------------------------------------------------


def extras(ds: Dataset) -> dict[str, bytes]:
    """The files beside the shards (registered): ``semantic_classes.json`` when the dataset
    renders semantic masks."""
    return semantic_classes() if "semantic" in ds.manifest.config["render"] else {}


def semantic_classes() -> dict[str, bytes]:
    """``semantic_classes.json``: the semantic ids of every rendered frame (the same for every
    house: the catalogue's classes, then the 8 cylinders)."""
    from dataforge.world.assets import load_catalogue
    from dataforge.world.scene import SemanticTable

    table = SemanticTable.for_catalogue(load_catalogue())
    for name in NAMES:
        table.add(name)
    return {SEMANTICS_FILE: (json.dumps(table.to_dict(), indent=1) + "\n").encode()}


def build_job(cfg: OracleConfig, *, seed: int, fmt: str, inputs: Inputs | None = None) -> Job:
    inputs = inputs if inputs is not None else Inputs()
    if EPISODES not in inputs:
        raise UsageError("the oracle needs the MultiON dataset to follow (DIR)")
    manifest = inputs.dataset(EPISODES, "multion", "dataforge multion generate")
    if manifest.config.get("scene_kind") == "habitat":
        raise UsageError(
            "the oracle runs on the embedded world; for Habitat scenes use habitat-lab's "
            "ShortestPathFollower"
        )
    objects = None
    if DATA_DIR in inputs and cfg.render:
        for name in NAMES:
            inputs.file(DATA_DIR, f"{OBJECTS_DIR}/{name}.glb", "MultiON goal mesh")
        objects = str(inputs.root(DATA_DIR) / OBJECTS_DIR)
    root = str(inputs.root(EPISODES))
    units = [WorkUnit(eid, {"scene": eid}) for eid in manifest.episodes]
    n = len(units)
    if not units:
        raise DatasetError(f"{root} holds no scenes")
    modalities = ",".join(cfg.render) or "no observations"
    return Job(
        pipeline=PIPELINE,
        name=f"{PIPELINE}-{manifest.config.get('m')}-on-{manifest.config.get('split')}",
        config=cfg.to_dict(),
        seed=seed,
        format=fmt,
        schema=schema(cfg),
        units=tuple(units),
        produce=functools.partial(produce, cfg, root, dict(manifest.config), objects),
        extra_files=extras,
        description=f"MultiON oracle trajectories ({modalities}) for the {n}-scene "
        f"{manifest.config.get('m')}-ON {manifest.config.get('split')} episodes of "
        f"dataset {manifest.config_hash[:12]}.",
        url="https://github.com/saimwani/multiON",
        citation="Wani et al., MultiON, NeurIPS 2020.",
        inputs=inputs,
    )
