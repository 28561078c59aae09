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

Upstream's own layouts depend on the CPU for about one seed in sixteen (203 of the 3,200
released ones): ``torch.sqrt`` inside its yaw-to-quaternion conversion runs on Intel MKL, whose
code path (and last float32 bit) depends on the CPU. The released data hold the scenes of MKL's
compatible path (what every AMD CPU takes), which ``dataforge.numerics`` pins on every CPU;
:func:`upstream_layout` refuses to run on another path (docs/robomme_upstream.md, section 8).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dataforge import numerics
from dataforge.errors import UsageError

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
    task: str, seed: int, difficulty: str, *, recovery: bool = False, recovery_mode: str = "z"
) -> UpstreamLayout:
    """The layout upstream builds for ``task`` at ``seed`` and ``difficulty``; with
    ``recovery`` (upstream's generator for metadata episodes 0-5) including the draw of the
    pick that is missed first (``params["recovery"]``), which may shift later draws.

    ``recovery_mode`` ("z" or "xy", the harness's ``robomme_failure_recovery_mode``) is what
    ``params["recovery"]["mode"]`` says: a given mode makes the same single draw whichever it
    is (``placement.recovery_draw``), so the layout functions draw with "z" and the mode is
    written here."""
    require_release_sqrt()
    layout = _registry()[task](seed, difficulty, recovery=recovery)
    drawn = layout.params.get("recovery")
    if recovery and drawn:
        drawn["mode"] = recovery_mode.lower()
    return layout


AVX2_ONLY_SEEDS = 27  # of the 3,200 released seeds: other layouts with numpy's AVX2 loops


def warn_without_numpy_avx512() -> None:
    """Warn (one line) when numpy lacks its AVX-512 loops, with which the release was made."""
    if not numerics.numpy_avx512():
        warnings.warn(
            f"numpy runs without its AVX-512 loops on this CPU: {AVX2_ONLY_SEEDS} of the "
            "3,200 released RoboMME seeds lay out differently from the release (trimesh's box "
            "fit), and actions differ in their last bits (docs/robomme_upstream.md, section 8)",
            stacklevel=2,
        )


def require_release_sqrt() -> None:
    """Refuse (one line) when ``torch.sqrt`` is not MKL's compatible path, which the released
    layouts were made with (:mod:`dataforge.numerics`)."""
    path = numerics.torch_sqrt_path()
    if path != "mkl-compatible":
        name, value = numerics.MKL_PIN
        raise UsageError(
            f"RoboMME layouts need torch.sqrt on Intel MKL's compatible code path, as the "
            f"released data were made (here: {path}; {name}={os.environ.get(name)}): "
            f"set {name}={value} before torch starts (importing dataforge first does) and use "
            f"a torch build with MKL (the pinned CPU wheel); otherwise 203 of the 3,200 "
            f"released seeds lay out differently"
        )
