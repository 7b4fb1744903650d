"""A whole night as a fold of events: phases, the bell, the traveler, breaks and prizes."""

import pytest

from bunco_pi.rules.house import parse_rules, preset, preset_text
from bunco_pi.rules.night import (
    BREAK,
    ENDED,
    FINISHING,
    PLAYING,
    PRIZES,
    READY,
    RESULTS,
    CloseRound,
    EndBreak,
    NextRound,
    Night,
    Player,
    RingBell,
    SettlePrizes,
    StartRound,
    TableEntry,
)
from bunco_pi.rules.table_round import Bell, Roll, RuleViolation, Undo

CLASSIC = preset("classic")
PLAYERS = [Player(f"p{i}", f"P{i}") for i in range(1, 9)]
SEATING = [("p1", "p2", "p3", "p4"), ("p5", "p6", "p7", "p8")]


def miss(target: int) -> tuple[int, int, int]:
    a, b, c = [f for f in range(1, 7) if f != target][:3]
    return (a, b, c)


def short_rules(base: str = "classic", **replace: str):
    text = preset_text(base)
    for old, new in replace.items():
        text = text.replace(old, new)
    return parse_rules(text)


class Driver:
    def __init__(self, rules=CLASSIC, players=PLAYERS, seating=SEATING):
        self.night = Night.start(rules, players, seating)
        self.log = []

    def __call__(self, *events) -> Night:
        for e in events:
            self.night = self.night.apply(e)
            self.log.append(e)
        return self.night

    def roll(self, table: int, *rolls) -> Night:
        return self(*(TableEntry(table, Roll(d)) for d in rolls))

    def head_bunco_round(self) -> None:
        """Table 2's first roller scores 1, then the head table's first roller rolls a bunco."""
        target = self.night.target
        self(StartRound())
        self.roll(2, (target,) + miss(target)[:2], miss(target))
        self.roll(1, (target,) * 3)
        for t in self.night.tables:
            if not t.done:
                self(TableEntry(t.setup.table, Bell()))
        self(CloseRound(), NextRound())


def test_the_game_begins_when_the_head_table_rings_the_bell() -> None:
    d = Driver()
    assert d.night.phase == READY and d.night.tables == ()
    with pytest.raises(RuleViolation):
        d.roll(1, (1, 2, 3))
    d(StartRound())
    assert d.night.phase == PLAYING and len(d.night.tables) == 2
    assert d.night.table(1).setup.can_end_round and not d.night.table(2).setup.can_end_round
    with pytest.raises(RuleViolation):
        d(StartRound())


def test_a_bunco_at_the_head_table_rings_the_bell_for_everyone() -> None:
    d = Driver()
    d(StartRound())
    d.roll(2, (1, 1, 3))  # p5 is mid-turn at table 2
    d.roll(1, (1, 1, 1))
    assert d.night.bell_rung and d.night.phase == FINISHING and d.night.table(1).done
    with pytest.raises(RuleViolation, match="tables 2"):
        d(CloseRound())
    d(TableEntry(2, Bell()))
    d.roll(2, (1, 4, 5), miss(1))  # "The other players currently rolling finish their turn"
    assert d.night.table(2).done and d.night.table(2).team_scores == (3, 0)
    d(CloseRound())
    assert d.night.phase == RESULTS
    last = d.night.history[-1]
    assert last.tables[0].ended_round and last.tables[0].winners == ("p1", "p3")
    assert d.night.cards["p1"].buncos == 1 and d.night.cards["p1"].wins == 1
    assert d.night.next_seats[0][0] == "p1"  # the head winner keeps her chair
    upcoming = d.night.next_seats
    d(NextRound())
    assert d.night.phase == READY and d.night.round_number == 2 and d.night.target == 2
    assert d.night.seating == upcoming


def test_the_host_can_ring_the_bell() -> None:
    d = Driver()
    d(StartRound(), RingBell())
    assert d.night.phase == FINISHING and d.night.bell_rung
    for t in (1, 2):
        d(TableEntry(t, Bell()))
    # nobody had rolled: 0 to 0 at both tables, so both roll off
    assert [t.phase for t in d.night.tables] == ["rolloff", "rolloff"]
    for t in (1, 2):
        d.roll(t, (1, 2, 3), miss(1), miss(1), miss(1), miss(1))
    assert d.night.all_tables_done
    d(CloseRound())
    assert d.night.phase == RESULTS


def test_the_fuzzy_die_is_passed_as_buncos_are_rolled_and_undo_takes_it_back() -> None:
    d = Driver()
    d(StartRound())
    d.roll(2, (1, 1, 1))
    assert d.night.traveler == "p5"
    d.roll(2, (1, 1, 1))
    assert d.night.traveler == "p5" and len(d.night.travel_log) == 2
    d.roll(2, miss(1), (1, 1, 1))
    assert d.night.traveler == "p6"
    d(TableEntry(2, Undo()))
    assert d.night.traveler == "p5" and len(d.night.travel_log) == 2
    d(TableEntry(2, Undo()))  # undoing the miss keeps the earlier buncos
    assert d.night.traveler == "p5"


def test_the_traveler_is_whoever_rolled_the_last_bunco_across_tables() -> None:
    d = Driver()
    d(StartRound())
    d.roll(2, (1, 1, 1))
    d.roll(1, miss(1), miss(1))
    d.roll(1, (1, 1, 1))  # p3 at the head table
    assert d.night.traveler == "p3"


def test_classic_the_ghosts_bunco_passes_the_traveler_to_her_teammate() -> None:
    players = PLAYERS[:7] + [Player("g1", "Ghost", ghost=True)]
    seating = [SEATING[0], ("p5", "p6", "p7", "g1")]
    d = Driver(CLASSIC, players, seating)
    d(StartRound())
    d.roll(2, miss(1), miss(1), miss(1), (1, 1, 1))
    assert d.night.traveler == "p6"
    assert "g1" not in d.night.cards


def test_rotate_the_ghosts_bunco_does_not_move_the_traveler() -> None:
    players = PLAYERS[:7] + [Player("g1", "Ghost", ghost=True)]
    seating = [SEATING[0], ("p5", "p6", "p7", "g1")]
    d = Driver(preset("rotate"), players, seating)
    d(StartRound())
    d.roll(2, (1, 1, 1), miss(1), miss(1), miss(1), (1, 1, 1))
    assert d.night.traveler == "p5"


def test_take_a_break_after_two_sets_then_four_sets_and_prizes() -> None:
    d = Driver()
    for _ in range(12):
        assert d.night.phase == READY
        d.head_bunco_round()
    assert d.night.phase == BREAK and d.night.set_number == 3 and d.night.round_number == 1
    with pytest.raises(RuleViolation):
        d(StartRound())
    d(EndBreak())
    for _ in range(12):
        d.head_bunco_round()
    assert d.night.phase == PRIZES and len(d.night.history) == 24
    assert [r.target for r in d.night.history] == [1, 2, 3, 4, 5, 6] * 4
    d(SettlePrizes(7))
    assert d.night.phase == ENDED and d.night.prize_seed == 7 and len(d.night.prizes) == 6
    assert sum(a.amount_cents for a in d.night.prizes if a.cash) == 8 * 500
    assert sum(c.wins + c.losses for c in d.night.cards.values()) == 8 * 24
    # replaying the log gives the same night
    assert Night.replay(CLASSIC, PLAYERS, SEATING, d.log) == d.night


def test_wipeout_the_ones_round_is_skipped() -> None:
    rules = short_rules("core", **{"[wipeout]\nenabled = false": "[wipeout]\nenabled = true",
                                   'traveler = false                   # "Traveling Wipeout':
                                   'traveler = true # "Traveling Wipeout',
                                   'targets = [1, 2, 3, 4, 5, 6]       # "There are six rounds in each set"':
                                   "targets = [2, 3, 4, 5, 6]"})
    d = Driver(rules)
    assert d.night.target == 2
    d(StartRound())
    d.roll(2, (2, 3, 4), (1, 1, 1))
    # "Traveling Wipeout is played like regular traveling, but a different soft fuzzy"
    assert d.night.wipeout_traveler == "p5" and d.night.traveler is None
    assert d.night.table(2).seat_points == (0, 0, 0, 0)


def test_individual_any_table_can_end_the_round() -> None:
    d = Driver(preset("individual"))
    d(StartRound())
    assert all(t.setup.can_end_round for t in d.night.tables)
    d.roll(2, (1, 1, 1))
    assert d.night.bell_rung and d.night.table(2).ended_round


def test_bad_nights_are_refused() -> None:
    with pytest.raises(RuleViolation):
        Night.start(CLASSIC, PLAYERS + [Player("p1", "again")], SEATING)
    with pytest.raises(RuleViolation):
        Night.start(CLASSIC, PLAYERS, [SEATING[0]])
    with pytest.raises(RuleViolation):
        Night.start(CLASSIC, PLAYERS, [])
    d = Driver()
    d(StartRound())
    with pytest.raises(RuleViolation):
        d.roll(3, (1, 2, 3))
    with pytest.raises(RuleViolation):
        d(NextRound())
    with pytest.raises(RuleViolation):
        d.night.apply("start")  # type: ignore[arg-type]


def test_apply_leaves_the_night_it_was_given_alone() -> None:
    d = Driver()
    before = d.night
    d(StartRound())
    d.roll(1, (1, 1, 2))
    assert before.phase == READY and before.tables == ()
    assert d.night != before
