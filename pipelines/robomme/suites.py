"""RoboMME's 16 tasks, their suites, and facts from the paper and the released metadata."""

from __future__ import annotations

# Task -> suite, in the paper's order (Counting, Permanence, Reference, Imitation).
TASK_SUITES = {
    "PickXtimes": "Counting",
    "BinFill": "Counting",
    "SwingXtimes": "Counting",
    "StopCube": "Counting",
    "VideoUnmask": "Permanence",
    "ButtonUnmask": "Permanence",
    "VideoUnmaskSwap": "Permanence",
    "ButtonUnmaskSwap": "Permanence",
    "PickHighlight": "Reference",
    "VideoRepick": "Reference",
    "VideoPlaceButton": "Reference",
    "VideoPlaceOrder": "Reference",
    "MoveCube": "Imitation",
    "InsertPeg": "Imitation",
    "PatternLock": "Imitation",
    "RouteStick": "Imitation",
}
TASKS = tuple(TASK_SUITES)
# The tasks RoboMME runs on its gripperless ``panda_stick`` (RecordWrapper's ``_STICK_IDS``)
STICK_TASKS = ("PatternLock", "RouteStick")
# Average steps per episode (paper Table 1), for comparison in `dataforge stats`.
PAPER_AVG_STEPS = {
    "PickXtimes": 538,
    "BinFill": 604,
    "SwingXtimes": 435,
    "StopCube": 317,
    "VideoUnmask": 217,
    "ButtonUnmask": 267,
    "VideoUnmaskSwap": 348,
    "ButtonUnmaskSwap": 400,
    "PickHighlight": 346,
    "VideoRepick": 687,
    "VideoPlaceButton": 974,
    "VideoPlaceOrder": 1134,
    "MoveCube": 394,
    "InsertPeg": 479,
    "PatternLock": 208,
    "RouteStick": 370,
}
