"""The head notices, from the tables' heartbeats, that it stopped receiving while tables wait,
and connects again by itself within seconds, with one line in its log."""

from __future__ import annotations

import contextlib
import logging
import queue
import random
import threading
import time

import pytest

from bunco_pi.head.coordinator import Coordinator, PublishView, Refused
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.intake_watch import IntakeWatch
from bunco_pi.head.service import HeadService, make_players
from bunco_pi.net.link import Message
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics
from bunco_pi.protocol import (
    Heartbeat,
    heartbeat_payload,
    read_heartbeat,
    table_event_payload,
)
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.table_round import Roll
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.sender import TableSender

# --- the heartbeat: optional fields, versioned --------------------------------------------------


def test_a_heartbeat_says_what_the_outbox_holds_and_a_plain_status_is_none():
    beat = read_heartbeat(heartbeat_payload(12, 9, 4.26))
    assert beat == Heartbeat(1, 12, 9, 4.3) and beat.unacknowledged == 3
    assert read_heartbeat({"status": "online"}) is None
    assert read_heartbeat({"status": "offline"}) is None


def test_every_heartbeat_field_but_its_version_is_optional_and_unknown_ones_are_ignored():
    """A Pico box that says less (or a newer box that says more) is still read."""
    assert read_heartbeat({"status": "online", "heartbeat": 1}) == Heartbeat(1)
    assert read_heartbeat({"heartbeat": 2, "holds": 5, "battery": 80}) == Heartbeat(2, 5)
    malformed = {"heartbeat": 1, "holds": -1, "acked": "3", "waiting": True}
    assert read_heartbeat(malformed) == Heartbeat(1)
    for bad in (0, "1", None, True):
        assert read_heartbeat({"heartbeat": bad, "holds": 5}) is None


# --- the watch: pure, on a given clock ---------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_watch_speaks_once_when_a_table_waits_and_nothing_comes():
    clock = Clock()
    watch = IntakeWatch(clock)
    clock.now += 5
    watch.heartbeat(2, Heartbeat(1, holds=20, acked=15, waiting=4.5), committed=15)
    line = watch.stalled()
    assert line is not None and "table 2 waits with 5 entries" in line and "\n" not in line
    assert watch.stalled() is None  # once, not on every step
    clock.now += 1
    watch.heartbeat(2, Heartbeat(1, holds=20, acked=15, waiting=5.5), committed=15)
    assert watch.stalled() is None  # the gap: not again at once


def test_the_watch_is_quiet_while_events_come_or_nothing_waits():
    clock = Clock()
    watch = IntakeWatch(clock)
    clock.now += 10
    watch.heard_event()  # the intake works: a table merely waits for its resend
    watch.heartbeat(2, Heartbeat(1, holds=20, acked=15, waiting=9), committed=15)
    assert watch.stalled() is None
    clock.now += 5
    watch.heartbeat(2, Heartbeat(1, holds=20, acked=20, waiting=0), committed=20)
    assert watch.stalled() is None  # the head has all of it (only the ack was late)
    watch.heartbeat(3, Heartbeat(1, holds=20, acked=15, waiting=1.0), committed=15)
    assert watch.stalled() is None  # not waiting long enough yet
    watch.heartbeat(3, Heartbeat(1), committed=0)  # a box that says nothing of its outbox
    assert watch.stalled() is None
    watch.heartbeat(4, Heartbeat(1, holds=9, acked=2, waiting=30), committed=2)
    clock.now += 60  # that heartbeat is stale: the box has gone
    assert watch.stalled() is None


def test_recoveries_that_bring_nothing_come_less_and_less_often():
    clock = Clock()
    watch = IntakeWatch(clock, gap=10)
    times = []
    for _ in range(400):
        clock.now += 1
        watch.heartbeat(2, Heartbeat(1, holds=9, acked=2, waiting=50), committed=2)
        if watch.stalled() is not None:
            times.append(clock.now)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert gaps[:4] == [10, 20, 40, 80]
    watch.heard_event()  # one that helped: back to the short gap
    clock.now += 100
    watch.heartbeat(2, Heartbeat(1, holds=9, acked=2, waiting=50), committed=2)
    assert watch.stalled() is not None


def test_a_link_still_receiving_is_behind_not_stuck_and_is_not_reconnected():
    clock = Clock()
    watch = IntakeWatch(clock, gap=10)
    clock.now += 6  # the head's own thread has taken no event for 6 s ...
    watch.heartbeat(2, Heartbeat(1, holds=20, acked=15, waiting=5), committed=15)
    verdict = watch.check(arrived=clock.now - 0.5)  # ... but its link received one 0.5 s ago
    assert verdict is not None and not verdict.reconnect
    assert "behind, not cut off" in verdict.line and "table 2 waits with 5 entries" in verdict.line
    assert watch.check(arrived=clock.now) is None  # said once a gap, not every step
    assert watch.recoveries == 0
    clock.now += 11  # nothing at all reached the link since, not even a heartbeat:
    watch.heartbeat(2, Heartbeat(1, holds=20, acked=15, waiting=16), committed=15)
    verdict = watch.check(arrived=clock.now - 5, heard=clock.now - 5)
    assert verdict is not None and not verdict.reconnect  # it is not reading: starved
    assert "received nothing at all for 5.0 s" in verdict.line
    clock.now += 1  # the link reads its heartbeats but no QoS 1 message: now it is stuck
    watch.heartbeat(2, Heartbeat(1, holds=20, acked=15, waiting=17), committed=15)
    verdict = watch.check(arrived=clock.now - 6, heard=clock.now - 0.2)
    assert verdict is not None and verdict.reconnect and "for 6.0 s" in verdict.line
    assert watch.recoveries == 1


# --- a real stall, with the real broker --------------------------------------------------------


def _run_head(coord, head_link, topics, tmp_path, stop, highest, watch: dict, **service_args) -> None:
    """The head's owner thread, as `bunco-pi head` runs it, until ``stop``; then the highest
    entry of table 1 in its log goes to ``highest``."""
    with EventLog(tmp_path / "head.sqlite") as log:
        service = HeadService(coord, head_link, log, topics, make_players(None, 8, 2), **service_args)
        service.watch = IntakeWatch(service.clock, **watch)
        service.start()
        while not stop.is_set():
            service.step(timeout=0.05)
        highest.append(log.highest(1))


def _table_one(broker, topics, tmp_path):
    """Table 1's link and sender; it never resends by itself: only the head can help it."""
    link = MqttLink("table-1", broker.host, broker.port, username="table-1",
                    password=broker.credentials.password("table-1"), keepalive=5,
                    reconnect_delay=(0.05, 0.5), status_topic=topics.status("table-1"))
    return link, TableSender(link, topics, 1, Outbox(tmp_path / "t1.db"), heartbeat_every=0.5,
                             resend_after=60)


@pytest.mark.slow
def test_a_head_whose_intake_is_stuck_recovers_by_itself_within_seconds(private_broker,
                                                                        tmp_path, caplog):
    """The stall is made the way it happened: the head's link declares a Maximum Packet Size
    (the head itself no longer does), and mosquitto 2.0.11 keeps an in-flight slot for each
    bigger message it drops. Only the tables' heartbeats (QoS 0) still get through."""
    caplog.set_level(logging.INFO)
    broker, topics = private_broker, Topics(f"watch{int(time.time() * 1000) % 10**6}")
    coord = Coordinator(preset("classic"), preset_text("classic"), topics.night, 2,
                        entropy=random.Random(1))
    head_link = MqttLink("head", broker.host, broker.port, username="head",
                         password=broker.credentials.password("head"), max_packet_size=5120,
                         keepalive=5, reconnect_delay=(0.05, 0.5),
                         status_topic=topics.status("head"))
    stop = threading.Event()
    highest: list[int] = []

    def serve() -> None:
        watch = {"stall_after": 2.0, "heartbeat_every": 0.5}
        _run_head(coord, head_link, topics, tmp_path, stop, highest, watch)

    table_link, sender = _table_one(broker, topics, tmp_path)
    attacker = MqttLink("table-2", broker.host, broker.port, username="table-2",
                        password=broker.credentials.password("table-2"))
    head_thread = threading.Thread(target=serve, daemon=True)
    try:
        head_thread.start()
        table_link.start()
        attacker.start()
        assert table_link.wait_subscribed(10) and attacker.wait_connected(10)
        assert head_link.wait_subscribed(10)
        for _ in range(25):  # more than the head's 20 in-flight slots
            attacker.publish(topics.events(2), b"x" * 6000)
        time.sleep(0.5)
        for _ in range(5):
            sender.submit(table_event_payload(0, Roll((2, 3, 4))))
        start = time.monotonic()
        while sender.pending_count and time.monotonic() - start < 15:
            with contextlib.suppress(queue.Empty):
                sender.handle(table_link.inbox.get(timeout=0.05))
            sender.tick()
        took = time.monotonic() - start
        assert sender.pending_count == 0, "the head never got table 1's entries"
        assert took < 2.0 + 0.5 + 4.0  # stall_after, a heartbeat, and a reconnect
        lines = [r.getMessage() for r in caplog.records if "connecting to the broker again"
                 in r.getMessage()]
        # At most one reconnect, and it names the waiting table. Under a heavy load the 25 big
        # messages can trickle in slowly enough that the intake is never stuck for a whole
        # stall_after and the watchdog (rightly) sees a busy head, not a stuck one; the
        # entries' arrival in time above is what must hold either way.
        assert len(lines) <= 1, lines
        assert all("table 1 waits with 5 entries" in line for line in lines), lines
        print(f"stuck head recovered: table 1's 5 entries acknowledged after {took:.1f} s")
    finally:
        stop.set()
        head_thread.join(5)
        for link in (table_link, attacker, head_link):
            link.stop()
        sender.outbox.close()
    assert highest == [5]  # in the head's log, each once


@pytest.mark.slow
def test_a_head_merely_behind_does_not_reconnect_itself(private_broker, tmp_path, caplog):
    """An overloaded head still receives, only late: its network thread gets too little of
    the processor to take the tables' events as fast as they come (the broker holds the rest
    behind the head's 20 in-flight slots, while the tables' heartbeats, QoS 0, overtake
    them), and each of its own batches takes longer than the watch's patience. It is
    behind, not cut off: connecting again would have the broker send everything in flight
    again and the head say every table's view again, more work for a head already behind.
    Before, the watch counted an event only once the head's own thread had taken it, and
    this head reconnected itself at a slow batch."""
    caplog.set_level(logging.INFO)
    broker, topics = private_broker, Topics(f"busy{int(time.time() * 1000) % 10**6}")
    coord = Coordinator(preset("classic"), preset_text("classic"), topics.night, 2,
                        entropy=random.Random(1))

    def starved(event: object) -> None:  # the head's network thread takes 0.4 s an event
        if isinstance(event, Message) and event.qos and "/events" in event.topic:
            time.sleep(0.4)
        head_link.inbox.put(event)  # type: ignore[arg-type]

    head_link = MqttLink("head", broker.host, broker.port, username="head",
                         password=broker.credentials.password("head"), keepalive=5,
                         reconnect_delay=(0.05, 0.5), status_topic=topics.status("head"),
                         sink=starved)
    stop = threading.Event()
    highest: list[int] = []
    slow_batches: list[float] = []

    def slow(effects: list) -> None:  # each batch of entries costs the head 4 s
        if any(isinstance(e, PublishView | Refused) for e in effects):
            slow_batches.append(time.monotonic())
            time.sleep(4.0)

    def serve() -> None:
        watch = {"stall_after": 2.0, "heartbeat_every": 0.5, "gap": 1.0}
        _run_head(coord, head_link, topics, tmp_path, stop, highest, watch, on_effects=slow)

    table_link, sender = _table_one(broker, topics, tmp_path)
    head_thread = threading.Thread(target=serve, daemon=True)
    sent = 0
    try:
        head_thread.start()
        table_link.start()
        assert table_link.wait_subscribed(10) and head_link.wait_subscribed(10)
        end = time.monotonic() + 6.0
        # an entry every 0.1 s while the head lags (no round is being played: the head logs
        # each, refuses it and acknowledges it, which is as much work for the watch)
        due = time.monotonic()
        while time.monotonic() < end:
            if time.monotonic() >= due:
                sender.submit(table_event_payload(0, Roll((2, 3, 4))))
                sent, due = sent + 1, due + 0.1
            with contextlib.suppress(queue.Empty):
                sender.handle(table_link.inbox.get(timeout=0.02))
            sender.tick()
        # some 60 entries at 0.4 s each on the head's network thread, and 4 s a batch: about
        # 30 s on an idle machine, and more on a loaded one (a run of the whole suite)
        deadline = time.monotonic() + 90
        while sender.pending_count and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                sender.handle(table_link.inbox.get(timeout=0.05))
            sender.tick()
        assert len(slow_batches) >= 2, "the head was never slow: the test proves nothing"
        assert sender.pending_count == 0, "the head never got all of table 1's entries"
        lines = [r.getMessage() for r in caplog.records if "connecting to the broker again"
                 in r.getMessage()]
        assert lines == [], lines
        behind = [r.getMessage() for r in caplog.records if "behind, not cut off"
                  in r.getMessage()]
        assert behind and "table 1" in behind[0], behind
    finally:
        stop.set()
        head_thread.join(10)
        for link in (table_link, head_link):
            link.stop()
        sender.outbox.close()
    assert highest == [sent]  # in the head's log, each once
