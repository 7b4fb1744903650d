"""The table's reader on pictures of one die each, as a table reads a roll of one.

    python3 scripts/eval_die_crops.py ../shared/datasets/dice-crops-white --canvas 640 --half held

A folder of single-die pictures sorted by face (``crops/1`` ... ``crops/6``, as the white-dice
crops of another rig are kept: one die in a cup, seen from straight above, never trained on)
measures the reader on dice photographed elsewhere. Each picture is placed in the middle of a
square canvas of ``--canvas`` pixels, filled with the picture's median grey, so that its die
is as large in the frame as on a tray: a 128-pixel crop whose die is about 50 pixels wide,
on a 640 canvas, gives a die 50 pixels wide at the reader's working width of 640; on a 384
canvas, 83 (the set-up guide asks for 35 to 90). ``--canvas 0`` reads the picture as it is
(its die about 250 pixels at 640: a camera far too close).

Each picture is read by ``read_both`` as a roll of one die (``judge``) and counted right
(scored with its folder's face), wrong (scored with another face), refused (the reason, as
the OLED would say it). ``--half dev`` reads the pictures numbered below 100 of each face,
``held`` the rest: the check's objection (``FusionSettings.check_object``) was chosen with
the first half. ``--list`` names every picture scored wrong or refused.
"""

from __future__ import annotations

import argparse
import collections
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bunco_pi.errors import UserError  # noqa: E402
from bunco_pi.vision.evaluate import load_image  # noqa: E402
from bunco_pi.vision.fusion import FusionSettings, read_both  # noqa: E402
from bunco_pi.vision.reader import ReaderSettings  # noqa: E402
from bunco_pi.vision.verdict import SettledRoll, judge  # noqa: E402

FACES = range(1, 7)
HALVES = ("all", "dev", "held")
FIRST_HELD = 100  # pictures numbered from here on are the held-out half


def pictures(folder: Path, half: str) -> list[tuple[int, Path]]:
    """(face, file) of every picture of the half, face by face, in name order."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder")
    crops = folder / "crops"
    faces = [face for face in FACES if (crops / str(face)).is_dir()]
    if not faces:
        raise UserError(f"{crops}: no folder of a face (crops/1 ... crops/6)")
    chosen = []
    for face in faces:
        for path in sorted((crops / str(face)).glob("*.png")):
            if half == "all" or (half == "held") == (_number(path) >= FIRST_HELD):
                chosen.append((face, path))
    if not chosen:
        raise UserError(f"{crops}: no .png pictures in the half {half!r}")
    return chosen


def _number(path: Path) -> int:
    try:
        return int(path.stem)
    except ValueError:
        raise UserError(f"{path}: a picture's name must be its number, as 00042.png") from None


def on_canvas(picture: np.ndarray, canvas: int) -> np.ndarray:
    """The picture (BGR) in the middle of a square canvas of its median grey; 0: as it is."""
    import cv2

    height, width = picture.shape[:2]
    if canvas == 0:
        return picture
    if canvas < max(height, width):
        raise UserError(f"--canvas {canvas}: smaller than the pictures ({width}x{height});"
                        " 0 reads them as they are")
    top, left = (canvas - height) // 2, (canvas - width) // 2
    grey = [int(v) for v in np.median(picture.reshape(-1, 3), axis=0)]
    return cv2.copyMakeBorder(picture, top, canvas - height - top, left, canvas - width - left,
                              cv2.BORDER_CONSTANT, value=grey)


def verdict(frame: np.ndarray, face: int, fusion: FusionSettings) -> tuple[str, str]:
    """("right" | "wrong" | "refused", what the table says) of one picture read as a roll of one."""
    settings = ReaderSettings()
    result = judge(read_both(frame, settings, fusion=fusion, dice=1), 1, settings.min_confidence)
    if isinstance(result, SettledRoll):
        (read,) = result.faces
        return ("right" if read == face else "wrong"), f"scored {read}"
    return "refused", result.reason


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="crops/1 ... crops/6, one die a picture")
    parser.add_argument("--canvas", type=int, default=640,
                        help="the square canvas's side in pixels (0: as it is)")
    parser.add_argument("--half", choices=HALVES, default="all",
                        help="dev: numbered below 100; held: the rest")
    parser.add_argument("--check-object", type=float, default=None, metavar="P",
                        help="the check's objection (FusionSettings.check_object; 1.01: none)")
    parser.add_argument("--list", action="store_true", help="name every picture scored wrong or refused")
    args = parser.parse_args(argv)
    try:
        if args.canvas < 0:
            raise UserError(f"--canvas {args.canvas}: a size in pixels, or 0")
        if args.check_object is not None and not 0 <= args.check_object <= 1.01:  # nan too
            raise UserError(f"--check-object {args.check_object}: a belief from 0 to 1.01 (1.01: none)")
        fusion = FusionSettings()
        if args.check_object is not None:
            fusion = replace(fusion, check_object=args.check_object)
        tally: collections.Counter[str] = collections.Counter()  # right, wrong, refused
        reasons: collections.Counter[str] = collections.Counter()  # why each was refused
        mistakes = []
        for face, path in pictures(args.folder, args.half):
            outcome, said = verdict(on_canvas(load_image(path), args.canvas), face, fusion)
            tally[outcome] += 1
            if outcome == "refused":
                reasons[said] += 1
            if outcome != "right":
                mistakes.append(f"{path.parent.name}/{path.name} {outcome}: a {face}, {said}")
    except UserError as exc:
        print(f"eval_die_crops: {exc}", file=sys.stderr)
        return 2
    total = tally.total()
    print(f"{'canvas':>6} {'half':>5} {'dice':>5} {'right':>7} {'wrong':>5} {'refused':>7}")
    print(f"{args.canvas:>6} {args.half:>5} {total:>5} {100 * tally['right'] / total:>6.1f}% "
          f"{tally['wrong']:>5} {tally['refused']:>7}")
    for reason, n in reasons.most_common():
        print(f"  refused {n}: {reason}")
    if args.list and mistakes:
        print("\n".join(mistakes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
