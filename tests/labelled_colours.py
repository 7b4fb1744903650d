"""The reader's settings for a picture's dice, their colours measured from its labelled dice as
learning measures them from a roll (``learn.roll_sample``): what a table that learned them reads
with, nothing written in."""

from collections.abc import Sequence

import numpy as np

from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.dataset import LabelledDie
from bunco_pi.vision.learn import roll_sample
from bunco_pi.vision.reader import ReaderSettings
from bunco_pi.vision.reading import DieReading, FrameReading


def learned_settings(frame: np.ndarray, labelled: Sequence[LabelledDie]) -> ReaderSettings:
    sample = roll_sample(frame, FrameReading(tuple(
        DieReading(d.face, 1.0, d.center, 0.5 * max(d.size)) for d in labelled)))
    assert sample is not None, "the labelled dice are not of one colour"
    settings = TrayCalibration(dice_colour=sample.face, pip_colour=sample.pip).reader_settings()
    assert settings.look is not None and not settings.look.plain_grey
    return settings
