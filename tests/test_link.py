from __future__ import annotations

import dataclasses

from bunco_pi.rules.house import NightShape, preset
from bunco_pi.rules.record import replay
from bunco_pi.rules.table_round import Pass, Roll, TableRound, TableSetup, Tally
from bunco_pi.table.events import BellRang, BreakStart, NightEnd, RoundResults, RoundStart, Seating
from bunco_pi.table.link import InProcessLink, RoundSummary
from bunco_pi.table.standalone_link import StandaloneLink

PLAYERS = ("Ann", "Bea", "Cat", "Dot")
CLASSIC = preset("classic")
SHORT = dataclasses.replace(
    CLASSIC, night=NightShape(sets=3, targets=(1, 2), break_after_sets=(2,)))


def play_round(start: RoundStart) -> RoundSummary:
    """A head-table round ended by a BUNCO from seat 1."""
    setup = TableSetup(1, start.seats, start.target, SHORT, can_end_round=start.can_end_round)
    state = TableRound.begin(setup).apply(Tally("point")).apply(Pass()).apply(Tally("point"))
    state = state.apply(Pass()).apply(Roll((start.target,) * 3))
    assert state.done
    return RoundSummary(start.set_number, start.round_number, state)


def test_standalone_plays_the_whole_night_in_order():
    posted = []
    link = StandaloneLink(SHORT, PLAYERS, seed=5)
    link.attach(posted.append)
    assert posted == [Seating(PLAYERS)]
    link.next_requested()
    starts = []
    for _ in range(30):
        event = posted[-1]
        if isinstance(event, NightEnd):
            break
        if isinstance(event, RoundStart):
            starts.append((event.set_number, event.round_number, event.target))
            assert event.can_end_round and Seating(event.seats) == posted[-2]
            link.round_over(play_round(event))
            assert isinstance(posted[-1], RoundResults) and posted[-1].moves
        link.next_requested()
    assert starts == [(1, 1, 1), (1, 2, 2), (2, 1, 1), (2, 2, 2), (3, 1, 1), (3, 2, 2)]
    breaks = [i for i, e in enumerate(posted) if isinstance(e, BreakStart)]
    round_starts = [i for i, e in enumerate(posted) if isinstance(e, RoundStart)]
    assert len(breaks) == 1 and round_starts[3] < breaks[0] < round_starts[4]
    assert isinstance(posted[-1], NightEnd) and posted[-1].prizes
    record = link.record()
    assert record["complete"] and len(record["rounds"]) == 6
    assert [len(r["tables"]) for r in record["rounds"]] == [1] * 6
    assert replay(record, SHORT) == link.night


def test_next_is_ignored_mid_round():
    posted = []
    link = StandaloneLink(CLASSIC, PLAYERS)
    link.attach(posted.append)
    link.next_requested()
    link.next_requested()  # mid-round: nothing
    assert [type(e) for e in posted] == [Seating, Seating, RoundStart]


def test_reopened_round_forgets_its_close():
    posted = []
    link = StandaloneLink(CLASSIC, PLAYERS)
    link.attach(posted.append)
    link.next_requested()
    before = (link.night, list(link.log))
    link.round_over(play_round(posted[-1]))
    assert link.night.phase == "results"
    link.round_reopened()
    assert (link.night, link.log) == before


def test_record_includes_the_round_in_play():
    posted = []
    link = StandaloneLink(CLASSIC, PLAYERS)
    link.attach(posted.append)
    link.next_requested()
    record = link.record([Tally("point"), Roll((1, 1, 3))])
    assert record["rounds"] == []  # not finished yet, but its rolls are in the log
    assert record["log"][-2:] == [["tally", 1, "point"], ["roll", 1, [1, 1, 3]]]


def test_resume_rebuilds_the_night():
    posted = []
    link = StandaloneLink(CLASSIC, PLAYERS)
    link.attach(posted.append)
    link.next_requested()
    first = play_round(posted[-1])
    link.round_over(first)
    link.next_requested()
    again = StandaloneLink(CLASSIC, PLAYERS)
    again.resume([first.state.entries], open_round=True)
    assert again.night == link.night and again.log == link.log


def test_in_process_link_posts_and_records():
    posted = []
    link = InProcessLink()
    link.attach(posted.append)
    link.seat(PLAYERS)
    link.start_round(1, 4, 4, PLAYERS)
    link.ring_bell()
    link.end_reached()
    assert posted == [Seating(PLAYERS), RoundStart(1, 4, 4, PLAYERS, True), BellRang()]
    assert [kind for kind, _ in link.reports] == ["end_reached"]


def test_a_standalone_night_resumes_across_the_break():
    """A power cut in set 3: the journal holds 13 finished rounds; the break after set 2 was
    over, so the resumed night is where it stood, not refused."""
    import random

    from bunco_pi.rules.house import preset
    from bunco_pi.rules.night import BREAK, CloseRound, EndBreak, NextRound, StartRound, TableEntry
    from bunco_pi.rules.table_round import Roll, RuleViolation
    from bunco_pi.table.standalone_link import StandaloneLink

    rules = preset("classic")
    players = ["Ann", "Bea", "Cat", "Dot"]
    played = StandaloneLink(rules, players)
    rng = random.Random(2)
    finished = []
    for _ in range(13):
        if played.night.phase == BREAK:
            played._apply(EndBreak())
        played._apply(StartRound())
        entries = []
        while not played.night.table(1).done:
            roll = Roll(tuple(rng.randint(1, 6) for _ in range(3)))
            try:
                played._apply(TableEntry(1, roll))
            except RuleViolation:
                continue
            entries.append(roll)
        played._apply(CloseRound())
        played._apply(NextRound())
        finished.append(entries)
    resumed = StandaloneLink(rules, players)
    resumed.resume(finished, open_round=True)
    assert (resumed.night.round_index, resumed.night.phase) == (13, "playing")
    assert resumed.night.cards == played.night.cards


def test_every_link_has_the_whole_declared_interface():
    from bunco_pi.table.link import TableLink
    from bunco_pi.table.net_link import NetTableLink

    declared = {name for name in vars(TableLink) if not name.startswith("_")}
    declared |= set(TableLink.__annotations__)
    assert {"keeps_entries", "last_roll_seq", "record_entry", "status"} <= declared
    for link in (StandaloneLink, InProcessLink, NetTableLink):
        missing = {name for name in declared if not hasattr(link, name)}
        assert not missing, f"{link.__name__} lacks {sorted(missing)}"
    assert not StandaloneLink.keeps_entries and NetTableLink.keeps_entries
    assert StandaloneLink(CLASSIC, PLAYERS).last_roll_seq() is None  # the journal has them
