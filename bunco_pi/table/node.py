"""The table node: the one thread that owns a table's state.

Buttons (gpiozero threads), the dice sensor (its reader thread) and the link only ``post``
events; this thread takes them off the queue in order, turns them into entries, stores each
entry durably before it counts, and draws the OLED after every event. Nothing else touches the
round, so there is no lock anywhere in the game.

Buttons and what they do while a round is played (docs/table-box.md has the full table):

=========  =============================  ===========================================
button     tap                            hold (``hold_time``, default 0.8 s)
=========  =============================  ===========================================
point      +1 for the roller              (same as tap, fires on contact)
three      three of a kind (+5)           (same as tap, fires on contact)
bunco      BUNCO (+21, bunco, traveler)   (same as tap, fires on contact)
pass       pass the dice                  wipeout: the roller's team loses its points
undo       undo the latest change         undo the whole current turn
=========  =============================  ===========================================

Between rounds, ``pass`` goes on (next round, end of break) and ``undo`` reopens a round that a
mistaken entry ended.
"""

from __future__ import annotations

import collections
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from bunco_pi.hardware.buttons import Edge, Gesture, Gestures
from bunco_pi.hardware.oled import FrameSink
from bunco_pi.table import game, screens
from bunco_pi.table.book import Entry, RoundBook
from bunco_pi.table.events import (
    BellRang,
    BreakStart,
    DiceRoll,
    DiceStatus,
    NightEnd,
    RoundResults,
    RoundStart,
    Seating,
    Stop,
    Sync,
    Tick,
)
from bunco_pi.table.journal import Journal
from bunco_pi.table.link import RoundSummary, TableLink

HOLD_ROLES = frozenset({"pass", "undo"})
TALLIES = {"point": "point", "three": "three", "bunco": "bunco"}
FLASH = {"point": "+1", "three": "three of a kind", "bunco": "BUNCO!", "wipeout": "WIPEOUT"}


class TableNode:
    def __init__(
        self,
        *,
        rules: Any,
        link: TableLink,
        journal: Journal,
        sink: FrameSink,
        gestures: Gestures,
        table_number: int = 1,
        players: tuple[str, str, str, str] = ("Seat 1", "Seat 2", "Seat 3", "Seat 4"),
        clock: Callable[[], float] = time.monotonic,
        on_round_over: Callable[[TableNode], None] | None = None,
        log: TextIO | None = None,
    ) -> None:
        self.rules = rules
        self.link = link
        self.journal = journal
        self.sink = sink
        self.gestures = gestures
        self.table_number = table_number
        self.players = players
        self.clock = clock
        self.on_round_over = on_round_over
        self.log = log if log is not None else sys.stderr
        self.queue: queue.Queue[object] = queue.Queue()
        self.mode = "waiting"  # waiting, playing, results, break, ended
        self.book: RoundBook | None = None
        self.round_id: int | None = None
        self.set_number = 1
        self.flash = ""
        self.dice_warning = ""
        self.results_moves: tuple[str, ...] = ()
        self.prizes: tuple[tuple[str, str], ...] = ()
        self.break_message = ""
        self.finished_rounds: list[RoundBook] = []
        self.frame: Any = None
        self.dice_seen = 0
        self._end_reported = False
        self._pending_rolls: list[DiceRoll] = []
        self._display_reported = False
        self._thread: threading.Thread | None = None
        self._local: collections.deque[object] = collections.deque()
        self._resume_from_journal()

    # --- other threads call these -----------------------------------------------------------

    def post(self, event: object) -> None:
        self.queue.put(event)

    def _post_from_link(self, event: object) -> None:
        # A link answering the node's own call (the standalone head ringing its own bell)
        # must act before anything already queued: the next roll belongs after the bell.
        if threading.current_thread() is self._thread:
            self._local.append(event)
        else:
            self.queue.put(event)

    def start(self) -> threading.Thread:
        self.link.attach(self._post_from_link)
        self._thread = threading.Thread(target=self.run, name="table-node", daemon=True)
        self._thread.start()
        return self._thread

    def sync(self, timeout: float = 5.0) -> bool:
        """Wait until everything posted so far, and everything that posted, has been handled."""
        marker = Sync()
        self.post(marker)
        return marker.done.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        self.post(Stop())
        if self._thread is not None:
            self._thread.join(timeout)

    # --- the node's own thread --------------------------------------------------------------

    def run(self) -> None:
        self._refresh()
        while True:
            deadline = self.gestures.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                event = self.queue.get(timeout=timeout)
            except queue.Empty:
                event = None
            if isinstance(event, Stop):
                break
            if isinstance(event, Sync):
                if not self.queue.empty():  # events posted while handling: wait for them too
                    self.queue.put(event)
                    continue
                self._refresh()
                event.done.set()
                continue
            self.handle(event)
            while self._local:
                self.handle(self._local.popleft())
            self._refresh()

    def handle(self, event: object) -> None:
        if event is None or isinstance(event, Tick):
            self._gestures(self.gestures.tick(self.clock()))
        elif isinstance(event, Edge):
            self._gestures(self.gestures.feed(event))
        elif isinstance(event, DiceRoll):
            self._dice_roll(event)
        elif isinstance(event, DiceStatus):
            self.dice_warning = "" if event.up else (event.detail or "dice off: use buttons")
        elif isinstance(event, Seating):
            self.players = event.players
        elif isinstance(event, RoundStart):
            self._round_start(event)
        elif isinstance(event, BellRang):
            if self.mode == "playing" and not self._bell_heard():
                self._accept({"bell": "self" if self.link.rolls_start_rounds else "head"})
                self.flash = "BELL! finish the turn"
        elif isinstance(event, RoundResults):
            self.results_moves = event.moves
        elif isinstance(event, BreakStart):
            self.mode, self.break_message = "break", event.message
        elif isinstance(event, NightEnd):
            self.mode, self.prizes = "ended", event.prizes

    # --- inputs -> entries ------------------------------------------------------------------

    def _gestures(self, gestures: list[Gesture]) -> None:
        for gesture in gestures:
            self._gesture(gesture)

    def _gesture(self, gesture: Gesture) -> None:
        role, kind = gesture.role, gesture.kind
        if kind == "down":
            if role in HOLD_ROLES and self.mode == "playing":
                self.flash = "hold: wipeout" if role == "pass" else "hold: undo turn"
            return
        if self.mode == "playing":
            if role in TALLIES:
                self._tally(TALLIES[role])
            elif role == "pass":
                if kind == "hold":
                    self._tally("wipeout")
                else:
                    self._accept({"pass": True})
                    self.flash = f"dice to {self._roller_name()}"
            elif role == "undo":
                self._undo(whole_turn=kind == "hold")
        elif role == "pass" and kind == "tap" and self.mode in ("waiting", "results", "break"):
            self.link.next_requested()
        elif role == "undo" and kind == "tap" and self.mode == "results":
            self._reopen()

    def _tally(self, kind: str) -> None:
        name = self._roller_name()
        self._accept({"tally": kind})
        self.flash = f"{FLASH[kind]} {name}"

    def _undo(self, whole_turn: bool) -> None:
        assert self.book is not None
        entry = self.book.undo_turn() if whole_turn else self.book.undo_last()
        if entry is None:
            self.flash = "nothing to undo"
            return
        self._accept(entry)
        self.flash = f"undone: {len(entry['undo'])} {'turn' if whole_turn else 'entry'}"
        if not self._bell_heard():
            self._end_reported = False

    def _dice_roll(self, event: DiceRoll, replay: bool = False) -> None:
        if not replay:
            self.dice_seen += 1
        if self.mode == "playing":
            name = self._roller_name()
            self._accept({"roll": list(event.dice), "seq": event.seq})
            self.flash = f"{name} {'-'.join(map(str, event.dice))}"
        elif self.link.rolls_start_rounds and self.mode in ("waiting", "results"):
            self._pending_rolls.append(event)
            if len(self._pending_rolls) == 1:
                self.link.next_requested()

    # --- the round --------------------------------------------------------------------------

    def _round_start(self, event: RoundStart) -> None:
        self.set_number = event.set_number
        self.round_id = self.journal.begin_round(event.set_number, event.round_number,
                                                 self.players)
        self.book = RoundBook(self.rules, event.set_number, event.round_number, self.players)
        self.mode = "playing"
        self.flash = ""
        self.results_moves = ()
        self._end_reported = False
        pending, self._pending_rolls = self._pending_rolls, []
        for roll in pending:
            if self.mode == "playing":
                self._dice_roll(roll, replay=True)

    def _accept(self, entry: Entry) -> None:
        """Store the entry durably, then let it count."""
        assert self.book is not None and self.round_id is not None
        self.journal.append(self.round_id, entry)
        self.book = self.book.add(entry)
        self._after_change()

    def _after_change(self) -> None:
        assert self.book is not None
        state = self.book.state
        if not self._end_reported and game.head_end_reached(state, self.rules):
            self._end_reported = True
            self.link.end_reached()
        if game.is_done(state):
            self._finish()

    def _finish(self) -> None:
        assert self.book is not None and self.round_id is not None
        self.journal.finish_round(self.round_id)
        self.mode = "results"
        self.finished_rounds.append(self.book)
        a, b = game.team_scores(self.book.state)
        self.link.round_over(RoundSummary(
            self.book.set_number, self.book.round_number, self.players, a, b,
            game.winner(self.book.state), self.book.state))
        if self.on_round_over is not None:
            self.on_round_over(self)

    def _reopen(self) -> None:
        """Undo on the results screen: the round's last change was a mistake."""
        assert self.book is not None and self.round_id is not None
        entry = self.book.undo_last()
        if entry is None or not self.finished_rounds:
            return
        self.finished_rounds.pop()
        self.journal.reopen_round(self.round_id)
        self.link.round_reopened()
        self.mode = "playing"
        self._accept(entry)
        if not self._bell_heard():
            self._end_reported = False
        self.flash = "undone: round reopened"

    def _bell_heard(self) -> bool:
        return self.book is not None and any("bell" in e for e in self.book.effective)

    def _roller_name(self) -> str:
        if self.book is None:
            return ""
        return self.players[game.roller_seat(self.book.state) - 1]

    def _resume_from_journal(self) -> None:
        for past in self.journal.rounds():
            book = RoundBook(self.rules, past.set_number, past.round_number, past.players,
                             past.entries)
            if past.finished:
                self.finished_rounds.append(book)
            else:
                self.book, self.round_id = book, past.id
                self.players, self.set_number = past.players, past.set_number
                self.mode = "playing"
                self._end_reported = self._bell_heard()
        if self.mode == "playing":
            resume = getattr(self.link, "resume_at", None)
            if resume is not None:
                assert self.book is not None
                resume(self.book.set_number, self.book.round_number)

    # --- the screen ---------------------------------------------------------------------------

    def view(self) -> screens.View:
        if self.mode == "playing" and self.book is not None:
            state = self.book.state
            a, b = game.team_scores(state)
            seat = game.roller_seat(state)
            return screens.PlayingView(
                table=self.table_number, target=self.book.round_number, score_a=a, score_b=b,
                roller=self.players[seat - 1], roller_team="A" if seat % 2 else "B",
                set_number=self.set_number, bell=self._bell_heard(), flash=self.flash,
                warning=self.dice_warning)
        if self.mode == "results" and self.book is not None:
            a, b = game.team_scores(self.book.state)
            return screens.ResultsView(
                table=self.table_number, won=game.winner(self.book.state) == "A",
                score_a=a, score_b=b, moves=self.results_moves, hint="pass: go on")
        if self.mode == "break":
            return screens.BreakView(self.break_message, "pass: go on")
        if self.mode == "ended":
            return screens.EndView(self.prizes)
        return screens.WaitingView(self.table_number, self.players, "pass: start round")

    def _refresh(self) -> None:
        self.frame = screens.render(self.view())
        self.sink.show(self.frame)
        if self.sink.failure and not self._display_reported:
            self._display_reported = True
            print(f"bunco-pi table: {self.sink.failure}; still counting with the buttons",
                  file=self.log, flush=True)
