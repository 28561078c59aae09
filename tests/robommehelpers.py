"""Helpers for the RoboMME task tests (importable: tests/ is on pythonpath). Fixtures are in
tests/pipelines/robomme/conftest.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from dataforge.manip.executor import Executor


def run(env: Any, plan: Any) -> Any:
    """Execute ``plan`` (subgoals) on ``env`` without noise; returns the recording."""
    return Executor(env, rng=np.random.default_rng(0)).run(plan)
