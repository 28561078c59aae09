"""Shared fixtures of the RoboMME tests: ManiSkill envs are made per test and closed after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def make_env() -> Iterator[Any]:
    """``make_env(task, difficulty, render=False, size=64)``; every env is closed at the end."""
    from dataforge.pipelines.robomme.sim import make_env as make

    made: list[Any] = []

    def factory(task: str, difficulty: str = "easy", render: bool = False, size: int = 64) -> Any:
        env = make(task, difficulty, render=render, size=size)
        made.append(env)
        return env

    yield factory
    for env in made:
        env.close()


@pytest.fixture(scope="module")
def make() -> Iterator[Any]:
    """``make(task, difficulty, seed)``: a physics-only env reset to ``seed``. One env per
    (task, difficulty) is shared by a module's tests (every reset rebuilds the scene)."""
    from dataforge.pipelines.robomme.sim import make_env as make_one

    envs: dict[tuple[str, str], Any] = {}

    def factory(task: str, difficulty: str, seed: int) -> Any:
        key = (task, difficulty)
        if key not in envs:
            envs[key] = make_one(task, difficulty, render=False)
        envs[key].reset(seed=seed)
        return envs[key]

    yield factory
    for env in envs.values():
        env.close()
