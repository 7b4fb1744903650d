"""The virtual scorekeeper: which buttons she presses for a roll, and two networked tables
played by her through MockFactory pins against a real coordinator, bell and all."""

from __future__ import annotations

import dataclasses
import time
import uuid

import pytest
from luma.core.device import dummy

from bunco_pi.net.inproc import InprocBroker
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.rules.house import Wipeout, preset
from bunco_pi.rules.night import Player
from bunco_pi.rules.table_round import EXTRA, Bell, Pass, TableRound, TableSetup, Tally
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import ButtonConfig, TableConfig
from bunco_pi.table.net_link import NetTableLink
from bunco_pi.table.simulated_scorekeeper import SimulatedScorekeeper, presses_for
from tests.fake_head import FakeHead

CLASSIC = preset("classic")
SEATS = ("a", "b", "c", "d")


def round_at(target, rules=CLASSIC):
    return TableRound.begin(TableSetup(1, SEATS, target, rules, can_end_round=True))


@pytest.mark.parametrize(("dice", "presses"), [
    ((3, 3, 5), ["point", "point"]),
    ((3, 1, 2), ["point"]),
    ((3, 3, 3), ["bunco"]),
    ((2, 2, 2), ["three"]),
    ((1, 2, 4), ["pass"]),
    ((1, 1, 1), ["three"]),
])
def test_presses_for_a_roll_in_classic_rules(dice, presses):
    assert presses_for(dice, round_at(3)) == presses


def test_a_wipeout_is_a_held_pass_and_the_extra_phase_needs_a_pass():
    rules = dataclasses.replace(CLASSIC, wipeout=Wipeout(enabled=True, ends_turn=True))
    assert presses_for((1, 1, 1), round_at(3, rules)) == ["pass!"]
    every = dataclasses.replace(CLASSIC, round=dataclasses.replace(
        CLASSIC.round, every_player_rolls=True))
    state = round_at(3, every).apply(Tally("bunco"))  # ends the round; b, c, d roll once each
    assert state.phase == EXTRA
    assert presses_for((3, 5, 6), state) == ["point", "pass"]


def test_the_buttons_she_would_press_score_what_the_dice_score():
    # Every roll of three dice, in every target: her presses give the points the roll gives.
    from bunco_pi.rules.scoring import score_roll

    for target in range(1, 7):
        for a in range(1, 7):
            for b in range(1, 7):
                for c in range(1, 7):
                    start = round_at(target).apply(Tally("point"))  # not a fresh turn
                    state = start
                    for press in presses_for((a, b, c), start):
                        state = state.apply(Pass() if press == "pass" else Tally(press))
                    outcome = score_roll((a, b, c), target, CLASSIC)
                    assert state.seat_points[0] - start.seat_points[0] == outcome.points
                    assert (state.roller_seat == 1) == outcome.continues


PINS = {
    1: {"point": 5, "three": 6, "bunco": 13, "pass": 19, "undo": 26},
    2: {"point": 17, "three": 27, "bunco": 22, "pass": 23, "undo": 24},
}


@pytest.mark.parametrize("rules", ["classic", "core", "rotate", "individual"])
def test_two_tables_played_by_virtual_scorekeepers_agree_with_the_head(mock_factory, tmp_path,
                                                                       rules):
    broker = InprocBroker()
    topics = Topics(f"s{uuid.uuid4().hex[:6]}")

    def connect_as(name):
        return lambda sink: broker.link(name, status_topic=topics.status(name), sink=sink)

    # Six players: table 2 has two ghosts, who roll too.
    players = [Player(f"p{i}", f"P{i}") for i in range(1, 7)] + [
        Player("g1", "Ghost 1", ghost=True), Player("g2", "Ghost 2", ghost=True)]
    head = FakeHead(connect_as("head"), topics, tmp_path / "head.sqlite", tables=2, rules=rules)
    boxes, keepers = [], []
    try:
        head.start_night(players, [("p1", "p2", "p3", "p4"), ("p5", "g1", "p6", "g2")])
        for n in (1, 2):
            link = NetTableLink(connect_as(table_node(n)), topics, n, tmp_path / f"o{n}.sqlite")
            buttons = ButtonConfig(pins=PINS[n], debounce=0.005, hold_time=0.3)
            box = TableBox(TableConfig(number=n, buttons=buttons), None, link, ":memory:",
                           device=dummy(width=128, height=64, mode="1"),
                           pin_factory=mock_factory)
            keeper = SimulatedScorekeeper(mock_factory, PINS[n], debounce=0.005,
                                          hold_time=0.3, seed=n, pace="fast")
            box.node.watchers.append(keeper.observe)
            box.start()
            keeper.start()
            boxes.append(box)
            keepers.append(keeper)
        head.bell()
        night = head.wait_until(lambda n: n.phase == "results", timeout=60)
        for box in boxes:
            assert box.node.sync(5)
        deadline = time.monotonic() + 5
        while not all(b.node.head_result is not None for b in boxes):
            assert time.monotonic() < deadline, "a table never showed the head's results"
            time.sleep(0.02)
        for n, box in enumerate(boxes, start=1):
            local = box.node.finished_rounds[-1].state
            record = night.history[-1].tables[n - 1]
            assert local.team_scores == record.team_scores
            assert local.rolls == record.rolls
            assert local.result is not None
            assert set(local.result.winners) == set(record.winners)
        assert keepers[0].presses > 0 and keepers[1].presses > 0
        # Table 2 heard the bell mid-stream; the roller then finished her turn only.
        t2 = boxes[1].node.finished_rounds[-1].state
        if t2.ended_round:            # house rules where any table ends the round: no bell
            assert preset(rules).round.ends_at == "any-table" and Bell() not in t2.entries
            return
        assert Bell() in t2.entries   # it did not end the round itself: it heard the bell
        at = t2.entries.index(Bell())
        before = TableRound.replay(t2.setup, t2.entries[:at])
        after = list(t2.entries[at + 1:])
        # Mid-turn, the roller alone finishes her turn (up to her pass); between turns, or
        # where the house rules say play stops at the bell, it stops at the bell itself.
        finishes = before.turn_rolls and preset(rules).round.after_bell == "finish-turn"
        end = at + 1 + (after.index(Pass()) + 1 if finishes else 0)
        finished = TableRound.replay(t2.setup, t2.entries[:end])
        assert finished.phase in ("done", "rolloff", "extra")
        assert {r.seat for r in finished.rolls[len(before.rolls):]} <= {before.roller_seat}
    finally:
        for keeper in keepers:
            keeper.stop()
        for box in boxes:
            box.stop()
        head.close()


def test_at_a_human_pace_she_waits_before_each_roll(mock_factory):
    from bunco_pi.table.link import InProcessLink

    pauses = []

    def sleep(seconds):
        pauses.append(seconds)
        time.sleep(seconds if seconds < 0.5 else 0.001)  # the human gaps, skipped

    link = InProcessLink()
    buttons = ButtonConfig(pins=PINS[1], debounce=0.005, hold_time=0.3)
    box = TableBox(TableConfig(buttons=buttons), CLASSIC, link, ":memory:",
                   device=dummy(width=128, height=64, mode="1"), pin_factory=mock_factory)
    keeper = SimulatedScorekeeper(mock_factory, PINS[1], debounce=0.005, hold_time=0.3,
                                  seed=4, pace="human", sleep=sleep)
    box.node.watchers.append(keeper.observe)
    box.start()
    keeper.start()
    try:
        link.start_round(1, 1, 1, SEATS, can_end_round=False)  # a round that never ends
        deadline = time.monotonic() + 20
        while keeper.rolls < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        keeper.stop()
        box.stop()
    gaps = [p for p in pauses if p >= 0.5]
    assert keeper.rolls >= 5 and len(gaps) >= keeper.rolls
    assert all(0.6 <= gap <= 1.2 for gap in gaps)
    assert len(set(gaps)) == len(gaps)  # drawn from the seeded dice's generator, not fixed


def test_at_a_standalone_table_she_goes_on_from_round_to_round(mock_factory):
    from bunco_pi.table.standalone_link import StandaloneLink

    link = StandaloneLink(CLASSIC, SEATS, seed=1)
    buttons = ButtonConfig(pins=PINS[1], debounce=0.005, hold_time=0.3)
    box = TableBox(TableConfig(buttons=buttons, players=SEATS), CLASSIC, link, ":memory:",
                   device=dummy(width=128, height=64, mode="1"), pin_factory=mock_factory)
    keeper = SimulatedScorekeeper(mock_factory, PINS[1], debounce=0.005, hold_time=0.3,
                                  seed=8, pace="fast")
    box.node.watchers.append(keeper.observe)
    box.start()
    keeper.start()
    try:
        deadline = time.monotonic() + 30
        while len(link.night.history) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        keeper.stop()
        box.stop()
    assert len(link.night.history) >= 3
    for played in link.night.history[:3]:
        (table,) = played.tables
        assert max(table.team_scores) >= 21 or any(r.outcome.bunco for r in table.rolls)
