"""The 16 RoboMME tasks as ManiSkill environments, registered under the ids of the released
metadata (``PickXtimes``, ...), one module per task: ``<suite>/<task>.py`` (``PickXtimes`` in
``counting/pick_xtimes.py``), with what a suite's tasks share in ``<suite>/base.py``.
Importing this package imports ManiSkill."""

from __future__ import annotations

import importlib
import re

from mani_skill.utils.registration import REGISTERED_ENVS, register_env

from dataforge.pipelines.robomme.suites import TASK_SUITES

MAX_EPISODE_STEPS = 100_000  # episodes end by success or failure, not by a step limit


def _task_module(task: str) -> str:
    """The module of a task's env class: ``<suite>.<task in snake case>`` in this package
    (``PickXtimes``: ``dataforge.pipelines.robomme.tasks.counting.pick_xtimes``)."""
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", task).lower()
    return f"{__name__}.{TASK_SUITES[task].lower()}.{name}"


def task_class(task: str) -> type:
    """The task's env class, importing only its own module (and its suite's ``base``)."""
    return getattr(importlib.import_module(_task_module(task)), task)


def env_id(task: str) -> str:
    return task


def register_all() -> None:
    """Register every task with ManiSkill (once per process). A task module that fails to
    import raises here: every task exists, so a broken one must not pass for a missing one."""
    for task in TASK_SUITES:
        if env_id(task) not in REGISTERED_ENVS:
            register_env(env_id(task), max_episode_steps=MAX_EPISODE_STEPS)(task_class(task))


def implemented() -> list[str]:
    """The registered tasks: all 16 (:func:`register_all` raises if one cannot be loaded)."""
    register_all()
    return [t for t in TASK_SUITES if env_id(t) in REGISTERED_ENVS]
