"""One round at one table as a log of journal entries, folded through the rules engine.

The log is append-only (it is what the journal stores); an undo is an entry too, so
replaying the log always gives the same round, and undoing a BUNCO takes back its points, its
bunco and the traveler with it, and re-opens a round that it ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.table_round import Bell, TableRound
from bunco_pi.table import game
from bunco_pi.table.game import JsonEntry


@dataclass(frozen=True)
class RoundBook:
    rules: HouseRules
    table: int
    set_number: int
    round_number: int
    target: int
    players: tuple[str, str, str, str]
    can_end_round: bool
    log: tuple[JsonEntry, ...] = ()
    ghosts: frozenset[str] = frozenset()

    def start(self) -> TableRound:
        return game.new_round(self.rules, self.table, self.players, self.target,
                              self.can_end_round, self.ghosts)

    def add(self, entry: JsonEntry) -> RoundBook:
        """The book with ``entry`` added; RuleViolation if the rules refuse it."""
        # Fold one step from the state we have (the same as refolding the whole log, without
        # the cost), and now: a refused entry must never reach the journal.
        state = game.apply(self.state, entry)
        book = RoundBook(self.rules, self.table, self.set_number, self.round_number,
                         self.target, self.players, self.can_end_round, self.log + (entry,),
                         self.ghosts)
        book.__dict__["state"] = state  # the cached_property's slot
        return book

    @cached_property
    def state(self) -> TableRound:
        state = self.start()
        for entry in self.log:
            state = game.apply(state, entry)
        return state

    def undo_last(self) -> JsonEntry | None:
        """The entry taking back the latest roll, tally or pass (None: nothing to undo)."""
        return {"undo": 1} if self.state.can_undo else None

    def undo_turn(self) -> JsonEntry | None:
        """The entry taking back the whole current turn, or the previous turn and its pass
        when the current roller has not done anything yet."""
        entries = self.state.entries
        undoable = [i for i, e in enumerate(entries) if not isinstance(e, Bell)]
        if not undoable:
            return None
        start = self._turn_start(len(entries))
        if start == len(entries) or all(isinstance(e, Bell) for e in entries[start:]):
            start = self._turn_start(undoable[-1])
        count = sum(1 for e in entries[start:] if not isinstance(e, Bell))
        return {"undo": count} if count else None

    def _turn_start(self, end: int) -> int:
        """Index of the first entry of the turn running after the first ``end`` entries."""
        setup_start = self.start()
        entries = self.state.entries
        states = [setup_start]
        for entry in entries[:end]:
            states.append(states[-1].apply(entry))
        roller = states[end].roller_seat
        start = end
        while start > 0 and states[start - 1].roller_seat == roller:
            start -= 1
        return start
