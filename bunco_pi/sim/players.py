"""Virtual players and dice: drive a whole night through the rules engine.

Tables roll concurrently: at each step one table that is still playing rolls, picked at random,
so when the head table rings the bell the other tables are caught mid-turn, as they are on a
real night, and their current rollers finish their turns.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.night import (
    BREAK,
    PRIZES,
    CloseRound,
    EndBreak,
    NextRound,
    Night,
    NightEvent,
    Player,
    SettlePrizes,
    StartRound,
    TableEntry,
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
        return _simulate(rules, players, seed, on_event)


def _simulate(rules: HouseRules, players: int, seed: int,
              on_event: Callable[[Night, NightEvent], None] | None) -> SimulatedNight:
    rng = random.Random(seed)
    roster = make_players(players)
    seating = initial_seating([p.id for p in roster], rng.sample(range(len(roster)), len(roster)))
    night = Night.start(rules, roster, seating)
    log: list[NightEvent] = []

    def play(event: NightEvent) -> None:
        nonlocal night
        night = night.apply(event)
        log.append(event)
        if on_event is not None:
            on_event(night, event)

    def dice() -> tuple[int, int, int]:
        # one draw for all three dice: 216 equally likely rolls
        n = int(rng.random() * 216)
        return (n // 36 + 1, n // 6 % 6 + 1, n % 6 + 1)

    while night.phase != PRIZES:
        play(StartRound())
        playing = [t.setup.table for t in night.tables]
        bell_heard = False
        while playing:
            pick = int(rng.random() * len(playing))
            table = playing[pick]
            play(TableEntry(table, Roll(dice())))
            if night.tables[table - 1].done:
                playing.pop(pick)
            if night.bell_rung and not bell_heard:
                bell_heard = True
                for t in night.tables:
                    if not t.bell and not t.done:
                        play(TableEntry(t.setup.table, Bell()))
                playing = [t.setup.table for t in night.tables if not t.done]
        play(CloseRound())
        play(NextRound())
        if night.phase == BREAK:
            play(EndBreak())
    play(SettlePrizes(rng.getrandbits(32)))
    return SimulatedNight(night, log, seed)
