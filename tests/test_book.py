from __future__ import annotations

import pytest

from bunco_pi.rules.house import preset
from bunco_pi.rules.table_round import RuleViolation
from bunco_pi.table.book import RoundBook

PLAYERS = ("Ann", "Bea", "Cat", "Dot")


def book(*entries, head=False):
    b = RoundBook(preset("classic"), 1, 1, 2, 2, PLAYERS, head)
    for entry in entries:
        b = b.add(entry)
    return b


def test_fold_of_entries():
    b = book({"roll": [2, 2, 5], "seq": 1}, {"tally": "three"}, {"pass": True},
             {"tally": "point"})
    assert b.state.team_scores == (7, 1) and b.state.roller == "Bea"


def test_refused_entry_raises_and_leaves_the_book_alone():
    b = book({"tally": "point"})
    with pytest.raises(RuleViolation):
        b.add({"tally": "wipeout"})  # classic rules have no wipeout
    assert b.log == ({"tally": "point"},)


def test_undo_last_is_one_engine_undo_and_skips_the_bell():
    b = book({"tally": "point"}, {"bell": True})
    assert b.undo_last() == {"undo": 1}
    undone = b.add(b.undo_last())
    assert undone.state.team_scores == (0, 0) and undone.state.bell
    assert book().undo_last() is None


def test_undo_turn_counts_the_turns_entries():
    b = book({"tally": "point"}, {"pass": True}, {"tally": "point"}, {"roll": [2, 2, 1]})
    assert b.undo_turn() == {"undo": 2}
    back = b.add(b.undo_turn())
    assert back.state.roller == "Bea" and back.state.team_scores == (1, 0)
    # Nothing in Bea's turn now: hold undo takes back Ann's turn and her pass.
    assert back.undo_turn() == {"undo": 2}
    assert back.add(back.undo_turn()).state == book().state


def test_undo_turn_after_a_roll_that_passed():
    b = book({"roll": [2, 3, 4]}, {"roll": [1, 1, 2]})  # target 2: one point each
    assert b.state.roller == "Ann"
    b = b.add({"roll": [1, 3, 4]})  # nothing: the dice go to Bea
    assert b.state.roller == "Bea"
    assert b.undo_turn() == {"undo": 3}
    assert book().undo_turn() is None


def test_head_table_bunco_ends_the_round_and_undo_reopens_it():
    b = book({"tally": "point"}, {"roll": [2, 2, 2]}, head=True)
    assert b.state.done and b.state.ended_round
    again = b.add(b.undo_last())
    assert not again.state.done and again.state.team_scores == (1, 0)
