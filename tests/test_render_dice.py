"""The training renderer (scripts/render_dice.py): its choices are seeded, its labels come from
the scene. Rendering itself needs Blender's Python module (the `render` extra): without it
that test skips."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "render_dice.py"


@pytest.fixture(scope="module")
def render():
    spec = importlib.util.spec_from_file_location("render_dice", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["render_dice"] = module
    spec.loader.exec_module(module)
    return module


def test_the_kinds_mix_is_read_and_bad_ones_are_named(render):
    assert render.parse_mix("roll:3,cocked:1") == {"roll": 0.75, "cocked": 0.25}
    with pytest.raises(SystemExit, match="unknown kind 'dragon'"):
        render.parse_mix("roll:1,dragon:1")
    with pytest.raises(SystemExit, match="not kind:share"):
        render.parse_mix("roll:lots")


def test_a_seed_makes_the_same_dice_and_tray_and_another_seed_others(render):
    def looks(seed):
        rng = np.random.default_rng(seed)
        return render.dice_look(rng), render.tray_look(rng)

    assert looks(5) == looks(5)
    assert len({json.dumps(looks(seed)) for seed in range(20)}) == 20


def test_pips_contrast_with_the_body(render):
    """Dark dice get light pips and white dice dark ones, as real sets are made."""
    for seed in range(200):
        look = render.dice_look(np.random.default_rng(seed))
        body, pip = max(look["body"][:3]), max(look["pip"][:3])
        assert abs(body - pip) > 0.2 or look["material"] != "opaque" and abs(body - pip) > 0.1, look


def test_opposite_faces_add_up_to_seven(render):
    for face, side in render.SIDES.items():
        opposite = tuple(-c for c in side)
        assert {f for f, s in render.SIDES.items() if s == opposite} == {7 - face}


def test_a_tiny_render_is_labelled_from_its_scene(render, tmp_path):
    pytest.importorskip("bpy", reason="Blender's Python module (the render extra) is not installed")
    from bunco_pi.vision.dataset import list_photos, read_labels

    assert render.main([str(tmp_path), "--count", "1", "--size", "96", "--samples", "1",
                        "--kinds", "roll:1"]) == 0
    (photo,) = list_photos(tmp_path)
    scene = json.loads((tmp_path / "scenes" / f"{photo.name}.json").read_text())
    dice = read_labels(photo.label_path, 96, 96)
    flat = [d for d in scene["dice"] if d["state"] == "flat"]
    assert sorted(d.face for d in dice) == sorted(d["face"] for d in flat)
    for die in dice:  # every labelled top face lies in the picture, its box the size of a die
        assert 0 <= die.center[0] <= 96 and 0 <= die.center[1] <= 96
        assert 2 < die.size[0] < 48
    assert not any((tmp_path / "raw").iterdir())  # the unclipped render is not kept


def test_a_scattered_heap_labels_every_die_it_shows_and_hides_none(render, tmp_path):
    """The ``scatter`` kind: many dice of several sets at a slant. Each die in the picture is
    labelled once, as a face if it lies flat and nothing hides its top, else as unclear."""
    pytest.importorskip("bpy", reason="Blender's Python module (the render extra) is not installed")
    from bunco_pi.vision.dataset import list_photos, read_labels

    assert render.main([str(tmp_path), "--count", "1", "--size", "96", "--samples", "1",
                        "--start", "100000", "--kinds", "scatter:1"]) == 0
    (photo,) = list_photos(tmp_path)
    scene = json.loads((tmp_path / "scenes" / f"{photo.name}.json").read_text())
    assert scene["kind"] == "scatter" and scene["dice_sets"] >= 2 and len(scene["dice"]) >= 6
    faces = read_labels(photo.label_path, 96, 96)
    unclear = (tmp_path / "labels_unclear" / f"{photo.name}.txt").read_text().splitlines()
    assert len(faces) + len(unclear) == len(scene["dice"])
    readable = [d for d in scene["dice"] if d["state"] == "flat"]
    assert sorted(d.face for d in faces) == sorted(d["face"] for d in readable)
    assert all(line.startswith("6 ") for line in unclear)


def test_a_heap_seen_from_low_down_labels_dice_seen_edge_on_as_unclear(render, tmp_path):
    """The ``low`` kind: the heap 50 to 75 degrees off straight down. A top face seen more than
    ``GRAZING`` degrees from face on is a sliver: labelled unclear, never by its face."""
    pytest.importorskip("bpy", reason="Blender's Python module (the render extra) is not installed")
    from bunco_pi.vision.dataset import list_photos, read_labels

    assert render.main([str(tmp_path), "--count", "1", "--size", "96", "--samples", "1",
                        "--start", "300000", "--kinds", "low:1"]) == 0
    (photo,) = list_photos(tmp_path)
    scene = json.loads((tmp_path / "scenes" / f"{photo.name}.json").read_text())
    assert scene["kind"] == "low" and 50 <= scene["camera_tilt_degrees"] <= 75
    faces = read_labels(photo.label_path, 96, 96)
    unclear = (tmp_path / "labels_unclear" / f"{photo.name}.txt").read_text().splitlines()
    assert len(faces) + len(unclear) == len(scene["dice"])
    assert all(d["slant"] <= render.GRAZING for d in scene["dice"] if d["state"] == "flat")
    assert any(d["state"] == "edge-on" and d["slant"] > render.GRAZING for d in scene["dice"])
    assert sorted(d.face for d in faces) == sorted(d["face"] for d in scene["dice"] if d["state"] == "flat")


def _tray(light: float) -> np.ndarray:
    """Linear light of dark felt with three white dice on it, ``light`` times as bright."""
    linear = np.full((120, 160, 3), 0.04, np.float32)
    for x in (40, 80, 120):
        linear[50:70, x - 10:x + 10] = 0.8
    return linear * light


def test_automatic_exposure_makes_a_bright_room_and_a_dim_one_look_alike(render):
    """However bright the lamps, the camera's exposure brings the picture to the same level,
    as the Pi camera's does: the renderer's old fixed exposure blew bright scenes out white."""
    dim, bright = render.auto_expose(_tray(0.05)), render.auto_expose(_tray(40.0))
    assert dim.dtype == np.uint8 and dim.shape == (120, 160, 3)
    assert np.abs(dim.astype(int) - bright.astype(int)).max() <= 1
    assert 60 < dim[5, 5, 0] < 140  # the felt: mid grey in sRGB, not black or white


def test_automatic_exposure_keeps_white_dice_on_dark_felt_bright_and_its_bias_in_stops(render):
    picture = render.auto_expose(_tray(1.0))
    assert picture[60, 40, 0] == 255  # a white die on dark felt clips, as on a real camera
    darker = render.auto_expose(_tray(1.0), bias=-1.0)
    assert _linear(darker[5, 5, 0]) == pytest.approx(_linear(picture[5, 5, 0]) / 2, rel=0.05)


def test_a_glint_or_a_lamp_lit_corner_darkens_the_picture_little(render):
    """The sensor clips each pixel at white before the meter sees it: a small lamp's glint on
    the felt, 500 times brighter than the felt, leaves the felt as it was, and a corner under
    the lamp, 500 times brighter, darkens it by less than a stop (taken as it is, its light
    would darken the picture by more than two)."""
    felt = _linear(render.auto_expose(_tray(1.0))[90, 80, 0])
    glint, corner = _tray(1.0), _tray(1.0)
    glint[84:87, 62:65] = 500.0
    corner[:30, :40] = 20.0
    assert _linear(render.auto_expose(glint)[90, 80, 0]) == pytest.approx(felt, rel=0.05)
    assert 0.5 * felt < _linear(render.auto_expose(corner)[90, 80, 0]) < felt


def test_a_bright_patch_clipped_at_any_light_gives_the_same_picture(render):
    """Dark felt with a large patch 500 times brighter in the middle: however bright the scene
    as rendered, the exposure found is the same."""
    scene = np.full((120, 160, 3), 0.002, np.float32)
    scene[45:75, 60:100] = 1.0
    pictures = [render.auto_expose(scene * light).astype(int) for light in (0.01, 1.0, 100.0)]
    assert all(np.abs(p - pictures[0]).max() <= 1 for p in pictures[1:])


def test_the_meter_weighs_the_centre_more_than_the_edges(render):
    """The same lamp-lit patch darkens the picture more in the middle than at an edge."""
    middle, edge = _tray(1.0), _tray(1.0)
    middle[20:40, 60:100] = 0.6
    edge[100:120, 0:40] = 0.6
    assert render.auto_expose(middle)[90, 80, 0] < render.auto_expose(edge)[90, 80, 0] - 3


def test_a_pixel_beyond_any_number_does_not_spoil_the_picture(render):
    linear = _tray(1.0)
    linear[0, 0] = np.inf
    linear[0, 1] = np.nan
    spoilt, plain = render.auto_expose(linear).astype(int), render.auto_expose(_tray(1.0)).astype(int)
    assert np.abs(spoilt[60:] - plain[60:]).max() <= 2  # the inf pixel counted as white, no more


def test_automatic_exposure_lifts_a_dark_picture_until_its_highlights_are_seen(render):
    """A picture with almost nothing bright in it (dark dice on dark felt) is lifted until its
    brightest 2% reach half of white, as libcamera's highlight constraint does."""
    linear = np.full((100, 100, 3), 0.02, np.float32)
    linear[:, :3] = 0.05  # the brightest 3%
    picture = render.auto_expose(linear)
    assert _linear(picture[0, 0, 0]) == pytest.approx(render.HIGHLIGHT_TARGET, rel=0.03)


def _linear(value: int) -> float:
    return ((value / 255 + 0.055) / 1.055) ** 2.4


@pytest.mark.parametrize("drilled", [True, False])
def test_a_dies_flat_faces_are_shaded_flat_and_its_rounded_edges_smooth(render, drilled):
    """A flat face shaded smooth takes its normals from its corners: once pips are drilled into
    it, glossy dice showed streaks and crosses between the pips that no real die has."""
    bpy = pytest.importorskip("bpy", reason="Blender's Python module (the render extra) is not installed")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    rng = np.random.default_rng(3)
    look = {**render.dice_look(rng), "drilled": drilled}
    die = render.make_die(bpy, 0.016, look, render.body_material(bpy, look, rng),
                          render.plain_material(bpy, "pip", look["pip"], 0.3, rng))
    polygons = list(die.data.polygons)
    flat = [p for p in polygons if max(abs(c) for c in p.normal) >= 0.999]
    assert flat and not any(p.use_smooth for p in flat)
    assert any(p.use_smooth for p in polygons)  # the rounded edges (and hollows)


def test_a_picture_smaller_than_the_meters_grid_is_exposed_too(render):
    linear = np.full((6, 9, 3), 0.01, np.float32)
    linear[2:4, 3:6] = 0.2  # a die on the felt
    picture = render.auto_expose(linear)
    assert picture.shape == (6, 9, 3) and 20 < picture[0, 0, 0] < picture[3, 4, 0] <= 255
    assert render.auto_expose(linear * 50)[0, 0, 0] == picture[0, 0, 0]


def test_a_tray_thrown_again_keeps_its_camera_until_the_camera_is_nudged(render, tmp_path):
    """``--throws 2 --moved``: the same tray and camera with the dice thrown again, then the
    camera moved on its mount and as many throws again, each labelled from its own scene."""
    pytest.importorskip("bpy", reason="Blender's Python module (the render extra) is not installed")
    from bunco_pi.vision.dataset import read_labels

    assert render.main([str(tmp_path), "--count", "1", "--size", "96", "--samples", "1",
                        "--kinds", "roll:1", "--throws", "2", "--moved"]) == 0
    names = ["r000000", "r000000-t2", "r000000-moved", "r000000-moved-t2"]
    assert sorted(p.stem for p in (tmp_path / "images").iterdir()) == sorted(names)
    scenes = {n: json.loads((tmp_path / "scenes" / f"{n}.json").read_text()) for n in names}
    cameras = {n: scenes[n]["camera"] for n in names}
    assert cameras["r000000"] == cameras["r000000-t2"]
    assert cameras["r000000-moved"] == cameras["r000000-moved-t2"] != cameras["r000000"]
    # the scene file's tilt and height are the nudged camera's (moved sideways: as high)
    assert scenes["r000000-moved"]["camera_tilt_degrees"] != scenes["r000000"]["camera_tilt_degrees"]
    assert scenes["r000000-moved"]["camera_height"] == pytest.approx(cameras["r000000-moved"]["location"][2],
                                                                     abs=1e-3)
    places = {n: [(d["x"], d["y"]) for d in scenes[n]["dice"]] for n in names}
    assert len({json.dumps(p) for p in places.values()}) == 4  # thrown anew each time
    for n in names:  # every die lies flat: its label is its top face
        flat = [d["face"] for d in scenes[n]["dice"] if d["state"] == "flat"]
        labelled = read_labels(tmp_path / "labels" / f"{n}.txt", 96, 96)
        assert sorted(d.face for d in labelled) == sorted(flat)
    with pytest.raises(SystemExit, match="cannot be thrown again"):
        render.main([str(tmp_path / "heap"), "--count", "1", "--size", "96", "--samples", "1",
                     "--kinds", "scatter:1", "--throws", "2"])
