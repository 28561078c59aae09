"""Headless rasteriser: RGB, z-depth, instance and semantic images in one OpenGL pass.

One moderngl standalone context per process (EGL; on a machine without a GPU, Mesa's llvmpipe)
is created lazily by :func:`shared_context` and reused by every :class:`Renderer`. Mesa's EGL
hangs in a child forked after its parent created a context, so such a child is refused with a
:class:`UsageError`: render in workers started with the 'spawn' method (or fork before the first
context). A renderer owns
one framebuffer with four colour attachments (RGBA8 shaded colour, R32I instance, R32I semantic,
R32F view-space z) and a depth renderbuffer for occlusion. The z image is written from a vertex
shader varying, so it is the exact distance along the optical axis, not a value recovered from
the non-linear depth buffer.

The projection is built from the same K as :func:`dataforge.render.camera.intrinsics`, with the
GL window's y axis pointing down the image: framebuffer row 0 is the image's top row, and GL's
pixel centres (i + 0.5) are the pixel centres of :mod:`dataforge.render.camera`. Faces are drawn
from both sides (no culling: poses are reflections in this left-handed world).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from dataforge.errors import DataforgeError, MissingDependencyError, UsageError
from dataforge.render.camera import check_pose, intrinsics
from dataforge.render.mesh import Scene

if TYPE_CHECKING:
    import moderngl

_INSTALL = "apt-get install libegl1 libgl1-mesa-dri; pip install moderngl"
_CONTEXTS: dict[int, moderngl.Context] = {}  # process id -> this process's shared moderngl.Context
_EGL_PIDS: set[int] = set()  # processes that have created an EGL context

_VERTEX_SHADER = """
#version 330
uniform mat4 world_to_cam;
uniform mat4 cam_to_clip;
in vec3 in_pos;
in vec3 in_normal;
in vec3 in_color;
in int in_instance;
in int in_semantic;
out vec3 v_normal;
out vec3 v_color;
out vec3 v_view;
out float v_z;
flat out int v_instance;
flat out int v_semantic;
void main() {
    vec4 cam = world_to_cam * vec4(in_pos, 1.0);
    v_z = cam.z;
    v_view = -(transpose(mat3(world_to_cam)) * cam.xyz);  // from the point toward the camera
    v_normal = in_normal;
    v_color = in_color;
    v_instance = in_instance;
    v_semantic = in_semantic;
    gl_Position = cam_to_clip * cam;
}
"""

_FRAGMENT_SHADER = """
#version 330
uniform vec3 light_dir;
uniform float ambient;
uniform float fill;
in vec3 v_normal;
in vec3 v_color;
in vec3 v_view;
in float v_z;
flat in int v_instance;
flat in int v_semantic;
layout(location = 0) out vec4 f_color;
layout(location = 1) out int f_instance;
layout(location = 2) out int f_semantic;
layout(location = 3) out float f_depth;
void main() {
    float len = length(v_normal);
    vec3 view = normalize(v_view);
    vec3 n = len > 0.0 ? v_normal / len : view;
    n = dot(n, view) < 0.0 ? -n : n;  // both sides are drawn: light the side that is seen
    float key = max(dot(n, light_dir), 0.0);
    float head = max(dot(n, view), 0.0);
    float sky = 0.8 + 0.2 * n.y;  // hemisphere ambient: up-facing surfaces a little brighter
    float light = ambient * sky + (1.0 - ambient - fill) * key + fill * head;
    f_color = vec4(min(v_color * light, vec3(1.0)), 1.0);
    f_instance = v_instance;
    f_semantic = v_semantic;
    f_depth = v_z;
}
"""


def create_context() -> moderngl.Context:
    """A new moderngl standalone EGL context (OpenGL >= 3.3).

    Raises :class:`MissingDependencyError` naming what to install when moderngl is missing or no
    EGL context can be created, and :class:`UsageError` in a child forked from a process that
    had created one (Mesa's EGL then hangs): start rendering workers with the 'spawn' method.
    """
    pid = os.getpid()
    if _EGL_PIDS - {pid}:
        raise UsageError(
            "this process was forked after its parent created an EGL context, which cannot render "
            "here: start rendering workers with multiprocessing's 'spawn' method"
        )
    try:
        import moderngl
    except ImportError as exc:
        raise MissingDependencyError(f"CPU rendering needs moderngl and EGL: {_INSTALL}") from exc
    try:
        # moderngl's stub types each keyword setting as a dict (they are plain values)
        ctx = moderngl.create_standalone_context(backend="egl", require=330)  # type: ignore[arg-type]
    except Exception as exc:  # glcontext raises plain Exceptions for a missing EGL or driver
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MissingDependencyError(
            f"CPU rendering could not create an EGL OpenGL 3.3 context ({reason}): {_INSTALL}"
        ) from exc
    _EGL_PIDS.add(pid)
    return ctx


def shared_context() -> Any:
    """This process's EGL context, created on first use and reused afterwards.

    Typed ``Any``: :class:`Renderer` drives it through program members that moderngl's stubs
    type as a union (uniform ``.value`` and ``.write`` would each need a cast).
    """
    pid = os.getpid()
    if pid not in _CONTEXTS:
        _CONTEXTS.clear()  # a context inherited through fork is unusable here
        _CONTEXTS[pid] = create_context()
    return _CONTEXTS[pid]


def gl_projection(K: ArrayLike, width: int, height: int, near: float, far: float) -> np.ndarray:
    """4x4 map from OpenCV camera coordinates to GL clip space for pinhole ``K``.

    Window x = u and window y = v (continuous pixels, y down): framebuffer row 0 is the image top.
    Depth maps ``near`` to NDC -1 and ``far`` to +1.
    """
    k = np.asarray(K, dtype=np.float64)
    fx, fy, cx, cy, skew = k[0, 0], k[1, 1], k[0, 2], k[1, 2], k[0, 1]
    proj = np.zeros((4, 4))
    proj[0] = [2.0 * fx / width, 2.0 * skew / width, 2.0 * cx / width - 1.0, 0.0]
    proj[1] = [0.0, 2.0 * fy / height, 2.0 * cy / height - 1.0, 0.0]
    proj[2] = [0.0, 0.0, (far + near) / (far - near), -2.0 * far * near / (far - near)]
    proj[3] = [0.0, 0.0, 1.0, 0.0]
    return proj


@dataclass(eq=False)
class Frame:
    """One rendered view; all arrays are H x W with row 0 the image's top row.

    ``rgb`` uint8 (H x W x 3); ``depth`` float32 metres along the optical axis, 0 where nothing
    is hit; ``instance`` int32 (0 = nothing); ``semantic`` int32 (0 = nothing or unlabelled).
    """

    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray


MAX_DEPTH_MM = np.iinfo(np.uint16).max


def depth_mm(depth: np.ndarray) -> np.ndarray:
    """float32 metres -> uint16 millimetres (rounded; 0 stays 0, far values clip), as datasets
    store a frame's depth."""
    return np.minimum(np.rint(depth * 1000.0), MAX_DEPTH_MM).astype(np.uint16)


def to_uint16(ids: np.ndarray, what: str) -> np.ndarray:
    """Instance or semantic ids as uint16 (an id that does not fit is an error)."""
    if ids.size and int(ids.max()) > np.iinfo(np.uint16).max:
        raise DataforgeError(f"{what} id {int(ids.max())} does not fit uint16")
    return ids.astype(np.uint16)


def _mat_bytes(m: np.ndarray) -> bytes:
    """A 4x4 matrix in GL's column-major float32 layout."""
    return np.ascontiguousarray(m.T, dtype=np.float32).tobytes()


class Renderer:
    """Renders a :class:`Scene` at ``width`` x ``height`` with vertical field of view ``vfov_deg``.

    ``near`` / ``far`` bound what is drawn (metres along the optical axis). Shading: a
    hemisphere ambient term (``ambient``; up-facing surfaces 25% brighter than down-facing),
    Lambert from the directional ``light_dir`` and a head light from the camera (``fill``), on
    the side of each face that is seen. The scene is uploaded
    once with :meth:`set_scene`; :meth:`render` then draws any number of poses. ``context``
    defaults to this process's shared EGL context.
    """

    def __init__(
        self,
        width: int,
        height: int,
        vfov_deg: float = 90.0,
        *,
        near: float = 0.05,
        far: float = 100.0,
        light_dir: ArrayLike = (0.4, 1.0, 0.25),
        ambient: float = 0.45,
        fill: float = 0.3,
        background: ArrayLike = (0, 0, 0),
        context: Any = None,
    ) -> None:
        if not 0.0 < near < far:
            raise UsageError(f"need 0 < near < far, got near={near}, far={far}")
        self.width, self.height, self.vfov_deg = int(width), int(height), float(vfov_deg)
        self.near, self.far = float(near), float(far)
        self.K = intrinsics(self.width, self.height, self.vfov_deg)
        self.ctx = context if context is not None else shared_context()
        limit = int(self.ctx.info["GL_MAX_RENDERBUFFER_SIZE"])
        if max(self.width, self.height) > limit:
            raise UsageError(f"image size {width} x {height} exceeds the GL limit of {limit}")
        self._background = tuple(float(c) / 255.0 for c in np.asarray(background).reshape(3))
        self._program = self.ctx.program(
            vertex_shader=_VERTEX_SHADER, fragment_shader=_FRAGMENT_SHADER
        )
        light = np.asarray(light_dir, dtype=np.float64).reshape(3)
        self._program["light_dir"].value = tuple(light / np.linalg.norm(light))
        self._program["ambient"].value = float(ambient)
        self._program["fill"].value = float(fill)
        self._program["cam_to_clip"].write(
            _mat_bytes(gl_projection(self.K, self.width, self.height, self.near, self.far))
        )
        size = (self.width, self.height)
        self._color = self.ctx.renderbuffer(size, components=4)
        attachments = [
            self._color,
            self.ctx.renderbuffer(size, components=1, dtype="i4"),
            self.ctx.renderbuffer(size, components=1, dtype="i4"),
            self.ctx.renderbuffer(size, components=1, dtype="f4"),
        ]
        depth = self.ctx.depth_renderbuffer(size)
        self._fbo = self.ctx.framebuffer(attachments, depth)
        # Clearing bit-casts the clear colour into integer attachments, so the background colour
        # is cleared through a second framebuffer that holds only the colour attachment, and
        # the depth alone (under what ``extra`` draws) through a third that holds only it.
        self._color_fbo = self.ctx.framebuffer([self._color])
        self._depth_fbo = self.ctx.framebuffer(depth_attachment=depth)
        self._resources: list[Any] = [
            *attachments,
            depth,
            self._fbo,
            self._color_fbo,
            self._depth_fbo,
            self._program,
        ]
        self._scene_objects: list[Any] = []
        self._vao: moderngl.VertexArray | None = None

    def set_scene(self, scene: Scene) -> None:
        """Upload ``scene``'s merged buffers, replacing the previous scene."""
        self._release_scene()
        buf = scene.buffers()
        if len(buf["positions"]) == 0:
            return
        self._scene_objects = self._upload(buf)
        self._vao = self._scene_objects[-1]

    def _upload(self, buf: Mapping[str, np.ndarray]) -> list[Any]:
        """GL buffers and the vertex array of :meth:`Scene.buffers`-style ``buf`` (the vertex
        array last)."""
        floats = np.ascontiguousarray(
            np.hstack([buf["positions"], buf["normals"], buf["colors"]]), dtype=np.float32
        )
        ints = np.ascontiguousarray(np.column_stack([buf["instance"], buf["semantic"]]), np.int32)
        vbo_f, vbo_i = self.ctx.buffer(floats.tobytes()), self.ctx.buffer(ints.tobytes())
        vao = self.ctx.vertex_array(
            self._program,
            [
                (vbo_f, "3f 3f 3f", "in_pos", "in_normal", "in_color"),
                (vbo_i, "1i 1i", "in_instance", "in_semantic"),
            ],
        )
        return [vbo_f, vbo_i, vao]

    def render(self, pose: ArrayLike, extra: Mapping[str, np.ndarray] | None = None) -> Frame:
        """Draw the scene from camera-to-world ``pose`` (OpenCV camera axes, det -1 rotation),
        then ``extra`` (world-space buffers in :meth:`Scene.buffers`' layout, e.g. a carried
        object posed for this frame) over it: in front of everything the scene has, as a
        first-person view draws what is in hand."""
        cam_to_world = check_pose(pose)
        h, w = self.height, self.width
        self._fbo.use()
        self._fbo.viewport = (0, 0, w, h)
        self._fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        if any(self._background):
            self._color_fbo.clear(*self._background, 1.0)
        self.ctx.disable(self.ctx.CULL_FACE | self.ctx.BLEND)
        self.ctx.enable(self.ctx.DEPTH_TEST)
        self.ctx.depth_func = "<"
        self._program["world_to_cam"].write(_mat_bytes(np.linalg.inv(cam_to_world)))
        self._fbo.use()
        if self._vao is not None:
            self._vao.render()
        if extra is not None and len(extra["positions"]):
            objects = self._upload(extra)
            self._depth_fbo.use()
            self._depth_fbo.clear(depth=1.0)
            self._fbo.use()
            objects[-1].render()
            for obj in reversed(objects):
                obj.release()
        frame = Frame(
            rgb=np.empty((h, w, 3), np.uint8),
            depth=np.empty((h, w), np.float32),
            instance=np.empty((h, w), np.int32),
            semantic=np.empty((h, w), np.int32),
        )
        read = self._fbo.read_into
        read(frame.rgb, components=3, attachment=0, alignment=1)
        read(frame.instance, components=1, attachment=1, alignment=1, dtype="i4")
        read(frame.semantic, components=1, attachment=2, alignment=1, dtype="i4")
        read(frame.depth, components=1, attachment=3, alignment=1, dtype="f4")
        return frame

    def _release_scene(self) -> None:
        for obj in self._scene_objects:
            obj.release()
        self._scene_objects, self._vao = [], None

    def release(self) -> None:
        """Free this renderer's GL objects (the shared context stays)."""
        self._release_scene()
        for obj in self._resources:
            obj.release()
        self._resources = []

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
