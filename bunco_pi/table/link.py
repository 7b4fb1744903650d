"""Where a table's seating, round starts and bell come from.

A table node does not know whether it is alone or one of many: it talks to a ``TableLink``.
``StandaloneLink`` is the table being its own head (one table, rounds one after another);
``InProcessLink`` lets a test, or a future networked link, drive the node by hand. Links post
events onto the node's queue and never touch its state; the node calls back into the link
from its own thread to report what happened at the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bunco_pi.table.events import BellRang, BreakStart, NightEnd, RoundResults, RoundStart, Seating

Post = Callable[[object], None]


@dataclass(frozen=True)
class RoundSummary:
    """What a table reports when a round is over."""

    set_number: int
    round_number: int
    players: tuple[str, str, str, str]
    score_a: int
    score_b: int
    winner: str  # "A" or "B"
    result: Any = None  # the engine's own result object


class TableLink(Protocol):
    #: In standalone play a roll between rounds starts the next round; a head decides that itself.
    rolls_start_rounds: bool

    def attach(self, post: Post) -> None:
        """Start sending events to ``post`` (seating first)."""

    def end_reached(self) -> None:
        """This table reached the head table's end of round (target score or a bunco)."""

    def round_over(self, summary: RoundSummary) -> None:
        """The round at this table is finished, roll-offs included."""

    def round_reopened(self) -> None:
        """An undo on the results screen took back the change that ended the round."""

    def next_requested(self) -> None:
        """The scorekeeper asked to go on (pass pressed on results or a break)."""

    def close(self) -> None: ...


class StandaloneLink:
    """One table that is its own head: it rings its own bell and starts its own rounds."""

    rolls_start_rounds = True

    def __init__(
        self,
        players: tuple[str, str, str, str],
        sets: int = 4,
        rounds_per_set: int = 6,
        break_after_set: int | None = 2,
    ) -> None:
        self.players = players
        self.sets = sets
        self.rounds_per_set = rounds_per_set
        self.break_after_set = break_after_set
        self._post: Post | None = None
        self._position: tuple[int, int] = (1, 1)
        self._state = "idle"  # idle, playing, results, break, ended
        self.summaries: list[RoundSummary] = []

    def attach(self, post: Post) -> None:
        self._post = post
        post(Seating(self.players))

    def resume_at(self, set_number: int, round_number: int) -> None:
        """After a restart the journal knows the round; carry on counting from there."""
        self._position = (set_number, round_number)
        self._state = "playing"

    def end_reached(self) -> None:
        if self._post and self._state == "playing":
            self._post(BellRang())

    def round_over(self, summary: RoundSummary) -> None:
        self.summaries.append(summary)
        self._state = "results"
        if self._post:
            self._post(RoundResults(("one table: everyone stays",)))

    def round_reopened(self) -> None:
        if self.summaries:
            self.summaries.pop()
        self._state = "playing"

    def next_requested(self) -> None:
        if self._post is None:
            return
        if self._state == "idle":
            self._start(*self._position)
            return
        if self._state == "break":
            set_number, _ = self._position
            self._start(set_number + 1, 1)
            return
        if self._state != "results":
            return
        set_number, round_number = self._position
        if round_number < self.rounds_per_set:
            self._start(set_number, round_number + 1)
        elif set_number >= self.sets:
            self._state = "ended"
            self._post(NightEnd())
        elif set_number == self.break_after_set:
            self._state = "break"
            self._post(BreakStart("break"))
        else:
            self._start(set_number + 1, 1)

    def _start(self, set_number: int, round_number: int) -> None:
        assert self._post is not None
        self._position = (set_number, round_number)
        self._state = "playing"
        self._post(RoundStart(set_number, round_number))

    def close(self) -> None:
        self._post = None


class InProcessLink:
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

    def start_round(self, set_number: int, round_number: int) -> None:
        self.send(RoundStart(set_number, round_number))

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
