"""Objects in words as the embedded world draws them (dataforge.world.appearance): the colour
name is the nearest named colour to the pixels a render shows, shapes follow what the archetype
chose, a print is named only where one is drawn, and nothing changes between runs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from renderhelpers import needs_egl
from roomhelpers import one_room_house, standing

from dataforge.errors import UsageError
from dataforge.simulators import EmbeddedWorld
from dataforge.world import load_catalogue, load_house
from dataforge.world.appearance import (
    NAMED_COLORS,
    asset_appearance,
    color_name,
    inside_part,
    shape_appearance,
    srgb_to_lab,
    visible_areas,
)
from dataforge.world.archetypes import shape_of
from dataforge.world.materials import SKY_COLOR
from dataforge.world.shapes import Part, ShapeBuilder

CAT = load_catalogue()


def _lab_distance(a: object, b: object) -> float:
    return float(np.linalg.norm(srgb_to_lab(a) - srgb_to_lab(b)))


# -- colour names ---------------------------------------------------------------------------


def test_srgb_to_lab_matches_reference_values() -> None:
    np.testing.assert_allclose(srgb_to_lab((255, 255, 255)), (100.0, 0.0, 0.0), atol=0.05)
    np.testing.assert_allclose(srgb_to_lab((0, 0, 0)), (0.0, 0.0, 0.0), atol=1e-9)
    # sRGB red: L* 53.24, a* 80.09, b* 67.20 (CIE 1976, D65)
    np.testing.assert_allclose(srgb_to_lab((255, 0, 0)), (53.24, 80.09, 67.20), atol=0.05)


def test_named_colors_name_their_own_prototypes() -> None:
    for name, rgb, kind in NAMED_COLORS:
        assert color_name(rgb, metal=kind == "metal") == name, (name, rgb)
    assert color_name((200, 30, 25)) == "red"
    assert color_name((30, 60, 160)) == "blue"
    assert color_name((190, 192, 196), metal=True) == "silver"  # a steel pot
    assert color_name((190, 192, 196)) != "silver"  # silver is for metal only
    assert color_name((181, 151, 80), metal=True) == "gold"  # brass


# -- what a render shows --------------------------------------------------------------------


def _facing_pixels(asset_id: str, size: int = 128) -> np.ndarray:
    """The object's unshaded colours as a render shows them: lit by a head light alone (a
    pixel's brightness is its colour times the cosine between its surface and the view), the
    pixels whose surface (normal from the depth map) faces the camera within 35 degrees, each
    divided by that cosine."""
    from dataforge.render import Renderer, backproject, thor_camera_pose

    info = CAT.asset(asset_id)
    house = load_house(
        one_room_house([standing(CAT, "Thing|1", asset_id, 3.0, 3.0)]), catalogue=CAT
    )
    world = EmbeddedWorld(house, CAT, width=size, height=size, vfov_deg=40.0)
    world._renderer = Renderer(
        size, size, vfov_deg=40.0, ambient=0.0, fill=1.0, background=SKY_COLOR
    )
    reach = max(info.size) * 1.8 + 0.1
    eye = (3.0, info.size[1] * 0.5 + reach * 0.35, 3.0 + reach)
    frame = world.render(eye, yaw=180.0, horizon=20.0)
    mine = frame.instance == world.scene.instance_of("Thing|1")
    vs, us = np.mgrid[0:size, 0:size]
    uv = np.column_stack([us.ravel() + 0.5, vs.ravel() + 0.5])
    pose = thor_camera_pose(eye, 180.0, 20.0)
    pts = backproject(uv, frame.depth.ravel(), world._renderer.K, pose).reshape(size, size, 3)
    du = pts[1:-1, 2:] - pts[1:-1, :-2]
    dv = pts[2:, 1:-1] - pts[:-2, 1:-1]
    n = np.cross(du, dv)
    n /= np.maximum(np.linalg.norm(n, axis=-1, keepdims=True), 1e-12)
    view = np.asarray(eye) - pts[1:-1, 1:-1]
    view /= np.linalg.norm(view, axis=-1, keepdims=True)
    cos = np.abs(np.sum(n * view, axis=-1))
    inner = mine[1:-1, 1:-1] & mine[:-2, 1:-1] & mine[2:, 1:-1] & mine[1:-1, :-2] & mine[1:-1, 2:]
    keep = inner & (cos > np.cos(np.radians(35.0)))
    rgb = frame.rgb[1:-1, 1:-1][keep].astype(np.float64) / cos[keep][:, None]
    assert len(rgb) > 50, asset_id
    return np.clip(rgb, 0.0, 255.0)


def _rendered_name(asset_id: str, metal: bool = False) -> tuple[str, np.ndarray]:
    """The colour name most of the object's facing pixels have, and their median colour."""
    pixels = _facing_pixels(asset_id)
    names = [color_name(p, metal) for p in pixels]
    top = max(dict.fromkeys(names), key=names.count)
    return top, np.median(pixels[np.array(names) == top], axis=0)


ONE_COLOR_ASSETS = [
    a.asset_id
    for t in ("Vase", "Tomato", "Mug", "Lettuce", "SaltShaker", "PepperShaker")
    for a in CAT.assets_of(t)[:6]
]


@needs_egl()
def test_the_color_name_is_the_nearest_name_to_the_rendered_pixels() -> None:
    for asset_id in ONE_COLOR_ASSETS:
        drawn = asset_appearance(CAT.asset(asset_id))
        name, _ = _rendered_name(asset_id, metal=drawn.material == "metal")
        assert name == drawn.color.split(" and ")[0], (asset_id, name, drawn)


@needs_egl()
def test_a_red_porcelain_vase_is_red_not_the_old_tables_blue() -> None:
    # Vase_Flat_2 is made of Porcelain_Red_Mat; the per-category table called every vase blue
    name, measured = _rendered_name("Vase_Flat_2")
    assert name == "red" and measured[0] > measured[1] + 40 and measured[0] > measured[2] + 40
    assert _lab_distance(measured, asset_appearance(CAT.asset("Vase_Flat_2")).rgb) < 5.0
    drawn = asset_appearance(CAT.asset("Vase_Flat_2"))
    assert drawn.color == "red" and drawn.material == "ceramic"
    assert drawn.print_or_design is None  # a plain glaze: nothing printed or painted on it


def test_drawn_red_food_is_named_red() -> None:
    for info in CAT.assets_of("Tomato"):
        assert asset_appearance(info).color.split(" and ")[0] == "red", info.asset_id


# -- shapes ---------------------------------------------------------------------------------


def _vase(kind_shape: str, tall: bool = True) -> tuple[str, object]:
    """A made-up tall vase asset whose archetype drew ``kind_shape``'s kind."""
    base = CAT.assets_of("Vase")[0]
    size = (0.2, 0.4, 0.2) if tall else (0.3, 0.3, 0.3)
    for k in range(200):
        info = dataclasses.replace(base, asset_id=f"Vase_Made_{k}", size=size)
        if shape_of(info).description.get("shape") == kind_shape:
            return info.asset_id, info
    raise AssertionError(f"no vase drew {kind_shape}")


def test_a_straight_vase_is_cylindrical_and_a_bulb_vase_is_not() -> None:
    _, straight = _vase("cylindrical")
    shape = shape_of(straight)
    # what was drawn: two upright cylinders, the body widening a little, no sphere
    assert [p.primitive for p in shape.parts] == ["cylinder", "cylinder"]
    assert 1.0 < shape.parts[0].taper <= 1.2
    assert asset_appearance(straight).shape == "cylindrical"
    _, bulb = _vase("bulbous")
    assert "sphere" in [p.primitive for p in shape_of(bulb).parts]
    _, amphora = _vase("diamond")
    assert [p.taper > 1 for p in shape_of(amphora).parts][:2] == [True, False]  # out, then in
    for info in CAT.assets_of("Vase"):
        parts = shape_of(info).parts
        word = asset_appearance(info).shape
        if all(p.primitive == "cylinder" for p in parts):
            assert word not in ("bulbous", "spherical", "round"), info.asset_id
        else:
            assert word == "bulbous", info.asset_id


def test_shapes_of_the_spawnable_types_follow_the_drawing() -> None:
    for info in CAT.assets_of("Box") + CAT.assets_of("TissueBox"):
        assert asset_appearance(info).shape == "cuboidal"
    for info in CAT.assets_of("Bowl"):
        assert asset_appearance(info).shape == "concave"
    for info in CAT.assets_of("Plate"):
        w, _, d = info.size
        assert asset_appearance(info).shape == (
            "circular" if abs(w - d) < 0.1 * max(w, d) else "oval"
        )


def test_fallback_shape_from_the_largest_part_and_the_box() -> None:
    b = ShapeBuilder((0.1, 0.1, 0.1), "Thing_1", "test")
    b.sphere((0.0, 0.05, 0.0), (0.05, 0.05, 0.05))
    info = CAT.assets_of("Apple")[0]
    assert shape_appearance(b.build(), info).shape == "spherical"
    b = ShapeBuilder((0.5, 0.05, 0.1), "Thing_2", "test")
    b.box((-0.25, 0.25), (0.0, 0.05), (-0.05, 0.05))
    assert shape_appearance(b.build(), info).shape == "elongated"
    b = ShapeBuilder((0.3, 0.02, 0.2), "Thing_3", "test")
    b.box((-0.15, 0.15), (0.0, 0.02), (-0.1, 0.1))
    assert shape_appearance(b.build(), info).shape == "rectangular"


def test_describe_records_words_and_draws_nothing() -> None:
    b = ShapeBuilder((0.1, 0.1, 0.1), "Thing_1", "test")
    before = b.rng.bit_generator.state
    b.describe(shape="cylindrical", print_or_design="a label")
    b.describe(print_or_design=None)
    assert b.rng.bit_generator.state == before and not b.parts
    assert b.build().description == {"shape": "cylindrical"}
    with pytest.raises(UsageError):
        b.describe(size="big")


# -- prints ---------------------------------------------------------------------------------


def test_a_print_is_named_only_where_one_is_drawn() -> None:
    for info in CAT.assets_of("Book"):
        shape = shape_of(info)
        band = any(p.role == "secondary" for p in shape.parts)  # the band across the cover
        assert (asset_appearance(info).print_or_design == "a band") == band, info.asset_id
    for info in CAT.assets_of("Cup"):
        band = any(p.role == "secondary" for p in shape_of(info).parts)
        assert (asset_appearance(info).print_or_design == "a band") == band, info.asset_id
    for t in ("Vase", "Apple", "Tomato", "Mug", "Bowl", "Pot", "Pan", "Egg", "Potato"):
        for info in CAT.assets_of(t):  # plain: one colour per part, no label, band or tape
            assert asset_appearance(info).print_or_design is None, info.asset_id
    for info in CAT.assets_of("WineBottle"):
        assert asset_appearance(info).print_or_design == "a label"
        assert any(p.role == "paper" for p in shape_of(info).parts)


# -- visible area ---------------------------------------------------------------------------


def test_hidden_faces_do_not_count() -> None:
    b = ShapeBuilder((0.2, 0.2, 0.2), "Thing_1", "test")
    b.box((-0.1, 0.1), (0.0, 0.2), (-0.1, 0.1), color=(200, 30, 30))
    b.box((-0.05, 0.05), (0.05, 0.15), (-0.05, 0.05), color=(30, 30, 200))  # inside: unseen
    shape = b.build()
    areas = visible_areas(shape)
    assert areas[0] == pytest.approx(6 * 0.2 * 0.2) and areas[1] == 0.0
    assert shape_appearance(shape, CAT.assets_of("Box")[0]).color == "red"
    # a box half under another: its hidden half and its face against the other do not count
    b = ShapeBuilder((0.2, 0.2, 0.2), "Thing_2", "test")
    b.box((-0.1, 0.1), (0.0, 0.1), (-0.1, 0.1), color=(200, 30, 30))
    b.box((-0.1, 0.1), (0.1, 0.2), (-0.1, 0.1), color=(30, 30, 200))
    areas = visible_areas(b.build())
    np.testing.assert_allclose(areas, [0.12, 0.12], atol=1e-9)  # 4 sides and the free end
    assert shape_appearance(b.build(), CAT.assets_of("Box")[0]).color == "red and blue"


def test_inside_part_of_each_primitive() -> None:
    pts = np.array([[0.0, 0.0, 0.0], [0.09, 0.0, 0.0], [0.11, 0.0, 0.0], [0.0, 0.0, 0.3]])
    box = Part("box", (0.0, 0.0, 0.0), (0.2, 0.2, 0.2))
    assert inside_part(pts, box).tolist() == [True, True, False, False]
    ball = Part("sphere", (0.0, 0.0, 0.0), (0.2, 0.2, 0.2))
    assert inside_part(pts, ball).tolist() == [True, True, False, False]
    cone = Part("cylinder", (0.0, 0.0, 0.0), (0.2, 0.2, 0.2), taper=0.5)  # top radius 0.05
    top = np.array([[0.07, 0.099, 0.0], [0.04, 0.099, 0.0], [0.095, -0.099, 0.0]])
    assert inside_part(top, cone).tolist() == [False, True, True]
    ring = Part("torus", (0.0, 0.0, 0.0), (0.2, 0.04, 0.2))  # major 0.08, tube radius 0.02
    assert inside_part(
        np.array([[0.08, 0.0, 0.0], [0.0, 0.0, 0.0], [0.08, 0.03, 0.0]]), ring
    ).tolist() == [True, False, False]


# -- per object, determinism ------------------------------------------------------------------


def test_every_instance_of_an_asset_is_described_alike_and_runs_agree() -> None:
    info = CAT.asset("Vase_Flat_2")
    house = load_house(
        one_room_house(
            [
                standing(CAT, "Vase|1", "Vase_Flat_2", 2.0, 2.0),
                standing(CAT, "Vase|2", "Vase_Flat_2", 4.0, 4.0, 90.0),
            ]
        ),
        catalogue=CAT,
    )
    world = EmbeddedWorld(house, CAT, width=32, height=32)
    a, b = world.appearance("Vase|1"), world.appearance("Vase|2")
    assert a == b == asset_appearance(info)
    # the same words computed afresh (no cache)
    assert shape_appearance(shape_of(info), info) == asset_appearance(info)
    assert world.appearance("Gone|1", "Vase_Flat_2") == a  # an object carried off: by its asset
    with pytest.raises(UsageError):
        world.appearance("Gone|1")
