"""SpaMEM's capture redraws a camera whose images are mostly nearer than 20 cm, and keeps the
views (marked unusable) when every candidate is; bearings and heights go to the view rows."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from roomhelpers import one_room_house

from dataforge.pipelines.spamem.capture import (
    VIEW_COLUMNS,
    CaptureSettings,
    ViewBuffer,
    capture,
    close_share,
)
from dataforge.render.renderer import Frame, StoredFrames
from dataforge.simulators.protocol import Camera, render_one_by_one
from dataforge.world import load_catalogue, load_house
from dataforge.world.navigation import house_floor_y, house_nav_grid
from dataforge.world.viewpoints import WallSight

W, H = 8, 6
COL = {name: k for k, name in enumerate(VIEW_COLUMNS)}


class NearWest:
    """A fake world: a camera west of x = ``wall_x`` (or, with ``east``, east of it) sees
    nothing but a surface 10 cm away (depth 0.1 m); elsewhere everything is 2 m away. Renders
    are logged, and each image's instance ids encode the camera's x and z in cm (:func:`code`),
    so a test can tell which camera a stored view came from."""

    def __init__(self, wall_x: float, east: bool = False) -> None:
        self.wall_x, self.east = wall_x, east
        self.rendered: list[tuple[float, float, float]] = []

    def render(self, position: Sequence[float], yaw: float, horizon: float = 0.0) -> Frame:
        self.rendered.append(tuple(position))
        near = position[0] > self.wall_x if self.east else position[0] < self.wall_x
        depth = np.full((H, W), 0.1 if near else 2.0, np.float32)
        instance = np.zeros((H, W), np.int32)
        instance[0], instance[1] = code(position)
        return Frame(np.zeros((H, W, 3), np.uint8), depth, instance, np.zeros((H, W), np.int32))

    def render_stored(self, cameras: Sequence[Camera], out: StoredFrames) -> None:
        render_one_by_one(self, cameras, out)


def code(position: Sequence[float]) -> tuple[int, int]:
    return round(position[0] * 100), round(position[2] * 100)


def assert_views_are_their_cameras(buffer: ViewBuffer, vps: list) -> None:
    """Every stored view's images are the ones rendered at its viewpoint's camera."""
    for row, v in enumerate(vps):
        got = (int(buffer.instance[row, 0, 0]), int(buffer.instance[row, 1, 0]))
        assert got == code(v.position), (row, v)


@pytest.fixture(scope="module")
def room() -> dict:
    cat = load_catalogue()
    house = load_house(one_room_house([]), catalogue=cat)
    grid = house_nav_grid(house, cat)
    return {"grid": grid, "sight": WallSight(house, cat), "floor": house_floor_y(house)}


def run(room: dict, backend: NearWest, target: tuple) -> tuple[ViewBuffer, list]:
    settings = CaptureSettings(W, H, 90.0, views=8, radius=1.5)  # azimuths 0, 90, 180, 270
    buffer = ViewBuffer(8, W, H)
    cap = capture(
        backend,
        room["grid"],
        room["sight"],
        target,
        settings,
        buffer,
        floor_y=room["floor"],
        component=room["grid"].largest_component(),
    )
    return buffer, cap.viewpoints


def test_close_share_counts_near_pixels_not_background() -> None:
    depth_mm = np.array([[0, 100], [199, 200]], np.uint16)
    assert close_share(depth_mm) == pytest.approx(0.5)  # 0 is nothing, 200 mm is not nearer


def test_a_camera_against_something_is_redrawn(room: dict) -> None:
    # In the 6 x 6 room, target (3, 1, 3): the west camera (azimuth 270) would stand at x = 1.5,
    # west of x = 1.6, where the fake world is 10 cm from the lens; every other camera is east.
    backend = NearWest(wall_x=1.6)
    buffer, vps = run(room, backend, (3.0, 1.0, 3.0))
    assert buffer.n == 8 and all(v.usable for v in vps)
    west = [v for v in vps if v.azimuth_deg == 270.0]
    # refused at x = 1.5 (d = 1.5); the next candidate 0.3 m or more away on the bearing that is
    # nearest the wanted radius: d = 1.2 (x = 1.8)
    assert (1.5, west[0].position[1], 3.0) in backend.rendered
    assert [v.position[0] for v in west] == [pytest.approx(1.8), pytest.approx(1.8)]
    assert np.all(buffer.depth[:8] == 2000)  # the stored images are the accepted ones
    assert_views_are_their_cameras(buffer, vps)
    view = buffer.view[:8]
    assert np.all(view[:, COL["usable"]] == 1)
    for row, v in zip(view, vps, strict=True):
        x, _, z = v.position
        bearing = math.degrees(math.atan2(x - 3.0, z - 3.0)) % 360.0
        assert row[COL["bearing_deg"]] == pytest.approx(bearing, abs=1e-3)
        assert row[COL["azimuth_deg"]] == v.azimuth_deg
        assert row[COL["camera_height_m"]] == pytest.approx(v.position[1] - room["floor"])


def test_views_are_kept_unusable_when_every_candidate_is_refused(room: dict) -> None:
    backend = NearWest(wall_x=10.0)  # everywhere 10 cm from something
    buffer, vps = run(room, backend, (3.0, 1.0, 3.0))
    assert buffer.n == 8 and not any(v.usable for v in vps)
    assert np.all(buffer.view[:8, COL["usable"]] == 0)
    assert np.all(buffer.depth[:8] == 100)
    # the first candidate is kept: on every bearing, 1.5 m away
    assert all(v.on_bearing and v.radius_m == pytest.approx(1.5) for v in vps)
    assert_views_are_their_cameras(buffer, vps)


def test_a_redraw_before_the_last_azimuth_keeps_each_view_with_its_camera(room: dict) -> None:
    # the east camera (azimuth 90, x = 4.5) is refused and redrawn; the azimuths after it were
    # drawn with the first batch and are planned again from there: every stored view must still
    # be the image of its own camera, and nothing is drawn twice
    backend = NearWest(wall_x=4.4, east=True)
    buffer, vps = run(room, backend, (3.0, 1.0, 3.0))
    assert buffer.n == 8 and all(v.usable for v in vps)
    east = [v for v in vps if v.azimuth_deg == 90.0]
    assert all(v.position[0] <= 4.4 for v in east)
    assert (4.5, east[0].position[1], 3.0) in backend.rendered  # refused
    assert np.all(buffer.depth[:8] == 2000)
    assert_views_are_their_cameras(buffer, vps)
    assert len(set(backend.rendered)) == len(backend.rendered)
