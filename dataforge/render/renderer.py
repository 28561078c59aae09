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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from dataforge.errors import DataforgeError, MissingDependencyError, UsageError
from dataforge.render.camera import check_pose, intrinsics
from dataforge.render.mesh import Scene

if TYPE_CHECKING:
    import moderngl

# what OpenGL rendering needs: EGL with Mesa's drivers (llvmpipe on the CPU; a GPU box also
# needs its vendor's EGL driver, e.g. NVIDIA's libEGL_nvidia) and moderngl
_INSTALL = (
    "apt-get install libegl1 libgl1-mesa-dri (on a GPU box also the GPU's EGL driver); "
    "pip install moderngl"
)
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
@OUTPUTS@
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
    @WRITES@
}
"""
# Frame's attachments: int ids and float z (metres).
_FRAME_OUTPUTS = (
    """layout(location = 0) out vec4 f_color;
layout(location = 1) out int f_instance;
layout(location = 2) out int f_semantic;
layout(location = 3) out float f_depth;""",
    "f_instance = v_instance; f_semantic = v_semantic; f_depth = v_z;",
)
# StoredFrames' attachments, what datasets store: uint16 ids and uint16 millimetres, rounded as
# depth_mm rounds (roundEven = numpy's rint on the same float32 product; far values clip).
_STORED_OUTPUTS = (
    """layout(location = 0) out vec4 f_color;
layout(location = 1) out uint f_instance;
layout(location = 2) out uint f_semantic;
layout(location = 3) out uint f_depth;""",
    "f_instance = uint(v_instance); f_semantic = uint(v_semantic);\n"
    "    f_depth = uint(min(roundEven(v_z * 1000.0), 65535.0));",
)


def _fragment_shader(outputs: tuple[str, str]) -> str:
    return _FRAGMENT_SHADER.replace("@OUTPUTS@", outputs[0]).replace("@WRITES@", outputs[1])


def create_context() -> moderngl.Context:
    """A new moderngl standalone EGL context (OpenGL >= 3.3) on the EGL device that
    ``DATAFORGE_GL_DEVICE`` names (``auto``: EGL's first; :mod:`dataforge.render.device`, which
    also records what the context is for the manifest).

    Raises :class:`MissingDependencyError` naming what to install when moderngl is missing or no
    EGL context can be created, :class:`UsageError` for a bad or out-of-range device, and
    :class:`UsageError` in a child forked from a process that had created a context (Mesa's EGL
    then hangs): start rendering workers with the 'spawn' method.
    """
    from dataforge.render import device

    pid = os.getpid()
    if _EGL_PIDS - {pid}:
        raise UsageError(
            "this process was forked after its parent created an EGL context, which cannot render "
            "here: start rendering workers with multiprocessing's 'spawn' method"
        )
    kwargs = device.context_kwargs()
    try:
        import moderngl
    except ImportError as exc:
        raise MissingDependencyError(
            f"OpenGL rendering (GPU, or CPU through Mesa's llvmpipe) needs moderngl and EGL: "
            f"{_INSTALL}"
        ) from exc
    try:
        # moderngl's stub types each keyword setting as a dict (they are plain values)
        settings: dict[str, Any] = {"backend": "egl", **kwargs}
        ctx = moderngl.create_standalone_context(require=330, **settings)
    except Exception as exc:  # glcontext raises plain Exceptions for a missing EGL or driver
        if (bad := device.out_of_range(exc, kwargs.get("device_index"))) is not None:
            raise bad from exc
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise MissingDependencyError(
            f"OpenGL rendering could not create an EGL OpenGL 3.3 context ({reason}): {_INSTALL}"
        ) from exc
    _EGL_PIDS.add(pid)
    device.opened(ctx, kwargs.get("device_index"))
    return ctx


def shared_context() -> Any:
    """This process's EGL context, created on first use (on the device ``DATAFORGE_GL_DEVICE``
    names then) and reused afterwards; each hand-out is noted for the manifest
    (:func:`dataforge.render.device.used`).

    Typed ``Any``: :class:`Renderer` drives it through program members that moderngl's stubs
    type as a union (uniform ``.value`` and ``.write`` would each need a cast).
    """
    from dataforge.render import device

    pid = os.getpid()
    if pid not in _CONTEXTS:
        _CONTEXTS.clear()  # a context inherited through fork is unusable here
        _CONTEXTS[pid] = create_context()
    device.used(_CONTEXTS[pid])
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


@dataclass(eq=False)
class StoredFrames:
    """N views as datasets store them, each array N x H x W with row 0 the image's top row:
    ``rgb`` uint8 (x 3), ``depth`` uint16 millimetres along the optical axis (0 = nothing,
    :func:`depth_mm`), ``instance`` and ``semantic`` uint16 ids. The arrays may be views of a
    larger buffer (a run of rows of a C-contiguous array): renderers write into them in place."""

    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray

    @classmethod
    def empty(cls, n: int, width: int, height: int) -> StoredFrames:
        return cls(
            np.empty((n, height, width, 3), np.uint8),
            np.empty((n, height, width), np.uint16),
            np.empty((n, height, width), np.uint16),
            np.empty((n, height, width), np.uint16),
        )

    def __len__(self) -> int:
        return len(self.rgb)

    def rows(self, start: int, stop: int) -> StoredFrames:
        """Views ``start`` to ``stop`` (views of these arrays, not copies)."""
        return StoredFrames(
            self.rgb[start:stop],
            self.depth[start:stop],
            self.instance[start:stop],
            self.semantic[start:stop],
        )

    def store(self, k: int, frame: Frame) -> None:
        """Write ``frame`` as view ``k`` (depth to millimetres, ids checked to fit uint16)."""
        self.rgb[k] = frame.rgb
        self.depth[k] = depth_mm(frame.depth)
        self.instance[k] = to_uint16(frame.instance, "instance")
        self.semantic[k] = to_uint16(frame.semantic, "semantic")

    def copy_to(self, k: int, other: StoredFrames, j: int) -> None:
        """Copy view ``k`` to ``other``'s view ``j``."""
        for name in ("rgb", "depth", "instance", "semantic"):
            getattr(other, name)[j] = getattr(self, name)[k]


# Views :meth:`Renderer.render_stored` draws before reading them back: a GPU then draws them
# without waiting for the CPU. Mesa's software rasterisers (llvmpipe) draw at the read-back
# anyway, and there one view at a time measured 2-3% faster (its framebuffers stay in cache).
STORED_BATCH = 16
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swrast")


def _mat_bytes(m: np.ndarray) -> bytes:
    """A 4x4 matrix in GL's column-major float32 layout."""
    return np.ascontiguousarray(m.T, dtype=np.float32).tobytes()


class _Target:
    """A framebuffer: the shaded colour and three single-channel outputs of ``dtypes`` (instance,
    semantic, depth), with the framebuffers that clear the colour and the depth alone."""

    def __init__(self, ctx: Any, width: int, height: int, dtypes: tuple[str, str, str]) -> None:
        size = (width, height)
        self.color = ctx.renderbuffer(size, components=4)
        self.attachments = [
            self.color,
            *(ctx.renderbuffer(size, components=1, dtype=d) for d in dtypes),
        ]
        self.depth = ctx.depth_renderbuffer(size)
        self.fbo = ctx.framebuffer(self.attachments, self.depth)
        # Clearing bit-casts the clear colour into integer attachments, so the background colour
        # is cleared through a second framebuffer that holds only the colour attachment, and
        # the depth alone (under what ``extra`` draws) through a third that holds only it.
        self.color_fbo = ctx.framebuffer([self.color])
        self.depth_fbo = ctx.framebuffer(depth_attachment=self.depth)

    def release(self) -> None:
        for obj in (self.fbo, self.color_fbo, self.depth_fbo, *self.attachments, self.depth):
            obj.release()


class Renderer:
    """Renders a :class:`Scene` at ``width`` x ``height`` with vertical field of view ``vfov_deg``.

    ``near`` / ``far`` bound what is drawn (metres along the optical axis). Shading: a
    hemisphere ambient term (``ambient``; up-facing surfaces 25% brighter than down-facing),
    Lambert from the directional ``light_dir`` and a head light from the camera (``fill``), on
    the side of each face that is seen. The scene is uploaded
    once with :meth:`set_scene`; :meth:`render` then draws any number of poses, one
    :class:`Frame` each, and :meth:`render_stored` draws many poses in one submission into
    arrays as datasets store them (one read-back per output for all of them). ``context``
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
        self._limit = int(self.ctx.info["GL_MAX_RENDERBUFFER_SIZE"])
        gl_renderer = str(self.ctx.info.get("GL_RENDERER", "")).lower()
        software = any(name in gl_renderer for name in SOFTWARE_RENDERERS)
        self.batch = 1 if software else STORED_BATCH
        if max(self.width, self.height) > self._limit:
            raise UsageError(f"image size {width} x {height} exceeds the GL limit of {self._limit}")
        self._background = tuple(float(c) / 255.0 for c in np.asarray(background).reshape(3))
        light = np.asarray(light_dir, dtype=np.float64).reshape(3)
        self._uniforms = {
            "light_dir": tuple(light / np.linalg.norm(light)),
            "ambient": float(ambient),
            "fill": float(fill),
        }
        self._programs: dict[str, Any] = {}
        self._frame = _Target(self.ctx, self.width, self.height, ("i4", "i4", "f4"))
        self._stored: list[_Target] = []  # one per view of a render_stored batch
        self._scene_buffers: list[Any] = []
        self._vaos: dict[str, Any] = {}
        self._max_ids = (0, 0)  # the scene's largest instance and semantic ids

    def _program(self, kind: str) -> Any:
        """The shader program writing :class:`Frame`'s outputs ("frame") or
        :class:`StoredFrames`' ("stored"), made on first use."""
        if kind not in self._programs:
            outputs = _FRAME_OUTPUTS if kind == "frame" else _STORED_OUTPUTS
            prog = self.ctx.program(
                vertex_shader=_VERTEX_SHADER, fragment_shader=_fragment_shader(outputs)
            )
            for name, value in self._uniforms.items():
                prog[name].value = value
            prog["cam_to_clip"].write(
                _mat_bytes(gl_projection(self.K, self.width, self.height, self.near, self.far))
            )
            self._programs[kind] = prog
        return self._programs[kind]

    def set_scene(self, scene: Scene) -> None:
        """Upload ``scene``'s merged buffers, replacing the previous scene."""
        self._release_scene()
        buf = scene.buffers()
        if len(buf["positions"]) == 0:
            return
        self._scene_buffers = self._buffers(buf)
        self._max_ids = _max_ids(buf)

    def _buffers(self, buf: Mapping[str, np.ndarray]) -> list[Any]:
        """The GL vertex buffers of :meth:`Scene.buffers`-style ``buf``."""
        floats = np.ascontiguousarray(
            np.hstack([buf["positions"], buf["normals"], buf["colors"]]), dtype=np.float32
        )
        ints = np.ascontiguousarray(np.column_stack([buf["instance"], buf["semantic"]]), np.int32)
        return [self.ctx.buffer(floats.tobytes()), self.ctx.buffer(ints.tobytes())]

    def _vertex_array(self, kind: str, buffers: list[Any]) -> Any:
        vbo_f, vbo_i = buffers
        return self.ctx.vertex_array(
            self._program(kind),
            [
                (vbo_f, "3f 3f 3f", "in_pos", "in_normal", "in_color"),
                (vbo_i, "1i 1i", "in_instance", "in_semantic"),
            ],
        )

    def _scene_vao(self, kind: str) -> Any:
        if not self._scene_buffers:
            return None
        if kind not in self._vaos:
            self._vaos[kind] = self._vertex_array(kind, self._scene_buffers)
        return self._vaos[kind]

    def _begin(self, target: _Target) -> None:
        """Clear ``target`` and set the drawing state."""
        target.fbo.use()
        target.fbo.viewport = (0, 0, self.width, self.height)
        target.fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        if any(self._background):
            target.color_fbo.clear(*self._background, 1.0)
        self.ctx.disable(self.ctx.CULL_FACE | self.ctx.BLEND)
        self.ctx.enable(self.ctx.DEPTH_TEST)
        self.ctx.depth_func = "<"

    def _draw(
        self,
        target: _Target,
        kind: str,
        pose: ArrayLike,
        extra: Mapping[str, np.ndarray] | None,
    ) -> None:
        """Draw the scene from ``pose`` into ``target``, then ``extra`` over it (the depth
        cleared first)."""
        cam_to_world = check_pose(pose)
        self._program(kind)["world_to_cam"].write(_mat_bytes(np.linalg.inv(cam_to_world)))
        target.fbo.use()
        vao = self._scene_vao(kind)
        if vao is not None:
            vao.render()
        if extra is not None and len(extra["positions"]):
            buffers = self._buffers(extra)
            vao = self._vertex_array(kind, buffers)
            target.depth_fbo.use()
            target.depth_fbo.clear(depth=1.0)
            target.fbo.use()
            vao.render()
            for obj in (vao, *buffers):
                obj.release()

    def render(self, pose: ArrayLike, extra: Mapping[str, np.ndarray] | None = None) -> Frame:
        """Draw the scene from camera-to-world ``pose`` (OpenCV camera axes, det -1 rotation),
        then ``extra`` (world-space buffers in :meth:`Scene.buffers`' layout, e.g. a carried
        object posed for this frame) over it: in front of everything the scene has, as a
        first-person view draws what is in hand."""
        h, w = self.height, self.width
        self._begin(self._frame)
        self._draw(self._frame, "frame", pose, extra)
        frame = Frame(
            rgb=np.empty((h, w, 3), np.uint8),
            depth=np.empty((h, w), np.float32),
            instance=np.empty((h, w), np.int32),
            semantic=np.empty((h, w), np.int32),
        )
        read = self._frame.fbo.read_into
        region = (0, 0, w, h)
        read(frame.rgb, region, components=3, attachment=0, alignment=1)
        read(frame.instance, region, components=1, attachment=1, alignment=1, dtype="i4")
        read(frame.semantic, region, components=1, attachment=2, alignment=1, dtype="i4")
        read(frame.depth, region, components=1, attachment=3, alignment=1, dtype="f4")
        return frame

    def render_stored(
        self,
        poses: Sequence[ArrayLike],
        out: StoredFrames,
        extras: Sequence[Mapping[str, np.ndarray] | None] | None = None,
    ) -> None:
        """Draw the scene from each of ``poses`` (then its ``extras`` entry, as :meth:`render`
        draws ``extra``) into ``out``'s views in order, as :class:`StoredFrames` store them:
        the same pixels as :meth:`render` followed by :meth:`StoredFrames.store`. Every view
        has its own framebuffer (``batch`` at a time: ``STORED_BATCH`` on a GPU): all are drawn
        before the first is read back, so a GPU draws them without waiting for the CPU, and
        the outputs are read straight into ``out``'s arrays (C-contiguous), in their stored
        formats (uint16 ids and millimetres computed by the shader).

        (One tall framebuffer holding all the views would need one read-back per output, but
        it draws other pixels than :meth:`render` (the window offset changes llvmpipe's
        rounding at a few hundred pixels per view) and was slower on llvmpipe: measured
        13.9 against 11.8 ms per view.)"""
        n = len(poses)
        if len(out) != n or (extras is not None and len(extras) != n):
            raise ValueError(f"{n} poses for {len(out)} views and {len(extras or ())} extras")
        for name in ("rgb", "depth", "instance", "semantic"):
            if not getattr(out, name).flags.c_contiguous:
                raise ValueError(f"render_stored writes into C-contiguous arrays ({name} is not)")
        tops = [self._max_ids] + [_max_ids(e) for e in extras or () if e is not None]
        for what, top in zip(("instance", "semantic"), np.max(tops, axis=0), strict=True):
            if int(top) > np.iinfo(np.uint16).max:
                raise DataforgeError(f"{what} id {int(top)} does not fit uint16")
        region = (0, 0, self.width, self.height)
        for start in range(0, n, self.batch):
            stop = min(n, start + self.batch)
            while len(self._stored) < stop - start:
                self._stored.append(_Target(self.ctx, self.width, self.height, ("u2", "u2", "u2")))
            for k in range(start, stop):
                target = self._stored[k - start]
                self._begin(target)
                self._draw(target, "stored", poses[k], extras[k] if extras else None)
            for k in range(start, stop):
                read = self._stored[k - start].fbo.read_into
                read(out.rgb[k], region, components=3, attachment=0, alignment=1)
                read(out.instance[k], region, components=1, attachment=1, alignment=1, dtype="u2")
                read(out.semantic[k], region, components=1, attachment=2, alignment=1, dtype="u2")
                read(out.depth[k], region, components=1, attachment=3, alignment=1, dtype="u2")

    def _release_scene(self) -> None:
        for obj in (*self._vaos.values(), *self._scene_buffers):
            obj.release()
        self._scene_buffers, self._vaos, self._max_ids = [], {}, (0, 0)

    def release(self) -> None:
        """Free this renderer's GL objects (the shared context stays)."""
        self._release_scene()
        for target in (self._frame, *self._stored):
            target.release()
        for prog in self._programs.values():
            prog.release()
        self._stored, self._programs = [], {}

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _max_ids(buf: Mapping[str, np.ndarray]) -> tuple[int, int]:
    """The largest instance and semantic ids in :meth:`Scene.buffers`-style ``buf``."""
    return tuple(  # type: ignore[return-value]
        int(np.max(buf[k])) if len(buf[k]) else 0 for k in ("instance", "semantic")
    )
