"""Tabletop manipulation on ManiSkill: the software Vulkan driver, an mplib arm planner, and an
executor that turns keyframe waypoints into a dense, recorded joint-space trajectory.

Nothing here names a benchmark; ManiSkill, SAPIEN, mplib and torch are imported only inside
functions (they belong to an optional extra).
"""
