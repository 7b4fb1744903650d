"""Networked nights with Pico 2 W table boxes: the firmware's own code under MicroPython's unix
port (only the board layer swapped), beside Pi table boxes, against the real head and a real
mosquitto. After each night the record passes the audit and every entry a Pico box accepted
is in the head's log exactly once, seq for seq."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from bunco_pi.head.eventlog import EventLog
from bunco_pi.net.broker import Broker
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules
from bunco_pi.table.outbox import Outbox
from tests.conftest import CutProxy, _require_mosquitto
from tests.pico_boxes import PicoBox, micropython
from tests.test_night_faults import NIGHT, Night, one_set_rules

pytestmark = pytest.mark.slow

PICOS = (3, 4)


class MixedNight(Night):
    """The head, Pi boxes 1 and 2 (simulated scorekeepers), Pico boxes 3 and 4."""

    def __init__(self, broker: Broker, tmp_path: Path, rules: Path) -> None:
        super().__init__(broker, tmp_path, rules)
        self.picos: dict[int, PicoBox] = {}

    def start_head(self, auto_host: float = 0) -> None:
        self.head = self._spawn("head", [
            "head", "--night", NIGHT, "--tables", "4", "--rules", str(self.rules),
            "--broker", f"{self.broker.host}:{self.broker.port}", *self.creds(),
            "--data-dir", str(self.tmp), "--record", str(self.record),
            "--auto-host", str(auto_host), "--exit-after-end", "3", "--seed", "5",
            "--buzzer", "plain"])

    def add_pico(self, n: int, port: int | None = None) -> PicoBox:
        flash = self.tmp / f"pico{n}"
        flash.mkdir()
        box = PicoBox(flash, table=n, night=NIGHT, host=self.broker.host,
                      port=port or self.broker.port,
                      password=self.broker.credentials.password(f"table-{n}"))
        self.picos[n] = box.start()
        return box

    def hands(self, until, seconds: float, on_tap=None) -> None:
        """The scorekeepers at the Pico tables: ROLL whenever the screen has a roller up and
        has shown the last roll; ``on_tap(box)`` after each press (a test's mischief)."""
        deadline = time.monotonic() + seconds
        seen: dict[int, int] = {}
        tapped_at: dict[int, float] = {}
        while not until():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; logs in {self.logs}; pico screens: "
                                     + repr({n: b.screen for n, b in self.picos.items()}))
            for n, box in self.picos.items():
                if not box.alive or not box.wants_a_roll():
                    continue
                # wait for the screen to change after a press (the view from the head), but
                # not for ever: offline, only the box's own redraw comes
                if box.frames <= seen.get(n, -1) + 1 \
                        and time.monotonic() - tapped_at.get(n, 0) < 0.5:
                    continue
                seen[n], tapped_at[n] = box.frames, time.monotonic()
                box.tap("roll")
                if on_tap is not None:
                    on_tap(box)
            self._check_processes()
            time.sleep(0.03)

    def _check_processes(self) -> None:
        for name, proc in [("head", self.head), *self.tables.items()]:
            if proc is not None and proc.poll() not in (None, 0):
                log = self.logs / ("head.log" if name == "head" else f"table-{name}.log")
                raise AssertionError(f"{name} died ({proc.returncode}): "
                                     + log.read_text()[-2000:])

    def stop(self) -> None:
        for box in self.picos.values():
            box.stop()
        super().stop()

    def check_pi_exactly_once(self, tables: tuple[int, ...]) -> None:
        """Each Pi box's outbox and the head's log hold the same entries, seq for seq."""
        with EventLog(self.tmp / f"night-{NIGHT}.sqlite") as log:
            logged: dict[int, list] = {}
            for ev in log.replay(include_rejected=True):
                logged.setdefault(ev.table, []).append((ev.seq, ev.payload))
        for n in tables:
            with Outbox(self.tmp / f"t{n}" / f"outbox-{NIGHT}-table-{n}.sqlite") as outbox:
                made = [(e.seq, e.payload) for e in outbox.entries()]
            assert made and logged.get(n) == made, f"table {n}: outbox and head log differ"

    def check_picos_exactly_once(self) -> None:
        """Every entry a Pico box accepted is in the head's log once, with its seq; the log
        holds nothing of a Pico's that it did not accept (seqs 1..last, no gap, no repeat)."""
        with EventLog(self.tmp / f"night-{NIGHT}.sqlite") as log:
            logged: dict[int, list] = {}
            for ev in log.replay(include_rejected=True):
                if ev.table in self.picos:
                    logged.setdefault(ev.table, []).append(
                        (ev.seq, ev.payload["round"], ev.payload["entry"]))
        for n, box in self.picos.items():
            head = logged.get(n, [])
            assert head, f"table {n} made no entries"
            seqs = [s for s, _, _ in head]
            assert seqs == list(range(1, len(seqs) + 1)), f"table {n}: seqs {seqs}"
            by_seq = {s: (r, x) for s, r, x in head}
            accepted = {}
            for item in box.stored:
                assert item["s"] not in accepted, f"table {n}: seq {item['s']} given twice"
                accepted[item["s"]] = (item["r"], item["x"])
            for seq, entry in accepted.items():
                assert by_seq.get(seq) == entry, f"table {n} seq {seq}: {entry} vs " \
                                                 f"{by_seq.get(seq)}"
            # anything the head has that the log lines missed was accepted just before a kill
            unseen = set(by_seq) - set(accepted)
            assert len(unseen) <= box.starts - 1, f"table {n}: {sorted(unseen)} never shown"


@pytest.fixture
def own_broker(tmp_path):
    _require_mosquitto()
    micropython()
    with Broker(tmp_path / "broker", tables=4, autosave_interval=2) as b:
        yield b


def _finish(night: MixedNight, rules: Path) -> None:
    night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
    record = night.state()
    assert record.get("complete")
    assert audit_record(record, parse_rules(rules.read_text())) == []
    night.check_picos_exactly_once()
    night.check_pi_exactly_once((1, 2))


def test_two_pico_boxes_and_two_pi_boxes_play_a_whole_night(own_broker, tmp_path):
    rules = one_set_rules(tmp_path)
    night = MixedNight(own_broker, tmp_path, rules)
    try:
        night.start_head()
        for n in (1, 2):
            night.start_table(n)
        for n in PICOS:
            night.add_pico(n)
        night.hands(night.complete, 300)
        _finish(night, rules)
        for n in PICOS:
            # the Pico's presence, from its birth and its will, reached the head's broker
            assert "online: " in night.picos[n].log_text()
    finally:
        night.stop()
    record = night.state()
    rolls = [e for e in record["log"] if e[0] == "roll" and e[1] in PICOS]
    assert len(rolls) > 20  # the Pico tables rolled their own dice all night


def test_pico_boxes_killed_at_20_random_moments_lose_and_double_nothing(own_broker, tmp_path):
    """SIGKILL at 20 random moments, half of them right after a press: the box comes back
    from its journal file and the night completes."""
    rules = one_set_rules(tmp_path)
    night = MixedNight(own_broker, tmp_path, rules)
    rng = random.Random(25)
    kills = {"done": 0}

    def maybe_kill(box: PicoBox) -> None:
        if kills["done"] >= 20 or rng.random() > 0.3:  # 20 kills well before the night ends
            return
        if rng.random() < 0.5:
            time.sleep(rng.uniform(0, 0.03))  # right after the press, maybe mid-write
        else:
            time.sleep(rng.uniform(0.05, 0.5))
        box.kill()
        kills["done"] += 1
        box.start()

    try:
        night.start_head()
        for n in (1, 2):
            night.start_table(n)
        for n in PICOS:
            night.add_pico(n)
        night.hands(night.complete, 400, on_tap=maybe_kill)
        _finish(night, rules)
    finally:
        night.stop()
    assert kills["done"] == 20
    for n in PICOS:
        text = night.picos[n].log_text()
        assert "journal holds" in text


def test_a_pico_box_cut_off_for_30_s_shows_it_keeps_counting_and_catches_up(own_broker,
                                                                            tmp_path):
    rules = one_set_rules(tmp_path)
    night = MixedNight(own_broker, tmp_path, rules)
    proxy = CutProxy(own_broker.port)
    try:
        night.start_head()
        for n in (1, 2):
            night.start_table(n)
        night.add_pico(3)
        box = night.add_pico(4, proxy.port)
        night.hands(lambda: night.rounds_done() >= 1 and box.wants_a_roll(), 120)
        proxy.cut()
        cut_at = len(box.stored)
        offline_seen = []
        end = time.monotonic() + 30
        night.hands(lambda: time.monotonic() > end, 60,
                    on_tap=lambda b: offline_seen.append(b.status()) if b is box else None)
        during = len(box.stored) - cut_at
        assert during > 0, "the box took no presses while offline"
        assert any(s.startswith("offline") for s in offline_seen), offline_seen[-5:]
        proxy.restore()
        box.wait(lambda: box.log_text().count("online: ") >= 2, 30, "the box back online")
        night.hands(night.complete, 300)
        _finish(night, rules)
    finally:
        night.stop()
        proxy.close()
