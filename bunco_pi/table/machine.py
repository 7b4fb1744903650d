"""The table's decisions, without any I/O: inputs in, effects out.

The twin of the head's ``Coordinator``. ``TableMachine.feed`` takes one input (a button
gesture, a settled dice roll, a message from the head or the table's own standalone logic, a
change in what the link says) and returns the effects for the node's thread to carry out *in
order*. An accepted entry is always a ``Store`` before the ``Draw`` that shows it, so nothing
counts on the screen before it is on disk; when a ``Store`` cannot be carried out, the shell
puts the machine back to the ``Store``'s ``before`` and the entry never counted.

Pure: no threads, clock, files, sockets or devices. The link's answers the decisions need
(its status line, whether the head's bell rang, whether a round may be reopened) come in as
``LinkFacts``; what the table tells the link goes out as effects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bunco_pi.hardware.buttons import Gesture
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.table_round import Entry, RuleViolation, TableRound
from bunco_pi.table import game, presses, screens
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
    Waiting,
)
from bunco_pi.table.game import JsonEntry
from bunco_pi.table.link import RoundSummary

# What a press means is decided in ``presses`` (shared with the Pico box's firmware).
HOLD_ROLES = frozenset(presses.HOLD_ROLES)
TALLIES = presses.TALLIES
FLASH = presses.FLASH


def hold_roles(rules: HouseRules | None) -> frozenset[str]:
    """The buttons whose tap waits for release because holding them means something else:
    under the all-twos traveler a held "three" is three 2s; otherwise "three" counts at once."""
    twos = rules is not None and rules.traveler.enabled and rules.traveler.trigger == "all-twos"
    return frozenset(presses.hold_roles(twos))


# --- inputs besides the queue's events (bunco_pi.table.events) and gestures ------------------


@dataclass(frozen=True)
class LinkFacts:
    """What the table's link says, as the decisions need it (read off the link by the shell)."""

    status: str = ""  # one line for the screen when something is wrong ("" when not)
    bell_rung: bool = False  # the head's bell rang for the round played here
    may_reopen: bool = True  # an undo may still reopen the finished round
    rolls_start_rounds: bool = False  # standalone: a roll between rounds starts the next one
    between_rounds_hint: str = ""  # what a button between rounds says ("": the table's own)
    results_hint: str = "pass: go on"
    # A timed round's time ran out here by the box's own count and the head's horn has not come
    # (the head is down, or its word is late): no roll, tally or pass counts until it does.
    time_up: bool = False


@dataclass(frozen=True)
class LinkChanged:
    """The link's facts changed (a broker message, a reconnect, an entry waiting to be sent)."""

    facts: LinkFacts


@dataclass(frozen=True)
class Failed:
    """The shell could not carry out an input or its effects: say so on the last line."""

    error: str


@dataclass(frozen=True)
class LinkFailed:
    """The link could not open: the whole screen says so until a button is pressed."""

    error: str


class PastRound(Protocol):
    """A round as the table's journal read it back after a restart."""

    set_number: int
    round_number: int
    target: int
    players: tuple[str, str, str, str]
    can_end_round: bool
    entries: Sequence[JsonEntry]
    finished: bool


# --- effects -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BeginRound:
    """Open a round in the journal (the entries that follow belong to it)."""

    set_number: int
    round_number: int
    target: int
    seats: tuple[str, str, str, str]
    can_end_round: bool


@dataclass(frozen=True, eq=False)
class Store:
    """Make an accepted entry durable (the link's outbox, then the journal) before anything
    after it. If that fails, ``before`` is the machine as it was: put it back, stop there."""

    entry: JsonEntry
    before: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class FinishRound:
    """Mark the journal's open round finished."""


@dataclass(frozen=True)
class ReopenRound:
    """Mark the journal's last round open again (an undo took back what ended it)."""


@dataclass(frozen=True)
class EndReached:
    """Tell the link: this table's play ended the round for everyone."""


@dataclass(frozen=True)
class RoundOver:
    """Tell the link (and the box's watcher): the round here is finished."""

    summary: RoundSummary


@dataclass(frozen=True)
class RoundReopened:
    """Tell the link: an undo reopened the finished round."""


@dataclass(frozen=True)
class NextRequested:
    """Tell the link: the scorekeeper asked to go on."""


@dataclass(frozen=True)
class ResumeLink:
    """Tell the link which rounds the journal held at start-up."""

    finished: tuple[tuple[Entry, ...], ...]
    open_round: bool


@dataclass(frozen=True)
class SetHoldRoles:
    """The buttons whose tap waits for release changed with the round's rules."""

    roles: frozenset[str]


@dataclass(frozen=True)
class Warn:
    """A line for the table's log."""

    text: str


@dataclass(frozen=True)
class Draw:
    """Show this on the OLED."""

    view: screens.View


Effect = (BeginRound | Store | FinishRound | ReopenRound | EndReached | RoundOver
          | RoundReopened | NextRequested | ResumeLink | SetHoldRoles | Warn | Draw)


@dataclass(frozen=True)
class NodeSnapshot:
    """What the table looks like after an event, for watchers on other threads (immutable)."""

    mode: str
    round: TableRound | None  # the round at this table (None before the first one)
    accepted: int  # entries accepted since the node started: grows by one per stored entry
    self_paced: bool = False  # the table is its own head: pass between rounds goes on


class TableMachine:
    """One table's game: the round, the screen's words, what the link needs to hear.

    Every attribute holds an immutable value (replaced, never changed in place), so a copy of
    ``vars(self)`` is the whole machine at a moment (what ``Store.before`` keeps).
    """

    def __init__(self, rules: HouseRules, *, table_number: int = 1,
                 players: tuple[str, str, str, str] = ("Seat 1", "Seat 2", "Seat 3", "Seat 4"),
                 link: LinkFacts = LinkFacts()) -> None:
        self.rules = rules
        self.table_number = table_number
        self.players = players
        self.link = link
        self.mode = "waiting"  # waiting, playing, results, break, ended
        self.book: RoundBook | None = None
        self.in_journal = False  # the journal holds a round that entries go to (from a start)
        self.round_index: int | None = None  # the head's index of the round played here
        self.names: Mapping[str, str] = {}  # player id -> name shown (a networked night)
        self.accepted = 0
        self.dice_seen = 0
        self.flash = ""
        self.dice_warning = ""
        self.alert: screens.ErrorView | None = None
        self.head_result: RoundResults | None = None
        self.waiting_message = ""
        self.results_moves: tuple[str, ...] = ()
        self.prizes: tuple[tuple[str, str], ...] = ()
        self.break_message = ""
        self.finished_rounds: tuple[RoundBook, ...] = ()
        self.end_reported = False
        self.pending_rolls: tuple[DiceRoll, ...] = ()
        self._out: list[Effect] = []

    # --- the machine as a value ---------------------------------------------------------------

    def saved(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k != "_out"}

    def restore(self, saved: Mapping[str, Any]) -> None:
        """Back to ``saved`` (a ``Store.before``): the entry that could not be stored is gone."""
        vars(self).update(saved)

    # --- inputs --------------------------------------------------------------------------------

    def resume(self, rounds: Iterable[PastRound]) -> list[Effect]:
        """Start from the journal's rounds after a restart. RuleViolation when they do not
        fit these rules (then the table must not start)."""
        self._out = []
        open_round = False
        finished: list[RoundBook] = []
        for past in rounds:
            book = RoundBook(self.rules, self.table_number, past.set_number, past.round_number,
                             past.target, past.players, past.can_end_round, tuple(past.entries))
            self.book, self.players = book, past.players
            if past.finished:
                finished.append(book)
                self.mode = "results"
            else:
                self.mode, self.in_journal, open_round = "playing", True, True
        self.finished_rounds = tuple(finished)
        if self.book is not None:
            # Refold now: a journal that no longer fits the rules fails here, not mid-game.
            self.end_reported = self.book.state.ended_round
        if finished or open_round:
            self._out.append(ResumeLink(tuple(b.state.entries for b in finished), open_round))
        return self._done()

    def feed(self, event: object) -> list[Effect]:
        """Take one input; the effects to carry out in order, ending with what to draw."""
        self._out = []
        if isinstance(event, Gesture):
            self._gesture(event)
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
            self.pending_rolls = ()
        elif isinstance(event, BreakStart):
            self.mode, self.break_message, self.flash = "break", event.message, ""
            self.pending_rolls = ()  # a roll thrown into the break starts nothing
        elif isinstance(event, NightEnd):
            self.mode, self.prizes, self.flash = "ended", event.prizes, ""
            self.pending_rolls = ()
        elif isinstance(event, LinkChanged):
            self.link = event.facts
        elif isinstance(event, Failed):
            self.flash = f"error: {event.error}"
        elif isinstance(event, LinkFailed):
            self.alert = screens.ErrorView("no link to head", (event.error, "see the log"))
        else:
            raise TypeError(f"not an input of the table: {type(event).__name__}")
        return self._done()

    def _done(self) -> list[Effect]:
        out, self._out = self._out, []
        out.append(Draw(self.view()))
        return out

    # --- inputs -> entries ------------------------------------------------------------------

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
            if role in hold_roles(self.rules) and self.mode == "playing":
                self.flash = presses.down_flash(role, self._twos_travel())
            elif self.mode != "playing":
                # Between rounds only pass (and undo on results) mean something: say so.
                hint = self.link.between_rounds_hint
                if hint:
                    self.flash = hint
                else:
                    self.flash = f"{role}: press pass to go on" if role != "pass" else "pass"
            return
        if self.mode == "playing":
            action, entry = presses.playing_press(role, kind, self._twos_travel())
            if action == presses.ENTER:
                # a tally's flash names who scored; a pass's, who has the dice now
                name = self._roller_name()
                if self._accept(entry):
                    after = "pass" in entry or entry.get("face") == 2
                    self.flash = presses.entry_flash(entry, self._roller_name() if after else name)
            elif action is not None:
                self._undo(whole_turn=action == presses.UNDO_TURN)
        elif role == "pass" and kind == "tap" and self.mode in ("waiting", "results", "break"):
            self._out.append(NextRequested())
        elif role == "undo" and kind == "tap" and self.mode == "results":
            self._reopen()

    def _hear_bell(self) -> None:
        if self.mode != "playing" or self.book is None or self.book.state.bell:
            return
        if self._accept({"bell": True}):
            timing = self.rules.round
            if not timing.timed:
                self.flash = "BELL! finish the turn"
            elif timing.at_horn == "stop":
                self.flash = "TIME! play stops"
            else:
                self.flash = "TIME! the roll in hand"

    def _twos_travel(self) -> bool:
        """Three 2s pass the traveler under these rules ("unless we are rolling for 2s")."""
        return (self.rules.traveler.enabled and self.rules.traveler.trigger == "all-twos"
                and self.book is not None and self.book.target != 2)

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
            self._out.append(Warn(f"the host's undo {event.command} is for round "
                                  f"{event.round_index + 1}, not being played here; ignored"))
            return
        if any(e.get("command") == event.command for e in self.book.log):
            # The link drops a redelivered command too; the round's own log is the last word.
            self._out.append(Warn(f"the host's undo {event.command} is already entered; "
                                  "ignored"))
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
            self.pending_rolls += (event,)
            if len(self.pending_rolls) == 1:
                self._out.append(NextRequested())
        elif not replay:
            self.flash = self.link.between_rounds_hint or "no round on"

    # --- the round --------------------------------------------------------------------------

    def _round_start(self, event: RoundStart) -> None:
        if event.rules is not None:
            self.rules = event.rules
            self._out.append(SetHoldRoles(hold_roles(event.rules)))
        if event.names:
            self.names = dict(event.names)
        self.players = tuple(self.names.get(s, s) for s in event.seats)  # type: ignore[assignment]
        self._out.append(BeginRound(event.set_number, event.round_number, event.target,
                                    event.seats, event.can_end_round))
        self.in_journal = True
        book = RoundBook(self.rules, self.table_number, event.set_number,
                         event.round_number, event.target, event.seats,
                         event.can_end_round, ghosts=event.ghosts)
        for entry in event.replay:  # already durable (and sent): fold them, store nothing
            try:
                book = book.add(entry)
            except RuleViolation as exc:
                self._out.append(Warn(f"a stored entry {entry!r} does not fit the round "
                                      f"({exc}); it is skipped here"))
        if event.replay:
            self._out.append(Warn(f"resumed set {event.set_number} round "
                                  f"{event.round_number} from the outbox "
                                  f"({len(event.replay)} entries)"))
        self.book = book
        self.round_index = event.round_index
        self.mode = "playing"
        self.flash = ""
        self.results_moves = ()
        self.head_result = None
        self.end_reported = False
        if event.replay:
            self._after_change()
        pending, self.pending_rolls = self.pending_rolls, ()
        for roll in pending:
            self._dice_roll(roll, replay=True)

    def _accept(self, entry: JsonEntry) -> bool:
        """Check the entry against the rules; store it durably, then let it count."""
        assert self.book is not None and self.in_journal
        if self.link.time_up and not self.book.state.bell and \
                not {"bell", "undo"} & set(entry):
            self.flash = "TIME! wait for the horn"
            return False
        try:
            book = self.book.add(entry)
        except RuleViolation as exc:
            self.flash = _short_reason(exc)
            return False
        self._out.append(Store(entry, self.saved()))
        self.book = book
        self.accepted += 1
        self._after_change()
        return True

    def _after_change(self) -> None:
        assert self.book is not None
        state = self.book.state
        if state.ended_round and not self.end_reported:
            self.end_reported = True
            self._out.append(EndReached())
        elif not state.ended_round:
            self.end_reported = False
        if state.done:
            self._finish()
        elif not state.bell and self.link.bell_rung:
            # The head's bell stays rung even when an undo here takes back what rang it.
            self._hear_bell()

    def _finish(self) -> None:
        assert self.book is not None and self.in_journal
        self._out.append(FinishRound())
        self.mode, self.flash = "results", ""
        self.finished_rounds += (self.book,)
        self._out.append(RoundOver(RoundSummary(self.book.set_number, self.book.round_number,
                                                self.book.state)))

    def _reopen(self) -> None:
        """Undo on the results screen: the round's last change was a mistake."""
        assert self.book is not None and self.in_journal
        entry = self.book.undo_last()
        if entry is None or not self.finished_rounds:
            return
        if not self.link.may_reopen:
            self.flash = "round closed by the head"
            return
        self.finished_rounds = self.finished_rounds[:-1]
        self._out.append(ReopenRound())
        self._out.append(RoundReopened())
        self.mode = "playing"
        if self._accept(entry):
            self.flash = "undone: round reopened"

    def _roller_name(self) -> str:
        if self.book is None:
            return ""
        return self.names.get(self.book.state.roller, self.book.state.roller)

    # --- what others see ----------------------------------------------------------------------

    def snapshot(self) -> NodeSnapshot:
        return NodeSnapshot(self.mode, self.book.state if self.book is not None else None,
                            self.accepted, self.link.rolls_start_rounds)

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


def _short_reason(exc: RuleViolation) -> str:
    """The rules' reason without the "table N: " prefix, to fit the OLED's last line."""
    text = str(exc)
    return text.split(": ", 1)[1] if text.startswith("table ") and ": " in text else text
