"""What arrives on a table node's queue. Producers on other threads build these and ``put``
them; only the node's own thread reads them, so none of them is ever mutated.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from bunco_pi.hardware.buttons import Edge

__all__ = [
    "Edge",
    "DiceRoll",
    "DiceStatus",
    "Seating",
    "RoundStart",
    "BellRang",
    "RoundResults",
    "Waiting",
    "BreakStart",
    "NightEnd",
    "Sync",
    "Tick",
    "Stop",
]


@dataclass(frozen=True)
class DiceRoll:
    """A settled roll from the dice sensor or camera (its seq makes a repeated line harmless)."""

    seq: int
    dice: tuple[int, int, int]


@dataclass(frozen=True)
class DiceStatus:
    """The sensor's (or camera's) link came up, went down, or said something worth showing.

    ``device`` and ``alert`` are the full-screen warning shown once when it goes down.
    """

    up: bool
    detail: str = ""
    device: str = "dice sensor"
    alert: tuple[str, ...] = ("unplugged or silent:", "keep using buttons")


# From the link: the head (or the table's own standalone logic).
@dataclass(frozen=True)
class Seating:
    players: tuple[str, str, str, str]


@dataclass(frozen=True)
class RoundStart:
    set_number: int
    round_number: int
    target: int
    seats: tuple[str, str, str, str]
    can_end_round: bool  # the head table (or any table, by house rules) ends the round
    # A networked table: the head's round number for the night, the rules it plays, who is a
    # ghost, player id -> name for the screen, and entries already made in this round (read
    # back from the outbox after a restart: they are folded again, not stored again).
    round_index: int | None = None
    rules: Any = None
    ghosts: frozenset[str] = frozenset()
    names: tuple[tuple[str, str], ...] = ()
    replay: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class BellRang:
    pass


@dataclass(frozen=True)
class HostUndo:
    """The host asks this table to undo its latest change, as its undo button does; ``command``
    is the head's command id (kept with the Undo, so it is entered once), ``round_index`` the
    round it is meant for."""

    command: int
    round_index: int


@dataclass(frozen=True)
class RoundResults:
    """Where each player goes next, one short line each, shown on the results screen."""

    moves: tuple[str, ...] = ()
    # From a head: the round's result as the head folded it (None: use the table's own).
    score: tuple[int, int] | None = None
    won: bool | None = None
    headline: str = ""


@dataclass(frozen=True)
class Waiting:
    """No round is on at this table: show the seats (None: keep them) and why it waits."""

    players: tuple[str, str, str, str] | None = None
    message: str = ""


@dataclass(frozen=True)
class BreakStart:
    message: str = "break"


@dataclass(frozen=True)
class NightEnd:
    prizes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, eq=False)
class Sync:
    """Set ``done`` once every event queued before it has been handled (tests, shutdown)."""

    done: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class Tick:
    """Look at the clock now (button holds and debounce windows that are due)."""


@dataclass(frozen=True)
class Stop:
    pass
