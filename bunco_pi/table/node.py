"""The table node: the one thread that owns a table's state, a thin loop around its machine.

Buttons (gpiozero threads), the dice sensor (its reader thread) and the link only ``post``
events; this thread takes them off the queue in order, feeds each to the ``TableMachine``
(bunco_pi.table.machine: the decisions, pure) and carries out the effects it returns in their
order: an accepted entry is stored durably (the link's outbox, the journal) before the frame
that shows it is drawn. Nothing else touches the round, so there is no lock anywhere in the
game.

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
import dataclasses
import queue
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from bunco_pi.errors import UserError
from bunco_pi.hardware.buttons import Edge, Gestures
from bunco_pi.hardware.oled import FrameSink
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.table_round import RuleViolation
from bunco_pi.table import screens
from bunco_pi.table.book import RoundBook
from bunco_pi.table.countdown import Countdown, read_countdown
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
from bunco_pi.table.journal import Journal
from bunco_pi.table.link import TableLink
from bunco_pi.table.machine import (
    HOLD_ROLES,
    BeginRound,
    Draw,
    Effect,
    EndReached,
    Failed,
    FinishRound,
    LinkChanged,
    LinkFacts,
    LinkFailed,
    NextRequested,
    NodeSnapshot,
    ReopenRound,
    ResumeLink,
    RoundOver,
    RoundReopened,
    SetHoldRoles,
    Store,
    TableMachine,
    Warn,
    hold_roles,
)

__all__ = ["HOLD_ROLES", "NodeSnapshot", "TableNode", "hold_roles"]
QR_SECONDS = 4.0  # between rounds the head table turns between its screen and the console's QR

# What the machine takes from the queue; everything else is the link's own records.
MACHINE_INPUTS = (DiceRoll, DiceStatus, Seating, RoundStart, BellRang, HostUndo, RoundResults,
                  Waiting, BreakStart, NightEnd)


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
        gestures.hold_roles = hold_roles(rules)
        self.link = link
        self.journal = journal
        self.sink = sink
        self.gestures = gestures
        self.table_number = table_number
        self.clock = clock
        self.on_round_over = on_round_over
        self.on_frame = on_frame
        self.console_url: str | None = None  # the head table shows it as a QR code between rounds
        # Called on the node's thread with a NodeSnapshot after every event (a simulated
        # scorekeeper watches the game this way without sharing any mutable state).
        self.watchers: list[Callable[[NodeSnapshot], None]] = []
        self.log = log if log is not None else sys.stderr
        self.queue: queue.Queue[object] = queue.Queue()
        self._timer: object = None  # the head's timer dict last seen, and its countdown here
        self._countdown: Countdown | None = None
        self.machine = TableMachine(rules, table_number=table_number, players=players,
                                    link=self._link_facts())
        self.round_id: int | None = None  # the journal's round the entries go to
        self.frame: Any = None
        self._last_view: object = None
        self._display_reported = False
        self._thread: threading.Thread | None = None
        self._local: collections.deque[object] = collections.deque()
        self._resume_from_journal()

    # --- the machine's state, read-only for watchers on this thread and tests ---------------

    @property
    def mode(self) -> str:
        return self.machine.mode

    @property
    def book(self) -> RoundBook | None:
        return self.machine.book

    @property
    def flash(self) -> str:
        return self.machine.flash

    @property
    def dice_warning(self) -> str:
        return self.machine.dice_warning

    @property
    def dice_seen(self) -> int:
        return self.machine.dice_seen

    @property
    def accepted(self) -> int:
        return self.machine.accepted

    @property
    def finished_rounds(self) -> tuple[RoundBook, ...]:
        return self.machine.finished_rounds

    @property
    def head_result(self) -> RoundResults | None:
        return self.machine.head_result

    @property
    def names(self) -> Mapping[str, str]:
        return self.machine.names

    @property
    def players(self) -> tuple[str, str, str, str]:
        return self.machine.players

    @property
    def rules(self) -> HouseRules:
        return self.machine.rules

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
        # The screen first: a box shows it is alive before its link opens (on a Pi Zero,
        # opening the outbox and loading the MQTT client take the better part of a second).
        self._refresh()
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
            self._warn(f"link {name} failed: {type(exc).__name__}: {exc}")
            if name == "open":
                self._feed(LinkFailed(type(exc).__name__))

    def _handle_safely(self, event: object) -> None:
        """Handle one event; an unexpected failure (a full disk, a bug) is reported on the
        screen and the log, and the table keeps taking input rather than going silent."""
        try:
            self.handle(event)
        except Exception as exc:  # noqa: BLE001 - this thread must outlive any one event
            self._warn(f"could not handle {type(event).__name__}: {type(exc).__name__}: {exc}")
            self._feed(Failed(type(exc).__name__))

    def handle(self, event: object) -> None:
        if event is None or isinstance(event, Tick):
            for gesture in self.gestures.tick(self.clock()):
                self._feed(gesture)
        elif isinstance(event, Edge):
            for gesture in self.gestures.feed(event):
                self._feed(gesture)
        elif isinstance(event, MACHINE_INPUTS):
            self._feed(event)
        elif isinstance(event, _LinkTick):
            self.link.tick()
        else:  # a networked link's own records (messages, acks, connects)
            self.link.take(event)

    # --- carrying out the machine's effects ---------------------------------------------------

    def _feed(self, event: object) -> None:
        """One input to the machine, with the link's facts as they are now; then its effects,
        in order."""
        facts = self._link_facts()
        if facts != self.machine.link:
            self._carry_out(self.machine.feed(LinkChanged(facts)))
        self._carry_out(self.machine.feed(event))

    def _carry_out(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Store):
                assert self.round_id is not None
                try:
                    self.link.record_entry(effect.entry)  # networked: the outbox (and sent)
                    self.journal.append(self.round_id, effect.entry)
                except BaseException:
                    self.machine.restore(effect.before)  # it never counted
                    raise
            elif isinstance(effect, Draw):
                self._draw(effect.view)
            elif isinstance(effect, BeginRound):
                self.round_id = self.journal.begin_round(
                    effect.set_number, effect.round_number, effect.target, effect.seats,
                    effect.can_end_round)
            elif isinstance(effect, FinishRound):
                assert self.round_id is not None
                self.journal.finish_round(self.round_id)
            elif isinstance(effect, ReopenRound):
                assert self.round_id is not None
                self.journal.reopen_round(self.round_id)
            elif isinstance(effect, EndReached):
                self.link.end_reached()
            elif isinstance(effect, RoundOver):
                self.link.round_over(effect.summary)
                if self.on_round_over is not None:
                    self.on_round_over(self)
            elif isinstance(effect, RoundReopened):
                self.link.round_reopened()
            elif isinstance(effect, NextRequested):
                self.link.next_requested()
            elif isinstance(effect, SetHoldRoles):
                self.gestures.hold_roles = effect.roles
            elif isinstance(effect, Warn):
                self._warn(effect.text)
            elif isinstance(effect, ResumeLink):
                self.link.resume(effect.finished, effect.open_round)
            else:
                raise TypeError(f"not an effect of the table: {effect!r}")

    def _link_facts(self) -> LinkFacts:
        link = self.link
        return LinkFacts(status=link.status, bell_rung=link.bell_rung,
                         may_reopen=link.may_reopen,
                         rolls_start_rounds=bool(link.rolls_start_rounds),
                         between_rounds_hint=link.between_rounds_hint,
                         results_hint=link.results_hint, time_up=self._time_up())

    def _time_up(self) -> bool:
        """The round's time ran out by this box's count, TIME_UP_GRACE ago, and the head's
        horn has not come: the head is down or its word is late. (The grace is the horn's way
        here; the head sounds it on time within a second.)"""
        c = self._countdown_now()
        return c is not None and c.phase in ("round", "warn") and \
            self.clock() >= c.received + c.left + TIME_UP_GRACE

    def _warn(self, text: str) -> None:
        print(f"bunco-pi table: {text}", file=self.log, flush=True)

    def snapshot(self) -> NodeSnapshot:
        return self.machine.snapshot()

    def _resume_from_journal(self) -> None:
        rounds = self.journal.rounds()
        for past in rounds:
            if not past.finished:
                self.round_id = past.id
        try:
            effects = self.machine.resume(rounds)
            self._carry_out([e for e in effects if not isinstance(e, Draw)])  # not started yet
        except RuleViolation as exc:
            raise UserError(
                f"{self.journal.path}: this journal's night does not fit these house rules or "
                f"players ({exc}); use the same --rules and config, or start --new-night"
            ) from None

    # --- the screen ---------------------------------------------------------------------------

    def view(self) -> screens.View:
        return self._with_qr(self.machine.view())

    def _with_qr(self, view: screens.View) -> screens.View:
        """The head table's box turns, every QR_SECONDS, between a screen nobody needs for
        scoring (waiting, results, the break) and the web console's address as a QR code. The
        turning is the shell's: it reads the clock, which the machine never does."""
        if self.console_url and not self.flash \
                and isinstance(view, screens.WaitingView | screens.ResultsView | screens.BreakView) \
                and int(self.clock() // QR_SECONDS) % 2:
            return screens.QrView(self.console_url)
        return view

    def _refresh(self) -> None:
        """After an event: what the link says now on the screen, and the watchers told."""
        facts = self._link_facts()
        if facts != self.machine.link:
            self._carry_out(self.machine.feed(LinkChanged(facts)))
        for watch in self.watchers:
            watch(self.snapshot())
        self._draw(self.machine.view())

    def countdown_label(self) -> str:
        """A timed round's minutes left as the screen shows them ("" when no clock runs):
        the head's timer, counted down from when this box received it by its own clock."""
        c = self._countdown_now()
        return c.label(self.clock()) if c is not None else ""

    def _countdown_now(self) -> Countdown | None:
        """The head's timer as this box counts it down, read afresh when the head said a new
        one (it is counted from when this box received it)."""
        timer = getattr(self.link, "timer", None)
        if timer is not self._timer:
            self._timer = timer
            self._countdown = read_countdown(timer, self.clock())
        return self._countdown

    def _draw(self, view: screens.View) -> None:
        view = self._with_qr(view)
        label = self.countdown_label()
        try:
            if (view, label) == self._last_view and self.frame is not None \
                    and not self.sink.failure:
                return  # nothing new to draw (a networked table wakes twice a second)
            if label and isinstance(view, screens.PlayingView):
                # While scoring, the clock is in the header's corner, where the Pico box has
                # it too (layout.py); over the other screens it is a box of its own.
                self.frame = screens.render(dataclasses.replace(view, timer=label))
            else:
                self.frame = screens.render(view)
                if label:
                    screens.draw_countdown(self.frame, label,
                                           left=isinstance(view, screens.QrView))
            self._last_view = (view, label)
        except Exception as exc:  # noqa: BLE001 - a drawing bug must not stop the scoring
            self._warn(f"cannot draw the screen: {type(exc).__name__}: {exc}")
            return
        self.sink.show(self.frame)
        if self.on_frame is not None:
            try:
                self.on_frame(self.frame)
            except OSError as exc:
                self._warn(f"cannot write the frame: {exc}")
        if self.sink.failure and not self._display_reported:
            self._display_reported = True
            self._warn(f"{self.sink.failure}; still counting with the buttons")
        elif not self.sink.failure and self._display_reported:
            self._display_reported = False
            self._warn("the display answers again")


# How long after its own count reached 0:00 a box waits for the head's horn before it stops
# taking rolls by itself.
TIME_UP_GRACE = 2.0


class _LinkTick:
    """Time for a networked link's periodic work (resending when the head has gone quiet)."""
