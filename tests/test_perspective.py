"""Telling the camera's tilt from the pips, and undoing it."""

import math

import pytest

from bunco_pi.vision.perspective import Unsquash, far_direction, unsquash_for
from bunco_pi.vision.pips import Pip


def pip(x, y, roundness=1.0, squash=0.0, area=50.0):
    return Pip(x, y, area, roundness, 200.0, 0.7, squash)


def test_round_pips_mean_a_camera_straight_above():
    assert far_direction([pip(10 * i, 5 * i) for i in range(10)]) is None


def test_pips_squashed_up_down_mean_the_far_side_is_up():
    pips = [pip(50 * (i % 4), 40 * i, 0.6, math.pi / 2) for i in range(10)]
    far = far_direction(pips)
    assert far is not None
    assert far[1] == pytest.approx(-1.0, abs=0.05)


def test_pips_squashed_sideways_mean_a_camera_turned_on_its_side():
    pips = [pip(40 * i, 50 * (i % 4), 0.6, 0.02) for i in range(10)]
    far = far_direction(pips)
    assert abs(far[0]) == pytest.approx(1.0, abs=0.05)


def test_squash_in_all_directions_is_no_tilt():
    pips = [pip(10 * i, 0, 0.6, i * math.pi / 8) for i in range(8)]
    assert far_direction(pips) is None


def test_unsquash_makes_squashed_pips_round_and_goes_back_exactly():
    unsquash = Unsquash((0.0, -1.0), 0.5, (100.0, 100.0))
    flat = unsquash.pip(pip(100, 120, roundness=0.5))
    assert flat.roundness == pytest.approx(1.0)
    assert (flat.x, flat.y) == pytest.approx((100.0, 140.0))
    assert unsquash.inverse(flat.x, flat.y) == pytest.approx((100.0, 120.0))


def test_no_unsquash_for_round_pips_or_without_tilt():
    group = [pip(0, 0, 0.95), pip(10, 10, 0.9)]
    assert unsquash_for(group, (0.0, -1.0)) is None
    assert unsquash_for([pip(0, 0, 0.5)], None) is None
