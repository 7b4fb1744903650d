"""Marking up a frame: a circle per die, green when sure, red when not."""

import numpy as np

from bunco_pi.vision.annotate import annotate
from bunco_pi.vision.reading import DieReading, FrameReading


def test_sure_dice_are_green_and_doubtful_ones_red():
    frame = np.zeros((200, 300, 3), np.uint8)
    reading = FrameReading((
        DieReading(3, 0.9, (60.0, 100.0), 30.0),
        DieReading(5, 0.2, (220.0, 100.0), 30.0, "unclear pips"),
    ))
    out = annotate(frame, reading, min_confidence=0.5)
    assert frame.max() == 0  # the frame itself is left alone
    assert tuple(out[100, 30]) == (0, 200, 0)  # left edge of the first circle
    assert tuple(out[100, 190]) == (0, 0, 255)
