"""`bunco-pi audit RECORD.json`: any night record the project writes, checked on its own.

The main case is a night played over a real mosquitto, the head's own service and scripted
tables, with a held round, a late arrival and a leaver: its record audits clean, and ten hand
damages to it are each named on a line of their own."""

from __future__ import annotations

import copy
import itertools
import json
import random
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bunco_pi.cli import main
from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.service import HEAD_NAME, HeadService, HeadTask, make_players
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics
from bunco_pi.rules.house import parse_rules, preset, preset_text
from bunco_pi.rules.night import Arrive, Leave
from bunco_pi.rules.record import build_record
from bunco_pi.sim.players import simulate_night
from tests.scripted_tables import ScriptedTable
from tests.test_console_desk import call, desk, login  # noqa: F401  (the desk fixture)


def audit(capsys, *argv) -> tuple[int, list[str], list[str]]:
    code = main(["audit", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err.splitlines()


def sim_record(tmp_path: Path, name: str = "classic", players: int = 12, seed: int = 3) -> Path:
    sim = simulate_night(preset(name), players, seed)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(build_record(sim.night, sim.log, seed=seed)))
    return path


# --- the command's contract ----------------------------------------------------------------------


def test_a_clean_record_exits_0_with_one_line(tmp_path, capsys) -> None:
    path = sim_record(tmp_path, "rotate", 10)
    code, out, err = audit(capsys, path)
    assert (code, out, err) == (0, [f"{path}: the record agrees with the rotate rules"], [])


def test_problems_exit_1_one_line_each_then_the_count(tmp_path, capsys) -> None:
    path = sim_record(tmp_path)
    record = json.loads(path.read_text())
    record["cards"]["p4"]["buncos"] += 1
    record["log"].append(["prizes", 1])
    path.write_text(json.dumps(record))
    code, out, _ = audit(capsys, path)
    assert code == 1
    assert out[-1] == f"{path}: 2 problems against the classic rules"
    assert any(line.startswith("p4: card says buncos") for line in out)
    assert any("a duplicate 'prizes'" in line for line in out)


def test_json_for_machines(tmp_path, capsys) -> None:
    path = sim_record(tmp_path)
    record = json.loads(path.read_text())
    record["cards"]["p4"]["buncos"] += 1
    path.write_text(json.dumps(record))
    code, out, _ = audit(capsys, path, "--json")
    assert code == 1 and len(out) == 1
    verdict = json.loads(out[0])
    assert verdict["clean"] is False and verdict["rules"] == "classic"
    assert verdict["problems"] == [p for p in verdict["problems"] if "p4: card says buncos" in p]


def test_rules_other_than_the_records_own(tmp_path, capsys) -> None:
    """--rules checks against another preset or file: a classic night is no core night."""
    path = sim_record(tmp_path)
    assert audit(capsys, path, "--rules", "classic")[0] == 0
    code, out, _ = audit(capsys, path, "--rules", "core")
    assert code == 1 and out[-1].endswith("against the core rules")
    rules_file = tmp_path / "house.toml"
    rules_file.write_text(preset_text("classic").replace('name = "classic"', 'name = "ours"'))
    code, out, _ = audit(capsys, path, "--rules", rules_file)
    assert code == 0 and out == [f"{path}: the record agrees with the ours rules"]


def test_a_record_of_house_rules_that_are_no_preset_needs_their_file(tmp_path, capsys) -> None:
    path = sim_record(tmp_path)
    record = json.loads(path.read_text())
    record["rules"] = "ours"
    path.write_text(json.dumps(record))
    code, out, err = audit(capsys, path)
    assert code == 2 and out == [] and len(err) == 1
    assert "house rules 'ours', which are not a preset: give their file with --rules" in err[0]


@pytest.mark.parametrize("content, problem", [
    (None, "no such night record"),
    ("folder", "is a folder, not a night record"),
    ('{"format": "bunco-pi night record", "version": 1, "rounds": [', "not a JSON night record"),
    (b"\xff\xfe\x00binary", "not UTF-8 text"),
    ('{"some": "thing"}', "not a bunco-pi night record"),
    ('{"format": "bunco-pi night record", "version": 9}', "newer than this bunco-pi reads"),
    ('{"format": "bunco-pi night record", "version": 1, "rules": "classic"}',
     "not a whole night record: 'players' is missing"),
])
def test_a_file_it_cannot_read_exits_2_with_one_line(tmp_path, capsys, content, problem) -> None:
    path = tmp_path / "night.json"
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = audit(capsys, path)
    assert code == 2 and out == [] and len(err) == 1 and problem in err[0], err
    code, out, err = audit(capsys, path, "--json")
    assert code == 2 and json.loads(out[0])["error"] == err[0].removeprefix("bunco-pi: ")


def test_a_standalone_tables_record(tmp_path, capsys) -> None:
    """A standalone table numbered 3 writes its record as table 3."""
    sim = simulate_night(preset("classic"), 4, 2)
    path = tmp_path / "table-3.json"
    path.write_text(json.dumps(build_record(sim.night, sim.log, source="table",
                                            table_numbers=(3,))))
    assert audit(capsys, path)[:2] == (0, [f"{path}: the record agrees with the classic rules"])


# --- a networked night with a held round, a late arrival and a leaver -----------------------------


class NetworkedNight:
    """The head's real service on a thread of its own, over a real mosquitto, with three
    scripted tables; the test is the host (its bell presses and seat changes go through the
    head's queue, as the console's do)."""

    def __init__(self, broker, tmp_path: Path, rules_text: str) -> None:
        self.topics = Topics(f"aud{int(time.time() * 1000) % 10**8}")
        self.rules = parse_rules(rules_text)
        self.record_path = tmp_path / "night.json"
        coordinator = Coordinator(self.rules, rules_text, self.topics.night, 3,
                                  entropy=random.Random(5))
        link = MqttLink(HEAD_NAME, broker.host, broker.port, username=HEAD_NAME,
                        password=broker.credentials.password(HEAD_NAME),
                        status_topic=self.topics.status(HEAD_NAME))
        ticks = itertools.count(0, 10)  # ten seconds a look: no press is ever "too soon"
        self.tables = [ScriptedTable(n, broker, self.topics, tmp_path).start()
                       for n in (1, 2, 3)]
        self._stop = threading.Event()
        ready = threading.Event()

        def owner() -> None:
            with EventLog(tmp_path / "head.sqlite") as log:
                self.service = HeadService(coordinator, link, log, self.topics,
                                           make_players(None, 10, 3),
                                           record_path=str(self.record_path),
                                           clock=lambda: next(ticks))
                self.service.start()
                ready.set()
                while not self._stop.is_set():
                    self.service.step(timeout=0.02)
                self.service.write_record()
                link.stop()

        self.thread = threading.Thread(target=owner, daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def on_head(self, work):
        task = HeadTask(work)
        self.service.link.inbox.put(task)
        return task.done.result(15)

    @property
    def night(self):
        return self.service.coordinator.night

    def press(self) -> None:
        self.on_head(lambda s: s.press_bell())

    def host(self, event) -> None:
        self.on_head(lambda s: s.carry_out(s.coordinator.host_event(event)))

    def play_until(self, done, dead=(), seconds: float = 90.0) -> None:
        rng = random.Random(7)
        deadline = time.monotonic() + seconds
        while not done():
            assert time.monotonic() < deadline, "the night did not move on in time"
            live = [t for t in self.tables if t.number not in dead]
            for t in live:
                t.pump()
            playing = [t for t in live if t.playing]
            if playing:
                rng.choice(playing).roll(rng)
            time.sleep(0.002)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(30)
        for t in self.tables:
            t.stop()


@pytest.fixture(scope="module")
def networked_record(broker, tmp_path_factory) -> tuple[Path, Path, dict]:
    """One set of rotate (six rounds): round 2's third table dies and the host holds the bell;
    Zoe arrives at ghost1's seat after round 1; p2 leaves after round 3."""
    tmp_path = tmp_path_factory.mktemp("networked")
    text = preset_text("rotate").replace("\nsets = 4", "\nsets = 1", 1)
    rules_file = tmp_path / "rotate-one-set.toml"
    rules_file.write_text(text)
    night = NetworkedNight(broker, tmp_path, text)
    try:
        night.press()  # the night starts: seats drawn
        for index in range(6):
            night.press()  # the round starts (after the first, from the results)
            if index == 1:
                night.play_until(lambda: night.night.all_tables_done is False and all(
                    t.done for t in night.night.tables[:2]), dead=(3,))
                night.service.close_held_round()  # the host holds the bell
            night.play_until(lambda: night.night.phase in ("results", "ended"),
                             dead=(3,) if index == 1 else ())
            if index == 0:
                night.host(Arrive("ghost1", "Zoe"))
            if index == 2:
                night.host(Leave("p2"))
        assert night.night.phase == "ended"
    finally:
        night.stop()
    record = json.loads(night.record_path.read_text())
    return night.record_path, rules_file, record


@pytest.mark.slow
def test_the_networked_nights_record_audits_clean(networked_record, capsys) -> None:
    path, rules_file, record = networked_record
    assert record["source"] == "head" and record["complete"]
    assert ["close-held"] in record["log"] and ["arrive", "ghost1", "Zoe"] in record["log"]
    assert ["leave", "p2"] in record["log"]
    held = record["rounds"][1]["tables"][2]
    assert held["held"] == "as-it-stands" and held["winners"] == []  # dead at 0-0: no result
    code, out, err = audit(capsys, path, "--rules", rules_file)
    assert (code, out, err) == (0, [f"{path}: the record agrees with the rotate rules"], []), out


def _duplicate(kind: str):
    def damage(record: dict) -> str:
        log = record["log"]
        at = [i for i, e in enumerate(log) if e[0] == kind][0]
        log.insert(at + 1, list(log[at]))
        for rnd in record["rounds"]:
            for t in rnd["tables"]:
                for roll in t["rolls"]:
                    roll["at"] += roll["at"] > at
        return f"log entry {at + 1}: a duplicate '{kind}': log entry {at} already"
    return damage


def _held_table_given_a_result(record: dict) -> str:
    t = record["rounds"][1]["tables"][2]
    t["winners"], t["losers"] = [t["seats"][0], t["seats"][2]], [t["seats"][1], t["seats"][3]]
    return "set 1 round 2 table 3: winners"


def _late_arrival_credited_with_the_ghosts_points(record: dict) -> str:
    record["cards"]["ghost1"]["points"] += 5
    return "ghost1: card says points"


def _leaver_credited_after_she_left(record: dict) -> str:
    record["cards"]["p2"]["wins"] += 1
    return "p2: card says wins"


def _arrival_during_a_round(record: dict) -> str:
    log = record["log"]
    arrive = log.index(["arrive", "ghost1", "Zoe"])
    start = [i for i, e in enumerate(log) if e == ["start"]][1]
    log.insert(start + 1, log.pop(arrive))  # positions between stay as they were
    return "log entry"  # named below with its kind


def _losers_layout(record: dict, turn) -> tuple[str, int, str]:
    """Round 4 (after the leave) into round 5: the seats of a table where losers stay, laid
    out by ``turn`` (moves follow); (where, table, first loser)."""
    r = 3
    t = next(x for x in record["rounds"][r]["tables"] if x["winners"])
    first, second = [p for p in t["seats"] if p in t["losers"]]
    nxt = next(x for x in record["rounds"][r + 1]["tables"] if x["table"] == t["table"])
    nxt["seats"] = turn(list(nxt["seats"]), first, second)
    for m in record["rounds"][r]["moves"]:
        if m["player"] in nxt["seats"]:
            m["to_table"], m["to_seat"] = t["table"], nxt["seats"].index(m["player"]) + 1
    return "after set 1 round 4", t["table"], first


def _partners_kept(record: dict) -> str:
    def across(seats, first, second):
        s = seats.index(first)
        j = seats.index(second)
        seats[j], seats[(s + 2) % 4] = seats[(s + 2) % 4], seats[j]
        return seats
    where, table, _ = _losers_layout(record, across)
    return f"{where}: table {table}:"


def _stay_put_moved(record: dict) -> str:
    where, table, first = _losers_layout(record, lambda seats, *_: seats[2:] + seats[:2])
    return f"{where}: {first} stays at table {table} but not in her seat"


DAMAGES = {
    "a duplicated start": (_duplicate("start"), "a duplicate 'start'"),
    "a duplicated close": (_duplicate("close"), "a duplicate 'close'"),
    "a duplicated next": (_duplicate("next"), "a duplicate 'next'"),
    "a duplicated prizes": (_duplicate("prizes"), "a duplicate 'prizes'"),
    "the held table given a result": (_held_table_given_a_result, "had no result"),
    "the late arrival's card given the ghost's points": (
        _late_arrival_credited_with_the_ghosts_points, "rolls say"),
    "the leaver's card given a win after she left": (_leaver_credited_after_she_left,
                                                      "rolls say"),
    "the arrival moved into a round": (_arrival_during_a_round,
                                       "is a 'arrive' during the round"),
    "partners kept together": (_partners_kept, "are partners again"),
    "player 1 out of her seat": (_stay_put_moved, "el jugador 1 se queda en su sitio"),
}


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_each_of_ten_hand_damages_is_named_on_a_line_of_its_own(networked_record, tmp_path,
                                                                capsys, damage) -> None:
    _, rules_file, record = networked_record
    damaged = copy.deepcopy(record)
    make, words = DAMAGES[damage]
    place = make(damaged)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(damaged))
    code, out, err = audit(capsys, path, "--rules", rules_file)
    assert code == 1 and err == []
    problems, summary = out[:-1], out[-1]
    assert summary.startswith(f"{path}: ") and "problem" in summary
    named = [p for p in problems if place in p and words in p]
    assert named, (damage, problems[:8])
    assert all(p.strip() and "\n" not in p for p in problems)


def test_ten_damages_are_ten_different_problems() -> None:
    """Each damage is named by a line the others do not produce."""
    assert len(DAMAGES) == 10
    assert len({words for _, words in DAMAGES.values()}) >= 9  # two card ones share words


# --- the console: the verdict beside the record ---------------------------------------------------


def test_the_console_offers_the_audit_beside_the_record(desk) -> None:  # noqa: F811
    service, base = desk
    cookie, csrf = login(base)
    assert call(base, "/api/host/start", {}, cookie, csrf)[0] == 200
    with urllib.request.urlopen(urllib.request.Request(
            base + "/host/audit.txt", headers={"Cookie": cookie}), timeout=30) as r:
        text = r.read().decode()
        assert r.status == 200 and "attachment" in r.headers["Content-Disposition"]
    assert text == "night-desk.json: the record agrees with the classic rules\n"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + "/host/audit.txt", timeout=15)
    assert refused.value.code == 401
    page = urllib.request.urlopen(base + "/", timeout=15).read().decode()
    assert 'href="/host/audit.txt"' in page and 'href="/host/night.json"' in page


def test_a_demo_nights_record(tmp_path, monkeypatch, capsys) -> None:
    """`bunco-pi demo` (here in one process, a two-round individual night) writes a record
    `bunco-pi audit` checks like any other."""
    import bunco_pi.net.broker as broker
    from bunco_pi.errors import UserError

    def missing() -> str:
        raise UserError("mosquitto (the MQTT broker) is not installed")

    monkeypatch.setattr(broker, "find_mosquitto", missing)
    rules = tmp_path / "short.toml"
    rules.write_text(preset_text("individual").replace("targets = [1, 2, 3, 4, 5, 6]",
                                                       "targets = [1, 2]"))
    record = tmp_path / "demo.json"
    assert main(["demo", "--fast", "--tables", "2", "--rules", str(rules), "--record",
                 str(record), "--workdir", str(tmp_path / "work")]) == 0
    capsys.readouterr()
    code, out, _ = audit(capsys, record, "--rules", rules)
    assert (code, out) == (0, [f"{record}: the record agrees with the individual rules"])
    assert audit(capsys, record)[0] == 1  # the individual preset's night has six rounds
