"""Finding pips: dark round spots with a bright face around them, and nothing else."""

import math
from pathlib import Path

import cv2
import numpy as np
from drawn_dice import draw_tray

from bunco_pi.vision.pips import PipSettings, find_pips


def gray(image):
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def test_finds_every_pip_of_a_six_where_it_was_drawn():
    image = draw_tray([(6, 320, 240, 0)])
    pips = find_pips(gray(image), PipSettings())
    assert len(pips) == 6
    expected = {(320 + 0.27 * 56 * u, 240 + 0.27 * 56 * v)
                for u, v in [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)]}
    for pip in pips:
        assert min(math.hypot(pip.x - x, pip.y - y) for x, y in expected) < 1.0
        assert pip.roundness > 0.85
        assert pip.contrast > 0.8


def test_a_dark_spot_without_a_bright_face_around_it_is_not_a_pip():
    image = np.full((200, 200), 70, np.uint8)
    cv2.circle(image, (100, 100), 5, 10, -1)
    assert find_pips(image, PipSettings(), min_face_level=80) == []


def test_a_scratch_is_not_a_pip():
    image = np.full((200, 200), 220, np.uint8)
    cv2.line(image, (60, 100), (140, 104), 20, 2)
    assert find_pips(image, PipSettings()) == []


def test_squash_points_across_a_flattened_spot():
    image = np.full((200, 200), 220, np.uint8)
    cv2.ellipse(image, (100, 100), (8, 4), 0, 0, 360, 20, -1)  # wide: narrowest up-down
    (pip,) = find_pips(image, PipSettings())
    assert 0.4 < pip.roundness < 0.6
    assert abs(math.sin(pip.squash)) > 0.99


def test_within_a_mask_only_the_spots_touching_it_are_pips():
    image = gray(draw_tray([(6, 150, 150, 0), (1, 400, 300, 0)]))
    mask = np.zeros(image.shape, np.uint8)
    cv2.circle(mask, (400, 300), 50, 255, -1)
    everywhere = find_pips(image, PipSettings())
    inside = find_pips(image, PipSettings(), within=mask)
    assert len(everywhere) == 7
    assert [(round(p.x), round(p.y)) for p in inside] == [(400, 300)]


def test_the_fast_labelling_finds_the_pips_the_default_labelling_finds(monkeypatch):
    # find_pips labels its dark spots with Grana's algorithm for speed; on real pictures it must
    # keep the same pips, in the same order, as with OpenCV's default labelling.
    pictures = sorted(Path(__file__).parent.joinpath("fixtures").glob("*/*.jpg"))
    assert len(pictures) >= 5
    greys = [cv2.resize(gray(cv2.imread(str(path))), (640, 480), interpolation=cv2.INTER_AREA)
             for path in pictures]
    fast = [find_pips(grey, PipSettings()) for grey in greys]
    monkeypatch.setattr(cv2, "connectedComponentsWithStatsWithAlgorithm",
                        lambda image, connectivity, _ltype, _algorithm:
                        cv2.connectedComponentsWithStats(image, connectivity=connectivity))
    default = [find_pips(grey, PipSettings()) for grey in greys]
    assert sum(len(pips) for pips in default) > 20
    for path, mine, theirs in zip(pictures, fast, default, strict=True):
        assert mine == theirs, path.name
