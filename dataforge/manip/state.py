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
        self.size = 13 * len(self.actors) + sum(13 + 2 * a.dof for a in self.articulations)
        # A controller with its own state (not the case for joint position control) is part
        # of ManiSkill's vector: leave those envs to ManiSkill.
        self.fallback = len(base.agent.get_controller_state()) > 0

    def read(self) -> np.ndarray:
        if self.fallback:
            return self.base.get_state()[0].cpu().numpy().astype(np.float32)
        out = np.zeros(self.size, dtype=np.float32)
        i = 0
        for entity, body in self.actors:
            pose = entity.pose
            out[i : i + 3] = pose.p
            out[i + 3 : i + 7] = pose.q
            if body is not None:  # kinematic: zero velocities
                out[i + 7 : i + 10] = body.linear_velocity
                out[i + 10 : i + 13] = body.angular_velocity
            i += 13
        for art in self.articulations:
            root = art.root
            pose = root.entity_pose
            out[i : i + 3] = pose.p
            out[i + 3 : i + 7] = pose.q
            out[i + 7 : i + 10] = root.linear_velocity
            out[i + 10 : i + 13] = root.angular_velocity
            dof = art.dof
            out[i + 13 : i + 13 + dof] = art.qpos
            out[i + 13 + dof : i + 13 + 2 * dof] = art.qvel
            i += 13 + 2 * dof
        return out
