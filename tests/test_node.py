"""A table node driven through gpiozero MockFactory pins, luma's dummy device and a link."""

from __future__ import annotations

import io

import pytest
from luma.core.device import dummy

from bunco_pi.hardware.pinmap import default_button_pins
from bunco_pi.table import game
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import TableConfig
from bunco_pi.table.events import DiceRoll, DiceStatus, Tick
from bunco_pi.table.link import InProcessLink, StandaloneLink
from bunco_pi.table.screens import PlayingView, render

PINS = default_button_pins()
PLAYERS = ("Ann", "Bea", "Cat", "Dot")


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Table:
    """A running box plus hands to press its buttons."""

    def __init__(self, factory, tmp_path, link, rules=None, name="journal.db"):
        self.factory = factory
        self.clock = FakeClock()
        self.device = dummy(width=128, height=64, mode="1")
        self.link = link
        self.log = io.StringIO()
        self.box = TableBox(TableConfig(players=PLAYERS), rules, link, tmp_path / name,
                            device=self.device, clock=self.clock, log=self.log)
        self.node = self.box.node
        self.box.start()
        self.sync()

    def sync(self):
        assert self.node.sync(5.0)

    def pin(self, role):
        return self.factory.pin(PINS[role])

    def tap(self, role):
        self.pin(role).drive_low()
        self.clock.t += 0.1
        self.pin(role).drive_high()
        self.clock.t += 0.1
        self.node.post(Tick())
        self.sync()

    def hold(self, role):
        self.pin(role).drive_low()
        self.clock.t += 2.0
        self.node.post(Tick())
        self.sync()
        self.pin(role).drive_high()
        self.clock.t += 0.1
        self.node.post(Tick())
        self.sync()

    def roll(self, seq, *dice):
        self.node.post(DiceRoll(seq, dice))
        self.sync()

    @property
    def state(self):
        return self.node.book.state

    @property
    def scores(self):
        return game.team_scores(self.state)

    @property
    def roller(self):
        return game.roller_seat(self.state)

    def close(self):
        self.box.stop()


@pytest.fixture
def table(mock_factory, tmp_path):
    link = InProcessLink()
    t = Table(mock_factory, tmp_path, link)
    link.seat(PLAYERS)
    link.start_round(1, 3)
    t.sync()
    yield t
    t.close()


def test_whole_round_pressed_button_by_button(table):
    table.tap("point")  # Ann +1
    table.tap("point")
    table.tap("three")  # Ann +5
    assert table.scores == (7, 0)
    table.tap("pass")
    assert table.roller == 2
    table.tap("bunco")  # Bea: BUNCO
    assert table.scores == (7, 21)
    assert ("end_reached", None) in table.link.reports
    table.link.ring_bell()
    table.sync()
    assert isinstance(table.node.view(), PlayingView) and table.node.view().bell
    table.tap("point")
    table.tap("pass")  # Bea finishes: the round is over
    assert table.node.mode == "results"
    summary = [s for kind, s in table.link.reports if kind == "round_over"][0]
    assert (summary.score_a, summary.score_b, summary.winner) == (7, 22, "B")
    # The OLED shows what the node drew, pushed through the dummy device.
    assert table.device.image.tobytes() == table.node.frame.convert("1").tobytes()


def test_every_press_changes_the_screen_at_once(table):
    before = table.device.image.tobytes()
    table.pin("point").drive_low()  # contact only: feedback must already be there
    table.sync()
    after_down = table.device.image.tobytes()
    assert after_down != before
    table.pin("point").drive_high()
    table.pin("pass").drive_low()  # a hold button shows what holding it would do
    table.sync()
    assert "hold: wipeout" in table.node.view().flash
    assert table.device.image.tobytes() != after_down


def test_chattering_buttons_count_once(table):
    for role in ("point", "three", "bunco"):
        pin = table.pin(role)
        for _ in range(25):
            pin.drive_low()
            pin.drive_high()
        pin.drive_low()
        table.clock.t += 0.2
        pin.drive_high()
        table.clock.t += 0.2
        table.node.post(Tick())
    table.sync()
    assert table.scores == (1 + 5 + 21, 0)


def test_stuck_button_never_repeats_points(table):
    table.pin("point").drive_low()
    for _ in range(50):
        table.clock.t += 1.0
        table.node.post(Tick())
    table.sync()
    assert table.scores == (1, 0)


def test_hold_pass_is_wipeout_and_tap_pass_is_pass(table):
    table.tap("three")
    table.tap("point")
    table.hold("pass")
    assert table.scores == (0, 0)
    assert table.roller == 2  # a wipeout ends the turn


@pytest.mark.parametrize(
    ("steps", "kind"),
    [
        (["point"], "point"),
        (["three"], "three of a kind"),
        (["bunco"], "bunco"),
        (["pass"], "pass"),
        (["hold:pass"], "wipeout"),
        (["roll:3,3,1"], "scoring roll"),
        (["roll:1,2,4"], "roll that passes"),
        (["roll:3,3,3"], "rolled bunco"),
    ],
)
def test_undo_reverses_every_kind_of_change_exactly(table, steps, kind):
    table.tap("point")
    table.tap("pass")
    table.tap("three")
    before = table.state
    for step in steps:
        if step.startswith("hold:"):
            table.hold(step[5:])
        elif step.startswith("roll:"):
            table.roll(7, *map(int, step[5:].split(",")))
        else:
            table.tap(step)
    assert table.state != before, kind
    table.tap("undo")
    assert table.state == before, kind


def test_undo_of_a_bunco_takes_back_the_bell_it_rang(mock_factory, tmp_path):
    link = StandaloneLink(PLAYERS)
    t = Table(mock_factory, tmp_path, link)
    try:
        t.tap("pass")  # waiting -> round 1 starts
        t.tap("point")
        before = t.state
        t.tap("bunco")  # the head table's bunco rings the bell
        assert t.node.view().bell
        t.tap("undo")
        assert t.state == before and not t.node.view().bell
    finally:
        t.close()


def test_hold_undo_takes_back_the_whole_turn(table):
    table.tap("point")
    table.tap("pass")
    after_pass = table.state
    table.tap("point")
    table.tap("three")
    table.roll(1, 3, 3, 2)
    table.hold("undo")
    assert table.state == after_pass
    table.hold("undo")  # nothing in this turn yet: take back the previous turn
    assert table.scores == (0, 0) and table.roller == 1


def test_undo_on_results_reopens_the_round(table):
    table.tap("point")
    table.link.ring_bell()
    table.sync()
    table.tap("pass")
    assert table.node.mode == "results"
    table.tap("undo")
    assert table.node.mode == "playing" and table.roller == 1 and table.scores == (1, 0)
    assert ("round_reopened", None) in table.link.reports


def test_dice_rolls_score_and_a_roll_scoring_nothing_passes(table):
    table.roll(1, 3, 3, 5)
    assert table.scores == (2, 0) and table.roller == 1
    table.roll(2, 1, 2, 4)
    assert table.roller == 2


def test_dice_sensor_unplugged_is_shown_and_buttons_still_count(table):
    table.node.post(DiceStatus(False, "dice sensor unplugged: use buttons"))
    table.sync()
    assert "unplugged" in table.node.view().warning
    table.tap("point")
    assert table.scores == (1, 0)


def test_display_failure_mid_game_keeps_counting(table):
    def broken(image):
        raise OSError(121, "Remote I/O error")

    table.device.display = broken
    table.tap("point")
    table.tap("point")
    assert table.scores == (2, 0)
    assert "display stopped answering" in table.log.getvalue()
    assert table.log.getvalue().count("\n") == 1


def test_unchanged_frames_are_not_pushed(table):
    pushed = table.box.sink.pushed
    for _ in range(5):
        table.node.post(Tick())
    table.sync()
    assert table.box.sink.pushed == pushed


def test_restart_resumes_the_round_from_the_journal(mock_factory, tmp_path):
    link = InProcessLink()
    first = Table(mock_factory, tmp_path, link)
    link.start_round(2, 4)
    first.sync()
    first.tap("point")
    first.tap("pass")
    first.tap("three")
    state = first.state
    first.close()  # as if the power went: everything accepted is on disk already
    mock_factory.reset()
    second = Table(mock_factory, tmp_path, InProcessLink())
    try:
        assert second.node.mode == "playing" and second.state == state
        second.tap("point")
        assert second.scores == (1, 6)
        assert second.node.view() == PlayingView(
            table=1, target=4, score_a=1, score_b=6, roller="Bea", roller_team="B",
            set_number=2, flash="+1 Bea")
    finally:
        second.close()


def test_frame_matches_render_of_view(table):
    table.tap("three")
    assert table.node.frame.tobytes() == render(table.node.view()).tobytes()
