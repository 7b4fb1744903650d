"""Honest refusal: a throw the camera cannot score is "not sure", never a roll.

The pictures are rendered trays (``scripts/render_dice.py``, numbers 800000 and up, never
trained on), small JPEGs kept with the tests: a die cocked against another or the tray's
wall, a hand reaching into the tray, a fourth die, a die lying partly out of the tray. A
plain throw from the same renderer should be read, to show the refusals are not a reader
refusing everything; the shipped network does not read it yet (it learned from too few
renders: docs/dice-camera.md says how many), so that test and the reason given for the
fourth die are marked as expected failures, strictly: they fail the suite the day they pass.
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
    return image, judge(read_both(image), dice=3)


NOT_YET = pytest.mark.xfail(strict=True, reason="the shipped network reads too few rendered dice")


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
