from __future__ import annotations

from bunco_pi.table.events import BellRang, BreakStart, NightEnd, RoundResults, RoundStart, Seating
from bunco_pi.table.link import InProcessLink, RoundSummary, StandaloneLink

PLAYERS = ("Ann", "Bea", "Cat", "Dot")


def summary(set_number, round_number):
    return RoundSummary(set_number, round_number, PLAYERS, 21, 3, "A")


def test_standalone_plays_the_whole_night_in_order():
    posted = []
    link = StandaloneLink(PLAYERS, sets=3, rounds_per_set=2, break_after_set=2)
    link.attach(posted.append)
    assert posted == [Seating(PLAYERS)]
    link.next_requested()
    starts = []
    for _ in range(20):
        event = posted[-1]
        if isinstance(event, NightEnd):
            break
        if isinstance(event, RoundStart):
            starts.append((event.set_number, event.round_number))
            link.end_reached()
            assert posted[-1] == BellRang()
            link.round_over(summary(*starts[-1]))
            assert isinstance(posted[-1], RoundResults)
        link.next_requested()
    assert starts == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]
    assert BreakStart("break") in posted
    assert posted.index(BreakStart("break")) > posted.index(RoundStart(2, 2))
    assert isinstance(posted[-1], NightEnd)
    assert len(link.summaries) == 6


def test_standalone_ignores_bell_and_next_at_the_wrong_moment():
    posted = []
    link = StandaloneLink(PLAYERS)
    link.attach(posted.append)
    link.end_reached()  # no round running: no bell
    assert posted == [Seating(PLAYERS)]
    link.next_requested()
    link.next_requested()  # mid-round: nothing
    assert posted[1:] == [RoundStart(1, 1)]


def test_reopened_round_forgets_its_summary():
    posted = []
    link = StandaloneLink(PLAYERS)
    link.attach(posted.append)
    link.next_requested()
    link.round_over(summary(1, 1))
    link.round_reopened()
    assert link.summaries == []
    link.end_reached()
    assert posted[-1] == BellRang()


def test_resume_carries_on_from_the_journal_round():
    posted = []
    link = StandaloneLink(PLAYERS)
    link.attach(posted.append)
    link.resume_at(2, 6)
    link.round_over(summary(2, 6))
    link.next_requested()
    assert posted[-1] == BreakStart("break")
    link.next_requested()
    assert posted[-1] == RoundStart(3, 1)


def test_in_process_link_posts_and_records():
    posted = []
    link = InProcessLink()
    link.attach(posted.append)
    link.seat(PLAYERS)
    link.start_round(1, 4)
    link.ring_bell()
    link.end_reached()
    link.round_over(summary(1, 4))
    assert posted == [Seating(PLAYERS), RoundStart(1, 4), BellRang()]
    assert [kind for kind, _ in link.reports] == ["end_reached", "round_over"]
