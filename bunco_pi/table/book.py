"""One round at one table as a log of entries, folded through the rules engine.

The log is append-only and JSON-shaped (it is what the journal stores). An undo is an entry
too: it names the positions it takes back, so replaying the log always gives the same round,
and undoing a BUNCO takes back its points, its bunco and the traveler with it.

Entry shapes: ``{"roll": [d1, d2, d3], "seq": n}``, ``{"tally": "point"|"three"|"bunco"|
"wipeout"}``, ``{"pass": true}``, ``{"bell": "head"|"self"}``, ``{"undo": [i, ...]}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from bunco_pi.table import game

Entry = dict[str, Any]


@dataclass(frozen=True)
class RoundBook:
    rules: Any
    set_number: int
    round_number: int
    players: tuple[str, str, str, str]
    log: tuple[Entry, ...] = ()
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def add(self, entry: Entry) -> RoundBook:
        return RoundBook(self.rules, self.set_number, self.round_number, self.players,
                         self.log + (entry,))

    @cached_property
    def effective(self) -> tuple[Entry, ...]:
        """The log with every undo applied: the entries that count."""
        kept: list[Entry] = []
        for entry in self.log:
            if "undo" in entry:
                drop = set(entry["undo"])
                kept = [e for i, e in enumerate(kept) if i not in drop]
            else:
                kept.append(entry)
        return tuple(kept)

    @cached_property
    def states(self) -> tuple[Any, ...]:
        """The round after 0, 1, ... n effective entries."""
        state = game.new_round(self.rules, self.round_number)
        out = [state]
        for entry in self.effective:
            state = game.apply(state, entry)
            out.append(state)
        return tuple(out)

    @property
    def state(self) -> Any:
        return self.states[-1]

    def undo_last(self) -> Entry | None:
        """The undo entry taking back the latest change (and a bell it rang itself)."""
        entries = self.effective
        changes = [i for i, e in enumerate(entries) if "bell" not in e]
        if not changes:
            return None
        last = changes[-1]
        drop = [last] + [
            i for i in range(last + 1, len(entries)) if entries[i].get("bell") == "self"
        ]
        return {"undo": drop}

    def undo_turn(self) -> Entry | None:
        """The undo entry taking back the whole current turn (or the previous one, if the
        current roller has not done anything yet)."""
        entries = self.effective
        end = len(entries)
        start = self._turn_start(end)
        if start == end:  # nothing yet in this turn: take back the one before it
            changes = [i for i in range(end) if "bell" not in entries[i]]
            if not changes:
                return None
            start = self._turn_start(changes[-1])
        drop = [i for i in range(start, end)
                if "bell" not in entries[i] or entries[i]["bell"] == "self"]
        return {"undo": drop} if drop else None

    def _turn_start(self, end: int) -> int:
        """Index of the first entry of the turn that is running after ``end`` entries."""
        roller = game.roller_seat(self.states[end])
        start = end
        states, entries = self.states, self.effective
        while start > 0 and game.roller_seat(states[start - 1]) == roller:
            if "pass" in entries[start - 1]:
                break
            start -= 1
        return start
