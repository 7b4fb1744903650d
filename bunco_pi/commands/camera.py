"""``bunco-pi dice read | eval | calibrate | watch``: the dice camera's actions.

They hang under ``bunco-pi dice`` (``commands/dice.py``) beside the sensor's ``listen``.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
from collections.abc import Callable
from pathlib import Path

from bunco_pi.errors import UserError

DEFAULT_CALIBRATION = "dice-tray.json"
DATASET_ENV = "BUNCO_DICE_PHOTOS"  # where `dice eval` looks when no folder is given
ROLLING = object()  # `dice watch`: the dice started to tumble
# "both": the pip reader and the network together, then the finder network and the face reader
# look again at every die they left unscored (fusion.read_again): the table's reader; "first":
# the first look alone, without looking again
METHODS = ("both", "first", "pips", "net", "baseline")
OLD_METHODS = {"again": "both"}  # the name "both" had when looking again was not the default
# evaluate.HARDER's names, here so that the command line is built without loading OpenCV
HARDER_KINDS = ("blur", "motion", "dark", "small", "jpeg", "large", "hue", "negative", "grey", "warm", "cold")


def add_actions(actions: argparse._SubParsersAction) -> None:
    """The camera's actions (read, eval, calibrate, watch), to hang under any command."""
    read = actions.add_parser("read", help="print the faces seen in each image")
    read.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    _reader_options(read)
    read.add_argument("--dice", type=int, help="dice in a roll (default: calibration's, 3)")
    read.add_argument(
        "--annotate", type=Path, metavar="DIR", help="also write each image marked up into DIR"
    )
    read.set_defaults(func=run_read)

    evaluate = actions.add_parser("eval", help="measure accuracy on labelled photos")
    evaluate.add_argument(
        "folder",
        nargs="?",
        type=Path,
        metavar="DIR",
        help=f"images/ + labels/ (YOLO) folder (default: ${DATASET_ENV})",
    )
    evaluate.add_argument(
        "--split",
        choices=("heldout", "train", "setaside", "all"),
        help="which photos (default: heldout, the ones never used for tuning or training, in"
        " a folder holding photos the readers learned from; else all; setaside: the fifth of"
        " train the dice network was not trained on)",
    )
    evaluate.add_argument(
        "--harder",
        choices=HARDER_KINDS,
        help="make each photo harder first: blurred, moving, darker, smaller, JPEG-damaged or"
        " scaled to a 12-megapixel phone photo's size; or its"
        " colours changed: the hue turned a third, the negative, grey, under a warm lamp or a cold one",
    )
    _reader_options(evaluate, several=True)
    evaluate.add_argument(
        "--list", action="store_true",
        help="also list every mistake (wrong and sure, not sure, missed, extra): the photo's"
        " file, the die's place, the label's face and what was read")
    evaluate.add_argument(
        "--rolls", action="store_true",
        help="also judge each photo as a table judges a roll: read as a roll of as many dice as it"
        " holds (scored right, scored wrong or refused), and as one of a die fewer (a tray"
        " holding a die too many, which must be refused); photos with an unclear die are left out")
    evaluate.set_defaults(func=run_eval)

    calibrate = actions.add_parser("calibrate", help="set up for a tray from a picture of it empty")
    source = calibrate.add_mutually_exclusive_group()
    source.add_argument("--image", type=Path, help="a photo of the empty tray")
    source.add_argument("--video", help="OpenCV camera number or video (default: Pi camera)")
    calibrate.add_argument(
        "--dice-image", type=Path, metavar="IMAGE",
        help="with --image: a photo of the same view with the dice in the tray (their colours)",
    )
    calibrate.add_argument(
        "--with-dice", action="store_true",
        help="with a camera: then ask for the dice in the tray and take one more picture",
    )
    calibrate.add_argument("--region", help="tray as x,y,w,h in pixels (default: found)")
    calibrate.add_argument("--die-size", type=float, metavar="PX", help="a die's width in pixels")
    calibrate.add_argument("--dice", type=int, default=3, help="dice in a roll (default 3)")
    calibrate.add_argument(
        "--out", type=Path, default=Path(DEFAULT_CALIBRATION), help="where to save"
    )
    calibrate.set_defaults(func=run_calibrate)

    watch = actions.add_parser("watch", help="watch a camera and print each settled roll")
    where = watch.add_mutually_exclusive_group()
    where.add_argument("--video", help="OpenCV camera number, video file or image sequence")
    where.add_argument("--folder", type=Path, help="a folder of photos, each held for --hold")
    watch.add_argument("--hold", type=int, default=8, help="frames per photo with --folder")
    watch.add_argument("--calibration", type=Path, help="settings from 'camera calibrate'")
    watch.add_argument(
        "--learned", type=Path, metavar="FILE",
        help="without calibrated dice colours, what the first sure rolls teach is kept here"
        " (and read from here first); default: learned anew, not kept")
    watch.set_defaults(func=run_watch)


def _reader_options(parser: argparse.ArgumentParser, several: bool = False) -> None:
    if several:
        parser.add_argument(
            "--method",
            default="both",
            help="both, first, pips, net, baseline, or several as 'both,pips,baseline' (default: both)",
        )
    else:
        parser.add_argument("--method", choices=(*METHODS, *OLD_METHODS), default="both")
    parser.add_argument(
        "--calibration",
        type=Path,
        help=f"settings from 'camera calibrate' (default: {DEFAULT_CALIBRATION} if present)",
    )
    parser.add_argument(
        "--learned", type=Path, metavar="FILE",
        help="read with what rolling taught a table (its dice-learned.json): the dice's colours"
        " and tray, where the calibration does not give them")


def _calibration(path: Path | None):
    from bunco_pi.vision.calibration import TrayCalibration, load_calibration

    if path is not None:
        return load_calibration(path)
    default = Path(DEFAULT_CALIBRATION)
    return load_calibration(default) if default.is_file() else TrayCalibration()


def _with_learned(calibration, learned: Path | None):
    """The calibration with what rolling taught (``--learned``), as the table would read."""
    if learned is None:
        return calibration
    from bunco_pi.hardware.camera import load_learned
    from bunco_pi.vision.learn import applied

    if not learned.is_file():
        raise UserError(f"{learned}: no such learned settings file")
    return applied(load_learned(learned), calibration)


def _reader(method: str, calibration, dice: int | None = None) -> Callable:
    from bunco_pi.vision.baseline import read_baseline
    from bunco_pi.vision.fusion import FusionSettings, read_both
    from bunco_pi.vision.net import read_net
    from bunco_pi.vision.reader import read_pips

    settings = calibration.reader_settings()
    method = OLD_METHODS.get(method, method)
    dice = calibration.dice if dice is None else dice
    if method == "both":  # as the table reads it: a roll short of its dice is looked at again
        return lambda frame: read_both(frame, settings, dice=dice)
    if method == "first":
        return lambda frame: read_both(frame, settings, fusion=FusionSettings(again=False), dice=dice)
    if method == "net":
        return lambda frame: read_net(frame, region=settings.region, look=settings.look)
    if method == "pips":
        return lambda frame: read_pips(frame, settings)
    if method == "baseline":
        return lambda frame: read_baseline(frame, settings)
    raise UserError(f"--method: unknown method {method!r} (use {', '.join(METHODS)})")


def run_read(args: argparse.Namespace) -> int:
    import cv2

    from bunco_pi.vision.annotate import annotate
    from bunco_pi.vision.evaluate import load_image
    from bunco_pi.vision.verdict import SettledRoll, judge

    calibration = _with_learned(_calibration(args.calibration), args.learned)
    if args.dice is not None and args.dice < 1:
        raise UserError(f"--dice {args.dice}: a roll has at least 1 die")
    dice = args.dice if args.dice is not None else calibration.dice
    read = _reader(args.method, calibration, dice)  # a roll short of its dice is looked at again
    if args.annotate is not None:
        args.annotate.mkdir(parents=True, exist_ok=True)
    status = 0
    for path in args.images:
        try:
            image = load_image(path)
        except UserError as exc:
            print(f"bunco-pi: {exc}", file=sys.stderr, flush=True)
            status = 2
            continue
        reading = read(image)
        seen = " ".join(
            f"{d.face if d.face else '?'}({d.confidence:.2f})" for d in reading.dice
        ) or "-"
        result = judge(reading, dice, calibration.min_confidence)
        if isinstance(result, SettledRoll):
            verdict = "roll " + " ".join(str(f) for f in result.faces)
        else:
            verdict = f"not sure: {result.reason}"
        print(f"{path}: {seen}  confidence {reading.confidence:.2f}  -> {verdict}")
        if args.annotate is not None:
            marked = annotate(image, reading, calibration.min_confidence)
            cv2.imwrite(str(args.annotate / f"{path.stem}.png"), marked)
    return status


def run_eval(args: argparse.Namespace) -> int:
    from bunco_pi.vision.dataset import default_split, list_photos
    from bunco_pi.vision.evaluate import evaluate, evaluate_rolls

    folder = args.folder
    if folder is None:
        if not os.environ.get(DATASET_ENV):
            raise UserError(f"camera eval: give a folder, or set {DATASET_ENV}")
        folder = Path(os.environ[DATASET_ENV])
    calibration = _with_learned(_calibration(args.calibration), args.learned)
    methods = [m.strip() for m in args.method.split(",") if m.strip()]
    readers = [(m, _reader(m, calibration)) for m in methods]
    everything = list_photos(folder, "all")
    chosen = args.split or default_split(everything)
    photos = everything if chosen == "all" else list_photos(folder, chosen)
    print(f"split {chosen}: {len(photos)} of {len(everything)} photos" + _why(args.split, chosen))
    split = chosen + (f"+{args.harder}" if args.harder else "")
    header = (
        f"{'method':<9} {'split':<14} {'photos':>6} {'dice':>5} {'per-die':>8} "
        f"{'all-right':>9} {'wrong':>6} {'unsure':>6} {'missed':>6} {'invented':>8} {'ms/photo':>8}"
    )
    rows = []
    details = []
    roll_rows = []
    roll_details = []
    for method, read in readers:
        if args.rolls:
            rolls = evaluate_rolls(photos, _roll_reader(method, calibration), calibration.min_confidence,
                                   args.harder or "")
            roll_rows.append(_roll_row(method, split, rolls))
            if args.list:
                roll_details.extend(_roll_mistakes(method, rolls))
        result = evaluate(photos, read, calibration.min_confidence, args.harder or "")
        rows.append(
            f"{method:<9} {split:<14} {len(result.photos):>6} {result.total('dice'):>5} "
            f"{100 * result.die_accuracy:>7.1f}% {100 * result.photo_accuracy:>8.1f}% "
            f"{result.total('wrong'):>6} {result.total('unsure'):>6} {result.total('missed'):>6} "
            f"{result.total('invented'):>8} {1000 * result.seconds / len(result.photos):>8.1f}"
        )
        if args.list:
            details.extend(_mistakes(method, result))
    print(header)
    print("\n".join(rows))
    if args.rolls:
        print(f"\nread as rolls ({ROLLS_HEADER_NOTE}):")
        print(ROLLS_HEADER)
        print("\n".join(roll_rows))
    if args.list:
        print(f"\nevery mistake ({len(details)}), as METHOD: PHOTO (x,y) KIND: label L, read R"
              " (confidence, reason); x,y in the photo's pixels:" if details
              else "\nno mistakes")
        if details:
            print("\n".join(details))
        if args.rolls:
            print(f"\nevery roll scored wrong, then every roll of the photo's own dice refused"
                  f" ({len(roll_details)}), as METHOD: PHOTO roll OUTCOME: what it holds, what it was"
                  " read as, what the table did:"
                  if roll_details else "\nno roll scored wrong, and none of a photo's own dice refused")
            if roll_details:
                print("\n".join(roll_details))
    return 0


def _mistakes(method: str, result) -> list[str]:
    """One line per die read wrong, not sure, missed or made up, worst kind first."""
    from bunco_pi.vision.evaluate import MISTAKES

    lines = []
    for kind in MISTAKES:
        for photo in result.photos:
            for mistake in photo.mistakes:
                if mistake.kind == kind:
                    lines.append(f"{method}: images/{photo.file} {mistake.describe()}")
    return lines


ROLLS_HEADER = (f"{'method':<9} {'split':<14} {'rolls':>6} {'right':>6} {'wrong':>6} {'refused':>7} "
                f"{'of-3':>5} {'3-right':>7} {'one-more':>8} {'scored':>6} {'4-as-3':>6} {'4-scored':>8}")
ROLLS_HEADER_NOTE = ("rolls: photos read as a roll of as many dice as they hold; of-3: those of three"
                     " dice; one-more: photos read as a roll of a die fewer, which a table must refuse;"
                     " scored: wrongly; 4-as-3: those of four dice read as a roll of three, a Bunco"
                     " table's fourth die")


def _roll_reader(method: str, calibration) -> Callable:
    """``read(image, dice)``: the method's reader for a table whose rolls have ``dice`` dice."""
    return lambda frame, dice: _reader(method, calibration, dice)(frame)


def _roll_row(method: str, split: str, rolls) -> str:
    whole = [r for r in rolls if r.dice == r.held]
    fewer = [r for r in rolls if r.dice < r.held]
    three = [r for r in whole if r.held == 3]
    fourth = [r for r in fewer if r.held == 4]

    def count(results, outcome: str) -> int:
        return sum(r.outcome == outcome for r in results)

    return (f"{method:<9} {split:<14} {len(whole):>6} {count(whole, 'right'):>6} {count(whole, 'wrong'):>6} "
            f"{count(whole, 'refused'):>7} {len(three):>5} {count(three, 'right'):>7} {len(fewer):>8} "
            f"{len(fewer) - count(fewer, 'refused'):>6} {len(fourth):>6} "
            f"{len(fourth) - count(fourth, 'refused'):>8}")


def _roll_mistakes(method: str, rolls) -> list[str]:
    """One line per roll scored wrong (a die too many among them), then per roll of as many
    dice as the photo holds refused (a die too many refused is what a table must do)."""
    wrong = [r for r in rolls if r.outcome == "wrong"]
    refused = [r for r in rolls if r.outcome == "refused" and r.dice == r.held]
    return [f"{method}: images/{r.file} roll {r.outcome}: {r.describe()}" for r in wrong + refused]


def _why(asked: str | None, chosen: str) -> str:
    if asked is not None:
        return ""
    if chosen == "heldout":
        return " (the others tuned or trained the readers; --split all reads every one)"
    return " (none of them tuned or trained the readers, so every one is read)"


def _parse_region(text: str, width: int, height: int) -> tuple[float, float, float, float]:
    try:
        x, y, w, h = (float(v) for v in text.split(","))
    except ValueError:
        raise UserError(f"--region: expected x,y,w,h in pixels, got {text!r}") from None
    if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > width or y + h > height:
        raise UserError(f"--region {text}: not inside the {width}x{height} picture")
    return (x / width, y / height, w / width, h / height)


def run_calibrate(args: argparse.Namespace) -> int:
    from bunco_pi.vision.calibration import calibrate, save_calibration
    from bunco_pi.vision.evaluate import load_image

    exposure = None
    dice_frame = None
    if args.dice_image is not None and args.image is None:
        raise UserError("calibrate: --dice-image goes with --image (with a camera: --with-dice)")
    if args.image is not None:
        frames = [load_image(args.image)]
        if args.dice_image is not None:
            dice_frame = load_image(args.dice_image)
    else:
        from bunco_pi.hardware.camera import OpenCVSource, PicameraSource

        camera = OpenCVSource(_video_source(args.video)) if args.video else PicameraSource()
        try:
            frames = [f for f in (camera.read() for _ in range(12)) if f is not None][2:]
            if isinstance(camera, PicameraSource):
                exposure = camera.exposure()
            if args.with_dice and frames:
                input("Put the dice in the tray, apart, then press Enter: ")
                taken = [f for f in (camera.read() for _ in range(6)) if f is not None]
                dice_frame = taken[-1] if taken else None
        finally:
            camera.close()
        if not frames:
            raise UserError("calibrate: the camera gave no pictures")
    height, width = frames[-1].shape[:2]
    region = _parse_region(args.region, width, height) if args.region else None
    result = calibrate(frames, region, args.die_size, exposure, args.dice, dice_frame)
    save_calibration(result.calibration, args.out)
    for note in result.notes:
        print(note)
    print(f"saved {args.out}")
    return 0


def _video_source(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def run_watch(args: argparse.Namespace) -> int:
    from bunco_pi.hardware.camera import (
        CameraDiceSource,
        ImageFolderSource,
        OpenCVSource,
        PicameraSource,
        load_learned,
        save_learned,
    )
    from bunco_pi.vision.learn import LearnedSetup
    from bunco_pi.vision.verdict import SettledRoll, Unsure

    calibration = _calibration(args.calibration)
    if args.folder is not None:
        frames = ImageFolderSource(args.folder, args.hold)
    elif args.video is not None:
        frames = OpenCVSource(_video_source(args.video))
    else:
        frames = PicameraSource(controls=calibration.exposure or None)
    results: queue.Queue = queue.Queue()
    # "rolling" goes through the same queue as the results, so they print in the order they happened.
    learned = load_learned(args.learned) if args.learned is not None else LearnedSetup()

    def keep(setup: LearnedSetup) -> None:
        if args.learned is not None:
            save_learned(setup, args.learned)

    source = CameraDiceSource(frames, results, calibration, on_rolling=lambda: results.put(ROLLING),
                              learned=learned, on_learned=keep)
    if source.learning and source.setup is not None and source.setup.moved:
        print(f"{source.status()}: the camera moved since the tray was learned, the next sure"
              " rolls teach it again", flush=True)
    elif source.learning and source.setup is not None and source.setup.kept is not None:
        print(f"{source.status()}: dice unlike those learned were thrown, the next sure rolls"
              " teach them", flush=True)
    elif source.learning:
        print(f"{source.status()}: no dice colours calibrated, the first sure rolls teach them",
              flush=True)
    source.start()
    try:
        while True:
            try:
                result = results.get(timeout=0.2)
            except queue.Empty:
                if not source.running:
                    break
                continue
            if result is ROLLING:
                print("rolling", flush=True)
            elif isinstance(result, SettledRoll):
                faces = " ".join(str(f) for f in result.faces)
                confidence = f"confidence {result.confidence:.2f}"
                print(f"roll {result.seq}: {faces} ({confidence})", flush=True)
            elif isinstance(result, Unsure):
                print(f"not sure: {result.reason}", flush=True)
            else:
                print("camera back", flush=True)
    finally:
        source.stop()
    return 0
