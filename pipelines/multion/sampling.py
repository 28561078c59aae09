"""Drawing m-ON episodes in one scene under the paper's rules (§5.1), by rejection sampling.

One episode, in the order its random draws are made:

1. the start: a random navigable point of the scene's space;
2. goal k = 1..m: random navigable points until one is on the start's floor, at least two
   cylinder radii from every earlier goal and a body plus a cylinder radius from the start (the
   cylinders and the agent must not overlap), and at a geodesic distance in
   [``min_geodesic``, ``max_geodesic``] from the previous point (the start for goal 1); at most
   ``GOAL_TRIES`` draws, else the episode is abandoned and drawn again from step 1;
3. with ``block``: the cylinders are put in the way and every goal must still be reachable
   (:meth:`.scenes.SceneSpace.reachable_with`), else the episode is drawn again;
4. the start's heading, uniform in [0, 2 pi) (habitat's generators' rule), as the quaternion
   ``[0, sin(a/2), 0, cos(a/2)]`` about +y;
5. the goal objects: m of the 8 cylinders without replacement, in the order drawn.

Both are counted by reason: ``rejected`` goal candidates (``other_floor``, ``overlap``,
``geodesic``: the candidate is dropped and another drawn) and ``abandoned`` episodes
(``no_goal``: ``GOAL_TRIES`` candidates rejected in a row; ``blocked``: a goal cut off by the
cylinders; the episode is drawn again from its start). After ``MAX_FAILURES`` abandoned
episodes in a row the scene cannot give the episodes asked for (legs of [2, 20] m in a house a
few metres across) and the unit fails with one line naming the longest geodesic leg it
measured.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataforge.errors import DataforgeError
from dataforge.nav.space import Point
from dataforge.pipelines.multion.scenes import SceneSpace, same_floor

GOAL_TRIES = 50  # candidate points per goal before the episode is drawn again
MAX_FAILURES = 1000  # abandoned episodes in a row before the scene is declared impossible
CATEGORY_COUNT = 8


class SceneTooSmall(DataforgeError):
    """The scene cannot give an episode under the rules (a one-line error for the unit)."""


@dataclass(frozen=True)
class Rules:
    m: int
    min_geodesic: float
    max_geodesic: float
    cylinder_radius: float
    agent_radius: float
    block: bool

    @property
    def goal_separation(self) -> float:
        """Goals at least this far apart (m): two cylinders do not overlap."""
        return 2 * self.cylinder_radius

    @property
    def start_clearance(self) -> float:
        """Goals at least this far from the start (m): the agent's body and a cylinder do not
        overlap; also the radius cylinders block around their centre."""
        return self.agent_radius + self.cylinder_radius


@dataclass(frozen=True)
class Drawn:
    """One episode: start, heading, goals in order, their categories and the geodesic legs."""

    start: np.ndarray
    yaw: float  # radians, about +y
    goals: np.ndarray  # (m, 3)
    categories: np.ndarray  # (m,) task category ids
    legs: np.ndarray  # (m,) geodesic start -> g1, g1 -> g2, ...

    @property
    def rotation(self) -> np.ndarray:
        return yaw_quaternion(self.yaw)


def yaw_quaternion(yaw: float) -> np.ndarray:
    """``[x, y, z, w]`` of a rotation by ``yaw`` radians about +y (habitat's convention)."""
    return np.array([0.0, math.sin(yaw / 2), 0.0, math.cos(yaw / 2)])


@dataclass
class Tally:
    """What the sampler drew: goal candidates it rejected and episodes it abandoned, by
    reason."""

    episodes: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # goal candidates
    abandoned: Counter[str] = field(default_factory=Counter)  # whole episodes
    longest_leg: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "rejected": dict(sorted(self.rejected.items())),
            "abandoned": dict(sorted(self.abandoned.items())),
            "longest_leg_m": round(self.longest_leg, 4),
        }


def draw_episode(
    space: SceneSpace, rules: Rules, rng: np.random.Generator, tally: Tally
) -> Drawn | None:
    """One episode drawn under ``rules`` (see the module docstring), or None (abandoned)."""
    start = space.nav.sample(rng)
    points = [start]
    legs: list[float] = []
    for _ in range(rules.m):
        for _ in range(GOAL_TRIES):
            g = space.nav.sample(rng)
            if not same_floor(start, g):
                tally.rejected["other_floor"] += 1
                continue
            if _too_close(g, start, rules.start_clearance) or any(
                _too_close(g, p, rules.goal_separation) for p in points[1:]
            ):
                tally.rejected["overlap"] += 1
                continue
            d = space.nav.distance(points[-1], g)
            if math.isfinite(d):
                tally.longest_leg = max(tally.longest_leg, d)
            if not rules.min_geodesic <= d <= rules.max_geodesic:
                tally.rejected["geodesic"] += 1
                continue
            points.append(g)
            legs.append(d)
            break
        else:
            tally.abandoned["no_goal"] += 1
            return None
    goals = np.array(points[1:])
    if rules.block and not space.reachable_with(start, goals, rules.start_clearance):
        tally.abandoned["blocked"] += 1
        return None
    yaw = float(rng.uniform(0.0, 2 * math.pi))
    categories = rng.choice(CATEGORY_COUNT, size=rules.m, replace=False)
    return Drawn(start, yaw, goals, categories.astype(np.int8), np.array(legs))


def draw_episodes(
    space: SceneSpace, rules: Rules, rng: np.random.Generator, n: int
) -> tuple[list[Drawn], Tally]:
    """``n`` episodes (see the module docstring); :class:`SceneTooSmall` when ``MAX_FAILURES``
    episodes in a row are abandoned."""
    tally = Tally()
    out: list[Drawn] = []
    failures = 0
    while len(out) < n:
        ep = draw_episode(space, rules, rng, tally)
        if ep is None:
            failures += 1
            if failures >= MAX_FAILURES:
                raise SceneTooSmall(  # the runner names the unit (the scene) before this
                    f"no {rules.m}-ON episode in {MAX_FAILURES} tries in a row after "
                    f"{len(out)} episodes: legs need geodesics in [{rules.min_geodesic:g}, "
                    f"{rules.max_geodesic:g}] m and the longest measured here is "
                    f"{tally.longest_leg:.2f} m (abandoned episodes: {dict(tally.abandoned)}; "
                    f"rejected goal candidates: {dict(tally.rejected)})"
                )
            continue
        failures = 0
        out.append(ep)
        tally.episodes += 1
    return out, tally


def _too_close(a: Point, b: Point, limit: float) -> bool:
    """Within ``limit`` (inclusive, as a blocked disc's edge is) in the x/z plane."""
    return math.hypot(float(a[0]) - float(b[0]), float(a[2]) - float(b[2])) <= limit
