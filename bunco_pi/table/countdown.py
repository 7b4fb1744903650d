"""A timed round's minutes left, as a box shows them: the head's ``timer`` counted down here.

The head's small state carries ``"timer": {"phase", "left", "total"}`` (``phase`` one of
``round``, ``warn``, ``pause``, ``move``; ``left`` the seconds left when the head said it). A box
counts down from when it received it by its own monotonic clock, so the head's and the box's
wall clocks need not agree; the head says it again on every change (start, warning, pause,
resume, move break, end). Pure: the time is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bunco_pi.table.layout import timer_text

PHASES = ("round", "warn", "pause", "move")


def _seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e6:
        return float(value)
    return None


@dataclass(frozen=True)
class Countdown:
    phase: str
    left: float  # seconds left when it was received
    total: float
    received: float  # the box's monotonic clock then

    def left_at(self, now: float) -> float:
        """Seconds left at ``now`` (a paused clock stands still)."""
        if self.phase == "pause":
            return self.left
        return max(0.0, self.left - max(0.0, now - self.received))

    def label(self, now: float) -> str:
        """A few characters for the screen, worded as the Pico box words them
        (``layout.timer_text``): ``2:31``, ``0:29!`` in the warning, ``paused 2:00``,
        ``move 1:45`` in the move break."""
        return timer_text({"phase": self.phase, "left": self.left_at(now)}, 0.0)


def read_countdown(timer: Any, received: float) -> Countdown | None:
    """The ``timer`` of a head's state, received at ``received``; None if it has none or a
    malformed one (an older head says nothing of time)."""
    if not isinstance(timer, dict) or timer.get("phase") not in PHASES:
        return None
    left, total = _seconds(timer.get("left")), _seconds(timer.get("total"))
    if left is None or total is None:
        return None
    return Countdown(timer["phase"], left, total, received)
