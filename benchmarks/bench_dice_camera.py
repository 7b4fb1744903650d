"""How long the dice camera takes per frame, here and (estimated) on a Raspberry Pi 4.

    PYTHONPATH=. python3 benchmarks/bench_dice_camera.py [--photos DIR] [--repeat N]

Rows: the settle check (runs on every frame), the dice network alone, the pip reader, both
together (what the table runs) and the threshold-and-count baseline (each run once per
settled throw), on drawn 3-dice trays at two camera sizes and on the
held-out real photos. OpenCV is held to one thread, as the camera loop is one thread.

Coloured dice (blue with white pips on a white tray) are read after calibration's colour
mapping (``vision/look.py``): rows marked "+ colours" are the same readers with the mapping
first, "colour map" the mapping alone; the plain rows on those frames are the readers as they
run for white dice (no mapping), measured in the same run.

The Pi 4 column multiplies by PI4_RATIO = 5: the Pi 4's Cortex-A72 at 1.5 GHz against one
x86-64 server core at about 2.4-3 GHz is about 1.6-2x in clock and 2-2.5x in work per clock
for this kind of code (published single-core scores, e.g. Geekbench, put a Pi 4 at roughly a
fifth of a current desktop core), and OpenCV's 128-bit NEON kernels do half the work per
instruction of the 256-bit AVX2 ones used here. Measure on a Pi to replace the estimate.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bunco_pi.vision.baseline import read_baseline  # noqa: E402
from bunco_pi.vision.dataset import list_photos  # noqa: E402
from bunco_pi.vision.faces import LAYOUTS  # noqa: E402
from bunco_pi.vision.fusion import read_both  # noqa: E402
from bunco_pi.vision.look import DiceLook, to_grey  # noqa: E402
from bunco_pi.vision.net import read_net  # noqa: E402
from bunco_pi.vision.reader import ReaderSettings, read_pips  # noqa: E402
from bunco_pi.vision.settle import SettleDetector, SettleSettings  # noqa: E402

PI4_RATIO = 5.0
FRAME_BUDGET_MS = 1000 / 15  # a 15 fps camera: the settle check must keep up with it


WHITE_DICE = ((70, 70, 70), (225, 230, 232), (25, 25, 30))  # tray, face, pips (BGR)
BLUE_DICE = ((232, 234, 236), (170, 80, 20), (245, 245, 245))  # ... on a white tray
BLUE_LOOK = DiceLook(BLUE_DICE[1], BLUE_DICE[2])


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


def per_frame_ms(work, frames: list[np.ndarray], repeat: int) -> float:
    """Median over ``repeat`` passes of the mean time per frame, in milliseconds."""
    passes = []
    for _ in range(repeat):
        start = time.perf_counter()
        for frame in frames:
            work(frame)
        passes.append((time.perf_counter() - start) / len(frames))
    return 1000 * statistics.median(passes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    beside_repo = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "dice-photos"
    default_photos = os.environ.get("BUNCO_DICE_PHOTOS", str(beside_repo))
    parser.add_argument("--photos", type=Path, default=Path(default_photos))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cv2.setNumThreads(1)

    sets: list[tuple[str, list[np.ndarray], DiceLook | None]] = [
        (f"drawn {w}x{h}", [drawn_tray(w, h, seed) for seed in range(10)], None)
        for w, h in ((640, 480), (1280, 960))
    ]
    sets += [
        (f"blue dice {w}x{h}", [drawn_tray(w, h, seed, BLUE_DICE) for seed in range(10)],
         BLUE_LOOK)
        for w, h in ((640, 480), (1280, 960))
    ]
    if (args.photos / "images").is_dir():
        held_out = list_photos(args.photos, "heldout")
        photos = [cv2.imread(str(p.image_path)) for p in held_out]
        sets.append(("held-out photos 640x480", photos, None))
    else:
        print(f"(no photos at {args.photos}: drawn trays only)")

    detector = SettleDetector()
    rows = []
    for name, frames, look in sets:
        settle = per_frame_ms(detector.feed, frames, args.repeat)
        baseline = per_frame_ms(read_baseline, frames, args.repeat)
        rows.append((name, "settle check", settle, None))
        stages = [("network", read_net), ("pip reader", read_pips), ("both", read_both)]
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
        for stage, read in stages:
            ms = per_frame_ms(read, frames, args.repeat)
            rows.append((name, stage, ms, ms / baseline))
        rows.append((name, "baseline", baseline, 1.0))

    print(f"{'frames':<24} {'stage':<18} {'ms/frame':>9} {'x baseline':>10} {'Pi 4 est.':>10}")
    for name, stage, ms, ratio in rows:
        versus = f"{ratio:.1f}" if ratio is not None else "-"
        print(f"{name:<24} {stage:<18} {ms:>9.2f} {versus:>10} {ms * PI4_RATIO:>9.1f}")
    worst_settle = max(ms for _, stage, ms, _ in rows if stage == "settle check")
    print(
        f"\nPi 4 estimate = this machine x {PI4_RATIO:g}. The settle check runs on every frame:"
        f" {worst_settle * PI4_RATIO:.1f} ms of a {FRAME_BUDGET_MS:.0f} ms frame at 15 fps."
        " The reader runs once per settled throw."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
