"""Counting suite (temporal memory): PickXtimes, BinFill, SwingXtimes, StopCube, as the public
RoboMME benchmark defines them (``RoboMME/robomme_benchmark`` @a3842d1,
``src/robomme/robomme_env/<Task>.py``; facts in ``docs/robomme_upstream.md`` sections 1-4).

Each task takes its scene from :func:`~dataforge.pipelines.robomme.layouts.upstream_layout`
(the actors upstream builds for the episode's seed and difficulty, with their poses after
``gym.make`` + ``reset``), and its rules from upstream's task list: an ordered list of entries
(a name, a grounded ``subgoal_segment`` text, a completion test and a failure test) that
upstream's ``utils/subgoal_evaluate_func.py::sequential_task_check`` walks one entry at a time.
:class:`_Checker` is that walk; the oracle yields one subgoal per entry, named as the entry,
with the waypoints of upstream's ``solve_*`` primitive (``utils/subgoal_planner_func.py``).

Upstream runs some scene changes before the physics of a step (``step`` before
``super().step``) and some after its observation; both happen here in
``_before_control_step`` (before the physics of the next step), so every saved state shows
what upstream's observation of that step shows.
"""
