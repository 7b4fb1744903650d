"""The threshold-and-count baseline: right on clean drawn dice, which is all it promises."""

import numpy as np
from drawn_dice import draw_tray

from bunco_pi.vision.baseline import read_baseline


def test_reads_clean_drawn_dice():
    image = draw_tray([(1, 150, 150, 0), (4, 420, 170, 30), (6, 300, 360, 10)], tray=40)
    assert read_baseline(image).faces == (1, 4, 6)


def test_a_blank_die_has_no_face():
    reading = read_baseline(draw_tray([(0, 300, 240, 0)], tray=40))
    assert reading.faces == (None,) and reading.dice[0].problem == "no pips"


def test_nothing_on_an_empty_tray():
    assert read_baseline(np.full((480, 640, 3), 60, np.uint8)).dice == ()
