"""What the group's dice look like, and the grey picture both readers are built for.

Both readers were made for white dice with dark pips on a darker tray: in grey, a die's face is
bright, its pips and the tray dark. Dice of other colours (blue with white pips, a translucent
red, black with white pips) do not look like that in plain grey, and a white or pale tray is
often brighter than them. So calibration measures the dice's colour, and each frame is first
turned into "how much like a die's face is this pixel": the face bright, everything else
(pips of either polarity, any tray not of the dice's colour) dark. Both readers then see the
picture they were built for. For white dice with dark pips the picture is plain grey, as it
always was.

The likeness is a Gaussian of the colour distance (CIE Lab) to the dice's face. For coloured
dice, the lightness counts for little (``COLOURED_LIGHTNESS``): shade and light across a tray
change a face's lightness far more than its hue, and the hue is what sets a blue face apart
from its white pips, a white tray or a wooden one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

PIPS = ("dark", "light")  # darker than the dice's face (white dice), or lighter (coloured dice)
GREY_DICE_CHROMA = 15.0  # a face less colourful than this is white, grey or black
SHADE_WEIGHT = 0.35  # weight of lightness in the colour distance, for coloured dice
BITS = 7  # per channel in the mapping's table: steps of 2 levels, below a camera's noise
EDGE = 0.85  # of the pips' distance from the face: the likeness is a half here
SOFTNESS = 0.06  # ... and falls from 0.9 to 0.1 within 2.2 x this (a logistic curve)


@dataclass(frozen=True)
class DiceLook:
    """The dice's face and pip colours (BGR, 0..255) as calibration measured them."""

    face: tuple[float, float, float]
    pip: tuple[float, float, float]

    @property
    def pips(self) -> str:
        return "light" if _lab(self.pip)[0] > _lab(self.face)[0] else "dark"

    @property
    def coloured(self) -> bool:
        _, a, b = _lab(self.face)
        return math.hypot(a, b) >= GREY_DICE_CHROMA

    @property
    def plain_grey(self) -> bool:
        """White (or pale grey) dice with dark pips: the readers' own picture, no mapping."""
        return not self.coloured and self.pips == "dark"

    def distance(self, colour: tuple[float, float, float]) -> float:
        """How far a colour (BGR) is from the dice's face, as the mapping weighs it."""
        return float(math.sqrt(_weighted_squares(np.array(_lab(colour), np.float32), self)))

    def pip_distance(self) -> float:
        return max(20.0, self.distance(self.pip))

    def likeness(self, colour: tuple[float, float, float]) -> float:
        """0..1: how much a colour looks like the dice's face (1: the face itself)."""
        return float(_likeness(np.float32(self.distance(colour)), self))


def to_grey(frame: np.ndarray, look: DiceLook | None = None) -> np.ndarray:
    """The frame as the readers want it (uint8, faces bright); a grey frame is left as it is."""
    if frame.ndim == 2:
        return frame
    if look is None or look.plain_grey:
        return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    levels = frame >> (8 - BITS)
    index = levels[..., 0].astype(np.int32) << (2 * BITS)
    index |= levels[..., 1].astype(np.int32) << BITS
    index |= levels[..., 2]
    return _table(look)[index]


def warm_up(look: DiceLook) -> None:
    """Make the mapping's table now (a second or two on a Pi), not at the first throw."""
    if not look.plain_grey:
        _table(look)


@lru_cache(maxsize=4)
def _table(look: DiceLook) -> np.ndarray:
    """The mapping for every colour at BITS bits a channel, looked up rather than computed:
    a colour conversion of every pixel of every frame costs more than both readers."""
    steps = (np.arange(1 << BITS, dtype=np.float32) + 0.5) * (256 / (1 << BITS))
    b, g, r = np.meshgrid(steps, steps, steps, indexing="ij")
    colours = np.stack([b, g, r], axis=-1).reshape(1, -1, 3) * np.float32(1 / 255)
    lab = cv2.cvtColor(colours, cv2.COLOR_BGR2Lab)[0]
    distance = np.sqrt(_weighted_squares(lab, look))
    return (_likeness(distance, look) * 255.0 + 0.5).astype(np.uint8)


def _likeness(distance: np.ndarray, look: DiceLook) -> np.ndarray:
    """A logistic step: faces (near), pips and the tray (far) apart, little in between.

    A step rather than a slope so that what is only part of the way to the pips' colour (a
    lamp's sheen on a coloured face, the pips of the faces below seen through a translucent
    die) stays face-bright, while a pip and anything as far from the face is dark.
    """
    scale = look.pip_distance()
    with np.errstate(over="ignore"):  # far from the face: exp overflows to inf, the likeness to 0
        return 1.0 / (1.0 + np.exp((distance - EDGE * scale) / (SOFTNESS * scale)))


def _weighted_squares(lab: np.ndarray, look: DiceLook) -> np.ndarray:
    """Squared colour distance (Lab) from the face; lightness weighs less for coloured dice."""
    weight = SHADE_WEIGHT if look.coloured else 1.0
    d = lab - np.array(_lab(look.face), np.float32)
    return (weight * d[..., 0]) ** 2 + d[..., 1] ** 2 + d[..., 2] ** 2


def _lab(bgr: tuple[float, float, float]) -> tuple[float, float, float]:
    pixel = np.array([[bgr]], np.float32) / 255.0
    lightness, a, b = cv2.cvtColor(pixel, cv2.COLOR_BGR2Lab)[0, 0]
    return float(lightness), float(a), float(b)
