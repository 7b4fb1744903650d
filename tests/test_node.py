"""A table node driven through gpiozero MockFactory pins, luma's dummy device and a link."""

from __future__ import annotations

import dataclasses
import io

import pytest
from luma.core.device import dummy
from pressing_hands import FakeClock, PressingHands

from bunco_pi.hardware.pinmap import default_button_pins
from bunco_pi.rules.house import Wipeout, preset
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import TableConfig
from bunco_pi.table.events import DiceRoll, DiceStatus, Tick
from bunco_pi.table.gallery import SAMPLES
from bunco_pi.table.link import InProcessLink
from bunco_pi.table.screens import ErrorView, PlayingView, ResultsView, render
from bunco_pi.table.standalone_link import StandaloneLink

PINS = default_button_pins()
PLAYERS = ("Ann", "Bea", "Cat", "Dot")
CLASSIC = preset("classic")
WITH_WIPEOUT = dataclasses.replace(CLASSIC, wipeout=Wipeout(enabled=True, ends_turn=True))


class Table(PressingHands):
    """A running box plus hands to press its buttons."""

    def __init__(self, factory, tmp_path, link, rules=CLASSIC, players=PLAYERS):
        self.factory = factory
        self.clock = FakeClock()
        self.device = dummy(width=128, height=64, mode="1")
        self.link = link
        self.log = io.StringIO()
        self.box = TableBox(TableConfig(players=players), rules, link, tmp_path / "j.db",
                            device=self.device, clock=self.clock, log=self.log)
        self.node = self.box.node
        self.box.start()
        self.sync()

    def sync(self):
        assert self.node.sync(5.0)

    def pin(self, role):
        return self.factory.pin(PINS[role])

    def roll(self, seq, *dice):
        self.node.post(DiceRoll(seq, dice))
        self.sync()

    @property
    def state(self):
        return self.node.book.state

    @property
    def scores(self):
        return self.state.team_scores

    @property
    def roller(self):
        return self.state.roller_seat

    def close(self):
        self.box.stop()


def start_table(factory, tmp_path, *, head=False, target=3, rules=CLASSIC):
    link = InProcessLink()
    table = Table(factory, tmp_path, link, rules)
    link.seat(PLAYERS)
    link.start_round(1, target, target, PLAYERS, can_end_round=head)
    table.sync()
    return table


@pytest.fixture
def table(mock_factory, tmp_path):
    t = start_table(mock_factory, tmp_path)
    yield t
    t.close()


@pytest.fixture
def wipeout_table(mock_factory, tmp_path):
    t = start_table(mock_factory, tmp_path, rules=WITH_WIPEOUT)
    yield t
    t.close()


def test_whole_round_pressed_button_by_button(table):
    table.tap("point")  # Ann +1
    table.tap("point")
    table.tap("three")  # Ann +5
    assert table.scores == (7, 0)
    table.tap("pass")
    assert table.roller == 2
    table.tap("bunco")  # Bea: BUNCO (not the head table: play goes on)
    assert table.scores == (7, 21) and table.state.rolls[-1].outcome.bunco
    table.tap("point")
    table.link.ring_bell()
    table.sync()
    assert isinstance(table.node.view(), PlayingView) and table.node.view().bell
    table.tap("point")
    table.tap("pass")  # Bea finishes her turn: the round is over here
    assert table.node.mode == "results"
    summary = [s for kind, s in table.link.reports if kind == "round_over"][0]
    assert summary.state.team_scores == (7, 23)
    assert summary.state.result.winners == ("Bea", "Dot")
    assert isinstance(table.node.view(), ResultsView) and not table.node.view().won
    # The OLED shows what the node drew, pushed through the dummy device.
    assert table.device.image.tobytes() == table.node.frame.convert("1").tobytes()


def test_head_table_bunco_ends_the_round_and_tells_the_link(mock_factory, tmp_path):
    t = start_table(mock_factory, tmp_path, head=True)
    try:
        t.tap("point")
        t.tap("pass")
        t.tap("bunco")
        assert ("end_reached", None) in t.link.reports
        assert t.node.mode == "results"
    finally:
        t.close()


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
    assert len(table.state.rolls) == 3


def test_stuck_button_never_repeats_points(table):
    table.pin("point").drive_low()
    for _ in range(50):
        table.clock.t += 1.0
        table.node.post(Tick())
    table.sync()
    assert table.scores == (1, 0)


def test_hold_pass_is_wipeout_and_tap_pass_is_pass(wipeout_table):
    wipeout_table.tap("three")
    wipeout_table.tap("point")
    wipeout_table.hold("pass")
    assert wipeout_table.scores == (0, 0)
    assert wipeout_table.roller == 2  # these rules end the turn on a wipeout


def test_wipeout_refused_by_rules_is_shown_not_stored(table):
    table.tap("point")
    table.hold("pass")
    assert table.scores == (1, 0) and table.roller == 1
    assert "wipeout" in table.node.view().flash
    assert len(table.box.journal.rounds()[-1].entries) == 1


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
def test_undo_reverses_every_kind_of_change_exactly(wipeout_table, steps, kind):
    t = wipeout_table
    t.tap("point")
    t.tap("pass")
    t.tap("three")
    before = t.state
    for step in steps:
        if step.startswith("hold:"):
            t.hold(step[5:])
        elif step.startswith("roll:"):
            t.roll(7, *map(int, step[5:].split(",")))
        else:
            t.tap(step)
    assert t.state != before, kind
    t.tap("undo")
    assert t.state == before, kind


def test_undo_of_a_head_table_bunco_reopens_the_round(mock_factory, tmp_path):
    """The mistaken BUNCO ended the round at the head table: undo takes back its 21
    points, its bunco, the traveler and the end of the round."""
    link = StandaloneLink(CLASSIC, PLAYERS)
    t = Table(mock_factory, tmp_path, link)
    try:
        t.tap("pass")  # waiting -> round 1 starts
        t.tap("point")
        before = t.state
        t.tap("bunco")
        assert t.node.mode == "results"
        assert link.night.history[-1].tables[0].rolls[-1].outcome.bunco
        t.tap("undo")
        assert t.node.mode == "playing" and t.state == before
        assert not link.night.history and link.night.phase == "playing"
        t.tap("point")
        assert t.scores == (2, 0)
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
    assert table.scores == (0, 0) and table.roller == 1 and not table.state.entries


def test_undo_with_nothing_to_undo(table):
    table.tap("undo")
    assert table.node.view().flash == "nothing to undo"


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
    assert table.node.view() == SAMPLES["error-dice"]  # the whole screen says it first
    assert table.device.image.tobytes() == render(SAMPLES["error-dice"]).tobytes()
    table.tap("point")  # the first press goes back to the game, and counts
    assert table.scores == (1, 0)
    assert "unplugged" in table.node.view().warning
    table.node.post(DiceStatus(True))
    table.sync()
    assert table.node.view().warning == ""


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
    first = start_table(mock_factory, tmp_path, target=4)
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
            set_number=1, flash="+1 Bea", roller_seat=2)
    finally:
        second.close()


def test_frame_matches_render_of_view(table):
    table.tap("three")
    assert table.node.frame.tobytes() == render(table.node.view()).tobytes()


def test_a_failing_journal_is_reported_and_the_point_not_counted(table):
    def disk_full(round_id, entry):
        raise OSError(28, "No space left on device")

    table.box.journal.append = disk_full
    table.tap("point")
    assert table.scores == (0, 0)  # not stored, so not counted
    assert "No space left" in table.log.getvalue()
    assert table.node.view().flash == "error: OSError"
    del table.box.journal.append  # the disk has room again
    table.tap("point")
    assert table.scores == (1, 0)


def test_a_point_that_could_not_be_stored_is_never_drawn(table):
    shown = []
    display = table.device.display

    def keep(image):
        shown.append(image.convert("1").tobytes())
        display(image)

    table.device.display = keep
    would_be = render(dataclasses.replace(table.node.view(), score_a=1, flash="+1 Ann"))

    def disk_full(round_id, entry):
        raise OSError(28, "No space left on device")

    table.box.journal.append = disk_full
    table.tap("point")
    assert shown and would_be.convert("1").tobytes() not in shown
    assert table.node.accepted == 0 and table.node.view().flash == "error: OSError"


def test_a_link_that_cannot_open_says_so_on_the_whole_screen(mock_factory, tmp_path):
    class Unreachable(InProcessLink):
        def open(self):
            raise ConnectionRefusedError("no broker")

    t = Table(mock_factory, tmp_path, Unreachable())
    try:
        assert t.node.view() == ErrorView("no link to head", ("ConnectionRefusedError",
                                                             "see the log"))
        assert "link open failed: ConnectionRefusedError" in t.log.getvalue()
    finally:
        t.close()


def test_individual_play_shows_each_seat_and_who_moves(mock_factory, tmp_path):
    t = start_table(mock_factory, tmp_path, rules=preset("individual"), target=2, head=True)
    try:
        t.tap("point")
        t.tap("three")
        t.tap("pass")
        view = t.node.view()
        assert view.seat_scores == (6, 0, 0, 0) and view.roller_seat == 2
        assert t.device.image.tobytes() == render(view).convert("1").tobytes()
        t.tap("bunco")  # Bea's BUNCO ends the round; Cat and Dot tie lowest: a roll-off
        assert t.state.phase == "rolloff" and t.state.roller == "Cat"
        t.tap("point")
        t.tap("pass")
        t.tap("pass")  # Dot scores nothing in the roll-off
        assert t.node.mode == "results"
        assert t.node.view().headline == "Dot moves"
    finally:
        t.close()


def test_journal_from_other_rules_is_one_line(mock_factory, tmp_path):
    first = start_table(mock_factory, tmp_path, rules=WITH_WIPEOUT)
    first.hold("pass")  # a wipeout: fine under these rules
    first.close()
    mock_factory.reset()
    from bunco_pi.errors import UserError

    with pytest.raises(UserError) as err:
        Table(mock_factory, tmp_path, InProcessLink(), rules=CLASSIC)
    assert "--new-night" in str(err.value) and "\n" not in str(err.value)


def test_standalone_night_from_waiting_to_the_prizes(mock_factory, tmp_path):
    """A short night (2 sets of 1 round, a break between) played by dice and buttons."""
    from bunco_pi.rules.house import NightShape

    rules = dataclasses.replace(CLASSIC, night=NightShape(sets=2, targets=(1,),
                                                          break_after_sets=(1,)))
    link = StandaloneLink(rules, PLAYERS, seed=3)
    t = Table(mock_factory, tmp_path, link, rules)
    try:
        assert t.node.mode == "waiting"
        t.roll(1, 1, 1, 1)  # a roll starts round 1; a BUNCO at the head table ends it
        assert t.node.mode == "results" and t.node.finished_rounds[0].log[0]["seq"] == 1
        t.roll(2, 1, 2, 3)  # next roll: the break comes first, so it counts for nothing
        assert t.node.mode == "break"
        t.tap("pass")  # end of the break: round 2 (set 2)
        assert t.node.mode == "playing" and t.state.entries == ()
        t.tap("bunco")
        assert t.node.mode == "results"
        t.tap("pass")
        assert t.node.mode == "ended" and t.node.view().prizes
        assert link.record()["complete"]
    finally:
        t.close()


def test_display_back_after_failure_is_logged(mock_factory, tmp_path):
    link = InProcessLink()
    t = Table(mock_factory, tmp_path, link)
    try:
        fresh = dummy(width=128, height=64, mode="1")
        t.box.sink._reopen = lambda: fresh
        t.box.sink._retry_seconds = 0.0

        def broken(image):
            raise OSError(121, "Remote I/O error")

        t.device.display = broken
        link.start_round(1, 1, 1, PLAYERS, False)
        t.sync()
        t.tap("point")
        assert "answers again" in t.log.getvalue()
        assert fresh.image.tobytes() == t.node.frame.convert("1").tobytes()
    finally:
        t.close()


@pytest.mark.parametrize("target, travels", [(3, True), (2, False)])
def test_holding_three_enters_three_twos_the_individual_traveler(mock_factory, tmp_path, target,
                                                                travels):
    """004: "Travel is rolling all 2s, unless we are rolling for 2s" - with buttons too."""
    t = start_table(mock_factory, tmp_path, rules=preset("individual"), target=target)
    try:
        t.hold("three")
        (roll,) = t.state.rolls
        # three of a kind, 5 points; in the 2s round three 2s are a Bunko (its own button), so
        # a held three is a plain three there
        assert roll.points == 5 and roll.outcome.three_of_a_kind
        assert roll.outcome.travels is travels
        t.tap("three")  # a plain three of a kind never travels
        assert t.state.rolls[-1].outcome.travels is False
    finally:
        t.close()


def test_three_counts_on_contact_unless_holding_it_means_three_twos(mock_factory, tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "i").mkdir()
    classic = start_table(mock_factory, tmp_path / "c", target=3)
    try:
        classic.pin("three").drive_low()  # no release needed: the fastest feedback
        classic.sync()
        assert classic.scores == (5, 0)
    finally:
        classic.close()
    individual = start_table(mock_factory, tmp_path / "i", rules=preset("individual"), target=3)
    try:
        individual.pin("three").drive_low()
        individual.sync()
        assert individual.state.rolls == ()  # it could still become a hold: three 2s
        individual.pin("three").drive_high()
        individual.clock.t += 0.1
        individual.node.post(Tick())
        individual.sync()
        assert individual.state.seat_points[0] == 5
    finally:
        individual.close()
