"""A virtual scorekeeper for demos: seeded virtual dice, real (mock) button presses.

She watches the table node (``NodeSnapshot`` records handed over on the node's thread), rolls
three virtual dice for the current roller and presses the box's buttons on gpiozero
``MockFactory`` pins the way a person would: ``point`` once per target die, ``three`` for three
of a kind whenever the rules count it (points, a baby bunco; held for three 2s that take the
all-twos traveler), ``bunco`` for a BUNCO, a held ``pass`` for a wipeout, and ``pass`` when the roll scores
nothing. So a demo runs the box's real path: pins, debounce, gestures, node, rules, outbox.

At a table that is its own head (``--standalone``) she also presses ``pass`` on the results
and break screens to go on. She reacts to the bell like a person too, because she only follows
the round: once the bell has rung the rules let the current roller finish her turn (she keeps
pressing while the rolls score) and the round ends at her pass.

``pace="human"`` waits 0.6 to 1.2 s before each roll, ``"brisk"`` (the short demo's
scorekeeper, who still lets a watcher follow each roll) 0.3 to 0.6 s; ``"fast"`` presses as fast as the box
takes them, waiting for each press to be applied before the next one.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from bunco_pi.rules.scoring import score_roll
from bunco_pi.rules.table_round import EXTRA, ROLLOFF, TableRound
from bunco_pi.table.node import NodeSnapshot

PACES = ("fast", "brisk", "human")
HUMAN_GAP = (0.6, 1.2)  # seconds between rolls at a human pace
GAPS = {"human": HUMAN_GAP, "brisk": (0.3, 0.6)}
BETWEEN_ROUNDS = 2.0  # seconds on the results screen before she goes on (standalone, human)
APPLY_TIMEOUT = 3.0  # a press not applied by then is given up (the round moved on)


def presses_for(dice: tuple[int, int, int], round_: TableRound) -> list[str]:
    """The buttons a scorekeeper presses for ``dice`` thrown now; "pass!" is a held pass."""
    setup = round_.setup
    outcome = score_roll(dice, setup.target, setup.rules)
    if outcome.wipeout:
        presses = ["pass!"]
    elif outcome.bunco:
        presses = ["bunco"]
    elif outcome.three_of_a_kind:
        # pressed whenever the rules count it, worth points or not: a 0-point baby bunco goes
        # on the card, and three 2s are held where they take the all-twos traveler
        counted = outcome.points or outcome.baby_bunco or outcome.travels
        presses = ["three!" if outcome.travels else "three"] if counted else []
    else:
        presses = ["point"] * outcome.target_dice
    # A roll that scores nothing ends the turn; in the one-roll-each "extra" phase the pass
    # button says the roll is complete, however many presses it took.
    # A roll-off turn that goes on only while the target shows ends at any other roll.
    rolloff_ends = (round_.phase == ROLLOFF and not outcome.target_dice
                    and setup.rules.round.rolloff_turn_continues == "target-number")
    if not outcome.wipeout and (not outcome.continues or round_.phase == EXTRA or rolloff_ends):
        presses.append("pass")
    return presses


class SimulatedScorekeeper:
    def __init__(self, factory: Any, pins: dict[str, int], *, debounce: float,
                 hold_time: float, seed: int | None = None, pace: str = "human",
                 sleep: Callable[[float], None] | None = None) -> None:
        if pace not in PACES:
            raise ValueError(f"pace must be one of {', '.join(PACES)}, got {pace!r}")
        self.factory = factory
        self.pins = pins
        self.debounce = debounce
        self.hold_time = hold_time
        self.rng = random.Random(seed)
        self.pace = pace
        self.rolls = 0
        self.presses = 0
        self._cond = threading.Condition()
        self._snapshot: NodeSnapshot | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sleep = sleep

    # --- the node's thread -----------------------------------------------------------------

    def observe(self, snapshot: NodeSnapshot) -> None:
        with self._cond:
            self._snapshot = snapshot
            self._cond.notify_all()

    # --- her own thread --------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="scorekeeper", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def _wait_for(self, test: Callable[[NodeSnapshot], bool], timeout: float
                  ) -> NodeSnapshot | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._stop.is_set():
                snap = self._snapshot
                if snap is not None and test(snap):
                    return snap
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
        return None

    def _pause(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stop.wait(seconds)

    def _run(self) -> None:
        while not self._stop.is_set():
            snap = self._wait_for(lambda s: _my_turn(s) or _go_on(s), 0.5)
            if snap is None:
                continue
            if _go_on(snap):  # a table that is its own head: pass starts what comes next
                self._pause(BETWEEN_ROUNDS if self.pace in GAPS else 0.0)
                now = self._wait_for(_go_on, 0.0)
                if now is not None:
                    self._press("pass", lambda s, mode=now.mode: s.mode != mode)
                continue
            if self.pace in GAPS:
                self._pause(self.rng.uniform(*GAPS[self.pace]))
                snap = self._wait_for(_my_turn, 0.0)
                if snap is None:
                    continue
            assert snap.round is not None
            dice = (self.rng.randint(1, 6), self.rng.randint(1, 6), self.rng.randint(1, 6))
            self.rolls += 1
            for role in presses_for(dice, snap.round):
                if not self._press(role, lambda s, n=snap.accepted: s.accepted > n):
                    break  # not taken (the round ended meanwhile): look again
                snap = self._snapshot  # type: ignore[assignment]

    def _press(self, role: str, applied: Callable[[NodeSnapshot], bool]) -> bool:
        """Press and release one button; True once the node shows it ``applied``."""
        held = role.endswith("!")
        pin = self.factory.pin(self.pins[role.rstrip("!")])
        pin.drive_low()
        # Past the debounce window, so the release is seen; past the hold time for a hold.
        self._pause(self.hold_time + self.debounce * 2 if held else self.debounce * 1.5)
        pin.drive_high()
        self.presses += 1
        done = self._wait_for(applied, APPLY_TIMEOUT) is not None
        self._pause(self.debounce * 1.5)  # the release's own window must close first
        return done


def _my_turn(snap: NodeSnapshot) -> bool:
    return snap.mode == "playing" and snap.round is not None and not snap.round.done


def _go_on(snap: NodeSnapshot) -> bool:
    return snap.self_paced and snap.mode in ("waiting", "results", "break")
