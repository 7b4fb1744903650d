"""A table that is its own head: one table, the whole night folded by the rules engine's
``Night`` here on the box."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.night import (
    BREAK,
    PRIZES,
    READY,
    RESULTS,
    CloseRound,
    EndBreak,
    NextRound,
    Night,
    NightEvent,
    Player,
    SettlePrizes,
    StartRound,
    TableEntry,
)
from bunco_pi.rules.record import build_record
from bunco_pi.rules.table_round import Entry
from bunco_pi.table.events import (
    BreakStart,
    NightEnd,
    RoundResults,
    RoundStart,
    Seating,
)
from bunco_pi.table.link import LinkBase, Post, RoundSummary


class StandaloneLink(LinkBase):
    """One table that is its own head: the night's fold lives here, for this table alone.

    ``players`` are the real players, seat 1 first: fewer than four leave ghost seats
    ("Ghost 1", ...) that the rules play as the house's ghost rules say. ``table`` is this
    table's own number, which its record carries. ``seed`` settles prize tie-breaks at the end
    of the night (the caller picks it, so the rules stay free of randomness).
    """

    rolls_start_rounds = True

    def __init__(self, rules: HouseRules, players: Sequence[str], table: int = 1,
                 seed: int = 0) -> None:
        if not 1 <= len(players) <= 4 or len(set(players)) != len(players):
            raise ValueError(f"a table seats 1 to 4 different players, got {list(players)}")
        self.rules = rules
        self.table = table
        self.seed = seed
        ghosts = [f"Ghost {n}" for n in range(1, 5 - len(players))]
        roster = [Player(name, name) for name in players]
        roster += [Player(name, name, ghost=True) for name in ghosts]
        self.night = Night.start(rules, roster, [tuple(p.id for p in roster)])
        self.log: list[NightEvent] = []
        self._post: Post | None = None
        self._before_close: tuple[Night, int] | None = None

    # --- the night fold -------------------------------------------------------------------

    def _apply(self, event: NightEvent) -> None:
        self.night = self.night.apply(event)
        self.log.append(event)

    def record(self, open_entries: Sequence[Entry] = ()) -> dict[str, Any]:
        """The night record so far; ``open_entries`` are the entries of a round in play."""
        night, log = self.night, list(self.log)
        for entry in open_entries:
            event = TableEntry(1, entry)
            night = night.apply(event)
            log.append(event)
        return build_record(night, log, source="table", table_numbers=(self.table,))

    def resume(self, finished: Sequence[Sequence[Entry]], open_round: bool) -> None:
        """Rebuild the night from the journal's rounds after a restart."""
        for i, entries in enumerate(finished):
            self._end_break_before_a_later_round()
            self._apply(StartRound())
            for entry in entries:
                self._apply(TableEntry(1, entry))  # the night's one table
            self._apply(CloseRound())
            if i < len(finished) - 1 or open_round:
                self._next()
        if open_round:
            self._end_break_before_a_later_round()
            self._apply(StartRound())

    def _end_break_before_a_later_round(self) -> None:
        # the journal keeps rounds, not the press that ended the break: a later round in it
        # means the break was over
        if self.night.phase == BREAK:
            self._apply(EndBreak())

    # --- the link -------------------------------------------------------------------------

    def attach(self, post: Post) -> None:
        self._post = post
        post(Seating(self.night.seating[0]))
        if self.night.phase == RESULTS:
            self._post_results()
        elif self.night.phase == BREAK:
            post(BreakStart("break"))

    def end_reached(self) -> None:
        """Nothing to do: the engine ends the head table's round by itself."""

    def round_over(self, summary: RoundSummary) -> None:
        self._before_close = (self.night, len(self.log))
        for entry in summary.state.entries:
            self._apply(TableEntry(1, entry))  # the night's one table
        self._apply(CloseRound())
        self._post_results()

    def round_reopened(self) -> None:
        if self._before_close is not None:
            self.night, length = self._before_close
            del self.log[length:]
            self._before_close = None

    def next_requested(self) -> None:
        if self._post is None:
            return
        phase = self.night.phase
        if phase == RESULTS:
            self._next()
            phase = self.night.phase
            if phase == BREAK:
                self._post(BreakStart("break"))
                return
        elif phase == BREAK:
            self._apply(EndBreak())
        elif phase != READY:
            return
        if self.night.phase == PRIZES:
            self._apply(SettlePrizes(self.seed))
            self._post(NightEnd(tuple((a.name, a.player or "-") for a in self.night.prizes)))
            return
        self._start()

    def _next(self) -> None:
        self._apply(NextRound())
        self._before_close = None

    def _start(self) -> None:
        assert self._post is not None
        self._apply(StartRound())
        seats = self.night.seating[0]
        self._post(Seating(seats))
        self._post(RoundStart(self.night.set_number, self.night.round_number,
                              self.night.target, seats, can_end_round=True,
                              ghosts=self.night.ghosts))

    def _post_results(self) -> None:
        if self._post is None:
            return
        moves = self.night.history[-1].moves
        lines = tuple(f"{m.player}: seat {m.to_seat}" for m in moves) or ("stay seated",)
        self._post(RoundResults(lines))

    def close(self) -> None:
        self._post = None
