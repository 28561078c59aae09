"""The synthetic renderer's images are true: depth unprojects onto the labelled surface,
nearer spheres occlude farther ones, and the registered invariants hold on real output."""

from __future__ import annotations

import numpy as np

from dataforge.pipelines.synthetic.checks import check_episode
from dataforge.pipelines.synthetic.config import FLOOR_ID, SyntheticConfig
from dataforge.pipelines.synthetic.generate import produce
from dataforge.pipelines.synthetic.scene import Sphere, intrinsics, look_at, render, unproject
from dataforge.run import WorkUnit, unit_rng
from dataforge.store import open_dataset


def test_every_depth_pixel_lies_on_the_surface_its_instance_names():
    spheres = [
        Sphere(2, 2, (0.0, 0.5, 0.0), 0.5, (200, 0, 0)),
        Sphere(3, 3, (1.2, 0.3, 0.8), 0.3, (0, 200, 0)),
    ]
    K = intrinsics(64, 48, 70.0)
    pose = look_at(np.array([3.0, 1.5, -2.0]), np.array([0.3, 0.3, 0.2]))
    out = render(spheres, pose, K, 64, 48)
    v, u = np.nonzero(out["instance"] > 0)
    pts = unproject(out["depth"], K, pose, u, v)
    ids = out["instance"][v, u]
    assert {2, 3, FLOOR_ID} <= set(ids.tolist())
    for s in spheres:
        d = np.linalg.norm(pts[ids == s.instance] - np.array(s.center), axis=1)
        np.testing.assert_allclose(d, s.radius, atol=1e-4)
    np.testing.assert_allclose(pts[ids == FLOOR_ID][:, 1], 0.0, atol=1e-4)
    assert np.all(out["depth"][out["instance"] == 0] == 0)


def test_nearer_sphere_occludes_the_farther_one():
    near = Sphere(2, 2, (0.0, 0.5, 2.0), 0.5, (255, 0, 0))
    far = Sphere(3, 3, (0.0, 0.5, 5.0), 0.5, (0, 255, 0))
    K = intrinsics(41, 41, 60.0)
    pose = look_at(np.array([0.0, 0.5, 0.0]), np.array([0.0, 0.5, 5.0]))
    both = render([near, far], pose, K, 41, 41)
    alone = render([far], pose, K, 41, 41)
    assert (alone["instance"] == 3).sum() > 0
    assert (both["instance"] == 3).sum() == 0  # entirely hidden behind the nearer sphere
    assert both["instance"][20, 20] == 2
    np.testing.assert_allclose(both["depth"][20, 20], 1.5, atol=1e-3)
    np.testing.assert_allclose(alone["depth"][20, 20], 4.5, atol=1e-3)


def test_produce_is_deterministic_per_unit_stream():
    cfg = SyntheticConfig(scenes=1, episodes_per_scene=2, frames=3, resolution=(32, 24))
    unit = WorkUnit("scene-0000")
    a = list(produce(cfg, unit, unit_rng(0, unit.id)))
    b = list(produce(cfg, unit, unit_rng(0, unit.id)))
    c = list(produce(cfg, unit, unit_rng(1, unit.id)))
    for x, y in zip(a, b, strict=True):
        for name in x.arrays:
            np.testing.assert_array_equal(x.arrays[name], y.arrays[name])
    assert not np.array_equal(a[0].arrays["rgb"], c[0].arrays["rgb"])


def test_registered_invariants_hold_on_generated_episodes(synthetic_dataset):
    with open_dataset(synthetic_dataset("hdf5")) as ds:
        assert len(ds) == 6
        for ep in ds.episodes():
            assert list(check_episode(ep)) == []
            vis = ep["visible"].read()
            inst = ep["instance"].read()
            for k in range(vis.shape[1]):
                assert np.array_equal(vis[:, k], (inst == k + 2).any(axis=(1, 2)))
