"""The head table's decisions, without any I/O: inputs in, effects out.

The coordinator owns the night (the fold of the rules engine). The table entries it takes
(``accept``) are already committed to the event log, each once and in its table's seq order
(``bunco_pi.head.ingest`` de-duplicates, holds early ones and acknowledges). Every input
returns a list of effects for the shell to carry out *in order*: first ``Commit`` (make the
head's own log records durable), then publications and the buzzer. So nothing is announced
before it is on disk, and on restart ``restore(records)`` rebuilds exactly the same
coordinator from the log.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bunco_pi.head.night_log import NightLog
from bunco_pi.head.views import night_state, player_names, table_view, table_views
from bunco_pi.protocol import TableEvent, read_table_event
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.legality import ROUND_PHASES, round_refusal
from bunco_pi.rules.night import (
    BREAK,
    ENDED,
    PLAYING,
    PRIZES,
    READY,
    RESULTS,
    CloseHeldRound,
    CloseRound,
    EndBreak,
    NextRound,
    Night,
    NightEvent,
    PauseClock,
    Player,
    ResumeClock,
    RingBell,
    SettlePrizes,
    StartClock,
    StartRound,
    TableEntry,
    TimeUp,
)
from bunco_pi.rules.record import build_record, decode_event, encode_event
from bunco_pi.rules.rotation import Seats, initial_seating
from bunco_pi.rules.table_round import SCORED, RuleViolation


def _latest_views(effects: list[Effect]) -> list[Effect]:
    """Only the last view of each table: views are retained, so a batch of 300 entries from a
    table after a Wi-Fi cut need not publish 300 of them (the others are stale at once)."""
    last = {e.table: i for i, e in enumerate(effects) if isinstance(e, PublishView)}
    return [e for i, e in enumerate(effects)
            if not isinstance(e, PublishView) or last[e.table] == i]


# A horn sounded more than this after its deadline is marked late: the head was down (or
# stalled) at the deadline and ended the round as soon as it could.
LATE_AFTER = 1.0
# While a clock runs the state is said again this often, so a box that joined late (it got the
# broker's retained state, with the seconds left as they were then) is soon right again.
TIMER_REFRESH = 10.0


def steady_wall() -> Callable[[], float]:
    """The wall clock as it read when the head started, moved on by the monotonic clock: a
    wall clock that jumps mid-round (a Pi that gets the time from the network late) does not
    move the horn; across a restart the deadline is read against the wall clock again."""
    wall0, mono0 = time.time(), time.monotonic()
    return lambda: wall0 + (time.monotonic() - mono0)


class RestoreError(ValueError):
    """The log does not replay: one line naming the record (a log from another version or
    rules, or a damaged file)."""


# --- effects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Commit:
    """Make these log records durable (one transaction) before doing anything after it."""

    records: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class PublishState:
    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PublishView:
    table: int
    view: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Buzz:
    pattern: str  # "round-start", "round-end", "bunco", "warn", "time-up"


@dataclass(frozen=True, slots=True)
class Note:
    """A line for the head's log: something was refused or is worth knowing."""

    text: str


@dataclass(frozen=True, slots=True)
class Refused(Note):
    """A table's entry the engine refused (logged, and acknowledged like any other, so it is
    not sent again, but never counted): the shell logs ``text`` and tells the table's box."""

    table: int = 0
    seq: int = 0
    reason: str = ""


def _refused(event: TableEvent, reason: str) -> Refused:
    reason = reason.removeprefix(f"table {event.table}: ")  # the line names it once
    return Refused(f"table {event.table} seq {event.seq} refused: {reason}", event.table,
                   event.seq, reason)


Effect = Commit | PublishState | PublishView | Buzz | Note


@dataclass
class Coordinator:
    rules: HouseRules
    rules_toml: str
    name: str
    table_count: int
    entropy: random.Random = field(default_factory=random.SystemRandom)
    night: Night | None = None
    log: NightLog = field(default_factory=NightLog)  # every event applied, in order
    seen: dict[int, int] = field(default_factory=dict)  # table -> highest seq handled
    online: set[int] = field(default_factory=set)
    # The wall clock a timed round's deadline is read from (seconds since the epoch): what it
    # reads is logged, so a replay needs no clock.
    wall: Callable[[], float] = field(default_factory=steady_wall)
    _warned: float | None = None  # the deadline whose warning has sounded
    _said_at: float = 0.0  # the wall clock when the state was last made
    # the night's players and their names by id, as last worked out (``_names_of``)
    _names: tuple[tuple[Player, ...], dict[str, str]] | None = field(default=None, repr=False)

    # --- the night's set-up ---------------------------------------------------------------

    def start_night(self, players: Sequence[Player], seating: Sequence[Seats] | None = None
                    ) -> list[Effect]:
        """Check players in and draw the seats (like the star cards), if not given."""
        if self.night is not None:
            return [Note("the night has already started")]
        if len(players) != self.table_count * 4:
            raise ValueError(f"{self.table_count} tables need {self.table_count * 4} players "
                             f"(ghosts included), got {len(players)}")
        if seating is None:
            ids = [p.id for p in players]
            seating = initial_seating(ids, self.entropy.sample(range(len(ids)), len(ids)))
        record = {"kind": "setup", "name": self.name, "rules_toml": self.rules_toml,
                  "players": [{"id": p.id, "name": p.name, "ghost": p.ghost} for p in players],
                  "seating": [list(s) for s in seating]}
        self._setup(record)
        return [Commit((record,)), *self._announce_all()]

    def _setup(self, record: dict[str, Any]) -> None:
        players = [Player(p["id"], p["name"], p["ghost"]) for p in record["players"]]
        self.night = Night.start(self.rules, players, [tuple(s) for s in record["seating"]])
        self.log = NightLog()

    # --- restoring from the log -----------------------------------------------------------

    def restore(self, records: Iterable[dict[str, Any]]) -> list[Effect]:
        """Rebuild the coordinator from its committed log records, in log order.

        Returns what the head must still do: a round whose tables had all finished when the
        head stopped is closed now (that close was never committed), and everything is
        announced again for nodes that missed it.
        """
        # The latest refusal of each table's, said again: a box that was away when its entry
        # was refused learns it from the ack the head publishes once it is back.
        refusals: dict[int, Refused] = {}
        for position, record in enumerate(records, start=1):
            try:
                self._restore_one(record, refusals)
            except (RuleViolation, KeyError, TypeError, ValueError) as exc:
                raise RestoreError(f"the night's log does not replay at record {position} "
                                   f"({record.get('kind', '?')}): {exc}") from None
        told: list[Effect] = list(refusals.values())
        clock = self.night.clock if self.night is not None else None
        if clock is not None and clock.phase == "round" and \
                clock.left(self.wall()) <= self.rules.round.warn_seconds:
            self._warned = clock.deadline  # it sounded before the restart
        if self.night is None:
            return [*told, PublishState(self.state())]
        records_now, after = self._progress()
        effects: list[Effect] = [Commit(tuple(records_now))] if records_now else []
        return told + effects + after + self._announce_all()

    def _restore_one(self, record: dict[str, Any], refusals: dict[int, Refused]) -> None:
        kind = record["kind"]
        if kind == "setup":
            self._setup(record)
        elif kind == "night":
            self._apply(decode_event(record["event"]))
        elif kind == "table":
            event = read_table_event(record["table"], record["seq"], record)
            self.seen[event.table] = max(self.seen.get(event.table, 0), event.seq)
            for effect in self._take(event):
                if isinstance(effect, Refused):
                    refusals[event.table] = effect

    # --- inputs ---------------------------------------------------------------------------

    def table_online(self, table: int, online: bool) -> list[Effect]:
        if online:
            self.online.add(table)
        else:
            self.online.discard(table)
        return [PublishState(self.state())] if self.night is None else []

    def accept(self, events: Sequence[TableEvent]) -> list[Effect]:
        """Entries the shell has already committed to the log in one batch, in log order, each
        next in its table's sequence (the networked path: the event log de-duplicates and
        acknowledges). The whole batch is applied before the round may close, so the close
        is logged after the batch exactly where it happened: a replay then does the same."""
        after: list[Effect] = []
        for event in events:
            if event.table > self.table_count:
                after.append(_refused(event, f"there are only {self.table_count} tables "
                                             "tonight"))
                continue
            self.seen[event.table] = event.seq
            after += self._take(event)
        records, more_after = self._progress()
        head: list[Effect] = [Commit(tuple(records))] if records else []
        return head + _latest_views(after + more_after)

    def _take(self, event: TableEvent) -> list[Effect]:
        """Apply a table's entry if the engine takes it (rules/legality.py: where an entry may
        happen); refuse it otherwise. Refusing depends only on the night and the entry, so a
        replay refuses the same ones."""
        night = self.night
        bell_before = night.bell_rung if night is not None else False
        if night is None:
            reason: str | None = "no round is being played (the night is 'lobby')"
        else:
            on = night.round_index if night.phase in ROUND_PHASES else None
            reason = round_refusal(event.round_index, on)
        if reason is None:
            try:
                self._apply(TableEntry(event.table, event.entry))
            except RuleViolation as exc:
                reason = str(exc)
        if reason is not None:
            return [_refused(event, reason)]
        night = self.night
        assert night is not None
        after: list[Effect] = [PublishView(event.table, table_view(
            night, event.table, names=self._names_of(night)))]
        rolls = night.table(event.table).rolls
        # only the roll or tally just taken buzzes: a pass after a bunco leaves the bunco last
        if isinstance(event.entry, SCORED) and rolls and rolls[-1].outcome.bunco \
                and night.table(event.table).entries[-1] is event.entry:
            after.append(Buzz("bunco"))
        if night.bell_rung and not bell_before:
            after += [Buzz("round-end"), PublishState(self.state())]
        return after

    def press_bell(self) -> list[Effect]:
        """The host's physical bell: start a round, force its end, dismiss the break."""
        night = self.night
        if night is None:
            return [Note("the bell starts the night once players have checked in")]
        events: list[NightEvent] = []
        if night.phase == READY:
            events = [StartRound()]
        elif night.phase == PLAYING:
            events = [RingBell()]
        elif night.phase == RESULTS:
            events = [NextRound()]
        elif night.phase == BREAK:
            events = [EndBreak(), StartRound()]
        if not events:
            return [Note(f"the bell does nothing while the night is '{night.phase}'")]
        records = []
        for event in events:
            self._apply(event)
            records.append({"kind": "night", "event": encode_event(event)})
        if self.night.phase == READY and isinstance(events[-1], NextRound):  # type: ignore[union-attr]
            self._apply(StartRound())
            records.append({"kind": "night", "event": encode_event(StartRound())})
        records += self._start_round_clock()
        more_records, after = self._progress()
        effects: list[Effect] = [Commit(tuple(records + more_records))]
        if self.night.phase == PLAYING and not self.night.bell_rung:  # type: ignore[union-attr]
            effects.append(Buzz("round-start"))
        elif any(isinstance(e, RingBell) for e in events):
            effects.append(Buzz("round-end"))
        return effects + after + self._announce_all()

    def close_held_round(self) -> list[Effect]:
        """The host held the bell: close a round that tables which will not finish (a dead
        box) hold up. They count by ``round.held_table``; their later entries are logged but
        refused, since the round they belong to is over."""
        night = self.night
        if night is None or night.phase not in (PLAYING, "finishing"):
            phase = night.phase if night is not None else "lobby"
            return [Note(f"holding the bell closes a round being played; the night is '{phase}'")]
        if night.all_tables_done:
            return [Note("every table has finished: the round closes by itself")]
        held = [t.setup.table for t in night.tables if not t.done]
        self._apply(CloseHeldRound())
        records = [{"kind": "night", "event": encode_event(CloseHeldRound())}]
        records += self._start_move_clock()
        more_records, after = self._progress()
        rule = night.rules.round.held_table
        return [Commit(tuple(records + more_records)),
                Note(f"the host closed the round; table{'s' if len(held) > 1 else ''} "
                     f"{', '.join(map(str, held))} counted as {rule}"),
                Buzz("round-end"), *after, *self._announce_all()]

    def host_event(self, event: NightEvent) -> list[Effect]:
        """A host's decision from the console (a late arrival, someone leaving, the night ended
        early): applied, logged like the bell's records, announced. RuleViolation if refused."""
        if self.night is None:
            return [Note("the night has not started")]
        self._apply(event)
        records = [{"kind": "night", "event": encode_event(event)}]
        if self.night.phase == PRIZES:  # type: ignore[union-attr]
            settle = SettlePrizes(self.entropy.getrandbits(32))
            self._apply(settle)
            records.append({"kind": "night", "event": encode_event(settle)})
        return [Commit(tuple(records)), *self._announce_all()]

    # --- the clock of a timed round and of the move break -------------------------------------

    def _start_round_clock(self) -> list[dict[str, Any]]:
        """A timed round's clock, started as the round starts: its deadline goes into the log."""
        night = self.night
        if night is None or night.phase != PLAYING or night.clock is not None \
                or not self.rules.round.timed:
            return []
        now = self.wall()
        event = StartClock("round", now, now + self.rules.round.minutes * 60)
        self._apply(event)
        return [{"kind": "night", "event": encode_event(event)}]

    def _start_move_clock(self) -> list[dict[str, Any]]:
        """After a timed round closed, the move break's clock: when it runs out the next round
        starts by itself (not after the last round; where a break between sets follows, the
        move break runs first and the host ends the break)."""
        night = self.night
        seconds = self.rules.round.move_seconds
        if night is None or night.phase != RESULTS or night.clock is not None or not seconds:
            return []
        if night.round_index + 1 == night.rules.rounds_per_night:
            return []
        now = self.wall()
        event = StartClock("move", now, now + seconds)
        self._apply(event)
        return [{"kind": "night", "event": encode_event(event)}]

    def tick(self) -> list[Effect]:
        """The wall clock moved on: the warning, the horn at the deadline (at once, marked late,
        if the head was down when it passed), the next round when the move break is over."""
        night = self.night
        clock = night.clock if night is not None else None
        if clock is None or clock.paused_at is not None:
            return []
        now = self.wall()
        if now < clock.deadline:
            warn = self.rules.round.warn_seconds
            if clock.phase == "round" and warn and clock.deadline - now <= warn \
                    and self._warned != clock.deadline:
                self._warned = clock.deadline
                return [Buzz("warn"), PublishState(self.state())]
            if now - self._said_at >= TIMER_REFRESH:
                return [PublishState(self.state())]
            return []
        if clock.phase == "move":
            return self._next_round_by_clock()
        late = now - clock.deadline > LATE_AFTER
        event = TimeUp(now, late=late)
        self._apply(event)
        records = [{"kind": "night", "event": encode_event(event)}]
        more_records, after = self._progress()
        note = (f"the horn: the round's time ran out {now - clock.deadline:.1f} s ago, while "
                "the head was down; the round ends now") if late else "the horn: time is up"
        return [Commit(tuple(records + more_records)), Note(note), Buzz("time-up"), *after,
                *self._announce_all()]

    def _next_round_by_clock(self) -> list[Effect]:
        events: list[NightEvent] = [NextRound()]
        self._apply(NextRound())
        if self.night.phase == READY:  # type: ignore[union-attr]
            events.append(StartRound())
            self._apply(StartRound())
        records = [{"kind": "night", "event": encode_event(e)} for e in events]
        records += self._start_round_clock()
        more_records, after = self._progress()
        effects: list[Effect] = [Commit(tuple(records + more_records)),
                                 Note("the move break is over")]
        if self.night.phase == PLAYING:  # type: ignore[union-attr]
            effects.append(Buzz("round-start"))
        return effects + after + self._announce_all()

    def pause_clock(self) -> list[Effect]:
        """The host pauses the clock (announcements): the deadline waits, logged."""
        night = self.night
        clock = night.clock if night is not None else None
        if clock is None or clock.paused_at is not None:
            return [Note("no running clock to pause")]
        event = PauseClock(self.wall())
        self._apply(event)
        return [Commit(({"kind": "night", "event": encode_event(event)},)),
                Note(f"the {clock.phase} clock paused with {clock.left(event.at):.0f} s left"),
                PublishState(self.state())]

    def resume_clock(self) -> list[Effect]:
        """The host resumes the clock: its deadline moves on by the pause's length, logged."""
        night = self.night
        clock = night.clock if night is not None else None
        if clock is None or clock.paused_at is None:
            return [Note("no paused clock to resume")]
        now = max(self.wall(), clock.paused_at)
        event = ResumeClock(now, clock.deadline + (now - clock.paused_at))
        self._apply(event)
        return [Commit(({"kind": "night", "event": encode_event(event)},)),
                Note(f"the {clock.phase} clock resumed after {now - clock.paused_at:.0f} s"),
                PublishState(self.state())]

    # --- the night moving on by itself -----------------------------------------------------

    def _progress(self) -> tuple[list[dict[str, Any]], list[Effect]]:
        """Close the round once every table has finished; settle the prizes at the end."""
        night = self.night
        records: list[dict[str, Any]] = []
        after: list[Effect] = []
        if night is None:
            return records, after
        if night.phase in (PLAYING, "finishing") and night.all_tables_done:
            self._apply(CloseRound())
            records.append({"kind": "night", "event": encode_event(CloseRound())})
            records += self._start_move_clock()
            after += self._announce_all()
        night = self.night
        last_round = night is not None and night.round_index + 1 == night.rules.rounds_per_night
        if night is not None and night.phase == RESULTS and last_round:
            for event in (NextRound(), SettlePrizes(self.entropy.getrandbits(32))):
                self._apply(event)
                records.append({"kind": "night", "event": encode_event(event)})
            after += self._announce_all()
        return records, after

    def _apply(self, event: NightEvent) -> None:
        assert self.night is not None
        self.night = self.night.apply(event)
        self.log.append(event)

    # --- what the head says ----------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        self._said_at = self.wall()
        return night_state(self.night, name=self.name, rules_toml=self.rules_toml,
                           table_count=self.table_count, lobby_tables=sorted(self.online),
                           now=self.wall())

    def announce(self) -> list[Effect]:
        """Everything the head says, said again (the state and every table's view)."""
        return [PublishState(self.state())] if self.night is None else self._announce_all()

    def _announce_all(self) -> list[Effect]:
        tables = range(1, self.table_count + 1)
        return [PublishState(self.state())] + [
            PublishView(t, view) for t, view in zip(tables, table_views(self.night, tables),
                                                    strict=True)
        ]

    def _names_of(self, night: Night) -> dict[str, str]:
        """The players' names by id, worked out again only when the players change (an
        arrival, a leaving): a table's view after each entry must not cost a look at
        every player of the night."""
        if self._names is None or self._names[0] is not night.players:
            self._names = (night.players, player_names(night))
        return self._names[1]

    @property
    def ended(self) -> bool:
        return self.night is not None and self.night.phase == ENDED


    def record(self, source: str = "head") -> dict[str, Any] | None:
        if self.night is None:
            return None
        return build_record(self.night, self.log, source=source)
