"""RoboMME's gripperless robot for PatternLock and RouteStick: ManiSkill's ``panda_stick`` with
the wrist camera that RoboMME's ManiSkill fork adds to it.

The fork (``YinpeiDai/ManiSkill``) gives ``panda_stick.urdf`` the RealSense mount of
``panda_v3.urdf`` (``panda_hand`` -> ``camera_base_link`` at xyz (0.035, 0, 0.036), rpy
(0, -1.5707, 3.1415) -> ``camera_link`` at xyz (0, 0.02, 0.0115): the D415 mesh, a 2.0 x 9.9 x
2.3 cm collision box and 0.564 kg) and the agent a 256 px ``hand_camera`` (fov 90 degrees, near
0.01, far 100) on ``camera_link``. ManiSkill 3.0.1's ``panda_stick`` has neither, so this
module writes that URDF (ManiSkill's own file plus the mount; links to its mesh folders) and its
SRDF (plus the camera's disabled collision pairs of ``panda_v3.srdf``) into the user's cache
once, and registers it as ``panda_stick`` in place of ManiSkill's (as the fork does: the
articulation keeps upstream's name in states and segmentation).

Import this module only after :func:`dataforge.pipelines.robomme.sim.require_sim`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np
import sapien
from mani_skill import PACKAGE_ASSET_DIR
from mani_skill.agents.registration import REGISTERED_AGENTS, register_agent
from mani_skill.agents.robots.panda.panda_stick import PandaStick
from mani_skill.sensors.camera import CameraConfig

from dataforge.errors import DataforgeError

STICK_ROBOT = "panda_stick"
ARM_ROBOT = "panda_wristcam"
_PANDA_DIR = Path(PACKAGE_ASSET_DIR) / "robots" / "panda"

# the fork's camera mount (facts of its panda_stick.urdf, the same as panda_v3.urdf's)
_CAMERA_MOUNT = """
  <joint name="realsense_joint" type="fixed">
    <origin rpy="0 -1.5707 3.1415" xyz="0.035 0 0.036"/>
    <parent link="panda_hand"/>
    <child link="camera_base_link"/>
  </joint>
  <link name="camera_base_link"/>
  <joint name="camera_link_joint" type="fixed">
    <origin rpy="0 0 0" xyz="0 0.02 0.0115"/>
    <parent link="camera_base_link"/>
    <child link="camera_link"/>
  </joint>
  <link name="camera_link">
    <visual>
      <origin rpy="1.5707963267948966 0 1.5707963267948966" xyz="0 -0.02 0"/>
      <geometry><mesh filename="realsense2_description/meshes/d415.stl"/></geometry>
    </visual>
    <collision>
      <origin rpy="0 0 0" xyz="-0.0125 -0.02 0"/>
      <geometry><box size="0.02005 0.099 0.023"/></geometry>
    </collision>
    <inertial>
      <mass value="0.564"/>
      <origin xyz="0 0 0"/>
      <inertia ixx="0.003881243" ixy="0.0" ixz="0.0" iyy="0.000498940" iyz="0.0"
               izz="0.003879257"/>
    </inertial>
  </link>
"""
_MESH_DIRS = ("franka_description", "realsense2_description")
_CAMERA_PAIRS = ("panda_hand", "panda_link7", "panda_link6")  # panda_v3.srdf's, fingerless


def _cache_dirs() -> list[Path]:
    """Where the generated robot files may go: the user's cache, else a per-user temp folder
    (a read-only or missing HOME, as on some cluster nodes)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    user = os.getuid() if hasattr(os, "getuid") else "user"
    return [
        Path(root) / "dataforge" / "robomme",
        Path(tempfile.gettempdir()) / f"dataforge-{user}" / "robomme",
    ]


def _writable_dir(sub: str) -> Path:
    """The first of :func:`_cache_dirs` in which ``sub`` can be made (one line if none)."""
    problems = []
    for base in _cache_dirs():
        try:
            (base / sub).mkdir(parents=True, exist_ok=True)
            return base / sub
        except OSError as exc:
            problems.append(f"{base}: {exc.strerror or exc}")
    raise DataforgeError(
        "cannot write the stick robot's URDF anywhere ("
        + "; ".join(problems)
        + "); set XDG_CACHE_HOME to a writable folder"
    )


def _write_once(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically unless it already holds it (workers race here)."""
    if path.exists() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


@functools.cache
def stick_urdf() -> str:
    """The path of the stick robot's URDF (its SRDF lies beside it), written on first use."""
    urdf = (_PANDA_DIR / "panda_stick.urdf").read_text()
    srdf = (_PANDA_DIR / "panda_stick.srdf").read_text()
    end = urdf.rindex("</robot>")
    urdf = urdf[:end] + _CAMERA_MOUNT + urdf[end:]
    pairs = "".join(
        f'    <disable_collisions link1="{link}" link2="camera_link" reason="Default"/>\n'
        for link in _CAMERA_PAIRS
    )
    end = srdf.rindex("</robot>")
    srdf = srdf[:end] + pairs + srdf[end:]
    # one folder per ManiSkill install (the mesh links point into it) and file contents
    digest = hashlib.sha256(f"{_PANDA_DIR}\n{urdf}\n{srdf}".encode()).hexdigest()[:16]
    path = _writable_dir(digest) / "panda_stick_wristcam.urdf"
    for meshes in _MESH_DIRS:  # the URDF's relative mesh paths, for SAPIEN and mplib alike
        link = path.parent / meshes
        if link.is_symlink() and not link.exists():  # its install was removed and remade
            link.unlink()
        if not link.exists():
            with contextlib.suppress(FileExistsError):  # another worker made it
                link.symlink_to(_PANDA_DIR / meshes, target_is_directory=True)
    _write_once(path.with_suffix(".srdf"), srdf)
    _write_once(path, urdf)
    return str(path)


class RobommePandaStick(PandaStick):
    """``panda_stick`` with RoboMME's wrist camera (``hand_camera`` on ``camera_link``)."""

    uid = STICK_ROBOT

    @property
    def urdf_path(self) -> str:
        return stick_urdf()

    @property
    def _sensor_configs(self) -> list[CameraConfig]:
        return [
            CameraConfig(
                uid="hand_camera",
                pose=sapien.Pose(p=[0, 0, 0], q=[1, 0, 0, 0]),
                width=256,
                height=256,
                fov=np.pi / 2,
                near=0.01,
                far=100,
                mount=self.robot.links_map["camera_link"],
            )
        ]


if getattr(REGISTERED_AGENTS.get(STICK_ROBOT), "agent_cls", None) is not RobommePandaStick:
    REGISTERED_AGENTS.pop(STICK_ROBOT, None)  # ManiSkill's own, without the camera
    register_agent()(RobommePandaStick)
