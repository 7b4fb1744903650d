"""The engine refuses at the door every table entry the night record's audit would flag.

Each kind of forbidden entry goes from a table box's own sender (its outbox, over the
in-process broker) to the head's real shell (HeadService): the head refuses it with one log
line naming the table and the seq, acknowledges it (so the box does not send it forever), never
counts it, and the box is told in the ack. Then the head's record still passes the audit.
A property test plays random and hostile entries through the coordinator: whatever it takes,
the record it writes passes the audit.
"""

from __future__ import annotations

import logging
import queue
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bunco_pi.head.coordinator import Coordinator, Refused
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.service import HeadService, make_players
from bunco_pi.net import envelope
from bunco_pi.net.inproc import InprocBroker, InprocLink
from bunco_pi.net.link import Message
from bunco_pi.net.topics import Topics
from bunco_pi.protocol import TableEvent, table_event_payload
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.legality import BELL_NOT_RUNG, PLAY_OVER
from bunco_pi.rules.table_round import Bell, Pass, Roll, Tally, Undo
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.sender import TableSender
from tests.conftest import collect

TABLES = 2


class Room:
    """The head's shell and each table's delivery half, stepped on the test thread."""

    def __init__(self, tmp_path, rules: str = "classic") -> None:
        self.now = [100.0]
        self.rules = preset(rules)
        self.coord = Coordinator(self.rules, preset_text(rules), "r", TABLES,
                                 entropy=random.Random(1))
        self.topics = Topics("refused")
        broker = InprocBroker()
        self.log = EventLog(tmp_path / "head.sqlite")
        self.service = HeadService(self.coord, InprocLink(broker, "head"), self.log,
                                   self.topics, make_players(None, 4 * TABLES, TABLES),
                                   clock=lambda: self.now[0])
        self.service.start()
        self.senders: dict[int, TableSender] = {}
        for n in (1, 2, 3):  # table 3: a login the night has no table for
            link = InprocLink(broker, f"table-{n}")
            self.senders[n] = TableSender(link, self.topics, n, Outbox(tmp_path / f"t{n}.db"))
            link.start()
        self.settle()

    def settle(self) -> None:
        for _ in range(4):
            self.service.step(timeout=0)
            for sender in self.senders.values():
                inbox = sender.link.inbox
                while True:
                    try:
                        sender.handle(inbox.get_nowait())
                    except queue.Empty:
                        break

    def bell(self) -> None:
        self.now[0] += 10  # past the guard against a double press
        self.service.press_bell()
        self.settle()

    def send(self, table: int, entry, round_index: int | None = None) -> int:
        night = self.coord.night
        index = round_index if round_index is not None else (night.round_index if night else 0)
        seq = self.senders[table].submit(table_event_payload(index, entry))
        self.settle()
        return seq

    def start_round(self) -> None:
        self.bell()  # the night: seats drawn
        self.bell()  # round 1
        assert self.coord.night.phase == "playing"

    def close(self) -> None:
        self.service.link.stop()
        for sender in self.senders.values():
            sender.outbox.close()
        self.log.close()


@pytest.fixture
def room(tmp_path):
    r = Room(tmp_path)
    yield r
    r.close()


def assert_refused(room: Room, caplog, table: int, seq: int, reason: str) -> None:
    lines = [r.getMessage() for r in caplog.records
             if r.levelno >= logging.WARNING and f"table {table} seq {seq} refused" in
             r.getMessage()]
    assert len(lines) == 1, lines
    assert "\n" not in lines[0] and reason in lines[0]
    sender = room.senders[table]
    assert sender.refused is not None and sender.refused[0] == seq and reason in sender.refused[1]
    assert sender.pending_count == 0  # acknowledged: never sent again
    assert room.log.highest(table) == seq  # logged (the night's record), not counted
    record = room.coord.record()
    if record is not None:
        assert audit_record(record, room.rules) == []


def table_entries(room: Room, table: int) -> tuple:
    return room.coord.night.table(table).entries


def test_a_bell_nobody_rang_is_refused(room, caplog):
    """rules/audit.py: a table "heard a bell ... before any table ended the round or the host
    rang it". The table's round must not end early with its score as it stands."""
    room.start_round()
    room.send(2, Roll((1, 2, 3)))
    before = table_entries(room, 2)
    seq = room.send(2, Bell())
    assert table_entries(room, 2) == before and not room.coord.night.table(2).done
    assert_refused(room, caplog, 2, seq, BELL_NOT_RUNG)
    # once the head table's bunco rings it, the same entry is taken
    room.send(1, Roll((1, 1, 1)))
    assert room.coord.night.bell_rung
    room.send(2, Bell())
    assert room.coord.night.table(2).bell


def test_a_refusal_is_told_again_after_the_head_restarts(tmp_path, caplog):
    """A box away when its entry was refused hears it from the restarted head's ack."""
    room = Room(tmp_path)
    room.start_round()
    seq = room.send(2, Bell())
    assert room.senders[2].refused[0] == seq
    room.service.link.stop()
    room.log.close()
    coord = Coordinator(room.rules, preset_text("classic"), "r", TABLES, entropy=random.Random(1))
    log = EventLog(tmp_path / "head.sqlite")
    broker = InprocBroker()
    watcher = InprocLink(broker, "head")
    head = HeadService(coord, watcher, log, room.topics, make_players(None, 4 * TABLES, TABLES))
    box = InprocLink(broker, "table-2")
    box.start()
    try:
        with caplog.at_level(logging.WARNING):
            head.start()
            head.step(timeout=0)
        box.subscribe(room.topics.ack(2))  # retained: what a box coming back hears
        acks = [envelope.decode(m.topic, m.payload).payload for m in collect(box.inbox, 0.5)
                if isinstance(m, Message) and m.topic == room.topics.ack(2)]
        assert acks and acks[-1]["seq"] == seq and acks[-1]["refused"]["seq"] == seq, acks
        assert any(f"table 2 seq {seq} refused" in r.getMessage() for r in caplog.records)
    finally:
        box.stop()
        watcher.stop()
        log.close()
        for sender in room.senders.values():
            sender.outbox.close()


def _finish_table_two(room: Room) -> None:
    """Table 2 scores a point, the host rings the bell, table 2 hears it mid-turn, and its
    pass ends its play (1 to 0: no roll-off); the head table has not heard it yet."""
    room.start_round()
    room.send(1, Roll((1, 2, 3)))
    room.send(2, Roll((1, 2, 3)))
    room.bell()
    room.send(2, Bell())
    room.send(2, Pass())
    assert room.coord.night.table(2).done


def test_a_roll_after_the_tables_round_ended_is_refused(room, caplog):
    """rules/audit.py: "a roll ... after the table's finishing turn and roll-offs were over"."""
    _finish_table_two(room)
    before = table_entries(room, 2)
    seq = room.send(2, Roll((1, 1, 1)))
    assert table_entries(room, 2) == before
    assert_refused(room, caplog, 2, seq, PLAY_OVER)


def test_a_pass_twice_is_refused(room, caplog):
    """The finishing turn's pass ends the table's play; a second pass cannot happen."""
    _finish_table_two(room)
    seq = room.send(2, Pass())
    assert_refused(room, caplog, 2, seq, PLAY_OVER)


def test_a_tally_after_the_tables_round_ended_is_refused(room, caplog):
    _finish_table_two(room)
    seq = room.send(2, Tally("point"))
    assert_refused(room, caplog, 2, seq, PLAY_OVER)


def test_a_tally_between_rounds_is_refused(room, caplog):
    """A tally while the night shows its results (the round closed): no round is played."""
    _finish_table_two(room)
    room.send(1, Bell())  # the head table hears it and its pass ends its play: the round closes
    room.send(1, Pass())
    assert room.coord.night.phase == "results"
    seq = room.send(2, Tally("point"), round_index=0)
    assert_refused(room, caplog, 2, seq, "no round is being played (the night is 'results')")


@pytest.mark.parametrize("tally, reason", [
    (Tally("wipeout"), "do not play wipeout"),
    (Tally("three", 1), "three of the target number is a bunco"),
])
def test_a_tally_these_rules_do_not_play_is_refused(room, caplog, tally, reason):
    """rules/audit.py: "log entry ... cannot be: a '...' entry cannot happen under these
    house rules"."""
    room.start_round()
    seq = room.send(2, tally)
    assert table_entries(room, 2) == ()
    assert_refused(room, caplog, 2, seq, reason)


def test_an_undo_with_nothing_to_take_back_is_refused(room, caplog):
    """rules/audit.py: "an undo ... with nothing to take back"."""
    room.start_round()
    seq = room.send(2, Undo())
    assert_refused(room, caplog, 2, seq, "nothing to undo")


def test_an_entry_before_any_round_is_refused(room, caplog):
    room.bell()  # seats drawn; the round not started
    seq = room.send(2, Roll((1, 2, 3)))
    assert_refused(room, caplog, 2, seq, "no round is being played (the night is 'ready')")


def test_an_entry_for_another_round_is_refused(room, caplog):
    room.start_round()
    seq = room.send(2, Roll((1, 2, 3)), round_index=3)
    assert table_entries(room, 2) == ()
    assert_refused(room, caplog, 2, seq, "entry for round 4, but round 1 is on")


def test_an_entry_from_a_table_not_playing_tonight_is_refused(room, caplog):
    """rules/audit.py: "log entry ... is for a table that is not playing"."""
    room.start_round()
    seq = room.send(3, Roll((1, 2, 3)))
    assert_refused(room, caplog, 3, seq, "there are only 2 tables tonight")


def test_dice_that_are_not_dice_are_refused_by_the_protocol_and_the_box_is_told(room, caplog):
    """rules/audit.py: "log entry ... cannot be: ... are not three dice"; refused before the
    engine, by the protocol check, and told the same way."""
    room.start_round()
    sender = room.senders[2]
    seq = sender.outbox.append_many([{"round": 0, "entry": ["roll", [7, 7, 7]]}])[0]
    sender.resend_pending()
    room.settle()
    lines = [r.getMessage() for r in caplog.records if f"seq {seq} refused" in r.getMessage()]
    assert len(lines) == 1 and "table 2" in lines[0]
    assert sender.refused is not None and sender.refused[0] == seq
    assert sender.pending_count == 0 and table_entries(room, 2) == ()


def test_the_box_shows_the_refusal_until_the_next_round(tmp_path):
    """The table's own link (NetTableLink) puts the head's refusal on its status line."""
    from bunco_pi.table.net_link import NetTableLink

    room = Room(tmp_path)
    try:
        room.start_round()
        broker = room.service.link._broker
        link = NetTableLink(lambda sink: InprocLink(broker, "table-2", sink=sink),
                            room.topics, 2, tmp_path / "box2.db")
        posted: list = []
        link.attach(posted.append)
        link.open()

        def pump() -> None:
            for _ in range(4):
                room.service.step(timeout=0)
                for item in list(posted):
                    posted.remove(item)
                    link.take(item)

        pump()
        assert link.status == ""
        link.record_entry({"bell": True})  # a bell nobody rang (a modified box)
        pump()
        assert link.status.startswith("head refused #")
    finally:
        link.shut()
        room.close()


# --- whatever the head takes, its record passes the audit ------------------------------------

ENTRIES = st.one_of(
    st.builds(Roll, st.tuples(*[st.integers(1, 6)] * 3)),
    st.sampled_from([Tally("point"), Tally("bunco"), Tally("three", 2), Tally("three", 1),
                     Tally("wipeout"), Pass(), Bell(), Undo()]),
)
STEPS = st.lists(st.one_of(
    st.tuples(st.integers(1, 3), st.integers(-1, 2), ENTRIES),  # (table, round offset, entry)
    st.tuples(st.integers(1, 3), st.just(0), st.just(Bell())),  # a bell, rung or not
    st.just("bell"), st.just("hold")), min_size=1, max_size=80)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=st.sampled_from(["classic", "core", "rotate", "individual"]), steps=STEPS)
def test_whatever_the_head_takes_its_record_passes_the_audit(rules, steps):
    coord = Coordinator(preset(rules), preset_text(rules), "p", 3, entropy=random.Random(2))
    coord.start_night(make_players(None, 12, 3))
    coord.press_bell()
    seqs = {1: 0, 2: 0, 3: 0}
    refused = 0
    for step in steps:
        if step == "bell":
            coord.press_bell()
        elif step == "hold":
            coord.close_held_round()
        else:
            table, offset, entry = step
            seqs[table] += 1
            index = coord.night.round_index + (offset if offset != -1 else 0)
            effects = coord.accept([TableEvent(table, seqs[table], index, entry)])
            refused += sum(isinstance(e, Refused) for e in effects)
        record = coord.record()
        assert audit_record(record, preset(rules)) == [], (rules, step)
