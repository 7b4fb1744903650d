"""Every screen, pixel-exact against tests/golden/ through luma.core's dummy device.

After changing a screen on purpose: python3 -m bunco_pi.table.gallery tests/golden docs/screens
"""

from __future__ import annotations

from pathlib import Path

import pytest
from luma.core.device import dummy
from PIL import Image, ImageChops

from bunco_pi.table.gallery import SAMPLES
from bunco_pi.table.screens import ErrorView, PlayingView, render

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_screen_matches_golden_image(name):
    device = dummy(width=128, height=64, mode="1")
    device.display(render(SAMPLES[name]))
    golden = Image.open(GOLDEN / f"{name}.png").convert("1")
    diff = ImageChops.difference(device.image.convert("L"), golden.convert("L")).getbbox()
    assert diff is None, f"{name}: pixels differ inside {diff}; regenerate if intended"


def test_scores_change_the_picture():
    a = render(PlayingView(1, 3, 12, 7, "Ann", "A"))
    b = render(PlayingView(1, 3, 13, 7, "Ann", "A"))
    assert a.tobytes() != b.tobytes()
    box = ImageChops.difference(a.convert("L"), b.convert("L")).getbbox()
    assert box[2] <= 64  # only team A's half changed


def test_scores_are_large_enough_to_read_across_a_table():
    image = render(PlayingView(1, 3, 8, 0, "Ann", "A"))
    digit = image.crop((12, 14, 62, 50)).getbbox()
    assert digit is not None and digit[3] - digit[1] >= 20  # pixels tall (~7 mm on 0.96")


def test_long_text_is_cut_not_wrapped_off_screen():
    image = render(ErrorView("x" * 60, ("y" * 80,)))
    assert image.size == (128, 64)
    assert image.getbbox()[2] <= 128
