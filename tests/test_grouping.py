"""Joining pips into dice: the pips of a face join, pips of dice apart on the tray do not."""

import cv2
from drawn_dice import draw_tray

from bunco_pi.vision.grouping import group_pips
from bunco_pi.vision.pips import PipSettings, find_pips


def groups_of(image):
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return sorted(len(g) for g in group_pips(gray, find_pips(gray, PipSettings())))


def test_each_die_on_a_dark_tray_is_one_group():
    assert groups_of(draw_tray([(6, 150, 150, 0), (5, 420, 170, 30), (1, 300, 360, 0)])) == [1, 5, 6]


def test_the_centre_pip_of_a_five_does_not_break_the_line_between_corners():
    assert groups_of(draw_tray([(5, 300, 240, 45)])) == [5]


def test_dice_a_few_millimetres_apart_stay_apart():
    # 62 px apart for 56 px dice: a 6 px strip of dark tray between them.
    assert groups_of(draw_tray([(4, 200, 200, 0), (4, 262, 200, 0)])) == [4, 4]


def test_a_large_gap_between_pips_of_one_size_splits_them():
    # Two twos far apart: four pips alike, joined only within each die.
    assert groups_of(draw_tray([(2, 100, 100, 0), (2, 500, 400, 0)])) == [2, 2]


def test_pips_very_different_in_size_do_not_join():
    image = draw_tray([(1, 300, 240, 0)], die=90)
    small = draw_tray([(1, 300, 240, 0)], die=30)
    image[230:250, 345:365] = small[230:250, 290:310]  # a tiny pip on the same face
    assert groups_of(image) == [1, 1]
