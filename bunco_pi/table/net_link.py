"""A table box that is one of many: its link to the head table over the broker.

``NetTableLink`` is a :class:`~bunco_pi.table.link.TableLink`. It turns what the head publishes
(the retained ``state`` and this table's ``view``) into the node's own events (round start,
bell, results, break, end), and every entry the table makes into an outbox event for the head.

Everything runs on the node's one thread: the broker link (``MqttLink`` or ``InprocLink``)
only puts its records on the node's queue, the node hands them back here (``take``), and the
outbox (SQLite) is opened, written and closed on that thread. So the round the table shows and
the events it sends can never disagree.

The contract with the head (``bunco_pi.head.coordinator`` and ``views``):

- the table plays the rules in ``state["rules_toml"]``;
- when the state's phase is ``playing`` or ``finishing`` for a ``round_index`` the table has not
  begun, it begins its own copy of the round, set up exactly as the head sets up its fold, so
  the scores on the OLED equal the head's;
- each entry (``{"undo": k}`` as k ``Undo`` entries) goes into the outbox as
  ``{"round": round_index, "entry": encode_entry(entry)}`` before it counts on the screen;
- when the state says the bell rang and the round here has not heard it, the table enters a
  ``Bell`` at that point of its stream: that is how the head learns where the bell fell here;
- after a restart, the round is rebuilt from the outbox events of the current ``round_index``
  (with the last state the head published, kept beside the outbox, a box that boots with no
  Wi-Fi resumes its round too).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.net import envelope
from bunco_pi.net.delivery import HEAD_NAME
from bunco_pi.net.link import Connected, Disconnected, Link, LinkEvent, Message, Sink
from bunco_pi.net.topics import Topics
from bunco_pi.protocol import (
    STATE_PARTS,
    NightPosition,
    ProtocolError,
    check_version,
    decode_entry,
    encode_entry,
    is_older,
    merge_state,
    parts_named,
    parts_version_problem,
    position_of,
    read_command,
    seating_page,
    seats_at,
)
from bunco_pi.rules.house import HouseRules, parse_rules
from bunco_pi.rules.table_round import Bell, Entry, Pass, Roll, Tally, Undo
from bunco_pi.table.events import (
    BellRang,
    BreakStart,
    HostUndo,
    NightEnd,
    RoundResults,
    RoundStart,
    Waiting,
)
from bunco_pi.table.game import JsonEntry, engine_entries
from bunco_pi.table.link import LinkBase, Post, RoundSummary
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.sender import TableSender

log = logging.getLogger(__name__)

PLAYING_PHASES = ("playing", "finishing")
# A retained ack comes right after (re)subscribing; connected this long with none, there is none.
ACK_GRACE_S = 2.0


def json_entry(entry: Entry) -> JsonEntry:
    """An engine entry as the table's book keeps it (the inverse of ``engine_entries``)."""
    if isinstance(entry, Roll):
        return {"roll": list(entry.dice)}
    if isinstance(entry, Tally):
        return {"tally": entry.kind} if entry.face is None else \
            {"tally": entry.kind, "face": entry.face}
    if isinstance(entry, Pass):
        return {"pass": True}
    if isinstance(entry, Bell):
        return {"bell": True}
    if isinstance(entry, Undo):
        return {"undo": 1}
    raise ValueError(f"not a table entry: {entry!r}")


def read_head_message(topic: str, data: bytes) -> dict[str, Any] | None:
    """The JSON object the head published on ``topic``; None (and a log line naming the
    topic) for anything else, or for a message that is not from the head."""
    env = envelope.try_decode(topic, data, log)
    if env is None:
        return None
    if env.sender != HEAD_NAME:
        log.warning("%s: ignored a message from %r (only the head writes it)", topic, env.sender)
        return None
    try:
        check_version(env.payload)
    except ProtocolError as exc:
        log.warning("%s: ignored: %s", topic, exc)
        return None
    return env.payload


class NetTableLink(LinkBase):
    """The table's side of the night, over a broker link made by ``connect(sink)``."""

    rolls_start_rounds = False
    keeps_entries = True  # the outbox
    poll_interval = 0.5  # seconds between resend checks (TableSender.tick)
    between_rounds_hint = "no round on: wait"
    results_hint = "next: head's bell"

    def __init__(self, connect: Callable[[Sink], Link], topics: Topics, table: int,
                 outbox_path: str | Path, *, resend_after: float = 3.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.topics = topics
        self.table = table
        self.outbox_path = Path(outbox_path)
        self.state_path = self.outbox_path.with_name(self.outbox_path.name + ".state.json")
        self._connect = connect
        self._resend_after = resend_after
        self._post: Post | None = None
        self.net: Link | None = None
        self.outbox: Outbox | None = None
        self.sender: TableSender | None = None
        self.state: dict[str, Any] | None = None
        self.view: dict[str, Any] | None = None
        # Where in the night the state and view held here were said: an older one (a broker's
        # autosave, a session's queued redelivery) is ignored, so nothing moves the box back.
        self._state_at: NightPosition | None = None
        # The small state as the head said it, and the parts it goes with (roster, seating,
        # rules: each on its own retained topic, each with its own position). ``state`` is
        # the whole of it, once every part the small state names is here.
        self._core: dict[str, Any] | None = None
        self._parts: dict[str, dict[str, Any]] = {}
        self._part_at: dict[str, NightPosition] = {}
        # The rules and this table's own page of the seating (with the names seated there).
        self._part_topics = {topics.rules(): "rules",
                             topics.seating(seating_page(table)): "seating"}
        self._parts_warned = False
        self._view_at: NightPosition | None = None
        self.round_index: int | None = None  # the round begun at this table
        self._bell_posted: int | None = None  # the round whose bell was passed on
        self._shown: object = None  # the last between-rounds screen posted
        self._rules: tuple[str, HouseRules] | None = None
        self._ready = False  # may submit: numbering cannot clash with what the head has
        self._pending = 0
        self._online = False
        self._refused = ""  # why the broker refused us, e.g. a wrong password
        # The head's latest refusal of one of our entries, for the screen until the next round.
        self._entry_refused: tuple[int, str] | None = None
        self._refusal_shown: tuple[int, str] | None = None
        self._clock = clock
        self._connected_at: float | None = None
        # The highest host command id entered here (kept in the outbox with its entry), so a
        # command redelivered after a reconnect or a reboot is not entered twice.
        self._last_command = 0
        self.where = "the broker"  # host:port, for the log

    # --- TableLink ---------------------------------------------------------------------------

    def attach(self, post: Post) -> None:
        self._post = post

    def open(self) -> None:
        """On the node's thread: open the outbox, subscribe, connect."""
        self.outbox = Outbox(self.outbox_path)
        self.net = self._connect(self._sink)
        self.sender = TableSender(self.net, self.topics, self.table, self.outbox,
                                  resend_after=self._resend_after)  # subscribes to the ack first
        for topic in self._part_topics:  # before the state: they come first on a reconnect
            self.net.subscribe(topic)
        self.net.subscribe(self.topics.state())
        self.net.subscribe(self.topics.view(self.table))
        self.net.subscribe(self.topics.command(self.table))
        self._ready = self.outbox.last_seq > 0
        self._last_command = max((c for item in self.outbox.entries()
                                  if isinstance(c := item.payload.get("command"), int)),
                                 default=0)
        self._count_pending()
        if self._ready:
            self._resume_state(self._load_state())
            self._sync()  # resume the round now, whether or not the broker answers
        self.net.start()

    def shut(self) -> None:
        """On the node's thread: say offline, disconnect, close the outbox."""
        if self.net is not None:
            self.net.stop()
        if self.outbox is not None:
            self.outbox.close()

    def close(self) -> None:
        self._post = None

    def end_reached(self) -> None:
        """The head learns it from the entries themselves."""

    def round_over(self, summary: RoundSummary) -> None:
        """The head closes the round once every table is done."""

    def round_reopened(self) -> None:
        """The undo that reopened it is an entry: the head gets it like any other."""

    def next_requested(self) -> None:
        """The head's bell moves the night on, not a table's pass button."""

    # --- what the node asks ----------------------------------------------------------------

    @property
    def bell_rung(self) -> bool:
        """The head says the bell rang for the round being played here."""
        s = self.state
        return (s is not None and self.round_index is not None and bool(s.get("bell"))
                and s.get("round_index") == self.round_index and s.get("phase") in PLAYING_PHASES)

    @property
    def timer(self) -> dict[str, Any] | None:
        """The timed round's clock as the head said it last (the same object until the head
        says it again: the node counts down from when it changed)."""
        core = self._core
        timer = core.get("timer") if core is not None else None
        return timer if isinstance(timer, dict) else None

    @property
    def may_reopen(self) -> bool:
        """An undo may reopen a finished round only while the head has not closed it."""
        s = self.state
        return (s is not None and s.get("phase") in PLAYING_PHASES
                and s.get("round_index") == self.round_index)

    @property
    def status(self) -> str:
        """One line for the screen when the head cannot hear this table right now."""
        if self.net is None:
            return ""
        if not self._online:
            if self._refused:
                return self._refused
            return f"offline, {self._pending} waiting" if self._pending else "offline"
        if not self._ready:
            return "joining the night..."
        if self._refusal_shown is not None:
            return f"head refused #{self._refusal_shown[0]}"
        return ""

    @property
    def pending(self) -> int:
        return self._pending

    def record_entry(self, entry: JsonEntry) -> None:
        """Make an accepted entry durable in the outbox (then it is sent); the node shows it
        only after this returns."""
        if self.sender is None or self.round_index is None:
            raise RuntimeError("no round of the head is being played here")
        payloads: list[dict[str, Any]] = []
        for engine_entry in engine_entries(entry):
            payload: dict[str, Any] = {"round": self.round_index,
                                       "entry": encode_entry(engine_entry)}
            if "roll" in entry and "seq" in entry:
                payload["sensor_seq"] = entry["seq"]  # a repeated sensor line is not a new roll
            if isinstance(entry.get("command"), int):
                payload["command"] = entry["command"]  # the host's undo: entered once
            payloads.append(payload)
        self.sender.submit_many(payloads)  # an undo of k entries is k events, all or none
        self._pending = self.sender.pending_count
        if isinstance(entry.get("command"), int):
            self._last_command = max(self._last_command, entry["command"])

    def last_roll_seq(self) -> int | None:
        """The dice sensor's seq of the latest roll in the outbox (any thread: it reads the
        file through a connection of its own), so a repeat of it after a restart is ignored."""
        if not self.outbox_path.exists():
            return None
        with Outbox(self.outbox_path) as outbox:
            for item in reversed(outbox.entries()):
                seq = item.payload.get("sensor_seq")
                if isinstance(seq, int):
                    return seq
        return None

    def tick(self) -> None:
        if self.sender is None:
            return
        self.sender.tick()
        if not self._ready and self._connected_at is not None \
                and self._clock() - self._connected_at >= ACK_GRACE_S:
            self._ready = True  # no retained ack came: the head has nothing of this table's
            self._sync()

    # --- records from the broker link ------------------------------------------------------

    def _sink(self, event: LinkEvent) -> None:
        post = self._post
        if post is not None:
            post(event)

    def take(self, event: object) -> None:
        """A broker record, on the node's thread."""
        if self.sender is None:
            return
        if isinstance(event, Connected):
            self._online, self._refused = True, ""
            self._connected_at = self._clock()
        elif isinstance(event, Disconnected):
            self._online, self._connected_at = False, None
            if event.reason.startswith("refused"):
                self._refused = f"broker {event.reason}"
        if self.sender.handle(event):  # our ack; Connected also resends what is pending
            self._ready = self._ready or self.sender.ack_seen
            if self.sender.refused != self._entry_refused:
                self._entry_refused = self._refusal_shown = self.sender.refused
            self._count_pending()
            self._sync()
            return
        if isinstance(event, Connected):
            self._count_pending()
        if not isinstance(event, Message):
            return
        if event.topic == self.topics.state():
            state = read_head_message(event.topic, event.payload)
            if state is not None:
                # The link subscribes again on every connect, the ack first, so the broker
                # hands out the retained ack before the retained state: a fresh outbox with no
                # ack by the retained state has nothing of ours at the head to clash with. (A
                # state queued in the session while we were away comes earlier, not retained.)
                if event.retain:
                    self._ready = True
                at = position_of(state)
                if is_older(self._state_at, at):
                    log.info("%s: ignored a state older than the one held (%s < %s)",
                             event.topic, at, self._state_at)
                    return
                self._state_at = at
                self._core = state
                self._compose()
        elif event.topic in self._part_topics:
            part = self._part_topics[event.topic]
            content = read_head_message(event.topic, event.payload)
            if content is not None:
                at = position_of(content)
                if is_older(self._part_at.get(part), at):
                    log.info("%s: ignored a %s older than the one held (%s < %s)",
                             event.topic, part, at, self._part_at.get(part))
                    return
                if at is not None:
                    self._part_at[part] = at
                self._parts[part] = content
                self._compose()
        elif event.topic == self.topics.command(self.table):
            self._command(event)
        elif event.topic == self.topics.view(self.table):
            view = read_head_message(event.topic, event.payload)
            if view is not None:
                at = position_of(view)
                if is_older(self._view_at, at):
                    log.info("%s: ignored a view older than the one held (%s < %s)",
                             event.topic, at, self._view_at)
                    return
                self._view_at = at
                self.view = view
                self._sync()

    def _command(self, event: Message) -> None:
        payload = read_head_message(event.topic, event.payload)
        if payload is None:
            return
        try:
            command = read_command(payload)
        except ProtocolError as exc:
            log.warning("%s: %s", event.topic, exc)
            return
        if command.id <= self._last_command:
            return  # entered already (a redelivery)
        self._last_command = command.id  # asked once: a retry is the host's to make
        if self._post is not None:
            self._post(HostUndo(command.id, command.round_index))

    def _compose(self) -> None:
        """The whole state from the small one and its parts, once they are all here."""
        core = self._core
        if core is None:
            return
        problem = parts_version_problem(core)
        if problem is not None:
            if not self._parts_warned:
                self._parts_warned = True
                log.warning("%s: %s", self.topics.state(), problem)
            return
        at = position_of(core)
        for part, pos in parts_named(core).items():
            if part not in self._parts:
                return  # the part this state goes with has not come yet
            held = self._part_at.get(part)
            if at is not None and held is not None \
                    and is_older(NightPosition(at.epoch, pos), held):
                return  # nor has its version this state goes with
        state = merge_state(core, self._parts)
        if state != self.state:
            self.state = state
            self._save_state(state)
        self._sync()

    def _resume_state(self, state: dict[str, Any] | None) -> None:
        """The whole state kept beside the outbox, as if just heard (after a reboot)."""
        if state is None:
            return
        self.state = self._core = state
        at = self._state_at = position_of(state)
        for part, pos in parts_named(state).items():
            keys = STATE_PARTS[part]
            if all(k in state for k in keys):
                self._parts[part] = {k: state[k] for k in keys}
                if at is not None:
                    self._part_at[part] = NightPosition(at.epoch, pos)

    def _load_state(self) -> dict[str, Any] | None:
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("%s: unreadable, ignored (%s)", self.state_path, exc)
            return None
        return state if isinstance(state, dict) else None

    def _save_state(self, state: dict[str, Any]) -> None:
        """Keep the head's latest state beside the outbox (written whole, then renamed)."""
        try:
            fd, tmp = tempfile.mkstemp(dir=self.state_path.parent,
                                       prefix=f".{self.state_path.name}.")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(state, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.state_path)
        except OSError as exc:
            log.warning("%s: cannot keep the head's state (%s)", self.state_path, exc)

    def _count_pending(self) -> None:
        assert self.sender is not None
        self._pending = self.sender.pending_count

    # --- state -> node events --------------------------------------------------------------

    def _sync(self) -> None:
        s, post = self.state, self._post
        if s is None or post is None:
            return
        phase = s.get("phase")
        if phase in PLAYING_PHASES:
            self._playing(s, post)
            return
        if phase == "results":
            self._results(s, post)
        elif phase == "break":
            self._show(("break", s.get("round_index")), post, BreakStart("break"))
        elif phase == "prizes":
            self._show(("prizes",), post, BreakStart("prizes"))
        elif phase == "ended":
            prizes = tuple((str(p.get("name")), str(p.get("winner")))
                           for p in (self.view or {}).get("prizes", []))
            self._show(("ended", prizes), post, NightEnd(prizes))
        elif phase == "ready":
            seats = self._seat_names(s)
            message = f"set {s.get('set')} round {s.get('round')}: soon"
            if seats is None:
                message = "no seats at this table"
            self._show(("ready", s.get("round_index"), seats), post, Waiting(seats, message))
        else:
            online = s.get("online", [])
            message = "checked in: waiting" if self.table in online else "waiting for the head"
            self._show(("lobby", message), post, Waiting(None, message))

    def _show(self, key: object, post: Post, event: object) -> None:
        if key != self._shown:
            self._shown = key
            post(event)

    def _seat_names(self, s: dict[str, Any]) -> tuple[str, str, str, str] | None:
        seats = seats_at(s, self.table)
        if seats is None:
            return None
        names = {p["id"]: p["name"] for p in s.get("players", [])}
        return tuple(names.get(p, p) for p in seats)  # type: ignore[return-value]

    def _rules_of(self, s: dict[str, Any]) -> HouseRules | None:
        text = s.get("rules_toml")
        if not isinstance(text, str):
            log.warning("%s: the state carries no rules_toml", self.topics.state())
            return None
        if self._rules is None or self._rules[0] != text:
            try:
                self._rules = (text, parse_rules(text, "the head's rules"))
            except UserError as exc:
                log.warning("%s: %s", self.topics.state(), exc)
                return None
        return self._rules[1]

    def _playing(self, s: dict[str, Any], post: Post) -> None:
        index = s.get("round_index")
        if index != self.round_index:
            if not self._ready:
                return  # waiting for the retained ack (a fresh outbox on a night under way)
            start = self._round_start(s)
            if start is None:
                return
            self.round_index = index
            self._shown = ("playing", index)
            self._refusal_shown = None  # a refusal is news of the round it came in
            post(start)
        if s.get("bell") and self._bell_posted != index:
            self._bell_posted = index
            post(BellRang())

    def _round_start(self, s: dict[str, Any]) -> RoundStart | None:
        rules = self._rules_of(s)
        held = seats_at(s, self.table)
        if rules is None or held is None:
            return None
        seats = tuple(held)
        players = {p["id"]: p for p in s.get("players", [])}
        ghosts = frozenset(p for p in seats if players.get(p, {}).get("ghost"))
        index = s["round_index"]
        return RoundStart(
            int(s.get("set", 1)), int(s.get("round", 1)), int(s["target"]),
            seats,  # type: ignore[arg-type]
            can_end_round=self.table == 1 or rules.round.ends_at == "any-table",
            round_index=index, rules=rules, ghosts=ghosts,
            names=tuple((pid, str(p.get("name", pid))) for pid, p in players.items()),
            replay=tuple(self._stored(index)),
        )

    def _stored(self, index: int) -> list[JsonEntry]:
        """This round's entries already in the outbox (after a restart), in seq order."""
        assert self.outbox is not None
        out = []
        for item in self.outbox.entries():
            if item.payload.get("round") != index:
                continue
            try:
                out.append(json_entry(decode_entry(item.payload.get("entry"))))
            except ProtocolError as exc:
                log.warning("outbox %s seq %d: %s", self.outbox_path, item.seq, exc)
        return out

    def _results(self, s: dict[str, Any], post: Post) -> None:
        view = self.view or {}
        result = view.get("result")
        if view.get("round_index") != s.get("round_index") or not isinstance(result, dict):
            return  # the view for this round's end has not come yet
        seats = list(view.get("seats", []))
        winners, losers = list(result.get("winners", [])), list(result.get("losers", []))
        score = tuple(result.get("score", (0, 0)))[:2]
        headline = ""
        rules = self._rules_of(s)
        if rules is not None and not rules.team_play:
            headline = f"{' & '.join(losers)} move{'s' if len(losers) == 1 else ''}"
        moves = tuple(f"{m.get('name')} -> T{m.get('to_table')} S{m.get('to_seat')}"
                      for m in view.get("moves", []))
        event = RoundResults(moves or ("stay seated",), score=score,  # type: ignore[arg-type]
                             won=bool(seats) and seats[0] in winners, headline=headline)
        self._show(("results", s.get("round_index"), json.dumps(result), moves), post, event)
