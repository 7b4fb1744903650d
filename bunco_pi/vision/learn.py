"""Setting a tray up by rolling: the tray and the dice's colours, learned from sure rolls.

A group need not photograph its empty tray. The first throws teach the reader: each settled
roll that both readers (the pip reader and the network) read alike, every die sure, is a
*sample*: the colours of its dice's faces and pips, where they came to rest and how wide
they are. Once ``LEARN_ROLLS`` samples agree on the colours, those are the dice's colours
(``look.DiceLook``), and the tray is the even-toned floor around where they rested.

Nothing here can make the reader sure of a wrong face:

- only rolls read sure by both readers, at the same places with the same faces, are learned
  from, and ``study`` scores only such rolls (the shell may also score a roll its ordinary
  reader reads sure in the colours trusted, as it would with nothing to learn; never a guess).
  The pip reader reads round the dice the network glanced at, as in the first look, so a die
  the network did not see at all is in neither reading: the roll is a die short, no sample;
- a roll whose dice are not of one colour (a die of another set, a hand read as a die) is
  no sample;
- colours are trusted only when ``LEARN_ROLLS`` samples agree, so one odd roll (a lamp
  switched on, a stranger's die) cannot set them; until then a guess from the picture
  (``propose_look``) is only tried, never trusted, and what it reads is never scored;
- once learned, the colours are kept as they are: no roll shifts them (at most
  ``KEEP_SAMPLES`` rolls are kept while learning, so old ones cannot pile up either). Two
  things start learning again: a camera seen moved (``tray_view.py``, ``moved_camera``), and
  ``LEARN_ROLLS`` throws in a row of dice of other colours, agreeing with each other
  (``other_dice``: another group's set, brought to the table for good, or a lamp that
  changed how the dice look). A stranger's throw or two between the table's own change
  nothing. Either way the colours from before are kept, trusted and read with meanwhile
  (``kept``), and ``LEARN_ROLLS`` agreeing rolls set them anew.

Pure: frames and readings in, settings out. Reading and writing the file, and the camera,
are the shell's (``hardware/camera.py``, ``table/camera_feed.py``).
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import cv2
import numpy as np

from bunco_pi.vision.calibration import TrayCalibration, find_tray
from bunco_pi.vision.look import DiceLook
from bunco_pi.vision.reader import ReaderSettings, region_pixels
from bunco_pi.vision.reading import DieReading, FrameReading, same_dice
from bunco_pi.vision.tray_view import TrayView, take_view, view_picture

FORMAT_VERSION = 1
LEARN_ROLLS = 3  # agreeing sure rolls before the dice's colours are trusted
KEEP_SAMPLES = 8  # the most recent sure rolls kept while learning (older ones drop out)
AGREE = 18.0  # CIE Lab distance within which two faces are of one colour
PIP_AGREE = 40.0  # ... two pips (small, blurred into the face at their edges: noisier)
TRAY_MARGIN = 2.0  # die widths of tray kept around every place a die came to rest
FULL_FRAME = (0.0, 0.0, 1.0, 1.0)

Colour = tuple[float, float, float]  # BGR, 0..255
# The pip reader's and the network's readings of a frame, as one first look makes them
# (``fusion.first_readings``): what a throw is checked with while learning.
FirstLook = Callable[[np.ndarray, ReaderSettings], tuple[FrameReading, FrameReading]]


@dataclass(frozen=True)
class RollSample:
    """One roll both readers were sure of: its dice's colours, places and size."""

    face: Colour
    pip: Colour
    spots: tuple[tuple[float, float], ...]  # die centres, fractions of the frame
    width: float  # a die's median width, fraction of the frame's width


@dataclass(frozen=True)
class LearnedSetup:
    """What rolling has taught so far. ``face``/``pip`` are None until ``LEARN_ROLLS`` agree."""

    samples: tuple[RollSample, ...] = ()
    face: Colour | None = None
    pip: Colour | None = None
    region: tuple[float, float, float, float] | None = None
    die_width: float | None = None  # fraction of the frame's width
    rolls: int = 0  # sure rolls learned from, in all
    # the picture the tray was learned from, to see a camera moved since (``tray_view.py``)
    view: TrayView | None = None
    moved: bool = False  # learning anew: the camera moved after the tray was learned
    # The dice's colours learned before learning began again (a camera move, another set of
    # dice): trusted, and read with, meanwhile; None once learned, or when never learned.
    kept: DiceLook | None = None
    # Once learned, the last throws in a row whose dice are not of the colours learned
    # (``other_dice``). Not kept in the file: a restart begins the row again.
    strangers: tuple[RollSample, ...] = ()

    @property
    def learned(self) -> bool:
        return self.face is not None and self.pip is not None

    @property
    def look(self) -> DiceLook | None:
        return DiceLook(self.face, self.pip) if self.face is not None and self.pip else None

    @property
    def agreeing(self) -> int:
        """How many kept samples agree with the likeliest colours (``LEARN_ROLLS`` to learn)."""
        if self.learned:
            return LEARN_ROLLS
        return len(_best_group(self.samples))

    def status(self) -> str:
        """One OLED line (at most 21 characters) while learning; "" once learned."""
        if self.learned:
            return ""
        if self.moved:
            return f"cam moved: learn {self.agreeing}/{LEARN_ROLLS}"
        if self.kept is not None:
            return f"new dice: learn {self.agreeing}/{LEARN_ROLLS}"
        return f"learning dice {self.agreeing}/{LEARN_ROLLS}"

    def not_scored(self) -> str:
        """The OLED line for a roll that was not scored while learning."""
        return f"learning {self.agreeing}/{LEARN_ROLLS}: re-roll"


def moved_camera(setup: LearnedSetup) -> LearnedSetup:
    """The set-up once the camera is seen moved since the tray was learned: the tray (its
    region, die width and view) forgotten, to be learned again from the next sure rolls; the
    dice's colours kept and trusted meanwhile (``kept``), since the dice did not change.

    Learning starts anew all the same: the kept colours are tried first and what is read sure
    in them is scored, but the next ``LEARN_ROLLS`` agreeing rolls set the colours again, so
    a box carried to a table with other dice learns those.
    """
    return LearnedSetup(moved=True, kept=setup.look or setup.kept)


def other_dice(setup: LearnedSetup, sample: RollSample | None) -> LearnedSetup:
    """A learned set-up after the colours of a throw's dice (``roll_sample`` of the dice the
    table read, sure or not; None when they are not of one colour, or not the roll's count:
    such a throw neither adds to the row nor ends it).

    Dice of the colours learned end a row of others. Dice of other colours add to it, and once
    ``LEARN_ROLLS`` in a row agree with each other, they are another set brought to the table
    for good (or the table's own under a light that changed them as much): learning starts
    again, the tray forgotten (it may be another tray) and the colours kept, trusted and read
    with meanwhile, as after a camera move; the next sure rolls teach the new dice and the
    tray. Reading with the kept colours loses no roll the frame's own colours read right: the
    readers read those beside them (``fusion.read_both``); learned, the new dice are read in
    their own mapped grey as well, which flat-coloured dice need.
    """
    if not setup.learned or sample is None:
        return setup
    face, pip = setup.face, setup.pip
    assert face is not None and pip is not None
    if _alike(sample.face, sample.pip, face, pip):
        return replace(setup, strangers=()) if setup.strangers else setup
    row = (setup.strangers + (sample,))[-LEARN_ROLLS:]
    if len(row) == LEARN_ROLLS and len(_best_group(row)) == LEARN_ROLLS:
        return LearnedSetup(kept=setup.look)
    return replace(setup, strangers=row)


def applied(setup: LearnedSetup, calibration: TrayCalibration) -> TrayCalibration:
    """The calibration the readers use: what rolling taught, where calibration said nothing.

    Dice colours from a calibration file win (measured from a picture of them); so does a
    tray region given by calibration (anything but the whole frame). (The camera source does
    not learn at all when calibration measured the dice.) While the tray is learned again
    after the camera moved or another set came, the colours kept from before are the ones used.
    """
    changes: dict[str, object] = {}
    look = setup.look or setup.kept
    if calibration.look is None and look is not None:
        changes["dice_colour"] = look.face
        changes["pip_colour"] = look.pip
    if setup.region is not None and tuple(calibration.region) == FULL_FRAME:
        changes["region"] = setup.region
    if setup.die_width is not None and calibration.die_width is None:
        changes["die_width"] = round(setup.die_width * 640, 1)  # at the reader's working width
    return replace(calibration, **changes) if changes else calibration


@dataclass(frozen=True)
class Study:
    """What one settled frame taught, and what of it may be scored."""

    setup: LearnedSetup
    reading: FrameReading | None  # every die sure by both readers, under trusted colours; or None
    sample: RollSample | None  # the roll learned from, if it was one
    seen: FrameReading = FrameReading(())  # under the trusted colours, the reader that found
    # more dice: an empty tray, or a roll of the wrong number of dice, is said as such
    noticed: bool = False  # dice were found under some colours tried: not an empty tray


def study(
    frame: np.ndarray,
    setup: LearnedSetup,
    calibration: TrayCalibration,
    read_first: FirstLook,
) -> Study:
    """Read a settled frame while the set-up is being learned.

    The colours tried, in order: the ones trusted now (the calibration's, the learned ones,
    or those kept from before learning began again; plain grey, as for white dice, if none), the
    frame's own (plain grey: the networks read colour themselves), those the samples so far
    lean to, and a guess from the frame itself. The first under which both readers are sure
    of every die gives a sample. Only a reading under trusted colours is scored (``reading``);
    a guess is never trusted, however sure the readers are under it.
    """
    trusted = applied(setup, calibration)
    dice = calibration.dice
    tried: list[DiceLook | None] = [trusted.look]
    leaning = _group_look(_best_group(setup.samples))
    if calibration.look is None and not setup.learned:
        tried += [None, leaning, propose_look(frame, trusted.region)]
    found = FrameReading(())
    noticed = False
    done: list[DiceLook | None] = []
    for look in tried:
        if any(_same_look(look, other) for other in done):
            continue
        done.append(look)
        settings = replace(trusted, dice_colour=look.face if look else None,
                           pip_colour=look.pip if look else None).reader_settings()
        pips, net = read_first(frame, settings)
        if look is tried[0]:
            found = pips if len(pips.dice) >= len(net.dice) else net
        noticed = noticed or bool(pips.dice or net.dice)
        agreed = sure_by_both(pips, net, dice, calibration.min_confidence)
        if agreed is None:
            continue
        sample = roll_sample(frame, agreed)
        scored = agreed if look is tried[0] else None
        if sample is None:
            return Study(setup, scored, None, found, True)  # dice of different colours
        grown = learn(setup, sample, frame)
        if scored is None and grown.learned and not setup.learned:
            # Learned with this very roll: read it again as the colours now trusted say.
            settings = applied(grown, calibration).reader_settings()
            scored = sure_by_both(*read_first(frame, settings), dice,
                                  calibration.min_confidence)
        return Study(grown, scored, sample, found, True)
    return Study(setup, None, None, found, noticed)


def sure_by_both(
    pips: FrameReading, net: FrameReading, dice: int, min_confidence: float
) -> FrameReading | None:
    """The pip reader's reading if it has exactly ``dice`` dice, each sure, and the network
    saw the same number, each at one of them with the same face and sure; else None."""
    if len(pips.dice) != dice or len(net.dice) != dice:
        return None
    if any(d.face is None or d.confidence < min_confidence for d in pips.dice + net.dice):
        return None
    pairs = same_dice(pips.dice, net.dice)
    if len(pairs) != dice or any(pips.dice[i].face != net.dice[j].face for i, j in pairs):
        return None
    return pips


def die_colours(frame: np.ndarray, die: DieReading) -> tuple[Colour, Colour] | None:
    """A die's face and pip colours (BGR) from the middle of its top face; None if the
    face shows no second colour (nothing that could be pips)."""
    height, width = frame.shape[:2]
    radius = 0.6 * die.radius
    x, y = die.center
    x0, x1 = max(0, int(x - radius)), min(width, int(x + radius) + 1)
    y0, y1 = max(0, int(y - radius)), min(height, int(y + radius) + 1)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    patch = frame[y0:y1, x0:x1]
    yy, xx = np.mgrid[y0:y1, x0:x1]
    inside = (xx - x) ** 2 + (yy - y) ** 2 <= radius**2
    bgr = patch[inside].astype(np.float32)
    lab = _lab(bgr)
    centre = np.median(lab, axis=0)
    distance = np.linalg.norm(lab - centre, axis=1)
    apart = max(20.0, 0.5 * float(np.percentile(distance, 99)))
    far = distance >= apart
    if far.mean() < 0.02:
        return None
    face = np.median(bgr[distance < apart], axis=0)
    pip = np.median(bgr[far], axis=0)
    return _colour(face), _colour(pip)


def roll_sample(frame: np.ndarray, reading: FrameReading) -> RollSample | None:
    """The roll's dice colours, if they are of one colour (faces and pips alike); else None."""
    colours = [die_colours(frame, die) for die in reading.dice]
    if not colours or any(c is None for c in colours):
        return None
    faces = np.array([_lab(np.array([c[0]], np.float32))[0] for c in colours if c])
    pips = np.array([_lab(np.array([c[1]], np.float32))[0] for c in colours if c])
    face_mid, pip_mid = np.median(faces, axis=0), np.median(pips, axis=0)
    if np.linalg.norm(faces - face_mid, axis=1).max() > AGREE:
        return None  # a die of another colour, or something read as a die that is not one
    if np.linalg.norm(pips - pip_mid, axis=1).max() > PIP_AGREE:
        return None
    height, width = frame.shape[:2]
    face = _colour(np.median(np.array([c[0] for c in colours if c]), axis=0))
    pip = _colour(np.median(np.array([c[1] for c in colours if c]), axis=0))
    spots = tuple((d.center[0] / width, d.center[1] / height) for d in reading.dice)
    size = float(np.median([2 * d.radius for d in reading.dice])) / width
    return RollSample(face, pip, spots, size)


def learn(setup: LearnedSetup, sample: RollSample, frame: np.ndarray) -> LearnedSetup:
    """The set-up with one more sure roll; the colours and the tray once enough agree.

    Learned colours are not moved by later rolls: a stranger's throw cannot shift them. To
    start anew: calibrate, or delete the learned file; a camera seen moved starts learning
    again too (``moved_camera``), and so do ``LEARN_ROLLS`` throws in a row of dice of other
    colours (``other_dice``: another set, or a lamp that changed how the dice look).
    """
    if setup.learned:
        return setup
    samples = (setup.samples + (sample,))[-KEEP_SAMPLES:]
    grown = replace(setup, samples=samples, rolls=setup.rolls + 1)
    group = _best_group(samples)
    if len(group) < LEARN_ROLLS:
        return grown
    look = _group_look(group)
    assert look is not None
    width = float(np.median([s.width for s in group]))
    return replace(grown, face=look.face, pip=look.pip, die_width=round(width, 4),
                   region=tray_region(frame, [p for s in group for p in s.spots], width),
                   view=take_view(frame, sample.spots), moved=False, kept=None)


def tray_region(
    frame: np.ndarray, spots: list[tuple[float, float]], die_width: float
) -> tuple[float, float, float, float]:
    """The tray: the even-toned floor around the frame's middle, grown to hold every place a
    die came to rest with ``TRAY_MARGIN`` die widths around it (fractions of the frame)."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    height, width = grey.shape
    fx, fy, fw, fh = find_tray(grey)
    x0, y0, x1, y1 = fx, fy, fx + fw, fy + fh
    margin_x = TRAY_MARGIN * die_width
    margin_y = margin_x * width / height
    for sx, sy in spots:
        x0, y0 = min(x0, sx - margin_x), min(y0, sy - margin_y)
        x1, y1 = max(x1, sx + margin_x), max(y1, sy + margin_y)
    x0, y0 = max(0.0, x0), max(0.0, y0)
    x1, y1 = min(1.0, x1), min(1.0, y1)
    return (round(x0, 4), round(y0, 4), round(x1 - x0, 4), round(y1 - y0, 4))


def propose_look(
    frame: np.ndarray, region: tuple[float, float, float, float] = FULL_FRAME
) -> DiceLook | None:
    """A guess at the dice's colours from one frame, to try (never to trust).

    The tray is most of the picture: its colour is the median. Die-sized, squarish patches of
    another colour are dice (or anything else lying there); the colour most of them share is
    the dice's face, and the colour farthest from it inside them the pips'.
    """
    if frame.ndim != 3:
        return None
    height, width = frame.shape[:2]
    x0, y0, x1, y1 = region_pixels(region, width, height)
    crop = frame[y0:y1, x0:x1]
    scale = 320 / max(1, width)
    if scale < 1:
        crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    small_w = crop.shape[1] / max(1e-9, region[2])  # the whole frame's width at this scale
    lab = cv2.cvtColor(cv2.GaussianBlur(crop, (3, 3), 0).astype(np.float32) / 255.0,
                       cv2.COLOR_BGR2Lab)
    floor = np.median(lab.reshape(-1, 3), axis=0)
    other = (np.linalg.norm(lab - floor, axis=2) > 25.0).astype(np.uint8)
    other = cv2.morphologyEx(other, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(other, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(other)
    cv2.drawContours(filled, contours, -1, 1, -1)  # pips of the tray's colour are die too
    count, labels, stats, _ = cv2.connectedComponentsWithStats(filled)
    smallest, largest = (0.03 * small_w) ** 2, (0.2 * small_w) ** 2
    found: list[tuple[np.ndarray, np.ndarray]] = []
    for i in range(1, count):
        area = float(stats[i, cv2.CC_STAT_AREA])
        box_w, box_h = stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]
        if not smallest <= area <= largest or max(box_w, box_h) > 1.8 * min(box_w, box_h):
            continue
        if area < 0.5 * box_w * box_h:
            continue  # not a die's filled square: a ring, a strand, a cable
        mask = (labels == i).astype(np.uint8)
        core = cv2.erode(mask, np.ones((3, 3), np.uint8),
                         iterations=max(1, int(0.12 * math.sqrt(area))))
        pixels = lab[core > 0]
        if len(pixels) < 12:
            continue
        centre = np.median(pixels, axis=0)
        distance = np.linalg.norm(pixels - centre, axis=1)
        apart = max(20.0, 0.5 * float(np.percentile(distance, 99)))
        if not (distance >= apart).any():
            continue
        found.append((np.median(pixels[distance < apart], axis=0),
                      np.median(pixels[distance >= apart], axis=0)))
    if not found:
        return None
    faces = np.array([f for f, _ in found])
    near = (np.linalg.norm(faces[:, None] - faces[None], axis=2) <= AGREE).sum(axis=1)
    best = faces[int(np.argmax(near))]
    group = [k for k in range(len(found)) if np.linalg.norm(faces[k] - best) <= AGREE]
    face = np.median(faces[group], axis=0)
    pip = np.median(np.array([found[k][1] for k in group]), axis=0)
    return DiceLook(_bgr_of(face), _bgr_of(pip))


def _best_group(samples: tuple[RollSample, ...]) -> list[RollSample]:
    """The largest set of samples whose colours agree with one of them (the likeliest)."""
    best: list[RollSample] = []
    for anchor in samples:
        group = [s for s in samples if _alike(s.face, s.pip, anchor.face, anchor.pip)]
        if len(group) > len(best):
            best = group
    return best


def _group_look(group: list[RollSample]) -> DiceLook | None:
    if not group:
        return None
    face = np.median(np.array([s.face for s in group]), axis=0)
    pip = np.median(np.array([s.pip for s in group]), axis=0)
    return DiceLook(_colour(face), _colour(pip))


def _same_look(a: DiceLook | None, b: DiceLook | None) -> bool:
    if a is None or b is None:
        return a is b
    return bool(np.linalg.norm(_lab_of(a.face) - _lab_of(b.face)) < 3.0
                and np.linalg.norm(_lab_of(a.pip) - _lab_of(b.pip)) < 3.0)


def colour_distance(a: Colour, b: Colour) -> float:
    """How far apart two BGR colours are, in CIE Lab (within ``AGREE``: faces of one colour)."""
    return float(np.linalg.norm(_lab_of(a) - _lab_of(b)))


def _alike(face: Colour, pip: Colour, other_face: Colour, other_pip: Colour) -> bool:
    """Dice of one set: faces within ``AGREE``, pips within ``PIP_AGREE``."""
    return colour_distance(face, other_face) <= AGREE and colour_distance(pip, other_pip) <= PIP_AGREE


def _lab(bgr: np.ndarray) -> np.ndarray:
    """BGR rows (0..255) as CIE Lab rows."""
    return cv2.cvtColor(bgr.reshape(1, -1, 3).astype(np.float32) / 255.0,
                        cv2.COLOR_BGR2Lab)[0]


def _lab_of(colour: Colour) -> np.ndarray:
    return _lab(np.array([colour], np.float32))[0]


def _bgr_of(lab: np.ndarray) -> Colour:
    bgr = cv2.cvtColor(np.asarray(lab, np.float32).reshape(1, 1, 3), cv2.COLOR_Lab2BGR)[0, 0]
    return _colour(np.clip(bgr * 255.0, 0, 255))


def _colour(values: np.ndarray) -> Colour:
    return (round(float(values[0]), 1), round(float(values[1]), 1), round(float(values[2]), 1))


# The file's form: plain JSON values, checked field by field when read (the shell names the file).
def to_data(setup: LearnedSetup) -> dict[str, object]:
    data: dict[str, object] = {
        "version": FORMAT_VERSION,
        "face": list(setup.face) if setup.face else None,
        "pip": list(setup.pip) if setup.pip else None,
        "region": list(setup.region) if setup.region else None,
        "die_width": setup.die_width,
        "rolls": setup.rolls,
        "moved": setup.moved,
        "view": None if setup.view is None else {
            "picture": base64.b64encode(setup.view.picture).decode("ascii"),
            "dice": [[round(x, 4), round(y, 4)] for x, y in setup.view.dice],
        },
        "samples": [
            {"face": list(s.face), "pip": list(s.pip), "width": round(s.width, 4),
             "spots": [[round(x, 4), round(y, 4)] for x, y in s.spots]}
            for s in setup.samples
        ],
    }
    if setup.kept is not None:  # only while learning again (left out otherwise)
        data["kept"] = {"face": list(setup.kept.face), "pip": list(setup.kept.pip)}
    return data


def from_data(data: object) -> LearnedSetup:
    """The set-up from ``to_data``'s form; a wrong value raises ValueError naming it."""
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"version {data.get('version')!r} is not {FORMAT_VERSION}")
    unknown = set(data) - {"version", "face", "pip", "region", "die_width", "rolls", "moved",
                           "kept", "before_move", "view", "samples"}
    if unknown:
        raise ValueError(f"unknown setting {sorted(unknown)[0]!r}")
    face = _colour_field(data.get("face"), "face")
    pip = _colour_field(data.get("pip"), "pip")
    if (face is None) != (pip is None):
        raise ValueError("'face' and 'pip' are both colours or both null")
    region = data.get("region")
    if region is not None:
        if not isinstance(region, list) or len(region) != 4:
            raise ValueError("'region' must be [x, y, width, height] as fractions, or null")
        x, y, w, h = (_fraction(v, "region") for v in region)
        if w <= 0 or h <= 0 or x + w > 1.0001 or y + h > 1.0001:
            raise ValueError("'region' must lie inside the frame (fractions 0..1)")
        region = (x, y, w, h)
    width = data.get("die_width")
    if width is not None:
        width = _fraction(width, "die_width")
        if width == 0:
            raise ValueError("'die_width' must be more than 0")
    rolls = data.get("rolls", 0)
    if isinstance(rolls, bool) or not isinstance(rolls, int) or rolls < 0:
        raise ValueError("'rolls' must be a whole number of at least 0")
    moved = data.get("moved", False)
    if not isinstance(moved, bool):
        raise ValueError("'moved' must be true or false")
    # "before_move": the same colours, as files written before another set could start it
    if "kept" in data and "before_move" in data:
        raise ValueError("'kept' and 'before_move' are one setting: give one")
    name = "before_move" if "before_move" in data else "kept"
    kept = _kept_field(data.get(name), name)
    if kept is not None and face is not None:
        raise ValueError(f"'{name}' is only for dice colours kept while learning again:"
                         " null once 'face' is learned")
    view = _view_field(data.get("view"))
    samples = data.get("samples", [])
    if not isinstance(samples, list):
        raise ValueError("'samples' must be a list")
    rolled = []
    for number, item in enumerate(samples[-KEEP_SAMPLES:], start=1):
        if not isinstance(item, dict):
            raise ValueError(f"sample {number}: expected an object")
        spots = item.get("spots")
        if not isinstance(spots, list) or not all(
            isinstance(p, list) and len(p) == 2 for p in spots
        ):
            raise ValueError(f"sample {number}: 'spots' must be a list of [x, y]")
        rolled.append(RollSample(
            _colour_field(item.get("face"), f"sample {number} face") or (0.0, 0.0, 0.0),
            _colour_field(item.get("pip"), f"sample {number} pip") or (0.0, 0.0, 0.0),
            tuple((_fraction(x, "spots"), _fraction(y, "spots")) for x, y in spots),
            _fraction(item.get("width"), f"sample {number} width"),
        ))
    return LearnedSetup(tuple(rolled), face, pip, region, width, rolls, view, moved, kept)


def _kept_field(value: object, name: str) -> DiceLook | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"face", "pip"}:
        raise ValueError(f"'{name}' must be an object with 'face' and 'pip', or null")
    face = _colour_field(value["face"], f"{name} face")
    pip = _colour_field(value["pip"], f"{name} pip")
    if face is None or pip is None:
        raise ValueError(f"'{name}' must name both colours, 'face' and 'pip'")
    return DiceLook(face, pip)


def _view_field(value: object) -> TrayView | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"picture", "dice"}:
        raise ValueError("'view' must be an object with 'picture' and 'dice', or null")
    try:
        picture = base64.b64decode(str(value["picture"]), validate=True)
    except binascii.Error:
        raise ValueError("'view': 'picture' is not base64") from None
    dice = value["dice"]
    if not isinstance(dice, list) or not all(isinstance(p, list) and len(p) == 2 for p in dice):
        raise ValueError("'view': 'dice' must be a list of [x, y]")
    view = TrayView(picture, tuple((_fraction(x, "view dice"), _fraction(y, "view dice")) for x, y in dice))
    view_picture(view)  # a ValueError naming 'view' if it is not a picture
    return view


def _colour_field(value: object, name: str) -> Colour | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 3 or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 255 for v in value
    ):
        raise ValueError(f"'{name}' must be [blue, green, red] in 0..255")
    return (float(value[0]), float(value[1]), float(value[2]))


def _fraction(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"'{name}' must be a fraction of the frame, 0..1")
    return float(value)
