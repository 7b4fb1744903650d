"""A table box with no hardware at all, end to end: the dice tray firmware's own code writes its
lines into a pty, and `bunco-pi table --standalone` (gpiozero's mock pins, luma's dummy
display) reads the other end and scores every roll. Prints what the record holds; exits 1 if
any roll the tray sent was not scored exactly once.

    python3 scripts/pty_table_check.py [--rolls N] [--bunco-pi PATH]

Run from a checkout (it imports the firmware from firmware/). scripts/arm64-check.sh runs it
on an emulated arm64 Debian.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tty
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from firmware.host_emulator import run_tray  # noqa: E402

CONFIG = """[display]
type = "dummy"
[table]
players = ["Ann", "Bea", "Cat", "Dot"]
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=12)
    parser.add_argument("--bunco-pi", default=str(Path(sys.executable).with_name("bunco-pi")),
                        help="the bunco-pi command (default: beside this python)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bunco-pty-table-"))
    (work / "table.toml").write_text(CONFIG)
    record = work / "night.json"
    master, slave = os.openpty()
    tty.setraw(slave)
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock"}
    start = time.monotonic()
    table = subprocess.Popen(
        [args.bunco_pi, "table", "--standalone", "--config", str(work / "table.toml"),
         "--dice-port", os.ttyname(slave), "--record", str(record),
         "--journal", str(work / "journal.db")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rolled: list[list[int]] = []
    try:
        first = table.stderr.readline().strip()
        print(f"table: {first} (after {time.monotonic() - start:.1f} s)")
        run_tray(lambda data: os.write(master, data), args.rolls, work / "tray", every_s=0.3,
                 show=lambda dice, caption: rolled.append(list(dice))
                 if caption.startswith("roll #") else None)
        time.sleep(2.0)  # the last line's way through the pty; the record is written at exit
        table.send_signal(signal.SIGTERM)
        code = table.wait(timeout=60)
    finally:
        if table.poll() is None:
            table.kill()
        os.close(master)
        os.close(slave)
    data = json.loads(record.read_text())
    logged = [e[2] for e in data["log"] if e[0] == "roll"]
    print(f"tray sent {len(rolled)} rolls; the record logged {len(logged)}, "
          f"{'the same, in order' if logged == rolled else 'NOT the same'}; "
          f"table exit code {code}; {time.monotonic() - start:.1f} s in all")
    print("  rolls logged: " + " ".join("".join(map(str, dice)) for dice in logged))
    for played in data["rounds"]:
        for t in played["tables"]:
            points = [r["points"] for r in t["rolls"]]
            print(f"  round {played['round']} (target {played['target']}) scored: {points}")
    return 0 if logged == rolled and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
