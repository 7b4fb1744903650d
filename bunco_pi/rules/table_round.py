"""One table's round: whose turn it is, the scores, the end of the round, and roll-offs.

A ``TableRound`` is immutable; ``apply(entry)`` returns the next state. The state is a fold of
the table's entries (rolls, button tallies, passes, hearing the bell), so undo is simply the
fold of every entry but the last one, and a replay of the same entries gives the same round.

Seats are numbered 1..4 in the API and the record; seats 1&3 are team A, 2&4 team B. Dice
pass to the left, which is the next seat number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.legality import AFTER_PLAY, PLAY_OVER
from bunco_pi.rules.scoring import Dice, RollOutcome, check_dice, outcome_table, score_tally


class RuleViolation(ValueError):
    """An entry that cannot happen at this point of the game (a bug or a corrupt log)."""


# --- entries ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Roll:
    """The current roller rolled these dice (from a dice sensor, a camera or a simulation)."""

    dice: Dice  # checked when applied: TableRound.apply raises RuleViolation for bad dice


@dataclass(frozen=True, slots=True)
class Tally:
    """A scorekeeper's button entry for the current roller: point, three, bunco or wipeout."""

    kind: str
    face: int | None = None


@dataclass(frozen=True, slots=True)
class Pass:
    """The current roller's turn is over (the pass button)."""


@dataclass(frozen=True, slots=True)
class Bell:
    """This table heard the bell: the round is ending."""


@dataclass(frozen=True, slots=True)
class Undo:
    """Take back the last roll, tally or pass."""


Entry = Roll | Tally | Pass | Bell | Undo
# What an Undo takes back (the last of these), and which of them make a roll of the round's
# ``rolls`` (each one exactly one): the record finds each roll's log position by these.
UNDOABLE = (Roll, Tally, Pass)
SCORED = (Roll, Tally)
# Each entry by its name in the codec (rules/entries.py) and in rules/legality.py.
ENTRY_KIND: dict[type, str] = {Roll: "roll", Tally: "tally", Pass: "pass", Bell: "bell",
                               Undo: "undo"}


class Roller(NamedTuple):
    """Who rolls from a seat of one table's round: one for each seat, shared by her rolls."""

    player: str
    seat: int  # 1..4
    ghost: bool


class RollRecord(NamedTuple):
    """One roll of a round, as the night keeps it for the cards and the record.

    A night keeps every roll it was played with (a 500-table night some 600,000), so a roll
    holds five fields, not nine: who rolled is the seat's shared ``Roller``, the dice or the
    tally is one field (``thrown``), and ``rolloff`` is ``session > 0``. The old fields are
    read as before."""

    roller: Roller
    thrown: Dice | str  # the dice, or a scorekeeper's tally ("point", "three", ...)
    points: int  # what it added to the roller's score: ghost rules applied, negative for a wipeout
    outcome: RollOutcome
    session: int = 0  # the roll-off session (1, 2, ...) of a roll-off roll, 0 in the round

    @property
    def player(self) -> str:
        return self.roller.player

    @property
    def seat(self) -> int:
        return self.roller.seat

    @property
    def ghost(self) -> bool:
        return self.roller.ghost

    @property
    def dice(self) -> Dice | None:
        return None if isinstance(self.thrown, str) else self.thrown

    @property
    def tally(self) -> str | None:
        return self.thrown if isinstance(self.thrown, str) else None

    @property
    def rolloff(self) -> bool:
        return self.session > 0


@dataclass(frozen=True, slots=True)
class TableSetup:
    """Who sits where at one table for one round, and what the round is played to."""

    table: int
    seats: tuple[str, str, str, str]
    target: int
    rules: HouseRules
    can_end_round: bool
    ghosts: frozenset[str] = frozenset()

    outcomes: Mapping[Dice, RollOutcome] = field(init=False, repr=False, compare=False)
    rollers: tuple[Roller, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.seats) != 4 or len(set(self.seats)) != 4:
            raise RuleViolation(f"table {self.table} needs four different players, got {self.seats}")
        if not 1 <= self.target <= 6:
            raise RuleViolation(f"table {self.table}: a target is 1 to 6, got {self.target}")
        object.__setattr__(self, "outcomes", outcome_table(self.rules, self.target))
        object.__setattr__(self, "rollers", tuple(
            Roller(p, seat, p in self.ghosts) for seat, p in enumerate(self.seats, start=1)))


@dataclass(frozen=True, slots=True)
class TableResult:
    winners: tuple[str, ...]
    losers: tuple[str, ...]
    rolloff_sessions: int


PLAYING, FINISHING, EXTRA, ROLLOFF, DONE = "playing", "finishing", "extra", "rolloff", "done"
# A timed round's horn under ``at_horn = "finish-roll"``: the roll in hand still counts (dice, or
# the button presses of one roll up to the pass button), then play is over.
LAST_ROLL = "last-roll"


_STATE = (
    "setup", "entries", "rolls", "seat_points", "rolloff_points", "roller_index", "turn_rolls",
    "rolled", "phase", "bell", "ended_round", "queue", "rolloff_group", "rolloff_sessions",
    "result",
)


class TableRound:
    """One table's round. Immutable: ``apply`` returns a new state and leaves this one as it was.

    (A slotted class copied field by field rather than a frozen dataclass: a night applies
    thousands of entries and ``dataclasses.replace`` was most of the time.)
    """

    __slots__ = _STATE

    setup: TableSetup
    entries: tuple[Entry, ...]
    rolls: tuple[RollRecord, ...]
    seat_points: tuple[int, int, int, int]
    rolloff_points: tuple[int, int, int, int]
    roller_index: int
    turn_rolls: int
    rolled: frozenset[int]
    phase: str
    bell: bool
    ended_round: bool
    queue: tuple[int, ...]
    rolloff_group: tuple[int, ...]
    rolloff_sessions: int
    result: TableResult | None

    def __init__(self, setup: TableSetup) -> None:
        self.setup = setup
        self.entries = ()
        self.rolls = ()
        self.seat_points = (0, 0, 0, 0)
        self.rolloff_points = (0, 0, 0, 0)
        self.roller_index = 0
        self.turn_rolls = 0
        self.rolled = frozenset()
        self.phase = PLAYING
        self.bell = False
        self.ended_round = False
        self.queue = ()
        self.rolloff_group = ()
        self.rolloff_sessions = 0
        self.result = None

    def _copy(self) -> TableRound:
        new = object.__new__(TableRound)
        new.setup = self.setup
        new.entries = self.entries
        new.rolls = self.rolls
        new.seat_points = self.seat_points
        new.rolloff_points = self.rolloff_points
        new.roller_index = self.roller_index
        new.turn_rolls = self.turn_rolls
        new.rolled = self.rolled
        new.phase = self.phase
        new.bell = self.bell
        new.ended_round = self.ended_round
        new.queue = self.queue
        new.rolloff_group = self.rolloff_group
        new.rolloff_sessions = self.rolloff_sessions
        new.result = self.result
        return new

    def _with(self, **changes: object) -> TableRound:
        new = self._copy()
        for name, value in changes.items():
            setattr(new, name, value)
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TableRound):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _STATE)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<TableRound table={self.setup.table} target={self.setup.target} "
                f"phase={self.phase} scores={self.team_scores} roller=seat {self.roller_seat}>")

    # --- reading the state ------------------------------------------------------------------

    @classmethod
    def begin(cls, setup: TableSetup) -> TableRound:
        return cls(setup)

    @classmethod
    def replay(cls, setup: TableSetup, entries: tuple[Entry, ...] | list[Entry]) -> TableRound:
        state = cls.begin(setup)
        for entry in entries:
            state = state.apply(entry)
        return state

    @property
    def roller_seat(self) -> int:
        """The seat (1..4) whose turn it is."""
        return self.roller_index + 1

    @property
    def roller(self) -> str:
        return self.setup.seats[self.roller_index]

    @property
    def team_scores(self) -> tuple[int, int]:
        """Round score of seats 1&3 and of seats 2&4 (roll-offs not included)."""
        p = self.seat_points
        return (p[0] + p[2], p[1] + p[3])

    @property
    def done(self) -> bool:
        return self.phase == DONE

    @property
    def can_undo(self) -> bool:
        return any(isinstance(e, UNDOABLE) for e in self.entries)

    def player_score(self, player: str) -> int:
        return self.seat_points[self.setup.seats.index(player)]

    # --- applying entries -------------------------------------------------------------------

    def apply(self, entry: Entry) -> TableRound:
        kind = type(entry)
        if kind is Roll:
            if self.phase is DONE:  # "roll" is not in legality.AFTER_PLAY
                raise RuleViolation(f"table {self.setup.table}: {PLAY_OVER}")
            try:
                outcome = self.setup.outcomes[entry.dice]
            except (KeyError, TypeError):
                try:
                    dice = check_dice(entry.dice)
                except ValueError as exc:
                    raise RuleViolation(f"table {self.setup.table}: {exc}") from None
                entry = Roll(dice)
                outcome = self.setup.outcomes[dice]
            return self._score(entry, outcome, entry.dice, None)
        if kind is Undo:
            return self._undo()
        if kind is Bell:
            return self._hear_bell()
        if self.phase is DONE and ENTRY_KIND.get(kind) not in AFTER_PLAY:
            raise RuleViolation(f"table {self.setup.table}: {PLAY_OVER}")
        if kind is Pass:
            return self._with(entries=self.entries + (entry,))._end_turn()
        if kind is Tally:
            try:
                outcome = score_tally(entry.kind, self.setup.target, self.setup.rules, entry.face)
            except ValueError as exc:
                raise RuleViolation(f"table {self.setup.table}: {exc}") from None
            return self._score(entry, outcome, None, entry.kind)
        raise RuleViolation(f"not a table entry: {entry!r}")

    def _undo(self) -> TableRound:
        entries = list(self.entries)
        for index in range(len(entries) - 1, -1, -1):
            if isinstance(entries[index], UNDOABLE):
                del entries[index]
                return TableRound.replay(self.setup, entries)
        raise RuleViolation(f"table {self.setup.table}: nothing to undo")

    def _hear_bell(self) -> TableRound:
        if self.bell:
            return self
        state = self._with(entries=self.entries + (Bell(),), bell=True)
        if state.phase != PLAYING:
            return state
        timing = self.setup.rules.round
        if timing.timed:
            # In a timed round the horn is the bell, whatever ended the round (the time, the
            # head table's goal under "time-or-goal", the host): ``at_horn`` decides.
            if timing.at_horn == "stop":
                return state._resolve()
            return state._with(phase=LAST_ROLL)
        after_bell = self.setup.rules.round.after_bell
        if after_bell == "stop" or state.turn_rolls == 0:
            return state._end_of_play()
        if after_bell == "finish-if-target" and not state.rolls[-1].outcome.target_dice:
            # "all players stop ... unless a player has just rolled the current number"
            return state._end_of_play()
        return state._with(phase=FINISHING)

    def _score(self, entry: Entry, outcome: RollOutcome, dice: Dice | None,
               tally: str | None) -> TableRound:
        rules = self.setup.rules
        seat = self.roller_index
        player = self.setup.seats[seat]
        ghost = player in self.setup.ghosts
        rolloff = self.phase == ROLLOFF
        pool = self.rolloff_points if rolloff else self.seat_points
        if outcome.wipeout:
            points = -pool[seat]
        elif ghost and rules.ghost.points == "none":
            points = 0
        else:
            points = outcome.points
        new_pool = pool[:seat] + (pool[seat] + points,) + pool[seat + 1 :]
        record = RollRecord(self.setup.rollers[seat], dice if tally is None else tally, points,
                            outcome, self.rolloff_sessions if rolloff else 0)
        state = self._copy()
        state.entries = self.entries + (entry,)
        state.rolls = self.rolls + (record,)
        if seat not in self.rolled:
            state.rolled = self.rolled | {seat}
        state.turn_rolls = self.turn_rolls + 1
        if rolloff:
            state.rolloff_points = new_pool
        else:
            state.seat_points = new_pool
        # A tally never passes the dice by itself; a roll that scores nothing does.
        turn_over = not outcome.continues
        if state.phase == PLAYING:
            if state._ends_round(outcome, ghost):
                return state._with(ended_round=True, bell=True)._end_of_play()
            if turn_over:  # state is our own fresh copy: move the dice on in place
                state.roller_index = (seat + 1) % 4
                state.turn_rolls = 0
            return state
        if state.phase == FINISHING:
            return state._end_of_play() if turn_over else state
        if state.phase == LAST_ROLL:
            return state._resolve() if dice is not None or turn_over else state
        if state.phase == EXTRA:
            # one roll each; button entries wait for the pass button, since a roll may take
            # several presses
            return state._next_in_queue() if dice is not None or turn_over else state
        # ROLLOFF: under "target-number" a roll-off turn goes on only "as long as they are
        # successfully rolling the number of that round" (002), so three of another number ends it
        if (not turn_over and dice is not None and not outcome.target_dice
                and rules.round.rolloff_turn_continues == "target-number"):
            turn_over = True
        return state._next_in_queue() if turn_over else state

    def _ends_round(self, outcome: RollOutcome, ghost: bool) -> bool:
        if not self.setup.can_end_round or self.bell:
            return False
        rules = self.setup.rules
        if not rules.round.goal_ends:
            return False
        ghost_counts = not ghost or rules.ghost.points == "team"
        if outcome.bunco and rules.round.bunco_ends_round and ghost_counts:
            return True
        goal = rules.round.target_score
        if rules.team_play:
            return max(self.team_scores) >= goal
        return max(self.seat_points) >= goal

    def _end_turn(self) -> TableRound:
        if self.phase == PLAYING:
            return self._next_turn()
        if self.phase == FINISHING:
            return self._end_of_play()
        if self.phase == LAST_ROLL:
            return self._resolve()
        return self._next_in_queue()

    def _next_turn(self) -> TableRound:
        new = self._copy()
        new.roller_index = (self.roller_index + 1) % 4
        new.turn_rolls = 0
        return new

    def _next_in_queue(self) -> TableRound:
        queue = self.queue[1:]
        if queue:
            return self._with(queue=queue, roller_index=queue[0], turn_rolls=0)
        state = self._with(queue=(), turn_rolls=0)
        return state._resolve_rolloff() if self.phase == ROLLOFF else state._resolve()

    def _end_of_play(self) -> TableRound:
        # In a timed round ``at_horn`` decides the end of play, and every_player_rolls not.
        timing = self.setup.rules.round
        if timing.every_player_rolls and not timing.timed:
            order = [(self.roller_index + 1 + i) % 4 for i in range(4)]
            waiting = tuple(s for s in order if s not in self.rolled)
            if waiting:
                return self._with(phase=EXTRA, queue=waiting, roller_index=waiting[0],
                               turn_rolls=0)
        return self._resolve()

    # --- who won --------------------------------------------------------------------------

    def _finish(self, losing_seats: tuple[int, ...]) -> TableRound:
        seats = self.setup.seats
        losers = tuple(seats[s] for s in sorted(losing_seats))
        winners = tuple(seats[s] for s in range(4) if s not in losing_seats)
        result = TableResult(winners, losers, self.rolloff_sessions)
        return self._with(phase=DONE, result=result, queue=())

    def _start_rolloff(self, group: tuple[int, ...]) -> TableRound:
        return self._with(
            phase=ROLLOFF, rolloff_group=group, queue=group, roller_index=group[0],
            turn_rolls=0, rolloff_sessions=self.rolloff_sessions + 1,
        )

    def _resolve(self) -> TableRound:
        if self.setup.rules.team_play:
            a, b = self.team_scores
            if a == b:
                return self._start_rolloff((0, 1, 2, 3))  # "Player #1 starts off rolling first"
            return self._finish((1, 3) if a > b else (0, 2))
        ghost_seats = [s for s, p in enumerate(self.setup.seats) if p in self.setup.ghosts]
        if ghost_seats and self.setup.rules.ghost.moves_instead:
            return self._finish((ghost_seats[0],))
        return self._lowest_of(tuple(range(4)), self.seat_points)

    def _lowest_of(self, group: tuple[int, ...], points: tuple[int, ...]) -> TableRound:
        low = min(points[s] for s in group)
        lowest = tuple(s for s in group if points[s] == low)
        if len(lowest) == 1:
            return self._finish(lowest)
        return self._start_rolloff(lowest)

    def _resolve_rolloff(self) -> TableRound:
        r = self.rolloff_points
        if self.setup.rules.team_play:
            a, b = r[0] + r[2], r[1] + r[3]
            if a == b:
                return self._start_rolloff((0, 1, 2, 3))
            return self._finish((1, 3) if a > b else (0, 2))
        return self._lowest_of(self.rolloff_group, r)
