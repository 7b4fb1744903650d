"""Drawing the table screens with names in other scripts: what the box font costs.

Run from the repository root:  python3 benchmarks/bench_screens.py [--frames 200]

For each script of ``bunco_pi.table.gallery.NAME_SCRIPTS``, every screen that shows a name is
drawn ``--frames`` times with the caches warm, as a box draws after each press; the baseline,
side by side, draws the same screens with Latin names ("Ann", "Bea"...), which need only
Pillow's small font. A second table, each in a fresh interpreter, is the one-time cost: the
first frame with a Cyrillic name (Unifont opened) against the first frame with Latin names,
and the process's peak RSS after each.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIRST = """
import resource, time
t0 = time.perf_counter()
from bunco_pi.table.gallery import name_views
from bunco_pi.table.screens import render
t1 = time.perf_counter()
for view in name_views({names!r}).values():
    render(view)
t2 = time.perf_counter()
print((t2 - t1) * 1000, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def per_frame(names: tuple[str, str, str, str], frames: int) -> float:
    from bunco_pi.table.gallery import name_views
    from bunco_pi.table.screens import render

    views = list(name_views(names).values())
    for view in views:
        render(view)  # warm: fonts open, glyphs cached
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        for i in range(frames):
            render(views[i % len(views)])
        runs.append((time.perf_counter() - t0) / frames * 1000)
    return statistics.median(runs)


def first_frames(names: tuple[str, str, str, str]) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", FIRST.format(names=names)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200)
    args = parser.parse_args()
    from bunco_pi.table.boxfont import has_unifont
    from bunco_pi.table.gallery import NAME_SCRIPTS

    latin = ("Ann", "Bea", "Cat", "Dot")
    base = per_frame(latin, args.frames)
    print(f"Unifont installed: {has_unifont()}; {args.frames} frames a run, median of 3\n")
    print(f"{'names':<16}{'ms a frame':>12}{'Latin names':>13}{'ratio':>8}")
    print(f"{'latin':<16}{base:>12.3f}{base:>13.3f}{1.0:>8.2f}")
    for script, names in NAME_SCRIPTS.items():
        ms = per_frame(names, args.frames)
        print(f"{script:<16}{ms:>12.3f}{base:>13.3f}{ms / base:>8.2f}")
    print(f"\n{'first frames, fresh process':<30}{'ms':>8}{'peak RSS MiB':>14}")
    for label, names in (("Latin names", latin), ("Cyrillic names", NAME_SCRIPTS["cyrillic"])):
        ms, rss = first_frames(names)
        print(f"{label:<30}{ms:>8.1f}{rss:>14.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
