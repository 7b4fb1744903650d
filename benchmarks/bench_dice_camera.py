"""How long the dice camera takes per frame, here and (estimated) on a Raspberry Pi 4.

    PYTHONPATH=. python3 benchmarks/bench_dice_camera.py [--photos DIR] [--repeat N]

(in the test extra's environment: it counts the networks' arithmetic with onnx.)

Rows: the settle check (runs on every frame), the dice network alone, the pip reader, both
together (the table's reader: the pip reader and the network, the face reader's check of the
dice they scored ("both, no side check": without it), then the finder network and the
face reader looking again at the dice left unscored; "first look": without looking again, the
reader a calibration can choose; "both, as before": the first look with the pip reader
searching the whole tray and no second look by the network, as ``read_both`` was) and the
threshold-and-count baseline (each run once per settled throw), and the
**settled frame**: what the table does with the frame the dice came to rest in (the settle
check's last look at it, both readers, the verdict), which must take at most 100 ms on a Pi 4.
"settled, width known" is the same with a die width in the calibration (the drawn dice's;
for the photos, which mix set-ups, the set's median labelled width), which spares the finder
its look at half the scale where the dice are small enough (``fusion.dice_may_be_big``).
"learning a roll" is the same frame while the set-up is still learned by rolling
(``vision/learn.py``: both readers under up to three colour guesses), which only the first
few throws of a new tray pay; "learning again" (dice of known colours only) is a frame while
the tray is learned again after a camera move, the dice's colours kept and tried first
(``learn.moved_camera``), a throw both readers are not sure of read by the table's reader in
those colours, twice; "learning new dice" the same after throws of another set
(``learn.other_dice``), the colours kept another set's (red dice's, for the blue): the kept
colours' try fails, then learning's own tries, then the table's reader. Frames: drawn 3-dice
trays at two camera sizes, the held-out real photos, and real phone photos of coloured dice
when they are beside the repository: a spread of them all (0 to 84 dice a photo, 6 on
average; the five read with ``--count 5`` hold 1 to 9), and those of exactly three dice, a
roll's count, which is what a table's camera sees. The summary gives the worst settled
frame of a roll of three (the drawn trays and the coloured photos of three dice), and of any
set.
OpenCV is held to one thread, as the camera loop is one thread. Last, each settled frame's
arithmetic is given per network (its runs and multiply-adds a frame): which network to make
smaller next.

Every reader is called through its public function (``read_pips``, ``read_net``,
``read_both``, ``study``), never through the network's runtime, so the figures stay
comparable whatever runs the network.

Coloured dice (blue with white pips on a white tray) are read after the colour mapping
(``vision/look.py``): rows marked "+ colours" are the same readers with the mapping first,
"colour map" the mapping alone; the plain rows on those frames are the readers as they run
for white dice (no mapping), measured in the same run.

The Pi 4 column is an estimate in two parts. The networks' part is their arithmetic: every
run onnxruntime makes is counted (``network_arithmetic.NetworkRuns``: the "networks" column is
their time here, "M mult-add" their multiply-adds a frame), at the rate two of a Pi 4's
Cortex-A72 cores can do them, 6 G a second (that module's docstring says why); the summary
gives the least too, at the cores' peak. The rest of the time here, the pip reader's and the
image work's, is multiplied by PI4_RATIO = 5: published single-core scores (Geekbench 5) put
a Raspberry Pi 4 Model B (1.5 GHz, 64-bit Raspberry Pi OS) at about 250 and a current x86-64
server core at about 1,000 to 1,250, 4 to 5 times, and the upper end is taken. Until
2026-12 the networks' time was multiplied by 5 too; but this machine's cores do 16 float
multiply-adds an instruction (AVX-512), up to 32 a cycle, to an A72's 4, and onnxruntime keeps
them busy: a 320x240 look of the dice network, 0.6 G multiply-adds, takes about 4 ms here
on two threads and about 100 ms on a Pi 4, not 20. Neither part is a measurement: run this
script on a Pi to replace them (``--repeat 2`` is enough).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.network_arithmetic import (  # noqa: E402
    PI4_MULTIPLY_ADDS_PER_S,
    PI4_PEAK_MULTIPLY_ADDS_PER_S,
    NetworkRuns,
    pi4_estimate_ms,
)
from bunco_pi.vision.baseline import read_baseline  # noqa: E402
from bunco_pi.vision.calibration import TrayCalibration  # noqa: E402
from bunco_pi.vision.dataset import LabelledPhoto, list_photos, read_labels  # noqa: E402
from bunco_pi.vision.face_reader import shipped_face_reader  # noqa: E402
from bunco_pi.vision.faces import LAYOUTS  # noqa: E402
from bunco_pi.vision.fusion import FusionSettings, first_readings, read_both  # noqa: E402
from bunco_pi.vision.learn import FULL_FRAME, LearnedSetup, applied, moved_camera, study  # noqa: E402
from bunco_pi.vision.look import DiceLook, to_grey  # noqa: E402
from bunco_pi.vision.net import detect, read_net, shipped_finder, shipped_net  # noqa: E402
from bunco_pi.vision.reader import ReaderSettings, read_pips  # noqa: E402
from bunco_pi.vision.settle import SettleDetector, SettleSettings  # noqa: E402
from bunco_pi.vision.tray_view import compare, take_view  # noqa: E402
from bunco_pi.vision.verdict import judge  # noqa: E402

# The readers as they were before the pip reader looked only round the network's dice and
# the network read each die twice: the row beside "both", in the same run.
WHOLE_TRAY = FusionSettings(pips_near_net=False, second_look=False, again=False)
# The reader "first": both without the finder and the face reader looking again.
FIRST_LOOK = FusionSettings(again=False)
# The table's reader without the face reader's check of the dice the first look scored.
UNCHECKED = FusionSettings(check=1.01, check_object=1.01)
PI4_RATIO = 5.0  # all but the networks: see the module's docstring (published single-core ratios)
FRAME_BUDGET_MS = 1000 / 15  # a 15 fps camera: the settle check must keep up with it
SETTLED_BUDGET_MS = 100.0  # a settled frame read on a Pi 4 (the target)
TRAY_DICE = TrayCalibration().dice  # a roll's dice, as a table counts them
READER_WIDTH = ReaderSettings().working_width  # the pip reader's width; a die_width is given at it


WHITE_DICE = ((70, 70, 70), (225, 230, 232), (25, 25, 30))  # tray, face, pips (BGR)
BLUE_DICE = ((232, 234, 236), (170, 80, 20), (245, 245, 245))  # ... on a white tray
BLUE_LOOK = DiceLook(BLUE_DICE[1], BLUE_DICE[2])
RED_LOOK = DiceLook((40, 30, 190), (245, 245, 245))  # another set's, kept while the blue are learned


def drawn_tray(
    width: int, height: int, seed: int, colours: tuple = WHITE_DICE
) -> np.ndarray:
    """Three dice on a tray (white on dark by default), sized to the frame like a camera's."""
    tray, face, pips = colours
    rng = np.random.default_rng(seed)
    image = np.empty((height, width, 3), np.uint8)
    image[:] = tray
    die = width // 11
    for k in range(3):
        x, y = (k + 1) * width // 4, height // 2 + int(rng.integers(-height // 5, height // 5))
        cv2.rectangle(image, (x - die // 2, y - die // 2), (x + die // 2, y + die // 2),
                      face, -1)
        for u, v in LAYOUTS[int(rng.integers(1, 7))]:
            cv2.circle(image, (int(x + 0.27 * die * u), int(y + 0.27 * die * v)),
                       max(2, int(0.09 * die)), pips, -1, cv2.LINE_AA)
    return image


def labelled_width(photos: list[LabelledPhoto], frames: list[np.ndarray]) -> float:
    """The median width of the photos' labelled dice, in pixels at the reader's working width."""
    widths = []
    for photo, frame in zip(photos, frames, strict=True):
        height, width = frame.shape[:2]
        widths += [die.size[0] * READER_WIDTH / width for die in read_labels(photo.label_path, width, height)]
    return float(np.median(widths))


def labelled_dice(photo: LabelledPhoto) -> int:
    """How many dice a photo's label file lists (the size is only for the boxes' pixels)."""
    return len(read_labels(photo.label_path, 1, 1))


@dataclass(frozen=True)
class Timing:
    """A stage's time a frame here, and of it the networks': their time and arithmetic."""

    ms: float
    network_ms: float = 0.0
    multiply_adds: float = 0.0
    # each network's (model file's) runs and multiply-adds a frame, the most arithmetic first
    networks: tuple[tuple[str, float, float], ...] = ()

    def pi4_ms(self, rate: float = PI4_MULTIPLY_ADDS_PER_S) -> float:
        """The Pi 4 estimate: the rest x PI4_RATIO, the networks' arithmetic at ``rate``."""
        return pi4_estimate_ms(self.ms, self.network_ms, self.multiply_adds, PI4_RATIO, rate)


def per_frame(work: Callable[[np.ndarray], object], frames: list[np.ndarray], repeat: int,
              runs: NetworkRuns) -> Timing:
    """The median over ``repeat`` passes (of an even number, the mean of the middle two) of the
    mean time per frame, in milliseconds, with the networks' time and multiply-adds a frame in
    the same passes (``runs`` counts every run). The first frame is read once before any pass,
    untimed: a stage's first call builds what it keeps (a colour map's table), which a table
    builds once as it starts, and with one or two passes the median would time it as a frame's."""
    work(frames[0])
    passes = []
    for _ in range(repeat):
        runs.reset()
        start = time.perf_counter()
        for frame in frames:
            work(frame)
        seconds = time.perf_counter() - start
        networks = tuple(sorted(((name, n / len(frames), done / len(frames))
                                 for name, (n, done) in runs.by_network.items()),
                                key=lambda network: -network[2]))
        passes.append(Timing(1000 * seconds / len(frames), 1000 * runs.seconds / len(frames),
                             runs.multiply_adds / len(frames), networks))
    passes.sort(key=lambda timing: timing.ms)
    middle = passes[(len(passes) - 1) // 2 : len(passes) // 2 + 1]
    # every pass runs the same networks on the same frames: the arithmetic is the same in each
    return Timing(statistics.mean(t.ms for t in middle), statistics.mean(t.network_ms for t in middle),
                  statistics.mean(t.multiply_adds for t in middle), middle[0].networks)


def settled_frame(calibration: TrayCalibration):
    """What the table does with the frame the dice settled in: look, read with both, judge."""
    detector = SettleDetector(calibration.settle_settings())
    settings = calibration.reader_settings()

    def work(frame: np.ndarray) -> None:
        detector.feed(frame)
        judge(read_both(frame, settings, dice=calibration.dice), calibration.dice, calibration.min_confidence)

    return work


def learning_roll(frame: np.ndarray) -> None:
    """A settled frame while the set-up is learned by rolling: no calibration, nothing learned;
    a throw both readers are not sure of is read by the table's reader too, as the table does."""
    calibration = TrayCalibration()
    outcome = study(frame, LearnedSetup(), calibration, first_readings)
    if outcome.reading is None:
        read_both(frame, calibration.reader_settings(), dice=calibration.dice)


def learning_again(setup: LearnedSetup) -> Callable[[np.ndarray], None]:
    """A settled frame while the set-up is learned again with colours kept (``setup.kept``:
    after a camera move, or another set of dice); a throw both readers are not sure of is read
    by the table's reader in those colours, as ``CameraDiceSource`` does."""
    calibration = TrayCalibration()
    kept = applied(setup, calibration)

    def work(frame: np.ndarray) -> None:
        outcome = study(frame, setup, calibration, first_readings)
        if outcome.reading is None:
            read_both(frame, kept.reader_settings(), dice=kept.dice)

    return work


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    beside_repo = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "dice-photos"
    default_photos = os.environ.get("BUNCO_DICE_PHOTOS", str(beside_repo))
    parser.add_argument("--photos", type=Path, default=Path(default_photos))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--count", type=int, default=10, help="frames per set (default 10)")
    args = parser.parse_args()
    try:
        import onnx  # noqa: F401  (the networks' multiply-adds are counted from their graphs)
    except ImportError:
        print("bench_dice_camera: needs onnx to count the networks' arithmetic: pip install -e '.[test]'",
              file=sys.stderr)
        return 2
    cv2.setNumThreads(1)

    count = max(1, args.count)
    sets: list[tuple[str, list[np.ndarray], DiceLook | None]] = [
        (f"drawn {w}x{h}", [drawn_tray(w, h, seed) for seed in range(count)], None)
        for w, h in ((640, 480), (1280, 960))
    ]
    sets += [
        (f"blue dice {w}x{h}", [drawn_tray(w, h, seed, BLUE_DICE) for seed in range(count)],
         BLUE_LOOK)
        for w, h in ((640, 480), (1280, 960))
    ]
    # A die width in the calibration (pixels at the reader's 640): the drawn dice are a frame's
    # eleventh; for the photos, which mix set-ups, the set's median labelled box width (a
    # calibration measures a die's side, up to 1.4 times narrower for a die turned).
    widths = {name: READER_WIDTH // 11 for name, _, _ in sets}
    # the tray the dice were picked up from: it settles too, and no die seen is looked at again
    sets.append(("empty tray 640x480", [np.full((480, 640, 3), WHITE_DICE[0], np.uint8)] * count, None))
    if (args.photos / "images").is_dir():
        held_out = list_photos(args.photos, "heldout")[:count]
        photos = [cv2.imread(str(p.image_path)) for p in held_out]
        sets.append(("held-out photos 640x480", photos, None))
        widths["held-out photos 640x480"] = labelled_width(held_out, photos)
    else:
        print(f"(no photos at {args.photos}: drawn trays only)")
    mixed = args.photos.parent / "dice-photos-mixed"
    if (mixed / "images").is_dir():
        everything = list_photos(mixed, "all")
        chosen = everything[:: max(1, 289 // count)][:count]
        sets.append(("coloured photos 512x384", [cv2.imread(str(p.image_path)) for p in chosen],
                     None))
        # a table's tray: the photos of three coloured dice (a roll's count; 30 of the 289)
        trays = [p for p in everything if labelled_dice(p) == TRAY_DICE]
        chosen = trays[:: max(1, len(trays) // count)][:count]
        if chosen:
            three = [cv2.imread(str(p.image_path)) for p in chosen]
            sets.append(("coloured, 3 dice", three, None))
            widths["coloured, 3 dice"] = labelled_width(chosen, three)
    # the sets whose every frame is a roll of three dice, as a table's tray holds
    rolls = {name for name, _, _ in sets if name.startswith(("drawn", "blue dice", "coloured, 3"))}

    for load in (shipped_net, shipped_finder, shipped_face_reader):
        load()  # once, before timing, as the table loads them when it starts
    detector = SettleDetector()
    rows: list[tuple[str, str, Timing, float | None]] = []
    with NetworkRuns() as runs:
        for name, frames, look in sets:
            settle = per_frame(detector.feed, frames, args.repeat, runs)
            baseline = per_frame(read_baseline, frames, args.repeat, runs)
            rows.append((name, "settle check", settle, None))
            # the network's finding alone, at one scale and with its look at half the scale
            # (``net.detect``'s ``zoom_out``), side by side: what finding large dice costs
            stages = [("finding, 1 scale", lambda frame: detect(frame, zoom_out=False)),
                      ("finding, 2 scales", lambda frame: detect(frame, zoom_out=True)),
                      ("network", read_net), ("pip reader", read_pips), ("both", read_both),
                      ("both, no side check", lambda frame: read_both(frame, fusion=UNCHECKED)),
                      ("first look", lambda frame: read_both(frame, fusion=FIRST_LOOK)),
                      ("both, as before", lambda frame: read_both(frame, fusion=WHOLE_TRAY))]
            if look is not None:
                settings = ReaderSettings(look=look)
                coloured = SettleDetector(SettleSettings(look=look))
                stages += [
                    ("settle + colours", coloured.feed),
                    ("colour map", lambda frame, look=look: to_grey(frame, look)),
                    ("network + colours", lambda frame, look=look: read_net(frame, look=look)),
                    ("pips + colours", lambda frame, s=settings: read_pips(frame, s)),
                    ("both + colours", lambda frame, s=settings: read_both(frame, s)),
                ]
            calibration = TrayCalibration() if look is None else TrayCalibration(
                dice_colour=look.face, pip_colour=look.pip)
            stages += [("settled frame", settled_frame(calibration))]
            if name in widths:  # the finder's look at half the scale spared (fusion.dice_may_be_big)
                known = replace(calibration, die_width=widths[name])
                stages += [("settled, width known", settled_frame(known))]
            stages += [("learning a roll", learning_roll)]
            if look is not None:
                stages += [("learning again", learning_again(moved_camera(
                               LearnedSetup(face=look.face, pip=look.pip)))),
                           ("learning new dice", learning_again(LearnedSetup(kept=RED_LOOK)))]
            # after a throw, off the result's path: has the camera moved since the tray was
            # learned? (vision/tray_view.py; the set's first frame as the learned view: the
            # drawn sets' other frames are the same tray, the photos' are other places)
            view = take_view(frames[0], ())
            width = widths.get(name, READER_WIDTH // 11) / READER_WIDTH
            stages += [("camera moved? check",
                        lambda frame, view=view, width=width: compare(view, frame, (), FULL_FRAME, width))]
            for stage, read in stages:
                timing = per_frame(read, frames, args.repeat, runs)
                rows.append((name, stage, timing, timing.ms / baseline.ms))
            rows.append((name, "baseline", baseline, 1.0))

    print(f"{'frames':<24} {'stage':<20} {'ms/frame':>9} {'x baseline':>10} {'networks':>9}"
          f" {'M mult-add':>10} {'Pi 4 est.':>10}")
    for name, stage, timing, ratio in rows:
        versus = f"{ratio:.1f}" if ratio is not None else "-"
        print(f"{name:<24} {stage:<20} {timing.ms:>9.2f} {versus:>10} {timing.network_ms:>9.2f}"
              f" {timing.multiply_adds / 1e6:>10.0f} {timing.pi4_ms():>10.1f}")
    print("\nWhere a settled frame's arithmetic goes: each network's runs and M multiply-adds a frame")
    for name, stage, timing, _ in rows:
        if stage in ("settled frame", "settled, width known"):
            print(f"{name:<24} {stage:<20} " + ", ".join(f"{model} {n:.1f} x, {done / 1e6:.0f} M"
                                             for model, n, done in timing.networks))
    # a table of known colours pays "settle + colours" (plain grey and the mapped grey) instead
    worst_settle = max(timing.pi4_ms() for _, stage, timing, _ in rows
                       if stage in ("settle check", "settle + colours"))
    settled = [row for row in rows if row[1] == "settled frame"]
    worst_settled = max(settled, key=lambda row: row[2].pi4_ms())
    worst_tray = max((row for row in settled if row[0] in rolls), key=lambda row: row[2].pi4_ms())
    worst_learning = max(timing.pi4_ms() for _, stage, timing, _ in rows
                         if stage.startswith("learning"))

    def verdict(row: tuple) -> str:
        timing = row[2]
        ms = timing.pi4_ms()
        within = "within" if ms <= SETTLED_BUDGET_MS else "OVER"
        peak = timing.pi4_ms(PI4_PEAK_MULTIPLY_ADDS_PER_S)
        return (f"about {ms:.0f} ms on a Pi 4 ({row[0]}: {timing.multiply_adds / 1e6:.0f} M multiply-adds;"
                f" {peak:.0f} ms with the networks at two A72 cores' peak),"
                f" {within} the {SETTLED_BUDGET_MS:.0f} ms target")

    print(
        f"\nPi 4 estimate = the time here outside the networks x {PI4_RATIO:g}, and the networks'"
        f" multiply-adds at {PI4_MULTIPLY_ADDS_PER_S / 1e9:g} G a second (estimates; see the docstrings)."
        f"\nA settled frame of a roll of {TRAY_DICE}: {verdict(worst_tray)}."
        f"\nA settled frame of any set: {verdict(worst_settled)}."
        f"\nThe settle check runs on every frame: {worst_settle:.1f} ms of a"
        f" {FRAME_BUDGET_MS:.0f} ms frame at 15 fps."
        f"\nWhile the set-up is learned, a roll takes up to {worst_learning:.0f} ms"
        " on a Pi 4 (the first few throws of a new tray, or of new dice, only)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
