"""A FindingDory episode as episode creation plans it and collection replays it.

An :class:`EpisodePlan` says which small objects were spawned where (the rearranged ones and
one same-category distractor each), in which order each is picked from its start receptacle
and placed on its goal receptacle at a recorded stable pose, from which navigable spots each
pick and place is done (:class:`Spot`: the object in reach and in view), where the agent
starts and where it walks to at the end. Receptacle viewpoints (the dense navigable lattice
around each receptacle that ``robot_at_receptacle`` measures distance to) are stored beside the
plan as arrays; see :mod:`.creation`.

Receptacles here are pieces of furniture: top-level objects of the house (a dresser, not one of
its drawers); an object placed in a drawer has the dresser as its receptacle, and the surface
it rests on is in the house JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dataforge.errors import MalformedInputError

if TYPE_CHECKING:
    from dataforge.world.house import HouseObject

Vec3 = tuple[float, float, float]


def _vec3(v: Iterable[float]) -> Vec3:
    x, y, z = (float(a) for a in v)
    return (x, y, z)


@dataclass(frozen=True)
class Spot:
    """Where the agent's base stands (x, floor y, z) and its yaw (AI2-THOR: 0 faces +z, 90 +x)
    to pick or place; ``coverage``: the target's share of the check image from there."""

    position: Vec3
    yaw: float
    coverage: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"position": list(self.position), "yaw": self.yaw, "coverage": self.coverage}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Spot:
        return cls(_vec3(d["position"]), float(d["yaw"]), float(d.get("coverage", 0.0)))


@dataclass(frozen=True)
class Rearrangement:
    """One pick-and-place: ``object`` (its id in the house) from ``start_receptacle`` to
    ``goal_receptacle`` (a receptacle of another category), placed at ``goal_position`` /
    ``goal_rotation`` (box centre and Euler degrees, the house JSON's convention)."""

    object: str
    category: str
    asset: str
    start_receptacle: str
    goal_receptacle: str
    start_position: Vec3
    start_rotation: Vec3
    goal_position: Vec3
    goal_rotation: Vec3
    pick_spots: tuple[Spot, ...]
    place_spots: tuple[Spot, ...]

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        for k in ("start_position", "start_rotation", "goal_position", "goal_rotation"):
            d[k] = list(d[k])
        d["pick_spots"] = [s.to_dict() for s in self.pick_spots]
        d["place_spots"] = [s.to_dict() for s in self.place_spots]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rearrangement:
        return cls(
            object=str(d["object"]),
            category=str(d["category"]),
            asset=str(d["asset"]),
            start_receptacle=str(d["start_receptacle"]),
            goal_receptacle=str(d["goal_receptacle"]),
            start_position=_vec3(d["start_position"]),
            start_rotation=_vec3(d["start_rotation"]),
            goal_position=_vec3(d["goal_position"]),
            goal_rotation=_vec3(d["goal_rotation"]),
            pick_spots=tuple(Spot.from_dict(s) for s in d["pick_spots"]),
            place_spots=tuple(Spot.from_dict(s) for s in d["place_spots"]),
        )


@dataclass(frozen=True)
class Distractor:
    """A non-interacted object of an interacted object's category, spawned elsewhere."""

    object: str
    category: str
    asset: str
    receptacle: str
    position: Vec3
    rotation: Vec3

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "position": list(self.position), "rotation": list(self.rotation)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Distractor:
        return cls(
            str(d["object"]),
            str(d["category"]),
            str(d["asset"]),
            str(d["receptacle"]),
            _vec3(d["position"]),
            _vec3(d["rotation"]),
        )


@dataclass(frozen=True)
class EpisodePlan:
    scene: str
    rearrangements: tuple[Rearrangement, ...]
    distractors: tuple[Distractor, ...]
    start: Spot  # the agent's random start pose
    end: Spot  # the walk-away goal: far from the last interaction
    receptacles: tuple[str, ...]  # every receptacle with viewpoints (the arrays' index)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scene": self.scene,
            "rearrangements": [r.to_dict() for r in self.rearrangements],
            "distractors": [d.to_dict() for d in self.distractors],
            "start": self.start.to_dict(),
            "end": self.end.to_dict(),
            "receptacles": list(self.receptacles),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodePlan:
        try:
            return cls(
                scene=str(d["scene"]),
                rearrangements=tuple(Rearrangement.from_dict(r) for r in d["rearrangements"]),
                distractors=tuple(Distractor.from_dict(x) for x in d["distractors"]),
                start=Spot.from_dict(d["start"]),
                end=Spot.from_dict(d["end"]),
                receptacles=tuple(str(r) for r in d["receptacles"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise MalformedInputError(f"episode plan: {type(e).__name__}: {e}") from None

    def spawns(self) -> list[tuple[HouseObject, str]]:
        """What the episode puts in the house before the day: (the object at its start pose as a
        :class:`~dataforge.world.house.HouseObject`, its receptacle), the rearranged objects in
        order, then the distractors."""
        from dataforge.world.house import HouseObject

        out = [
            (
                HouseObject(r.object, r.asset, r.category, r.start_position, r.start_rotation),
                r.start_receptacle,
            )
            for r in self.rearrangements
        ]
        out += [
            (HouseObject(d.object, d.asset, d.category, d.position, d.rotation), d.receptacle)
            for d in self.distractors
        ]
        return out

    @property
    def objects(self) -> tuple[str, ...]:
        """Ids of the spawned objects: the rearranged ones in order, then the distractors."""
        return tuple(r.object for r in self.rearrangements) + tuple(
            x.object for x in self.distractors
        )
