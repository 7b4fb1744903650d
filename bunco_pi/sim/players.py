"""Virtual players and dice: drive a whole night through the rules engine.

Tables roll concurrently: at each step one table that is still playing rolls, picked at random,
so when the head table rings the bell the other tables are caught mid-turn, as they are on a
real night, and their current rollers finish their turns.
"""

from __future__ import annotations

import gc
import heapq
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.night import (
    BREAK,
    PLAYING,
    PRIZES,
    CloseRound,
    EndBreak,
    NextRound,
    Night,
    NightEvent,
    PauseClock,
    Player,
    ResumeClock,
    SettlePrizes,
    StartClock,
    StartRound,
    TableEntry,
    TimeUp,
)
from bunco_pi.rules.rotation import initial_seating
from bunco_pi.rules.table_round import Bell, Roll

DEFAULT_PLAYERS = 12
FIRST_NAMES = (
    "Ann", "Bea", "Cat", "Dot", "Eve", "Fay", "Gus", "Hal", "Ida", "Jo", "Kit", "Liz", "Meg",
    "Ned", "Ora", "Pam", "Quin", "Rae", "Sue", "Tess", "Uma", "Val", "Wyn", "Xia", "Yva", "Zoe",
)


@dataclass
class SimulatedNight:
    night: Night
    log: list[NightEvent]
    seed: int


def make_players(count: int) -> list[Player]:
    """``count`` real players, and ghosts to fill the last table."""
    if count < 1:
        raise ValueError("a night needs at least one player")
    players = []
    for i in range(count):
        base = FIRST_NAMES[i % len(FIRST_NAMES)]
        name = base if i < len(FIRST_NAMES) else f"{base} {i // len(FIRST_NAMES) + 1}"
        players.append(Player(id=f"p{i + 1}", name=name))
    tables = -(-count // 4)
    for g in range(tables * 4 - count):
        players.append(Player(id=f"ghost{g + 1}", name=f"Ghost {g + 1}", ghost=True))
    return players


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """The engine's states never form reference cycles, so reference counting frees them; the
    cyclic collector would only rescan the night's growing history (half the time of a
    50-table night)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def simulate_night(rules: HouseRules, players: int, seed: int,
                   on_event: Callable[[Night, NightEvent], None] | None = None) -> SimulatedNight:
    """Play a whole night with seeded dice; every event goes through ``Night.apply``."""
    with _cyclic_gc_paused():
        if rules.round.timed:
            return _simulate_timed(rules, players, seed, on_event)
        return _simulate(rules, players, seed, on_event)


class _Playing:
    """A simulated night as it is played: its seeded randomness, the night so far, and every
    event applied to it and logged (and told to ``on_event``)."""

    def __init__(self, rules: HouseRules, players: int, seed: int,
                 on_event: Callable[[Night, NightEvent], None] | None) -> None:
        self.rng = random.Random(seed)
        roster = make_players(players)
        seating = initial_seating([p.id for p in roster],
                                  self.rng.sample(range(len(roster)), len(roster)))
        self.night = Night.start(rules, roster, seating)
        self.log: list[NightEvent] = []
        self.on_event = on_event

    def play(self, event: NightEvent) -> None:
        self.night = self.night.apply(event)
        self.log.append(event)
        if self.on_event is not None:
            self.on_event(self.night, event)

    def roll(self) -> Roll:
        # one draw for all three dice: 216 equally likely rolls, each one shared Roll (an
        # entry is immutable; a 2,000-player night keeps some 450,000 of them)
        return _ROLLS[int(self.rng.random() * 216)]


_ROLLS = tuple(Roll((n // 36 + 1, n // 6 % 6 + 1, n % 6 + 1)) for n in range(216))


def _simulate(rules: HouseRules, players: int, seed: int,
              on_event: Callable[[Night, NightEvent], None] | None) -> SimulatedNight:
    game = _Playing(rules, players, seed, on_event)
    rng, play, roll = game.rng, game.play, game.roll
    while game.night.phase != PRIZES:
        play(StartRound())
        playing = [t.setup.table for t in game.night.tables]
        bell_heard = False
        while playing:
            pick = int(rng.random() * len(playing))
            table = playing[pick]
            play(TableEntry(table, roll()))
            if game.night.tables[table - 1].done:
                playing.pop(pick)
            if game.night.bell_rung and not bell_heard:
                bell_heard = True
                for t in game.night.tables:
                    if not t.bell and not t.done:
                        play(TableEntry(t.setup.table, Bell()))
                playing = [t.setup.table for t in game.night.tables if not t.done]
        play(CloseRound())
        play(NextRound())
        if game.night.phase == BREAK:
            play(EndBreak())
    play(SettlePrizes(rng.getrandbits(32)))
    return SimulatedNight(game.night, game.log, seed)


# --- timed rounds: the players' time, a seeded model ---------------------------------------------

# A throw of three dice, read and entered, takes a player a few seconds: 3 to 7 here, drawn for
# each roll. An announcement pause comes in about one round in eight, 20 to 60 s long.
ROLL_SECONDS = (3.0, 7.0)
PAUSE_CHANCE = 0.125
PAUSE_SECONDS = (20.0, 60.0)
# The host's bell between rounds when no move break starts the next round by itself, and
# after the break between sets.
HOST_SECONDS = 90.0


def _simulate_timed(rules: HouseRules, players: int, seed: int,
                    on_event: Callable[[Night, NightEvent], None] | None) -> SimulatedNight:
    """A night of timed rounds on a simulated clock (seconds from the night's start, a number
    in the events like the head's wall clock): each table rolls when its last roll is done, the
    horn sounds at the deadline and every table hears it then, as it would in a hall."""
    game = _Playing(rules, players, seed, on_event)
    rng, play, roll = game.rng, game.play, game.roll
    timing = rules.round
    lo, hi = ROLL_SECONDS
    now = 0.0

    def roll_time() -> float:
        return round(lo + rng.random() * (hi - lo), 3)

    while game.night.phase != PRIZES:
        play(StartRound())
        play(StartClock("round", now, now + timing.minutes * 60))
        pause = None
        if rng.random() < PAUSE_CHANCE:
            at = round(now + rng.random() * timing.minutes * 60, 3)
            pause = (at, round(PAUSE_SECONDS[0] + rng.random()
                               * (PAUSE_SECONDS[1] - PAUSE_SECONDS[0]), 3))
        # (when the table's next roll lands, table): the earliest first
        due = [(now + roll_time(), t.setup.table) for t in game.night.tables]
        heapq.heapify(due)
        bell_heard = False
        while due:
            when, table = due[0]
            clock = game.night.clock
            if pause is not None and clock is not None and when >= pause[0]:
                at, length = pause
                pause = None
                play(PauseClock(at))
                play(ResumeClock(at + length, clock.deadline + length))
                due = [(w + length if w >= at else w, t) for w, t in due]
                heapq.heapify(due)
                continue
            if clock is not None and game.night.phase == PLAYING and when >= clock.deadline:
                now = clock.deadline
                play(TimeUp(now))
            else:
                heapq.heappop(due)
                now = when
                play(TableEntry(table, roll()))
                if not game.night.tables[table - 1].done:
                    heapq.heappush(due, (now + roll_time(), table))
            if game.night.bell_rung and not bell_heard:
                bell_heard = True
                for t in game.night.tables:
                    if not t.bell and not t.done:
                        play(TableEntry(t.setup.table, Bell()))
                due = [(w, t) for w, t in due if not game.night.tables[t - 1].done]
                heapq.heapify(due)
        play(CloseRound())
        last = game.night.round_index + 1 == rules.rounds_per_night
        if timing.move_seconds and not last:
            play(StartClock("move", now, now + timing.move_seconds))
            now += timing.move_seconds
        else:
            now += HOST_SECONDS
        play(NextRound())
        if game.night.phase == BREAK:
            now += HOST_SECONDS
            play(EndBreak())
    play(SettlePrizes(rng.getrandbits(32)))
    return SimulatedNight(game.night, game.log, seed)
