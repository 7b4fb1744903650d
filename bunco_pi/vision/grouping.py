"""Which pips belong to one die: the same face, or faces of one die seen together.

Two pips are joined when they are close for their size, alike in size, and the straight line
between them crosses only bright face: the dark tray, a shadow or the gap between two dice
breaks it. Dice that touch on a light tray may still join; the reader splits those.
"""

from __future__ import annotations

import math

import numpy as np

from bunco_pi.vision.pips import Pip


def group_pips(
    gray: np.ndarray, pips: list[Pip], link: float = 6.0, bridge: float = 0.72
) -> list[list[Pip]]:
    """Pips joined into dice: at most ``link`` pip widths apart, alike in size, and with
    nothing darker than ``bridge`` times their face's brightness on the line between them."""
    parent = list(range(len(pips)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(pips):
        for j in range(i + 1, len(pips)):
            b = pips[j]
            reach = link * max(a.diameter, b.diameter)
            if abs(a.x - b.x) > reach or abs(a.y - b.y) > reach:
                continue
            if math.hypot(a.x - b.x, a.y - b.y) > reach:
                continue
            if max(a.area, b.area) > 3.0 * min(a.area, b.area):
                continue
            if not _bright_between(gray, a, b, pips, bridge):
                continue
            parent[root(i)] = root(j)
    groups: dict[int, list[Pip]] = {}
    for i, pip in enumerate(pips):
        groups.setdefault(root(i), []).append(pip)
    return list(groups.values())


def _bright_between(gray: np.ndarray, a: Pip, b: Pip, pips: list[Pip], bridge: float) -> bool:
    """True if the straight line from pip a to pip b crosses only bright face (or other pips)."""
    distance = math.hypot(b.x - a.x, b.y - a.y)
    steps = max(4, int(distance))
    floor = bridge * min(a.face_level, b.face_level)
    height, width = gray.shape
    near = [p for p in pips if p is not a and p is not b and _near_segment(p, a, b)]
    for k in range(1, steps):
        t = k / steps
        x, y = a.x + t * (b.x - a.x), a.y + t * (b.y - a.y)
        if t * distance < 0.8 * a.diameter or (1 - t) * distance < 0.8 * b.diameter:
            continue  # still inside an end pip
        if any(math.hypot(x - p.x, y - p.y) < 0.8 * p.diameter for p in near):
            continue  # crossing a pip between them (the centre of a five)
        xi, yi = int(round(x)), int(round(y))
        if not (0 <= xi < width and 0 <= yi < height) or gray[yi, xi] < floor:
            return False
    return True


def _near_segment(p: Pip, a: Pip, b: Pip) -> bool:
    ax, ay, bx, by = a.x, a.y, b.x, b.y
    length2 = (bx - ax) ** 2 + (by - ay) ** 2 or 1.0
    t = max(0.0, min(1.0, ((p.x - ax) * (bx - ax) + (p.y - ay) * (by - ay)) / length2))
    return math.hypot(p.x - (ax + t * (bx - ax)), p.y - (ay + t * (by - ay))) < p.diameter
