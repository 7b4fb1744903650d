"""A night of timed rounds with real processes (the head and three tables running the commands a
night runs) over a real mosquitto, the head killed (SIGKILL) mid-round and started again: each
round ends at its logged deadline (within a second when the head is back before it; at once,
marked late, when it was down past it), every entry arrives exactly once, the record audits."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from bunco_pi.net.broker import Broker
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset_text
from tests.conftest import _require_mosquitto
from tests.test_night_faults import NIGHT, Night

pytestmark = pytest.mark.slow

# Short rounds keep the test short (the head's timer is the same at 3 minutes); long enough that
# a head restarted on a loaded machine is back well before the deadline.
ROUND_SECONDS = 12.0
MOVE_SECONDS = 2
# The simulated host rings the bell to start the night and its first round; after that the
# move break's clock starts each round before the host would.
HOST_SECONDS = MOVE_SECONDS + 3


def timed_rules(tmp_path: Path) -> Path:
    path = tmp_path / "timed.toml"
    text = (preset_text("classic").replace("sets = 4", "sets = 1")
            .replace("break_after_sets = [2]", "break_after_sets = []"))
    assert "[round]\n" in text
    text = text.replace("[round]\n", "[round]\n"
                        f"minutes = {ROUND_SECONDS / 60}\n"
                        'ends_by = "time"\n'
                        "warn_seconds = 3\n"
                        'at_horn = "finish-roll"\n'
                        f"move_seconds = {MOVE_SECONDS}\n", 1)
    path.write_text(text)
    return path


def head_records(night: Night) -> list[list]:
    """The head's own night events, in log order."""
    path = night.tmp / f"night-{NIGHT}.sqlite"
    if not path.exists():
        return []
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            rows = db.execute("SELECT payload FROM events WHERE table_no = 0 "
                              "ORDER BY position").fetchall()
    except sqlite3.Error:
        return []
    payloads = [json.loads(p) for (p,) in rows]
    return [p["event"] for p in payloads if p.get("kind") == "night"]


def round_clocks(night: Night) -> list[list]:
    return [e for e in head_records(night) if e[:2] == ["clock", "round"]]


@pytest.fixture
def own_broker(tmp_path):
    _require_mosquitto()
    with Broker(tmp_path / "broker", tables=4, autosave_interval=2) as b:
        yield b


def test_timed_rounds_survive_the_head_killed_mid_round(own_broker, tmp_path):
    rules_path = timed_rules(tmp_path)
    rules = parse_rules(rules_path.read_text())
    night = Night(own_broker, tmp_path, rules_path)
    outages: dict[int, float] = {}  # round (1-based) -> how long the head was down
    try:
        night.start_head(auto_host=HOST_SECONDS)
        for n in (1, 2, 3):
            night.start_table(n)
        for round_no, down in ((2, 0.5), (4, ROUND_SECONDS + 2)):
            night.wait(lambda r=round_no: len(round_clocks(night)) >= r, 120,
                       f"round {round_no}'s clock")
            time.sleep(1.0)  # mid-round: the tables are rolling
            night.head.send_signal(signal.SIGKILL)
            night.head.wait(10)
            time.sleep(down)
            outages[round_no] = down
            night.start_head(auto_host=HOST_SECONDS)
        night.wait(night.complete, 240, "the end of the night")
        night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
    finally:
        night.stop()
    events = head_records(night)
    clocks = [e for e in events if e[:2] == ["clock", "round"]]
    horns = [e for e in events if e[0] == "time-up"]
    assert len(clocks) == len(horns) == rules.rounds_per_night
    for round_no, (clock, horn) in enumerate(zip(clocks, horns, strict=True), start=1):
        started, deadline = clock[2], clock[3]
        assert deadline - started == pytest.approx(ROUND_SECONDS)
        late = horn[1] - deadline
        if outages.get(round_no, 0) > ROUND_SECONDS:
            # down past the deadline: ended as soon as the head was back, recorded as such
            assert horn[2:] == ["late"] and late > 1.0, (round_no, horn, deadline)
        else:
            # the deadline holds within a second, the head's restart included
            assert horn[2:] == [] and 0 <= late < 1.0, (round_no, horn, deadline)
    moves = [e for e in events if e[:2] == ["clock", "move"]]
    assert len(moves) == rules.rounds_per_night - 1
    assert all(m[3] - m[2] == pytest.approx(MOVE_SECONDS) for m in moves)
    record = night.state()
    assert record.get("complete") and len(record["rounds"]) == rules.rounds_per_night
    assert audit_record(record, rules) == []
    night.check_exactly_once()
