"""Fitting the pip layouts: true faces fit at any turn and size, scattered spots do not."""

import math

import numpy as np
import pytest

from bunco_pi.vision.faces import LAYOUTS, layout_fit


def placed(count, scale, turn_degrees, shift=(200.0, 100.0)):
    t = math.radians(turn_degrees)
    turn = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    return LAYOUTS[count] @ turn.T * scale + shift


@pytest.mark.parametrize("count", range(2, 7))
@pytest.mark.parametrize("turn", [0, 17, 45, 80])
def test_every_layout_fits_itself_turned_and_scaled(count, turn):
    fit = layout_fit(placed(count, 13.0, turn))
    assert fit.residual < 0.05
    assert fit.scale == pytest.approx(13.0, rel=0.02)


@pytest.mark.parametrize("count", range(3, 7))
def test_scattered_spots_fit_badly(count):
    rng = np.random.default_rng(count)
    residuals = [layout_fit(rng.uniform(0, 40, (count, 2))).residual for _ in range(50)]
    assert np.median(residuals) > 0.3


def test_a_five_missing_its_centre_is_a_good_four_not_a_five():
    corners = placed(4, 10.0, 30)
    assert layout_fit(corners).residual < 0.05
    lopsided = np.vstack([corners, corners[0] * 0.5 + corners[1] * 0.5])
    assert layout_fit(lopsided).residual > 0.3


def test_to_layout_puts_the_corner_pips_at_plus_minus_one():
    points = placed(4, 12.0, 25)
    fit = layout_fit(points)
    for x, y in points:
        u, v = fit.to_layout(x, y)
        assert abs(abs(u) - 1) < 0.05 and abs(abs(v) - 1) < 0.05


def test_one_pip_fits_with_no_scale_and_seven_do_not_fit():
    assert layout_fit(np.array([[5.0, 5.0]])).residual == 0.0
    assert layout_fit(np.zeros((7, 2))).residual == math.inf
