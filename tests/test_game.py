from __future__ import annotations

import pytest

from bunco_pi.rules.house import preset
from bunco_pi.rules.table_round import Bell, Pass, Roll, RuleViolation, Tally, Undo
from bunco_pi.table import game

PLAYERS = ("Ann", "Bea", "Cat", "Dot")


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"roll": [1, 2, 3], "seq": 4}, [Roll((1, 2, 3))]),
        ({"tally": "bunco"}, [Tally("bunco")]),
        ({"pass": True}, [Pass()]),
        ({"bell": True}, [Bell()]),
        ({"undo": 3}, [Undo(), Undo(), Undo()]),
    ],
)
def test_journal_entries_become_engine_entries(entry, expected):
    assert game.engine_entries(entry) == expected


def test_unknown_entry_is_a_rule_violation():
    with pytest.raises(RuleViolation):
        game.engine_entries({"jump": 1})


def test_winner_team_from_the_result():
    state = game.new_round(preset("classic"), 1, PLAYERS, 1, can_end_round=True)
    assert game.winner_team(state) == "A"  # nothing played: A leads on ties, for display
    state = game.apply(state, {"pass": True})
    state = game.apply(state, {"roll": [1, 1, 1]})  # Bea: BUNCO at the head table ends it
    assert state.done and game.winner_team(state) == "B"
