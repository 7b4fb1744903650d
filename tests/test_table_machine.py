"""The table's state machine driven purely: inputs in, effects out, no thread, pin or file."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from bunco_pi.hardware.buttons import Gesture
from bunco_pi.rules.house import Wipeout, preset
from bunco_pi.rules.table_round import RuleViolation
from bunco_pi.table.events import (
    BellRang,
    BreakStart,
    DiceRoll,
    DiceStatus,
    HostUndo,
    NightEnd,
    RoundResults,
    RoundStart,
    Seating,
    Waiting,
)
from bunco_pi.table.machine import (
    HOLD_ROLES,
    BeginRound,
    Draw,
    EndReached,
    Failed,
    FinishRound,
    LinkChanged,
    LinkFacts,
    LinkFailed,
    NextRequested,
    ReopenRound,
    ResumeLink,
    RoundOver,
    RoundReopened,
    SetHoldRoles,
    Store,
    TableMachine,
    Warn,
)
from bunco_pi.table.screens import (
    BreakView,
    EndView,
    ErrorView,
    PlayingView,
    ResultsView,
    WaitingView,
)

PLAYERS = ("Ann", "Bea", "Cat", "Dot")
CLASSIC = preset("classic")
WITH_WIPEOUT = dataclasses.replace(CLASSIC, wipeout=Wipeout(enabled=True, ends_turn=True))
TWOS_TRAVEL = preset("individual")
STANDALONE = LinkFacts(rolls_start_rounds=True)
NETWORKED = LinkFacts(between_rounds_hint="no round on: wait", results_hint="next: head's bell")


def tap(role: str) -> Gesture:
    return Gesture(role, "tap", 0.0)


def hold(role: str) -> Gesture:
    return Gesture(role, "hold", 0.0)


def down(role: str) -> Gesture:
    return Gesture(role, "down", 0.0)


def stored(effects) -> list[dict]:
    return [e.entry for e in effects if isinstance(e, Store)]


def kinds(effects) -> list[str]:
    return [type(e).__name__ for e in effects]


def playing(rules=CLASSIC, *, head=False, target=3, link=NETWORKED, **start) -> TableMachine:
    machine = TableMachine(rules, players=PLAYERS, link=link)
    effects = machine.feed(RoundStart(1, target, target, PLAYERS, head, **start))
    assert kinds(effects)[-2:] == ["BeginRound", "Draw"]
    return machine


# --- every accepted entry: stored, then drawn ------------------------------------------------


def test_a_tally_is_stored_before_the_frame_that_shows_it():
    machine = playing()
    effects = machine.feed(tap("point"))
    assert kinds(effects) == ["Store", "Draw"]
    assert effects[0].entry == {"tally": "point"}
    view = effects[1].view
    assert isinstance(view, PlayingView) and (view.score_a, view.flash) == (1, "+1 Ann")
    assert machine.accepted == 1 and machine.book.state.team_scores == (1, 0)


@pytest.mark.parametrize(("gesture", "entry", "flash"), [
    (tap("point"), {"tally": "point"}, "+1 Ann"),
    (tap("three"), {"tally": "three"}, "three of a kind Ann"),
    (tap("bunco"), {"tally": "bunco"}, "BUNCO! Ann"),
    (tap("pass"), {"pass": True}, "dice to Bea"),
])
def test_each_button_makes_its_entry(gesture, entry, flash):
    machine = playing()
    effects = machine.feed(gesture)
    assert stored(effects) == [entry]
    assert effects[-1].view.flash == flash


def test_held_pass_is_a_wipeout_under_rules_that_play_it():
    machine = playing(WITH_WIPEOUT)
    machine.feed(tap("point"))
    assert machine.feed(down("pass"))[-1].view.flash == "hold: wipeout"
    effects = machine.feed(hold("pass"))
    assert stored(effects) == [{"tally": "wipeout"}]
    assert machine.book.state.team_scores == (0, 0) and machine.book.state.roller_seat == 2


def test_held_three_is_three_twos_under_the_all_twos_traveler():
    machine = playing(TWOS_TRAVEL)
    assert machine.feed(down("three"))[-1].view.flash == "hold: three 2s"
    effects = machine.feed(hold("three"))
    assert stored(effects) == [{"tally": "three", "face": 2}]
    assert effects[-1].view.flash.startswith("three 2s: travel!")


def test_a_round_with_new_rules_changes_which_buttons_wait_for_release():
    machine = TableMachine(CLASSIC, players=PLAYERS)
    effects = machine.feed(RoundStart(1, 1, 1, PLAYERS, False, rules=TWOS_TRAVEL))
    assert effects[0] == SetHoldRoles(HOLD_ROLES | {"three"})
    assert kinds(effects) == ["SetHoldRoles", "BeginRound", "Draw"]


def test_undo_takes_back_the_last_change_and_hold_takes_back_the_turn():
    machine = playing()
    for role in ("point", "point", "three"):
        machine.feed(tap(role))
    assert stored(machine.feed(tap("undo"))) == [{"undo": 1}]
    assert machine.book.state.team_scores == (2, 0)
    effects = machine.feed(hold("undo"))
    assert stored(effects) == [{"undo": 2}] and effects[-1].view.flash == "undone: whole turn"
    assert machine.book.state.team_scores == (0, 0)


def test_a_refused_entry_is_never_stored():
    machine = playing()
    effects = machine.feed(tap("undo"))
    assert kinds(effects) == ["Draw"] and effects[0].view.flash == "nothing to undo"
    assert machine.accepted == 0


def test_a_store_that_fails_puts_the_machine_back():
    machine = playing()
    machine.feed(tap("point"))
    effects = machine.feed(tap("three"))
    machine.restore(effects[0].before)  # what the node does when the disk is full
    assert machine.accepted == 1 and machine.book.state.team_scores == (1, 0)
    effects = machine.feed(Failed("OSError"))
    assert kinds(effects) == ["Draw"] and effects[0].view.flash == "error: OSError"
    assert stored(machine.feed(tap("three"))) == [{"tally": "three"}]  # and goes on after


def test_a_press_between_rounds_says_what_goes_on():
    standalone = TableMachine(CLASSIC, players=PLAYERS, link=STANDALONE)
    assert standalone.feed(down("point"))[-1].view.message == "point: press pass to go on"
    assert kinds(standalone.feed(tap("point"))) == ["Draw"]
    assert kinds(standalone.feed(tap("pass"))) == ["NextRequested", "Draw"]
    networked = TableMachine(CLASSIC, players=PLAYERS, link=NETWORKED)
    assert networked.feed(down("bunco"))[-1].view.message == "no round on: wait"


# --- the dice --------------------------------------------------------------------------------


def test_a_roll_is_stored_with_its_sensor_seq():
    machine = playing()
    effects = machine.feed(DiceRoll(7, (3, 3, 1)))
    assert stored(effects) == [{"roll": [3, 3, 1], "seq": 7}]
    assert effects[-1].view.flash == "Ann 3-3-1" and machine.dice_seen == 1


def test_standalone_rolls_between_rounds_start_it_and_count_in_it():
    machine = TableMachine(CLASSIC, players=PLAYERS, link=STANDALONE)
    assert kinds(machine.feed(DiceRoll(1, (3, 1, 2)))) == ["NextRequested", "Draw"]
    assert kinds(machine.feed(DiceRoll(2, (3, 4, 5)))) == ["Draw"]  # asked once
    effects = machine.feed(RoundStart(1, 1, 3, PLAYERS, True))
    assert kinds(effects) == ["BeginRound", "Store", "Store", "Draw"]
    assert [e["seq"] for e in stored(effects)] == [1, 2]
    assert machine.dice_seen == 2 and machine.book.state.team_scores == (2, 0)


def test_networked_rolls_between_rounds_start_nothing():
    machine = TableMachine(CLASSIC, players=PLAYERS, link=NETWORKED)
    effects = machine.feed(DiceRoll(1, (3, 1, 2)))
    assert kinds(effects) == ["Draw"] and effects[0].view.message == "no round on: wait"
    assert kinds(machine.feed(RoundStart(1, 1, 3, PLAYERS, False))) == ["BeginRound", "Draw"]


@pytest.mark.parametrize("pause", [Waiting(), BreakStart("break"), NightEnd()])
def test_a_roll_thrown_into_a_pause_starts_nothing_later(pause):
    machine = TableMachine(CLASSIC, players=PLAYERS, link=STANDALONE)
    machine.feed(DiceRoll(1, (3, 1, 2)))
    machine.feed(pause)
    assert stored(machine.feed(RoundStart(1, 1, 3, PLAYERS, True))) == []


def test_the_dice_sensor_going_down_fills_the_screen_once():
    machine = playing()
    view = machine.feed(DiceStatus(False, "dice sensor unplugged"))[-1].view
    assert isinstance(view, ErrorView) and view.title == "dice sensor"
    assert isinstance(machine.feed(down("point"))[-1].view, PlayingView)
    again = machine.feed(DiceStatus(False, "dice sensor unplugged"))[-1].view
    assert isinstance(again, PlayingView) and again.warning == "dice sensor unplugged"
    back = machine.feed(DiceStatus(True, "dice back"))[-1].view
    assert (back.warning, back.flash) == ("", "dice back")


# --- the head's messages ---------------------------------------------------------------------


def test_the_bell_is_entered_once():
    machine = playing()
    effects = machine.feed(BellRang())
    assert stored(effects) == [{"bell": True}] and effects[-1].view.bell
    assert effects[-1].view.flash == "BELL! finish the turn"
    assert kinds(machine.feed(BellRang())) == ["Draw"]


@pytest.mark.parametrize(("at_horn", "flash", "counted"), [
    ("finish-roll", "TIME! the roll in hand", [{"roll": [3, 1, 2], "seq": 2}]),
    ("stop", None, [])])
def test_a_timed_rounds_horn_on_the_box_keeps_to_at_horn(at_horn, flash, counted):
    """The box folds the horn as the head does: the roll in hand, or nothing more."""
    from bunco_pi.rules.house import with_timed_rounds

    machine = playing(with_timed_rounds(CLASSIC, 3, at_horn=at_horn))
    machine.feed(DiceRoll(1, (3, 5, 6)))  # one point: her turn goes on
    effects = machine.feed(BellRang())
    assert stored(effects) == [{"bell": True}]
    if flash is None:  # play stopped: 1 - 0, the results at once
        assert isinstance(effects[-1].view, ResultsView)
    else:
        assert effects[-1].view.flash == flash
    after = stored(machine.feed(DiceRoll(2, (3, 1, 2)))) + \
        stored(machine.feed(DiceRoll(3, (3, 3, 2))))
    assert after == counted


def test_the_heads_bell_rings_again_after_the_next_change():
    machine = playing()
    machine.feed(LinkChanged(dataclasses.replace(NETWORKED, bell_rung=True)))
    assert stored(machine.feed(tap("point"))) == [{"tally": "point"}, {"bell": True}]


def test_no_bell_between_rounds():
    machine = TableMachine(CLASSIC, players=PLAYERS)
    assert kinds(machine.feed(BellRang())) == ["Draw"]


def test_the_hosts_undo_is_entered_once_for_its_round():
    machine = playing(round_index=4)
    machine.feed(tap("point"))
    machine.feed(tap("point"))
    effects = machine.feed(HostUndo(command=9, round_index=4))
    assert stored(effects) == [{"undo": 1, "command": 9}]
    assert effects[-1].view.flash == "undone by the host"
    again = machine.feed(HostUndo(command=9, round_index=4))  # redelivered
    assert kinds(again) == ["Warn", "Draw"] and machine.book.state.team_scores == (1, 0)
    other = machine.feed(HostUndo(command=10, round_index=3))  # for an older round
    assert kinds(other) == ["Warn", "Draw"] and "round 4" in other[0].text
    assert machine.book.state.team_scores == (1, 0)


def test_the_hosts_undo_with_nothing_to_undo_stores_nothing():
    machine = playing(round_index=0)
    effects = machine.feed(HostUndo(command=1, round_index=0))
    assert kinds(effects) == ["Draw"] and effects[0].view.flash == "host: nothing to undo"


def test_a_resumed_round_folds_its_replay_without_storing_it_again():
    replay = ({"tally": "point"}, {"pass": True}, {"undo": 5})
    machine = TableMachine(CLASSIC, players=PLAYERS)
    effects = machine.feed(RoundStart(1, 2, 2, ("p1", "p2", "p3", "p4"), False, round_index=1,
                                      names=(("p1", "Ann"), ("p2", "Bea")), replay=replay))
    assert stored(effects) == []
    assert [type(e) for e in effects] == [BeginRound, Warn, Warn, Draw]  # the bad one is named
    assert "does not fit" in effects[1].text and "2 entries" not in effects[2].text
    assert machine.book.state.roller_seat == 2 and effects[-1].view.roller == "Bea"
    assert machine.players == ("Ann", "Bea", "p3", "p4")


def test_the_heads_results_win_over_the_tables_own():
    machine = playing(head=True)
    machine.feed(tap("bunco"))
    effects = machine.feed(RoundResults(("Ann: seat 2",), score=(20, 3), won=False,
                                        headline="head says"))
    view = effects[-1].view
    assert isinstance(view, ResultsView) and (view.score_a, view.won) == (20, False)
    assert view.moves == ("Ann: seat 2",) and machine.head_result is not None
    assert machine.feed(RoundStart(1, 2, 2, PLAYERS, True)) and machine.head_result is None


def test_seating_waits_for_the_round_in_play():
    machine = TableMachine(CLASSIC, players=PLAYERS)
    machine.feed(Seating(("W", "X", "Y", "Z")))
    assert machine.view() == WaitingView(1, ("W", "X", "Y", "Z"), "pass: start round")
    machine.feed(RoundStart(1, 1, 1, ("W", "X", "Y", "Z"), False))
    machine.feed(Seating(PLAYERS))
    assert machine.players == ("W", "X", "Y", "Z")


def test_break_and_night_end_screens():
    machine = TableMachine(CLASSIC, players=PLAYERS)
    assert machine.feed(BreakStart("coffee"))[-1].view == BreakView("coffee", "pass: go on")
    prizes = (("most buncos", "Ann"),)
    assert machine.feed(NightEnd(prizes))[-1].view == EndView(prizes)
    assert machine.feed(Waiting(PLAYERS, "next round soon"))[-1].view.message == \
        "next round soon"


# --- the end of a round, and taking it back --------------------------------------------------


def test_the_head_tables_bunco_ends_the_round_in_order():
    machine = playing(head=True)
    effects = machine.feed(tap("bunco"))
    assert kinds(effects) == ["Store", "EndReached", "FinishRound", "RoundOver", "Draw"]
    over = effects[3]
    assert isinstance(over, RoundOver) and over.summary.state.team_scores == (21, 0)
    assert machine.mode == "results" and len(machine.finished_rounds) == 1
    assert isinstance(effects[-1].view, ResultsView) and effects[-1].view.won


def test_undo_on_results_reopens_the_round_while_the_head_allows():
    machine = playing(head=True)
    machine.feed(tap("bunco"))
    effects = machine.feed(tap("undo"))
    assert [type(e) for e in effects] == [ReopenRound, RoundReopened, Store, Draw]
    assert effects[2].entry == {"undo": 1} and machine.mode == "playing"
    assert machine.finished_rounds == () and effects[-1].view.flash == "undone: round reopened"


def test_undo_on_results_after_the_head_closed_the_round_does_nothing():
    machine = playing(head=True)
    machine.feed(tap("bunco"))
    machine.feed(LinkChanged(dataclasses.replace(NETWORKED, may_reopen=False)))
    effects = machine.feed(tap("undo"))
    assert kinds(effects) == ["Draw"] and effects[0].view.hint == "round closed by the head"
    assert machine.mode == "results" and len(machine.finished_rounds) == 1


def test_pass_on_results_asks_the_link_to_go_on():
    machine = playing(head=True, link=STANDALONE)
    machine.feed(tap("bunco"))
    assert isinstance(machine.feed(tap("pass"))[0], NextRequested)


def test_the_link_status_shows_on_every_screen():
    machine = playing()
    offline = dataclasses.replace(NETWORKED, status="offline, 2 waiting")
    assert machine.feed(LinkChanged(offline))[-1].view.warning == "offline, 2 waiting"
    machine.feed(LinkFailed("ConnectionRefusedError"))
    assert machine.view() == ErrorView("no link to head", ("ConnectionRefusedError",
                                                          "see the log"))


# --- a restart ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Past:
    set_number: int
    round_number: int
    target: int
    players: tuple[str, str, str, str]
    can_end_round: bool
    entries: tuple[dict, ...]
    finished: bool


def test_resume_rebuilds_the_rounds_and_tells_the_link():
    rounds = [Past(1, 1, 1, PLAYERS, True, ({"tally": "bunco"},), True),
              Past(1, 2, 2, PLAYERS, True, ({"tally": "point"},), False)]
    machine = TableMachine(CLASSIC, players=PLAYERS, link=STANDALONE)
    effects = machine.resume(rounds)
    assert kinds(effects) == ["ResumeLink", "Draw"]
    resume = effects[0]
    assert isinstance(resume, ResumeLink) and resume.open_round and len(resume.finished) == 1
    assert machine.mode == "playing" and machine.book.state.team_scores == (1, 0)
    assert stored(machine.feed(tap("point"))) == [{"tally": "point"}]


def test_resume_refuses_a_journal_that_does_not_fit_the_rules():
    machine = TableMachine(CLASSIC, players=PLAYERS)
    with pytest.raises(RuleViolation):
        machine.resume([Past(1, 1, 1, PLAYERS, True, ({"undo": 3},), False)])


def test_a_fresh_table_resumes_nothing():
    machine = TableMachine(CLASSIC, players=PLAYERS)
    assert kinds(machine.resume([])) == ["Draw"]
    with pytest.raises(TypeError):
        machine.feed(object())


def test_after_finish_the_journal_round_is_marked_before_the_link_hears():
    machine = playing(head=True)
    effects = machine.feed(tap("bunco"))
    assert effects.index(next(e for e in effects if isinstance(e, FinishRound))) < \
        effects.index(next(e for e in effects if isinstance(e, RoundOver)))
    assert isinstance(effects[1], EndReached)


# --- purity ------------------------------------------------------------------------------------

FORBIDDEN = {"threading", "time", "sqlite3", "socket", "random", "queue", "os", "gpiozero",
             "luma", "serial", "paho", "PIL", "bunco_pi.table.journal", "bunco_pi.table.node",
             "bunco_pi.table.outbox", "bunco_pi.net", "bunco_pi.hardware.oled"}


def test_the_machine_imports_nothing_with_a_clock_a_thread_or_a_device():
    source = Path(__file__).resolve().parents[1] / "bunco_pi" / "table" / "machine.py"
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    bad = {n for n in names if any(n == f or n.startswith(f + ".") for f in FORBIDDEN)}
    assert names and not bad
