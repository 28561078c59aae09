"""The flat state vector of a single-env CPU ManiSkill env, read straight from SAPIEN.

``env.get_state()`` builds a torch ``Pose`` for every actor and articulation on every call,
which costs more than the physics step itself in a scene with a dozen objects.
:class:`StateReader` gives the same vector (same order, float32, bit for bit: ManiSkill's
``get_sim_state`` layout of ``[p, q, v, w]`` per non-static actor, zero velocities for
kinematic ones, then ``[root p, q, v, w, qpos, qvel]`` per articulation) from SAPIEN's numpy
accessors. Build a new reader after every scene rebuild (a reset that reconfigures).
"""

from __future__ import annotations

from typing import Any

import numpy as np

ZERO3 = np.zeros(3, dtype=np.float32)


class StateReader:
    def __init__(self, base: Any) -> None:
        scene = base.scene
        if scene.num_envs != 1 or scene.gpu_sim_enabled:
            raise ValueError("StateReader reads a single-env CPU scene")
        self.scene = scene
        self.base = base
        self.actors: list[tuple[Any, Any]] = []
        for actor in scene.state_dict_registry.actors.values():
            if actor.px_body_type == "static":
                continue
            dynamic = actor._bodies[0] if actor.px_body_type == "dynamic" else None
            self.actors.append((actor._objs[0], dynamic))
        self.articulations = [a._objs[0] for a in scene.state_dict_registry.articulations.values()]
        # A controller with its own state (not the case for joint position control) is part
        # of ManiSkill's vector: leave those envs to ManiSkill.
        self.fallback = len(base.agent.get_controller_state()) > 0

    def read(self) -> np.ndarray:
        if self.fallback:
            return self.base.get_state()[0].cpu().numpy().astype(np.float32)
        parts: list[Any] = []
        for entity, body in self.actors:
            pose = entity.pose
            parts += [pose.p, pose.q]
            if body is None:
                parts += [ZERO3, ZERO3]
            else:
                parts += [body.linear_velocity, body.angular_velocity]
        for art in self.articulations:
            root = art.root
            pose = root.entity_pose
            parts += [pose.p, pose.q, root.linear_velocity, root.angular_velocity]
            parts += [art.qpos, art.qvel]
        return np.concatenate([np.asarray(p, dtype=np.float32).ravel() for p in parts])
