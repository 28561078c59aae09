"""Rendering real ProcTHOR houses: depth, instance masks and occlusion agree with the house."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dfhelpers import SHARED
from renderhelpers import needs_egl
from shapely.geometry import LineString, Point, Polygon

from dataforge.render import Renderer, project_box, thor_camera_pose, unproject
from dataforge.world import load_catalogue, load_house
from dataforge.world.boxes import object_box
from dataforge.world.scene import WALL_INSET, house_scene, pixel_coverage

HOUSES = SHARED / "data" / "procthor_houses"
needs_houses = pytest.mark.skipif(
    not (HOUSES / "house_746.json").is_file(),
    reason="needs ../shared/data/procthor_houses, absent here",
)
pytestmark = [needs_houses, needs_egl()]
W, H = 320, 240


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer(W, H, vfov_deg=90)


def views(house) -> list[np.ndarray]:
    """Four yaws at 1.5 m from the middle of every room (rooms that contain their centroid)."""
    poses = []
    for room in house.rooms:
        poly = Polygon(room.polygon_xz)
        c = poly.representative_point()
        for yaw in (0, 90, 180, 270):
            poses.append(thor_camera_pose([c.x, 1.5, c.y], yaw, 15))
    return poses


def box_surface_distance(points: np.ndarray, box) -> np.ndarray:
    """Distance from points to the surface of an oriented box (0 on the surface)."""
    local = (points - np.asarray(box.center)) @ box.rotation_matrix()
    half = np.asarray(box.size) / 2
    q = np.abs(local) - half
    outside = np.linalg.norm(np.maximum(q, 0), axis=1)
    inside = np.minimum(q.max(axis=1), 0)
    return np.abs(outside + inside)


def box_outside_distance(points: np.ndarray, box) -> np.ndarray:
    """Distance from points to an oriented box (0 inside or on it)."""
    local = (points - np.asarray(box.center)) @ box.rotation_matrix()
    q = np.abs(local) - np.asarray(box.size) / 2
    return np.linalg.norm(np.maximum(q, 0), axis=1)


def element_part_boxes(house, cat, element_id: str) -> list:
    """World boxes of the parts of an object, or of one of its sub-receptacles
    (``<object id>|Drawer_2``)."""
    from dataforge.world.archetypes import shape_of
    from dataforge.world.boxes import OrientedBox, rotation_matrix

    ids = {o.id for o in house.objects}
    obj_id, element = element_id, None
    if element_id not in ids:
        obj_id, element = element_id.rsplit("|", 1)
    obj = house.object(obj_id)
    rot = rotation_matrix(obj.rotation)
    out = []
    for part in shape_of(cat.asset(obj.asset_id)).parts:
        if part.element != element:
            continue
        c = part.corners()
        lo, hi = c.min(axis=0), c.max(axis=0)
        centre = rot @ ((lo + hi) / 2) + np.asarray(obj.position)
        pitch, yaw, roll = obj.rotation
        out.append(OrientedBox(tuple(centre), tuple(hi - lo), yaw, pitch, roll))
    return out


@pytest.mark.parametrize("name", ["house_746.json", "house_3703.json", "procthor_train_1.json"])
def test_depth_unprojects_onto_the_element_the_mask_names(renderer: Renderer, name: str) -> None:
    cat = load_catalogue()
    house = load_house(HOUSES / name, catalogue=cat)
    hs = house_scene(house, cat)
    renderer.set_scene(hs.scene)
    openings = {o.id: o for o in house.openings}
    rng = np.random.default_rng(0)
    K = renderer.K
    checked = {"object": 0, "wall": 0, "floor": 0}
    for pose in views(house)[:16]:
        f = renderer.render(pose)
        vs, us = np.nonzero(f.instance)
        pick = rng.choice(len(us), size=min(200, len(us)), replace=False)
        pts = unproject(f.depth, K, pose, us[pick], vs[pick])
        for p, iid in zip(pts, f.instance[vs[pick], us[pick]], strict=True):
            info = hs.instances[int(iid)]
            if info.kind == "object" and info.element_id in openings:
                # a door or window: its frame, panes or leaf stand in the wall's hole
                opening = openings[info.element_id]
                wall = house.wall(opening.wall_ids[0])
                err = max(LineString([wall.start, wall.end]).distance(Point(p[0], p[2])) - 1.2, 0)
            elif info.kind == "object":
                # on (or inside) one of the parts of the object or sub-receptacle the mask names
                err = min(
                    box_outside_distance(p[None], b)[0]
                    for b in element_part_boxes(house, cat, info.element_id)
                )
            elif info.kind == "wall":
                wall = house.wall(info.element_id)
                line = LineString([wall.start, wall.end])
                err = max(line.distance(Point(p[0], p[2])) - WALL_INSET, 0.0)
                assert wall.y_min - 1e-3 <= p[1] <= wall.y_min + wall.height + 1e-3
            elif info.kind == "floor":
                room = house.room(info.element_id)
                err = abs(p[1] - room.floor_y)
                assert Polygon(room.polygon_xz).buffer(0.01).contains(Point(p[0], p[2]))
            else:
                continue
            assert err < 0.01, (name, info, p, err)
            checked[info.kind] += 1
            assert f.semantic[0, 0] >= 0
        # semantic ids are the instances' classes
        for iid in np.unique(f.instance[f.instance > 0]):
            assert np.all(f.semantic[f.instance == iid] == hs.instances[int(iid)].semantic_id)
    assert all(v > 20 for v in checked.values()), checked


def test_projected_boxes_enclose_masks_and_walls_hide_objects(renderer: Renderer) -> None:
    cat = load_catalogue()
    house = load_house(HOUSES / "house_746.json", catalogue=cat)
    hs = house_scene(house, cat)
    renderer.set_scene(hs.scene)
    solid = solid_wall_segments(house)
    hidden_checked = enclosed = 0
    for pose in views(house):
        f = renderer.render(pose)
        cam = pose[:3, 3]
        for obj in house.objects:
            box = object_box(obj, cat)
            iid = hs.instance_of(obj.id)
            mask = f.instance == iid
            if mask.any():
                bb = project_box(box.corners(), renderer.K, pose, W, H)
                assert bb is not None
                vs, us = np.nonzero(mask)
                u0, v0, u1, v1 = bb
                assert us.min() >= u0 - 1 and us.max() + 1 <= u1 + 1
                assert vs.min() >= v0 - 1 and vs.max() + 1 <= v1 + 1
                enclosed += 1
            if all(blocked(cam, c, solid) for c in box.corners()):
                assert not mask.any(), f"{obj.id} is drawn through a solid wall"
                hidden_checked += 1
    assert enclosed > 20 and hidden_checked > 20, (enclosed, hidden_checked)


def solid_wall_segments(house) -> list[tuple[LineString, float, float, list]]:
    out = []
    for wall in house.walls:
        if wall.empty:
            continue
        out.append(
            (LineString([wall.start, wall.end]), wall.y_min, wall.height, house.wall_holes(wall))
        )
    return out


def blocked(a: np.ndarray, b: np.ndarray, walls: list) -> bool:
    """True if the segment a -> b crosses a wall where the wall is solid (not in a hole)."""
    seg = LineString([(a[0], a[2]), (b[0], b[2])])
    for line, y0, height, holes in walls:
        hit = seg.intersection(line)
        if hit.is_empty or hit.geom_type != "Point":
            continue
        t = seg.project(hit) / max(seg.length, 1e-9)
        y = a[1] + t * (b[1] - a[1])
        s = line.project(hit)
        if not (y0 <= y <= y0 + height):
            continue
        if any(s0 <= s <= s1 and h0 <= y - y0 <= h1 for s0, s1, h0, h1 in holes):
            continue
        return True
    return False


def test_ids_are_stable_and_custom_objects_get_their_own_class(renderer: Renderer) -> None:
    from dataforge.render import cylinder_mesh

    cat = load_catalogue()
    house = load_house(HOUSES / "house_746.json", catalogue=cat)
    hs = house_scene(house, cat)
    first = house.top_level_objects()[0]
    again = house_scene(house, cat, ids=hs.ids, hidden=[first.id])
    assert again.instance_of(house.objects[-1].id) == hs.instance_of(house.objects[-1].id)
    assert first.id not in {i.element_id for i in again.instances.values()}
    room = Polygon(house.rooms[0].polygon_xz).representative_point()
    iid = again.add(cylinder_mesh([room.x, 0, room.y], 0.3, 1.0), "goal-0", "CylinderRed")
    assert again.instances[iid].semantic_id == again.semantics.id("CylinderRed")
    renderer.set_scene(again.scene)
    f = renderer.render(thor_camera_pose([room.x, 1.5, room.y - 1.2], 0, 30))
    assert 0 < pixel_coverage(f.instance, iid) < 1


@pytest.mark.parametrize("name", ["house_746.json", "procthor_train_1.json"])
def test_outer_sides_of_exterior_walls_do_not_bleed_into_rooms(
    renderer: Renderer, name: str
) -> None:
    # Both sides of a wall are zero-thickness planes 1 cm apart; if a side is pushed the wrong
    # way they coincide and z-fight, and the outer side shows up in stripes inside the room.
    cat = load_catalogue()
    house = load_house(HOUSES / name, catalogue=cat)
    hs = house_scene(house, cat)
    renderer.set_scene(hs.scene)
    outer = [
        i
        for i, info in hs.instances.items()
        if info.kind == "wall" and "exterior" in info.element_id.split("|")
    ]
    assert outer
    for pose in views(house):
        f = renderer.render(pose)
        assert np.isin(f.instance, outer).mean() < 0.02


def test_a_scene_rebuilt_from_kept_parts_is_the_scene_built_afresh() -> None:
    """house_scene with SceneParts (what the embedded world keeps between actions) reuses the
    meshes of what did not change and rebuilds what did: after a spawn, a move into a shut
    drawer, the drawer opening (the apple's record unchanged, drawn slid out) and a removal,
    its meshes, ids and merged buffers equal a scene built from nothing, and an unchanged
    object's meshes are the very same objects."""
    from dataforge.world.archetypes import shape_of
    from dataforge.world.placement import World
    from dataforge.world.scene import InstanceIds, SceneParts
    from dataforge.world.shape_mesh import drawn_offset, open_motions

    cat = load_catalogue()
    world = World(load_house(HOUSES / "house_746.json", catalogue=cat), cat)
    ids, parts = InstanceIds(), SceneParts()
    rng = np.random.default_rng(0)
    table = next(o.id for o in world.objects if o.object_type == "DiningTable")
    dresser = next(o.id for o in world.objects if o.object_type == "Dresser")
    still = next(o.id for o in world.objects if o.object_type == "Bed")
    first = house_scene(world.house(), cat, ids=ids, parts=parts)
    bed_meshes = [m for m in first.scene.meshes if m.instance_id == first.instance_of(still)]
    info = cat.asset(world.object(dresser).asset_id)
    opened = dataclasses.replace(
        world.object(dresser), open_elements=tuple((e, 1.0) for e in shape_of(info).elements)
    )
    drawers = [e for e, m in open_motions(opened, info).items() if m[0].kind == "slide"]
    for change in range(4):
        if change == 0:
            assert world.spawn("Apple_1", table, rng).ok
        elif change == 1:  # into a drawer, left shut
            apple = next(o.id for o in world.objects if o.id.startswith("Apple|spawned"))
            assert world.place(apple, dresser, rng, surface=drawers[0], prefer_open=False).ok
            world.set_open_elements(dresser, {})
            moved = world.object(apple)
        elif change == 2:  # the drawer opens: the apple's record is the same, drawn slid out
            world.set_open_elements(dresser, {drawers[0]: 1.0})
            assert world.object(apple) == moved
            box = object_box(moved, cat)
            assert np.any(drawn_offset(box, world.object(dresser), info))
        else:
            world.remove(next(o.id for o in world.objects if o.parent_id == table))
        kept = house_scene(world.house(), cat, ids=ids, parts=parts)
        fresh = house_scene(world.house(), cat, ids=InstanceIds(ids.to_dict()))
        assert kept.id_table() == fresh.id_table()
        a, b = kept.scene.buffers(), fresh.scene.buffers()
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        reused = [m for m in kept.scene.meshes if m.instance_id == kept.instance_of(still)]
        assert len(reused) == len(bed_meshes)
        assert all(x is y for x, y in zip(reused, bed_meshes, strict=True))
