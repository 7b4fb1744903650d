"""The table's only door into the rules engine: journal entries in, round facts out.

Keeping every ``bunco_pi.rules`` call here means the node, the book and the screens speak in
plain values (seats, scores, "A"/"B") and follow the engine through one small file.
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.table_round import Bell, Pass, Roll, TableRound, Tally


def new_round(rules: Any, target: int) -> TableRound:
    return TableRound.new(rules, target)


def to_entry(entry: dict[str, Any]) -> Any:
    if "roll" in entry:
        return Roll(tuple(entry["roll"]))
    if "tally" in entry:
        return Tally(entry["tally"])
    if "pass" in entry:
        return Pass()
    if "bell" in entry:
        return Bell()
    raise ValueError(f"not a table entry: {entry!r}")


def apply(state: TableRound, entry: dict[str, Any]) -> TableRound:
    return state.apply(to_entry(entry))


def roller_seat(state: TableRound) -> int:
    return state.roller


def team_scores(state: TableRound) -> tuple[int, int]:
    scores = state.scores
    return scores["A"], scores["B"]


def is_done(state: TableRound) -> bool:
    return state.phase == "done"


def winner(state: TableRound) -> str:
    return state.result


def head_end_reached(state: TableRound, rules: Any) -> bool:
    """Would the head table ring the bell now (target score reached, or a bunco)?"""
    a, b = team_scores(state)
    return max(a, b) >= 21 or bool(state.buncos)
