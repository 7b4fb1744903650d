"""How well a moved camera is told from another throw: the renderer's trays thrown again.

    python3 scripts/render_dice.py renders/throws-ae --start 1700000 --count 40 --kinds roll:1 \\
        --throws 3 --moved
    python3 scripts/measure_tray_view.py renders/throws-ae [--list]

With ``--photos FOLDER``, real labelled photos too (``dice-photos``' layout), whose camera is
moved by a known warp: the middle of each photo is the kept view, and the same photo turned 2
to 6 degrees, shifted 1 to 3 die widths and scaled by 0.95 to 1.05 the camera nudged (its dice
go with it); the photo brighter by a third, noisy and saved again as JPEG the camera in place.
Real trays' grain, rims and tables, which the renders' plain trays lack, with the truth known.

For each tray rendered with ``--throws 3 --moved``: the view kept from its first picture (as
``learn.learn`` keeps it, its dice where the labels put them, the learned region as
``learn.tray_region`` finds it), compared with the same camera's other two throws (also made
brighter and darker by a third, as an exposure that changed) and with the three throws after
the camera was nudged (``-moved``, ``-moved-t2``, ``-moved-t3``).

Whether a picture truly moved is known from the scene files: each names the camera's place,
turn and lens, so the learned region's corners are found on the tray's floor from the first
camera and seen again from the nudged one. A picture whose corners moved more than
``tray_view.MOVED`` die widths is "moved"; the others, and every throw of the same camera,
are "in place". Prints how each was called. A camera in place must never be called moved.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.dataset import LabelledPhoto, list_photos, read_labels, read_unclear
from bunco_pi.vision.evaluate import load_image
from bunco_pi.vision.learn import tray_region
from bunco_pi.vision.tray_view import MOVED, Comparison, Verdict, compare, take_view

EXPOSURES = (1.0, 4 / 3, 2 / 3)  # the same camera's throws as they are, brighter and darker


def lit(frame: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(frame.astype(np.float32) * gain, 0, 255).astype(np.uint8)


def dice_boxes(folder: Path, image: Path, shape: tuple[int, ...]) -> list[tuple[float, float, float, float]]:
    """Every die in a rendered picture of ``shape`` (its array's), readable or not: (x, y,
    width, height), pixels."""
    height, width = shape[:2]
    labels = folder / "labels" / f"{image.stem}.txt"
    boxes = [(*d.center, *d.size) for d in read_labels(labels, width, height)]
    return boxes + read_unclear(LabelledPhoto(image.stem, image, labels), width, height)


def camera(folder: Path, name: str) -> tuple[np.ndarray, np.ndarray, float]:
    """The camera of a rendered picture: its place, its turn (camera to world) and its lens
    over its sensor's width."""
    path = folder / "scenes" / f"{name}.json"
    try:
        pose = json.loads(path.read_text())["camera"]
        return (np.array(pose["location"]), np.array(pose["rotation"]),
                pose["lens_mm"] / pose["sensor_mm"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: no camera to read ({exc!r}): render it again with"
                        " scripts/render_dice.py") from None


def on_floor(cam: tuple[np.ndarray, np.ndarray, float], points: np.ndarray) -> np.ndarray:
    """Picture points (fractions, square pictures) -> where they are on the floor (z = 0)."""
    place, turn, focal = cam
    rays = np.stack([points[:, 0] - 0.5, 0.5 - points[:, 1], -np.full(len(points), focal)], axis=1)
    rays = rays @ turn.T
    return place + rays * (-place[2] / rays[:, 2])[:, None]


def in_picture(cam: tuple[np.ndarray, np.ndarray, float], floor: np.ndarray) -> np.ndarray:
    """Floor points -> where a camera sees them (fractions of a square picture)."""
    place, turn, focal = cam
    local = (floor - place) @ turn
    return np.stack([0.5 + focal * local[:, 0] / -local[:, 2],
                     0.5 - focal * local[:, 1] / -local[:, 2]], axis=1)


def true_shift(folder: Path, first: str, other: str, region: tuple[float, float, float, float],
               die_width: float) -> float:
    """How far the learned region's corners moved from one picture to the other, die widths."""
    corners = region_corners(region)
    seen = in_picture(camera(folder, other), on_floor(camera(folder, first), corners))
    return farthest(corners, seen) / die_width


def region_corners(region: tuple[float, float, float, float]) -> np.ndarray:
    x, y, w, h = region
    return np.array([[x, y], [x + w, y], [x, y + h], [x + w, y + h]])


def farthest(before: np.ndarray, after: np.ndarray) -> float:
    """How far the point that moved farthest moved."""
    return float(np.max(np.linalg.norm(after - before, axis=1)))


def compared(folder: Path) -> list[tuple[str, str, float, Comparison]]:
    """(picture, how it was made, true shift, comparison) for every tray in ``folder``."""
    images = folder / "images"
    rows = []
    for first in sorted(images.glob("r*.jpg")):
        name = first.stem
        if "-" in name or not (images / f"{name}-moved.jpg").exists():
            continue
        frame = load_image(first)
        height, width = frame.shape[:2]
        boxes = dice_boxes(folder, first, frame.shape)
        if not boxes:
            continue
        spots = tuple((x / width, y / height) for x, y, _, _ in boxes)
        die_width = float(np.median([max(w, h) for _, _, w, h in boxes])) / width
        view = take_view(frame, spots)
        region = tray_region(frame, list(spots), die_width)
        cases = [(f"{name}-t{k}", gain) for k in (2, 3) for gain in EXPOSURES]
        cases += [(f"{name}-moved{suffix}", 1.0) for suffix in ("", "-t2", "-t3")]
        for other, gain in cases:
            path = images / f"{other}.jpg"
            if not path.exists():
                continue
            picture = load_image(path)
            seen = tuple((x / width, y / height) for x, y, _, _ in dice_boxes(folder, path, picture.shape))
            how = "nudged" if "moved" in other else "same camera" + (f" x{gain:.2f}" if gain != 1 else "")
            rows.append((other, how, true_shift(folder, name, other, region, die_width),
                         compare(view, lit(picture, gain), seen, region, die_width)))
    return rows


def warped_photos(folder: Path, seed: int = 0) -> list[tuple[str, str, float, Comparison]]:
    """(photo, how, true shift, comparison) for every labelled photo of ``folder``: in place
    (brighter, noisy, saved again) and moved by a known warp (``--photos``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for photo in list_photos(folder):
        image = load_image(photo.image_path)
        height, width = image.shape[:2]
        x0, y0, w, h = round(0.1 * width), round(0.1 * height), round(0.8 * width), round(0.8 * height)
        dice = [d for d in read_labels(photo.label_path, width, height)
                if x0 <= d.center[0] < x0 + w and y0 <= d.center[1] < y0 + h]
        if not dice:
            continue
        kept = image[y0:y0 + h, x0:x0 + w]
        spots = np.array([(d.center[0] - x0, d.center[1] - y0) for d in dice])
        die = float(np.median([max(d.size) for d in dice]))  # pixels of the photo
        view = take_view(kept, tuple(map(tuple, spots / [w, h])))
        region = tray_region(kept, list(map(tuple, spots / [w, h])), die / w)
        again = np.clip(lit(image, 4 / 3) + rng.normal(0, 4, image.shape), 0, 255).astype(np.uint8)
        _, jpeg = cv2.imencode(".jpg", again, [cv2.IMWRITE_JPEG_QUALITY, 60])
        in_place = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)[y0:y0 + h, x0:x0 + w]
        rows.append((photo.name, "real, in place", 0.0,
                     compare(view, in_place, view.dice, region, die / w)))
        # the nudge, in the kept picture's pixels: turned and scaled about its middle, shifted
        angle = float(rng.choice([-1, 1]) * rng.uniform(2, 6))
        heading = float(rng.uniform(0, 2 * np.pi))
        shift = float(rng.uniform(1, 3)) * die
        motion = cv2.getRotationMatrix2D((w / 2, h / 2), angle, float(rng.uniform(0.95, 1.05)))
        motion[:, 2] += (shift * np.cos(heading), shift * np.sin(heading))
        from_photo = motion @ np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
        moved = cv2.warpAffine(image, from_photo, (w, h), borderMode=cv2.BORDER_REPLICATE)
        corners = region_corners(region) * [w, h]
        truly = farthest(corners, corners @ motion[:, :2].T + motion[:, 2]) / die
        seen = spots @ motion[:, :2].T + motion[:, 2]
        rows.append((photo.name, "real, nudged", truly,
                     compare(view, moved, tuple(map(tuple, seen / [w, h])), region, die / w)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="renders made with --throws 3 --moved")
    parser.add_argument("--list", action="store_true", help="every comparison, one a line")
    parser.add_argument("--photos", type=Path, action="append", default=[],
                        help="labelled real photos, moved by a known warp (may be named again)")
    args = parser.parse_args(argv)
    try:
        rows = compared(args.folder)
        for folder in args.photos:
            rows += warped_photos(folder)
    except UserError as exc:  # a missing or spoilt picture or label file, named
        print(f"measure_tray_view: {exc}", file=sys.stderr)
        return 1
    if not rows:
        print(f"{args.folder}: no trays rendered with --throws 3 --moved", file=sys.stderr)
        return 1
    if args.list:
        for name, how, truth, c in rows:
            likeness = "-" if c.likeness is None else f"{c.likeness:.3f}"
            print(f"{name:18s} {how:18s} truly {truth:5.2f}  called {c.verdict.value:8s}"
                  f" likeness {likeness:6s} shift {c.shift}")
    groups = {
        "same camera": [r for r in rows if r[1] == "same camera"],
        "same camera, exposure x4/3 or x2/3": [r for r in rows if r[1].startswith("same camera x")],
        f"nudged, moved under {MOVED:g} die width": [r for r in rows if r[1] == "nudged" and r[2] <= MOVED],
        f"nudged, moved over {MOVED:g} die width": [r for r in rows if r[1] == "nudged" and r[2] > MOVED],
    }
    if args.photos:
        groups["real photos, in place (brighter, noisy, saved again)"] = [
            r for r in rows if r[1] == "real, in place"]
        groups[f"real photos, warped under {MOVED:g} die width"] = [
            r for r in rows if r[1] == "real, nudged" and r[2] <= MOVED]
        groups[f"real photos, warped over {MOVED:g} die width"] = [
            r for r in rows if r[1] == "real, nudged" and r[2] > MOVED]
    verdicts = list(Verdict)
    print(f"| pictures | count | {' | '.join(v.value for v in verdicts)} |"
          " shift measured, where called (die widths) |")
    print("| --- | --- |" + " --- |" * (len(verdicts) + 1))
    for label, found in groups.items():
        counts = Counter(c.verdict for _, _, _, c in found)
        errors = sorted(abs(c.shift - truth) for _, _, truth, c in found if c.shift is not None)
        error = f"off by {float(np.median(errors)):.2f} (median), {errors[-1]:.2f} (most)" if errors else "-"
        print(f"| {label} | {len(found)} | " + " | ".join(str(counts[v]) for v in verdicts) + f" | {error} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
