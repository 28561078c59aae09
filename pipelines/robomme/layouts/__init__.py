"""RoboMME's seed-to-layout scheme, reproduced: the initial scene the public benchmark builds
for a (task, seed, difficulty), computed without a simulator.

Upstream (``RoboMME/robomme_benchmark``, ``src/robomme/robomme_env/<Task>.py`` and
``utils/object_generation.py``) draws everything from ``torch.Generator().manual_seed(seed)``
streams in a task-specific order and places objects by rejection sampling. The functions here
make the same torch calls in the same order with the same bounds and rejection tests, so a
released seed and difficulty give the released initial layout (the facts, per task, are in
``docs/robomme_upstream.md`` section 1; the fixture ``tests/pipelines/robomme/fixtures/
upstream_val_initial.json.gz``, recorded from the upstream envs, checks them).

A layout is what the upstream env holds after ``gym.make(task, seed=..., difficulty=...)``
followed by ``env.reset()`` (its ``_initialize_episode`` runs twice; draws made there from a
persistent generator take their second values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Pose7 = tuple[float, float, float, float, float, float, float]  # x, y, z, qw, qx, qy, qz


@dataclass
class UpstreamLayout:
    """The initial scene of one upstream episode.

    ``actors``: every actor the upstream scene builds (table and ground excluded), in build
    order, name -> world pose after make + reset (parked/hidden actors included, at their
    parked pose). ``articulations``: root poses of the non-robot articulations (buttons,
    pegs). ``robot_qpos``: the robot's joint positions. ``params``: the task-level draws the
    episode's rules depend on (repeats, colours, goal object names, swap pairs, visit orders,
    the recovery pick index, ...), JSON-able.
    """

    task: str
    seed: int
    difficulty: str
    actors: dict[str, Pose7] = field(default_factory=dict)
    articulations: dict[str, Pose7] = field(default_factory=dict)
    robot_qpos: tuple[float, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)


LayoutFn = Callable[..., UpstreamLayout]  # (seed, difficulty, *, recovery=False)


def _registry() -> dict[str, LayoutFn]:
    from dataforge.pipelines.robomme.layouts import counting, imitation, permanence, reference

    table: dict[str, LayoutFn] = {}
    for module in (counting, permanence, reference, imitation):
        table.update(module.LAYOUTS)
    return table


def upstream_layout(
    task: str, seed: int, difficulty: str, *, recovery: bool = False
) -> UpstreamLayout:
    """The layout upstream builds for ``task`` at ``seed`` and ``difficulty``; with
    ``recovery`` (upstream's generator for metadata episodes 0-5) including the draw of the
    pick that is missed first (``params["recovery"]``), which may shift later draws."""
    return _registry()[task](seed, difficulty, recovery=recovery)
