"""Comparing RoboMME layouts with the upstream-recorded fixtures (tests/pipelines/robomme/
fixtures/): one place for what "the same initial scene" means, used by the layout tests of the
four suites and by the CPU-path tests.

Tolerance (issue 21): 1 mm and 0.01 rad for poses; floats of task attributes within 1e-5 (the
fixture rounds to 6 decimals). A fixture record holds ``actors`` and ``articulations`` (world
poses ``[x, y, z, qw, qx, qy, qz]``) and ``attrs`` (task-level facts the env exposes).
"""

from __future__ import annotations

import math
from typing import Any

from dataforge.pipelines.robomme.layouts import UpstreamLayout

SCENE_ACTORS = frozenset({"table-workspace", "ground"})  # TableSceneBuilder, not in a layout
ROBOTS = frozenset({"panda_wristcam", "panda_stick"})
POS_TOL, ANGLE_TOL = 1e-3, 0.01  # m, rad
FLOAT_TOL = 1e-5
QPOS_TOL = 1e-4


def angle(q1: list[float], q2: list[float]) -> float:
    """Rotation angle between two wxyz quaternions, sign-invariant."""
    n1 = math.sqrt(sum(v * v for v in q1))
    n2 = math.sqrt(sum(v * v for v in q2))
    dot = abs(sum(a * b for a, b in zip(q1, q2, strict=True))) / (n1 * n2)
    return 2 * math.acos(min(1.0, dot))


def close(ours: list[float], theirs: list[float]) -> bool:
    """Two poses (or positions) within the tolerance."""
    return math.dist(ours[:3], theirs[:3]) <= POS_TOL and (
        len(theirs) < 7 or angle(list(ours[3:]), list(theirs[3:])) <= ANGLE_TOL
    )


def same(want: Any, got: Any) -> bool:
    """Equal, floats within :data:`FLOAT_TOL`."""
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(want) == len(got) and all(same(a, b) for a, b in zip(want, got, strict=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(same(want[k], got[k]) for k in want)
    if isinstance(want, float) or isinstance(got, float):
        return isinstance(want, (int, float)) and abs(want - got) <= FLOAT_TOL
    return want == got


def _pose_errors(kind: str, expected: dict[str, list[float]], got: dict[str, Any]) -> list[str]:
    if list(expected) != list(got):
        return [f"{kind} names/order: upstream {list(expected)} vs ours {list(got)}"]
    errors = []
    for name, exp in expected.items():
        ours = list(got[name])
        if not close(ours, exp):
            dist, turn = math.dist(exp[:3], ours[:3]), angle(exp[3:], ours[3:])
            errors.append(f"{kind} {name}: {dist * 1000:.2f} mm, {turn:.4f} rad ({exp} vs {ours})")
    return errors


def pose_errors(record: dict[str, Any], ours: UpstreamLayout) -> list[str]:
    """Actors, non-robot articulations (roots) and the robot's qpos against ``record``."""
    actors = {k: v for k, v in record["actors"].items() if k not in SCENE_ACTORS}
    arts = record.get("articulations", {})
    roots = {k: v["root"] for k, v in arts.items() if k not in ROBOTS}
    errors = _pose_errors("actor", actors, ours.actors)
    errors += _pose_errors("articulation", roots, ours.articulations)
    robot = [v["qpos"] for k, v in arts.items() if k in ROBOTS]
    if robot and any(abs(a - b) > QPOS_TOL for a, b in zip(robot[0], ours.robot_qpos, strict=True)):
        errors.append(f"robot qpos {robot[0]} vs {list(ours.robot_qpos)}")
    return errors


# -- task-level facts: counting and permanence suites (env attributes our params determine) ---


def expected_attrs(task: str, layout: UpstreamLayout) -> dict[str, Any]:
    """The upstream env attributes (fixture ``attrs``) our params determine (counting and
    permanence tasks)."""
    p = layout.params
    recovery = p.get("recovery")
    out: dict[str, Any] = {"fail_grasp_task_index": recovery["task_index"] if recovery else None}
    if task in ("PickXtimes", "SwingXtimes"):
        out.update(
            num_repeats=p["repeats"],
            target_color_name=p["goal_colour"],
            target_cube=p["goal_cube"],
            all_cubes=p["cubes"],
        )
    if task == "SwingXtimes":
        out.update(
            target_left=p["target_left"],
            target_right=p["target_right"],
            max_swings=2 * p["repeats"],
        )
    if task == "BinFill":
        out.update(
            dynamic=p["streaming"],
            all_cubes=p["cubes"],
            binfill_language_sequence=[[c, p["targets"][c]] for c in p["subgoal_colour_order"]],
        )
        for colour in ("red", "blue", "green"):
            out[f"{colour}_cubes_spawn_number"] = p["spawns"][colour]
            out[f"{colour}_cubes_target_number"] = p["targets"][colour]
    if task == "StopCube":
        out.update(
            interval=p["interval"],
            move_interval=p["pass_steps"],
            stop_time=p["visit"],
            steps_press=p["steps_press"],
            stop_time_range=p["stop_step_range"],
            start_pos_xy=p["line_start"],
            end_pos_xy=p["line_end"],
        )
    if task in ("VideoUnmask", "ButtonUnmask"):
        out.update(color_names=p["colour_names"], spawned_bins=p["bins"])
    if task == "ButtonUnmask":
        out["num_repeats"] = p["unused_repeats"]
    if task in ("VideoUnmaskSwap", "ButtonUnmaskSwap"):
        out.update(
            color_names=p["colour_names"],
            selected_bin_indices=p["selected_bin_indices"],
            cube_bin_indices=p["selected_bin_indices"],
            pick_times=p["pick_times"],
            swap_times=p["swap_times"],
            target_bin=p["target_bin"],
            target_bin_1=p["target_bins"][0],
            target_bin_2=p["target_bins"][1],
        )
    return out


def attr_errors(record: dict[str, Any], layout: UpstreamLayout) -> list[str]:
    """Counting and permanence tasks: recorded attributes our params must reproduce."""
    attrs = record.get("attrs", {})
    errors = [
        f"attr {key}: upstream {attrs[key]!r}, ours {value!r}"
        for key, value in expected_attrs(record["task"], layout).items()
        if key in attrs and not same(attrs[key], value)
    ]
    schedule = attrs.get("swap_schedule")
    if (
        schedule is not None
        and [s[0] for s in schedule] != layout.params["swap_first_bins"][: len(schedule)]
    ):
        errors.append(f"swap_schedule {schedule} vs {layout.params['swap_first_bins']}")
    return errors


# -- task-level facts: reference and imitation suites ----------------------------------------


def _moves(task_list: list[str]) -> list[str]:
    """The video half of a stick task's list: the names before the first NO RECORD reset."""
    names = task_list[1:]
    return names[: names.index("NO RECORD")]


def param_pairs(task: str, p: dict[str, Any], a: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(ours, upstream) pairs that must be equal for one record (reference and imitation)."""
    if task == "MoveCube":
        second = p["second_poses"]
        return [
            (p["manner"], a["way"]),
            (close(second["fixed_cube"], a["cube_init_pose_2"]), True),
            (close(second["peg"], a["peg_init_poses_2"][0]), True),
            (close(second["goal_site"], a["goal_site_2_pose_p"][0]), True),
        ]
    if task == "InsertPeg":
        return [
            (p["grasp_end"], "head" if a["obj_flag"] == -1 else "tail"),
            (p["grasp_end_distance"], a["grasp_target_distance"]),
            (p["insert_side"], a["insert_way"]),
        ]
    if task == "PatternLock":
        moves = [f"move {d}" for d in p["directions"]]
        return [(p["path_targets"], a["selected_buttons"]), (moves, _moves(a["task_list"]))]
    if task == "RouteStick":
        moves = [
            f"move to the nearest {side} target by circling around the stick {spin}"
            for side, spin in zip(p["sides"], p["directions"], strict=True)
        ]
        return [
            (p["route_targets"], a["selected_buttons"]),
            (p["directions"], a["swing_directions"]),
            (moves, _moves(a["task_list"])),
        ]
    if task == "PickHighlight":
        return [
            (p["highlighted"], a["target_cube_names"]),
            (p["cube_colors"], a["all_cube_colors"]),
        ]
    if task == "VideoRepick":
        return [
            (p["repeats"], a["num_repeats"]),
            (p["swaps"], a["swap_times"]),
            (p["goal_cube"], a["target_cube_1"]),
            (p["swap_first"], [entry[0] for entry in a.get("swap_schedule") or []]),
        ]
    swap = [name for name in (a["swap_target_a"], a["swap_target_b"]) if name]
    pairs = [
        (p["goal_cube"], a["target_cube"]),
        (p["answer_target"], a["target_target"]),
        (p["swap_targets"], swap),
    ]
    if task == "VideoPlaceButton":
        return [*pairs, (p["answer_relation"], a["target_target_language"])]
    return [
        *pairs,
        (p["visit_order"], a["which_targets_to_pick"]),
        (p["answer_index"], a["which_in_subset"]),
        (2 * p["press_after_placement"], a["button_task_index"]),
    ]


def param_errors(record: dict[str, Any], layout: UpstreamLayout) -> list[str]:
    """Reference and imitation tasks: the (ours, upstream) pairs that differ."""
    pairs = param_pairs(record["task"], layout.params, record["attrs"])
    return [f"params: ours {o!r}, upstream {t!r}" for o, t in pairs if o != t]


PARAM_TASKS = frozenset(
    {
        "MoveCube",
        "InsertPeg",
        "PatternLock",
        "RouteStick",
        "PickHighlight",
        "VideoRepick",
        "VideoPlaceButton",
        "VideoPlaceOrder",
    }
)


def layout_errors(record: dict[str, Any], layout: UpstreamLayout) -> list[str]:
    """Every difference between a fixture record and a layout of its task (poses and
    task-level facts), or an error recorded instead of a scene."""
    if "error" in record:
        return [f"upstream could not lay it out: {record['error']}"]
    facts = param_errors if record["task"] in PARAM_TASKS else attr_errors
    return pose_errors(record, layout) + facts(record, layout)


def record_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Differences between two recordings of one record beyond the tolerances (poses,
    names and order, attributes, errors): what a layout test would see."""
    if "error" in a or "error" in b:
        return [] if a.get("error") == b.get("error") else [f"error {a.get('error')!r}"]
    out = []
    for kind in ("actors", "articulations"):
        if list(a[kind]) != list(b[kind]):
            out.append(f"{kind} {list(a[kind])} vs {list(b[kind])}")
            continue
        for name, pose in a[kind].items():
            other = b[kind][name]
            p, q = (pose["root"], other["root"]) if kind == "articulations" else (pose, other)
            if not close(p, q):
                out.append(f"{kind[:-1]} {name}: {math.dist(p[:3], q[:3]) * 1000:.1f} mm")
    out += [
        f"attr {key}"
        for key in sorted(set(a.get("attrs", {})) | set(b.get("attrs", {})))
        if not _same_attr(a.get("attrs", {}).get(key), b.get("attrs", {}).get(key))
    ]
    return out


def _same_attr(x: Any, y: Any) -> bool:
    """Attributes equal, poses (7 floats) within the pose tolerance, other floats within 1e-5."""
    lists = isinstance(x, list) and isinstance(y, list)
    if lists and len(x) == len(y) == 7 and all(isinstance(v, (int, float)) for v in [*x, *y]):
        return close(x, y)
    if lists:
        return len(x) == len(y) and all(_same_attr(u, v) for u, v in zip(x, y, strict=True))
    return same(x, y)
