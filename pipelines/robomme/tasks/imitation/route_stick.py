"""The Imitation suite's RouteStick task (what the suite's tasks share: ``base.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import sapien

from dataforge.manip.executor import CLOSED, Waypoint
from dataforge.pipelines.robomme import objects
from dataforge.pipelines.robomme.tasks.imitation.base import SWING_Z, _StickTask, pose_of

if TYPE_CHECKING:
    from mani_skill.envs.scene import ManiSkillScene
    from mani_skill.utils.structs import Actor


ROUTE_R = 0.03  # RouteStick.py: the moves' checks use distance_threshold=0.03 ...
ROUTE_Z = 0.15  # ... and z_threshold=self.z_threshold (0.15)
OBSTACLE_HALF = (0.05, 0.015, 0.03)  # RouteStick.py: box half sizes (x is vertical once turned)
ARC_OFFSET = 0.2  # solve_swingonto_withDirection(radius=0.2): the Bezier control's offset
ARC_POINTS = 45  # solve_swingonto_withDirection: IK points along the Bezier curve ...
ARC_REPEATS = 5  # ... then the last one 5 times more, one env step each


def obstacle(scene: ManiSkillScene, name: str, rgb: Sequence[float]) -> Actor:
    """``target_cube_<k>``: a kinematic box (10 cm tall once turned upright), random colour."""
    b = scene.create_actor_builder()
    b.add_box_visual(half_size=list(OBSTACLE_HALF), material=objects.material((*rgb[:3], 1.0)))
    b.add_box_collision(half_size=list(OBSTACLE_HALF))
    b.initial_pose = sapien.Pose()
    return b.build_kinematic(name=name)


class RouteStick(_StickTask):
    """Upstream ``RouteStick.py``: 9 gray ring targets 0.07 m apart on a line through
    (-0.1, 0) along y, turned by U(-30, 30) degrees about the world origin (odd ones sunk to
    z -0.01 under the obstacles ``target_cube_1/3/5/7``); a walk over the even targets of
    2-3/4-5/4-7 moves, each clockwise or counterclockwise. Video: onto the first target (NO
    RECORD), then per move "move to the nearest {left|right} target by circling around the
    stick {clockwise|counterclockwise}" (a quadratic Bezier at 0.07 m whose control point is
    0.2 m off the chord's middle); NO-RECORD strong resets; the same moves in execution. A
    move is done when the tip comes within 3 cm of its target below 0.15 m; then the mean
    cross product of the tip's xy trace (since the last move) against the chord must have
    the move's sign (> 0: clockwise). Failure: a wrong way round, or reaching (1 cm, 0.1 m)
    another target than the expected and the previous one.

    Each move is upstream's 45 IK points and 5 repeats of the last, one env step each (50
    steps). The strong resets hold joint actions, as upstream's: the reset configuration 200
    steps, then the joints recorded on the first target (``swing_qpos``) 30."""

    TASK = "RouteStick"
    STRONG_RESET = 200  # RouteStick.py: solve_strong_reset(timestep=200)
    REACH_R = 0.03  # RouteStick.py step(): highlights use distance_threshold=0.03
    MOVE_R = ROUTE_R
    MOVE_Z = ROUTE_Z

    def build(self) -> None:
        self.build_targets([f"target_{k}" for k in range(9)])
        colors = self.layout["params"]["obstacle_colors"]
        self.obstacles = [obstacle(self.scene, name, rgb) for name, rgb in colors.items()]
        self.build_pools()

    def place(self) -> None:
        self.place_targets()
        for actor in self.obstacles:
            actor.set_pose(pose_of(self.layout["actors"][actor.name]))

    def move_name(self, step: int) -> str:
        """RouteStick.py's task name; left = the next target has the larger y."""
        params = self.layout["params"]
        return (
            f"move to the nearest {params['sides'][step - 1]} target by circling around the "
            f"stick {params['directions'][step - 1]}"
        )

    def move_done(self, step: int) -> str | None:
        """``RouteStick.direction_fail``: the sign of the mean cross product."""
        a = self.target_xy[self.path[step - 1]]
        line = self.target_xy[self.path[step]] - a
        if not self.xy_trace:
            return "no trace of the move"
        rel = np.asarray(self.xy_trace) - a
        mean = float(np.mean(line[0] * rel[:, 1] - line[1] * rel[:, 0]))
        side = "clockwise" if mean > 0 else "counterclockwise" if mean < 0 else "on the line"
        expected = self.layout["params"]["directions"][step - 1]
        return None if side == expected else f"went round the stick {side}, not {expected}"

    def move_waypoints(self, step: int) -> list[Waypoint]:
        """``solve_swingonto_withDirection``: a quadratic Bezier at 0.07 m from where the tip is
        to the next target, its control point 0.2 m off the chord's middle (to the chord's
        left for clockwise, as upstream's sign convention has it), 45 points and the last one
        5 times more, all with the TCP's present orientation, followed one env step per IK
        point. Keyframes as upstream records them: the path is split at half its points (25
        of 50); the first half's keyframe is its last point, the second half's the end."""
        start = self.tip()[:2].astype(np.float32)
        end = self.target_xy[self.path[step]].astype(np.float32)
        chord = end - start
        unit = chord / np.linalg.norm(chord)
        left = np.array([-unit[1], unit[0]])
        sign = 1.0 if self.layout["params"]["directions"][step - 1] == "clockwise" else -1.0
        control = ((start + end) / 2 + sign * ARC_OFFSET * left).astype(np.float32)
        q = self.tcp_quat()
        points = [  # float32 as upstream's curve (numpy < 2 keeps its float32 arrays)
            ((1 - s) ** 2 * start + 2 * (1 - s) * s * control + s**2 * end).astype(np.float32)
            for s in np.linspace(0.0, 1.0, ARC_POINTS)
        ]
        points += [points[-1]] * ARC_REPEATS
        path = tuple(np.array([*xy, SWING_Z, *q]) for xy in points)
        half = len(path) // 2
        keys = ((0, path[half - 1]), (half, path[-1]))
        return [Waypoint(None, CLOSED, noisy=False, path=path, path_keys=keys)]

    def goals(self) -> list[str]:
        """``task_goal.py`` @a3842d1 (two phrasings)."""
        return [
            "Watch the video carefully, then use the stick attached to the robot to navigate "
            "around the sticks on the table, following the same path",
            "watch the video carefully, then use the stick attached to the robot to navigate "
            "around the sticks on the table, following the same path shown in the video",
        ]
