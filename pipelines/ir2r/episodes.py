"""Input episodes: R2R paths (discrete) and VLN-CE episodes (continuous) as :class:`NavPath`.

A *path* is one target route of a scene; it carries one *episode* per instruction. In R2R an
episode is a (path, instruction) pair named ``"<path_id>_<k>"`` (the ``instr_id`` of R2R and
IVLN); in VLN-CE each episode has its own ``episode_id`` and shares the path's ``trajectory_id``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataforge.errors import MalformedInputError
from dataforge.inputs import read_json

R2R_WHAT = "Room-to-Room episodes"
VLNCE_WHAT = "VLN-CE episodes"


@dataclass(frozen=True)
class NavPath:
    """One path of a scene: where it starts and ends, and the ids of its episodes.

    ``start``/``end`` are oracle points (viewpoint ids, or xyz tuples in continuous scenes);
    ``route`` is the reference route (viewpoint ids or xyz tuples) used by the scorer.
    """

    path_id: int
    scene: str
    start: Any
    end: Any
    episodes: tuple[Any, ...]
    route: tuple[Any, ...] = ()
    scene_file: str = ""  # continuous: the habitat scene id (``mp3d/<scan>/<scan>.glb``)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path_id": self.path_id,
            "scene": self.scene,
            "start": self.start,
            "end": self.end,
            "episodes": list(self.episodes),
            "route": list(self.route),
            "scene_file": self.scene_file,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NavPath:
        def point(p: Any) -> Any:
            return tuple(p) if isinstance(p, list) else p

        return cls(
            path_id=int(d["path_id"]),
            scene=d["scene"],
            start=point(d["start"]),
            end=point(d["end"]),
            episodes=tuple(d["episodes"]),
            route=tuple(point(p) for p in d.get("route", ())),
            scene_file=d.get("scene_file", ""),
        )


def instr_id(path_id: int, k: int) -> str:
    return f"{path_id}_{k}"


def r2r_file(data_dir: Path, split: str) -> Path:
    return Path(data_dir) / "r2r" / f"R2R_{split}.json"


def load_r2r(path: Path) -> list[NavPath]:
    """R2R paths in file order; test-split records (only a start viewpoint) are accepted."""
    data = read_json(path, R2R_WHAT)
    if not isinstance(data, list):
        raise MalformedInputError(f"{path}: {R2R_WHAT} must be a JSON list of paths")
    out: list[NavPath] = []
    seen: set[int] = set()
    for k, rec in enumerate(data):
        problem = _bad_r2r(rec)
        if problem is None and rec["path_id"] in seen:
            problem = f"path_id {rec['path_id']} appears twice"
        if problem:
            raise MalformedInputError(f"{path}: record {k}: {problem}")
        seen.add(rec["path_id"])
        route = tuple(rec["path"])
        ids = tuple(instr_id(rec["path_id"], i) for i in range(len(rec["instructions"])))
        out.append(
            NavPath(
                path_id=rec["path_id"],
                scene=rec["scan"],
                start=route[0],
                end=route[-1],
                episodes=ids,
                route=route,
            )
        )
    return out


def _bad_r2r(rec: object) -> str | None:
    if not isinstance(rec, dict):
        return "is not an object"
    for key in ("path_id", "scan", "path", "instructions"):
        if key not in rec:
            return f"missing {key!r}"
    if not isinstance(rec["path_id"], int) or isinstance(rec["path_id"], bool):
        return f"path_id {rec['path_id']!r} is not an integer"
    if not isinstance(rec["scan"], str) or not rec["scan"]:
        return "scan is not a non-empty string"
    if not (isinstance(rec["path"], list) and rec["path"]):
        return "path is not a non-empty list of viewpoint ids"
    if not all(isinstance(v, str) for v in rec["path"]):
        return "path holds a viewpoint id that is not a string"
    if not (isinstance(rec["instructions"], list) and rec["instructions"]):
        return "instructions is not a non-empty list"
    return None


def scene_of(scene_id: str) -> str:
    """``mp3d/<scan>/<scan>.glb`` -> ``<scan>`` (habitat scene ids name a file)."""
    return Path(scene_id).stem


def load_vlnce(path: Path) -> list[NavPath]:
    """VLN-CE episodes grouped into paths by ``trajectory_id`` (first-seen order).

    Start is the episode's ``start_position``, end its goal position (else the last
    ``reference_path`` point; else the start, as in test files, which only tip-to-tip uses).
    """
    data = read_json(path, VLNCE_WHAT)
    episodes = data.get("episodes") if isinstance(data, dict) else None
    if not isinstance(episodes, list):
        raise MalformedInputError(f"{path}: {VLNCE_WHAT} must be an object with an 'episodes' list")
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    seen: set[Any] = set()
    for k, ep in enumerate(episodes):
        problem = _bad_vlnce(ep)
        if problem is None and ep["episode_id"] in seen:
            problem = f"episode_id {ep['episode_id']!r} appears twice"
        if problem:
            raise MalformedInputError(f"{path}: episode {k}: {problem}")
        seen.add(ep["episode_id"])
        groups[int(ep["trajectory_id"])].append(ep)
    out = []
    for tid, eps in groups.items():
        first = eps[0]
        scene = scene_of(first["scene_id"])
        start = tuple(float(v) for v in first["start_position"])
        route = tuple(tuple(float(v) for v in p) for p in first.get("reference_path") or [])
        goals = first.get("goals") or []
        end = tuple(float(v) for v in goals[0]["position"]) if goals else (route or (start,))[-1]
        for ep in eps[1:]:
            if scene_of(ep["scene_id"]) != scene:
                raise MalformedInputError(
                    f"{path}: trajectory {tid} spans scenes {scene} and {scene_of(ep['scene_id'])}"
                )
        out.append(
            NavPath(
                path_id=tid,
                scene=scene,
                start=start,
                end=end,
                episodes=tuple(ep["episode_id"] for ep in eps),
                route=route or (start, end),
                scene_file=first["scene_id"],
            )
        )
    return out


def _bad_vlnce(ep: object) -> str | None:
    if not isinstance(ep, dict):
        return "is not an object"
    for key in ("episode_id", "trajectory_id", "scene_id", "start_position"):
        if key not in ep:
            return f"missing {key!r}"
    if not is_xyz(ep["start_position"]):
        return "start_position is not three numbers"
    goals = ep.get("goals")
    if goals and not (isinstance(goals[0], dict) and is_xyz(goals[0].get("position"))):
        return "goals[0].position is not three numbers"
    ref = ep.get("reference_path")
    if ref is not None and not (isinstance(ref, list) and all(is_xyz(p) for p in ref)):
        return "reference_path is not a list of xyz points"
    return None


def is_xyz(p: object) -> bool:
    return (
        isinstance(p, list | tuple)
        and len(p) == 3
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in p)
    )


def by_scene(paths: list[NavPath]) -> dict[str, list[NavPath]]:
    """Paths grouped by scene, scenes sorted, paths sorted by path id within a scene."""
    groups: dict[str, list[NavPath]] = defaultdict(list)
    for p in paths:
        groups[p.scene].append(p)
    return {s: sorted(groups[s], key=lambda p: p.path_id) for s in sorted(groups)}
