"""The host's records in the night fold: a late arrival, someone leaving, ending early; each
refused where it would lose points, and each replaying from the night record."""

import json

import pytest

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import preset
from bunco_pi.rules.night import (
    ENDED,
    PRIZES,
    RESULTS,
    Arrive,
    CloseRound,
    EndNight,
    Leave,
    NextRound,
    Night,
    Player,
    SettlePrizes,
    StartRound,
    TableEntry,
)
from bunco_pi.rules.record import build_record, decode_event, encode_event, replay
from bunco_pi.rules.table_round import Bell, Pass, RuleViolation, Tally

RULES = preset("classic")
PLAYERS = [Player(f"p{i}", f"P{i}") for i in range(1, 8)] + [Player("ghost1", "Ghost 1", True)]
SEATING = [("p1", "p2", "p3", "p4"), ("p5", "p6", "p7", "ghost1")]


class Driver:
    def __init__(self) -> None:
        self.night = Night.start(RULES, PLAYERS, SEATING)
        self.log: list = []

    def __call__(self, *events) -> Night:
        for e in events:
            self.night = self.night.apply(e)
            self.log.append(e)
        return self.night

    def play_round(self) -> None:
        """Each table's first roller scores one point, the bell, each passes: a round closes."""
        self(StartRound(), TableEntry(1, Tally("point")), TableEntry(2, Tally("point")))
        from bunco_pi.rules.night import RingBell

        self(RingBell(), TableEntry(1, Bell()), TableEntry(2, Bell()),
             TableEntry(1, Pass()), TableEntry(2, Pass()))
        if self.night.phase != RESULTS:
            self(CloseRound())


@pytest.mark.parametrize("event", [Arrive("ghost1", "Zoe"), Leave("p3"), EndNight()])
def test_host_events_survive_json(event) -> None:
    assert decode_event(json.loads(json.dumps(encode_event(event)))) == event


@pytest.mark.parametrize("item", [["arrive", "ghost1"], ["arrive", 1, "Zoe"], ["leave"],
                                  ["leave", 3], ["end-night", 1]])
def test_bad_host_events_are_refused(item) -> None:
    with pytest.raises(ValueError):
        decode_event(item)


def test_a_late_arrival_takes_a_ghosts_seat_and_scores_from_then_on() -> None:
    d = Driver()
    d.play_round()
    assert "ghost1" not in d.night.cards
    d(Arrive("ghost1", "Zoe"))
    assert d.night.player("ghost1") == Player("ghost1", "Zoe")
    assert d.night.cards["ghost1"].wins == 0 and "ghost1" not in d.night.ghosts
    d(NextRound())
    d.play_round()
    card = d.night.cards["ghost1"]
    assert card.wins + card.losses == 1  # her first round counted, the ghost's did not


def test_someone_leaving_keeps_her_card_and_a_ghost_plays_on() -> None:
    d = Driver()
    d.play_round()
    kept = d.night.cards["p3"]
    d(Leave("p3"))
    assert d.night.player("p3").ghost and d.night.cards["p3"] == kept
    d(NextRound())
    d.play_round()
    assert d.night.cards["p3"] == kept  # the ghost's round is nobody's


@pytest.mark.parametrize("event, reason", [
    (Arrive("p2", "Zoe"), "not a ghost"),
    (Arrive("ghost1", "P5"), "already playing"),
    (Arrive("ghost1", "  "), "needs a name"),
    (Arrive("nobody", "Zoe"), "no player"),
    (Leave("ghost1"), "already a ghost"),
])
def test_impossible_seat_changes_are_refused(event, reason) -> None:
    with pytest.raises(RuleViolation, match=reason):
        Driver()(event)


def test_seats_change_only_between_rounds() -> None:
    d = Driver()
    d(StartRound())
    for event in (Arrive("ghost1", "Zoe"), Leave("p1"), EndNight()):
        with pytest.raises(RuleViolation, match="cannot happen while the night is 'playing'"):
            d.night.apply(event)


def test_a_late_arrival_cannot_take_the_seat_of_someone_who_left() -> None:
    d = Driver()
    d.play_round()
    d(Leave("p3"))
    with pytest.raises(RuleViolation, match="left that seat"):
        d.night.apply(Arrive("p3", "Zoe"))  # that would wipe P3's card


def test_ending_the_night_early_settles_the_prizes_on_the_rounds_played() -> None:
    d = Driver()
    d.play_round()
    assert d(EndNight()).phase == PRIZES
    assert d(SettlePrizes(7)).phase == ENDED
    assert d.night.prizes and len(d.night.history) == 1


def test_a_night_with_host_events_replays_from_its_record() -> None:
    d = Driver()
    d.play_round()
    d(Arrive("ghost1", "Zoe"), Leave("p3"), NextRound())
    d.play_round()
    d(EndNight(), SettlePrizes(11))
    record = build_record(d.night, d.log, source="head")
    again = replay(json.loads(json.dumps(record)), RULES)
    assert again == d.night
    assert build_record(again, d.log, source="head") == record
    assert ["arrive", "ghost1", "Zoe"] in record["log"] and ["leave", "p3"] in record["log"]
    assert audit_record(record, RULES) == []  # who was a ghost when, round by round


def test_the_audit_catches_a_leavers_card_credited_with_a_ghosts_round() -> None:
    d = Driver()
    d.play_round()
    d(Leave("p3"), NextRound())
    d.play_round()
    d(EndNight(), SettlePrizes(5))
    record = json.loads(json.dumps(build_record(d.night, d.log, source="head")))
    record["cards"]["p3"]["losses"] += 1
    assert any(p.startswith("p3:") for p in audit_record(record, RULES))
