"""Honest refusal: a throw the camera cannot score is "not sure", never a roll.

The pictures are rendered trays (``scripts/render_dice.py``, numbers 800000 and up, never
trained on), small JPEGs kept with the tests: a die cocked against another or the tray's
wall, a hand reaching into the tray, a fourth die, a die lying partly out of the tray. A
plain throw from the same renderer should be read, to show the refusals are not a reader
refusing everything; the shipped readers do not read it yet (they learned from too few
renders: docs/dice-camera.md says how many), so that test is marked as an expected failure,
strictly: it fails the suite the day it passes. Read or not, it is never read as another
roll: its three pips in a row were once counted as two, sure (docs/dice-camera.md, "A second
look that sees another face").
"""

from pathlib import Path

import cv2
import pytest

from bunco_pi.vision.dataset import read_labels
from bunco_pi.vision.fusion import read_both
from bunco_pi.vision.verdict import SettledRoll, Unsure, judge

FIXTURES = Path(__file__).with_name("fixtures") / "refusals"


def read(name: str):
    image = cv2.imread(str(FIXTURES / f"{name}.jpg"))
    assert image is not None, f"{name}.jpg is missing from {FIXTURES}"
    return image, judge(read_both(image, dice=3), dice=3)  # as the table reads a roll of three


NOT_YET = pytest.mark.xfail(strict=True, reason="the shipped readers read too few rendered dice")


def test_a_plain_throw_is_never_read_as_another_roll():
    image, result = read("roll")
    truth = read_labels(FIXTURES / "roll.txt", image.shape[1], image.shape[0])
    assert not isinstance(result, SettledRoll) or sorted(result.faces) == sorted(d.face for d in truth)


@NOT_YET
def test_a_plain_throw_of_three_is_read():
    image, result = read("roll")
    truth = read_labels(FIXTURES / "roll.txt", image.shape[1], image.shape[0])
    assert len(truth) == 3
    assert isinstance(result, SettledRoll) and sorted(result.faces) == sorted(d.face for d in truth)


def test_a_cocked_die_is_not_scored():
    _, result = read("cocked")
    assert isinstance(result, Unsure)


def test_a_hand_in_the_tray_is_not_scored():
    _, result = read("hand")
    assert isinstance(result, Unsure)


def test_a_fourth_die_is_not_scored():
    _, result = read("four")
    assert isinstance(result, Unsure)


def test_a_fourth_die_is_refused_as_a_fourth_die():
    _, result = read("four")
    assert result == Unsure("saw 4 dice, not 3")


def test_a_die_partly_out_of_the_tray_is_not_scored():
    _, result = read("out")
    assert isinstance(result, Unsure)


@pytest.mark.parametrize("name", ["roll", "cocked", "hand", "four", "out"])
def test_the_fixtures_stay_small(name):
    assert (FIXTURES / f"{name}.jpg").stat().st_size < 50_000
