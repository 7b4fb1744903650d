"""Dice of known colours read three ways: in their own colours, in the grey they map to, and both.

    python3 scripts/measure_known_colours.py renders/heldout-ae renders/throws-ae \\
        renders/roll-dev-ae ../shared/datasets/dice-photos-mixed [--list]

A table that knows its dice's colours (calibrated, or learned by rolling) once read each
settled frame only in the grey picture those colours map to (``look.to_grey``), made for the
pip reader; ``fusion.read_both`` now reads it in the frame's own colours too and makes the two
one (``fusion.in_both_pictures``: the roll of either, against the other's disputes, the mapped
grey's refusals and a die more the own colours saw).

For every picture of the folders given (``images/`` + ``labels/``: renders or labelled
photos) whose labelled dice are of one colour, those colours are measured as learning
measures them from a roll (``learn.roll_sample``, on the labelled dice), and the picture is
read with them, as a roll of as many dice as are labelled, three ways (five with
``--another-set``, below):

- **own colours**: as dice of unknown colours (``fusion.read_picture`` with no look);
- **mapped grey**: in the grey the colours map to alone, as the table read them before;
- **both**: the two together, as ``read_both`` reads them now.

With ``--drawn``, the drawn trays of ``tests/test_dice_colours.py`` too: its eight sets of
dice and trays, 34 throws each, calibrated as the test calibrates them.

With ``--another-set``, two more ways. A fourth: **another set's colours**, both readings under the
colours of another picture's dice, as a box that learned one group's dice reads another
group's: the first of the pictures 7, 14, 21 ... on (wrapping round) whose dice are not white
with dark pips (those are read once, in plain grey: the own colours by another name) and
whose face is more than twice ``learn.AGREE`` from these. And a fifth: **learning,
another set's kept**, what a table scores while it learns those dice, the other set's colours
kept (``learn.other_dice``): what both readers are sure of in the colours kept, or else what
the table's reader reads sure in them (``CameraDiceSource`` reads so while learning).

With ``--cost``, the networks' multiply-adds of each picture's "both" reading are counted
too (``benchmarks/network_arithmetic.py``, which needs onnx: the test extra), and their mean,
median and largest printed by kind of dice: the arithmetic a settled frame of such a table
pays, on pictures of many set-ups rather than the benchmark's drawn blue dice.

Dice measured white with dark pips are read once, in plain grey, as before: they are only
counted. A roll is right when every die is read sure with the labels' faces, wrong when it
would be scored with other faces, and not scored otherwise (a re-roll).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from bunco_pi.errors import UserError
from bunco_pi.vision.calibration import TrayCalibration
from bunco_pi.vision.dataset import list_photos, read_labels
from bunco_pi.vision.evaluate import load_image
from bunco_pi.vision.fusion import first_readings, read_both, read_picture
from bunco_pi.vision.learn import AGREE, LearnedSetup, applied, colour_distance, roll_sample, study
from bunco_pi.vision.reading import DieReading, FrameReading
from bunco_pi.vision.verdict import SettledRoll, judge

WAYS = ("own colours", "mapped grey", "both", "another set's colours", "learning, another set's kept")


def outcome(reading: FrameReading, truth: tuple[int, ...], min_confidence: float) -> str:
    result = judge(reading, len(truth), min_confidence)
    if not isinstance(result, SettledRoll):
        return "not scored"
    return "right" if tuple(sorted(result.faces)) == truth else "wrong"


def another_set(calibrations: list[TrayCalibration], index: int) -> TrayCalibration | None:
    """Another picture's dice colours for picture ``index``: the first of those 7, 14, 21 ...
    on, wrapping round, not white with dark pips and more than twice ``AGREE`` from its own
    face (None if none is)."""
    own = calibrations[index].dice_colour
    assert own is not None
    for step in range(1, len(calibrations)):
        other = calibrations[(index + 7 * step) % len(calibrations)]
        look = other.look
        if (look is not None and not look.plain_grey and other.dice_colour is not None
                and colour_distance(other.dice_colour, own) > 2 * AGREE):
            return other
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, help="images/ + labels/ folders")
    parser.add_argument("--drawn", action="store_true", help="the drawn trays' test sets too")
    parser.add_argument("--list", action="store_true", help="every picture read, each way")
    parser.add_argument("--another-set", action="store_true",
                        help="read each picture under another picture's dice colours too")
    parser.add_argument("--cost", action="store_true",
                        help="count the networks' multiply-adds of each 'both' reading")
    args = parser.parse_args(argv)
    counts: dict[tuple[str, str, str], Counter[str]] = {}
    plain_grey: Counter[str] = Counter()
    mixed: Counter[str] = Counter()
    costs: dict[str, list[float]] = {}
    counting: contextlib.AbstractContextManager = contextlib.nullcontext()
    if args.cost:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
        from network_arithmetic import NetworkRuns

        counting = NetworkRuns()
    lines = []
    if not args.folders and not args.drawn:
        parser.error("give folders of pictures, or --drawn")

    def read(where: str, name: str, frame: np.ndarray, calibration: TrayCalibration,
             truth: tuple[int, ...], another: TrayCalibration | None = None) -> None:
        look = calibration.look
        assert look is not None
        if look.plain_grey:
            plain_grey[where] += 1
            return
        kind = "coloured" if look.coloured else "grey, light pips"
        settings = calibration.reader_settings()
        dice = len(truth)
        own = read_picture(frame, replace(settings, look=None), dice=dice)
        mapped = read_picture(frame, settings, dice=dice)
        if runs is not None:
            runs.reset()
        readings = [own, mapped, read_both(frame, settings, dice=dice)]
        if runs is not None:
            costs.setdefault(kind, []).append(runs.multiply_adds / 1e6)
        if another is not None:
            readings.append(read_both(frame, another.reader_settings(), dice=dice))
            fresh = TrayCalibration(dice=dice)
            setup = LearnedSetup(kept=another.look)
            tried = study(frame, setup, fresh, first_readings).reading
            readings.append(tried if tried is not None else
                            read_both(frame, applied(setup, fresh).reader_settings(), dice=dice))
        said = []
        for way, reading in zip(WAYS[:len(readings)], readings, strict=True):
            kind_of = outcome(reading, truth, settings.min_confidence)
            counts.setdefault((where, kind, way), Counter())[kind_of] += 1
            said.append(f"{way} {kind_of}")
        lines.append(f"{where}/{name} ({kind}, {dice} dice): " + ", ".join(said))

    with counting as runs:
        pictures = []
        for folder in args.folders:
            for photo in list_photos(folder, "all"):
                frame = load_image(photo.image_path)
                height, width = frame.shape[:2]
                labelled = read_labels(photo.label_path, width, height)
                sample = roll_sample(frame, FrameReading(tuple(
                    DieReading(d.face, 1.0, d.center, 0.5 * max(d.size)) for d in labelled)))
                if sample is None:
                    mixed[folder.name] += 1  # no dice, or dice of several colours: no one look
                    continue
                calibration = TrayCalibration(dice_colour=sample.face, pip_colour=sample.pip)
                pictures.append((folder.name, photo.name, frame, calibration,
                                 tuple(sorted(d.face for d in labelled))))
        for index, (where, name, frame, calibration, truth) in enumerate(pictures):
            read(where, name, frame, calibration, truth,
                 another_set([p[3] for p in pictures], index) if args.another_set else None)
        if args.drawn:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
            from drawn_dice import draw_scene, scattered
            from test_dice_colours import SETS, THROWS, calibrated

            calibrations = [calibrated(scene, seed=3100) for scene in SETS.values()]  # as the test does
            for index, (name, scene) in enumerate(SETS.items()):
                another = another_set(calibrations, index) if args.another_set else None
                rng = np.random.default_rng(4200)
                for throw in range(THROWS):
                    truth = scattered(rng, die=scene.get("die", 56))
                    frame = draw_scene(truth, seed=5000 + throw, **scene)
                    read("drawn", f"{name} {throw}", frame, calibrations[index],
                         tuple(sorted(t[0] for t in truth)), another)

    print("| pictures | dice | read | rolls | right | wrong | not scored |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (folder, kind, way), c in sorted(counts.items(), key=lambda i: (*i[0][:2], WAYS.index(i[0][2]))):
        total = sum(c.values())
        print(f"| {folder} | {kind} | {way} | {total} | {c['right']} ({100 * c['right'] / total:.1f}%) |"
              f" {c['wrong']} | {c['not scored']} |")
    for folder in dict.fromkeys([f.name for f in args.folders] + (["drawn"] if args.drawn else [])):
        print(f"{folder}: {plain_grey[folder]} pictures of white dice with dark pips (read once, as"
              f" before), {mixed[folder]} of dice of several colours or none (left out)")
    for kind, made in costs.items():
        print(f"{kind}: {len(made)} pictures, M multiply-adds a 'both' reading: mean {np.mean(made):.0f},"
              f" median {np.median(made):.0f}, largest {max(made):.0f}")
    if args.list:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UserError as exc:
        sys.exit(f"measure_known_colours: {exc}")
