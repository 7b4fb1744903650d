"""What arrives on a table node's queue. Producers on other threads build these and ``put``
them; only the node's own thread reads them, so none of them is ever mutated.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from bunco_pi.hardware.buttons import Edge

__all__ = [
    "Edge",
    "DiceRoll",
    "DiceStatus",
    "Seating",
    "RoundStart",
    "BellRang",
    "RoundResults",
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


@dataclass(frozen=True)
class BellRang:
    pass


@dataclass(frozen=True)
class RoundResults:
    """Where each player goes next, one short line each, shown on the results screen."""

    moves: tuple[str, ...] = ()


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
