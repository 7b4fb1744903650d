"""Whether the head has stopped receiving while tables wait: the tables' heartbeats say so.

A table box says every few seconds what its outbox holds (``protocol.Heartbeat``, QoS 0: it
gets through when the head's QoS 1 intake does not). If some table holds entries the head
has not committed, has waited for an ack at least ``stall_after`` seconds, and no table
event of any kind has reached the head for as long, the head's intake is stuck somewhere
between the broker and itself (mosquitto 2.0.11 could keep the head's in-flight slots, for
one): the head connects again, which resets the broker's window and delivers what was
queued. One line in the log says why. The next recovery waits at least ``gap`` seconds,
twice as long after each one that brought no event, so a table that merely waits (its own
resend backs off up to 30 s) costs the head at most a reconnect now and then.

Pure bookkeeping: the clock is given, the shell reconnects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bunco_pi.protocol import HEARTBEAT_S, Heartbeat

STALL_AFTER_S = 4.0  # two heartbeats and then some: a resend after 3 s has had its chance
RECOVERY_GAP_S = 15.0
RECOVERY_GAP_MAX_S = 300.0


@dataclass(frozen=True, slots=True)
class Waiting:
    heard_at: float  # when the heartbeat came (the head's clock)
    missing: int  # entries the table holds that the head has not committed
    waited: float  # seconds, as the table said


class IntakeWatch:
    def __init__(self, clock: Callable[[], float], *, stall_after: float = STALL_AFTER_S,
                 gap: float = RECOVERY_GAP_S, heartbeat_every: float = HEARTBEAT_S) -> None:
        self._clock = clock
        self.stall_after = stall_after
        self._base_gap = self._gap = gap
        self._fresh_for = 2 * heartbeat_every + 1.0  # a heartbeat older than this is stale
        self._last_event = clock()
        self._last_recovery = -1e18
        self._recovered_since_event = False
        self._waiting: dict[int, Waiting] = {}
        self.recoveries = 0

    def heard_event(self) -> None:
        """A table event reached the head (any table, valid or not)."""
        self._last_event = self._clock()
        if self._recovered_since_event:
            self._recovered_since_event = False
            self._gap = self._base_gap

    def heartbeat(self, table: int, beat: Heartbeat, committed: int) -> None:
        """Table ``table`` says what it holds; the head has committed up to ``committed``."""
        missing = (beat.holds - committed) if beat.holds is not None else 0
        if missing > 0 and beat.waiting is not None and beat.waiting >= self.stall_after:
            self._waiting[table] = Waiting(self._clock(), missing, beat.waiting)
        else:
            self._waiting.pop(table, None)

    def stalled(self) -> str | None:
        """The line to log if the head should connect again now, else None."""
        now = self._clock()
        waiting = {t: w for t, w in self._waiting.items() if now - w.heard_at <= self._fresh_for}
        silent = now - self._last_event
        if not waiting or silent < self.stall_after or now - self._last_recovery < self._gap:
            return None
        if self._recovered_since_event:  # the last one brought nothing: wait longer next time
            self._gap = min(self._gap * 2, RECOVERY_GAP_MAX_S)
        self._last_recovery = now
        self._recovered_since_event = True
        self.recoveries += 1
        self._waiting.clear()
        tables = sorted(waiting)
        missing = sum(w.missing for w in waiting.values())
        longest = max(w.waited for w in waiting.values())
        names = ", ".join(map(str, tables[:8])) + (" ..." if len(tables) > 8 else "")
        return (f"head: no table event reached the head for {silent:.1f} s while table"
                f"{'s' if len(tables) > 1 else ''} {names} wait{'' if len(tables) > 1 else 's'} "
                f"with {missing} entr{'ies' if missing != 1 else 'y'} it does not have (up to "
                f"{longest:.0f} s): connecting to the broker again to receive them")
