"""Draw what the reader saw on a copy of the frame: for checking a tray set-up by eye."""

from __future__ import annotations

import cv2
import numpy as np

from bunco_pi.vision.reading import FrameReading

_GOOD = (0, 200, 0)
_DOUBT = (0, 0, 255)


def annotate(frame: np.ndarray, reading: FrameReading, min_confidence: float) -> np.ndarray:
    """A BGR copy of ``frame`` with a circle and "face confidence" (or the problem) per die."""
    out = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    for die in reading.dice:
        sure = die.face is not None and die.confidence >= min_confidence
        colour = _GOOD if sure else _DOUBT
        center = (int(round(die.center[0])), int(round(die.center[1])))
        cv2.circle(out, center, int(round(die.radius)), colour, 2)
        text = f"{die.face} {die.confidence:.2f}" if die.face else die.problem or "?"
        if die.face and not sure and die.problem:
            text += f" {die.problem}"
        origin = (center[0] - int(die.radius), center[1] - int(die.radius) - 4)
        cv2.putText(out, text, origin, cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1, cv2.LINE_AA)
    return out
