"""Where a table's seating, round starts and bell come from.

A table node does not know whether it is alone or one of many: it talks to a ``TableLink``.
``StandaloneLink`` is the table being its own head (one table, the whole night folded by the
rules engine's ``Night``); ``InProcessLink`` lets a test, or a networked link, play the head's
part by hand. Links post events onto the node's queue and never touch its state; the node
calls back into the link from its own thread to report what happened at the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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
from bunco_pi.rules.table_round import Entry, TableRound
from bunco_pi.table.events import (
    BellRang,
    BreakStart,
    NightEnd,
    RoundResults,
    RoundStart,
    Seating,
)

Post = Callable[[object], None]


@dataclass(frozen=True)
class RoundSummary:
    """What a table reports when a round is over: the engine's finished round."""

    set_number: int
    round_number: int
    state: TableRound


class TableLink(Protocol):
    """Everything a table node asks of its link, on the node's own thread. ``LinkBase`` gives
    the defaults of a link that does not talk to a head over a network."""

    #: In standalone play a roll between rounds starts the next round; a head decides that itself.
    rolls_start_rounds: bool
    #: Seconds between calls of ``tick`` (None: never).
    poll_interval: float | None
    #: What the screen says when a button means nothing between rounds ("" : the node's own).
    between_rounds_hint: str
    #: The hint under a round's results.
    results_hint: str
    #: The link keeps the table's entries in a store of its own (the outbox), so the dice
    #: reader resumes from ``last_roll_seq``; otherwise from the node's journal.
    keeps_entries: bool

    def attach(self, post: Post) -> None:
        """Start sending events to ``post`` (seating first)."""

    def open(self) -> None:
        """On the node's thread, before anything else: open files, connect."""

    def shut(self) -> None:
        """On the node's thread, last: disconnect, close files."""

    def tick(self) -> None:
        """Every ``poll_interval`` seconds: periodic work (resending to a quiet head)."""

    def take(self, event: object) -> None:
        """A record the link posted for itself (a broker message, a connect), handed back on
        the node's thread."""

    def record_entry(self, entry: dict[str, Any]) -> None:
        """Make an accepted entry durable where the link keeps it (and send it); the node
        shows it only after this returns. Raises if it cannot."""

    def resume(self, finished: Sequence[Sequence[Entry]], open_round: bool) -> None:
        """After a restart: the rounds the node's journal holds (finished ones, and whether
        one is open)."""

    def last_roll_seq(self) -> int | None:
        """The dice reader's seq of the latest roll in the link's own store (any thread), so
        a repeat of it after a restart is ignored (None: no roll there)."""

    @property
    def status(self) -> str:
        """One line for the screen when something is wrong with the link ("" when not)."""

    @property
    def bell_rung(self) -> bool:
        """The head says the bell rang for the round being played here."""

    @property
    def may_reopen(self) -> bool:
        """An undo may reopen the finished round (the head has not closed it yet)."""

    def end_reached(self) -> None:
        """This table's play ended the round for everyone (head table: target or bunco)."""

    def round_over(self, summary: RoundSummary) -> None:
        """The round at this table is finished, roll-offs included."""

    def round_reopened(self) -> None:
        """An undo on the results screen took back the change that ended the round."""

    def next_requested(self) -> None:
        """The scorekeeper asked to go on (pass pressed on results or a break)."""

    def close(self) -> None: ...


class LinkBase:
    """The defaults of ``TableLink`` for a link with no network: nothing to open, poll, take
    or store (the node's journal is the store), no status line, no bell of its own."""

    rolls_start_rounds = False
    poll_interval: float | None = None
    between_rounds_hint = ""
    results_hint = "pass: go on"
    keeps_entries = False

    def open(self) -> None:
        """Nothing to open."""

    def shut(self) -> None:
        """Nothing to shut."""

    def tick(self) -> None:
        """Nothing to do now and then."""

    def take(self, event: object) -> None:
        """Posts nothing for itself."""

    def record_entry(self, entry: dict[str, Any]) -> None:
        """The node's journal keeps the entry."""

    def resume(self, finished: Sequence[Sequence[Entry]], open_round: bool) -> None:
        """Nothing to rebuild."""

    def last_roll_seq(self) -> int | None:
        """No store of its own: the node's journal has the rolls."""
        return None

    @property
    def status(self) -> str:
        return ""

    @property
    def bell_rung(self) -> bool:
        return False

    @property
    def may_reopen(self) -> bool:
        return True


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


class InProcessLink(LinkBase):
    """A link driven by hand: the test (or a network adapter) plays the head's part."""

    rolls_start_rounds = False

    def __init__(self) -> None:
        self._post: Post | None = None
        self.reports: list[tuple[str, Any]] = []

    def attach(self, post: Post) -> None:
        self._post = post

    def send(self, event: object) -> None:
        if self._post is None:
            raise RuntimeError("the link is not attached to a table node")
        self._post(event)

    def seat(self, players: tuple[str, str, str, str]) -> None:
        self.send(Seating(players))

    def start_round(self, set_number: int, round_number: int, target: int,
                    seats: tuple[str, str, str, str], can_end_round: bool = True) -> None:
        self.send(RoundStart(set_number, round_number, target, seats, can_end_round))

    def ring_bell(self) -> None:
        self.send(BellRang())

    def end_reached(self) -> None:
        self.reports.append(("end_reached", None))

    def round_over(self, summary: RoundSummary) -> None:
        self.reports.append(("round_over", summary))

    def round_reopened(self) -> None:
        self.reports.append(("round_reopened", None))

    def next_requested(self) -> None:
        self.reports.append(("next_requested", None))

    def close(self) -> None:
        self._post = None
