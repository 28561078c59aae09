"""Scoring MultiON trajectories: the paper's SUCCESS, PROGRESS, SPL and PPL (§5.2).

An episode, as the paper runs it. The agent starts at ``start_position`` facing
``start_rotation`` and takes actions FOUND 0, MOVE_FORWARD 1, TURN_LEFT 2, TURN_RIGHT 3 (ids or
names, :func:`.agent.action_id`), moving as :func:`.agent.step` says on the scene's grid, with
the goal cylinders blocking it when the dataset was generated with ``--block``. FOUND is judged
by the geodesic distance from the agent's position to the current goal (on the unblocked grid,
as generation measured it): within ``success_distance`` (``<=``) the goal is found and the next
one becomes current; otherwise the episode ends there, a failure. After the m-th goal is found
the episode ends, a success. At most ``max_steps`` actions are taken (the rest are ignored);
running out of actions before the m-th goal is found is a failure.

Metrics of one episode, with l goals found, p the agent's path length (the sum of the 3-D
Euclidean distances between consecutive positions, over the whole episode up to its end), d the
stored ``geodesic_distance`` (start -> g1 -> ... -> gm) and dbar the sum of the first l stored
``leg_geodesic`` values:

    PROGRESS = l / m        SUCCESS = 1 if l == m else 0
    SPL = SUCCESS * d / max(p, d)        PPL = PROGRESS * dbar / max(p, dbar)  (0 when l = 0)

A ratio whose denominator is 0 (a zero-length leg and no motion) counts as 1. Means are taken
per m (a dataset has one m) and over every episode scored. An episode with no trajectory scores
0 everywhere with ``allow_missing``; with ``subset`` only the episodes given are scored (the
paper evaluates on 1,000 episodes; an oracle run with ``--limit`` covers a few per scene);
otherwise a missing trajectory is an error.

Where this follows the paper and not the code behind its numbers (the measures of
saimwani/multiON's habitat-lab fork, ``habitat/tasks/nav/nav.py``: ``SubSuccess``,
``Success``, ``PercentageSuccess``, ``PSPL``; the challenge repository saimwani/multion-challenge
holds only its evaluation entry point and data):

- PPL uses the total path length p, as the paper (§5.2) and the challenge's README define it.
  The code's ``PSPL`` divides by the path length at the last successful FOUND instead (the walk
  after it, up to a wrong FOUND or the step limit, does not count). Both are reported, each
  named after its source: the table's "PPL, paper" and "PSPL, multiON code" columns, and
  ``ppl`` / ``ppl_challenge`` per episode and in the means of ``--json``.
- FOUND counts when the distance is ``<= success_distance`` for every metric. The code's
  ``SubSuccess`` (and so SUCCESS) uses ``<=`` but its ``PercentageSuccess`` (PROGRESS) uses
  ``<``.
- d and the legs are the distances stored with the episodes, not measured again when the
  episode starts; the challenge's simulator turns an unreachable goal's ``inf`` into 10,000 m,
  here an unreachable goal is simply never found.

Trajectories come from a JSON list or JSONL file of records ``{"scene_id": "...",
"episode_id": "...", "actions": [...], "positions": [[x, y, z], ...]}``, or from a
``multion-oracle`` dataset (arrays ``action`` and ``position``, metadata ``scene`` and
``episode_id``), whose positions are used. ``positions`` is optional: the start and one position
per action, used instead of simulating the motion; its first must be the episode's start (within
``START_TOL_M`` in x/z), else the trajectory cannot be that episode's and is refused.

An episode is named by its scene and id. Episode ids are 0, 1, ... in each scene, the numbers
habitat-lab's ``MultiNav-v1`` loader gives a content file's episodes
(``habitat/datasets/multi_nav/multi_nav_dataset.py``: ``episode.episode_id = str(i)``), so the
``episode.scene_id`` and ``episode.episode_id`` an agent reads from habitat key its trajectory.
A record's ``scene_id`` (or ``scene``) matches a scene by its name, its stored ``scene_id`` or a
path ending in ``/<scene_id>`` (habitat joins ``SCENES_DIR`` in front); it may be left out where
the id is in one scene only.

The metric core, :func:`score_episode`, is a pure function of the episode's goals and legs, the
actions and two callables (motion and geodesic distance); :func:`score_dataset` feeds it from a
stored dataset and :func:`score_datasets` pairs several datasets with their trajectories.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dataforge.errors import DatasetError, InputNotFoundError, MalformedInputError, UsageError
from dataforge.pipelines.multion.agent import FOUND, action_id
from dataforge.pipelines.multion.config import OracleConfig
from dataforge.pipelines.multion.scenes import SceneSpace

if TYPE_CHECKING:
    from typing import TypeVar

    from rich.table import Table

    from dataforge.nav.follower import Pose2D
    from dataforge.store.reader import Dataset

    State = TypeVar("State")  # the agent's state in score_episode: a Pose2D, or an index

EPISODES_PIPELINE = "multion"
ORACLE_PIPELINE = "multion-oracle"
METRICS = ("success", "progress", "spl", "ppl")
SHOWN_IDS = 5  # episode ids an error message names
START_TOL_M = 0.05  # x/z: a trajectory's first position is its episode's start

# how an episode ended
END_SUCCESS = "success"  # the m-th goal was found
END_WRONG_FOUND = "wrong_found"  # FOUND called out of reach of the current goal
END_MAX_STEPS = "max_steps"  # max_steps actions taken
END_ACTIONS_ENDED = "actions_ended"  # the trajectory ended before max_steps
END_MISSING = "missing"  # no trajectory (--allow-missing)

_DEFAULTS = OracleConfig()


@dataclass(frozen=True)
class ScoreSettings:
    """How episodes are run: FOUND's reach, the step limit and the agent's motion."""

    success_distance: float = _DEFAULTS.success_distance
    max_steps: int = _DEFAULTS.max_steps
    forward_step: float = _DEFAULTS.forward_step
    turn_angle: float = _DEFAULTS.turn_angle

    def __post_init__(self) -> None:
        for name in ("success_distance", "forward_step", "turn_angle"):
            v = float(getattr(self, name))
            if not (math.isfinite(v) and v > 0):
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"{flag} must be a positive number, got {v}")
        if int(self.max_steps) < 1:
            raise UsageError(f"--max-steps must be at least 1, got {self.max_steps}")

    def to_dict(self) -> dict[str, float | int]:
        return {
            "success_distance": float(self.success_distance),
            "max_steps": int(self.max_steps),
            "forward_step": float(self.forward_step),
            "turn_angle": float(self.turn_angle),
        }


# -- one episode (pure) ------------------------------------------------------------------------


@dataclass(frozen=True)
class EpisodeScore:
    """One episode's outcome and metrics (fractions in [0, 1], lengths in metres)."""

    episode_id: str
    m: int
    found: int  # goals found, l
    steps: int  # actions taken
    end: str  # success | wrong_found | max_steps | actions_ended | missing
    path_length: float  # p: the whole episode
    path_at_found: float  # the path length at the last successful FOUND (0: none)
    geodesic_distance: float  # d
    found_geodesic: float  # dbar: the first l legs
    success: float
    progress: float
    spl: float
    ppl: float
    ppl_challenge: float  # the challenge's PSPL: PPL with the path at the last FOUND
    scene: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "scene": self.scene,
            "m": self.m,
            "found": self.found,
            "steps": self.steps,
            "end": self.end,
            "path_length": _num(self.path_length),
            "path_at_found": _num(self.path_at_found),
            "geodesic_distance": _num(self.geodesic_distance),
            "found_geodesic": _num(self.found_geodesic),
            **{k: _num(getattr(self, k)) for k in (*METRICS, "ppl_challenge")},
        }


def _num(v: float) -> float | None:
    """A JSON-safe number (``None`` for what is not finite)."""
    v = float(v)
    return v if math.isfinite(v) else None


def _ratio(d: float, p: float) -> float:
    """``d / max(p, d)``; 1 when both are 0."""
    den = max(p, d)
    return d / den if den > 0 else 1.0


def _xyz(state: object) -> np.ndarray:
    """A state's position: its ``xyz`` (a :class:`Pose2D`) or the state itself."""
    return np.asarray(getattr(state, "xyz", state), dtype=np.float64)


def score_episode(
    actions: Sequence[int],
    goals: Sequence[Sequence[float]],
    legs: Sequence[float],
    *,
    start: State,
    step: Callable[[State, int], State],
    geodesic: Callable[[np.ndarray, np.ndarray], float],
    geodesic_distance: float | None = None,
    position: Callable[[State], np.ndarray | Sequence[float]] = _xyz,
    success_distance: float = _DEFAULTS.success_distance,
    max_steps: int = _DEFAULTS.max_steps,
    episode_id: str = "",
) -> EpisodeScore:
    """Run one episode's ``actions`` (ids) and score it (see the module docstring).

    ``start`` is the agent's state, ``step(state, action)`` the state after an action (called for
    every action, FOUND included), ``position(state)`` its xyz and ``geodesic(xyz, goal)`` the
    geodesic distance FOUND is judged by. ``goals`` are the m goal positions in order, ``legs``
    their stored geodesic legs (start -> g1, g1 -> g2, ...), ``geodesic_distance`` the stored
    total (default: the legs' sum). FOUND is judged at the position after the action.
    """
    goal_xyz = np.asarray(goals, dtype=np.float64).reshape(-1, 3)
    leg = [float(v) for v in legs]
    m = len(goal_xyz)
    if m < 1 or len(leg) != m:
        raise UsageError(f"episode {episode_id}: {m} goals and {len(leg)} legs")
    d = float(sum(leg)) if geodesic_distance is None else float(geodesic_distance)
    state = start
    pos = _xyz(position(state))
    found = 0
    p = 0.0
    p_found = 0.0
    taken = 0
    end = ""
    for a in actions[: int(max_steps)]:
        a = int(a)
        state = step(state, a)
        nxt = _xyz(position(state))
        p += float(np.linalg.norm(nxt - pos))
        pos = nxt
        taken += 1
        if a == FOUND:
            if float(geodesic(pos, goal_xyz[found])) <= success_distance:
                found += 1
                p_found = p
                if found == m:
                    end = END_SUCCESS
                    break
            else:
                end = END_WRONG_FOUND
                break
    if not end:
        end = END_MAX_STEPS if taken >= int(max_steps) else END_ACTIONS_ENDED
    success = 1.0 if found == m else 0.0
    progress = found / m
    dbar = float(sum(leg[:found]))
    return EpisodeScore(
        episode_id=str(episode_id),
        m=m,
        found=found,
        steps=taken,
        end=end,
        path_length=p,
        path_at_found=p_found,
        geodesic_distance=d,
        found_geodesic=dbar,
        success=success,
        progress=progress,
        spl=success * _ratio(d, p),
        ppl=progress * _ratio(dbar, p) if found else 0.0,
        ppl_challenge=progress * _ratio(dbar, p_found) if found else 0.0,
    )


def missing_episode(
    episode_id: str, legs: Sequence[float], geodesic_distance: float, scene: str = ""
) -> EpisodeScore:
    """An episode with no trajectory: a failure, every metric 0."""
    return EpisodeScore(
        episode_id=str(episode_id),
        m=len(legs),
        found=0,
        steps=0,
        end=END_MISSING,
        path_length=0.0,
        path_at_found=0.0,
        geodesic_distance=float(geodesic_distance),
        found_geodesic=0.0,
        success=0.0,
        progress=0.0,
        spl=0.0,
        ppl=0.0,
        ppl_challenge=0.0,
        scene=scene,
    )


def mean_metrics(scores: Iterable[EpisodeScore]) -> dict[str, float | int]:
    """``episodes`` and the mean of every metric (and ``ppl_challenge``) over ``scores``."""
    rows = list(scores)
    out: dict[str, float | int] = {"episodes": len(rows)}
    for k in (*METRICS, "ppl_challenge"):
        out[k] = float(np.mean([getattr(s, k) for s in rows])) if rows else 0.0
    return out


# -- trajectories ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trajectory:
    """An agent's actions (ids) and, when given, its positions (start + one per action)."""

    actions: tuple[int, ...]
    positions: np.ndarray | None = None


# a trajectory's key: (the scene as its record names it, "" when it does not; the episode id)
Key = tuple[str, str]


def key_text(key: Key) -> str:
    """``3`` or ``3 of procthor/a.json``."""
    scene, eid = key
    return f"{eid} of {scene}" if scene else eid


@dataclass(frozen=True)
class Trajectories:
    """Trajectories by (scene, episode id), where they came from, and the oracle's config
    (for a ``multion-oracle`` dataset)."""

    path: Path
    kind: str  # file | oracle
    by_key: Mapping[Key, Trajectory]
    config: Mapping[str, Any] = field(default_factory=dict)


def ids_text(ids: Sequence[object]) -> str:
    """``episode ids 3, 7, 9`` or ``episode ids 1, 2, 3, 4, 5 and 12 more``."""
    shown = ", ".join(str(i) for i in ids[:SHOWN_IDS])
    more = len(ids) - SHOWN_IDS
    word = "episode id" if len(ids) == 1 else "episode ids"
    return f"{word} {shown}" + (f" and {more} more" if more > 0 else "")


def _problems_error(path: Path, problems: list[tuple[str, str, str]]) -> MalformedInputError:
    """One line: how many trajectories are malformed, their ids (or records) and what is wrong
    with the first. ``problems``: (id or record label, where, what)."""
    ids = list(dict.fromkeys(label for label, where, _ in problems if label != where))
    records = list(dict.fromkeys(label for label, where, _ in problems if label == where))
    parts = [ids_text(ids)] if ids else []
    if records:
        more = len(records) - SHOWN_IDS
        parts.append(", ".join(records[:SHOWN_IDS]) + (f" and {more} more" if more > 0 else ""))
    _, first_label, first = problems[0]
    n = len(ids) + len(records)
    return MalformedInputError(
        f"{path}: {n} malformed trajector{'y' if n == 1 else 'ies'} ({'; '.join(parts)}); "
        f"{first_label}: {first}"
    )


def load_trajectories(path: Path | str) -> Trajectories:
    """Trajectories from a JSON list / JSONL file (``.gz`` too) or a ``multion-oracle``
    dataset directory (one with a ``manifest.json``). Every malformed record is found before
    one error names their episode ids."""
    path = Path(path)
    if path.is_dir() and (path / "manifest.json").exists():
        return _load_oracle(path)
    if path.is_dir():
        raise UsageError(
            f"{path}: a folder without manifest.json: trajectories are a JSON/JSONL file or a "
            "multion-oracle dataset"
        )
    if not path.is_file():
        raise InputNotFoundError(f"{path}: trajectories not found")
    return Trajectories(path, "file", _parse_records(path, _read_records(path)))


def _read_records(path: Path) -> list[tuple[str, object]]:
    """``(label, record)`` of every record: a JSON list, one JSON object, or JSON lines."""
    raw = path.read_bytes()
    try:
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise MalformedInputError(f"{path}: trajectories are not readable text ({exc})") from None
    whole_error: json.JSONDecodeError | None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip().startswith("["):
            raise MalformedInputError(f"{path}: trajectories are not valid JSON ({exc})") from None
        doc = None
        whole_error = exc
    else:
        whole_error = None
    if whole_error is None:
        if isinstance(doc, list):
            return [(f"record {k + 1}", r) for k, r in enumerate(doc)]
        if isinstance(doc, dict):
            return [("record 1", doc)]
        raise MalformedInputError(
            f"{path}: trajectories must be a JSON list of records or JSON lines, got "
            f"{type(doc).__name__}"
        )
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((f"line {n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise MalformedInputError(
                f"{path} line {n}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
    return out


def _parse_records(path: Path, records: list[tuple[str, object]]) -> dict[Key, Trajectory]:
    out: dict[Key, Trajectory] = {}
    problems: list[tuple[str, str, str]] = []
    for label, rec in records:
        if not isinstance(rec, dict):
            problems.append((label, label, f"not an object ({type(rec).__name__})"))
            continue
        eid = rec.get("episode_id")
        if isinstance(eid, bool) or not isinstance(eid, (str, int)) or str(eid) == "":
            problems.append((label, label, f"episode_id must be a string or integer, got {eid!r}"))
            continue
        scene = rec.get("scene_id", rec.get("scene", ""))
        if not isinstance(scene, str):
            problems.append((label, label, f"scene_id must be a string, got {scene!r}"))
            continue
        key = (scene, str(eid))
        name = key_text(key)
        if key in out:
            problems.append((name, f"episode {name}", "two trajectories for this episode"))
            continue
        try:
            out[key] = _trajectory(rec.get("actions"), rec.get("positions"))
        except UsageError as exc:
            problems.append((name, f"episode {name}", str(exc)))
    if problems:
        raise _problems_error(path, problems)
    return out


def _trajectory(actions: object, positions: object) -> Trajectory:
    """A checked trajectory (raises :class:`UsageError` saying what is wrong)."""
    if isinstance(actions, np.ndarray):
        actions = actions.tolist()
    if not isinstance(actions, list):
        raise UsageError(f"actions must be a list, got {type(actions).__name__}")
    ids = tuple(action_id(a) for a in actions)
    if positions is None:
        return Trajectory(ids)
    try:
        pos = np.asarray(positions, dtype=np.float64)
    except (TypeError, ValueError):
        raise UsageError("positions must be a list of [x, y, z]") from None
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise UsageError(f"positions must be a list of [x, y, z], got shape {list(pos.shape)}")
    if len(pos) != len(ids) + 1:
        raise UsageError(
            f"{len(pos)} positions for {len(ids)} actions (the start and one per action: "
            f"{len(ids) + 1})"
        )
    bad = np.flatnonzero(~np.isfinite(pos).all(axis=1))
    if len(bad):
        k = int(bad[0])
        raise UsageError(f"position {k} (step {k}) is not finite: {pos[k].tolist()}")
    return Trajectory(ids, pos)


def _load_oracle(path: Path) -> Trajectories:
    from dataforge.store import open_dataset

    ds = open_dataset(path)
    if ds.manifest.pipeline != ORACLE_PIPELINE:
        raise UsageError(
            f"{path}: a {ds.manifest.pipeline!r} dataset, not {ORACLE_PIPELINE} trajectories"
        )
    out: dict[Key, Trajectory] = {}
    problems: list[tuple[str, str, str]] = []
    for ep in ds.episodes():
        eid = ep.metadata.get("episode_id")
        if eid is None or isinstance(eid, bool) or str(eid) == "":
            problems.append((ep.id, f"episode {ep.id}", "no episode_id in its metadata"))
            continue
        key = (str(ep.metadata.get("scene", "")), str(eid))
        name = key_text(key)
        if key in out:
            problems.append((name, f"episode {name}", "two trajectories for this episode"))
            continue
        try:
            out[key] = _trajectory(ep["action"].read(), ep["position"].read())
        except (UsageError, KeyError) as exc:
            problems.append((name, f"episode {name}", str(exc)))
    if problems:
        raise _problems_error(path, problems)
    return Trajectories(path, "oracle", out, dict(ds.manifest.config))


# -- a dataset ---------------------------------------------------------------------------------


def scene_matches(given: str, name: str, scene_id: str) -> bool:
    """Whether a record's scene names this stored scene: its name, its ``scene_id``, or a path
    ending in ``/<scene_id>`` (habitat-lab joins ``SCENES_DIR`` in front of it)."""
    return given in (name, scene_id) or (bool(scene_id) and given.endswith("/" + scene_id))


def _label(names: Sequence[tuple[str, str]], k: int, eid: str) -> str:
    """Episode ``eid`` of scene ``k`` in a message: with its scene where there are several."""
    return key_text((names[k][0] if len(names) > 1 else "", eid))


def _resolve(
    trajectories: Trajectories,
    directory: Path,
    names: Sequence[tuple[str, str]],
    ids_by_scene: Sequence[Sequence[str]],
) -> dict[tuple[int, str], Trajectory]:
    """Each trajectory's episode as (scene index, episode id). A trajectory that names no
    episode of the dataset, or (without a scene) an id several scenes have, is an error."""
    id_sets = [set(ids) for ids in ids_by_scene]
    out: dict[tuple[int, str], Trajectory] = {}
    unknown: list[str] = []
    ambiguous: list[str] = []
    twice: list[str] = []
    for key, traj in trajectories.by_key.items():
        scene, eid = key
        hits = [
            k
            for k, (name, sid) in enumerate(names)
            if eid in id_sets[k] and (not scene or scene_matches(scene, name, sid))
        ]
        if not hits:
            unknown.append(key_text(key))
        elif len(hits) > 1:
            ambiguous.append(key_text(key))
        elif (hits[0], eid) in out:
            twice.append(_label(names, hits[0], eid))
        else:
            out[hits[0], eid] = traj
    path = trajectories.path
    if unknown:
        raise UsageError(
            f"{path}: {len(unknown)} trajector{'y' if len(unknown) == 1 else 'ies'} "
            f"for episodes not in {directory} ({ids_text(unknown)})"
        )
    if ambiguous:
        n = len(ambiguous)
        raise UsageError(
            f"{path}: {n} trajector{'y names' if n == 1 else 'ies name'} no scene, and several "
            f"scenes of {directory} have {'its' if n == 1 else 'their'} id "
            f"({ids_text(ambiguous)}): "
            "episode ids restart at 0 in each scene, as habitat-lab numbers them; give each "
            "record the scene_id of its episode"
        )
    if twice:
        raise UsageError(f"{path}: two trajectories for the same episode ({ids_text(twice)})")
    return out


def _check_starts(
    path: Path,
    given: Mapping[tuple[int, str], Trajectory],
    names: Sequence[tuple[str, str]],
    ids_by_scene: Sequence[Sequence[str]],
    starts: Sequence[np.ndarray],
) -> None:
    """Refuse, in one line, trajectories whose first position is not their episode's start
    (more than ``START_TOL_M`` away in x/z): they belong to another episode."""
    rows = [{i: n for n, i in enumerate(ids)} for ids in ids_by_scene]
    wrong: list[tuple[str, float]] = []
    for (k, eid), traj in given.items():
        if traj.positions is None:
            continue
        start = np.asarray(starts[k][rows[k][eid]], dtype=np.float64)
        off = float(np.hypot(*(traj.positions[0] - start)[[0, 2]]))
        if off > START_TOL_M:
            wrong.append((_label(names, k, eid), off))
    if wrong:
        n = len(wrong)
        raise UsageError(
            f"{path}: {n} trajector{'y does' if n == 1 else 'ies do'} not start at the start "
            f"of the episode {'it names' if n == 1 else 'they name'} "
            f"({ids_text([w for w, _ in wrong])}; the first is {wrong[0][1]:.2f} m away, more "
            f"than {START_TOL_M:g} m): {'is it' if n == 1 else 'are they'} keyed by another "
            "episode's scene and id?"
        )


@dataclass(frozen=True)
class DatasetScore:
    """The scores of one episodes dataset's episodes, in its order."""

    directory: Path
    trajectories: Path
    kind: str  # file | oracle
    m: int
    missing: int
    episodes: tuple[EpisodeScore, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "directory": str(self.directory),
            "trajectories": str(self.trajectories),
            "trajectories_kind": self.kind,
            "m": self.m,
            "missing": self.missing,
            **mean_metrics(self.episodes),
        }


def _open_episodes(directory: Path) -> tuple[Dataset, dict[str, Any]]:
    from dataforge.store import open_dataset

    directory = Path(directory)
    if not (directory / "manifest.json").exists():
        raise DatasetError(f"{directory} is not a dataforge dataset: manifest.json is missing")
    ds = open_dataset(directory)
    if ds.manifest.pipeline != EPISODES_PIPELINE:
        raise UsageError(
            f"{directory}: a {ds.manifest.pipeline!r} dataset, not MultiON episodes "
            f"(dataforge multion generate)"
        )
    return ds, dict(ds.manifest.config)


def _scene_motion(
    space: SceneSpace, goals: np.ndarray, config: Mapping[str, Any], settings: ScoreSettings
) -> Callable[[Pose2D, int], Pose2D] | None:
    """The motion callable on the scene's grid (goal cylinders blocked when the dataset says
    so); ``None`` where there is no grid (a Habitat navmesh)."""
    from dataforge.pipelines.multion import agent

    if space.grid is None:
        return None
    grid = space.move_grid(goals, config)
    fwd, turn = float(settings.forward_step), float(settings.turn_angle)

    def step(pose: Pose2D, a: int) -> Pose2D:
        return agent.step(pose, a, grid, fwd, turn)

    return step


def score_dataset(
    directory: Path | str,
    trajectories: Trajectories,
    settings: ScoreSettings | None = None,
    *,
    allow_missing: bool = False,
    subset: bool = False,
    space_for: Callable[[Mapping[str, Any], bytes, Mapping[str, Any]], SceneSpace] | None = None,
) -> DatasetScore:
    """Score ``trajectories`` against the episodes of a ``multion`` dataset. Trajectories for
    unknown episodes are an error, missing ones too unless ``allow_missing`` (then they score 0).
    ``space_for(metadata, house_json, config)`` builds a scene's space (default
    :func:`.scenes.stored_space`); it is built once per scene, only for scenes with
    trajectories."""
    from dataforge.pipelines.multion import agent

    settings = settings or ScoreSettings()
    directory = Path(directory)
    ds, config = _open_episodes(directory)
    if space_for is None:
        import functools

        from dataforge.pipelines.multion.scenes import scenes_root, stored_space

        space_for = functools.partial(stored_space, scenes_root=scenes_root(ds.manifest))
    scenes = list(ds.episodes())
    ids_by_scene = [[str(int(v)) for v in ep["episode_id"].read()] for ep in scenes]
    names = [(ep.id, str(ep.metadata.get("scene_id", ""))) for ep in scenes]
    given = _resolve(trajectories, directory, names, ids_by_scene)
    starts = [ep["start_position"].read() for ep in scenes]
    _check_starts(trajectories.path, given, names, ids_by_scene, starts)
    known = sum(len(ids) for ids in ids_by_scene)
    missing = [
        _label(names, k, i)
        for k, ids in enumerate(ids_by_scene)
        for i in ids
        if (k, i) not in given
    ]
    if subset and not given:
        raise UsageError(f"{trajectories.path}: no trajectories to score")
    if missing and not (allow_missing or subset):
        raise UsageError(
            f"{trajectories.path}: no trajectory for {len(missing)} of {known} episodes of "
            f"{directory} ({ids_text(missing)}); --allow-missing scores them as failures, "
            "--subset scores only the episodes given"
        )
    out: list[EpisodeScore] = []
    for k, (ep, ids) in enumerate(zip(scenes, ids_by_scene, strict=True)):
        arrays = {
            name: ep[name].read()
            for name in ("start_rotation", "goal_position", "leg_geodesic", "geodesic_distance")
        }
        arrays["start_position"] = starts[k]  # read once, for the start check above
        space: SceneSpace | None = None
        if any((k, i) in given for i in ids):
            meta = ep.metadata
            space = space_for(meta, ep["house_json"].read().tobytes(), config)
        for n, eid in enumerate(ids):
            legs = arrays["leg_geodesic"][n]
            total = float(arrays["geodesic_distance"][n])
            traj = given.get((k, eid))
            if traj is None and subset:
                continue
            if traj is None:
                out.append(missing_episode(eid, legs, total, scene=ep.id))
                continue
            goals = arrays["goal_position"][n]
            assert space is not None  # built above: the scene has a trajectory
            kw: dict[str, Any]
            if traj.positions is not None:
                positions = traj.positions
                kw = {"start": 0, "step": lambda i, a: i + 1, "position": positions.__getitem__}
            else:
                step = _scene_motion(space, goals, config, settings)
                if step is None:
                    raise UsageError(
                        f"episode {eid} (scene {ep.id}): a Habitat scene, whose motion dataforge "
                        "does not simulate: give the trajectory's positions"
                    )
                kw = {
                    "start": agent.start_pose(
                        arrays["start_position"][n], arrays["start_rotation"][n]
                    ),
                    "step": step,
                }
            s = score_episode(
                traj.actions,
                goals,
                legs,
                geodesic=space.nav.distance,
                geodesic_distance=total,
                success_distance=float(settings.success_distance),
                max_steps=int(settings.max_steps),
                episode_id=eid,
                **kw,
            )
            out.append(replace(s, scene=ep.id))
    return DatasetScore(
        directory=directory,
        trajectories=trajectories.path,
        kind=trajectories.kind,
        m=int(config["m"]),
        missing=0 if subset else len(missing),
        episodes=tuple(out),
    )


# -- several datasets --------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreReport:
    """Every dataset's scores, the settings they were scored under, and notes to print."""

    settings: ScoreSettings
    datasets: tuple[DatasetScore, ...]
    notes: tuple[str, ...] = ()

    @property
    def episodes(self) -> list[EpisodeScore]:
        return [s for d in self.datasets for s in d.episodes]

    def per_m(self) -> dict[int, dict[str, float | int]]:
        ms = sorted({d.m for d in self.datasets})
        return {
            m: mean_metrics(s for d in self.datasets if d.m == m for s in d.episodes) for m in ms
        }

    def overall(self) -> dict[str, float | int]:
        return mean_metrics(self.episodes)

    def to_dict(self, *, per_episode: bool = True) -> dict[str, Any]:
        """Plain numbers (no NaN): settings, datasets, means per m and overall, and each
        episode's result (with the dataset's index in ``datasets``)."""
        d: dict[str, Any] = {
            "settings": self.settings.to_dict(),
            "datasets": [x.to_dict() for x in self.datasets],
            "per_m": {str(m): row for m, row in self.per_m().items()},
            "overall": self.overall(),
            "missing": sum(x.missing for x in self.datasets),
            "notes": list(self.notes),
        }
        if per_episode:
            d["episodes"] = [
                {"dataset": k, **s.to_dict()}
                for k, x in enumerate(self.datasets)
                for s in x.episodes
            ]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)


def _oracle_notes(t: Trajectories, settings: ScoreSettings) -> list[str]:
    """Where a ``multion-oracle`` dataset was made under other settings than these."""
    notes = []
    for k, v in settings.to_dict().items():
        if t.kind == "oracle" and k in t.config and float(t.config[k]) != float(v):
            flag = "--" + k.replace("_", "-")
            notes.append(f"{t.path}: the oracle ran with {flag} {t.config[k]}, scored with {v}")
    return notes


def score_datasets(
    directories: Sequence[Path | str],
    trajectories: Sequence[Path | str],
    settings: ScoreSettings | None = None,
    *,
    allow_missing: bool = False,
    subset: bool = False,
    space_for: Callable[[Mapping[str, Any], bytes, Mapping[str, Any]], SceneSpace] | None = None,
) -> ScoreReport:
    """Score each episodes dataset with the trajectories given in the same position (see
    :func:`score_dataset`)."""
    settings = settings or ScoreSettings()
    if not directories:
        raise UsageError("give at least one MultiON episodes dataset")
    if len(directories) != len(trajectories):
        raise UsageError(
            f"{len(directories)} datasets and {len(trajectories)} --trajectories: give one "
            "--trajectories per dataset, in the same order"
        )
    scored, notes = [], []
    for directory, tpath in zip(directories, trajectories, strict=True):
        t = load_trajectories(tpath)
        notes.extend(_oracle_notes(t, settings))
        d = score_dataset(
            directory,
            t,
            settings,
            allow_missing=allow_missing,
            subset=subset,
            space_for=space_for,
        )
        if subset:
            notes.append(f"{directory}: scored the {len(d.episodes)} episodes {tpath} has")
        if d.missing:
            notes.append(
                f"{directory}: {d.missing} of {len(d.episodes)} episodes have no trajectory in "
                f"{tpath}: scored as failures"
            )
        scored.append(d)
    if not any(d.episodes for d in scored):
        raise UsageError("the datasets hold no episodes to score")
    return ScoreReport(settings, tuple(scored), tuple(notes))


# the table's metric columns: METRICS, then the code's PSPL; both PPLs named after their source
TABLE_COLUMNS = (
    "SUCCESS (%)",
    "PROGRESS (%)",
    "SPL (%)",
    "PPL, paper (%)",
    "PSPL, multiON code (%)",
)


def report_table(report: ScoreReport) -> Table:
    """A rich table: per m and overall, the episodes and the mean metrics in percent."""
    from rich.table import Table

    t = Table(
        title=f"MultiON scores (success distance {report.settings.success_distance:g} m, "
        f"at most {report.settings.max_steps} steps)",
        title_justify="left",
    )
    t.add_column("m-ON")
    t.add_column("episodes", justify="right")
    for name in TABLE_COLUMNS:
        t.add_column(name, justify="right")

    def row(label: str, r: Mapping[str, float | int], **kw: Any) -> None:
        values = (f"{100 * float(r[k]):.1f}" for k in (*METRICS, "ppl_challenge"))
        t.add_row(label, str(r["episodes"]), *values, **kw)

    per_m = report.per_m()
    for m, r in per_m.items():
        row(f"{m}-ON", r)
    if len(per_m) > 1:
        row("all", report.overall(), style="bold")
    return t
