"""The Imitation suite's InsertPeg task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, OPEN, Subgoal, Waypoint
from dataforge.pipelines.robomme import assets, objects, skills
from dataforge.pipelines.robomme.env import PARK_Z
from dataforge.pipelines.robomme.placement import obb2d_intersect, rot2
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
    from mani_skill.envs.scene import ManiSkillScene
    from mani_skill.utils.structs import Actor, Articulation, Link


AXIS_Z = [np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0]  # a cylinder's x axis turned onto z
START_Z = 0.25  # InsertPeg restages once the TCP is above this - 2 cm (the strong reset lifts it)
PEG_L, PEG_R = 0.05, 0.01  # InsertPeg.py: length 0.05, radius 0.01 (each link 5 cm, 2 cm square)
PEG_LIFTED = 0.1  # is_A_pickup_notB: the grasped link above 0.1 m
INSERT_NEAR = 0.05  # is_A_insert_notB: threashold
INSERT_DEPTH = 0.02  # the oracle stops the inserted link's centre this far short of the box's
# insert_peg: the approach starts 0.15 m back along the hole axis (ours: nearer where the arm
# cannot reach that far) ...
PRE_INSERTS = (0.15, 0.1, 0.07)
PRE_INSERT_UP = 0.15  # ... and this high above the hole
HAND_HALF_XY = (0.032 + 0.004, 0.104 + 0.004)  # panda_hand's collision mesh (+4 mm), TCP frame
BOX_HALF_XY = (0.05, 0.04)  # assets.box_with_hole: half depth along x, outer half along y
GRASP_SHIFTS = (0.0, 0.005, -0.005, 0.01, -0.01, 0.015, -0.015)  # along the grasped link
GRASP_TURNS = (0.0, 0.1, -0.1, 0.2, -0.2)  # yaw off the link's (rad)
FINGER_OUT = 0.04 + 0.013  # an open finger's centre from the TCP, along the closing axis
FINGER_HALF_XY = (0.0105 + 0.002, 0.0132 + 0.002)  # finger.stl's footprint (+2 mm)
LINK_HALF_XY = (PEG_L / 2, PEG_R)  # a peg link: 5 cm long, 2 cm square
INSERT_Z = 0.04  # the box's centre height (box_with_hole at z = radius * 4)
INSERT_RETREAT = 0.05  # insert_peg: back off 5 cm along the axis after the insertion
RESET_STATIC = 100  # InsertPeg.py: the second NO-RECORD entry's static_check steps
HOLE_MARK_RED = 20  # InsertPeg.step: the hole marker is red for 20 steps after an insertion
HOLE_MARK = (0.015, 0.055)  # highlight_obj(disk_radius=0.015, disk_half_length=0.055)


def rotate(q: np.ndarray, v: np.ndarray | Sequence[float]) -> np.ndarray:
    """Rotate vector ``v`` by the wxyz quaternion ``q``."""
    w, u = q[0], np.asarray(q[1:], dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def hole_marker(scene: ManiSkillScene, name: str, rgb: Sequence[float]) -> Actor:
    """Upstream's box highlight (a vertical cylinder r 1.5 cm, 11 cm tall, 1 cm below the box
    centre), one actor per colour (#FFD289, red), kinematic and visual only."""
    b = scene.create_actor_builder()
    b.add_cylinder_visual(
        radius=HOLE_MARK[0],
        half_length=HOLE_MARK[1],
        material=objects.material((*rgb[:3], 1.0)),
        pose=sapien.Pose(q=AXIS_Z),
    )
    b.initial_pose = sapien.Pose(p=[0.0, 0.0, PARK_Z])
    return b.build_kinematic(name=name)


class InsertPeg(_Imitation):
    """Upstream ``InsertPeg.py`` (difficulty ignored): three identical pegs ``peg_0..2``
    (two 5 cm links, head colour random, tail = 1 - head) and ``box_with_hole`` (#FFD289, the
    hole along its x axis), all at ``layouts/imitation.py``'s poses; the goal peg is
    ``peg_0``, grasped by its head or tail link ("near"/"far": the link nearer the robot's
    base in x) and inserted with the other link from the left (+y) or right (-y) side. Video:
    "Pick up the peg by grasping the {near|far} end", "Insert the peg from the {side} side of
    the box"; NO-RECORD restaging (pegs back to their initial poses); execution: the same
    pick, then "Insert the peg from the {side} side". Checks (``subgoal_evaluate_func.py``):
    a pick = the grasped link above 0.1 m and the TCP nearer to it than to the other link;
    an insertion = the inserted link within 5 cm of the box centre, nearer than the grasped
    one, with the TCP on the stated side; success 3 steps after the insertion. Failures in
    execution: the wrong end picked or inserted, the other side, another peg picked up.

    Departs from upstream: the first NO-RECORD entry also releases the peg and rises before
    the strong reset (upstream's strong reset opens the gripper in place); the insertion
    approach is our own straight-line waypoints (upstream composes the TCP pose
    from the box's and the link's frames); all failure checks apply during the whole
    execution phase rather than per task-list entry."""

    TASK = "InsertPeg"

    def sample_layout(self) -> dict[str, Any]:
        return upstream_dict(self.TASK, self.episode_seed, self.difficulty)

    def build(self) -> None:
        params = self.layout["params"]
        head, tail = tuple(params["head_color"]), tuple(params["tail_color"])
        self.pegs = [assets.peg(self.scene, f"peg_{k}", PEG_L, PEG_R, head, tail) for k in range(3)]
        self.box = assets.box_with_hole(self.scene)
        box_rgb = assets.hex_rgb(assets.BOX_COLOR_HEX)
        self.marks = [
            hole_marker(self.scene, "box_highlight", box_rgb),
            hole_marker(self.scene, "box_highlight_red", (1.0, 0.0, 0.0)),
        ]

    def place(self) -> None:
        self.box.set_pose(pose_of(self.layout["actors"]["box_with_hole"]))
        self.restage()

    def restage(self) -> None:
        """The pegs at their initial poses, at rest (upstream's ``reset_in_proecess``)."""
        for peg in self.pegs:
            peg.set_root_pose(pose_of(self.layout["articulations"][peg.name]))
            peg.set_root_linear_velocity(np.zeros(3))
            peg.set_root_angular_velocity(np.zeros(3))

    # -- geometry -------------------------------------------------------------------------
    def link(self, peg: Articulation, end: str) -> Link:
        return next(ln for ln in peg.links if ln.name.endswith(f"peg_{end}"))

    @property
    def ends(self) -> tuple[str, str]:
        """(grasped, inserted) link names: obj_flag -1 grasps the head."""
        grasp = self.layout["params"]["grasp_end"]
        return grasp, ("tail" if grasp == "head" else "head")

    @property
    def direction(self) -> int:
        """InsertPeg.py: left -> -1, right -> 1; the TCP ends on the side y * direction < 0."""
        return -1 if self.layout["params"]["insert_side"] == "left" else 1

    def pos(self, obj: Actor | Link) -> np.ndarray:
        return objects.actor_position(obj)

    def picked_up(self, a: Link, b: Link) -> bool:
        """``is_A_pickup_notB``."""
        tcp = self.tcp_position()
        pa, pb = self.pos(a), self.pos(b)
        return pa[2] > PEG_LIFTED and np.linalg.norm(pa - tcp) < np.linalg.norm(pb - tcp)

    def inserted(self, a: Link, b: Link, direction: int | None) -> bool:
        """``is_A_insert_notB``."""
        box = self.pos(self.box)
        pa, pb = self.pos(a), self.pos(b)
        da, db = np.linalg.norm(pa - box), np.linalg.norm(pb - box)
        if not (da < INSERT_NEAR and da < db):
            return False
        if direction is None:
            return True
        side = self.tcp_position()[1] - box[1]
        if abs(side) < 1e-3:
            side = pb[1] - box[1]
        return side * direction < 0

    def other_peg_picked(self) -> bool:
        return any(
            self.pos(ln)[2] > PICKED_Z and self.is_grasping(ln)
            for peg in self.pegs[1:]
            for ln in peg.links
        )

    # -- events ---------------------------------------------------------------------------
    def reset_task_events(self) -> None:
        self.insert_step: int | None = None  # the last step the insertion check held
        self.success_at: int | None = None
        self.stage = 0  # this phase's pick (1) and insertion (2) checks passed
        if self.phase == "video":
            self.video_inserted = False

    def phase_entries(self) -> tuple[int, int]:
        return 2, 2

    def entries_passed(self) -> int:
        return self.stage

    def follow_stage(self, grasp: Link, insert: Link) -> None:
        """The pick entry (``is_A_pickup_notB``), then the insertion's (``self.insert_step``
        set at this step)."""
        if self.stage == 0 and self.picked_up(grasp, insert):
            self.stage = 1
        elif self.stage == 1 and self.insert_step == self.t:
            self.stage = 2

    def mark_hole(self) -> None:
        """Upstream ``step()``: the box's marker, red for 20 steps after an insertion."""
        red = self.insert_step is not None and self.t <= self.insert_step + HOLE_MARK_RED
        box = self.pos(self.box)
        shown, hidden = (self.marks[1], self.marks[0]) if red else self.marks
        shown.set_pose(sapien.Pose(p=[float(box[0]), float(box[1]), float(box[2]) - 0.01]))
        hidden.set_pose(self.park_pose())

    def tick_video(self) -> None:
        grasp, insert = (self.link(self.pegs[0], e) for e in self.ends)
        if self.inserted(insert, grasp, self.direction):
            self.insert_step = self.t
            self.video_inserted = True
        self.follow_stage(grasp, insert)
        self.mark_hole()

    def tick_exec(self) -> None:
        grasp, insert = (self.link(self.pegs[0], e) for e in self.ends)
        if self.inserted(insert, grasp, self.direction):
            self.insert_step = self.t
            if self.success_at is None:  # the task list's last entry done: success at once
                self.success_at = self.t
        self.follow_stage(grasp, insert)
        self.mark_hole()
        if self.picked_up(insert, grasp):
            self.failure_reason = "picked up the peg by the other end"
        elif self.inserted(grasp, insert, None):
            self.failure_reason = "inserted the wrong end of the peg"
        elif self.inserted(insert, grasp, -self.direction):
            self.failure_reason = "inserted the peg from the other side"
        elif self.other_peg_picked():
            self.failure_reason = "picked up another peg"
        self.done = self.success_at is not None and self.t >= self.success_at

    def demo_over(self) -> bool:
        free = not any(self.is_grasping(ln) for peg in self.pegs for ln in peg.links)
        return self.video_inserted and free and self.tcp_position()[2] > START_Z - 0.02

    # -- texts ----------------------------------------------------------------------------
    def task_names(self) -> list[str]:
        """Upstream's task list (InsertPeg.py ``_initialize_episode``), NO-RECORD entries
        included."""
        p = self.layout["params"]
        pick = f"Pick up the peg by grasping the {p['grasp_end_distance']} end"
        side = p["insert_side"]
        return [
            pick,
            f"Insert the peg from the {side} side of the box",
            "NO RECORD",
            "NO RECORD",
            pick,
            f"Insert the peg from the {side} side",
        ]

    def goals(self) -> list[str]:
        """``task_goal.py`` @a3842d1 (two phrasings)."""
        return [
            "watch the video carefully, then grasp the same end of the same peg you've picked "
            "before and insert it into the same side of the box",
            "watch the video carefully, then grasp the same peg at the same end and insert it "
            "into the same side of the box as in the video",
        ]

    # -- the oracle -----------------------------------------------------------------------
    def grasp_waypoints(self) -> list[Waypoint]:
        """``grasp_and_lift_peg_side`` (:func:`grasp_and_lift`); where a screw motion cannot
        reach that (upstream falls back to RRT), :meth:`own_grasp`."""
        link = self.link(self.pegs[0], self.ends[0])
        return grasp_and_lift(self, link) or self.own_grasp()

    def own_grasp(self) -> list[Waypoint]:
        """Ours, where upstream's grasp needs RRT: above the grasped link at 0.2 m, down onto
        :meth:`grasp_point` (TCP x along the peg), close, lift to 0.2 m."""
        link = self.link(self.pegs[0], self.ends[0])
        p, yaw = self.grasp_point(link)
        at = objects.top_grasp(p, yaw)
        return [
            Waypoint(None, OPEN, hold=skills.GRIP_STEPS),
            Waypoint(objects.top_grasp(np.array([p[0], p[1], PEG_LIFT]), yaw), OPEN),
            # see swing_onto; upstream's one motion down, recorded "close" at the grasp
            Waypoint(objects.top_grasp(p, yaw, 0.01), OPEN, noisy=False, key=CLOSED, key_pose=at),
            Waypoint(at, OPEN, noisy=False, grasp="peg", key=CLOSED),
            Waypoint(None, CLOSED, hold=skills.GRIP_STEPS),
            Waypoint(objects.top_grasp(np.array([p[0], p[1], PEG_LIFT]), yaw), CLOSED),
        ]

    def grasp_point(self, link: Link) -> tuple[np.ndarray, float]:
        """The grasp point and yaw: the link's centre and its yaw (upstream's grasp), or the
        nearest of the points up to 1.5 cm along the link and yaws up to 0.2 rad off where the
        hand keeps off the box and the open fingers off the other links. The box is 8 cm tall
        and the hand's underside 3.7 cm above the fingertips' centre: a hand over the box, or
        a finger set down on a neighbouring peg, stops the grasp on the peg's top edge, where
        the peg then slips out (upstream grasps the centre wherever the neighbours are)."""
        p = self.pos(link)
        p[2] = max(p[2], PEG_R)
        yaw = objects.actor_yaw(link)
        axis = np.array([np.cos(yaw), np.sin(yaw)])  # along the link; the fingers close across
        box = self.pos(self.box)
        obstacles = [(box[:2], rot2(objects.actor_yaw(self.box)), np.array(BOX_HALF_XY))]
        fingers_off = [
            (self.pos(ln)[:2], rot2(objects.actor_yaw(ln)), np.array(LINK_HALF_XY))
            for peg in self.pegs
            for ln in peg.links
            if ln is not link
        ]
        for _cost, s, turn in sorted(
            (abs(s) / 0.01 + abs(turn) / 0.1, s, turn) for s in GRASP_SHIFTS for turn in GRASP_TURNS
        ):
            xy = p[:2] + s * axis
            rot = rot2(yaw + turn)
            hand = (xy, rot, np.array(HAND_HALF_XY))
            fingers = [
                (xy + side * FINGER_OUT * rot[:, 1], rot, np.array(FINGER_HALF_XY))
                for side in (1.0, -1.0)
            ]
            if any(obb2d_intersect(hand, o) for o in obstacles) or any(
                obb2d_intersect(f, o) for f in fingers for o in fingers_off
            ):
                continue
            return np.array([xy[0], xy[1], p[2]]), yaw + turn
        return p, yaw

    def held_offset(self) -> tuple[np.ndarray, np.ndarray]:
        """The inserted link's centre and the peg's direction (grasped -> inserted link), both
        in the TCP frame, as the peg sits in the hand now."""
        tcp = self.agent.tcp.pose.raw_pose[0].cpu().numpy().astype(np.float64)
        inv = np.array([tcp[3], -tcp[4], -tcp[5], -tcp[6]])
        grasp, insert = (self.pos(self.link(self.pegs[0], e)) for e in self.ends)
        return rotate(inv, insert - tcp[:3]), rotate(inv, insert - grasp)

    @property
    def obj_flag(self) -> int:
        """InsertPeg.py's ``obj_flag``: -1 when the head is grasped, 1 the tail."""
        return -1 if self.ends[0] == "head" else 1

    def insert_target(self, offset: Sequence[float]) -> Callable[[], np.ndarray]:
        """``insert_peg``'s target for ``offset``, computed when the motion starts: the TCP
        pose that puts the inserted link where the box is (box * link^-1 * tcp), turned half
        a round about z for a head grasp and again for the left side, moved by ``offset`` in
        that frame (a tail grasp inserted from the left adds the link's x in the TCP frame to
        a negative offset)."""

        def target() -> np.ndarray:
            insert = self.link(self.pegs[0], self.ends[1])
            box, link, tcp = (x.pose.sp for x in (self.box, insert, self.agent.tcp))
            pose = box * link.inv() * tcp
            if self.obj_flag == -1:
                pose = pose * sapien.Pose(q=[0, 0, 0, 1])
            if self.direction == -1:
                pose = pose * sapien.Pose(q=[0, 0, 0, 1])
            off = np.asarray(offset, dtype=np.float32).copy()
            if self.obj_flag == 1 and self.direction == -1 and off[0] < 0:
                off[0] += np.float32((link.inv() * tcp).p[0])
            goal = pose * sapien.Pose(off.tolist())
            return np.concatenate([goal.p, goal.q]).astype(np.float64)

        return target

    def insert_waypoints(self) -> list[Waypoint]:
        """``insert_peg``: 0.2 m back and 0.15 m below the aligned pose (in its frame), 0.2 m
        back, 0.15 m back, then 0.05 m through (the execution's last motion "with break" is
        not cut short in upstream's recorded runs: its ``end_steps`` test never fires there;
        the harness stops after it). Keyframes ("close"): the first two and the last. Where
        a screw motion cannot reach that chain from here (upstream falls back to RRT),
        :meth:`own_insert`."""
        sign = -self.obj_flag  # obj -1: +0.2 / +0.15; obj 1: -0.2 / -0.15
        steps = [[0.2 * sign, 0, -0.15], [0.2 * sign, 0, 0], [0.15 * sign, 0, 0], [-0.05, 0, 0]]
        targets = [self.insert_target(o) for o in steps]
        if not self.chain_reaches(targets):
            return self.own_insert()
        return [
            Waypoint(targets[0], CLOSED),
            Waypoint(targets[1], CLOSED, noisy=False),
            Waypoint(targets[2], CLOSED, noisy=False, keyed=False),
            Waypoint(targets[3], CLOSED, noisy=False),
        ]

    def own_insert(self) -> list[Waypoint]:
        """Ours: the held peg turned onto the hole's axis on the stated side, 0.15 m
        (or less) back and 0.15 m up; down; in until the inserted link's centre is 2 cm short
        of the box's; back off 5 cm. The TCP poses come from where the peg sits in the hand
        (upstream: from the link's pose relative to the TCP, ``insert_peg``)."""
        box = self.pos(self.box)
        axis = rotate(self.box.pose.q[0].cpu().numpy().astype(np.float64), [1.0, 0.0, 0.0])
        u = np.array([axis[0], axis[1]]) / np.hypot(axis[0], axis[1])
        if u[1] * self.direction > 0:
            u = -u  # the TCP ends on the side y * direction < 0
        offset, along = self.held_offset()
        # pointing down, the TCP frame maps (x, y) to the world's (x, -y) turned by the yaw:
        # turn the peg's direction onto -u (towards the box)
        yaw = wrap(float(np.arctan2(-u[1], -u[0]) - np.arctan2(-along[1], along[0])))

        def at(back: float, up: float) -> np.ndarray:
            centre = np.array([*(box[:2] + (INSERT_DEPTH + back) * u), INSERT_Z + up])
            pose = objects.top_grasp(centre, yaw)
            pose[:3] -= rotate(pose[3:], offset)
            return pose

        for back in PRE_INSERTS:  # the first approach distance the arm reaches
            poses = [at(back, PRE_INSERT_UP), at(back, 0.01), at(back, 0.0), at(0.0, 0.0)]
            if self.chain_reaches(poses):
                break
        # the low approach twice: a long screw motion ends up to ~2 cm off its goal. Keyframes
        # ("close"): back and up, back (both low approaches), none for the insertion, the retreat
        return [
            Waypoint(poses[0], CLOSED),
            Waypoint(poses[1], CLOSED, noisy=False, key_pose=poses[2]),
            Waypoint(poses[2], CLOSED, noisy=False),
            Waypoint(poses[3], CLOSED, noisy=False, keyed=False),
            Waypoint(at(INSERT_RETREAT, 0.0), CLOSED, noisy=False),
        ]

    def plan(self) -> Iterator[Subgoal]:
        names = self.task_names()
        choice_insert = f"insert the peg from the {self.layout['params']['insert_side']} side"
        for video, (pick, insert) in ((True, names[:2]), (False, names[4:])):
            link = self.link(self.pegs[0], self.ends[0])
            yield self.subgoal(
                pick,
                f"{pick} at {angle_px(self, self.pos(link))}",
                self.grasp_waypoints(),
                video=video,
                choice="pick up the peg by grasping one end",
                segment=[f"{self.pegs[0].name}/peg_{self.ends[0]}"],  # the grasped link
                anchor=cast(_Anchor, lambda link=link: self.pos(link)),
            )
            wps = self.insert_waypoints()
            yield self.subgoal(
                insert,
                f"{insert} at {angle_px(self, self.pos(self.box))}",
                wps,
                video=video,
                choice=choice_insert,
                segment=[self.box.name],
                anchor=lambda: self.pos(self.box),
            )
            if video:  # solve_strong_reset, then solve_hold_obj(static_steps=100)
                yield self.no_record([*skills.strong_reset(), self.restaged(OPEN)])
                yield self.no_record(skills.hold_obj(RESET_STATIC))
