"""What the reader saw in one frame: dice, each with a face (or the reason it has none)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class DieReading:
    face: int | None  # 1..6, or None when the die is seen but its top face cannot be read
    confidence: float  # 0..1: how much the reader trusts this face
    center: tuple[float, float]  # pixels in the original frame
    radius: float  # pixels: roughly half the die's width
    problem: str = ""  # why face is None or confidence low, for the OLED ("tilted", ...)


@dataclass(frozen=True)
class FrameReading:
    dice: tuple[DieReading, ...]

    @property
    def faces(self) -> tuple[int | None, ...]:
        return tuple(d.face for d in self.dice)

    @property
    def confidence(self) -> float:
        """The least confident die decides: one doubtful die makes the whole roll doubtful."""
        return min((d.confidence for d in self.dice), default=0.0)


def in_reading_order(dice: list[DieReading]) -> FrameReading:
    """The dice as one reading, top of the tray first, then left to right: the order a roll's
    faces are listed in."""
    return FrameReading(tuple(sorted(dice, key=lambda d: (d.center[1], d.center[0]))))


def closest_pairs(candidates: list[tuple[float, int, int]]) -> list[tuple[int, int]]:
    """From (distance, i, j) candidates, pairs (i, j) closest first, each i and j used once."""
    pairs, used_i, used_j = [], set(), set()
    for _, i, j in sorted(candidates):
        if i not in used_i and j not in used_j:
            pairs.append((i, j))
            used_i.add(i)
            used_j.add(j)
    return pairs


def same_dice(a: tuple[DieReading, ...], b: tuple[DieReading, ...]) -> list[tuple[int, int]]:
    """Dice of two readings of one frame that are the same die: (i, j) whose centres lie within
    the larger of their radii, closest first, each used once."""
    return closest_pairs([
        (math.dist(x.center, y.center), i, j)
        for i, x in enumerate(a)
        for j, y in enumerate(b)
        if math.dist(x.center, y.center) <= max(x.radius, y.radius)
    ])
