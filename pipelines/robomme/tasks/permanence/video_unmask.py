"""The Permanence suite's VideoUnmask task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from dataforge.pipelines.robomme.tasks.permanence.base import _Permanence


class VideoUnmask(_Permanence):
    """The video shows the cubes, then the containers dropping over them (step 32); pick the
    container(s) hiding the named cube(s): 3 / 5 / 15 containers (fewer when
    ``spawn_random_bin`` finds no room), 1 / 1 / 2 picks (``VideoUnmask.py`` configs). Task list:
    "static" (64 steps, video), pick bin_0, [put down, pick bin_1]. Departs from upstream
    only as the package docstring lists."""

    TASK = "VideoUnmask"
    VIDEO = True
