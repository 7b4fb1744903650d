"""Which way is "away from the camera" in a frame: it tells a die's top face from its sides.

A camera straight above the tray sees each die's top face farther from the frame centre than
any side face it also sees; a camera tilted forward sees side faces below (nearer) the top
face. In both cases the top face is the visible face farthest from the point straight under
the camera. A tilted view also squashes every round pip along one direction and shrinks pips
with distance, so the direction can be read from the pips themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from bunco_pi.vision.pips import Pip

MIN_COHERENCE = 0.3  # how alike the pips' squash directions must be to call the view tilted
MIN_SQUASHED = 4  # pips needed to judge


def far_direction(pips: list[Pip]) -> tuple[float, float] | None:
    """Unit vector pointing away from the camera if the view is tilted, else None.

    The axis is the pips' common squash direction, pointing up the frame: a camera on a post
    looks across the tray from its near edge, with the far side at the top of the picture.
    """
    squashed = [p for p in pips if p.roundness < 0.9]
    if len(squashed) < MIN_SQUASHED:
        return None
    weights = np.array([1.0 - p.roundness for p in squashed])
    doubled = np.array([2.0 * p.squash for p in squashed])
    c = float((weights * np.cos(doubled)).sum() / weights.sum())
    s = float((weights * np.sin(doubled)).sum() / weights.sum())
    if math.hypot(c, s) < MIN_COHERENCE:
        return None
    angle = 0.5 * math.atan2(s, c)
    axis = (math.cos(angle), math.sin(angle))
    # Which end is far cannot be told from squash alone, and pip sizes mislead (a die's own
    # side pips are smaller and nearer): a tilted camera is mounted with the far side up.
    sign = -1.0 if axis[1] > 0 else 1.0
    return sign * axis[0], sign * axis[1]


@dataclass(frozen=True)
class Unsquash:
    """Undo a tilted view's squash around one die: stretch along ``far`` by ``1 / factor``."""

    far: tuple[float, float]
    factor: float  # 0 < factor <= 1: how round a top-face pip looks
    origin: tuple[float, float]

    def forward(self, x: float, y: float) -> tuple[float, float]:
        return self._scale(x, y, 1.0 / self.factor)

    def inverse(self, x: float, y: float) -> tuple[float, float]:
        return self._scale(x, y, self.factor)

    def _scale(self, x: float, y: float, by: float) -> tuple[float, float]:
        dx, dy = x - self.origin[0], y - self.origin[1]
        along = dx * self.far[0] + dy * self.far[1]
        extra = (by - 1.0) * along
        return x + extra * self.far[0], y + extra * self.far[1]

    def pip(self, pip: Pip) -> Pip:
        x, y = self.forward(pip.x, pip.y)
        roundness = min(1.0, pip.roundness / self.factor)
        return replace(pip, x=x, y=y, area=pip.area / self.factor, roundness=roundness)


def unsquash_for(group: list[Pip], far: tuple[float, float] | None) -> Unsquash | None:
    """How to see one die's pips as from straight above, if the view is tilted enough to matter.

    The roundest half of the die's pips are taken to be its top face's: their roundness is how
    much the tilt squashes a circle lying flat on the tray.
    """
    if far is None:
        return None
    shapes = sorted((p.roundness for p in group), reverse=True)
    factor = float(np.median(shapes[: max(1, (len(shapes) + 1) // 2)]))
    if factor >= 0.85:
        return None
    factor = max(factor, 0.4)
    origin = (sum(p.x for p in group) / len(group), sum(p.y for p in group) / len(group))
    return Unsquash(far, factor, origin)
