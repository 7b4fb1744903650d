"""Score a reader against labelled photos: per die, per photo, and what it missed or invented."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.dataset import LabelledPhoto, match_dice, read_labels
from bunco_pi.vision.reading import FrameReading


@dataclass(frozen=True)
class PhotoResult:
    name: str
    dice: int  # labelled
    right: int  # read with the labelled face, and sure
    wrong: int  # read sure, with another face: a roll that would be scored wrongly
    unsure: int  # found, but the reader said it is not sure
    missed: int  # labelled, not found
    invented: int  # found where no die is labelled

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


def score_photo(
    name: str, reading: FrameReading, truth_path: Path, size: tuple[int, int], min_confidence: float
) -> PhotoResult:
    width, height = size
    truth = read_labels(truth_path, width, height)
    found = [(d.center[0], d.center[1], d.radius) for d in reading.dice]
    pairs = match_dice(found, truth)
    right = wrong = unsure = 0
    for i, j in pairs:
        die = reading.dice[i]
        if die.face is None or die.confidence < min_confidence:
            unsure += 1
        elif die.face == truth[j].face:
            right += 1
        else:
            wrong += 1
    return PhotoResult(
        name, len(truth), right, wrong, unsure, len(truth) - len(pairs), len(found) - len(pairs)
    )


def evaluate(
    photos: Iterable[LabelledPhoto],
    read: Callable[[np.ndarray], FrameReading],
    min_confidence: float,
) -> Evaluation:
    results = []
    seconds = 0.0
    for photo in photos:
        image = load_image(photo.image_path)
        start = time.perf_counter()
        reading = read(image)
        seconds += time.perf_counter() - start
        size = (image.shape[1], image.shape[0])
        results.append(score_photo(photo.name, reading, photo.label_path, size, min_confidence))
    return Evaluation(tuple(results), seconds)
