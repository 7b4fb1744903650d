"""Start-up: from launching ``bunco-pi table`` to its first OLED frame.

Run from the repository root:  python3 benchmarks/bench_startup.py [--runs 10]

The table is the real command (``bunco-pi table --standalone --simulate``: mock pins, luma's
dummy device, a journal on disk) with ``--frame-file``, so its first frame shows as a file.
The baseline, in the same run and timed the same way, is the raw version of the same work: a
bare interpreter that imports gpiozero and luma, makes mock button pins and a dummy device,
draws a two-line frame and writes it to a file. A third row times building the command's
parser with every subcommand imported, against building it for ``table`` alone.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BARE = """
import sys
from gpiozero import Button
from gpiozero.pins.mock import MockFactory
from luma.core.device import dummy
from luma.core.render import canvas
factory = MockFactory()
buttons = [Button(pin, pin_factory=factory) for pin in (5, 6, 13, 19, 26)]
device = dummy(width=128, height=64, mode="1")
with canvas(device) as draw:
    draw.text((0, 0), "Table 1  Round 1", fill="white")
    draw.text((0, 16), "Ann  3 points", fill="white")
with open(sys.argv[1] + ".tmp", "wb") as out:
    out.write(device.image.tobytes())
import os
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
import time
time.sleep(30)
"""

PARSER = "import sys\nfrom bunco_pi.cli import build_parser\nbuild_parser({only})\n"


def time_to_file(argv: list[str], frame: Path, limit: float = 30.0) -> float:
    """Seconds from launching ``argv`` until ``frame`` exists; the process is then stopped."""
    frame.unlink(missing_ok=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = t0 + limit
        while not frame.exists():
            if time.perf_counter() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{argv[:4]}: no frame in {limit:.0f} s (exit {proc.poll()})")
            time.sleep(0.0005)
        return time.perf_counter() - t0
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def time_run(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, timeout=60)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="launches of each (alternating)")
    args = parser.parse_args()
    command = Path(sys.executable).with_name("bunco-pi")
    if not command.exists():
        print(f"{command}: not found; install the package (pip install -e .) first")
        return 2
    ours: list[float] = []
    bare: list[float] = []
    every: list[float] = []
    one: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        frame = Path(tmp) / "frame.txt"
        for run in range(args.runs + 1):  # the first of each warms the page cache, untimed
            journal = Path(tmp) / f"journal-{run}.db"
            table = [str(command), "table", "--standalone", "--simulate", "--seed", "1",
                     "--journal", os.fspath(journal), "--frame-file", os.fspath(frame)]
            t_ours = time_to_file(table, frame)
            t_bare = time_to_file([sys.executable, "-c", BARE, os.fspath(frame)], frame)
            t_every = time_run([sys.executable, "-c", PARSER.format(only=None)])
            t_one = time_run([sys.executable, "-c", PARSER.format(only='"table"')])
            if run:
                ours.append(t_ours)
                bare.append(t_bare)
                every.append(t_every)
                one.append(t_one)
    ms = 1000.0
    rows = [
        ("launch -> first frame, min (ms)", min(ours) * ms, min(bare) * ms),
        ("launch -> first frame, median (ms)", statistics.median(ours) * ms,
         statistics.median(bare) * ms),
        ("parser of every subcommand vs table's, median (ms)", statistics.median(every) * ms,
         statistics.median(one) * ms),
    ]
    print(f"{'figure':52} {'bunco-pi':>10} {'baseline':>10} {'ratio':>7}")
    print("-" * 82)
    for name, value, base in rows:
        print(f"{name:52} {value:10.1f} {base:10.1f} {value / base:7.2f}")
    print(f"\n{args.runs} launches of each, alternating. Baseline of the first two rows: a bare "
          "interpreter importing\ngpiozero and luma, mock pins for 5 buttons, a dummy device, a "
          "two-line frame written to a file.\nThird row: `build_parser()` (every subcommand "
          "imported, as before) against `build_parser('table')`,\neach in a fresh interpreter.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
