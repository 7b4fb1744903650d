"""The bell as the tables hear it over a real mosquitto: one small message, the state. A
table's view is said again only when something of that table's changed."""

from __future__ import annotations

import queue
import random
import time
from pathlib import Path

from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog, IncomingEvent
from bunco_pi.head.service import HeadService, make_players
from bunco_pi.net import envelope
from bunco_pi.net.link import Connected, Message
from bunco_pi.net.topics import table_node
from bunco_pi.protocol import TableEvent, table_event_payload
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.table_round import Roll

TABLES = 50


def heard(inbox, quiet: float = 0.5, limit: float = 10.0, views: int = 0) -> list[Message]:
    """Every message that arrives until none has for ``quiet`` seconds, and at least
    ``views`` different tables' views have come (a loaded machine can pause longer than
    ``quiet`` in the middle of a round's views; only ``limit`` ends the wait for them)."""
    out: list[Message] = []
    deadline = time.monotonic() + limit

    def waiting() -> bool:
        return len({m.topic for m in out if m.topic.endswith("/view")}) < views

    last = time.monotonic()
    while (time.monotonic() - last < quiet or waiting()) and time.monotonic() < deadline:
        try:
            item = inbox.get(timeout=0.05)
        except queue.Empty:
            continue
        if isinstance(item, Message):
            out.append(item)
            last = time.monotonic()
    return out


def test_the_bell_is_the_state_alone_and_a_view_goes_out_only_when_it_changed(
        make_link, topics, tmp_path: Path) -> None:
    coord = Coordinator(preset("classic"), preset_text("classic"), topics.night, TABLES,
                        entropy=random.Random(5))
    watcher = make_link("watcher")
    watcher.subscribe(f"{topics.prefix}/#")
    assert watcher.wait_subscribed(5)
    with EventLog(tmp_path / "night.sqlite") as eventlog:
        service = HeadService(coord, make_link("head", start=False), eventlog, topics,
                              make_players(None, TABLES * 4, TABLES))
        service.start()
        assert service.link.wait_connected(5)
        service.carry_out(coord.start_night(service.players))
        service.carry_out(coord.press_bell())  # round 1 starts
        started = heard(watcher.inbox, views=TABLES)
        views = {m.topic for m in started if m.topic.endswith("/view")}
        assert len(views) == TABLES  # a new round: every table's seats and target

        # table 7 rolls: its own view changes, no other
        eventlog.commit([IncomingEvent(7, 1, table_node(7),
                                       table_event_payload(0, Roll((1, 1, 4))))])
        service.carry_out(coord.accept([TableEvent(7, 1, 0, Roll((1, 1, 4)))]))
        rolled = heard(watcher.inbox)
        assert [m.topic for m in rolled] == [topics.view(7)]
        assert envelope.decode(rolled[0].topic, rolled[0].payload).payload["score"] == [2, 0]

        service.carry_out(coord.press_bell())  # the host's bell ends the round
        rung = heard(watcher.inbox)
        assert [m.topic for m in rung] == [topics.state()]
        state = envelope.decode(rung[0].topic, rung[0].payload).payload
        assert state["bell"] is True and state["phase"] == "finishing"
        # a few hundred bytes whatever the night's size: about 250 of them are the house rules
        # a Pico box folds its round with (``fold``), the rest the night's phase and position
        assert len(rung[0].payload) < 600, "the bell's message is a few hundred bytes"

        # the head reconnects: a fresh snapshot says every view again (the broker may have lost
        # them), even those that did not change
        service.link.inbox.put(Connected(session_present=True))
        service.step(timeout=0.1)
        again = heard(watcher.inbox, views=TABLES)
        assert {m.topic for m in again if m.topic.endswith("/view")} == views
        service.link.stop()
