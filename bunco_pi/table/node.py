"""The table node: the one thread that owns a table's state.

Buttons (gpiozero threads), the dice sensor (its reader thread) and the link only ``post``
events; this thread takes them off the queue in order, turns them into entries, checks each
against the rules, stores it durably, and only then lets it count and draws the OLED. Nothing
else touches the round, so there is no lock anywhere in the game.

Buttons and what they do while a round is played (docs/table-box.md has the full story):

=========  =============================  ===========================================
button     tap                            hold (``hold_time``, default 0.8 s)
=========  =============================  ===========================================
point      +1 for the roller              (same as tap, counts on contact)
three      three of a kind                (same as tap, counts on contact)
bunco      BUNCO                          (same as tap, counts on contact)
pass       pass the dice                  wipeout (when the house rules play it)
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
from dataclasses import dataclass
from typing import Any, TextIO

from bunco_pi.errors import UserError
from bunco_pi.hardware.buttons import Edge, Gesture, Gestures
from bunco_pi.hardware.oled import FrameSink
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.table_round import RuleViolation, TableRound
from bunco_pi.table import game, screens
from bunco_pi.table.book import RoundBook
from bunco_pi.table.events import (
    BellRang,
    BreakStart,
    DiceRoll,
    DiceStatus,
    HostUndo,
    NightEnd,
    RoundResults,
    RoundStart,
    Seating,
    Stop,
    Sync,
    Tick,
    Waiting,
)
from bunco_pi.table.game import JsonEntry
from bunco_pi.table.journal import Journal
from bunco_pi.table.link import RoundSummary, TableLink

HOLD_ROLES = frozenset({"pass", "undo"})
QR_SECONDS = 4.0  # between rounds the head table turns between its screen and the console's QR


def hold_roles(rules: HouseRules | None) -> frozenset[str]:
    """The buttons whose tap waits for release because holding them means something else:
    under the all-twos traveler a held "three" is three 2s; otherwise "three" counts at once."""
    if rules is not None and rules.traveler.enabled and rules.traveler.trigger == "all-twos":
        return HOLD_ROLES | {"three"}
    return HOLD_ROLES
TALLIES = ("point", "three", "bunco")
FLASH = {"point": "+1", "three": "three of a kind", "bunco": "BUNCO!", "wipeout": "WIPEOUT"}


@dataclass(frozen=True)
class NodeSnapshot:
    """What the node looks like after an event, for watchers on other threads (immutable)."""

    mode: str
    round: TableRound | None  # the round at this table (None before the first one)
    accepted: int  # entries accepted since the node started: grows by one per stored entry
    self_paced: bool = False  # the table is its own head: pass between rounds goes on


class TableNode:
    def __init__(
        self,
        *,
        rules: HouseRules,
        link: TableLink,
        journal: Journal,
        sink: FrameSink,
        gestures: Gestures,
        table_number: int = 1,
        players: tuple[str, str, str, str] = ("Seat 1", "Seat 2", "Seat 3", "Seat 4"),
        clock: Callable[[], float] = time.monotonic,
        on_round_over: Callable[[TableNode], None] | None = None,
        log: TextIO | None = None,
        on_frame: Callable[[Any], None] | None = None,
    ) -> None:
        self.rules = rules
        gestures.hold_roles = hold_roles(rules)
        self.link = link
        self.journal = journal
        self.sink = sink
        self.gestures = gestures
        self.table_number = table_number
        self.players = players
        self.clock = clock
        self.on_round_over = on_round_over
        self.on_frame = on_frame
        self.console_url: str | None = None  # the head table shows it as a QR code between rounds
        # Called on the node's thread with a NodeSnapshot after every event (a simulated
        # scorekeeper watches the game this way without sharing any mutable state).
        self.watchers: list[Callable[[NodeSnapshot], None]] = []
        self.accepted = 0
        self.names: dict[str, str] = {}  # player id -> name shown (a networked night)
        self.head_result: RoundResults | None = None
        self.waiting_message = ""
        self.log = log if log is not None else sys.stderr
        self.queue: queue.Queue[object] = queue.Queue()
        self.mode = "waiting"  # waiting, playing, results, break, ended
        self.book: RoundBook | None = None
        self.round_id: int | None = None
        self.round_index: int | None = None  # the head's index of the round played here
        self.flash = ""
        self.dice_warning = ""
        self.alert: screens.ErrorView | None = None
        self.results_moves: tuple[str, ...] = ()
        self.prizes: tuple[tuple[str, str], ...] = ()
        self.break_message = ""
        self.finished_rounds: list[RoundBook] = []
        self.frame: Any = None
        self._last_view: object = None
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
        # A link answering the node's own call (the standalone head starting the next round)
        # must act before anything already queued: the next roll belongs to the new round.
        if threading.current_thread() is self._thread:
            self._local.append(event)
        else:
            self.queue.put(event)

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(target=self.run, name="table-node", daemon=True)
        self.link.attach(self._post_from_link)
        self._thread.start()
        return self._thread

    @property
    def alive(self) -> bool:
        """The node's thread is running (what the systemd watchdog vouches for)."""
        return self._thread is not None and self._thread.is_alive()

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
        # A networked link opens its outbox and connects here: SQLite keeps a connection on
        # the thread that opened it, and this thread is the only one that may use it.
        self._link_call("open")
        self._refresh()
        try:
            self._loop()
        finally:
            self._link_call("shut")

    def _loop(self) -> None:
        poll = self.link.poll_interval
        next_poll = self.clock() + poll if poll else None
        while True:
            if self._local:  # what the link posted from this thread (while connecting)
                while self._local:
                    self._handle_safely(self._local.popleft())
                self._refresh()
            deadline = self.gestures.next_deadline()
            if next_poll is not None:
                deadline = next_poll if deadline is None else min(deadline, next_poll)
            timeout = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                event = self.queue.get(timeout=timeout)
            except queue.Empty:
                event = None
            if isinstance(event, Stop):
                break
            if isinstance(event, Sync):
                if not self.queue.empty() or self._local:  # posted while handling: wait too
                    self.queue.put(event)
                    continue
                self._refresh()
                event.done.set()
                continue
            self._handle_safely(event)
            if next_poll is not None and self.clock() >= next_poll:
                next_poll = self.clock() + poll
                self._handle_safely(_LinkTick())
            while self._local:
                self._handle_safely(self._local.popleft())
            self._refresh()

    def _link_call(self, name: str) -> None:
        method = self.link.open if name == "open" else self.link.shut
        try:
            method()
        except Exception as exc:  # noqa: BLE001 - reported; the box keeps its screen alive
            print(f"bunco-pi table: link {name} failed: {type(exc).__name__}: {exc}",
                  file=self.log, flush=True)
            if name == "open":
                self.alert = screens.ErrorView("no link to head", (type(exc).__name__,
                                                                   "see the log"))

    def _handle_safely(self, event: object) -> None:
        """Handle one event; an unexpected failure (a full disk, a bug) is reported on the
        screen and the log, and the table keeps taking input rather than going silent."""
        try:
            self.handle(event)
        except Exception as exc:  # noqa: BLE001 - this thread must outlive any one event
            self.flash = f"error: {type(exc).__name__}"
            print(f"bunco-pi table: could not handle {type(event).__name__}: "
                  f"{type(exc).__name__}: {exc}", file=self.log, flush=True)

    def handle(self, event: object) -> None:
        if event is None or isinstance(event, Tick):
            self._gestures(self.gestures.tick(self.clock()))
        elif isinstance(event, Edge):
            self._gestures(self.gestures.feed(event))
        elif isinstance(event, DiceRoll):
            self._dice_roll(event)
        elif isinstance(event, DiceStatus):
            self._dice_status(event)
        elif isinstance(event, Seating):
            if self.mode != "playing":
                self.players = event.players
        elif isinstance(event, RoundStart):
            self._round_start(event)
        elif isinstance(event, BellRang):
            self._hear_bell()
        elif isinstance(event, HostUndo):
            self._host_undo(event)
        elif isinstance(event, RoundResults):
            self.results_moves = event.moves
            if event.score is not None:  # the head's word on a round: show it, whatever we had
                self.head_result, self.mode, self.flash = event, "results", ""
        elif isinstance(event, Waiting):
            self.mode, self.flash, self.waiting_message = "waiting", "", event.message
            if event.players is not None:
                self.players = event.players
            self._pending_rolls = []
        elif isinstance(event, _LinkTick):
            self.link.tick()
        elif isinstance(event, BreakStart):
            self.mode, self.break_message, self.flash = "break", event.message, ""
            self._pending_rolls = []  # a roll thrown into the break starts nothing
        elif isinstance(event, NightEnd):
            self.mode, self.prizes, self.flash = "ended", event.prizes, ""
            self._pending_rolls = []
        else:  # a networked link's own records (messages, connects)
            self.link.take(event)

    # --- inputs -> entries ------------------------------------------------------------------

    def _gestures(self, gestures: list[Gesture]) -> None:
        for gesture in gestures:
            self._gesture(gesture)

    def _dice_status(self, event: DiceStatus) -> None:
        if not event.up and not self.dice_warning:
            # Full screen once, so nobody misses it; the first press goes back to the game,
            # where the bottom line keeps saying it.
            self.alert = screens.ErrorView(event.device, event.alert)
        self.dice_warning = "" if event.up else (event.detail or "dice off: use buttons")
        if event.up:
            self.alert = None
            if event.detail:
                self.flash = event.detail

    def _gesture(self, gesture: Gesture) -> None:
        role, kind = gesture.role, gesture.kind
        if kind == "down":
            self.alert = None
            if role in HOLD_ROLES and self.mode == "playing":
                self.flash = {"pass": "hold: wipeout", "undo": "hold: undo turn",
                              "three": "hold: three 2s" if self._twos_travel() else "three"}[role]
            elif self.mode != "playing":
                # Between rounds only pass (and undo on results) mean something: say so.
                hint = self.link.between_rounds_hint
                if hint:
                    self.flash = hint
                else:
                    self.flash = f"{role}: press pass to go on" if role != "pass" else "pass"
            return
        if self.mode == "playing":
            if role == "three" and kind == "hold" and self._twos_travel():
                if self._accept({"tally": "three", "face": 2}):
                    self.flash = f"three 2s: travel! {self._roller_name()}"
            elif role in TALLIES:
                self._tally(role)
            elif role == "pass" and kind == "hold":
                self._tally("wipeout")
            elif role == "pass":
                if self._accept({"pass": True}):
                    self.flash = f"dice to {self._roller_name()}"
            elif role == "undo":
                self._undo(whole_turn=kind == "hold")
        elif role == "pass" and kind == "tap" and self.mode in ("waiting", "results", "break"):
            self.link.next_requested()
        elif role == "undo" and kind == "tap" and self.mode == "results":
            self._reopen()

    def _hear_bell(self) -> None:
        if self.mode != "playing" or self.book is None or self.book.state.bell:
            return
        if self._accept({"bell": True}):
            self.flash = "BELL! finish the turn"

    def _twos_travel(self) -> bool:
        """Three 2s pass the traveler under these rules ("unless we are rolling for 2s")."""
        return (self.rules.traveler.enabled and self.rules.traveler.trigger == "all-twos"
                and self.book is not None and self.book.target != 2)

    def _tally(self, kind: str) -> None:
        name = self._roller_name()
        if self._accept({"tally": kind}):
            self.flash = f"{FLASH[kind]} {name}"

    def _undo(self, whole_turn: bool) -> None:
        assert self.book is not None
        entry = self.book.undo_turn() if whole_turn else self.book.undo_last()
        if entry is None:
            self.flash = "nothing to undo"
        elif self._accept(entry):
            self.flash = "undone: whole turn" if whole_turn else "undone"

    def _host_undo(self, event: HostUndo) -> None:
        """The host's undo from the head: the same entry the undo button makes, once."""
        if self.mode != "playing" or self.book is None \
                or event.round_index != self.round_index:
            print(f"bunco-pi table: the host's undo {event.command} is for round "
                  f"{event.round_index + 1}, not being played here; ignored",
                  file=self.log, flush=True)
            return
        entry = self.book.undo_last()
        if entry is None:
            self.flash = "host: nothing to undo"
        elif self._accept({**entry, "command": event.command}):
            self.flash = "undone by the host"

    def _dice_roll(self, event: DiceRoll, replay: bool = False) -> None:
        if not replay:
            self.dice_seen += 1
        if self.mode == "playing":
            name = self._roller_name()
            if self._accept({"roll": list(event.dice), "seq": event.seq}):
                self.flash = f"{name} {'-'.join(map(str, event.dice))}"
        elif self.link.rolls_start_rounds and self.mode in ("waiting", "results"):
            self._pending_rolls.append(event)
            if len(self._pending_rolls) == 1:
                self.link.next_requested()
        elif not replay:
            self.flash = self.link.between_rounds_hint or "no round on"

    # --- the round --------------------------------------------------------------------------

    def _round_start(self, event: RoundStart) -> None:
        if event.rules is not None:
            self.rules = event.rules
            self.gestures.hold_roles = hold_roles(event.rules)
        if event.names:
            self.names = dict(event.names)
        self.players = tuple(self.names.get(s, s) for s in event.seats)  # type: ignore[assignment]
        self.round_id = self.journal.begin_round(event.set_number, event.round_number,
                                                 event.target, event.seats,
                                                 event.can_end_round)
        book = RoundBook(self.rules, self.table_number, event.set_number,
                         event.round_number, event.target, event.seats,
                         event.can_end_round, ghosts=event.ghosts)
        for entry in event.replay:  # already durable (and sent): fold them, store nothing
            try:
                book = book.add(entry)
            except RuleViolation as exc:
                print(f"bunco-pi table: a stored entry {entry!r} does not fit the round "
                      f"({exc}); it is skipped here", file=self.log, flush=True)
        if event.replay:
            print(f"bunco-pi table: resumed set {event.set_number} round {event.round_number} "
                  f"from the outbox ({len(event.replay)} entries)", file=self.log, flush=True)
        self.book = book
        self.round_index = event.round_index
        self.mode = "playing"
        self.flash = ""
        self.results_moves = ()
        self.head_result = None
        self._end_reported = False
        if event.replay:
            self._after_change()
        pending, self._pending_rolls = self._pending_rolls, []
        for roll in pending:
            self._dice_roll(roll, replay=True)

    def _accept(self, entry: JsonEntry) -> bool:
        """Check the entry against the rules, store it durably, then let it count."""
        assert self.book is not None and self.round_id is not None
        try:
            book = self.book.add(entry)
        except RuleViolation as exc:
            self.flash = _short_reason(exc)
            return False
        self.link.record_entry(entry)  # networked: durable in the outbox (and sent) first
        self.journal.append(self.round_id, entry)
        self.book = book
        self.accepted += 1
        self._after_change()
        return True

    def _after_change(self) -> None:
        assert self.book is not None
        state = self.book.state
        if state.ended_round and not self._end_reported:
            self._end_reported = True
            self.link.end_reached()
        elif not state.ended_round:
            self._end_reported = False
        if state.done:
            self._finish()
        elif not state.bell and self.link.bell_rung:
            # The head's bell stays rung even when an undo here takes back what rang it.
            self._hear_bell()

    def _finish(self) -> None:
        assert self.book is not None and self.round_id is not None
        self.journal.finish_round(self.round_id)
        self.mode, self.flash = "results", ""
        self.finished_rounds.append(self.book)
        self.link.round_over(RoundSummary(self.book.set_number, self.book.round_number,
                                          self.book.state))
        if self.on_round_over is not None:
            self.on_round_over(self)

    def _reopen(self) -> None:
        """Undo on the results screen: the round's last change was a mistake."""
        assert self.book is not None and self.round_id is not None
        entry = self.book.undo_last()
        if entry is None or not self.finished_rounds:
            return
        if not self.link.may_reopen:
            self.flash = "round closed by the head"
            return
        self.finished_rounds.pop()
        self.journal.reopen_round(self.round_id)
        self.link.round_reopened()
        self.mode = "playing"
        if self._accept(entry):
            self.flash = "undone: round reopened"

    def _roller_name(self) -> str:
        if self.book is None:
            return ""
        return self.names.get(self.book.state.roller, self.book.state.roller)

    def snapshot(self) -> NodeSnapshot:
        return NodeSnapshot(self.mode, self.book.state if self.book is not None else None,
                            self.accepted, bool(self.link.rolls_start_rounds))

    def _resume_from_journal(self) -> None:
        open_round = False
        for past in self.journal.rounds():
            book = RoundBook(self.rules, self.table_number, past.set_number, past.round_number,
                             past.target, past.players, past.can_end_round, past.entries)
            if past.finished:
                self.finished_rounds.append(book)
                self.book, self.mode, self.players = book, "results", past.players
            else:
                self.book, self.round_id = book, past.id
                self.players = past.players
                self.mode = "playing"
                open_round = True
        try:
            if self.book is not None:
                # Refold now: a journal that no longer fits the rules fails here, not mid-game.
                self._end_reported = self.book.state.ended_round
            if self.finished_rounds or open_round:
                self.link.resume([b.state.entries for b in self.finished_rounds], open_round)
        except RuleViolation as exc:
            raise UserError(
                f"{self.journal.path}: this journal's night does not fit these house rules or "
                f"players ({exc}); use the same --rules and config, or start --new-night"
            ) from None

    # --- the screen ---------------------------------------------------------------------------

    def view(self) -> screens.View:
        if self.alert is not None:
            return self.alert
        net = self.link.status
        book = self.book
        if self.mode == "playing" and book is not None:
            state = book.state
            a, b = state.team_scores
            seat = state.roller_seat
            return screens.PlayingView(
                table=self.table_number, target=book.target, score_a=a, score_b=b,
                roller=self._roller_name(), roller_team="A" if seat % 2 else "B",
                set_number=book.set_number, bell=state.bell, flash=self.flash,
                warning=self.dice_warning or net,
                seat_scores=None if self.rules.team_play else state.seat_points,
                roller_seat=seat)
        if self.console_url and self.mode != "ended" and not self.flash \
                and int(self.clock() // QR_SECONDS) % 2:
            return screens.QrView(self.console_url)  # turn about with the waiting screens
        hint = self.flash or net or self.link.results_hint
        head = self.head_result
        if self.mode == "results" and head is not None and head.score is not None:
            return screens.ResultsView(
                table=self.table_number, won=bool(head.won), score_a=head.score[0],
                score_b=head.score[1], moves=self.results_moves, hint=hint,
                headline=head.headline)
        if self.mode == "results" and book is not None:
            a, b = book.state.team_scores
            headline = ""
            result = book.state.result
            if not self.rules.team_play and result is not None:
                losers = [self.names.get(p, p) for p in result.losers]
                headline = f"{' & '.join(losers)} move{'s' if len(losers) == 1 else ''}"
            return screens.ResultsView(
                table=self.table_number, won=game.winner_team(book.state) == "A",
                score_a=a, score_b=b, moves=self.results_moves,
                hint=hint, headline=headline)
        if self.mode == "break":
            return screens.BreakView(self.break_message, self.flash or "pass: go on")
        if self.mode == "ended":
            return screens.EndView(self.prizes)
        return screens.WaitingView(self.table_number, self.players,
                                   self.flash or net or self.waiting_message
                                   or "pass: start round")

    def _refresh(self) -> None:
        for watch in self.watchers:
            watch(self.snapshot())
        try:
            view = self.view()
            if view == self._last_view and self.frame is not None and not self.sink.failure:
                return  # nothing new to draw (a networked table wakes twice a second)
            self.frame = screens.render(view)
            self._last_view = view
        except Exception as exc:  # noqa: BLE001 - a drawing bug must not stop the scoring
            print(f"bunco-pi table: cannot draw the screen: {type(exc).__name__}: {exc}",
                  file=self.log, flush=True)
            return
        self.sink.show(self.frame)
        if self.on_frame is not None:
            try:
                self.on_frame(self.frame)
            except OSError as exc:
                print(f"bunco-pi table: cannot write the frame: {exc}", file=self.log, flush=True)
        if self.sink.failure and not self._display_reported:
            self._display_reported = True
            print(f"bunco-pi table: {self.sink.failure}; still counting with the buttons",
                  file=self.log, flush=True)
        elif not self.sink.failure and self._display_reported:
            self._display_reported = False
            print("bunco-pi table: the display answers again", file=self.log, flush=True)


def _short_reason(exc: RuleViolation) -> str:
    """The rules' reason without the "table N: " prefix, to fit the OLED's last line."""
    text = str(exc)
    return text.split(": ", 1)[1] if text.startswith("table ") and ": " in text else text


class _LinkTick:
    """Time for a networked link's periodic work (resending when the head has gone quiet)."""
