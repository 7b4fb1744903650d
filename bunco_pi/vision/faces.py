"""The six pip layouts, and how well a set of pip positions fits the layout for its count.

A face read by counting pips is only trusted if the pips also sit where a die puts them:
four specks of dirt rarely form a square, a side face seen edge-on is squashed. The fit is a
similarity transform (shift, turn, scale) of the canonical layout onto the pips.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Pip centres on a face in units of the corner pips' offset from the centre.
LAYOUTS: dict[int, np.ndarray] = {
    1: np.array([[0.0, 0.0]]),
    2: np.array([[-1.0, -1.0], [1.0, 1.0]]),
    3: np.array([[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]]),
    4: np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0]]),
    5: np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0], [0.0, 0.0]]),
    6: np.array([[-1.0, -1.0], [-1.0, 0.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 0.0], [1.0, 1.0]]),
}

_ANGLES = np.deg2rad(np.arange(0.0, 180.0, 3.0))  # every layout repeats after a half turn
_COS, _SIN = np.cos(_ANGLES), np.sin(_ANGLES)
_ROTATIONS = np.stack([np.stack([_COS, -_SIN], 1), np.stack([_SIN, _COS], 1)], axis=1)


@dataclass(frozen=True)
class LayoutFit:
    residual: float  # RMS distance pip -> layout position, in corner offsets (0 = perfect)
    scale: float  # pixels per layout unit: the corner pips' offset from the face centre
    angle: float  # radians: how far the layout is turned
    center: tuple[float, float]  # pixels

    def to_layout(self, x: float, y: float) -> tuple[float, float]:
        """A pixel position in this face's layout units (corner pips at +-1)."""
        if self.scale <= 0:
            return math.inf, math.inf
        dx, dy = (x - self.center[0]) / self.scale, (y - self.center[1]) / self.scale
        c, s = math.cos(self.angle), math.sin(self.angle)
        return c * dx + s * dy, -s * dx + c * dy


def layout_fit(points: np.ndarray) -> LayoutFit:
    """The best fit of the layout for ``len(points)`` pips.

    The residual is the root-mean-square distance from each pip to its layout position, in
    units of the fitted corner offset (a pip half-way to the wrong place is about 0.5), plus a
    penalty when two pips claim the same position. One pip fits perfectly at unknown scale (0).
    """
    count = len(points)
    center = (float(points[:, 0].mean()), float(points[:, 1].mean())) if count else (0.0, 0.0)
    if count not in LAYOUTS:
        return LayoutFit(math.inf, 0.0, 0.0, center)
    if count == 1:
        return LayoutFit(0.0, 0.0, 0.0, center)
    centred = points - points.mean(axis=0)
    layout = LAYOUTS[count] - LAYOUTS[count].mean(axis=0)
    scale = math.sqrt((centred**2).sum() / (layout**2).sum())
    if scale <= 0:
        return LayoutFit(math.inf, 0.0, 0.0, center)
    observed = centred / scale
    turned = np.einsum("aij,nj->ani", _ROTATIONS, layout)  # (angles, count, 2)
    distance = np.linalg.norm(observed[None, :, None, :] - turned[:, None, :, :], axis=-1)
    nearest = distance.argmin(axis=2)  # (angles, observed pip) -> layout position
    error = distance.min(axis=2)
    # at each angle, the pips that claim a layout position another pip has claimed already
    claimed = np.sort(nearest, axis=1)
    shared = (claimed[:, 1:] == claimed[:, :-1]).sum(axis=1)
    score = np.sqrt((error**2).mean(axis=1)) + 0.5 * shared
    best = int(score.argmin())
    return LayoutFit(float(score[best]), scale, float(_ANGLES[best]), center)
