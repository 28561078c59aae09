"""An mplib planner for a ManiSkill arm: screw motions between end-effector poses, time-
parameterised at the env's control rate, plus forward kinematics of joint targets.

Only screw motions are planned (deterministic, straight in SE(3)); a waypoint they cannot reach
(joint limits, self-collision) is a planning failure, which callers filter. mplib's RRT planners
are not used because OMPL draws from an unseeded random stream, which would break
byte-identical reruns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

NUDGES_M = (0.0, 2e-4, -2e-4)


class PlanningFailed(RuntimeError):
    """A waypoint could not be reached by a screw motion."""


VEL_SCALE = ACC_SCALE = 0.9  # ManiSkill's motion-planning solvers' defaults


class ArmPlanner:
    """Plans for ``env.agent`` (a ManiSkill agent with an mplib-compatible URDF/SRDF). The
    joint velocity and acceleration limits are the URDF's scaled by ``vel_scale`` and
    ``acc_scale``; an env may set its own velocity scale as ``env.joint_vel_scale``."""

    def __init__(
        self,
        env: Any,
        move_group: str = "panda_hand_tcp",
        vel_scale: float | None = None,
        acc_scale: float = ACC_SCALE,
    ) -> None:
        import mplib

        agent = env.agent
        robot = agent.robot
        self.planner = mplib.Planner(
            urdf=agent.urdf_path,
            srdf=agent.urdf_path.replace(".urdf", ".srdf"),
            user_link_names=[link.get_name() for link in robot.get_links()],
            user_joint_names=[j.get_name() for j in robot.get_active_joints()],
            move_group=move_group,
        )
        base = robot.pose
        self.base_p = base.p[0].cpu().numpy().astype(np.float64)
        self.planner.set_base_pose(np.hstack([self.base_p, base.q[0].cpu().numpy()]))
        if vel_scale is None:
            vel_scale = float(getattr(env, "joint_vel_scale", VEL_SCALE))
        self.planner.joint_vel_limits = np.asarray(self.planner.joint_vel_limits) * vel_scale
        self.planner.joint_acc_limits = np.asarray(self.planner.joint_acc_limits) * acc_scale
        self.dt = float(env.control_timestep)
        self.dof = len(self.planner.move_group_joint_indices)
        self._ee = self.planner.move_group_link_id

    def plan(self, qpos: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Joint targets (n, dof) from ``qpos`` (full) to the world pose ``target`` [p, wxyz]."""
        target = np.asarray(target, dtype=np.float64)
        # mplib reports "failed" when its last screw step is shorter than 1e-4 even though the
        # target is reached; a target nudged by 0.2 mm then plans (deterministically).
        for dz in NUDGES_M:
            goal = target.copy()
            goal[2] += dz
            res = self.planner.plan_screw(goal, np.asarray(qpos, np.float64), time_step=self.dt)
            if res["status"] == "Success":
                return np.asarray(res["position"], dtype=np.float64)
        raise PlanningFailed(f"no screw motion to {np.round(target[:3], 3).tolist()}")

    def ik(self, qpos: np.ndarray, target: np.ndarray) -> np.ndarray | None:
        """The full joint vector that puts the move group's link at the world pose ``target``
        [p, wxyz] (float32 as ManiSkill's solvers pass it), found by mplib's CLIK from
        ``qpos`` (full) alone (no random restarts: reruns stay byte-identical), or None."""
        goal = np.asarray(target, dtype=np.float32).astype(np.float64)
        goal = self.planner.transform_goal_to_wrt_base(goal)
        start = self.planner.pad_qpos(np.asarray(qpos, np.float64).copy())
        status, sols = self.planner.IK(goal, start.copy(), n_init_qpos=1)
        if status != "Success" or not sols:
            return None
        out = np.asarray(qpos, np.float64).copy()
        out[: self.dof] = np.asarray(sols[0], np.float64)[: self.dof]
        return out

    def reached(self, qpos: np.ndarray, target: np.ndarray, tol_m: float = 1e-3) -> bool:
        """Whether the move group's link at ``qpos`` is within ``tol_m`` of ``target``'s
        position and turned less than ``tol_m`` rad from its orientation."""
        pose = self.tcp_pose(qpos)
        target = np.asarray(target, dtype=np.float64)
        dot = abs(float(np.dot(pose[3:7], target[3:7])))
        angle = 2.0 * float(np.arccos(min(dot, 1.0)))
        return float(np.linalg.norm(pose[:3] - target[:3])) <= tol_m and angle <= tol_m

    def tcp_pose(self, qpos: np.ndarray) -> np.ndarray:
        """World pose [p, wxyz] of the move group's link at ``qpos`` (full joint vector)."""
        q = self.planner.pad_qpos(np.asarray(qpos, np.float64).copy())
        model = self.planner.pinocchio_model
        model.compute_forward_kinematics(q)
        pose = np.asarray(model.get_link_pose(self._ee), dtype=np.float64)
        pose[:3] += self.base_p  # the base is translated, not rotated (ManiSkill tabletop)
        return pose
