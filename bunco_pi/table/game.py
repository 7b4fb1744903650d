"""The table's door into the rules engine: journal entries in, round facts out.

Journal entries are JSON-shaped dicts (they are what the SQLite journal stores):
``{"roll": [d1, d2, d3], "seq": n}``, ``{"tally": "point"|"three"|"bunco"|"wipeout"}`` (a
"three" may carry ``"face"``),
``{"pass": true}``, ``{"bell": true}`` and ``{"undo": k}`` (take back the last k rolls,
tallies or passes, as k of the engine's ``Undo`` entries).
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.table_round import (
    Bell,
    Entry,
    Pass,
    Roll,
    RuleViolation,
    TableRound,
    TableSetup,
    Tally,
    Undo,
)

JsonEntry = dict[str, Any]

__all__ = ["RuleViolation", "engine_entries", "new_round", "apply", "winner_team"]


def new_round(rules: HouseRules, table: int, seats: tuple[str, str, str, str], target: int,
              can_end_round: bool, ghosts: frozenset[str] = frozenset()) -> TableRound:
    return TableRound.begin(TableSetup(table=table, seats=seats, target=target, rules=rules,
                                       can_end_round=can_end_round,
                                       ghosts=ghosts & frozenset(seats)))


def engine_entries(entry: JsonEntry) -> list[Entry]:
    if "roll" in entry:
        return [Roll(tuple(entry["roll"]))]
    if "tally" in entry:
        return [Tally(entry["tally"], entry.get("face"))]
    if "pass" in entry:
        return [Pass()]
    if "bell" in entry:
        return [Bell()]
    if "undo" in entry:
        return [Undo()] * int(entry["undo"])
    raise RuleViolation(f"not a table entry: {entry!r}")


def apply(state: TableRound, entry: JsonEntry) -> TableRound:
    """The next state; RuleViolation when the entry cannot happen now (nothing is stored)."""
    for engine_entry in engine_entries(entry):
        state = state.apply(engine_entry)
    return state


def winner_team(state: TableRound) -> str:
    """"A" when seat 1's side won the round, else "B" (only meaningful once done)."""
    if state.result is None:
        a, b = state.team_scores
        return "A" if a >= b else "B"
    return "A" if state.setup.seats[0] in state.result.winners else "B"
