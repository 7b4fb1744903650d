"""The plain way to read dice, kept as the yardstick the pip reader is measured against.

Threshold the frame (each pixel against its neighbourhood's mean) so bright dice become
blobs, keep die-sized compact blobs, and count the dark spots inside each. No check of where
the pips sit, no idea of side faces or of how sure it is.
"""

from __future__ import annotations

import cv2
import numpy as np

from bunco_pi.vision.reader import ReaderSettings, to_working
from bunco_pi.vision.reading import DieReading, FrameReading, in_reading_order

BLOCK = 75  # neighbourhood for the dice threshold: larger than a die at the working width
BRIGHTER = 20  # a die is this much brighter than its neighbourhood


def read_baseline(frame: np.ndarray, settings: ReaderSettings | None = None) -> FrameReading:
    settings = settings or ReaderSettings()
    gray, scale, (ox, oy) = to_working(frame, settings)
    width = gray.shape[1]
    bright = cv2.adaptiveThreshold(
        gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, BLOCK, -BRIGHTER
    )
    contours, _ = cv2.findContours(bright, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    min_area, max_area = (0.02 * width) ** 2, (0.2 * width) ** 2
    dice = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if not min_area <= area <= max_area:
            continue
        _, (w, h), _ = cv2.minAreaRect(contour)
        if max(w, h) > 1.8 * max(1.0, min(w, h)):
            continue  # a strip of light, not a die
        pips = _count_dark_spots(gray, contour, area)
        (x, y), radius = cv2.minEnclosingCircle(contour)
        face = pips if 1 <= pips <= 6 else None
        dice.append(
            DieReading(
                face,
                1.0 if face else 0.0,
                (x / scale + ox, y / scale + oy),
                radius / scale,
                "" if face else "no pips" if pips == 0 else "too many pips",
            )
        )
    return in_reading_order(dice)


def _count_dark_spots(gray: np.ndarray, contour: np.ndarray, area: float) -> int:
    x, y, w, h = cv2.boundingRect(contour)
    crop = gray[y : y + h, x : x + w]
    inside = np.zeros_like(crop)
    cv2.drawContours(inside, [contour - [x, y]], -1, 255, cv2.FILLED)
    _, dark = cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    dark = cv2.bitwise_and(dark, inside)
    count, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    return sum(1 for i in range(1, count) if stats[i, cv2.CC_STAT_AREA] >= 0.004 * area)
