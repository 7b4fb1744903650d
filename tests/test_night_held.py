"""The host's way out with real processes: mosquitto, `bunco-pi head` and three simulated
tables. Table 3's box is killed mid-round and stays dead for rounds; the head's simulated host
holds the bell (`--auto-hold`, the same input as the bell button held down) whenever a round
is stuck; the night goes on. Then table 3 boots again, catches up with the night and plays it
out; every table's outbox equals the head's log, seq for seq."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from bunco_pi.head.eventlog import EventLog
from bunco_pi.net.broker import Broker
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset_text
from bunco_pi.table.outbox import Outbox
from tests.conftest import _require_mosquitto
from tests.test_night_faults import NIGHT, Night

pytestmark = pytest.mark.slow


class HeldNight(Night):
    def start_head(self) -> None:
        self.head = self._spawn("head", [
            "head", "--night", NIGHT, "--tables", "3", "--rules", str(self.rules),
            "--broker", f"{self.broker.host}:{self.broker.port}", *self.creds(),
            "--data-dir", str(self.tmp), "--record", str(self.record), "--auto-host", "0",
            "--auto-hold", "5", "--exit-after-end", "3", "--seed", "5", "--buzzer", "plain"])

    def held(self) -> list[tuple[int, int, str]]:
        return [(r["round"], t["table"], t["held"]) for r in self.state().get("rounds", [])
                for t in r["tables"] if "held" in t]


@pytest.fixture
def own_broker(tmp_path):
    _require_mosquitto()
    with Broker(tmp_path / "broker", tables=4) as b:
        yield b


def test_a_table_killed_mid_round_the_host_holds_the_bell_and_the_night_goes_on(
        own_broker, tmp_path):
    play_with_table_3_killed(own_broker, tmp_path, comes_back=True)


def test_a_table_killed_for_good_the_night_completes_without_it(own_broker, tmp_path):
    play_with_table_3_killed(own_broker, tmp_path, comes_back=False)


def play_with_table_3_killed(own_broker, tmp_path, *, comes_back: bool) -> None:
    rules = tmp_path / "one-set.toml"
    rules.write_text(preset_text("classic").replace("sets = 4", "sets = 1")
                     .replace("break_after_sets = [2]", "break_after_sets = []"))
    night = HeldNight(own_broker, tmp_path, rules)
    try:
        night.start_head()
        for n in (1, 2, 3):
            night.start_table(n)
        night.wait(lambda: night.rounds_done() >= 1, 120, "the first round")
        time.sleep(1.0)  # the next round is under way (the simulated host starts it at once)
        night.tables[3].send_signal(signal.SIGKILL)
        night.tables[3].wait(10)
        night.wait(lambda: len(night.held()) >= 2, 120, "two rounds closed by the host")
        assert {table for _, table, _ in night.held()} == {3}
        assert night.tables[1].poll() is None and night.tables[2].poll() is None
        if comes_back:
            night.start_table(3)  # table 3 boots again: it catches up and plays on
        night.wait(night.complete, 240, "the end of the night")
        night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
    finally:
        night.stop()
    record = night.state()
    assert all(held == "as-it-stands" for _, _, held in night.held())
    assert audit_record(record, parse_rules(Path(rules).read_text())) == []
    if comes_back:
        back = [r for r in record["rounds"] if r["round"] > max(n for n, _, _ in night.held())]
        assert back, "no round after table 3 came back"
        assert any(t["table"] == 3 and t["rolls"] and "held" not in t
                   for r in back for t in r["tables"]), "table 3 did not play on"
        night.check_exactly_once()
        return
    # every round from the kill on was closed by the host, and nothing was doubled: the head
    # holds exactly what table 3's box delivered before it died, a prefix of its outbox (an
    # entry made in its last instant may never have left it)
    killed_in = min(n for n, _, _ in night.held())
    assert [n for n, _, _ in night.held()] == list(range(killed_in, len(record["rounds"]) + 1))
    with EventLog(tmp_path / f"night-{NIGHT}.sqlite") as log:
        events = list(log.replay(include_rejected=True))
    for n in (1, 2, 3):
        logged = [(e.seq, e.payload) for e in events if e.table == n]
        with Outbox(tmp_path / f"t{n}" / f"outbox-{NIGHT}-table-{n}.sqlite") as outbox:
            made = [(e.seq, e.payload) for e in outbox.entries()]
        if n == 3:
            assert logged and logged == made[:len(logged)]
            print(f"table 3: {len(made) - len(logged)} entries never left its box")
        else:
            assert made and logged == made, f"table {n}: outbox and head log differ"
    log = (night.logs / "head.log").read_text()
    assert "bell held: closing the round" in log
