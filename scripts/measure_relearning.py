"""What a table scores while it learns its tray again after the camera was knocked: with the
dice's colours kept from before the knock, and with them forgotten.

    python3 scripts/render_dice.py renders/throws-ae --start 1700000 --count 40 --kinds roll:1 \\
        --throws 3 --moved
    python3 scripts/measure_relearning.py renders/throws-ae [--list]

For each tray rendered with ``--throws 3 --moved``, the dice's colours are first measured as
learning measures them from a roll (``learn.roll_sample``), on the labelled dice of its first
picture (a tray whose dice give none is left out). Only the colours matter here: both set-ups
below have forgotten the tray. The three throws after the nudge (``-moved``, ``-moved-t2``,
``-moved-t3``) then go through a ``CameraDiceSource`` twice, as they reach a table that has
just seen its camera moved:

- **kept**: as ``learn.moved_camera`` leaves a learned set-up, the colours from before trusted;
- **forgotten**: a set-up learned from nothing (``LearnedSetup(moved=True)``), as the table
  did before the colours were kept.

Each throw is scored (right or wrong: its faces against the labels'; or scored with a die the
labels call unclear, cut by the frame or cocked, whose face they do not give), not scored
(``Unsure``, a re-roll), or unseen (taken for an empty tray). Wrong is what must stay at 0.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.hardware.camera import CameraDiceSource
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.dataset import read_labels
from bunco_pi.vision.evaluate import load_image
from bunco_pi.vision.learn import LearnedSetup, roll_sample
from bunco_pi.vision.look import DiceLook
from bunco_pi.vision.reading import DieReading, FrameReading
from bunco_pi.vision.verdict import SettledRoll, Unsure

IN_PLACE = ("", "-t2", "-t3")
MOVED = ("-moved", "-moved-t2", "-moved-t3")
HOLD = TrayCalibration().settle_frames + 2  # frames per picture: enough to settle


class _NoFrames:
    """The source is fed by hand (``process``): it never reads frames itself."""

    def read(self) -> None:
        return None

    def close(self) -> None:
        pass


def colours_in_place(folder: Path, name: str) -> DiceLook | None:
    """The dice's colours as learning measures them from a roll, on the labelled dice of the
    tray's first picture; None if they are not of one colour."""
    frame = load_image(folder / "images" / f"{name}.jpg")
    height, width = frame.shape[:2]
    labelled = read_labels(folder / "labels" / f"{name}.txt", width, height)
    sample = roll_sample(frame, FrameReading(tuple(
        DieReading(d.face, 1.0, d.center, 0.5 * max(d.size)) for d in labelled)))
    return None if sample is None else DiceLook(sample.face, sample.pip)


def truth(folder: Path, picture: str, frame: np.ndarray) -> tuple[int, ...]:
    """The labelled faces of a picture, sorted (a roll scores by its faces, not their order)."""
    height, width = frame.shape[:2]
    return tuple(sorted(d.face for d in read_labels(folder / "labels" / f"{picture}.txt", width, height)))


def after_the_knock(folder: Path, name: str, setup: LearnedSetup) -> list[tuple[str, str, str]]:
    """Each moved throw through a camera source that starts from ``setup``: (picture, how it
    came out, what was said or read)."""
    source = CameraDiceSource(_NoFrames(), lambda result: None, TrayCalibration(), learned=setup)
    # the tray as it lay before the knock: the first picture the source sees is not read
    frames = [load_image(folder / "images" / f"{name}{IN_PLACE[-1]}.jpg")]
    frames += [load_image(folder / "images" / f"{name}{suffix}.jpg") for suffix in MOVED]
    outcomes = []
    for number, frame in enumerate(frames):
        results = [source.process(frame) for _ in range(HOLD)]
        if number == 0:
            continue
        picture = f"{name}{MOVED[number - 1]}"
        said = [r for r in results if r is not None]
        if not said:
            outcomes.append((picture, "unseen", ""))
        elif isinstance(said[-1], SettledRoll):
            faces, labelled = tuple(sorted(said[-1].faces)), truth(folder, picture, frame)
            # a count unlike the labels': a die they call unclear (cut by the frame, cocked)
            kind = ("unclear die" if len(faces) != len(labelled)
                    else "right" if faces == labelled else "wrong")
            outcomes.append((picture, kind, " ".join(map(str, faces))))
        else:
            assert isinstance(said[-1], Unsure)
            outcomes.append((picture, "not scored", said[-1].reason))
    return outcomes


def trays(folder: Path) -> list[str]:
    names = sorted(p.stem[: -len(MOVED[0])] for p in (folder / "images").glob(f"*{MOVED[0]}.jpg"))
    return [n for n in names if all((folder / "images" / f"{n}{s}.jpg").is_file() for s in IN_PLACE + MOVED)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="renders made with --throws 3 --moved")
    parser.add_argument("--list", action="store_true", help="every throw, as each set-up read it")
    args = parser.parse_args(argv)
    counts: dict[tuple[str, str], Counter[str]] = {}
    left_out = 0
    lines = []
    for folder in args.folders:
        names = trays(folder)
        if not names:
            raise UserError(f"{folder}: no tray rendered with --throws 3 --moved (no *-moved.jpg"
                            " with its other throws)")
        for name in names:
            look = colours_in_place(folder, name)
            if look is None:
                left_out += 1
                continue
            dice = "coloured" if look.coloured else "not coloured"
            for state, setup in (("kept", LearnedSetup(moved=True, kept=look)),
                                 ("forgotten", LearnedSetup(moved=True))):
                for picture, kind, what in after_the_knock(folder, name, setup):
                    counts.setdefault((dice, state), Counter())[kind] += 1
                    lines.append(f"{state}: {picture} ({dice}) {kind}: {what}")
    print(f"trays left out, their dice not of one colour: {left_out}")
    print("| dice | colours | throws | right | wrong | with an unclear die | not scored | unseen |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (dice, state), c in sorted(counts.items()):
        total = sum(c.values())
        print(f"| {dice} | {state} | {total} | {c['right']} | {c['wrong']} | {c['unclear die']} |"
              f" {c['not scored']} | {c['unseen']} |")
    if args.list:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UserError as exc:
        sys.exit(f"measure_relearning: {exc}")
