"""Turning a reading into a roll to score, or a short reason not to."""

import pytest

from bunco_pi.vision.reading import DieReading, FrameReading
from bunco_pi.vision.verdict import SettledRoll, Unsure, judge


def die(face, confidence=0.9, problem=""):
    return DieReading(face, confidence, (0.0, 0.0), 10.0, problem)


def test_three_sure_dice_are_a_roll():
    result = judge(FrameReading((die(2), die(2), die(5, 0.7))), dice=3, min_confidence=0.5)
    assert result == SettledRoll((2, 2, 5), 0.7)


@pytest.mark.parametrize(
    ("count", "reason"), [(0, "no dice seen"), (2, "saw 2 dice, not 3"), (4, "saw 4 dice, not 3")]
)
def test_not_exactly_three_dice_is_not_sure(count, reason):
    assert judge(FrameReading(tuple(die(6) for _ in range(count)))) == Unsure(reason)


def test_one_doubtful_die_makes_the_roll_not_sure():
    reading = FrameReading((die(1), die(4, 0.3, "unclear pips"), die(6)))
    assert judge(reading, min_confidence=0.5) == Unsure("unsure: unclear pips")


def test_an_unreadable_die_gives_its_problem():
    reading = FrameReading((die(1), die(None, 0.0, "too many pips"), die(6)))
    assert judge(reading) == Unsure("too many pips")


def test_reasons_fit_one_oled_line():
    reading = FrameReading((die(1), die(4, 0.1, "a rather long explanation of it"), die(6)))
    result = judge(reading)
    assert isinstance(result, Unsure) and len(result.reason) <= 21


def test_the_number_of_dice_is_a_setting():
    assert judge(FrameReading((die(3), die(3))), dice=2) == SettledRoll((3, 3), 0.9)


def test_one_die_is_a_die():
    assert judge(FrameReading((die(5),))) == Unsure("saw 1 die, not 3")
