"""Labelled dice photos: YOLO label files, the train/held-out split, and matching for scoring.

The layout is ``images/NAME.jpg`` beside ``labels/NAME.txt``; each label line is
``class x_center y_center width height`` (normalised 0..1), class 0..5 meaning faces 1..6.
A folder may also hold ``labels_unclear/NAME.txt``: boxes (class 6) round dice nobody can read
(cut by the frame, on an edge, cocked, blurred), which training neither teaches as a face nor
as "no die here" (``read_unclear``).

The split is the same for every folder and fixed by each photo's name alone (``split_of``):
about 30% held out, never trained or tuned on; of the rest, a fifth set aside (``set_aside``)
to check training and choose the fusion's thresholds. For the two real photo sets this gives:

=====================  ======  ========  =====  ==========
folder                 photos  held out  train  set aside
=====================  ======  ========  =====  ==========
dice-photos               310        84    226         38
dice-photos-mixed         289       105    184         47
=====================  ======  ========  =====  ==========

Rendered trays (``scripts/render_dice.py``) are split by picture number instead: the training
renders and the held-out renders are made from seeds that never meet.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.vision.reading import closest_pairs

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")
SPLITS = ("heldout", "train", "setaside", "all")  # setaside: the fifth of train kept from training
HELD_OUT_BUCKETS = 3  # of 10: about 30% of photos are never used to tune or train
# Content hashes of the photos the readers were tuned and the network trained on.
TUNED_ON = Path(__file__).with_name("models") / "tuned_on.json"


@dataclass(frozen=True)
class LabelledDie:
    face: int
    center: tuple[float, float]  # pixels
    size: tuple[float, float]  # pixels (width, height)


@dataclass(frozen=True)
class LabelledPhoto:
    name: str
    image_path: Path
    label_path: Path


def split_of(name: str) -> str:
    """``"heldout"`` or ``"train"``, fixed by a hash of the photo's name (stem).

    A hash rather than a shuffle so the split never depends on the order files are listed in
    or on a random seed, and a photo added later never moves another photo across the split.
    """
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return "heldout" if digest[0] % 10 < HELD_OUT_BUCKETS else "train"


def set_aside(name: str) -> bool:
    """True for about a fifth of the training photos, kept out of training the dice network.

    They are where the network's training is checked and the two readers' thresholds chosen
    (``vision/fusion.py``), so that the held-out photos stay unseen until they are measured.
    """
    return hashlib.sha256(("val:" + name).encode("utf-8")).digest()[0] % 5 == 0


def list_photos(root: Path, split: str = "all") -> list[LabelledPhoto]:
    """Labelled photos under ``root`` (``images/`` + ``labels/``), sorted by name."""
    if split not in SPLITS:
        raise UserError(f"unknown split {split!r}: use {', '.join(SPLITS)}")
    images = root / "images"
    labels = root / "labels"
    if not images.is_dir() or not labels.is_dir():
        raise UserError(f"{root}: expected images/ and labels/ folders inside")
    photos = []
    for path in sorted(images.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        label = labels / f"{path.stem}.txt"
        if not label.is_file():
            continue
        if split != "all" and split_of(path.stem) != ("train" if split == "setaside" else split):
            continue
        if split == "setaside" and not set_aside(path.stem):
            continue
        photos.append(LabelledPhoto(path.stem, path, label))
    if not photos:
        if split != "all" and list_photos(root, "all"):
            raise UserError(f"{root}: split {split} leaves none of its photos (use --split all)")
        raise UserError(f"{root}: no images with a matching label file")
    return photos


def _photo_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError as exc:
        raise UserError(f"{path}: cannot read image ({exc.strerror})") from None


def tuned_on(photos: list[LabelledPhoto]) -> int:
    """How many of ``photos`` the readers were tuned or the dice network trained on.

    By content, not name: another folder's ``one_1.jpg`` is not the project's photo.
    """
    known = set(json.loads(TUNED_ON.read_text(encoding="utf-8"))["sha256"])
    return sum(_photo_hash(p.image_path) in known for p in photos)


def default_split(photos: list[LabelledPhoto]) -> str:
    """``heldout`` for a folder holding photos the readers learned from, else ``all``.

    The split exists to keep those photos out of the measure; in a folder of other photos
    (a group's own dice) none was learned from, so every photo is a fair test.
    """
    return "heldout" if tuned_on(photos) else "all"


def parse_labels(text: str, width: int, height: int, source: str = "labels") -> list[LabelledDie]:
    """YOLO lines -> dice in pixel coordinates; a bad line is a one-line error naming it."""
    dice = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 5:
                raise ValueError
            cls = int(parts[0])
            x, y, w, h = (float(p) for p in parts[1:])
            if not 0 <= cls <= 5:
                raise ValueError
        except ValueError:
            raise UserError(
                f"{source}:{number}: expected 'class x y w h' with class 0..5, got {line.strip()!r}"
            ) from None
        dice.append(LabelledDie(cls + 1, (x * width, y * height), (w * width, h * height)))
    return dice


def read_labels(path: Path, width: int, height: int) -> list[LabelledDie]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read label file ({exc.strerror})") from None
    return parse_labels(text, width, height, source=str(path))


def read_unclear(photo: LabelledPhoto, width: int, height: int) -> list[tuple[float, float, float, float]]:
    """The unclear boxes (x, y, w, h in pixels) beside a photo's labels, if its folder has any."""
    path = photo.label_path.parent.parent / "labels_unclear" / photo.label_path.name
    if not path.is_file():
        return []
    boxes = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        try:
            x, y, w, h = (float(p) for p in parts[1:5])
        except ValueError:
            raise UserError(f"{path}:{number}: expected 'class x y w h', got {line.strip()!r}") from None
        boxes.append((x * width, y * height, w * width, h * height))
    return boxes


def match_dice(
    found: list[tuple[float, float, float]], truth: list[LabelledDie]
) -> list[tuple[int, int]]:
    """Pair found dice ``(x, y, radius)`` with labelled dice, closest pairs first.

    Labels box the top face (often just its pips), detections box the whole die, so pairs are
    made by centre distance: a pair counts when the centres are within the found die's radius
    plus half the label's size. Each die is used at most once. Returns (found_i, truth_j).
    """
    candidates = []
    for i, (fx, fy, fr) in enumerate(found):
        for j, die in enumerate(truth):
            distance = ((fx - die.center[0]) ** 2 + (fy - die.center[1]) ** 2) ** 0.5
            reach = fr + 0.5 * max(die.size)
            if distance <= reach:
                candidates.append((distance, i, j))
    return closest_pairs(candidates)
