"""A whole night: the fold of its events.

``Night.start(...)`` then ``night.apply(event)`` for each event in log order. Nothing here
reads a clock, a file or a random source: dice arrive in ``TableEntry`` events, the seating
draw arrives in ``Night.start``, and prize tie-breaks use the seed in ``SettlePrizes``.
So any night replays exactly from its log.

Phases: ready -> playing -> finishing (the bell rang) -> results -> ready ... (break after
some sets) ... -> prizes -> ended.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from bunco_pi.rules.cards import ScoreCard, add_round, credited_player
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.legality import night_refusal
from bunco_pi.rules.limits import MAX_TABLES
from bunco_pi.rules.packed_rolls import pack_rolls
from bunco_pi.rules.prizes import PrizeAward, award_prizes
from bunco_pi.rules.rotation import (
    Move,
    Seats,
    TableOutcome,
    give_ghosts_real_partners,
    plan_next_seating,
    seating_faults,
    seating_notes,
)
from bunco_pi.rules.table_round import (
    ENTRY_KIND,
    Entry,
    RollRecord,
    RuleViolation,
    TableRound,
    TableSetup,
    Undo,
)

READY, PLAYING, FINISHING, RESULTS, BREAK, PRIZES, ENDED = (
    "ready", "playing", "finishing", "results", "break", "prizes", "ended",
)


@dataclass(frozen=True, slots=True)
class Player:
    id: str
    name: str
    ghost: bool = False


# --- events ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartRound:
    """The host rang the bell to start the round."""


@dataclass(frozen=True, slots=True)
class TableEntry:
    table: int  # 1 = head
    entry: Entry


@dataclass(frozen=True, slots=True)
class RingBell:
    """The host rang the bell to end the round early."""


@dataclass(frozen=True, slots=True)
class CloseRound:
    """Every table has finished: record wins and losses and work out the moves."""


@dataclass(frozen=True, slots=True)
class CloseHeldRound:
    """The host held the bell: close the round now, though some tables have not finished (a
    box died, or its players left). Each of those counts by ``round.held_table``."""


@dataclass(frozen=True, slots=True)
class NextRound:
    """Everyone has moved: go on to the next round (or the break, or the prizes)."""


@dataclass(frozen=True, slots=True)
class EndBreak:
    pass


@dataclass(frozen=True, slots=True)
class SettlePrizes:
    seed: int  # drives the virtual dice or draw of any prize tie-break


@dataclass(frozen=True, slots=True)
class Arrive:
    """Between rounds, a late arrival takes a ghost's seat: that seat's id is hers from now on
    (her own score card starts empty; what the ghost rolled before stays uncredited)."""

    player: str  # the ghost's id
    name: str


@dataclass(frozen=True, slots=True)
class Leave:
    """Between rounds, someone leaves: a ghost plays her seat from now on; her card stays."""

    player: str


@dataclass(frozen=True, slots=True)
class StartClock:
    """A timed round's clock (``phase`` "round"), or the move break's after a round
    (``phase`` "move"), started by the head at ``at`` to end at ``deadline``: both wall-clock
    seconds the head read, arriving here as data (the night never reads a clock)."""

    phase: str
    at: float
    deadline: float


@dataclass(frozen=True, slots=True)
class PauseClock:
    """The host paused the clock at ``at`` (announcements): the deadline waits."""

    at: float


@dataclass(frozen=True, slots=True)
class ResumeClock:
    """The host resumed the clock at ``at``; it now ends at ``deadline`` (moved on by the
    pause's length)."""

    at: float
    deadline: float


@dataclass(frozen=True, slots=True)
class TimeUp:
    """The horn: a timed round's clock reached its deadline, read at ``at``; ``late`` when the
    head was down at the deadline and ended the round as soon as it was back."""

    at: float
    late: bool = False


@dataclass(frozen=True, slots=True)
class Clock:
    """The clock running now: a round's or the move break's, and when it was paused."""

    phase: str  # "round" or "move"
    started: float
    deadline: float
    paused_at: float | None = None

    @property
    def total(self) -> float:
        return self.deadline - self.started

    def left(self, now: float) -> float:
        """Seconds left at ``now`` (a paused clock stands where it was paused)."""
        return max(0.0, self.deadline - (self.paused_at if self.paused_at is not None else now))


CLOCK_PHASES = ("round", "move")


@dataclass(frozen=True, slots=True)
class EndNight:
    """Between rounds, the host ends the night early: the prizes are settled on the rounds played."""


NightEvent = (StartRound | TableEntry | RingBell | CloseRound | CloseHeldRound | NextRound
              | EndBreak | SettlePrizes | Arrive | Leave | EndNight | StartClock | PauseClock
              | ResumeClock | TimeUp)
BETWEEN_ROUNDS = (READY, RESULTS, BREAK)


# --- what a finished round leaves behind -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableRecord:
    table: int
    seats: Seats
    rolls: Sequence[RollRecord]  # packed: a night keeps every one (rules/packed_rolls.py)
    team_scores: tuple[int, int]
    seat_scores: tuple[int, int, int, int]
    winners: tuple[str, ...]
    losers: tuple[str, ...]
    rolloff_sessions: int
    ended_round: bool
    # "" for a table that finished; else the ``round.held_table`` rule by which the host's
    # close counted it. A held table with no winners and losers had no result.
    held: str = ""


@dataclass(frozen=True, slots=True)
class RoundRecord:
    set: int
    round: int
    target: int
    tables: tuple[TableRecord, ...]
    moves: tuple[Move, ...]
    # each rule of the text the next round's seats could not keep, by the seating priority
    # (docs/house-rules.md, *Seating*); empty when they keep every one
    seating_notes: tuple[str, ...] = ()


_STATE = (
    "rules", "players", "seating", "round_index", "phase", "tables", "bell_rung", "cards",
    "travel_log", "wipeout_log", "history", "next_seats", "prizes", "prize_seed", "clock",
)


class Night:
    """A whole night. Immutable: ``apply`` returns a new night and leaves this one as it was."""

    __slots__ = _STATE

    rules: HouseRules
    players: tuple[Player, ...]
    seating: tuple[Seats, ...]  # the seats of the round being played or about to be
    round_index: int  # 0-based over the whole night
    phase: str
    tables: tuple[TableRound, ...]  # the rounds in play, head table first
    bell_rung: bool
    cards: Mapping[str, ScoreCard]  # real players only, in check-in order
    travel_log: tuple[tuple[int, int, int, str], ...]  # (round, table, roll, holder)
    wipeout_log: tuple[tuple[int, int, int, str], ...]
    history: tuple[RoundRecord, ...]
    next_seats: tuple[Seats, ...]
    prizes: tuple[PrizeAward, ...]
    prize_seed: int | None
    clock: Clock | None  # a timed round's clock, or the move break's, while it runs

    def __init__(self, rules: HouseRules, players: tuple[Player, ...],
                 seating: tuple[Seats, ...], cards: Mapping[str, ScoreCard]) -> None:
        self.rules = rules
        self.players = players
        self.seating = seating
        self.round_index = 0
        self.phase = READY
        self.tables = ()
        self.bell_rung = False
        self.cards = cards
        self.travel_log = ()
        self.wipeout_log = ()
        self.history = ()
        self.next_seats = ()
        self.prizes = ()
        self.prize_seed = None
        self.clock = None

    def _copy(self) -> Night:
        new = object.__new__(Night)
        new.rules = self.rules
        new.players = self.players
        new.seating = self.seating
        new.round_index = self.round_index
        new.phase = self.phase
        new.tables = self.tables
        new.bell_rung = self.bell_rung
        new.cards = self.cards
        new.travel_log = self.travel_log
        new.wipeout_log = self.wipeout_log
        new.history = self.history
        new.next_seats = self.next_seats
        new.prizes = self.prizes
        new.prize_seed = self.prize_seed
        new.clock = self.clock
        return new

    def _with(self, **changes: object) -> Night:
        new = self._copy()
        for name, value in changes.items():
            setattr(new, name, value)
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Night):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _STATE)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<Night {self.rules.name} set {self.set_number} round {self.round_number} "
                f"phase={self.phase} tables={len(self.seating)}>")

    # --- starting -----------------------------------------------------------------------

    @classmethod
    def start(cls, rules: HouseRules, players: Sequence[Player], seating: Sequence[Seats]) -> Night:
        ids = [p.id for p in players]
        if len(set(ids)) != len(ids):
            raise RuleViolation("two players share an id")
        if not 1 <= len(seating) <= MAX_TABLES:
            raise RuleViolation(f"a night has 1 to {MAX_TABLES} tables, got {len(seating)}")
        seated = [p for seats in seating for p in seats]
        if any(len(seats) != 4 for seats in seating) or sorted(seated) != sorted(ids):
            raise RuleViolation("every player must sit in exactly one seat, four to a table")
        cards = {p.id: ScoreCard() for p in players if not p.ghost}
        seats = tuple(map(tuple, seating))
        if rules.ghost.real_partner and rules.team_play:
            seats = give_ghosts_real_partners(seats, frozenset(p.id for p in players if p.ghost))
        return cls(rules, tuple(players), seats, cards)

    @classmethod
    def replay(cls, rules: HouseRules, players: Sequence[Player], seating: Sequence[Seats],
               events: Iterable[NightEvent]) -> Night:
        night = cls.start(rules, players, seating)
        for event in events:
            night = night.apply(event)
        return night

    # --- reading ---------------------------------------------------------------------------

    @property
    def ghosts(self) -> frozenset[str]:
        return frozenset(p.id for p in self.players if p.ghost)

    @property
    def set_number(self) -> int:
        return self.round_index // len(self.rules.night.targets) + 1

    @property
    def round_number(self) -> int:
        return self.round_index % len(self.rules.night.targets) + 1

    @property
    def target(self) -> int:
        return self.rules.night.targets[self.round_index % len(self.rules.night.targets)]

    @property
    def traveler(self) -> str | None:
        return self.travel_log[-1][3] if self.travel_log else None

    @property
    def wipeout_traveler(self) -> str | None:
        return self.wipeout_log[-1][3] if self.wipeout_log else None

    @property
    def all_tables_done(self) -> bool:
        return bool(self.tables) and all(t.done for t in self.tables)

    def table(self, number: int) -> TableRound:
        return self.tables[number - 1]

    def player(self, player_id: str) -> Player:
        for p in self.players:
            if p.id == player_id:
                return p
        raise KeyError(player_id)

    # --- applying --------------------------------------------------------------------------

    def apply(self, event: NightEvent) -> Night:
        handler = _HANDLERS.get(type(event))
        if handler is None:
            raise RuleViolation(f"not a night event: {event!r}")
        return handler(self, event)

    def _expect(self, *phases: str, event: object) -> None:
        if self.phase not in phases:
            raise RuleViolation(
                f"{type(event).__name__} cannot happen while the night is '{self.phase}'"
            )

    def _start_round(self, event: StartRound) -> Night:
        self._expect(READY, event=event)
        rules = self.rules
        any_table = rules.round.ends_at == "any-table"
        ghosts = self.ghosts
        tables = tuple(
            TableRound.begin(TableSetup(
                table=t + 1, seats=seats, target=self.target, rules=rules,
                can_end_round=t == 0 or any_table, ghosts=ghosts & frozenset(seats),
            ))
            for t, seats in enumerate(self.seating)
        )
        return self._with(phase=PLAYING, tables=tables, bell_rung=False)

    def _table_entry(self, event: TableEntry) -> Night:
        # Where an entry may happen is decided in rules/legality.py; the table's own round
        # (TableRound.apply) then refuses what cannot happen at that point of its play.
        refused = night_refusal(self.phase, self.bell_rung, len(self.tables), event.table,
                                ENTRY_KIND.get(type(event.entry), "?"))
        if refused is not None:
            raise RuleViolation(f"table {event.table}: {refused}")
        index = event.table - 1
        tables = self.tables
        before = tables[index]
        after = before.apply(event.entry)
        night = self._copy()
        night.tables = tables[:index] + (after,) + tables[index + 1 :]
        if type(event.entry) is Undo:
            night = night._track_travelers(index, after)
        elif len(after.rolls) != len(before.rolls):
            last = after.rolls[-1].outcome
            if last.travels or last.wipeout:
                night = night._track_travelers(index, after, appended=True)
        if after.ended_round and not night.bell_rung:
            night.bell_rung = True
            night.phase = FINISHING
            night.clock = None  # the goal came first: the round's clock stops
        return night

    def _track_travelers(self, index: int, table: TableRound, appended: bool = False) -> Night:
        """Keep the traveler logs true to the table's rolls, undone ones included.

        ``appended``: the table's newest roll is new (not an undo): nothing of this table's
        can stand at or past it in the logs, so they are not searched. A search of the whole
        night's logs at every trigger made a 500-table night's fold grow with its square."""
        count = len(table.rolls)

        def kept(log: tuple[tuple[int, int, int, str], ...]) -> tuple:
            return tuple(e for e in log
                         if not (e[0] == self.round_index and e[1] == index and e[2] >= count))

        if appended:
            travel, wipeout = self.travel_log, self.wipeout_log
        else:
            travel, wipeout = kept(self.travel_log), kept(self.wipeout_log)
        if table.rolls:
            last = table.rolls[-1]
            key = (self.round_index, index, count - 1)
            known = not appended and any(e[:3] == key for e in travel)
            if last.outcome.travels and not known:
                who = credited_player(table.setup, last)
                if who is not None:
                    travel += (key + (who,),)
            if (last.outcome.wipeout and self.rules.wipeout.traveler and not last.ghost
                    and (appended or not any(e[:3] == key for e in wipeout))):
                wipeout += (key + (last.player,),)
        return self._with(travel_log=travel, wipeout_log=wipeout)

    def _ring_bell(self, event: RingBell) -> Night:
        self._expect(PLAYING, FINISHING, event=event)
        return self._with(bell_rung=True, phase=FINISHING, clock=None)

    def _close_round(self, event: CloseRound) -> Night:
        self._expect(PLAYING, FINISHING, event=event)
        if not self.all_tables_done:
            waiting = [str(t.setup.table) for t in self.tables if not t.done]
            raise RuleViolation(f"tables {', '.join(waiting)} have not finished the round")
        return self._close()

    def _close_held_round(self, event: CloseHeldRound) -> Night:
        self._expect(PLAYING, FINISHING, event=event)
        if self.all_tables_done:
            raise RuleViolation("every table has finished: the round closes by itself")
        return self._close()

    def _close(self) -> Night:
        """Record the round: every finished table by its result, every other one (held up by
        a dead box) by ``round.held_table``."""
        rule = self.rules.round.held_table
        cards = dict(self.cards)
        outcomes = []
        records = []
        sitting_out = set()
        for index, t in enumerate(self.tables):
            if t.done:
                assert t.result is not None
                winners, losers = t.result.winners, t.result.losers
                rolloffs, held = t.result.rolloff_sessions, ""
            else:
                winners, losers = standing_result(t) if rule == "as-it-stands" else ((), ())
                rolloffs, held = t.rolloff_sessions, rule
                if not winners:
                    sitting_out.add(index)
            if held != "no-result":
                add_round(cards, t.setup, t.rolls, winners, losers, self.rules, t.ended_round)
            outcomes.append(TableOutcome(t.setup.seats, winners, losers))
            records.append(TableRecord(
                table=t.setup.table, seats=t.setup.seats, rolls=pack_rolls(t.rolls),
                team_scores=t.team_scores, seat_scores=t.seat_points,
                winners=winners, losers=losers, rolloff_sessions=rolloffs,
                ended_round=t.ended_round, held=held,
            ))
        plan = plan_next_seating(self.rules, outcomes, self.ghosts,
                                 sitting_out=frozenset(sitting_out))
        record = RoundRecord(self.set_number, self.round_number, self.target, tuple(records),
                             plan.moves, plan.notes)
        seating = plan.seating
        return self._with(phase=RESULTS, cards=cards, history=self.history + (record,),
                       next_seats=seating, clock=None)

    def _next_round(self, event: NextRound) -> Night:
        self._expect(RESULTS, event=event)
        index = self.round_index + 1
        per_set = len(self.rules.night.targets)
        night = self._with(seating=self.next_seats, next_seats=(), tables=(),
                        bell_rung=False, clock=None)
        if index == self.rules.rounds_per_night:
            return night._with(phase=PRIZES)
        finished_set = index // per_set if index % per_set == 0 else 0
        phase = BREAK if finished_set in self.rules.night.break_after_sets else READY
        return night._with(round_index=index, phase=phase)

    def _end_break(self, event: EndBreak) -> Night:
        self._expect(BREAK, event=event)
        return self._with(phase=READY)

    # --- the clock: time arrives as data the head read -------------------------------------

    def _start_clock(self, event: StartClock) -> Night:
        timing = self.rules.round
        if event.phase == "round":
            if not timing.timed:
                raise RuleViolation("a round clock, but these rounds are not timed")
            self._expect(PLAYING, event=event)
            length = timing.minutes * 60
        elif event.phase == "move":
            if not timing.move_seconds:
                raise RuleViolation("a move break, but these rules have none")
            self._expect(RESULTS, event=event)
            length = float(timing.move_seconds)
        else:
            raise RuleViolation(f"a clock is one of {', '.join(CLOCK_PHASES)}, got "
                                f"{event.phase!r}")
        if self.clock is not None:
            raise RuleViolation(f"the {self.clock.phase} clock is already running")
        if abs(event.deadline - event.at - length) > 1e-3:
            raise RuleViolation(f"a {event.phase} clock of {length:g} s, but it runs from "
                                f"{event.at} to {event.deadline}")
        return self._with(clock=Clock(event.phase, event.at, event.deadline))

    def _pause_clock(self, event: PauseClock) -> Night:
        clock = self.clock
        if clock is None or clock.paused_at is not None:
            raise RuleViolation("no running clock to pause")
        if event.at < clock.started:
            raise RuleViolation("a pause before its clock started")
        return self._with(clock=replace(clock, paused_at=event.at))

    def _resume_clock(self, event: ResumeClock) -> Night:
        clock = self.clock
        if clock is None or clock.paused_at is None:
            raise RuleViolation("no paused clock to resume")
        if event.at < clock.paused_at:
            raise RuleViolation("a clock resumed before it was paused")
        return self._with(clock=replace(clock, deadline=event.deadline, paused_at=None))

    def _time_up(self, event: TimeUp) -> Night:
        self._expect(PLAYING, event=event)
        clock = self.clock
        if clock is None or clock.phase != "round" or clock.paused_at is not None:
            raise RuleViolation("the horn, but no round clock is running")
        if event.at < clock.deadline:
            raise RuleViolation(f"the horn at {event.at}, before the deadline {clock.deadline}")
        return self._with(bell_rung=True, phase=FINISHING, clock=None)

    def _settle_prizes(self, event: SettlePrizes) -> Night:
        self._expect(PRIZES, event=event)
        prizes = award_prizes(self.rules, self.cards, self.traveler, self.wipeout_traveler,
                              random.Random(event.seed))
        return self._with(phase=ENDED, prizes=prizes, prize_seed=event.seed)


def standing_result(table: TableRound) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Winners and losers of an unfinished table by its scores as they stand, the way the
    table itself would decide at the end of play; ``((), ())`` for a tie, which only a roll-off
    nobody is left to roll could settle."""
    seats, setup = table.setup.seats, table.setup
    if setup.rules.team_play:
        a, b = table.team_scores
        if a == b:
            return (), ()
        losing = (1, 3) if a > b else (0, 2)
    else:
        ghost_seats = [s for s, p in enumerate(seats) if p in setup.ghosts]
        points = table.seat_points
        if ghost_seats and setup.rules.ghost.moves_instead:
            losing = (ghost_seats[0],)
        else:
            lowest = tuple(s for s in range(4) if points[s] == min(points))
            if len(lowest) != 1:
                return (), ()
            losing = lowest
    return (tuple(seats[s] for s in range(4) if s not in losing),
            tuple(seats[s] for s in losing))


def _arrive(night: Night, event: Arrive) -> Night:
    night._expect(*BETWEEN_ROUNDS, event=event)
    name = event.name.strip()
    if not name:
        raise RuleViolation("a late arrival needs a name")
    if any(p.name == name and not p.ghost for p in night.players):
        raise RuleViolation(f"'{name}' is already playing tonight")
    old = _seated_player(night, event.player)
    if not old.ghost:
        raise RuleViolation(f"{event.player} is not a ghost's seat")
    if old.id in night.cards:  # whoever left this seat keeps her card: never overwrite it
        raise RuleViolation(f"{old.name} left that seat; seat a late arrival at a ghost's seat")
    players = tuple(Player(p.id, name) if p.id == old.id else p for p in night.players)
    return _mend_seating(night._with(players=players, cards={**night.cards, old.id: ScoreCard()}))


def _leave(night: Night, event: Leave) -> Night:
    night._expect(*BETWEEN_ROUNDS, event=event)
    old = _seated_player(night, event.player)
    if old.ghost:
        raise RuleViolation(f"{event.player} is already a ghost")
    players = tuple(Player(p.id, p.name, True) if p.id == old.id else p for p in night.players)
    return _mend_seating(night._with(players=players))


def _mend_seating(night: Night) -> Night:
    """After an arrival or a leaving between rounds, the seats already drawn for the next round
    checked again with the ghosts as they are now, and drawn again from the last round's results
    where that keeps more of the rules (say, two ghosts would now be partners). The last round's
    moves are the mended ones, so the tables and the console show where everyone goes."""
    drawn = night.next_seats if night.phase == RESULTS else night.seating
    ghosts = night.ghosts
    if not night.history:  # before the first round: the draw, mended as at the start
        if night.rules.ghost.real_partner and night.rules.team_play:
            return night._with(seating=give_ghosts_real_partners(drawn, ghosts))
        return night
    last = night.history[-1]
    outcomes = [TableOutcome(t.seats, t.winners, t.losers) for t in last.tables]
    sitting_out = frozenset(i for i, t in enumerate(last.tables) if t.held and not t.winners)
    plan = plan_next_seating(night.rules, outcomes, ghosts, sitting_out)
    # the last of the priorities is only the text's layout: that alone redraws nothing
    kept = seating_faults(night.rules, outcomes, ghosts, sitting_out, drawn)[:4]
    if plan.seating == drawn or kept <= seating_faults(night.rules, outcomes, ghosts,
                                                       sitting_out, plan.seating)[:4]:
        # the seats stay; what they break may not (a ghost more, or one fewer)
        notes = seating_notes(night.rules, outcomes, ghosts, sitting_out, drawn)
        return night._with(history=night.history[:-1] + (replace(last, seating_notes=notes),))
    history = night.history[:-1] + (replace(last, moves=plan.moves,
                                            seating_notes=plan.notes),)
    if night.phase == RESULTS:
        return night._with(next_seats=plan.seating, history=history)
    return night._with(seating=plan.seating, history=history)


def _end_night(night: Night, event: EndNight) -> Night:
    night._expect(*BETWEEN_ROUNDS, event=event)
    if night.phase == RESULTS:
        night = night._with(seating=night.next_seats, next_seats=())
    return night._with(phase=PRIZES, tables=(), bell_rung=False, clock=None)


def _seated_player(night: Night, player_id: str) -> Player:
    try:
        return night.player(player_id)
    except KeyError:
        raise RuleViolation(f"no player '{player_id}' tonight") from None


_HANDLERS = {
    Arrive: _arrive,
    Leave: _leave,
    EndNight: _end_night,
    StartRound: Night._start_round,
    TableEntry: Night._table_entry,
    RingBell: Night._ring_bell,
    CloseRound: Night._close_round,
    CloseHeldRound: Night._close_held_round,
    NextRound: Night._next_round,
    EndBreak: Night._end_break,
    SettlePrizes: Night._settle_prizes,
    StartClock: Night._start_clock,
    PauseClock: Night._pause_clock,
    ResumeClock: Night._resume_clock,
    TimeUp: Night._time_up,
}
