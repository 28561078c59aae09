"""Headless OpenGL rendering of triangle-mesh scenes: RGB, depth, instance and semantic images,
on a GPU or on the CPU through Mesa's llvmpipe (EGL; the device: :mod:`dataforge.render.device`).

Conventions
-----------
World
    As in AI2-THOR / ProcTHOR house JSON: metres, y up, LEFT-handed (facing +z, +x is to the
    right). Yaw angles are AI2-THOR's ``rotation.y``: clockwise seen from above; yaw 0 faces +z,
    yaw 90 faces +x; a local offset (dx, dz) turns to (dx cos + dz sin, -dx sin + dz cos).
Camera pose
    A camera-to-world 4x4 matrix whose rotation columns are the OpenCV camera axes (x right,
    y down, z forward) in world coordinates: ``world = pose @ [x_cam, y_cam, z_cam, 1]``. In this
    left-handed world such a rotation has determinant -1 (a reflection); that is expected, and
    the renderer refuses a determinant +1 (it would draw a mirror image). Faces are drawn from
    both sides. :func:`thor_camera_pose` builds the pose of an AI2-THOR camera from position,
    yaw and horizon (horizon > 0 looks down).
Intrinsics
    :func:`intrinsics` gives the pinhole K from width, height and the VERTICAL field of view
    (AI2-THOR's ``fieldOfView``; default 90 degrees): fx = fy = (height / 2) / tan(vfov / 2),
    principal point at the image centre (width / 2, height / 2).
Pixels
    Continuous pixel coordinates (u right, v down) put the image's top-left corner at (0, 0);
    pixel (column u, row v) covers [u, u+1) x [v, v+1) and its centre is (u + 0.5, v + 0.5).
    :func:`project` returns continuous coordinates; :func:`unproject` takes integer pixel
    indices and uses their centres, which is where the renderer samples each pixel.
Images
    Row 0 is the top row. ``depth`` is float32 metres along the optical axis (z-depth, not the
    distance to the camera centre), 0 where nothing is hit or beyond the far plane;
    ``instance`` is int32 with 0 = nothing (mesh instance ids are >= 1); ``semantic`` is int32
    with 0 = nothing or unlabelled. Near / far planes default to 0.05 / 100 m.

Importing this package is cheap: moderngl is imported when the first context is created.
"""

from __future__ import annotations

from dataforge.render.camera import (
    backproject,
    check_pose,
    intrinsics,
    look_at_pose,
    project,
    project_box,
    thor_camera_pose,
    unproject,
    world_to_camera,
)
from dataforge.render.mesh import (
    Mesh,
    Scene,
    box_corners,
    box_mesh,
    box_mesh_from_corners,
    cylinder_mesh,
    polygon_slab,
    triangulate_polygon,
    wall_mesh,
    yaw_rotate_xz,
)
from dataforge.render.renderer import Frame, Renderer, create_context, gl_projection, shared_context

__all__ = [
    "Frame",
    "Mesh",
    "Renderer",
    "Scene",
    "backproject",
    "box_corners",
    "box_mesh",
    "box_mesh_from_corners",
    "check_pose",
    "create_context",
    "cylinder_mesh",
    "gl_projection",
    "intrinsics",
    "look_at_pose",
    "polygon_slab",
    "project",
    "project_box",
    "shared_context",
    "thor_camera_pose",
    "triangulate_polygon",
    "unproject",
    "wall_mesh",
    "world_to_camera",
    "yaw_rotate_xz",
]
