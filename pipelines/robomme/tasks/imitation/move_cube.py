"""The Imitation suite's MoveCube task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import assets, objects, skills
from dataforge.pipelines.robomme.tasks.imitation.base import (
    PEG_LIFT,
    PICKED_Z,
    _Anchor,
    _Imitation,
    angle_px,
    grasp_and_lift,
    pose_of,
    upstream_dict,
    wrap,
)

if TYPE_CHECKING:
    from mani_skill.utils.structs import Actor, Link


START_TCP = np.array([-0.0605, 0.0, 0.5211])  # the TCP at env.START_QPOS (panda_wristcam)
MC_PEG_L, MC_PEG_R = 0.1, 0.01  # MoveCube.py: length 0.1, radius 0.01 (a 20 cm peg)
MC_PEG_RGB = assets.hex_rgb("#EC7357")  # both halves
GOAL_R, GOAL_THICKNESS = 0.04, 0.005  # spawn_random_target(radius=cube_half_size * 2, 0.005)
PUSHED_R = 0.02 * 2 * 1.2  # is_obj_pushed_onto(distance_threshold=cube_half_size * 2 * 1.2)
DROPPED_R = 0.05  # is_obj_dropped_onto
STATIC_STEPS = {"peg_push": 30, "gripper_push": 60, "grasp_putdown": 60}
HOOK_BACK = 0.1  # solve_push_to_target_with_peg: start 10 cm behind the cube ...
HOOK_SIDE = 0.1  # ... and 10 cm to the side (the peg's far link sweeps behind the cube)
HOOK_END = 0.03  # ... and stop 3 cm short of the target
PUSH_BACK = 0.05  # solve_push_to_target: start 5 cm behind the cube, stop a half cube short
TRANSIT_Z = 0.1  # our approach height above a low push start (upstream goes straight)
FINGER_OPEN = 0.02  # is_obj_pushed_onto(must_gripper_open=True): both fingers above 2 cm


def push_frame_quat(direction: np.ndarray, turn_deg: float) -> np.ndarray:
    """The push poses' orientation (``solve_push_to_target`` / ``_with_peg``): the TCP
    pointing down with its x along ``direction`` (xy), from ManiSkill's float32 matrix
    conversion, turned ``turn_deg`` about its z (``quaternion_multiply``: real part made
    non-negative); wxyz, float64."""
    import torch
    from mani_skill.utils.geometry.rotation_conversions import (
        euler_angles_to_matrix,
        matrix_to_quaternion,
        quaternion_multiply,
    )

    x, z = np.array([direction[0], direction[1], 0.0]), np.array([0.0, 0.0, -1.0])
    y = np.cross(z, x)
    y /= np.linalg.norm(y)
    q = matrix_to_quaternion(torch.from_numpy(np.column_stack([x, y, z])).float()[None])[0]
    if turn_deg:
        turn = torch.deg2rad(torch.tensor([0.0, 0.0, turn_deg], dtype=torch.float32))
        half = matrix_to_quaternion(euler_angles_to_matrix(turn, "XYZ")[None])[0]
        q = quaternion_multiply(q[None], half[None])[0]
    return q.numpy().astype(np.float64)


class MoveCube(_Imitation):
    """Upstream ``MoveCube.py`` (difficulty ignored): a straight 20 cm peg ``peg`` (#EC7357),
    the red cube ``fixed_cube``, the purple target ``goal_site``, and the restaging's spawns
    ``goal_site_2``/``fixed_cube_2`` (parked far away; their poses are the restaged ones), all
    at ``layouts/imitation.py``'s poses. The manner (peg_push / gripper_push / grasp_putdown)
    is shown, then "static" (30 / 60 steps), then a NO-RECORD restaging that moves the peg,
    the cube and the target to their second poses; the execution repeats the manner.
    Tasks: peg_push "Pick up the peg" (its tail link) + "Hook the cube to the target with the
    peg"; gripper_push "Close the gripper and push the cube to the target"; grasp_putdown
    "Pick up the cube" + "place the cube onto the target". Checks: a pick = above 0.05 m and
    grasped; push/hook done = the cube within 4.8 cm of the target with the gripper open;
    place done = dropped within 5 cm. Failures (per task, ``failure_func``): peg_push picking
    the cube or the cube reaching the target before the peg is picked; gripper_push picking
    the cube or the peg; grasp_putdown picking the peg or the cube reaching the target before
    the cube is picked.

    The oracle's motions are upstream's (``grasp_and_lift_peg_side``,
    ``solve_push_to_target(_with_peg)``, ``solve_pickup``, ``solve_putonto_whenhold``, the
    strong reset's joint action); ours (``own_*``: pushes from 0.1 m above their start) stand in
    only where a screw motion cannot reach upstream's."""

    TASK = "MoveCube"

    def sample_layout(self) -> dict[str, Any]:
        return upstream_dict(self.TASK, self.episode_seed, self.difficulty)

    def build(self) -> None:
        self.peg = assets.peg(self.scene, "peg", MC_PEG_L, MC_PEG_R, MC_PEG_RGB, MC_PEG_RGB)
        self.goal_sites = [
            assets.ring_target(self.scene, n, GOAL_R, GOAL_THICKNESS, "purple")
            for n in ("goal_site", "goal_site_2")
        ]
        self.cubes = [
            assets.cube(self.scene, n, assets.RGB["red"]) for n in ("fixed_cube", "fixed_cube_2")
        ]
        self.cube, self.goal_site = self.cubes[0], self.goal_sites[0]

    def place(self) -> None:
        actors = self.layout["actors"]
        for actor in (*self.goal_sites, *self.cubes):
            actor.set_pose(pose_of(actors[actor.name]))
        self.peg.set_root_pose(pose_of(self.layout["articulations"]["peg"]))

    def restage(self) -> None:
        """Upstream's ``reset_in_proecess`` teleports: the peg, the cube and the target to
        their second poses, at rest."""
        second = self.layout["params"]["second_poses"]
        self.peg.set_root_pose(pose_of(second["peg"]))
        self.peg.set_root_linear_velocity(np.zeros(3))
        self.peg.set_root_angular_velocity(np.zeros(3))
        self.cube.set_pose(pose_of(second["fixed_cube"]))
        self.cube.set_linear_velocity(np.zeros(3))
        self.cube.set_angular_velocity(np.zeros(3))
        self.goal_site.set_pose(pose_of(second["goal_site"]))

    # -- checks ---------------------------------------------------------------------------
    @property
    def manner(self) -> str:
        return str(self.layout["params"]["manner"])

    def peg_link(self, end: str) -> Link:
        return next(ln for ln in self.peg.links if ln.name.endswith(f"peg_{end}"))

    def picked(self, obj: Actor | Link) -> bool:
        """``is_obj_pickup``: above 0.05 m and grasped."""
        return objects.actor_position(obj)[2] > PICKED_Z and self.is_grasping(obj)

    def peg_picked(self) -> bool:
        return any(self.picked(ln) for ln in self.peg.links)

    def gripper_open(self) -> bool:
        return bool(np.all(self.agent.robot.get_qpos()[0, -2:].cpu().numpy() > FINGER_OPEN))

    def cube_to_goal(self) -> float:
        c = objects.actor_position(self.cube)
        g = objects.actor_position(self.goal_site)
        return float(np.hypot(*(c[:2] - g[:2])))

    def pushed(self, open_gripper: bool) -> bool:
        """``is_obj_pushed_onto``."""
        return self.cube_to_goal() <= PUSHED_R and (not open_gripper or self.gripper_open())

    def dropped(self) -> bool:
        """``is_obj_dropped_onto`` (the video's and the execution's rules)."""
        if self.cube_to_goal() > DROPPED_R or self.is_grasping(self.cube):
            return False
        if self.phase == "video":
            return objects.actor_position(self.cube)[2] <= 0.035
        return objects.actor_position(self.cube)[2] <= 0.2 and self.tcp_position()[2] > 0.05

    def stage_done(self, stage: int) -> bool:
        """The check of the manner's task ``stage`` (0 or 1)."""
        if self.manner == "peg_push":
            return self.peg_picked() if stage == 0 else self.pushed(True)
        if self.manner == "gripper_push":
            return self.pushed(True)
        return self.picked(self.cube) if stage == 0 else self.dropped()

    def stage_failure(self, stage: int) -> str | None:
        """The ``failure_func`` of the manner's task ``stage``."""
        if self.manner == "peg_push" and stage == 0:
            if self.picked(self.cube):
                return "picked up the cube instead of the peg"
            if self.pushed(False):
                return "moved the cube onto the target before picking up the peg"
        elif self.manner == "gripper_push":
            if self.picked(self.cube) or self.peg_picked():
                return "picked something up instead of pushing with the closed gripper"
        elif self.manner == "grasp_putdown" and stage == 0:
            if self.peg_picked():
                return "picked up the peg instead of the cube"
            if self.pushed(False):
                return "pushed the cube onto the target instead of picking it up"
        return None

    @property
    def stages(self) -> int:
        return 1 if self.manner == "gripper_push" else 2

    def reset_task_events(self) -> None:
        self.stage = 0

    def phase_entries(self) -> tuple[int, int]:
        """The manner's tasks and "static" in the video, the manner's tasks after."""
        return self.stages + 1, self.stages

    def entries_passed(self) -> int:
        return self.stage  # "static" is held until the restaging: never passed here

    def advance(self) -> None:
        if self.stage < self.stages and self.stage_done(self.stage):
            self.stage += 1

    def tick_video(self) -> None:
        self.advance()

    def tick_exec(self) -> None:
        if self.stage < self.stages:
            reason = self.stage_failure(self.stage)
            if reason is not None:
                self.failure_reason = reason
                return
        self.advance()
        self.done = self.stage == self.stages

    def demo_over(self) -> bool:
        """The shown manner is complete and the arm is back near its start."""
        near = np.linalg.norm(self.tcp_position() - START_TCP) < 0.03
        return self.stage == self.stages and bool(near)

    # -- texts ----------------------------------------------------------------------------
    def manner_tasks(self) -> list[tuple[str, str, str]]:
        """(name, subgoal_segment, choice_label) of the manner's tasks (MoveCube.py)."""
        if self.manner == "peg_push":
            return [
                ("Pick up the peg", "Pick up the peg at <>", "pick up the peg"),
                (
                    "Hook the cube to the target with the peg",
                    "Hook the cube at <> to the target at <> with the peg",
                    "hook the cube to the target with the peg",
                ),
            ]
        if self.manner == "gripper_push":
            return [
                (
                    "Close the gripper and push the cube to the target",
                    "Close the gripper and push the cube at <> to the target at <>",
                    "close gripper and push the cube to the target",
                )
            ]
        return [
            ("Pick up the cube", "Pick up the cube at <>", "pick up the cube"),
            (
                "place the cube onto the target",
                "place the cube onto the target at <>",
                "place the cube onto the target",
            ),
        ]

    def task_names(self) -> list[str]:
        """Upstream's task list names, "static" and "NO RECORD" included."""
        names = [t[0] for t in self.manner_tasks()]
        return [*names, "static", "NO RECORD", *names]

    def segments(self) -> list[list[np.ndarray]]:
        """The points whose pixels fill each task's ``<>`` (its ``segment`` actors)."""
        cube = objects.actor_position(self.cube)
        goal = objects.actor_position(self.goal_site)
        if self.manner == "peg_push":
            return [[objects.actor_position(self.peg_link("tail"))], [cube, goal]]
        if self.manner == "gripper_push":
            return [[cube, goal]]
        return [[cube], [goal]]

    def goals(self) -> list[str]:
        """``task_goal.py`` @a3842d1 (two phrasings)."""
        return [
            "watch the video carefully, then move the cube to the target in the same manner "
            "as before",
            "watch the video carefully, then move the cube to the target in the same manner "
            "shown in the video",
        ]

    # -- the oracle -----------------------------------------------------------------------
    def pick_peg(self) -> list[Waypoint]:
        """``grasp_and_lift_peg_side`` on the tail link (MoveCube always grasps the tail:
        ``obj_flag`` -1), or where a screw motion cannot reach that, :meth:`own_pick_peg`."""
        return grasp_and_lift(self, self.peg_link("tail")) or self.own_pick_peg()

    def own_pick_peg(self) -> list[Waypoint]:
        """Ours, where upstream's grasp needs RRT: above the tail link at 0.2 m, down (a 1 cm
        stop above it first), close, lift."""
        link = self.peg_link("tail")
        p = objects.actor_position(link)
        p[2] = max(p[2], MC_PEG_R)
        yaw = objects.actor_yaw(link)
        up = np.array([p[0], p[1], PEG_LIFT])
        at = objects.top_grasp(p, yaw)
        return [
            Waypoint(None, OPEN, hold=skills.GRIP_STEPS),
            Waypoint(objects.top_grasp(up, yaw), OPEN),
            # see swing_onto; upstream's one motion down, recorded "close" at the grasp
            Waypoint(objects.top_grasp(p, yaw, 0.01), OPEN, noisy=False, key=CLOSED, key_pose=at),
            Waypoint(at, OPEN, noisy=False, grasp="peg", key=CLOSED),
            Waypoint(None, CLOSED, hold=skills.GRIP_STEPS),
            Waypoint(objects.top_grasp(up, yaw), CLOSED),
        ]

    def push_frame(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Cube xy, target xy, push direction, and its left normal."""
        c = objects.actor_position(self.cube)[:2]
        g = objects.actor_position(self.goal_site)[:2]
        d = (g - c) / np.linalg.norm(g - c)
        return c, g, d, np.array([-d[1], d[0]])

    def push_line(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Upstream's push geometry: the cube's and the target's positions (3-D), the unit push
        direction (xy) and the same as a 3-D vector."""
        cube = self.cube.pose.sp.p.astype(np.float64)
        goal = self.goal_site.pose.sp.p.astype(np.float64)
        d = (goal[:2] - cube[:2]) / np.linalg.norm(goal[:2] - cube[:2])
        return cube, goal, d, np.array([d[0], d[1], 0.0])

    def hook(self) -> list[Waypoint]:
        """``solve_push_to_target_with_peg(direction, obj_flag=-1)``: the TCP pointing down
        with its x along the push turned -90 x ``direction`` degrees (the held peg across the
        push), 0.1 m behind the cube and 0.1 x ``direction`` m to its right, at the cube's
        height (two screw motions there); close (6 steps); sweep to 3 cm short of the target
        with the same side offset; open (6 steps). ``direction``: 1 where the cube lies at
        larger y than the target (MoveCube's ``direction1`` / ``direction2``). Keyframes:
        "close" at the start and the end, "open" there before the gripper opens. Where a
        screw motion cannot reach that, :meth:`own_hook`."""
        cube, goal, d, x = self.push_line()
        direction = 1 if cube[1] - goal[1] > 0 else -1
        quat = push_frame_quat(d, 90.0 * direction * -1)
        lateral = np.array([-d[1], d[0], 0.0], dtype=np.float32).astype(np.float64)
        lateral /= np.linalg.norm(lateral[:2])
        start = cube - x * HOOK_BACK - lateral * HOOK_SIDE * direction
        end = goal - x * HOOK_END
        end[2] = start[2]
        end = end - lateral * HOOK_SIDE * direction
        start_pose, end_pose = np.concatenate([start, quat]), np.concatenate([end, quat])
        if not self.chain_reaches([start_pose, end_pose]):
            return self.own_hook()
        return [
            Waypoint(start_pose, CLOSED),
            Waypoint(start_pose, CLOSED, noisy=False, keyed=False),
            Waypoint(None, CLOSED, hold=skills.TOGGLE_STEPS),
            Waypoint(end_pose, CLOSED, noisy=False),
            Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS, key=OPEN),
        ]

    def own_hook(self) -> list[Waypoint]:
        """Ours, where upstream's sweep needs RRT: the held peg across the push direction,
        its far (head) link behind the cube, from above; sweep to 3 cm short of the target;
        open."""
        c, g, d, left = self.push_frame()
        side = 1.0 if c[1] - g[1] > 0 else -1.0  # MoveCube.evaluate: direction1/2
        z = objects.CUBE_HALF
        axis = side * left  # tail -> head: the head ends behind the cube
        yaw = float(np.arctan2(axis[1], axis[0]))
        start = c - HOOK_BACK * d - HOOK_SIDE * side * left
        end = g - HOOK_END * d - HOOK_SIDE * side * left
        low = objects.top_grasp(np.array([*start, z]), yaw)
        return [  # keyframes: "close" at the low start (both moves), at the end; "open" there
            Waypoint(objects.top_grasp(np.array([*start, TRANSIT_Z]), yaw), CLOSED, key_pose=low),
            Waypoint(low, CLOSED, noisy=False),
            Waypoint(objects.top_grasp(np.array([*end, z]), yaw), CLOSED, noisy=False),
            Waypoint(None, OPEN, hold=skills.GRIP_STEPS, key=OPEN),
        ]

    def gripper_push(self) -> list[Waypoint]:
        """``solve_push_to_target``: open (6 steps); the TCP pointing down with its x along
        the push (turned half a round about z when the target lies at smaller x), straight to
        5 cm behind the cube at the cube's height; close (6 steps); push to half a cube short
        of the target; open (6 steps). Keyframes: "close" at the start and the end, "open"
        there before the gripper opens. Where a screw motion cannot reach that (upstream
        falls back to RRT), :meth:`own_gripper_push`."""
        cube, goal, d, x = self.push_line()
        quat = push_frame_quat(d, 180.0 if goal[0] < cube[0] else 0.0)
        start = cube - x * PUSH_BACK
        end = goal - x * objects.CUBE_HALF
        end[2] = start[2]
        start_pose, end_pose = np.concatenate([start, quat]), np.concatenate([end, quat])
        if not self.chain_reaches([start_pose, end_pose]):
            return self.own_gripper_push()
        return [
            Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS),
            Waypoint(start_pose, OPEN, noisy=False, key=CLOSED),
            Waypoint(None, CLOSED, hold=skills.TOGGLE_STEPS),
            Waypoint(end_pose, CLOSED, noisy=False),
            Waypoint(None, OPEN, hold=skills.TOGGLE_STEPS, key=OPEN),
        ]

    def own_gripper_push(self) -> list[Waypoint]:
        """Ours, where upstream's push needs RRT: the same frame, 5 cm behind the cube from
        above (0.1 m higher first); close; push; open."""
        c, g, d, _ = self.push_frame()
        yaw = float(np.arctan2(d[1], d[0])) + (np.pi if g[0] < c[0] else 0.0)
        yaw = wrap(yaw)
        z = objects.CUBE_HALF
        start = c - PUSH_BACK * d
        end = g - objects.CUBE_HALF * d
        low = objects.top_grasp(np.array([*start, z]), yaw)
        above = objects.top_grasp(np.array([*start, TRANSIT_Z]), yaw)
        return [  # keyframes: "close" at the low start (recorded before the move), at the end;
            # "open" there before the gripper opens
            Waypoint(None, OPEN, hold=skills.GRIP_STEPS),
            Waypoint(above, OPEN, key=CLOSED, key_pose=low),
            Waypoint(low, OPEN, noisy=False, key=CLOSED),
            Waypoint(None, CLOSED, hold=skills.GRIP_STEPS),
            Waypoint(objects.top_grasp(np.array([*end, z]), yaw), CLOSED, noisy=False),
            Waypoint(None, OPEN, hold=skills.GRIP_STEPS, key=OPEN),
        ]

    def stage_waypoints(self, stage: int) -> list[Waypoint]:
        if self.manner == "peg_push":
            return self.pick_peg() if stage == 0 else self.hook()
        if self.manner == "gripper_push":
            return self.gripper_push()
        if stage == 0:
            return skills.pick(self, self.cube)
        return skills.put_onto(self, objects.actor_position(self.goal_site))

    def strong_reset(self) -> list[Waypoint]:
        """The NO-RECORD strong reset (``skills.strong_reset``), then wait for the restaging."""
        return [*skills.strong_reset(), self.restaged(OPEN)]

    def segment_names(self) -> list[list[str]]:
        """Upstream's ``segment`` of each task (the peg: its grasped link, the tail)."""
        cube, goal = self.cube.name, self.goal_site.name
        if self.manner == "peg_push":
            return [[f"{self.peg.name}/peg_tail"], [cube, goal]]
        if self.manner == "gripper_push":
            return [[cube, goal]]
        return [[cube], [goal]]

    def demonstrate(self, video: bool) -> Iterator[Subgoal]:
        for stage, (name, segment, choice) in enumerate(self.manner_tasks()):
            points = self.segments()[stage]
            grounded = segment
            for p in points:
                grounded = grounded.replace("<>", angle_px(self, p), 1)
            wps = self.stage_waypoints(stage)
            yield self.subgoal(
                name,
                grounded,
                wps,
                video=video,
                choice=choice,
                segment=self.segment_names()[stage],
                anchor=cast(_Anchor, lambda s=stage: self.segments()[s][0]) if points else None,
            )

    def plan(self) -> Iterator[Subgoal]:
        yield from self.demonstrate(video=True)
        hold = skills.hold_obj(STATIC_STEPS[self.manner])
        yield self.subgoal("static", "static", hold, video=True)
        yield self.no_record(self.strong_reset())
        yield from self.demonstrate(video=False)
