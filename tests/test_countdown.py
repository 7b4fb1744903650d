"""A timed round's minutes left on the table box: the head's timer counted down by the box's own
clock, and drawn in the screen's corner over whatever screen is there."""

from __future__ import annotations

import dataclasses

import pytest
from test_node import start_table

from bunco_pi.table import screens
from bunco_pi.table.countdown import read_countdown
from bunco_pi.table.events import Tick


def test_a_box_counts_down_from_when_it_received_the_timer():
    c = read_countdown({"phase": "round", "left": 151.2, "total": 180.0}, received=50.0)
    assert c.label(50.0) == "2:32" and c.label(60.0) == "2:22"
    assert c.label(50.0 + 151.2) == "0:00" and c.label(1000.0) == "0:00"
    assert c.left_at(40.0) == 151.2  # a clock that steps back gives no extra time


@pytest.mark.parametrize(("phase", "label"), [("warn", "0:29!"), ("pause", "paused 0:29"),
                                              ("move", "move 0:29")])
def test_each_phase_has_its_own_label(phase, label):
    c = read_countdown({"phase": phase, "left": 29.0, "total": 120.0}, received=0.0)
    assert c.label(0.0) == label


def test_a_paused_clock_stands_still():
    c = read_countdown({"phase": "pause", "left": 100.0, "total": 180.0}, received=0.0)
    assert c.label(0.0) == c.label(500.0) == "paused 1:40"


@pytest.mark.parametrize("timer", [None, {}, {"phase": "soon", "left": 1, "total": 2},
                                   {"phase": "round", "left": "1", "total": 2},
                                   {"phase": "round", "left": -1, "total": 2},
                                   {"phase": "round", "left": True, "total": 2}])
def test_a_malformed_timer_shows_nothing(timer):
    assert read_countdown(timer, 0.0) is None


def test_the_corner_is_drawn_over_the_screen_and_nothing_else():
    view = screens.PlayingView(table=3, set_number=1, target=2, score_a=12, score_b=7,
                               roller_team="A", roller="Ann", bell=False)
    plain = screens.render(view)
    marked = screens.render(view)
    screens.draw_countdown(marked, "2:31")
    changed = [(x, y) for x in range(128) for y in range(64)
               if plain.getpixel((x, y)) != marked.getpixel((x, y))]
    assert changed and all(x >= 90 and y >= 50 for x, y in changed)  # its corner only
    other = screens.render(view)
    screens.draw_countdown(other, "2:30")
    assert other.tobytes() != marked.tobytes()


def test_the_box_shows_the_minutes_left_and_counts_them_down(mock_factory, tmp_path):
    table = start_table(mock_factory, tmp_path)
    try:
        before = table.node.frame.copy()
        table.link.timer = {"phase": "round", "left": 95.0, "total": 180.0}
        table.node.post(Tick())
        table.sync()
        assert table.node.countdown_label() == "1:35"
        view = table.node.view()
        assert isinstance(view, screens.PlayingView)  # while scoring: in the header's corner
        expected = screens.render(dataclasses.replace(view, timer="1:35"))
        assert table.node.frame.tobytes() == expected.tobytes() != before.tobytes()
        table.clock.t += 30
        table.node.post(Tick())
        table.sync()
        assert table.node.countdown_label() == "1:05"
        expected = screens.render(dataclasses.replace(table.node.view(), timer="1:05"))
        assert table.node.frame.tobytes() == expected.tobytes()
        table.link.timer = None  # the horn: the head says no clock runs
        table.node.post(Tick())
        table.sync()
        assert table.node.frame.tobytes() == screens.render(table.node.view()).tobytes()
    finally:
        table.close()


def test_beside_the_qr_code_the_corner_leaves_the_code_whole():
    view = screens.QrView("http://bunco.local:8080/")
    plain = screens.render(view)
    marked = screens.render(view)
    screens.draw_countdown(marked, "move 1:45", left=True)
    changed = [(x, y) for x in range(128) for y in range(64)
               if plain.getpixel((x, y)) != marked.getpixel((x, y))]
    qr_left = min(x for x in range(64, 128) if any(plain.getpixel((x, y)) for y in range(64)))
    assert changed and all(x < qr_left - 8 and y >= 50 for x, y in changed)


def test_past_its_own_count_the_box_takes_no_roll_until_the_horn(mock_factory, tmp_path):
    """The head is down at the deadline: the box's own count ran out, so a roll does not count
    (and is not stored) until the head's horn comes; then the roll in hand does."""
    from bunco_pi.rules.house import preset, with_timed_rounds
    from bunco_pi.table.node import TIME_UP_GRACE

    table = start_table(mock_factory, tmp_path, rules=with_timed_rounds(preset("classic"), 3))
    try:
        table.link.timer = {"phase": "warn", "left": 5.0, "total": 180.0}
        table.node.post(Tick())
        table.sync()
        table.roll(1, 3, 3, 1)  # 2 points, before the end: counts
        assert table.scores == (2, 0) and table.node.accepted == 1
        table.clock.t += 5.0 + TIME_UP_GRACE - 0.1
        table.node.post(Tick())
        table.roll(2, 3, 5, 6)  # within the grace: the head's horn may be on its way
        assert table.scores == (3, 0)
        table.clock.t += 0.2
        table.node.post(Tick())
        table.roll(3, 3, 3, 3)
        assert table.scores == (3, 0) and table.node.accepted == 2
        assert table.node.flash == "TIME! wait for the horn"
        table.link.timer = None  # the head is back: the horn
        table.link.ring_bell()
        table.sync()
        table.roll(4, 3, 2, 1)  # the roll in hand
        assert table.scores == (4, 0) and table.state.done
    finally:
        table.close()
