"""Score a reader against labelled photos: per die, per photo, and what it missed or invented;
and per roll, as a table would score each photo (``evaluate_rolls``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.dataset import LabelledPhoto, match_dice, read_labels, read_unclear
from bunco_pi.vision.reading import FrameReading
from bunco_pi.vision.verdict import SettledRoll, Unsure, judge

MISTAKES = ("wrong and sure", "not sure", "missed", "extra")  # the kinds, worst first


@dataclass(frozen=True)
class Mistake:
    """One die the reader got wrong, for a person to look at in the photo."""

    kind: str  # one of MISTAKES
    place: tuple[float, float]  # pixels in the photo: the label's centre, or the reading's
    label: int | None  # the labelled face (None: no die labelled there)
    read: int | None  # the face read (None: none, or nothing found)
    confidence: float = 0.0  # the reader's, for a die it found
    problem: str = ""  # the reader's reason, for a die it was not sure of

    def describe(self) -> str:
        """``(412,233) wrong and sure: label 3, read 5 (0.93)``."""
        label = "no die labelled" if self.label is None else f"label {self.label}"
        if self.kind == "missed":
            read = "nothing read"
        else:
            face = "?" if self.read is None else str(self.read)
            why = f", {self.problem}" if self.problem else ""
            read = f"read {face} ({self.confidence:.2f}{why})"
        x, y = self.place
        return f"({x:.0f},{y:.0f}) {self.kind}: {label}, {read}"


@dataclass(frozen=True)
class PhotoResult:
    name: str
    dice: int  # labelled
    right: int  # read with the labelled face, and sure
    wrong: int  # read sure, with another face: a roll that would be scored wrongly
    unsure: int  # found, but the reader said it is not sure
    missed: int  # labelled, not found
    invented: int  # found where no die is labelled
    file: str = ""  # the photo's file name
    mistakes: tuple[Mistake, ...] = ()  # every die counted in wrong, unsure, missed, invented

    @property
    def all_right(self) -> bool:
        return self.right == self.dice and self.invented == 0


@dataclass(frozen=True)
class Evaluation:
    photos: tuple[PhotoResult, ...]
    seconds: float  # reading time only (not loading)

    def total(self, name: str) -> int:
        return sum(getattr(p, name) for p in self.photos)

    @property
    def die_accuracy(self) -> float:
        dice = self.total("dice")
        return self.total("right") / dice if dice else 0.0

    @property
    def photo_accuracy(self) -> float:
        return sum(p.all_right for p in self.photos) / len(self.photos) if self.photos else 0.0


def load_image(path: Path) -> np.ndarray:
    """A BGR image from a file, or a one-line error naming the file."""
    if not path.is_file():
        raise UserError(f"{path}: no such image file")
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise UserError(f"{path}: not an image OpenCV can read")
    return image


def _motion_blur(image: np.ndarray) -> np.ndarray:
    kernel = np.zeros((9, 9), np.float32)
    kernel[4] = 1 / 9  # a die (or the camera) moving 9 pixels sideways during the exposure
    return cv2.filter2D(image, -1, kernel)


def _jpeg(image: np.ndarray) -> np.ndarray:
    _, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 25])
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def _smaller(image: np.ndarray) -> np.ndarray:
    height, width = image.shape[:2]
    small = cv2.resize(image, None, fx=0.6, fy=0.6, interpolation=cv2.INTER_AREA)
    return cv2.resize(small, (width, height))  # the detail of a camera 1.7 times farther away


PHONE_LONG_SIDE = 4032  # pixels: a 12-megapixel phone photo, 4032x3024


def _large(image: np.ndarray) -> np.ndarray:
    height, width = image.shape[:2]
    factor = PHONE_LONG_SIDE / max(height, width)
    # No detail is added: what is tested is the readers' scale, dice hundreds of pixels wide
    return cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)


def _hue_turned(image: np.ndarray) -> np.ndarray:
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)  # OpenCV's hue runs 0..179, two degrees a step
    hsv[..., 0] = ((hsv[..., 0].astype(np.int16) + 60) % 180).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def _lit(blue: float, green: float, red: float) -> Callable[[np.ndarray], np.ndarray]:
    gains = np.array([blue, green, red], np.float32)
    return lambda image: np.clip(image.astype(np.float32) * gains + 0.5, 0, 255).astype(np.uint8)


# Photos made harder, to see where a reader's wrong faces come out sure: the labels still hold
# (they are fractions of the picture, so "large", the one that changes its size, keeps them too).
# The last five make the dice and the tray colours the photos never had, as a group's own set
# and table would: a third of the way round the colour wheel (red dice green, blue ones red),
# the negative (light pips on dark dice), no colour at all, a warm lamp and a cold one.
HARDER: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "blur": lambda image: cv2.GaussianBlur(image, (0, 0), 1.5),
    "motion": _motion_blur,
    "dark": lambda image: (image.astype(np.float32) * 0.45).astype(np.uint8),
    "small": _smaller,
    "jpeg": _jpeg,
    "large": _large,
    "hue": _hue_turned,
    "negative": lambda image: 255 - image,
    "grey": lambda image: cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR),
    "warm": _lit(0.6, 0.9, 1.1),
    "cold": _lit(1.15, 0.95, 0.6),
}


def score_photo(
    name: str,
    reading: FrameReading,
    truth_path: Path,
    size: tuple[int, int],
    min_confidence: float,
    file: str = "",
) -> PhotoResult:
    width, height = size
    truth = read_labels(truth_path, width, height)
    found = [(d.center[0], d.center[1], d.radius) for d in reading.dice]
    pairs = match_dice(found, truth)
    right = wrong = unsure = 0
    mistakes = []
    for i, j in pairs:
        die, label = reading.dice[i], truth[j]
        if die.face is None or die.confidence < min_confidence:
            unsure += 1
            kind = "not sure"
        elif die.face == label.face:
            right += 1
            continue
        else:
            wrong += 1
            kind = "wrong and sure"
        mistakes.append(Mistake(kind, label.center, label.face, die.face, die.confidence,
                                die.problem))
    paired_found = {i for i, _ in pairs}
    paired_truth = {j for _, j in pairs}
    for j, label in enumerate(truth):
        if j not in paired_truth:
            mistakes.append(Mistake("missed", label.center, label.face, None))
    for i, die in enumerate(reading.dice):
        if i not in paired_found:
            mistakes.append(Mistake("extra", die.center, None, die.face, die.confidence,
                                    die.problem))
    mistakes.sort(key=lambda m: (MISTAKES.index(m.kind), m.place[1], m.place[0]))
    return PhotoResult(
        name, len(truth), right, wrong, unsure, len(truth) - len(pairs), len(found) - len(pairs),
        file, tuple(mistakes),
    )


def evaluate(
    photos: Iterable[LabelledPhoto],
    read: Callable[[np.ndarray], FrameReading],
    min_confidence: float,
    harder: str = "",
) -> Evaluation:
    """Read every photo (made ``harder`` first: a key of HARDER, or "" as it is) and score it."""
    if harder and harder not in HARDER:
        raise UserError(f"--harder: unknown {harder!r} (use {', '.join(HARDER)})")
    results = []
    seconds = 0.0
    for photo in photos:
        image = load_image(photo.image_path)
        if harder:
            image = HARDER[harder](image)
        start = time.perf_counter()
        reading = read(image)
        seconds += time.perf_counter() - start
        size = (image.shape[1], image.shape[0])
        results.append(score_photo(photo.name, reading, photo.label_path, size, min_confidence,
                                   photo.image_path.name))
    return Evaluation(tuple(results), seconds)


@dataclass(frozen=True)
class RollResult:
    """One photo judged as a table judges a settled tray: read as a roll of ``dice`` dice, is it
    scored, and with the faces it shows? ``dice`` is as many as the photo holds, or one fewer:
    a tray holding a die too many, which is never a roll to score."""

    name: str
    file: str
    held: int  # the dice in the photo, every one labelled
    dice: int  # the dice a roll has at this table
    labelled: tuple[int, ...]  # the faces shown, smallest first
    scored: tuple[int, ...] | None  # the faces the table would score, smallest first; None: refused
    reason: str = ""  # why it was refused (the OLED's line)

    @property
    def outcome(self) -> str:
        """``right``, ``wrong`` (scored with other faces, or scored at all with a die too many)
        or ``refused``."""
        if self.scored is None:
            return "refused"
        return "right" if self.dice == self.held and self.scored == self.labelled else "wrong"

    def describe(self) -> str:
        """``holds 4 (1 2 5 6), read as a roll of 3: scored 1 2 5``."""
        shown = " ".join(map(str, self.labelled))
        verdict = (f"refused ({self.reason})" if self.scored is None
                   else "scored " + " ".join(map(str, self.scored)))
        return f"holds {self.held} ({shown}), read as a roll of {self.dice}: {verdict}"


def evaluate_rolls(
    photos: Iterable[LabelledPhoto],
    read: Callable[[np.ndarray, int], FrameReading],
    min_confidence: float,
    harder: str = "",
) -> tuple[RollResult, ...]:
    """Each photo whose every die is labelled (none unclear), read by ``read(image, dice)`` as a
    roll of as many dice as it holds, and, holding two or more, as a roll of one die fewer.

    The faces a table scores are compared as a Bunco score counts them, in any order. A
    photo with a die nobody could label is left out: the roll it shows is not known.
    """
    if harder and harder not in HARDER:
        raise UserError(f"--harder: unknown {harder!r} (use {', '.join(HARDER)})")
    results = []
    for photo in photos:
        image = load_image(photo.image_path)
        if harder:
            image = HARDER[harder](image)
        height, width = image.shape[:2]
        labels = read_labels(photo.label_path, width, height)
        if not labels or read_unclear(photo, width, height):
            continue
        shown = tuple(sorted(d.face for d in labels))
        for dice in (len(labels), len(labels) - 1):
            if dice < 1:
                continue
            verdict = judge(read(image, dice), dice, min_confidence)
            scored = tuple(sorted(verdict.faces)) if isinstance(verdict, SettledRoll) else None
            reason = verdict.reason if isinstance(verdict, Unsure) else ""
            results.append(RollResult(photo.name, photo.image_path.name, len(labels), dice, shown, scored,
                                      reason))
    return tuple(results)
