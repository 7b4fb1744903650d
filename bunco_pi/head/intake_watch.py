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

"Reached the head" is when the link's network thread received something at QoS 1
(``arrived``, as the shell last saw its count move), not when the head's own thread got
round to a table event: a head merely overloaded (its batches slow, its network thread short
of the processor, the broker holding events behind its in-flight slots while the heartbeats
overtake them) still receives, only late. And a link that has received nothing at all, not
even a heartbeat (``heard``: any message), is not reading: the head is short of the
processor, or the connection is down, which MQTT's keepalive settles by itself. Only a link
that reads the heartbeats but no QoS 1 message is stuck. A head that is behind does not
connect again, which would make it worse (the broker sends everything in flight again, the
head says every table's view again): it says so in one line, at most once every ``gap``
seconds, and goes on.

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
class Verdict:
    """What the watch makes of the tables' waiting: reconnect (stuck), or only say it."""

    reconnect: bool
    line: str


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
        self._last_behind = -1e18
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

    def stalled(self, arrived: float | None = None, heard: float | None = None) -> str | None:
        """The line to log if the head should connect again now, else None."""
        verdict = self.check(arrived, heard)
        return verdict.line if verdict is not None and verdict.reconnect else None

    def check(self, arrived: float | None = None, heard: float | None = None) -> Verdict | None:
        """Whether tables wait for the head, and why. ``arrived`` is when (this clock) the
        link's network thread was last seen to have received a QoS 1 message, ``heard`` any
        message, whether or not the head's own thread has taken it yet (None: not known).
        None while nothing is to be said."""
        now = self._clock()
        waiting = {t: w for t, w in self._waiting.items() if now - w.heard_at <= self._fresh_for}
        taken = now - self._last_event
        if not waiting or taken < self.stall_after:
            return None
        tables = sorted(waiting)
        missing = sum(w.missing for w in waiting.values())
        longest = max(w.waited for w in waiting.values())
        names = ", ".join(map(str, tables[:8])) + (" ..." if len(tables) > 8 else "")
        who = (f"table{'s' if len(tables) > 1 else ''} {names} wait"
               f"{'' if len(tables) > 1 else 's'} with {missing} "
               f"entr{'ies' if missing != 1 else 'y'} it does not have (up to {longest:.0f} s)")
        behind = None
        if arrived is not None and now - arrived < self.stall_after:
            behind = (f"its own thread took no table event for {taken:.1f} s, but its link "
                      f"received one {max(0.0, now - arrived):.1f} s ago")
        elif heard is not None and now - heard >= self.stall_after:
            behind = (f"its link has received nothing at all for {now - heard:.1f} s, not even "
                      f"a heartbeat (short of the processor, or a connection the keepalive "
                      f"will settle)")
        if behind is not None:
            if now - self._last_behind < self._base_gap:
                return None
            self._last_behind = now
            return Verdict(False, f"head: behind, not cut off: {behind}, while {who}: "
                                  f"not connecting again (that would only add work)")
        if now - self._last_recovery < self._gap:
            return None
        if self._recovered_since_event:  # the last one brought nothing: wait longer next time
            self._gap = min(self._gap * 2, RECOVERY_GAP_MAX_S)
        self._last_recovery = now
        self._recovered_since_event = True
        self.recoveries += 1
        self._waiting.clear()
        silent = taken if arrived is None else min(taken, now - arrived)
        return Verdict(True, (
            f"head: no table event reached the head for {silent:.1f} s while {who}: "
            f"connecting to the broker again to receive them"))
