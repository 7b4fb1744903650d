"""Has the camera moved since the tray was learned? The view then, against each settled frame.

A tray set up by rolling (``learn.py``) knows where its tray lies in the picture and how wide
its dice are. A camera knocked on its mount makes both stale: dice landing beyond the learned
region are "saw 2 dice, not 3" at every throw, and dice nearer the camera may be too large for
the finder's one look. So when the tray is learned, the picture it was learned from is kept
(small and grey: a ``TrayView``), and each later settled frame is matched against it.

What is matched is what stays put between throws: the tray's rim and grain, its shading, the
table round it; never the dice. The kept picture's dice are left out of the match, and the
frame's, where its reading found them, are painted over in the median grey of the rest. The match is
OpenCV's enhanced correlation coefficient (ECC): the affine motion (shift, turn, scale, a
little slant) that makes the two most alike, found coarse to fine from the camera in place,
or from the best of a grid of shifts where that finds nothing. The camera has moved when that
motion carries a corner of the learned tray more than ``MOVED`` die widths: the tray kept
``learn.TRAY_MARGIN`` (two) die widths round every place a die came to rest.

It says ``UNKNOWN`` rather than guess: when no motion makes the pictures alike (``LIKE``), as
with a plain floor filling the picture; when the motion is none a knock makes (``a_knock``);
and when it makes them hardly more alike than they are in place (``GAIN``): soft shading on a
plain floor matches itself shifted almost as well as in place, and ECC can slide far along
it. And only the last ``THROWS`` settled pictures all seeing the camera moved, alike
(``ALIKE``), make the table learn the tray again (``moved_for_good``).

Pure: pictures in, a verdict out. The camera source (``hardware/camera.py``) keeps the last few.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import cv2
import numpy as np

VIEW_WIDTH = 320  # the kept picture's width: enough of a tray's rim and shading, cheap to match
LEVELS = (4, 2, 1)  # matched at a quarter of that width first, then half, then whole: a knock
# of a few die widths is found from far off, and then exactly
SEARCH_LEVEL, REACH, GRID = 8, 0.12, 9  # where in place matches nothing: shifts of up to
# REACH of the width, GRID a side, tried at an eighth of the width for a place to start
STEPS, EPSILON = 100, 1e-5  # each level's search ends after this many steps, or this small a change
BLUR = 5  # pixels: the pictures are smoothed this much before matching (noise, JPEG blocks)
LIKE = 0.7  # the correlation of the two pictures, the dice left out, from which a match is believed
GAIN = 0.1  # ... and a move only if it makes them this much more alike than they are in place
MOVED = 1.0  # die widths a corner of the learned tray may move before the camera has moved
MASK = 1.0  # die widths round a die's centre left out of both pictures (its shadow too)
SCALE, SLANT = 1.25, 2.0  # a knock scales the picture at most this much, and slants it less
FARTHEST = 5.0  # ... and shifts the picture's middle at most this many die widths
THROWS = 2  # settled pictures in a row seen moved alike before the camera is taken to have moved
ALIKE = 1.5  # die widths: two pictures' motions put each corner of the tray this near each other


class Verdict(Enum):
    SAME = "same"  # the tray is where it was learned
    MOVED = "moved"  # the picture moved, turned or scaled: the tray's corners by over MOVED
    UNKNOWN = "unknown"  # no match believed: too little to match on, or another view


@dataclass(frozen=True)
class TrayView:
    """The picture a tray was learned from: grey, ``VIEW_WIDTH`` wide, as PNG (immutable, and
    stored as it is in the learned file), with where its dice lay (fractions of the picture)."""

    picture: bytes
    dice: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Comparison:
    verdict: Verdict
    likeness: float | None  # the pictures' correlation once matched, the dice left out (-1..1)
    shift: float | None  # the farthest a learned tray's corner moved, in die widths
    # where the learned tray's corners are now, in die widths from the picture's top left
    corners: tuple[tuple[float, float], ...] = ()


def take_view(frame: np.ndarray, dice: tuple[tuple[float, float], ...]) -> TrayView:
    """The view to keep of ``frame``, whose dice lie at ``dice`` (fractions of the picture)."""
    ok, png = cv2.imencode(".png", _grey(frame))
    assert ok
    return TrayView(png.tobytes(), tuple((round(x, 4), round(y, 4)) for x, y in dice))  # as filed


def view_picture(view: TrayView) -> np.ndarray:
    """The kept grey picture; ValueError if the bytes are not one."""
    try:
        picture = cv2.imdecode(np.frombuffer(view.picture, np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error:  # no bytes at all
        picture = None
    if picture is None or picture.ndim != 2 or picture.dtype != np.uint8 or min(picture.shape) < 32:
        raise ValueError("'view' is not a grey picture")
    return picture


def compare(
    view: TrayView, frame: np.ndarray, dice: tuple[tuple[float, float], ...],
    region: tuple[float, float, float, float], die_width: float,
) -> Comparison:
    """Whether ``frame``, whose dice were read at ``dice``, shows the tray where ``view`` did.
    ``region`` is the learned tray and ``die_width`` a die's width (all fractions of the
    picture's width and height, as learned)."""
    kept = view_picture(view)
    height, width = kept.shape
    seen = _grey(frame)
    if abs(seen.shape[0] / seen.shape[1] - height / width) > 0.02:
        return Comparison(Verdict.MOVED, None, None)  # pictures of another shape: another camera mode
    seen = cv2.resize(seen, (width, height), interpolation=cv2.INTER_AREA)
    mask = _dice_mask(kept.shape, view.dice, die_width)
    # The dice seen now are painted over in the median grey of the rest of the picture: they
    # are not where the kept picture's were, and only what stays put between throws may match.
    seen_mask = _dice_mask(seen.shape, dice, die_width)
    if seen_mask.any() and not seen_mask.all():
        seen = np.where(seen_mask > 0, seen, np.median(seen[seen_mask > 0])).astype(np.uint8)
    likeness, motion = _match(kept, seen, mask, lambda m: a_knock(m, width, height, die_width * width))
    if motion is None or likeness is None:
        return Comparison(Verdict.UNKNOWN, None if likeness is None else round(likeness, 3), None)
    x, y, w, h = region
    corners = np.float32([[x, y], [x + w, y], [x, y + h], [x + w, y + h]]) * [width, height]
    moved = corners @ motion[:, :2].T + motion[:, 2]
    unit = die_width * width
    shift = float(np.max(np.linalg.norm(moved - corners, axis=1))) / unit
    if shift > MOVED:
        blur = (BLUR, BLUR)
        in_place = cv2.computeECC(cv2.GaussianBlur(kept, blur, 0).astype(np.float32),
                                  cv2.GaussianBlur(seen, blur, 0).astype(np.float32), mask)
        if likeness - in_place < GAIN:
            # a far motion that makes the pictures hardly more alike than they are as they
            # lie (a floor of smooth shading matches itself moved): no evidence of a move
            return Comparison(Verdict.UNKNOWN, round(likeness, 3), None)
    verdict = Verdict.MOVED if shift > MOVED else Verdict.SAME
    return Comparison(verdict, round(likeness, 3), round(shift, 2),
                      tuple((float(cx) / unit, float(cy) / unit) for cx, cy in moved))


def moved_for_good(seen: list[Comparison]) -> bool:
    """Whether the last ``THROWS`` settled pictures all saw the camera moved, and moved alike:
    the tray's corners where each put them within ``ALIKE`` die widths. One picture is not
    enough: a match found in the wrong place can look sure, but is not found twice alike."""
    last = seen[-THROWS:]
    if len(last) < THROWS or any(c.verdict is not Verdict.MOVED for c in last):
        return False
    if any(not c.corners for c in last):
        return all(not c.corners for c in last)  # pictures of another shape, every one
    first = last[0].corners
    return all(math.dist(a, b) <= ALIKE for c in last[1:] for a, b in zip(first, c.corners, strict=True))


def a_knock(motion: np.ndarray, width: int, height: int, die: float) -> bool:
    """Whether a knock on a camera's mount could make ``motion`` (in pixels of a picture
    ``width`` x ``height`` whose dice are ``die`` pixels wide): scaled by at most ``SCALE``,
    slanted by at most ``SLANT`` (how much more it stretches one way than the other), the
    picture's middle shifted at most ``FARTHEST`` die widths. Outside that a match has gone
    wrong: unchecked, such matches carried a tray's corner up to hundreds of die widths."""
    stretch = np.linalg.svd(motion[:, :2].astype(np.float64), compute_uv=False)
    middle = np.array([width / 2, height / 2])
    shifted = float(np.linalg.norm(motion[:, :2] @ middle + motion[:, 2] - middle))
    return bool(stretch.min() >= 1 / SCALE and stretch.max() <= SCALE
                and stretch.max() / stretch.min() <= SLANT and shifted <= FARTHEST * die)


Match = tuple[float | None, np.ndarray | None]  # how alike, under which motion (None: no match)


def _match(kept: np.ndarray, seen: np.ndarray, mask: np.ndarray,
           plausible: Callable[[np.ndarray], bool]) -> Match:
    """The affine motion taking the kept picture to the one seen, and how alike they are then
    (OpenCV's enhanced correlation coefficient, which a brighter or darker lamp does not change),
    found coarse to fine from the camera in place; failing that, from the best of a grid of
    shifts (``REACH``) at an eighth of the width. A match is believed from a likeness of
    ``LIKE``, under a motion a knock could make (``plausible``); with none believed, the
    motion is None (the likeness is the best found)."""
    tried = [_refine(kept, seen, mask, np.eye(2, 3, dtype=np.float32))]
    if not _believed(tried[0], plausible):
        tried.append(_refine(kept, seen, mask, _best_shift(kept, seen, mask)))
    believed = [match for match in tried if _believed(match, plausible)]
    if believed:
        return max(believed, key=lambda match: match[0] or 0.0)
    found = [match[0] for match in tried if match[0] is not None]
    return (max(found) if found else None), None


def _believed(match: Match, plausible: Callable[[np.ndarray], bool]) -> bool:
    likeness, motion = match
    return likeness is not None and motion is not None and likeness >= LIKE and plausible(motion)


def _refine(kept: np.ndarray, seen: np.ndarray, mask: np.ndarray, motion: np.ndarray) -> Match:
    """ECC's motion at each of ``LEVELS`` in turn, from ``motion`` (in the first level's pixels)."""
    likeness: float | None = None
    before = LEVELS[0]
    for level in LEVELS:
        size = _size(kept, level)
        motion[:, 2] *= before / level  # the shift in this level's pixels
        before = level
        start = motion.copy()  # OpenCV changes the motion given it, even when it gives up
        try:
            likeness, motion = cv2.findTransformECC(
                _shrunk(kept, size), _shrunk(seen, size), motion, cv2.MOTION_AFFINE,
                (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, STEPS, EPSILON),
                cv2.resize(mask, size, interpolation=cv2.INTER_NEAREST), BLUR)
        except cv2.error:
            # no motion at this level makes them alike (too little left to match so small):
            # the finer level starts from where this one did
            likeness, motion = None, start
    return (None, None) if likeness is None else (float(likeness), motion)


def _best_shift(kept: np.ndarray, seen: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The shift of the grid (``REACH``, at an eighth of the width) under which the two are
    most alike, as a motion in ``LEVELS[0]``'s pixels: where to start when in place fails."""
    size = _size(kept, SEARCH_LEVEL)
    small_kept = cv2.GaussianBlur(_shrunk(kept, size), (3, 3), 0)
    small_seen = cv2.GaussianBlur(_shrunk(seen, size), (3, 3), 0)
    small_mask = cv2.resize(mask, size, interpolation=cv2.INTER_NEAREST)
    best, where = -2.0, (0.0, 0.0)
    for dx, dy in itertools.product(np.linspace(-REACH, REACH, GRID) * size[0], repeat=2):
        shifted = cv2.warpAffine(small_seen, np.float32([[1, 0, dx], [0, 1, dy]]), size,
                                 flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                 borderMode=cv2.BORDER_REPLICATE)
        likeness = cv2.computeECC(small_kept, shifted, small_mask)
        if likeness > best:
            best, where = likeness, (dx, dy)
    motion = np.eye(2, 3, dtype=np.float32)
    motion[:, 2] = np.float32(where) * SEARCH_LEVEL / LEVELS[0]
    return motion


def _size(picture: np.ndarray, level: int) -> tuple[int, int]:
    return max(8, picture.shape[1] // level), max(8, picture.shape[0] // level)


def _shrunk(picture: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    return cv2.resize(picture, size, interpolation=cv2.INTER_AREA).astype(np.float32)


def _dice_mask(shape: tuple[int, ...], dice: tuple[tuple[float, float], ...], die_width: float) -> np.ndarray:
    """255 where no die is (``MASK`` die widths round each one's centre), 0 on the dice."""
    height, width = shape[:2]
    mask = np.full((height, width), 255, np.uint8)
    for x, y in dice:
        cv2.circle(mask, (round(x * width), round(y * height)), round(MASK * die_width * width), 0, -1)
    return mask


def _grey(frame: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    height, width = grey.shape
    size = (VIEW_WIDTH, max(1, math.floor(height * VIEW_WIDTH / width + 0.5)))
    return cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
