"""Start-up: from launching ``bunco-pi table`` to its first OLED frame.

Run from the repository root:  python3 benchmarks/bench_startup.py [--runs 10]

The table is the real command with mock pins, luma's dummy device and ``--frame-file``, so its
frames show as a file: standalone (``--standalone --simulate``, a journal on disk), and as a box
of a night run by a head (``--broker`` at a port where no broker answers yet, as when the box
boots before the head: an outbox on disk, the MQTT client started). Each is timed to three
frames: the first (the box's seats and "starting...", drawn from its config before the game is
loaded), the game's first screen (the box ready for a press), and for the networked box the
screen once its link is open (it then says "offline").
The baseline, in the same run and timed the same way, is the raw version of the same work: a
bare interpreter that imports gpiozero and luma, makes mock button pins and a dummy device,
draws a two-line frame and writes it to a file. A last row times building the command's
parser with every subcommand imported, against building it for ``table`` alone.

Every process runs from bytecode, as on an installed box (pip compiles the package when it
installs it): the warm-up run writes the bytecode even where the environment says not to.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
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


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def time_to_file(argv: list[str], frame: Path, limit: float = 30.0,
                 frames: int = 1) -> list[float]:
    """Seconds from launching ``argv`` until ``frame`` is written, for each of the first
    ``frames`` writes (each is a new file renamed over it); the process is then stopped."""
    frame.unlink(missing_ok=True)
    times: list[float] = []
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=ENV)
    try:
        deadline = t0 + limit
        seen = None
        while len(times) < frames:
            if time.perf_counter() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{argv[:4]}: {len(times)} frames in {limit:.0f} s "
                                   f"(exit {proc.poll()})")
            inode = _inode(frame)
            if inode is not None and inode != seen:
                times.append(time.perf_counter() - t0)
                seen = inode
            else:
                time.sleep(0.0005)
        return times
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def free_port() -> int:
    """A loopback port where nothing listens (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def time_run(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, timeout=60, env=ENV)
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
    ours_game: list[float] = []
    net_first: list[float] = []
    net_game: list[float] = []
    net_open: list[float] = []
    bare: list[float] = []
    every: list[float] = []
    one: list[float] = []
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.fspath(ROOT / "bunco_pi")],
                   check=True, stdout=subprocess.DEVNULL, env=ENV)
    with tempfile.TemporaryDirectory() as tmp:
        frame = Path(tmp) / "frame.txt"
        credentials = Path(tmp) / "credentials.json"
        credentials.write_text(json.dumps({"users": {"table-1": secrets.token_urlsafe(16)}}))
        for run in range(args.runs + 1):  # the first of each warms the page cache, untimed
            journal = Path(tmp) / f"journal-{run}.db"
            table = [str(command), "table", "--standalone", "--simulate", "--seed", "1",
                     "--journal", os.fspath(journal), "--frame-file", os.fspath(frame)]
            networked = [str(command), "table", "--broker", f"127.0.0.1:{free_port()}",
                         "--night", "bench", "--credentials", os.fspath(credentials),
                         "--data-dir", os.fspath(Path(tmp) / f"data-{run}"), "--simulate",
                         "--seed", "1", "--frame-file", os.fspath(frame)]
            t_ours, t_ours_game = time_to_file(table, frame, frames=2)
            t_net_first, t_net_game, t_net_open = time_to_file(networked, frame, frames=3)
            (t_bare,) = time_to_file([sys.executable, "-c", BARE, os.fspath(frame)], frame)
            t_every = time_run([sys.executable, "-c", PARSER.format(only=None)])
            t_one = time_run([sys.executable, "-c", PARSER.format(only='"table"')])
            if run:
                ours.append(t_ours)
                ours_game.append(t_ours_game)
                net_first.append(t_net_first)
                net_game.append(t_net_game)
                net_open.append(t_net_open)
                bare.append(t_bare)
                every.append(t_every)
                one.append(t_one)
    ms = 1000.0
    rows = [
        ("standalone: launch -> first frame, min (ms)", min(ours) * ms, min(bare) * ms),
        ("standalone: launch -> first frame, median (ms)", statistics.median(ours) * ms,
         statistics.median(bare) * ms),
        ("standalone: -> the game's first screen, min (ms)", min(ours_game) * ms,
         min(bare) * ms),
        ("standalone: -> the game's first screen, median (ms)",
         statistics.median(ours_game) * ms, statistics.median(bare) * ms),
        ("networked: launch -> first frame, min (ms)", min(net_first) * ms, min(bare) * ms),
        ("networked: launch -> first frame, median (ms)", statistics.median(net_first) * ms,
         statistics.median(bare) * ms),
        ("networked: -> the game's first screen, median (ms)", statistics.median(net_game) * ms,
         statistics.median(bare) * ms),
        ("networked: -> the screen with its link open, median (ms)",
         statistics.median(net_open) * ms, statistics.median(bare) * ms),
        ("parser of every subcommand vs table's, median (ms)", statistics.median(every) * ms,
         statistics.median(one) * ms),
    ]
    print(f"{'figure':57} {'bunco-pi':>10} {'baseline':>10} {'ratio':>7}")
    print("-" * 87)
    for name, value, base in rows:
        print(f"{name:57} {value:10.1f} {base:10.1f} {value / base:7.2f}")
    print(f"\n{args.runs} launches of each, alternating, all from bytecode. Baseline of the first "
          "eight rows: a bare\ninterpreter importing gpiozero and luma, mock pins for 5 buttons, "
          "a dummy device, a two-line\nframe written to a file. The networked box's broker "
          "address has no broker (a box booting\nbefore its head). Last row: `build_parser()` "
          "(every subcommand imported, as before)\nagainst `build_parser('table')`, each in a "
          "fresh interpreter.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
