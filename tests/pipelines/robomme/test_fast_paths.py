"""The fast paths of pass 1 give exactly what ManiSkill's own (slower) calls give: the state
vector, grasp detection, the front camera's projection; and a physics-only env does not stop a
camera env from being made later in the same process."""

from __future__ import annotations

import dfhelpers
import numpy as np
import pytest

from dataforge.manip.executor import Executor

pytestmark = [dfhelpers.needs_maniskill(), pytest.mark.slow]


@pytest.mark.parametrize("task", ["PickXtimes", "PatternLock", "ButtonUnmaskSwap"])
def test_state_reader_is_get_state_bit_for_bit(task: str, make_env) -> None:
    from dataforge.manip.state import StateReader

    env = make_env(task)
    env.reset(seed=3)
    base = env.unwrapped
    reader = StateReader(base)
    assert not reader.fallback
    rng = np.random.default_rng(0)
    q0 = base.agent.robot.get_qpos()[0, :7].cpu().numpy()
    for k in range(12):
        expected = base.get_state()[0].cpu().numpy()
        got = reader.read()
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, expected)
        arm = q0 + rng.normal(0, 0.05, 7)
        grip = [1.0 if k < 6 else -1.0] if base.has_gripper else []  # PatternLock: the stick
        env.step(np.concatenate([arm, grip]).astype(np.float32))
    # The robot moved: the comparison covered changing articulation and velocity entries.
    assert np.abs(reader.read() - expected).max() > 1e-3


def test_grasp_sensor_agrees_with_maniskill_through_a_pick(make_env) -> None:
    env = make_env("PickXtimes")
    env.reset(seed=11)
    base = env.unwrapped
    cubes = list(base.cubes.values())  # name -> actor
    ours: list[list[bool]] = []
    theirs: list[list[bool]] = []
    tick = base.tick

    def compare() -> None:
        ours.append([base.is_grasping(c) for c in cubes])
        theirs.append([bool(base.agent.is_grasping(c)[0]) for c in cubes])
        tick()

    base.tick = compare
    Executor(env).run(base.plan())
    assert ours == theirs
    grasped_steps = sum(any(row) for row in ours)
    assert grasped_steps > 20, "the episode should hold a cube for a while"


def test_front_camera_projection_matches_the_sensor(make_env) -> None:
    from dataforge.pipelines.robomme.env import FRONT_CAMERA, FRONT_SIZE, front_camera_cv

    env = make_env("PickXtimes", render=True, size=FRONT_SIZE)
    env.reset(seed=1)
    params = env.unwrapped._sensors[FRONT_CAMERA].get_params()
    k, ext = front_camera_cv()
    np.testing.assert_allclose(k, params["intrinsic_cv"][0].cpu().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ext, params["extrinsic_cv"][0].cpu().numpy(), atol=1e-5)


CAMERA_AFTER_PHYSICS = """
from dataforge.pipelines.robomme.sim import make_env
physics = make_env("VideoUnmask", "easy", render=False)
physics.reset(seed=2)
assert not physics.unwrapped._sensors  # no cameras in pass 1
camera = make_env("VideoUnmask", "easy", render=True, size=32)
camera.reset(seed=2)
rgb = camera.unwrapped.get_obs()["sensor_data"]["front_camera"]["rgb"]
assert rgb.shape == (1, 32, 32, 3) and float(rgb.float().std()) > 1.0, rgb.shape
print("ok")
"""


def test_camera_env_after_physics_env_in_a_fresh_process() -> None:
    """Pass 1 (no renderer) then pass 2 (cameras) in one new worker process."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", CAMERA_AFTER_PHYSICS], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]
