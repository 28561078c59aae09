"""Imitation suite (procedural memory): MoveCube, InsertPeg, PatternLock, RouteStick, as the
public RoboMME benchmark builds them (``src/robomme/robomme_env/<Task>.py`` @a3842d1; facts in
``docs/robomme_upstream.md``, sections 1-4).

Every episode's scene is upstream's: ``sample_layout`` takes the actors' names and poses and
the task's draws from ``layouts.upstream_layout`` (a bit-exact replay of upstream's seed ->
layout); ``build`` creates upstream's actors (``assets``) in upstream's order, plus our
pre-built pools for what upstream creates at run time (trace spheres, highlight rings, the
InsertPeg box marker), and ``place`` puts each at its layout pose.

Every task is video-conditioned: a demonstration (the video phase; upstream's task-list entries
with ``demonstration=True``), then upstream's NO-RECORD restaging — the robot's strong reset
and, for MoveCube and InsertPeg, objects teleported (to their second poses / back to their
initial poses) — then the execution phase repeats the demonstrated behaviour. The restaging
teleports run inside ``tick()`` once the video is over and the arm has returned, so replaying
the actions (or states) reproduces them. Each upstream "NO RECORD" entry is its own subgoal at
upstream's place in the list, simulated but not recorded (``record=False``: left out of the
stored demonstration, as upstream writes none of it); its strong reset holds the reset joint
action, as upstream's. Subgoal texts are upstream's task ``name``s, grounded texts its
``subgoal_segment``s with each ``<>`` filled by a ``<row, col>`` front-camera pixel, choices its
``choice_label``s, ``segment`` the actors whose pixels each ``<row, col>`` names (upstream's
``segment``; a peg's link: the peg articulation); checks (immediate failures, success) apply to
the execution phase.
"""
