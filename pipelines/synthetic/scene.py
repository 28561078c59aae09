"""Sphere scenes on a floor disc, ray-cast exactly in numpy (true occlusion and depth).

Conventions (this pipeline's own; the world layer documents AI2-THOR's): the world is
right-handed with y up and the floor at y = 0. Cameras follow OpenCV: x right, y down, z forward;
``pose`` is camera-to-world; ``depth`` is z-depth in metres (0 where a ray hits nothing). Pixel
(u, v) has its centre at (u + 0.5, v + 0.5).

The arithmetic is CPU-independent, so a seed gives the same bytes on any x86-64 or ARM machine:
scalars go through Python's ``math``, and small vector algebra is written out element by element
instead of calling BLAS (``@``, ``np.linalg.norm``, ``einsum``), whose kernels differ between
CPUs in the last bit (OpenBLAS picks them per CPU; numpy's SIMD sin/cos/tan too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dataforge.pipelines.synthetic.config import CLASSES, FIRST_OBJECT_ID, FLOOR_ID

FLOOR_RADIUS = 6.0
LIGHT = np.array([0.4, 1.0, -0.3]) / math.hypot(0.4, 1.0, -0.3)


@dataclass(frozen=True)
class Sphere:
    instance: int
    label: int
    center: tuple[float, float, float]
    radius: float
    color: tuple[int, int, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "class": CLASSES[self.label],
            "label": self.label,
            "center": list(self.center),
            "radius": self.radius,
            "color": list(self.color),
        }


def random_scene(rng: np.random.Generator, n: int) -> list[Sphere]:
    """``n`` non-overlapping spheres resting on the floor within 2.5 m of the origin."""
    spheres: list[Sphere] = []
    attempts = 0
    while len(spheres) < n and attempts < 10_000:
        attempts += 1
        r = float(rng.uniform(0.2, 0.6))
        x, z = (float(v) for v in rng.uniform(-2.5, 2.5, size=2))
        if any(math.dist((x, r, z), s.center) < r + s.radius + 0.05 for s in spheres):
            continue
        label = int(rng.integers(FIRST_OBJECT_ID, len(CLASSES)))
        color = cast(tuple[int, int, int], tuple(int(v) for v in rng.integers(40, 256, size=3)))
        spheres.append(Sphere(FIRST_OBJECT_ID + len(spheres), label, (x, r, z), r, color))
    return spheres


def intrinsics(width: int, height: int, hfov_deg: float) -> np.ndarray:
    fx = (width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
    return np.array([[fx, 0.0, width / 2.0], [0.0, fx, height / 2.0], [0.0, 0.0, 1.0]])


def look_at(eye: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Camera-to-world pose (OpenCV axes) of a camera at ``eye`` looking at ``target``."""
    z = target - eye
    z = z / math.hypot(*z)
    x = np.cross(z, np.array([0.0, 1.0, 0.0]))  # right = forward x up (y up, image y down)
    x = x / math.hypot(*x)
    y = np.cross(z, x)
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = x, y, z, eye
    return pose


def orbit(rng: np.random.Generator, frames: int) -> np.ndarray:
    """A camera orbit around the scene: ``frames`` poses (T×4×4)."""
    radius = float(rng.uniform(3.5, 5.0))
    height = float(rng.uniform(1.0, 2.2))
    start = float(rng.uniform(0, 2 * np.pi))
    step = float(rng.uniform(0.08, 0.25)) * (1 if rng.random() < 0.5 else -1)
    target = np.array([*rng.uniform(-0.3, 0.3, size=1), 0.3, *rng.uniform(-0.3, 0.3, size=1)])
    poses = []
    for t in range(frames):
        a = start + step * t
        eye = np.array([radius * math.cos(a), height, radius * math.sin(a)])
        poses.append(look_at(eye, target))
    return np.stack(poses)


def render(
    spheres: list[Sphere], pose: np.ndarray, K: np.ndarray, width: int, height: int
) -> dict[str, np.ndarray]:
    """Ray-cast one view: rgb uint8 H×W×3, depth float32 (m), instance int32, semantic uint8."""
    u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    pix = np.stack([u, v, np.ones_like(u)], axis=-1).reshape(-1, 3)
    d_cam = rotate(pix, inverse_intrinsics(K))  # z component 1: ray parameter t is the z-depth
    d = rotate(d_cam, pose[:3, :3])
    o = pose[:3, 3]
    n_pix = d.shape[0]
    depth = np.full(n_pix, np.inf)
    inst = np.zeros(n_pix, np.int32)
    # floor disc
    with np.errstate(divide="ignore", invalid="ignore"):
        t_floor = -o[1] / d[:, 1]
        p = o + t_floor[:, None] * d
    hit = (d[:, 1] < 0) & (t_floor > 0)
    hit &= p[:, 0] * p[:, 0] + p[:, 2] * p[:, 2] <= FLOOR_RADIUS**2
    depth[hit] = t_floor[hit]
    inst[hit] = FLOOR_ID
    a = dot(d, d)
    for s in spheres:
        oc = o - np.array(s.center)
        b = 2.0 * dot(d, oc)
        c = float(dot(oc, oc)) - s.radius**2
        disc = b * b - 4 * a * c
        ok = disc >= 0
        t = np.full(n_pix, np.inf)
        t[ok] = (-b[ok] - np.sqrt(disc[ok])) / (2 * a[ok])
        closer = (t > 1e-6) & (t < depth)
        depth[closer] = t[closer]
        inst[closer] = s.instance
    # shading
    rgb = np.zeros((n_pix, 3))
    floor = inst == FLOOR_ID
    pf = o + depth[floor, None] * d[floor]
    checker = (np.floor(pf[:, 0] * 2) + np.floor(pf[:, 2] * 2)) % 2
    rgb[floor] = np.where(checker[:, None] > 0, 170.0, 120.0)
    label_of = np.zeros(max([FLOOR_ID, *(s.instance for s in spheres)]) + 1, np.uint8)
    label_of[FLOOR_ID] = FLOOR_ID
    for s in spheres:
        m = inst == s.instance
        label_of[s.instance] = s.label
        if not m.any():
            continue
        ps = o + depth[m, None] * d[m]
        normal = (ps - np.array(s.center)) / s.radius
        shade = 0.25 + 0.75 * np.clip(dot(normal, LIGHT), 0.0, 1.0)
        rgb[m] = shade[:, None] * np.array(s.color, float)
    miss = ~np.isfinite(depth)
    rgb[miss] = (200.0, 220.0, 240.0)
    depth[miss] = 0.0
    return {
        "rgb": np.clip(np.rint(rgb), 0, 255).astype(np.uint8).reshape(height, width, 3),
        "depth": depth.astype(np.float32).reshape(height, width),
        "instance": inst.reshape(height, width),
        "semantic": label_of[inst].reshape(height, width),
    }


def unproject(
    depth: np.ndarray, K: np.ndarray, pose: np.ndarray, u: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """World points of pixels (u, v) (integer indices) with their z-depth."""
    z = depth[v, u].astype(np.float64)
    pix = np.stack([u + 0.5, v + 0.5, np.ones_like(u, dtype=float)], axis=-1)
    cam = rotate(pix, inverse_intrinsics(K)) * z[:, None]
    return rotate(cam, pose[:3, :3]) + pose[:3, 3]


def rotate(vectors: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``vectors @ m.T`` for (N, 3) vectors and a 3x3 matrix, element by element (no BLAS)."""
    return vectors[:, 0:1] * m[:, 0] + vectors[:, 1:2] * m[:, 1] + vectors[:, 2:3] * m[:, 2]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot product over the last axis of length 3, element by element (no BLAS)."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def inverse_intrinsics(K: np.ndarray) -> np.ndarray:
    """The inverse of a pinhole K (fx, fy, cx, cy; no skew), in closed form."""
    fx, fy, cx, cy = K[0, 0], K[1, 1], K[0, 2], K[1, 2]
    return np.array([[1.0 / fx, 0.0, -cx / fx], [0.0, 1.0 / fy, -cy / fy], [0.0, 0.0, 1.0]])
