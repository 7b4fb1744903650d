"""Read dice by their pips: find pips, group them into faces, count and check each face.

Nothing here knows the dice, tray or light of the photos it was tuned on: a pip is a small
round spot darker than its own surroundings, a face is a group of such spots of one size
joined by bright face (not by a gap or shadow between dice), and a count is trusted only if
the pips sit in that count's layout. Dice are white-ish with dark pips; the tray may be any
colour darker than the dice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from bunco_pi.vision.faces import LayoutFit, layout_fit
from bunco_pi.vision.grouping import group_pips
from bunco_pi.vision.look import DiceLook, to_grey
from bunco_pi.vision.perspective import far_direction, unsquash_for
from bunco_pi.vision.pips import Pip, PipSettings, find_pips
from bunco_pi.vision.reading import DieReading, FrameReading


@dataclass(frozen=True)
class ReaderSettings:
    working_width: int = 640  # frames are scaled to this width first: the pip sizes assume it
    region: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)  # x, y, w, h in 0..1
    pips: PipSettings = field(default_factory=PipSettings)
    link: float = 6.0  # pips of one face are at most this many pip widths apart
    bridge: float = 0.72  # the face between two linked pips is at least this bright (x face)
    min_confidence: float = 0.5
    tray_level: float | None = None  # the empty tray's brightness; None: the frame's median
    face_above_tray: float = 10.0  # dice faces are at least this much brighter than the tray
    look: DiceLook | None = None  # the dice's colours (calibration); None: white with dark pips
    die_width: float | None = None  # a die's width at the working width (calibrated or learned)


def region_pixels(
    region: tuple[float, float, float, float], width: int, height: int
) -> tuple[int, int, int, int]:
    """A tray region (x, y, w, h as fractions) as pixel bounds x0, y0, x1, y1 of a frame."""
    rx, ry, rw, rh = region
    x0, y0 = int(round(rx * width)), int(round(ry * height))
    return x0, y0, int(round((rx + rw) * width)), int(round((ry + rh) * height))


def to_working(
    frame: np.ndarray, settings: ReaderSettings
) -> tuple[np.ndarray, float, tuple[int, int]]:
    """Grey crop of the tray region at the working width (faces bright); (image, scale, offset).

    A grey frame is taken as already mapped (``look.to_grey``): ``read_both`` maps once for both.
    """
    x0, y0, x1, y1 = region_pixels(settings.region, frame.shape[1], frame.shape[0])
    look = settings.look
    plain = look is None or look.plain_grey
    crop = to_grey(frame[y0:y1, x0:x1], look) if plain else frame[y0:y1, x0:x1]
    scale = settings.working_width / max(1, frame.shape[1])  # same scale as the full frame would get
    if abs(scale - 1.0) > 1e-3:
        interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=interpolation)
    # Colours are mapped after shrinking: fewer pixels to map.
    return np.ascontiguousarray(to_grey(crop, look)), scale, (x0, y0)


def grey_median(gray: np.ndarray) -> float:
    """``np.median`` of a uint8 picture, counted from its histogram: the same figure (the mean
    of the two middle values when they are an even number), without sorting every pixel, which
    cost more than finding the pips on a speckled floor."""
    counts = cv2.calcHist([gray], [0], None, [256], [0, 256]).ravel().astype(np.int64)
    below = np.cumsum(counts)
    size = gray.size
    low = int(np.searchsorted(below, (size - 1) // 2, side="right"))
    high = int(np.searchsorted(below, size // 2, side="right"))
    return (low + high) / 2


def read_pips(
    frame: np.ndarray,
    settings: ReaderSettings | None = None,
    near: Sequence[tuple[float, float, float]] | None = None,
) -> FrameReading:
    """Read every die in a BGR (or grey) frame by counting the pips on its top face.

    ``near``: only look at pips within these circles (x, y, radius in frame pixels), the
    places another reader found dice; None looks everywhere.
    """
    settings = settings or ReaderSettings()
    gray, scale, (ox, oy) = to_working(frame, settings)
    tray_level = settings.tray_level if settings.tray_level is not None else grey_median(gray)
    within = None
    if near is not None:
        within = np.zeros(gray.shape, np.uint8)
        for x, y, radius in near:
            centre = (int(round((x - ox) * scale)), int(round((y - oy) * scale)))
            cv2.circle(within, centre, max(1, int(round(radius * scale))), 255, -1)
    pips = find_pips(gray, settings.pips, tray_level + settings.face_above_tray, within)
    groups = group_pips(gray, pips, settings.link, settings.bridge)
    far = far_direction(pips)
    dice = [d for group in groups for d in _read_dice(group, settings.min_confidence, far)]
    dice = _drop_side_faces(dice)
    dice = [_doubt_faint_pips(gray, d, settings.min_confidence) for d in dice]
    return FrameReading(
        tuple(
            DieReading(
                d.face,
                d.confidence,
                (d.center[0] / scale + ox, d.center[1] / scale + oy),
                d.radius / scale,
                d.problem,
            )
            for d in sorted(dice, key=lambda d: (d.center[1], d.center[0]))
        )
    )


@dataclass(frozen=True)
class _Face:
    face: int | None
    confidence: float
    center: tuple[float, float]
    radius: float
    problem: str
    round_pips: int  # how many of its pips look like a top face's (not squashed)
    pips: int  # how many pips its group had
    # Where a pip would be if this were the next face up (a two's centre, a four's centre and
    # edge middles), with the face's pip size, contrast and brightness to compare them with.
    empty: tuple[tuple[float, float], ...] = ()
    pip_diameter: float = 0.0
    pip_contrast: float = 0.0
    face_level: float = 0.0


def _read_dice(
    group: list[Pip], min_confidence: float, far: tuple[float, float] | None
) -> list[_Face]:
    """The dice in one group of pips: usually one; two or three if dice touch.

    Where nothing darker than the face separates two dice (touching, on a light tray), their
    pips join one group that reads as no face at all; split into the clusters that each
    read as a face, it is two or three dice, minus clusters that are the side faces of
    another (nearer the camera, right beside it).
    """
    whole = _read_unsquashed(group, min_confidence, far)
    if not whole.problem:
        return [whole]
    for parts in (2, 3):
        if len(group) < parts:
            break
        faces = [_read_unsquashed(part, min_confidence, far) for part in _clusters(group, parts)]
        readable = [face for face in faces if not face.problem]
        if _overlapping(readable):
            continue  # two dice cannot be in one place: the clusters are bits of one face
        if len(readable) == len(faces):
            return _without_side_faces(faces, far)
        # An unreadable cluster is allowed only as the side of a readable one.
        if readable and far is not None and all(
            any(_beside(face, other, far) for other in readable)
            for face in faces
            if face.problem
        ):
            return _without_side_faces(readable, far)
    return [whole]


def _overlapping(faces: list[_Face]) -> bool:
    for i, a in enumerate(faces):
        for b in faces[i + 1 :]:
            distance = math.hypot(a.center[0] - b.center[0], a.center[1] - b.center[1])
            if distance < 0.75 * (a.radius + b.radius):
                return True
    return False


def _clusters(group: list[Pip], count: int) -> list[list[Pip]]:
    """``count`` clusters of pips by position (k-means from the farthest-apart pips)."""
    points = np.array([[p.x, p.y] for p in group])
    centres = [points[0]]
    while len(centres) < count:
        distance = np.min([np.linalg.norm(points - c, axis=1) for c in centres], axis=0)
        centres.append(points[int(distance.argmax())])
    labels = np.zeros(len(group), int)
    for _ in range(10):
        distance = np.stack([np.linalg.norm(points - c, axis=1) for c in centres])
        labels = distance.argmin(axis=0)
        centres = [
            points[labels == k].mean(axis=0) if (labels == k).any() else centres[k]
            for k in range(count)
        ]
    return [[p for p, label in zip(group, labels, strict=True) if label == k] for k in range(count)]


def _without_side_faces(faces: list[_Face], far: tuple[float, float] | None) -> list[_Face]:
    """Leave out faces that lie right beside another face, on the camera's side of it."""
    if far is None:
        return faces  # seen from above: no side faces, so each face is a die
    return [f for f in faces if not any(_beside(f, other, far) for other in faces)]


def _beside(face: _Face, other: _Face, far: tuple[float, float]) -> bool:
    """True if ``face`` touches ``other`` on the camera's side: it can be other's side face."""
    dx, dy = face.center[0] - other.center[0], face.center[1] - other.center[1]
    distance = math.hypot(dx, dy)
    if face is other or distance == 0:
        return False
    nearer = -(dx * far[0] + dy * far[1]) / distance  # cos of the angle to the camera side
    touching = distance < 1.2 * (face.radius + other.radius)
    return nearer > math.cos(math.radians(65)) and touching


def _read_unsquashed(
    group: list[Pip], min_confidence: float, far: tuple[float, float] | None
) -> _Face:
    """Read a group as if seen from straight above, then map the result back to the frame."""
    unsquash = unsquash_for(group, far)
    plain = _read_group(group, min_confidence)
    if unsquash is None:
        return plain
    face = _read_group([unsquash.pip(p) for p in group], min_confidence)
    center = unsquash.inverse(*face.center)
    # Whether a die shows any flat-looking pips is a fact of the frame, not of the unsquashing.
    round_count = sum(p.roundness >= 0.6 for p in group)
    tilted = replace(
        face,
        center=center,
        radius=face.radius * (1 + unsquash.factor) / 2,
        round_pips=round_count,
        empty=tuple(unsquash.inverse(x, y) for x, y in face.empty),
        pip_diameter=face.pip_diameter * unsquash.factor,
    )
    # Pips drawn out the same way may be a blurred (moving) picture, not a tilted one: blur
    # stretches the pips but leaves their layout as it is. Keep the view that reads better.
    if (not plain.problem, plain.confidence) > (not tilted.problem, tilted.confidence):
        return replace(plain, round_pips=round_count)
    return tilted


def _top_likeness(pip: Pip) -> float:
    # The top face is nearest the camera and square to it: its pips are the largest and
    # roundest, and it is usually the best lit.
    return pip.roundness * math.sqrt(pip.area) * pip.face_level


def _read_group(group: list[Pip], min_confidence: float) -> _Face:
    """One group of pips -> the top face's count, dropping pips of side faces seen beside it.

    Tries the most top-like k pips for k = all..1 and takes the set whose layout fits, but
    only drops pips that lie outside that face: a pip inside a face is never ignored. If two
    counts both fit that way (a one beside a side face's pip also makes a fine two), the die
    is doubtful: which pips are the top face's is then a guess.
    """
    ranked = sorted(group, key=_top_likeness, reverse=True)
    round_count = sum(p.roundness >= 0.6 for p in group)
    first: tuple[list[Pip], LayoutFit, float] | None = None
    found: _Face | None = None
    for k in range(min(len(ranked), 6), 0, -1):
        top, rest = ranked[:k], ranked[k:]
        if found is not None and not all(_side_like(p, top) for p in rest):
            continue  # cheap to rule out first: only a second count that fits matters now
        fit = layout_fit(np.array([[p.x, p.y] for p in top]))
        confidence = _confidence(top, fit)
        if first is None:
            first = (top, fit, confidence)
        if (
            confidence >= min_confidence
            and all(_outside_face(p, top, fit) and _side_like(p, top) for p in rest)
            and not _straddles_edge(top, rest)
        ):
            if found is not None:
                doubt = min(found.confidence, 0.99 * min_confidence)
                return replace(found, confidence=doubt, problem="side or top?")
            found = _face(top, fit, confidence, "", round_count, len(group))
    if found is not None:
        return found
    assert first is not None
    top, fit, confidence = first
    if len(group) > 6:
        return _face(top, fit, 0.0, "too many pips", round_count, len(group), face=None)
    problem = "tilted" if round_count == 0 else "unclear pips"
    confidence = min(confidence, 0.99 * min_confidence)
    return _face(top, fit, confidence, problem, round_count, len(group))


def _straddles_edge(top: list[Pip], rest: list[Pip]) -> bool:
    """True if a pip of the face sits much nearer a left-out pip than its own face's pips.

    Such a "face" takes one pip from across the die's edge: the top pip of a one and a pip of
    the side face below it make a fine two by themselves.
    """
    if len(top) < 2 or not rest:
        return False
    for pip in top:
        own = min(math.hypot(pip.x - q.x, pip.y - q.y) for q in top if q is not pip)
        other = min(math.hypot(pip.x - q.x, pip.y - q.y) for q in rest)
        if other < 0.45 * own:
            return True
    return False


def _side_like(pip: Pip, top: list[Pip]) -> bool:
    """A pip that may be left out of the top face: smaller or more squashed than its pips.

    Seen from above, a die shows no side faces; a pip as round and as large as the face's
    own is then a pip of this face (or dirt on it), never one to ignore.
    """
    roundness = min(p.roundness for p in top)
    area = float(np.median([p.area for p in top]))
    return pip.roundness < 0.85 * roundness or pip.area < 0.7 * area


def _outside_face(pip: Pip, top: list[Pip], fit: LayoutFit) -> bool:
    if len(top) == 1:
        only = top[0]
        return math.hypot(pip.x - only.x, pip.y - only.y) > 2.6 * only.diameter
    u, v = fit.to_layout(pip.x, pip.y)
    return max(abs(u), abs(v)) > 1.55


def _face(
    top: list[Pip],
    fit: LayoutFit,
    confidence: float,
    problem: str,
    round_count: int,
    group_size: int,
    face: int | None = -1,
) -> _Face:
    diameter = float(np.median([p.diameter for p in top]))
    radius = 2.6 * diameter if len(top) == 1 else 1.9 * fit.scale + 0.5 * diameter
    count = len(top) if face == -1 else face
    empty = tuple(_layout_point(fit, u, v) for u, v in _EMPTY.get(count or 0, ()))
    return _Face(
        count, confidence, fit.center, radius, problem, round_count, group_size, empty,
        diameter, float(np.median([p.contrast for p in top])),
        float(np.median([p.face_level for p in top])),
    )


# Empty places that one missed pip would turn into another face: a two's centre (three),
# a four's centre (five) and the middles of its sides (six). Layout units, as in faces.py.
_EMPTY = {
    2: ((0.0, 0.0),),
    4: ((0.0, 0.0), (1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)),
}


def _layout_point(fit: LayoutFit, u: float, v: float) -> tuple[float, float]:
    """A place given in the face's layout units, in pixels (the inverse of ``to_layout``)."""
    c, s = math.cos(fit.angle), math.sin(fit.angle)
    return (
        fit.center[0] + fit.scale * (c * u - s * v),
        fit.center[1] + fit.scale * (s * u + c * v),
    )


STRAY_MARKS = 0.04  # a one's face around its pip is clean: at most this much of it dark


def _marks_around(gray: np.ndarray, face: _Face) -> float:
    """The fraction of a one's face around its pip (0.9..1.7 pip widths out) that is dark.

    A one is a single pip on a clean face; pips run together or smeared (blur, a dim room)
    leave one of a three's or five's pips standing out round, with dark marks beside it.
    """
    x, y = face.center
    inner, outer = 0.9 * face.pip_diameter, 1.7 * face.pip_diameter
    x0, x1 = int(math.floor(x - outer)), int(math.ceil(x + outer)) + 1
    y0, y1 = int(math.floor(y - outer)), int(math.ceil(y + outer)) + 1
    height, width = gray.shape
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
        return 1.0  # cut off by the frame's edge: cannot be checked
    yy, xx = np.mgrid[y0:y1, x0:x1]
    distance = np.hypot(xx - x, yy - y)
    ring = gray[y0:y1, x0:x1][(distance >= inner) & (distance <= outer)]
    dark = face.face_level * (1 - 0.5 * face.pip_contrast)
    return float((ring < dark).mean()) if ring.size else 1.0


FAINT = 0.4  # an empty place darker than this much of the pips' own contrast may be a pip


def _doubt_faint_pips(gray: np.ndarray, face: _Face, min_confidence: float) -> _Face:
    """A face read sure is doubted if one of its empty places is nearly as dark as a pip.

    A blurred or shadowed pip that the pip finder missed turns a three into a two, a five or
    a six into a four: a wrong face the layout alone cannot catch. "Not sure" is safe; a
    wrongly scored roll is not.
    """
    if face.problem or face.confidence < min_confidence:
        return face
    if face.face == 1 and _marks_around(gray, face) > STRAY_MARKS:
        confidence = min(face.confidence, 0.99 * min_confidence)
        return replace(face, confidence=confidence, problem="faint pip")
    radius = max(1.0, 0.3 * face.pip_diameter)
    height, width = gray.shape
    for x, y in face.empty:
        x0, x1 = int(math.floor(x - radius)), int(math.ceil(x + radius)) + 1
        y0, y1 = int(math.floor(y - radius)), int(math.ceil(y + radius)) + 1
        if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
            continue
        yy, xx = np.mgrid[y0:y1, x0:x1]
        disc = np.hypot(xx - x, yy - y) <= radius
        level = float(gray[y0:y1, x0:x1][disc].mean())
        contrast = (face.face_level - level) / max(face.face_level, 1.0)
        if contrast > FAINT * face.pip_contrast:
            confidence = min(face.confidence, 0.99 * min_confidence)
            return replace(face, confidence=confidence, problem="faint pip")
    return face


def _ramp(value: float, bad: float, good: float) -> float:
    """0 at or beyond ``bad``, 1 at or beyond ``good``, straight in between."""
    return float(min(1.0, max(0.0, (value - bad) / (good - bad))))


def _confidence(top: list[Pip], fit: LayoutFit) -> float:
    """How much a face read from these pips can be trusted, 0..1.

    Each term is a property every face of every ordinary die has, whatever its size or light:
    pips where the layout puts them, of one size and one shape (a side face's pips are
    smaller and squashed), dark against the face, and spaced in proportion to their size.
    """
    areas = [p.area for p in top]
    shapes = [p.roundness for p in top]
    terms = [
        _ramp(-fit.residual, -0.45, -0.2),
        _ramp(min(areas) / max(areas), 0.6, 0.75),
        _ramp(min(shapes) / max(shapes), 0.7, 0.85),
        _ramp(min(p.contrast for p in top), 0.1, 0.22),
        _ramp(min(shapes), 0.35, 0.55),
    ]
    if len(top) == 1:
        # A lone pip has no layout to check: it must at least be a crisp one.
        terms.append(_ramp(top[0].contrast, 0.3, 0.45))
    if len(top) >= 2:
        # Blur or dim light lowers every pip's contrast alike; dirt or a shadow is one odd spot.
        contrasts = [p.contrast for p in top]
        terms.append(_ramp(min(contrasts) / max(contrasts), 0.5, 0.7))
        # Corner pips sit 1.3..2.3 pip widths from the face centre on common dice (about 1.1
        # on the photos' dice): allow 0.85..2.4.
        ratio = fit.scale / float(np.median([p.diameter for p in top]))
        terms.append(min(_ramp(ratio, 0.7, 0.85), _ramp(-ratio, -2.8, -2.4)))
    terms.append(_middle_pips_alike(top, fit))
    return float(np.prod(terms))


def _middle_pips_alike(top: list[Pip], fit: LayoutFit) -> float:
    """1 if the pips that tell faces apart look like the corner pips, down to 0 if not.

    The centre pip of a three or five and the middle pair of a six are all that separate
    them from a two or a four: a smaller or fainter spot there (a speck, a glint's edge, a
    scratch) must make the face doubtful, not a different count. Corner pips are the yardstick.
    """
    if len(top) not in (3, 5, 6):
        return 1.0
    middle, corner = [], []
    for pip in top:
        u, v = fit.to_layout(pip.x, pip.y)
        (middle if min(abs(u), abs(v)) < 0.5 else corner).append(pip)
    if not middle or not corner:
        return 0.0  # no corners or no middle: not this count's layout
    area = min(p.area for p in middle) / float(np.median([p.area for p in corner]))
    contrast = min(p.contrast for p in middle) / float(np.median([p.contrast for p in corner]))
    return min(_ramp(area, 0.6, 0.72), _ramp(contrast, 0.7, 0.85))


def _drop_side_faces(faces: list[_Face]) -> list[_Face]:
    """Groups that are a readable die's side, not dice: only squashed pips, or one unreadable
    pip, right beside it."""
    kept = []
    for face in faces:
        side_like = face.round_pips == 0 or (face.pips == 1 and face.problem != "")
        if side_like:
            beside = any(
                other.round_pips > 0
                and not other.problem
                and math.hypot(other.center[0] - face.center[0], other.center[1] - face.center[1])
                < 1.3 * (other.radius + face.radius)
                for other in faces
            )
            if beside:
                continue
        kept.append(face)
    return kept
