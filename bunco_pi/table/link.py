"""Where a table's seating, round starts and bell come from.

A table node does not know whether it is alone or one of many: it talks to a ``TableLink``.
``StandaloneLink`` (in ``standalone_link``, so a networked box never loads the night's rules
engine) is the table being its own head; ``InProcessLink`` lets a test, or a networked link, play the head's
part by hand. Links post events onto the node's queue and never touch its state; the node
calls back into the link from its own thread to report what happened at the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bunco_pi.rules.table_round import Entry, TableRound
from bunco_pi.table.events import BellRang, RoundStart, Seating

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
