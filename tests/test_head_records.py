"""The night record is built and written off the head's loop: at a round end the results go
out first, and no table waits for the file."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog, IncomingEvent
from bunco_pi.head.records import RecordWriter
from bunco_pi.head.service import HeadService, make_players
from bunco_pi.net import envelope
from bunco_pi.net.link import Message
from bunco_pi.net.topics import table_node
from bunco_pi.protocol import TableEvent, table_event_payload
from bunco_pi.recordfile import write_record
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.night import Night, Player, StartRound
from bunco_pi.rules.table_round import Bell, Pass, Tally
from tests.conftest import pump

TABLES = 50


class HeldWrite:
    """Writes the record only once the test lets it: the file's absence is then the proof
    that whatever happened meanwhile did not wait for it."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, path: str, record: dict) -> None:
        self.started.set()
        if not self.release.wait(10):
            raise RuntimeError("the test never released the record write")
        write_record(path, record)


def test_a_round_end_at_50_tables_publishes_results_before_the_record_is_written(
        make_link, topics, tmp_path: Path) -> None:
    record = tmp_path / "night.json"
    held = HeldWrite()
    writer = RecordWriter(str(record), write=held)
    coord = Coordinator(preset("classic"), preset_text("classic"), topics.night, TABLES,
                        entropy=random.Random(3))
    watcher = make_link("watcher")
    watcher.subscribe(topics.state())
    for table in range(1, TABLES + 1):
        watcher.subscribe(topics.view(table))
    assert watcher.wait_subscribed(5)
    with EventLog(tmp_path / "night.sqlite") as eventlog:
        service = HeadService(coord, make_link("head", start=False), eventlog, topics,
                              make_players(None, TABLES * 4, TABLES), records=writer)
        service.start()
        assert service.link.wait_connected(5)
        service.carry_out(coord.start_night(service.players))
        service.carry_out(coord.press_bell())  # round 1 starts
        service.carry_out(coord.press_bell())  # the host's bell ends it
        for table in range(1, TABLES + 1):  # each table finishes: the last one closes the round
            # as the head's ingest hands them over: committed to the log, then accepted
            events = [TableEvent(table, seq, 0, entry) for seq, entry in enumerate(
                (Bell(), Tally("point"), Pass(), Pass(), Pass(), Pass()), start=1)]
            eventlog.commit(IncomingEvent(e.table, e.seq, table_node(e.table),
                                          table_event_payload(e.round_index, e.entry))
                            for e in events)
            service.carry_out(coord.accept(events))
        assert coord.night.phase == "results"
        # the loop came back at once: the record is being built or written, not yet on disk
        assert held.started.wait(10), "the round end never asked for the record"
        assert not record.exists()

        results_state = False
        views_after_results: set[int] = set()

        def note(item: object) -> None:
            nonlocal results_state
            if not isinstance(item, Message):
                return
            payload = envelope.decode(item.topic, item.payload).payload
            if item.topic == topics.state() and payload.get("phase") == "results":
                results_state = True
            elif item.topic != topics.state() and "result" in payload:
                views_after_results.add(int(item.topic.split("/")[-2]))

        assert pump(watcher.inbox, note,
                    lambda: results_state and len(views_after_results) == TABLES, timeout=20), \
            f"results state {results_state}, {len(views_after_results)} of {TABLES} views"
        assert not record.exists(), "the record was written before the tables had their results"

        held.release.set()
        assert writer.close(20)
        service.link.stop()
    data = json.loads(record.read_text())
    assert len(data["rounds"]) == 1 and len(data["rounds"][0]["tables"]) == TABLES


def test_requests_made_while_a_record_is_written_collapse_into_the_newest(tmp_path) -> None:
    record = tmp_path / "night.json"
    held = HeldWrite()
    writer = RecordWriter(str(record), write=held)
    players = [Player(f"p{i}", f"P{i}") for i in range(8)]
    night = Night.start(preset("classic"), players, [tuple(f"p{i}" for i in range(4)),
                                                   tuple(f"p{i}" for i in range(4, 8))])
    writer.request(night, [])
    assert held.started.wait(10)
    started = night.apply(StartRound())
    for events in ([StartRound()], [StartRound()], [StartRound()]):  # three while one is held
        writer.request(started, events)
    held.release.set()
    assert writer.close(20)
    assert writer.written == 2  # the held one, then only the newest of the three
    assert len(json.loads(record.read_text())["log"]) == 1  # the newest request's night
