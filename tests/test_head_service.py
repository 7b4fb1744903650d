"""The head as a real process over a real mosquitto, with scripted tables: a whole night, and a
kill -9 of the head mid-round."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bunco_pi.head.eventlog import EventLog
from bunco_pi.net.topics import Topics
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset_text
from tests.scripted_tables import ScriptedTable

pytestmark = pytest.mark.slow


def one_set_rules(tmp_path: Path) -> Path:
    """Classic rules over one set (6 rounds): every rule of the night, a quarter of the time."""
    text = preset_text("classic").replace("sets = 4", "sets = 1").replace(
        "break_after_sets = [2]", "break_after_sets = []")
    path = tmp_path / "one-set.toml"
    path.write_text(text)
    return path


def start_head(broker, night: str, data: Path, record: Path, rules: Path,
               tables: int = 3) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-m", "bunco_pi.cli", "head", "--night", night, "--tables", str(tables),
         "--rules", str(rules), "--broker", f"{broker.host}:{broker.port}",
         "--credentials", str(broker.workdir / "credentials.json"), "--data-dir", str(data),
         "--record", str(record), "--no-gpio", "--auto-host", "0", "--seed", "7"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def play(tables, rng, until, deadline):
    """Tables roll at random (one roll per step) until ``until()`` or the deadline."""
    while not until():
        assert time.monotonic() < deadline, "the night did not move on in time"
        for t in tables:
            t.pump()
        live = [t for t in tables if t.playing]
        if live:
            rng.choice(live).roll(rng)
        time.sleep(0.002)


def ended(record: Path) -> bool:
    try:
        return json.loads(record.read_text())["complete"]
    except (OSError, ValueError, KeyError):
        return False


def assert_every_sent_entry_counted_once(record: dict, tables) -> None:
    """Every roll a table sent appears exactly once in the head's record, in its order."""
    for t in tables:
        sent = [(r, e.dice) for r, e in t.sent if hasattr(e, "dice")]
        logged = [(i, tuple(roll["dice"])) for i, rnd in enumerate(record["rounds"])
                  for tab in rnd["tables"] if tab["table"] == t.number for roll in tab["rolls"]]
        assert logged == sent, f"table {t.number}: rolls differ"


@pytest.fixture
def night(broker, tmp_path):
    topics = Topics(f"h{os.getpid()}x{int(time.time() * 1000) % 100000}")
    tables = [ScriptedTable(n, broker, topics, tmp_path).start() for n in (1, 2, 3)]
    yield topics, tables
    for t in tables:
        t.stop()


def test_a_whole_night_over_mosquitto_writes_a_consistent_record(broker, night, tmp_path):
    topics, tables = night
    record = tmp_path / "night.json"
    rules = one_set_rules(tmp_path)
    head = start_head(broker, topics.night, tmp_path, record, rules)
    try:
        play(tables, random.Random(1), lambda: ended(record), time.monotonic() + 120)
    finally:
        head.terminate()
        out = head.communicate(timeout=20)[0]
    data = json.loads(record.read_text())
    assert audit_record(data, parse_rules(rules.read_text())) == [], out[-3000:]
    assert len(data["rounds"]) == 6
    assert sum(p["amount"] for p in data["prizes"]) == pytest.approx(60.0)
    assert_every_sent_entry_counted_once(data, tables)


def test_kill_9_of_the_head_mid_round_loses_and_doubles_nothing(broker, night, tmp_path):
    topics, tables = night
    record = tmp_path / "night.json"
    rules = one_set_rules(tmp_path)
    head = start_head(broker, topics.night, tmp_path, record, rules)
    rng = random.Random(2)
    try:
        # play into round 3, then kill the head in the middle of it
        def mid_round_3() -> bool:
            s = tables[1].state or {}
            return s.get("round_index") == 2 and s.get("phase") == "playing" and \
                len(tables[1].round.rolls if tables[1].round else ()) >= 3
        play(tables, rng, mid_round_3, time.monotonic() + 120)
        head.send_signal(signal.SIGKILL)
        head.wait(timeout=10)
        # the tables keep scoring while the head is down: everything waits in their outboxes
        for _ in range(20):
            for t in tables:
                t.pump()
                if t.playing and not t.round.bell:
                    t.roll(rng)
        waiting = sum(t.sender.pending_count for t in tables)
        assert waiting > 0
        head = start_head(broker, topics.night, tmp_path, record, rules)
        play(tables, rng, lambda: ended(record), time.monotonic() + 120)
    finally:
        head.terminate()
        out = head.communicate(timeout=20)[0]
    data = json.loads(record.read_text())
    assert audit_record(data, parse_rules(rules.read_text())) == [], out[-3000:]
    assert_every_sent_entry_counted_once(data, tables)
    with EventLog(tmp_path / f"night-{topics.night}.sqlite") as log:
        per_table = log.highest_all()
    for t in tables:
        assert per_table[t.number] == t.outbox.last_seq


def test_the_head_acknowledges_zero_for_tables_it_has_not_heard_from(broker, tmp_path):
    """A table whose outbox is new learns at once that the head holds nothing of it."""
    from bunco_pi.net import envelope
    from bunco_pi.net.delivery import read_ack
    from bunco_pi.net.link import Message
    from bunco_pi.net.mqtt import MqttLink

    topics = Topics(f"z{os.getpid()}x{int(time.time() * 1000) % 100000}")
    head = start_head(broker, topics.night, tmp_path, tmp_path / "night.json",
                      one_set_rules(tmp_path), tables=4)
    link = MqttLink("table-4", broker.host, broker.port, username="table-4",
                    password=broker.credentials.password("table-4"), client_id="t4-ack-probe")
    link.subscribe(topics.ack(4))
    link.start()
    try:
        deadline = time.monotonic() + 20
        ack = None
        while ack is None and time.monotonic() < deadline:
            try:
                item = link.inbox.get(timeout=0.5)
            except Exception:
                continue
            if isinstance(item, Message) and item.topic == topics.ack(4):
                ack = read_ack(envelope.decode(item.topic, item.payload))
        assert ack == 0
    finally:
        link.stop()
        head.terminate()
        head.communicate(timeout=20)


def test_a_second_press_just_after_a_round_starts_does_not_end_it(tmp_path):
    """In process (no broker needed): the bell's guard against a double press."""
    from bunco_pi.head.coordinator import Coordinator
    from bunco_pi.head.service import ROUND_START_GUARD, HeadService, make_players
    from bunco_pi.net.inproc import InprocBroker, InprocLink
    from bunco_pi.rules.house import preset

    now = [100.0]
    coord = Coordinator(preset("classic"), preset_text("classic"), "g", 1, entropy=random.Random(1))
    topics = Topics("g")
    with EventLog(tmp_path / "g.sqlite") as log:
        service = HeadService(coord, InprocLink(InprocBroker(), "head"), log, topics,
                              make_players(None, 4, 1), clock=lambda: now[0])
        service.start()
        for _ in range(2):  # the night starts, then the round
            now[0] += 1
            service.press_bell()
        assert coord.night.phase == "playing"
        now[0] += 1  # a second press one second later: ignored
        service.press_bell()
        assert coord.night.phase == "playing" and not coord.night.bell_rung
        now[0] += ROUND_START_GUARD  # later, the bell ends the round
        service.press_bell()
        assert coord.night.bell_rung


def test_the_night_so_far_is_kept_out_of_the_cyclic_collectors_reach_at_each_phase(tmp_path):
    """Every full collection went through the whole night (at 500 tables some 100 ms each,
    and the bell waited): at each change of phase the head freezes what it holds."""
    import gc

    from bunco_pi.head.coordinator import Coordinator
    from bunco_pi.head.service import HeadService, make_players
    from bunco_pi.net.inproc import InprocBroker, InprocLink
    from bunco_pi.rules.house import preset

    now = [100.0]
    coord = Coordinator(preset("classic"), preset_text("classic"), "f", 2,
                        entropy=random.Random(1))
    gc.unfreeze()
    try:
        with EventLog(tmp_path / "f.sqlite") as log:
            service = HeadService(coord, InprocLink(InprocBroker(), "head"), log, Topics("f"),
                                  make_players(None, 8, 2), clock=lambda: now[0])
            service.start()
            gc.unfreeze()
            now[0] += 1
            service.press_bell()  # the night starts: a new phase
            assert coord.night.phase == "ready"
            assert gc.get_freeze_count() > 0
            gc.unfreeze()
            service.step(timeout=0.01)  # nothing changed: nothing frozen again
            assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_a_batchs_bell_goes_out_before_its_acks_and_views(tmp_path):
    """A batch holds entries from many tables: the state that carries the bell is said
    first, then the batch's acks, then the tables' views (all after the batch's commit)."""
    from bunco_pi.head.coordinator import Coordinator
    from bunco_pi.head.service import HeadService, make_players
    from bunco_pi.net import envelope
    from bunco_pi.net.inproc import InprocBroker, InprocLink
    from bunco_pi.protocol import table_event_payload
    from bunco_pi.rules.house import preset
    from bunco_pi.rules.table_round import Roll

    broker = InprocBroker()
    now = [100.0]
    topics = Topics("order")
    coord = Coordinator(preset("classic"), preset_text("classic"), "order", 3,
                        entropy=random.Random(1))
    watcher = InprocLink(broker, "watcher")
    watcher.subscribe(topics.everything())
    watcher.start()
    boxes = {n: InprocLink(broker, f"table-{n}") for n in (1, 2, 3)}
    for box in boxes.values():
        box.start()
    with EventLog(tmp_path / "order.sqlite") as log:
        service = HeadService(coord, InprocLink(broker, "head"), log, topics,
                              make_players(None, 12, 3), clock=lambda: now[0])
        service.start()
        service.step(timeout=0.01)  # the link's connect: every ack and the state, said once
        for _ in range(2):  # the night starts, then round 1 (target 1: three 1s end it)
            now[0] += 1
            service.press_bell()
        assert coord.night.phase == "playing"
        while not watcher.inbox.empty():
            watcher.inbox.get_nowait()
        for n, dice in ((2, (2, 3, 4)), (3, (5, 5, 6)), (1, (1, 1, 1)), (2, (6, 6, 2))):
            boxes[n].publish(topics.events(n), envelope.event(
                f"table-{n}", n, 1 if n != 2 or dice == (2, 3, 4) else 2,
                table_event_payload(0, Roll(dice))))
        service.step(timeout=0.1)  # one batch: four entries, the bell among them
        said = []
        while not watcher.inbox.empty():
            item = watcher.inbox.get_nowait()
            if hasattr(item, "topic") and "/events" not in item.topic:
                said.append(item.topic.split("/", 2)[2])
    assert coord.night.bell_rung
    first_ack = next(i for i, t in enumerate(said) if t.endswith("/ack"))
    first_view = next(i for i, t in enumerate(said) if t.endswith("/view"))
    assert said.index("state") < first_ack < first_view, said
    assert {t for t in said if t.endswith("/ack")} == {f"table/{n}/ack" for n in (1, 2, 3)}


@pytest.mark.parametrize("own_connection", [True, False], ids=["news-connection", "one-link"])
def test_the_bell_goes_out_while_the_heads_link_is_still_reading(broker, tmp_path, own_connection):
    """paho's thread reads as many packets as its client has messages in flight before it
    writes any, and at 500 tables the head's link is always reading. The state that carries
    the bell goes out on the head's news connection, which reads nothing. Here the link's
    thread is held inside a read (a table's event; its sink waits) while the bell rings: with
    the news connection the room has the bell at once; on the one link, only once the read
    ends."""
    from bunco_pi.head.coordinator import Coordinator
    from bunco_pi.head.service import HeadService, make_players
    from bunco_pi.net import envelope
    from bunco_pi.net.broker import HEAD_NEWS_USER
    from bunco_pi.net.link import Message
    from bunco_pi.net.mqtt import MqttLink
    from bunco_pi.protocol import table_event_payload
    from bunco_pi.rules.house import preset
    from bunco_pi.rules.table_round import Roll

    topics = Topics(f"news{os.getpid()}x{int(time.time() * 1000) % 100000}")
    holding, reading, released = threading.Event(), threading.Event(), threading.Event()

    def sink(event):
        if holding.is_set() and isinstance(event, Message) and event.topic.endswith("/events"):
            reading.set()
            released.wait(15)
        link.inbox.put(event)

    def login(user, **kw):
        return MqttLink(user, broker.host, broker.port, username=user,
                        password=broker.credentials.password(
                            "head" if user == HEAD_NEWS_USER else user), **kw)

    link = login("head", sink=sink)
    news = login(HEAD_NEWS_USER, sink=lambda event: None) if own_connection else None
    watcher, table = login("watcher"), login("table-1")
    watcher.subscribe(topics.state())
    links = [x for x in (watcher, table, link, news) if x is not None]
    watcher.start()
    table.start()

    def states(wait: float) -> int:
        count, deadline = 0, time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                item = watcher.inbox.get(timeout=0.05)
            except Exception:
                continue
            count += isinstance(item, Message) and item.topic == topics.state()
        return count

    now = [100.0]
    coord = Coordinator(preset("classic"), preset_text("classic"), topics.night, 1,
                        entropy=random.Random(1))
    try:
        assert watcher.wait_subscribed(5) and table.wait_connected(5)
        with EventLog(tmp_path / "news.sqlite") as log:
            service = HeadService(coord, link, log, topics, make_players(None, 4, 1),
                                  clock=lambda: now[0], news=news)
            service.start()
            assert link.wait_subscribed(5) and (news is None or news.wait_connected(5))
            for _ in range(2):  # the night starts, then round 1
                now[0] += 1
                service.press_bell()
            assert coord.night.phase == "playing"
            assert states(1.0) >= 1  # what was said so far has arrived
            holding.set()
            table.publish(topics.events(1), envelope.event(
                "table-1", 1, 1, table_event_payload(0, Roll((2, 3, 4)))))
            assert reading.wait(5), "the head's link never read the table's event"
            now[0] += 10
            service.press_bell()
            assert coord.night.bell_rung
            arrived_while_reading = states(2.0)
            released.set()
            arrived_after = states(2.0)
    finally:
        released.set()
        for x in links:
            x.stop(timeout=1)
    if own_connection:
        assert arrived_while_reading == 1
    else:  # the same bell waited for the read to end
        assert (arrived_while_reading, arrived_after) == (0, 1)
