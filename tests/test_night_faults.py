"""A networked night with real processes (the head and three tables running the very commands
a night runs) over a real mosquitto, through faults. After each night every table's outbox is
compared with the head's event log: every entry a table made arrived exactly once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bunco_pi.head.eventlog import EventLog
from bunco_pi.net.broker import Broker
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset_text
from bunco_pi.table.outbox import Outbox
from tests.conftest import CutProxy, _require_mosquitto

pytestmark = pytest.mark.slow

NIGHT = "faults"
# How long the simulated host lets a round's results show: longer than the broker's autosave
# interval (2 s), so its database holds the results of the round before when it is killed.
HOST_PAUSE = 3


def one_set_rules(tmp_path: Path) -> Path:
    path = tmp_path / "one-set.toml"
    path.write_text(preset_text("classic").replace("sets = 4", "sets = 1")
                    .replace("break_after_sets = [2]", "break_after_sets = []"))
    return path


class Night:
    """The processes of a night, started the way `bunco-pi demo` starts them."""

    def __init__(self, broker: Broker, tmp_path: Path, rules: Path) -> None:
        self.broker, self.tmp, self.rules = broker, tmp_path, rules
        self.env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock",
                        GPIOZERO_MOCK_PIN_CLASS="mockpwmpin", PYTHONUNBUFFERED="1")
        self.record = tmp_path / "night.json"
        self.head: subprocess.Popen | None = None
        self.tables: dict[int, subprocess.Popen] = {}
        self.logs = tmp_path / "logs"
        self.logs.mkdir(exist_ok=True)

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        out = (self.logs / f"{name}.log").open("a")
        return subprocess.Popen([sys.executable, "-m", "bunco_pi.cli", *argv], env=self.env,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def creds(self) -> list[str]:
        return ["--credentials", str(self.broker.workdir / "credentials.json")]

    def start_head(self, auto_host: float = 0) -> None:
        self.head = self._spawn("head", [
            "head", "--night", NIGHT, "--tables", "3", "--rules", str(self.rules),
            "--broker", f"{self.broker.host}:{self.broker.port}", *self.creds(),
            "--data-dir", str(self.tmp), "--record", str(self.record), "--auto-host", str(auto_host),
            "--exit-after-end", "3", "--seed", "5", "--buzzer", "plain"])

    def start_table(self, n: int, port: int | None = None) -> None:
        self.tables[n] = self._spawn(f"table-{n}", [
            "table", "--table", str(n), "--night", NIGHT,
            "--broker", f"{self.broker.host}:{port or self.broker.port}", *self.creds(),
            "--data-dir", str(self.tmp / f"t{n}"), "--simulate", "--seed", str(n),
            "--pace", "fast"])

    def state(self) -> dict:
        try:
            return json.loads(self.record.read_text())
        except (OSError, ValueError):
            return {}

    def wait(self, predicate, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; logs in {self.logs}")
            for name, proc in [("head", self.head), *self.tables.items()]:
                if proc is not None and proc.poll() not in (None, 0) and proc.returncode != -9:
                    log = self.logs / ("head.log" if name == "head" else f"table-{name}.log")
                    raise AssertionError(f"{name} died ({proc.returncode}): "
                                         + log.read_text()[-2000:])
            time.sleep(0.1)

    def rounds_started(self) -> int:
        """How many rounds the head has started (its own records in its log)."""
        path = self.tmp / f"night-{NIGHT}.sqlite"
        if not path.exists():
            return 0
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
                return int(db.execute("SELECT COUNT(*) FROM events WHERE table_no = 0 AND "
                                      "payload LIKE '%\"event\":[\"start\"]%'").fetchone()[0])
        except sqlite3.Error:
            return 0

    def wait_round_start(self, n: int, seconds: float = 120) -> None:
        self.wait(lambda: self.rounds_started() >= n, seconds, f"round {n} to start")

    def rounds_done(self) -> int:
        return len(self.state().get("rounds", []))

    def complete(self) -> bool:
        return bool(self.state().get("complete"))

    def stop(self) -> None:
        for proc in [self.head, *self.tables.values()]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in [self.head, *self.tables.values()]:
            if proc is not None:
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def check_exactly_once(self) -> None:
        """Each table's outbox and the head's log hold the same entries, seq for seq."""
        with EventLog(self.tmp / f"night-{NIGHT}.sqlite") as log:
            logged: dict[int, list] = {}
            for ev in log.replay(include_rejected=True):
                if ev.table >= 1:
                    logged.setdefault(ev.table, []).append((ev.seq, ev.payload))
        for n in (1, 2, 3):
            with Outbox(self.tmp / f"t{n}" / f"outbox-{NIGHT}-table-{n}.sqlite") as outbox:
                made = [(e.seq, e.payload) for e in outbox.entries()]
            assert made, f"table {n} made no entries"
            assert logged.get(n) == made, f"table {n}: outbox and head log differ"


@pytest.fixture
def own_broker(tmp_path):
    _require_mosquitto()
    with Broker(tmp_path / "broker", tables=4, autosave_interval=2) as b:
        yield b


def test_a_table_cut_off_for_30s_and_one_killed_while_cut_off_lose_nothing(own_broker, tmp_path):
    rules = one_set_rules(tmp_path)
    night = Night(own_broker, tmp_path, rules)
    proxies = {n: CutProxy(own_broker.port) for n in (2, 3)}
    try:
        night.start_head()
        night.start_table(1)
        for n in (2, 3):
            night.start_table(n, proxies[n].port)
        night.wait(lambda: night.rounds_done() >= 2, 120, "two rounds")
        for proxy in proxies.values():
            proxy.cut()  # tables 2 and 3 lose their Wi-Fi; they keep scoring
        time.sleep(10)
        night.tables[3].send_signal(signal.SIGKILL)  # and table 3 loses its power, offline
        night.tables[3].wait(10)
        night.start_table(3, proxies[3].port)  # it boots again, still offline
        time.sleep(20)
        for proxy in proxies.values():
            proxy.restore()
        night.wait(night.complete, 240, "the end of the night")
        night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
    finally:
        night.stop()
        for proxy in proxies.values():
            proxy.close()
    record = night.state()
    assert audit_record(record, parse_rules(rules.read_text())) == []
    night.check_exactly_once()


def test_the_broker_restarted_mid_round_loses_nothing(own_broker, tmp_path):
    rules = one_set_rules(tmp_path)
    night = Night(own_broker, tmp_path, rules)
    try:
        night.start_head()
        for n in (1, 2, 3):
            night.start_table(n)
        night.wait(lambda: night.rounds_done() >= 2, 120, "two rounds")
        own_broker.restart()
        night.wait(lambda: night.rounds_done() >= 4, 120, "two more rounds")
        own_broker.kill()  # a crash this time: what it had not saved is gone
        time.sleep(1)
        own_broker.start()
        night.wait(night.complete, 240, "the end of the night")
    finally:
        night.stop()
    record = night.state()
    assert audit_record(record, parse_rules(rules.read_text())) == []
    night.check_exactly_once()


@pytest.mark.parametrize("delays", [(0.3, 1.0, 2.0)])
def test_the_broker_killed_just_after_a_round_starts_moves_no_box_backwards(
        own_broker, tmp_path, delays):
    """mosquitto killed 0.3 s, 1 s and 2 s after a round starts and restarted at once: it hands
    out its last autosave (the previous round's results, with the bell rung, shown for 3 s by
    the host). No table may go back to that round: the night completes without restarting
    any box."""
    rules = one_set_rules(tmp_path)
    night = Night(own_broker, tmp_path, rules)
    try:
        night.start_head(auto_host=HOST_PAUSE)
        for n in (1, 2, 3):
            night.start_table(n)
        for i, delay in enumerate(delays):
            night.wait_round_start(2 + i)
            time.sleep(delay)
            own_broker.kill()
            own_broker.start()
        night.wait(night.complete, 240, "the end of the night (a table stuck on a past round?)")
        night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
    finally:
        night.stop()
    assert audit_record(night.state(), parse_rules(rules.read_text())) == []
    night.check_exactly_once()


def test_the_head_pi_killed_whole_just_after_a_round_starts_moves_no_box_backwards(
        own_broker, tmp_path):
    """The head Pi loses power 0.3 s after a round starts (head and mosquitto together) and is
    back 2 s later: the tables carry on with the round, none goes back to the last one."""
    rules = one_set_rules(tmp_path)
    night = Night(own_broker, tmp_path, rules)
    try:
        night.start_head(auto_host=HOST_PAUSE)
        for n in (1, 2, 3):
            night.start_table(n)
        night.wait_round_start(3)
        time.sleep(0.3)
        night.head.send_signal(signal.SIGKILL)
        own_broker.kill()
        night.head.wait(10)
        time.sleep(2)
        own_broker.start()
        night.start_head(auto_host=HOST_PAUSE)
        night.wait(night.complete, 240, "the end of the night (a table stuck on a past round?)")
        night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
    finally:
        night.stop()
    assert audit_record(night.state(), parse_rules(rules.read_text())) == []
    night.check_exactly_once()


def test_a_table_silently_cut_off_killed_and_back_moves_no_box_backwards(own_broker, tmp_path):
    """A table's Wi-Fi goes quiet (packets dropped, no connection closed) for 30 s while it
    presses; it is killed and restarted while still cut off, then the network comes back.
    Queued messages the broker redelivers then are older than what the box knew: the box must
    not go back to them, and the night completes without restarting it again."""
    rules = one_set_rules(tmp_path)
    night = Night(own_broker, tmp_path, rules)
    proxy = CutProxy(own_broker.port)
    try:
        night.start_head(auto_host=HOST_PAUSE)
        night.start_table(1)
        night.start_table(2)
        night.start_table(3, proxy.port)
        night.wait_round_start(2)
        time.sleep(0.5)
        proxy.cut(silent=True)
        time.sleep(12)
        night.tables[3].send_signal(signal.SIGKILL)
        night.tables[3].wait(10)
        night.start_table(3, proxy.port)  # boots again, still cut off
        time.sleep(18)
        proxy.restore()
        night.wait(night.complete, 240, "the end of the night (a table stuck on a past round?)")
        night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
    finally:
        night.stop()
        proxy.close()
    assert audit_record(night.state(), parse_rules(rules.read_text())) == []
    night.check_exactly_once()
