"""The kit end to end: the dice tray firmware's own code writing into a pty while
`bunco-pi table --standalone` reads the other end and scores every roll."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest

from firmware.host_emulator import run_tray

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def classic_points(dice: list[int], target: int) -> int:
    if dice.count(target) == 3:
        return 21
    if dice[0] == dice[1] == dice[2]:
        return 5
    return dice.count(target)


def test_firmware_rolls_are_scored_by_a_standalone_table(tmp_path):
    master, slave = os.openpty()
    tty.setraw(slave)
    config = tmp_path / "table.toml"
    config.write_text('[display]\ntype = "none"\n[table]\nplayers = ["Ann", "Bea", "Cat", "Dot"]\n')
    record = tmp_path / "night.json"
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "PYTHONPATH": str(ROOT)}
    table = subprocess.Popen(
        [sys.executable, "-m", "bunco_pi.cli", "table", "--standalone", "--config", str(config),
         "--dice-port", os.ttyname(slave), "--record", str(record),
         "--journal", str(tmp_path / "journal.db")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rolled: list[list[int]] = []
    try:
        assert "running standalone" in table.stderr.readline()
        # the firmware, with its own debounce, tumble, seq store and checksums; fast presses
        run_tray(lambda data: os.write(master, data), 60, tmp_path / "tray", every_s=0.02,
                 tumble_ms=60,
                 show=lambda dice, caption: rolled.append(list(dice))
                 if caption.startswith("roll #") else None)
        time.sleep(1.0)  # the last line's way through the pty; the record is written at exit
        table.send_signal(signal.SIGTERM)
        assert table.wait(timeout=15) == 0, table.stderr.read()
    finally:
        if table.poll() is None:
            table.kill()
        os.close(master)
        os.close(slave)
    assert len(rolled) == 60
    data = json.loads(record.read_text())
    logged = [e[2] for e in data["log"] if e[0] == "roll"]
    # every roll the tray sent was scored once and in order (a roll after a round's end
    # starts the next round)
    assert logged == rolled
    for played in data["rounds"]:
        (t,) = played["tables"]
        for roll in t["rolls"]:
            assert roll["points"] == classic_points(roll["dice"], played["target"])
