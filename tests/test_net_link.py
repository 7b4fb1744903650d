"""Networked tables against a real head (Coordinator + EventLog + HeadIngest on a thread):
buttons on gpiozero MockFactory pins, luma's dummy display, the in-process broker for the
wiring, a real mosquitto for losing the Wi-Fi."""

from __future__ import annotations

import io
import json
import time
import uuid

import pytest
from luma.core.device import dummy
from pressing_hands import FakeClock, PressingHands

from bunco_pi.net import envelope
from bunco_pi.net.inproc import InprocBroker
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.rules.house import preset_text
from bunco_pi.rules.night import Player
from bunco_pi.rules.table_round import Bell, Pass, Roll, TableRound, Tally, Undo
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import ButtonConfig, TableConfig
from bunco_pi.table.events import DiceRoll
from bunco_pi.table.game import engine_entries
from bunco_pi.table.net_link import NetTableLink, json_entry, read_head_message
from bunco_pi.table.node import _LinkTick
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.screens import PlayingView, ResultsView, WaitingView
from tests.conftest import CutProxy
from tests.fake_head import FakeHead
from tests.service_head import ServiceHead

PINS = {
    1: {"point": 5, "three": 6, "bunco": 13, "pass": 19, "undo": 26},
    2: {"point": 17, "three": 27, "bunco": 22, "pass": 23, "undo": 24},
}
PLAYERS = [Player(f"p{i}", name) for i, name in
           enumerate(["Ann", "Bea", "Cat", "Dot", "Eve", "Fay", "Gil", "Hal"], start=1)]
SEATING = [("p1", "p2", "p3", "p4"), ("p5", "p6", "p7", "p8")]


class Box(PressingHands):
    """A networked table box and the hands that press its buttons."""

    def __init__(self, factory, number, connect, topics, outbox_path, link_clock=time.monotonic):
        self.factory = factory
        self.number = number
        self.clock = FakeClock()
        self.log = io.StringIO()
        self.link = NetTableLink(connect, topics, number, outbox_path, clock=link_clock)
        config = TableConfig(number=number, buttons=ButtonConfig(pins=PINS[number]))
        self.box = TableBox(config, None, self.link, ":memory:",
                            device=dummy(width=128, height=64, mode="1"), clock=self.clock,
                            log=self.log)
        self.node = self.box.node
        self.box.start()
        self.sync()

    def sync(self):
        assert self.node.sync(5.0)

    def pin(self, role):
        return self.factory.pin(PINS[self.number][role])

    def snap(self):
        self.sync()
        return self.node.snapshot()

    def wait_for(self, test, timeout=5.0):
        deadline = time.monotonic() + timeout
        while not test(self.snap()):
            if time.monotonic() > deadline:
                raise AssertionError(f"table {self.number} never got there: {self.snap()}")
            time.sleep(0.01)
        return self.snap()

    def view(self):
        self.sync()
        return self.node.view()

    def last_seq(self):
        """The outbox's last seq, read through a connection of this thread's own."""
        self.sync()
        with Outbox(self.link.outbox_path) as outbox:
            return outbox.last_seq

    def close(self):
        self.box.stop()


def same_round(local: TableRound, head: TableRound) -> bool:
    return (local.entries == head.entries and local.seat_points == head.seat_points
            and local.phase == head.phase and local.bell == head.bell
            and local.roller_seat == head.roller_seat)


@pytest.fixture
def inproc(tmp_path, mock_factory):
    broker = InprocBroker()
    topics = Topics(f"n{uuid.uuid4().hex[:6]}")
    boxes = []

    def connect_as(name):
        return lambda sink: broker.link(name, status_topic=topics.status(name), sink=sink)

    heads = []

    def make_head(tables=2):
        heads.append(FakeHead(connect_as("head"), topics, tmp_path / "head.sqlite",
                              tables=tables))
        return heads[-1]

    def make_box(number, outbox=None):
        box = Box(mock_factory, number, connect_as(table_node(number)), topics,
                  outbox or tmp_path / f"outbox-{number}.sqlite")
        boxes.append(box)
        return box

    yield make_head, make_box
    for box in boxes:
        box.close()
    for head in heads:
        head.close()


def test_json_entries_are_the_engine_entries_the_head_gets():
    for entry in (Roll((1, 2, 3)), Tally("three"), Pass(), Bell(), Undo()):
        assert engine_entries(json_entry(entry)) == [entry]
    # The book's undo of k changes is k of the engine's Undo entries, as the head gets them.
    assert engine_entries({"undo": 3}) == [Undo(), Undo(), Undo()]


def test_head_messages_are_read_only_in_the_heads_envelope():
    from bunco_pi.net import envelope

    topic = "bunco/n1/state"
    assert read_head_message(topic, envelope.message("head", {"phase": "ready"})) == {
        "phase": "ready"}
    assert read_head_message(topic, envelope.message("table-2", {"phase": "x"})) is None
    # bare JSON carries no sender: anyone could have written it
    assert read_head_message(topic, json.dumps({"v": 1, "phase": "lobby"}).encode()) is None
    assert read_head_message(topic, b"not json") is None
    # a protocol version this box does not speak
    assert read_head_message(topic, envelope.message("head", {"v": 2, "phase": "x"})) is None
    assert read_head_message(topic, envelope.message("head", {"v": 1, "phase": "x"})) == {
        "v": 1, "phase": "x"}


def test_a_round_button_by_button_bell_results_and_the_next_round(inproc):
    make_head, make_box = inproc
    head = make_head()
    head.start_night(PLAYERS, SEATING)
    t1, t2 = make_box(1), make_box(2)
    t2.wait_for(lambda s: s.mode == "waiting")
    # No round on: a press is refused on screen and nothing is stored or sent.
    t2.tap("point")
    assert t2.node.flash == "no round on: wait"
    assert t2.last_seq() == 0

    head.bell()  # the host starts the round
    t1.wait_for(lambda s: s.mode == "playing")
    t2.wait_for(lambda s: s.mode == "playing")
    # Names on the screen, ids in the fold (as the head folds it).
    assert t2.node.view().roller == "Eve"
    assert t2.snap().round.setup.seats == SEATING[1]
    assert t2.snap().round.setup.can_end_round is False
    assert t1.snap().round.setup.can_end_round is True

    t2.tap("point", 3)            # Eve: 3
    t2.tap("pass")                # dice to Fay
    t2.tap("three")               # Fay: 5
    t2.tap("point", 2)            # Fay: 7
    t2.hold("undo")               # take back Fay's whole turn: {"undo": 3} -> three Undo
    t2.tap("point")               # Fay: 1
    t2.tap("undo")                # {"undo": 1}
    t2.tap("point", 2)            # Fay: 2
    local = t2.snap().round
    assert local.team_scores == (3, 2)
    night = head.wait_until(lambda n: len(n.table(2).entries) == len(local.entries))
    assert same_round(local, night.table(2))

    # The head table reaches 21: the bell rings everywhere.
    t1.tap("point", 20)
    assert t1.snap().round.team_scores == (20, 0)
    t1.tap("point")
    assert t1.snap().round.ended_round and t1.snap().round.done
    t2.wait_for(lambda s: s.round.bell)
    assert isinstance(t2.view(), PlayingView) and t2.view().bell
    assert t2.snap().round.entries[-1] == Bell()  # at that point of the table's stream
    t2.tap("point", 2)            # Fay finishes her turn: still scoring
    assert not t2.snap().round.done
    t2.tap("pass")                # her turn is over: so is the round here
    assert t2.snap().round.done

    night = head.wait_until(lambda n: n.phase == "results")
    last = night.history[-1]
    assert last.tables[1].team_scores == t2.snap().round.team_scores == (3, 4)
    assert last.tables[0].team_scores == (21, 0)
    t1.wait_for(lambda s: t1.node.head_result is not None)
    view = t1.view()
    assert isinstance(view, ResultsView) and view.won and (view.score_a, view.score_b) == (21, 0)
    assert any("->" in line for line in view.moves)
    # The head has closed the round: an undo can no longer reopen it here.
    sent = t2.last_seq()
    assert sent == 18  # every entry made, undos and the bell included
    t2.tap("undo")
    assert t2.node.flash == "round closed by the head" and t2.snap().mode == "results"
    assert t2.last_seq() == sent

    # The next round, with the new seating from the head.
    head.bell()
    night = head.wait_until(lambda n: n.phase == "playing" and n.round_index == 1)
    t2.wait_for(lambda s: s.mode == "playing" and s.round.setup.target == 2)
    assert t2.snap().round.setup.seats == night.table(2).setup.seats
    t2.tap("point")
    head.wait_until(lambda n: n.table(2).seat_points[0] == 1)


def test_undo_of_the_bunco_that_rang_the_bell_leaves_the_head_table_finishing(inproc):
    make_head, make_box = inproc
    head = make_head()
    head.start_night(PLAYERS, SEATING)
    t1, t2 = make_box(1), make_box(2)
    head.bell()
    t1.wait_for(lambda s: s.mode == "playing")
    t1.tap("point")
    t1.tap("bunco")                # ends the round at the head table, the bell rings
    assert t1.snap().round.done
    head.wait_until(lambda n: n.bell_rung)
    t2.wait_for(lambda s: s.round is not None and s.round.bell)
    t1.tap("undo")                 # a mistake: reopen; the head's bell stays rung
    t1.wait_for(lambda s: s.mode == "playing" and s.round.bell and not s.round.done)
    assert t1.snap().round.team_scores == (1, 0)
    local = t1.snap().round
    night = head.wait_until(lambda n: len(n.table(1).entries) == len(local.entries))
    assert same_round(local, night.table(1))


def test_restart_mid_round_resumes_from_the_outbox(inproc, tmp_path):
    make_head, make_box = inproc
    head = make_head()
    head.start_night(PLAYERS, SEATING)
    t1 = make_box(1)
    head.bell()
    t1.wait_for(lambda s: s.mode == "playing")
    t1.tap("point", 4)
    t1.tap("pass")
    t1.tap("three")
    before = t1.snap().round
    t1.close()                     # the power goes

    again = make_box(1, tmp_path / "outbox-1.sqlite")
    snap = again.wait_for(lambda s: s.mode == "playing")
    assert snap.round == before and again.last_seq() == 6
    again.tap("point")
    local = again.snap().round
    assert local.team_scores == (4, 6)
    night = head.wait_until(lambda n: len(n.table(1).entries) == len(local.entries))
    assert same_round(local, night.table(1))
    assert len([e for e in head.call(lambda h: h.applied) if e.table == 1]) == 7


def test_a_fresh_outbox_on_a_night_under_way_numbers_after_the_heads_ack(inproc, tmp_path):
    make_head, make_box = inproc
    head = make_head()
    head.start_night(PLAYERS, SEATING)
    t2 = make_box(2)
    head.bell()
    t2.wait_for(lambda s: s.mode == "playing")
    t2.tap("point", 3)
    head.wait_until(lambda n: len(n.table(2).entries) == 3)
    t2.close()
    # The card is replaced: a new, empty outbox.
    fresh = make_box(2, tmp_path / "fresh-outbox.sqlite")
    fresh.wait_for(lambda s: s.mode == "playing")
    assert fresh.link.sender.ack_seen
    fresh.tap("point")
    assert fresh.last_seq() == 4  # continues after the head's seq 3
    head.wait_until(lambda n: len(n.table(2).entries) == 4)


def test_a_whole_night_at_one_table_results_break_and_prizes_follow_the_head(inproc):
    make_head, make_box = inproc
    head = make_head(tables=1)
    head.start_night(PLAYERS[:4], SEATING[:1])
    t1 = make_box(1)
    view = t1.view()
    assert isinstance(view, WaitingView) and view.players == ("Ann", "Bea", "Cat", "Dot")
    seen = set()
    for index in range(24):
        head.bell()                # the host's bell: the next round (or the break)
        if index == 12:            # classic: a break after two sets
            t1.wait_for(lambda s: s.mode == "break")
            seen.add(type(t1.view()).__name__)
            head.bell()            # the break is over
        t1.wait_for(lambda s, i=index: s.mode == "playing" and t1.link.round_index == i)
        t1.tap("bunco")            # the head table's BUNCO ends the round
        t1.wait_for(lambda s: s.mode == "ended" or t1.node.head_result is not None)
        night = head.night()
        assert night.history[-1].tables[0].team_scores == t1.node.finished_rounds[-1].state.team_scores
    t1.wait_for(lambda s: s.mode == "ended")
    view = t1.view()
    assert type(view).__name__ == "EndView" and view.prizes
    assert seen == {"BreakView"}
    assert head.night().phase == "ended"


def test_scoring_offline_is_delivered_exactly_once_after_reconnect(broker, mock_factory,
                                                                   tmp_path):
    topics = Topics(f"w{uuid.uuid4().hex[:6]}")
    proxy = CutProxy(broker.port)

    def connect(name, port):
        def make(sink):
            return MqttLink(name, broker.host, port, username=name,
                            password=broker.credentials.password(name),
                            status_topic=topics.status(name), sink=sink,
                            client_id=f"{name}-{topics.night}", keepalive=2,
                            reconnect_delay=(0.05, 0.3))
        return make

    head = FakeHead(connect("head", broker.port), topics, tmp_path / "head.sqlite", tables=2)
    table = None
    try:
        head.start_night(PLAYERS, SEATING)
        table = Box(mock_factory, 2, connect("table-2", proxy.port), topics,
                    tmp_path / "outbox.sqlite")
        head.bell()
        table.wait_for(lambda s: s.mode == "playing")
        table.tap("point", 2)
        head.wait_until(lambda n: len(n.table(2).entries) == 2)
        table.wait_for(lambda s: table.link.pending == 0)   # both acknowledged

        proxy.cut()                # the Wi-Fi goes
        deadline = time.monotonic() + 10
        while table.link.status != "offline" and time.monotonic() < deadline:
            table.sync()
            time.sleep(0.02)
        assert table.link.status == "offline"
        table.tap("point", 3)
        table.tap("pass")
        table.tap("three")
        view = table.view()
        assert isinstance(view, PlayingView) and view.warning == "offline, 5 waiting"
        assert view.score_a == 5 and view.score_b == 5   # scoring goes on, on the screen
        assert len(head.night().table(2).entries) == 2

        proxy.restore()            # back: everything pending is resent
        local = table.snap().round
        night = head.wait_until(lambda n: len(n.table(2).entries) == len(local.entries),
                                timeout=15)
        assert same_round(local, night.table(2))
        table.wait_for(lambda s: table.link.pending == 0)
        assert table.view().warning == ""
        applied = [(e.table, e.seq) for e in head.call(lambda h: h.applied)]
        assert applied == [(2, seq) for seq in range(1, 8)]   # each once, in order
    finally:
        if table is not None:
            table.close()
        head.close()
        proxy.close()


def test_a_wrong_password_is_shown_on_the_screen(broker, mock_factory, tmp_path):
    topics = Topics(f"p{uuid.uuid4().hex[:6]}")

    def connect(sink):
        return MqttLink("table-1", broker.host, broker.port, username="table-1",
                        password="wrong", status_topic=topics.status("table-1"), sink=sink,
                        client_id=f"table-1-{topics.night}", reconnect_delay=(0.05, 0.3))

    table = Box(mock_factory, 1, connect, topics, tmp_path / "outbox.sqlite")
    try:
        deadline = time.monotonic() + 10
        while "refused" not in table.view().message and time.monotonic() < deadline:
            time.sleep(0.05)
        assert table.view().message.startswith("broker refused")
    finally:
        table.close()


def test_a_box_that_boots_with_no_word_from_the_head_resumes_its_round(inproc, tmp_path):
    make_head, make_box = inproc
    head = make_head()
    head.start_night(PLAYERS, SEATING)
    t2 = make_box(2)
    head.bell()
    t2.wait_for(lambda s: s.mode == "playing")
    t2.tap("point", 2)
    before = t2.snap().round
    t2.close()
    assert (tmp_path / "outbox-2.sqlite.state.json").exists()

    # Power back, but the head is not heard from (a broker with nothing on it).
    broker = InprocBroker()
    alone = Box(t2.factory, 2, lambda sink: broker.link("table-2", sink=sink),
                t2.link.topics, tmp_path / "outbox-2.sqlite")
    try:
        snap = alone.wait_for(lambda s: s.mode == "playing")
        assert snap.round == before
        alone.tap("point")
        assert alone.snap().round.team_scores == (3, 0)
        assert alone.last_seq() == 3
    finally:
        alone.close()


def test_sensor_rolls_carry_their_seq_so_a_repeat_after_a_restart_is_not_scored(inproc,
                                                                               tmp_path):
    make_head, make_box = inproc
    head = make_head()
    head.start_night(PLAYERS, SEATING)
    t1 = make_box(1)
    head.bell()
    t1.wait_for(lambda s: s.mode == "playing")
    assert t1.link.last_roll_seq() is None
    t1.node.post(DiceRoll(41, (1, 1, 2)))
    t1.node.post(DiceRoll(42, (2, 3, 4)))
    t1.sync()
    assert t1.link.last_roll_seq() == 42
    local = t1.snap().round
    assert local.team_scores == (2, 0) and local.roller_seat == 2
    night = head.wait_until(lambda n: len(n.table(1).entries) == 2)
    assert same_round(local, night.table(1))


def test_a_fresh_table_waits_for_the_heads_ack_or_its_absence_before_the_first_entry(
        mock_factory, tmp_path):
    broker, topics = InprocBroker(), Topics(f"a{uuid.uuid4().hex[:6]}")
    head = broker.link("head")
    head.start()
    now = [0.0]
    table = Box(mock_factory, 1, lambda sink: broker.link("table-1", sink=sink), topics,
                tmp_path / "outbox.sqlite", link_clock=lambda: now[0])
    try:
        state = {"v": 1, "phase": "playing", "round_index": 0, "set": 1, "round": 1,
                 "target": 1, "bell": False, "rules_toml": preset_text("classic"),
                 "players": [{"id": p.id, "name": p.name, "ghost": False} for p in PLAYERS[:4]],
                 "seating": [list(SEATING[0])]}
        # A state queued for us (not a retained delivery) proves nothing about acks yet.
        head.publish(topics.state(), envelope.message("head", state))
        assert table.snap().mode == "waiting"
        assert table.view().message == "joining the night..."
        now[0] += 5.0              # connected a while, and no retained ack came: none exists
        table.node.post(_LinkTick())
        table.wait_for(lambda s: s.mode == "playing")
        table.tap("point")
        assert table.last_seq() == 1
    finally:
        table.close()


def test_the_host_asks_a_table_to_undo_and_it_is_entered_once(tmp_path, mock_factory):
    from bunco_pi.hardware.bell import BellPressed
    from bunco_pi.head.eventlog import EventLog
    from bunco_pi.head.service import UndoRequested
    from bunco_pi.protocol import UndoCommand, command_payload

    broker = InprocBroker()
    topics = Topics(f"u{uuid.uuid4().hex[:6]}")

    def connect_as(name):
        return lambda sink: broker.link(name, status_topic=topics.status(name), sink=sink)

    head = ServiceHead(connect_as("head"), topics, tmp_path / "head.sqlite", PLAYERS)
    t2 = Box(mock_factory, 2, connect_as(table_node(2)), topics, tmp_path / "outbox-2.sqlite")
    try:
        head.put(BellPressed())  # the night starts: seats drawn
        t2.wait_for(lambda s: s.mode == "waiting" and t2.link.state is not None
                    and t2.link.state.get("phase") == "ready")
        time.sleep(0.6)  # the bell's own guard against a chattering contact
        head.put(BellPressed())  # the round starts
        t2.wait_for(lambda s: s.mode == "playing")
        t2.tap("point", 3)
        assert t2.snap().round.team_scores[1] + t2.snap().round.team_scores[0] == 3
        head.put(UndoRequested(2))
        t2.wait_for(lambda s: sum(s.round.team_scores) == 2)
        assert t2.node.flash == "undone by the host"
        # a redelivered command (same id) is not entered again
        with Outbox(t2.link.outbox_path) as outbox:
            commands = [e.payload for e in outbox.entries() if "command" in e.payload]
        assert len(commands) == 1 and commands[0]["entry"] == ["undo"]
        again = command_payload(UndoCommand(commands[0]["command"], commands[0]["round"]))
        head.link.publish(topics.command(2), envelope.message("head", again), qos=1)
        # a command for another round does nothing
        other = command_payload(UndoCommand(commands[0]["command"] + 100, 5))
        head.link.publish(topics.command(2), envelope.message("head", other), qos=1)
        t2.sync()
        time.sleep(0.2)
        t2.sync()
        assert sum(t2.snap().round.team_scores) == 2
        assert t2.last_seq() == 4  # three points and one undo
        deadline = time.monotonic() + 5
        while head.coord.night.table(2).entries != t2.snap().round.entries:
            assert time.monotonic() < deadline, "the head never got the undo"
            time.sleep(0.02)
        # no table 9, no round on: refused with a line, nothing sent
        assert head.service.request_undo(9) is False
    finally:
        t2.close()
        head.close()
    with EventLog(tmp_path / "head.sqlite") as log:
        asked = [e.payload for e in log.replay() if e.payload.get("kind") == "command"]
    assert asked == [{"kind": "command", "command": "undo", "table": 2, "round": 0}]


def test_a_state_or_view_older_than_the_one_held_moves_nothing(tmp_path, mock_factory):
    """What a broker restored from its last autosave (or a session redelivers) is older than
    what the box holds: the box ignores it, and takes what the head says next."""
    from bunco_pi.hardware.bell import BellPressed

    broker = InprocBroker()
    topics = Topics(f"o{uuid.uuid4().hex[:6]}")

    def connect_as(name):
        return lambda sink: broker.link(name, status_topic=topics.status(name), sink=sink)

    head = ServiceHead(connect_as("head"), topics, tmp_path / "head.sqlite", PLAYERS)
    t2 = Box(mock_factory, 2, connect_as(table_node(2)), topics, tmp_path / "outbox-2.sqlite")
    try:
        head.put(BellPressed())
        t2.wait_for(lambda s: t2.link.state is not None and t2.link.state.get("phase") == "ready")
        ready = dict(t2.link.state)
        time.sleep(0.6)
        head.put(BellPressed())
        t2.wait_for(lambda s: s.mode == "playing")
        playing = dict(t2.link.state)
        assert playing["pos"] > ready["pos"] and playing["epoch"] == ready["epoch"]
        # the broker comes back from an autosave made before the round started
        for topic, old in ((topics.state(), ready),
                           (topics.view(2), {**t2.link.view, "seats": ["an", "old", "view", "!"],
                                             "pos": ready["pos"]})):
            head.link.publish(topic, envelope.message("head", old), retain=True)
        t2.sync()
        time.sleep(0.2)
        assert t2.snap().mode == "playing" and t2.link.state == playing
        assert t2.link.view["seats"] != ["an", "old", "view", "!"]
        t2.tap("point")  # and the box still scores
        assert sum(t2.snap().round.team_scores) == 1
    finally:
        t2.close()
        head.close()


def test_a_state_waits_for_the_seating_it_names(tmp_path, mock_factory):
    """The small state names the position of the seating and rules it goes with: a box
    holding an older seating waits for the one named before it starts the round."""
    from bunco_pi.net.delivery import ack_payload
    from bunco_pi.protocol import NightPosition

    broker = InprocBroker()
    topics = Topics(f"s{uuid.uuid4().hex[:6]}")
    head = broker.link("head")
    head.start()
    t2 = Box(mock_factory, 2, lambda sink: broker.link("table-2", sink=sink), topics,
             tmp_path / "outbox-2.sqlite")

    def say(topic, payload, pos):
        head.publish(topic, envelope.message("head", NightPosition("e1", pos).stamp(payload)),
                     retain=True)

    try:
        head.publish(topics.ack(2), envelope.message("head", ack_payload(0)), retain=True)
        players = [{"id": p.id, "name": p.name, "ghost": False} for p in PLAYERS]
        say(topics.rules(), {"v": 1, "rules_toml": preset_text("classic")}, 1)
        say(topics.seating(1), {"v": 1, "page": 1, "seating_first": 1, "players": players,
                                "seating": [list(SEATING[1]), list(SEATING[0])]}, 1)
        state = {"v": 1, "night": topics.night, "tables": 2, "phase": "playing",
                 "round_index": 0, "set": 1, "round": 1, "target": 1, "bell": False,
                 "traveler": None, "parts": {"seating": 5, "rules": 1}, "parts_v": 2}
        say(topics.state(), state, 5)
        t2.sync()
        time.sleep(0.2)
        assert t2.snap().mode == "waiting"  # seating 5 is not here: the one held is older
        say(topics.seating(1), {"v": 1, "page": 1, "seating_first": 1, "players": players,
                                "seating": [list(s) for s in SEATING]}, 5)
        t2.wait_for(lambda s: s.mode == "playing")
        assert t2.snap().round.setup.seats == SEATING[1]
    finally:
        t2.close()
        head.stop()
