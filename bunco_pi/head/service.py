"""``bunco-pi head``: the coordinator's imperative shell.

One owner thread takes everything from one queue (the link's inbox: MQTT messages from paho's
thread, and bell presses from gpiozero's thread), and carries out the coordinator's effects in
order: a ``Commit`` goes to the SQLite event log (WAL, synchronous=FULL) before anything that
follows it is published or sounded. Table events are committed and acknowledged by
``HeadIngest`` before the coordinator sees them. On start, the log is replayed and the night
resumes exactly where it stood.
"""

from __future__ import annotations

import gc
import logging
import queue
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.hardware.bell import BellHeld, BellPressed
from bunco_pi.head.coordinator import (
    Buzz,
    Commit,
    Coordinator,
    Effect,
    Note,
    PublishState,
    PublishView,
    Refused,
    RestoreError,
)
from bunco_pi.head.eventlog import OWN_SOURCE, EventLog, LoggedEvent
from bunco_pi.head.groups import TableGroup, down_lines
from bunco_pi.head.ingest import HeadIngest
from bunco_pi.head.intake_watch import IntakeWatch
from bunco_pi.head.records import RecordWriter
from bunco_pi.net import envelope
from bunco_pi.net.delivery import HEAD_NAME
from bunco_pi.net.link import Connected, Disconnected, Link, Message
from bunco_pi.net.topics import TopicError, Topics, parse_topic
from bunco_pi.protocol import (
    NightPosition,
    TableEvent,
    UndoCommand,
    command_payload,
    part_kind,
    read_heartbeat,
    read_table_event,
    split_state,
)
from bunco_pi.rules.night import ENDED, RESULTS, Player

log = logging.getLogger("bunco_pi.head")

ROUND_START_GUARD = 3.0  # seconds after a round starts in which the bell cannot end it


def records_from(events: Iterable[LoggedEvent]) -> Iterator[dict[str, Any]]:
    """The coordinator's records, from the event log in log order."""
    for ev in events:
        if ev.table == OWN_SOURCE:
            yield ev.payload
        else:
            yield {"kind": "table", "table": ev.table, "seq": ev.seq,
                   "round": ev.payload["round"], "entry": ev.payload["entry"]}


def news_first(effects: list[Effect]) -> tuple[list[Effect], list[Effect]]:
    """A batch's effects split in two, each in its order: first the log's records and the
    night's news (the state: the bell, a round's end), then the tables' views. At a big
    night a batch holds entries from hundreds of tables: the bell's state used to wait
    behind every one of their acks and views on the head's one connection to the broker.
    Everything published is a function of the log once the batch is committed, so the
    order among them is free; only the records must come before what they announce."""
    views = [e for e in effects if isinstance(e, PublishView)]
    return [e for e in effects if not isinstance(e, PublishView)], views


def _check_table_payload(event: Any) -> TableEvent:
    """HeadIngest's protocol check: a payload that can never be applied is refused at the
    door; one that can is decoded here, once."""
    return read_table_event(event.table, event.seq, event.payload)


@dataclass(frozen=True)
class UndoRequested:
    """Put on the head's inbox by another thread (the host's console): ``request_undo(table)``
    on the head's own thread."""

    table: int


@dataclass(frozen=True)
class ClockRequested:
    """Put on the head's inbox by another thread: pause (or resume) a timed round's clock or
    the move break's."""

    pause: bool


@dataclass(frozen=True)
class HeadTask:
    """Work another thread (the web console) hands to the owner thread: ``work(service)`` runs
    there, between two batches, and its result or exception settles ``done``."""

    work: Callable[[HeadService], Any]
    done: Future = field(default_factory=Future)

    def perform(self, service: HeadService) -> None:
        if not self.done.set_running_or_notify_cancel():
            return
        try:
            self.done.set_result(self.work(service))
        except Exception as exc:  # the caller decides what a refusal means; the loop goes on
            self.done.set_exception(exc)


@dataclass
class HostAutomation:
    """A simulated host for demos: presses the bell once a phase has lasted ``delay`` seconds;
    with ``hold_after``, holds it once a round has waited that long for tables that are all
    offline (their boxes died)."""

    delay: float
    phases: tuple[str, ...] = ("lobby", "ready", "results", "break")
    hold_after: float | None = None


@dataclass
class HeadService:
    coordinator: Coordinator
    link: Link
    eventlog: EventLog
    topics: Topics
    players: Sequence[Player]
    record_path: str | None = None
    # The night's news (the state that carries the bell, and its parts) on a connection of
    # its own, which reads nothing: paho's thread for ``link`` reads as many packets as the
    # head has messages in flight before it writes any, so at 500 tables the bell waited
    # behind hundreds of heartbeats and events read in Python. While it is not connected
    # (starting, or a broker set up before it had a login) ``link`` says the news: a table
    # takes a state by its position, whichever connection brought it first.
    news: Link | None = None
    buzz: Callable[[str], None] | None = None
    host: HostAutomation | None = None
    clock: Callable[[], float] = time.monotonic
    on_effects: Callable[[list[Effect]], None] | None = None
    after_step: Callable[[], None] | None = None  # once per batch, e.g. the console's snapshot
    offline: set[str] = field(default_factory=set)
    # [hall] groups: which tables sit on which access point, so a group gone all at once is
    # said as one line (``groups.down_lines``), in the log and on the console
    groups: Sequence[TableGroup] = ()
    tables_seen: set[int] = field(default_factory=set)  # tables online at least once tonight
    _groups_down: frozenset[str] = frozenset()
    records: RecordWriter | None = None  # made from record_path when not given
    _phase_since: float = 0.0
    _phase: str = ""
    _phase_key: str = ""
    _last_bell: float = -1e9
    # The link's counts of QoS 1 messages and of all messages received, and when (this clock)
    # each last moved: what tells the intake watch a head merely behind from a stuck one.
    _link_received: int = 0
    _link_arrived_at: float | None = None
    _link_heard: int = 0
    _link_heard_at: float | None = None
    # The state's parts as last published (the seating's pages, the rules) and the log
    # position then, by kind.
    _parts: dict[str, tuple[dict[str, dict[str, Any]], int]] = field(default_factory=dict)
    # Each table's view as last published: one that has not changed is not said again (the
    # broker retains it), so the bell, which changes no table's view, is one small message.
    _views: dict[int, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ingest = HeadIngest(self.link, self.topics, self.eventlog,
                                 check=_check_table_payload, name=HEAD_NAME,
                                 tables=self.coordinator.table_count)
        self.ingest.defer_acks = True  # the batch's news goes out first (step)
        self.link.subscribe(self.topics.all_status())
        # Notices from the tables' heartbeats when the head stops receiving while they wait.
        self.watch = IntakeWatch(self.clock)
        if self.records is None and self.record_path:
            self.records = RecordWriter(self.record_path)

    # --- life cycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Replay the log (resuming the night), then connect."""
        try:
            effects = self.coordinator.restore(records_from(self.eventlog.replay()))
        except RestoreError as exc:
            raise UserError(f"{self.eventlog.path}: {exc}; keep the file for the record and "
                            "start a new night under another --night name") from None
        self.link.start()
        if self.news is not None:
            self.news.start()
        self.carry_out(effects)
        # A timed round's deadline that passed while the head was down ends the round now.
        self.carry_out(self.coordinator.tick())
        self._note_phase()

    def run(self, stop: Callable[[], bool], tick: Callable[[], None] | None = None) -> None:
        """Serve until ``stop()`` is true."""
        while not stop():
            self.step(timeout=0.2)
            if tick is not None:
                tick()

    def step(self, timeout: float = 0.2) -> int:
        """Handle everything waiting (one commit for a burst); returns how many items."""
        inbox = self.link.inbox
        try:
            batch: list[Any] = [inbox.get(timeout=timeout)]
        except queue.Empty:
            batch = []
        while True:
            try:
                batch.append(inbox.get_nowait())
            except queue.Empty:
                break
        link_events = [e for e in batch if isinstance(e, Message | Connected)]
        received = self.ingest.stats.received
        committed = [logged.decoded for logged in self.ingest.handle_many(link_events)]
        if self.ingest.stats.received != received:
            self.watch.heard_event()
        if committed:  # one batch, one commit: the round may close only after all of it
            news, views = news_first(self.coordinator.accept(committed))
            self.carry_out(news)
            self.ingest.flush_acks()
            self.carry_out(views)
        self.ingest.flush_acks()
        for item in batch:
            if isinstance(item, BellPressed):
                self.press_bell()
            elif isinstance(item, UndoRequested):
                self.request_undo(item.table)
            elif isinstance(item, BellHeld):
                self._close_held_round()
            elif isinstance(item, Message):
                self._status(item)
            elif isinstance(item, Connected):
                self._parts.clear()  # the broker may have lost them: say them again too
                self._views.clear()
                # A fresh snapshot on every connect: a broker restarted from its last autosave
                # holds an older state and older views (the tables ignore those, by position).
                self.carry_out(self.coordinator.announce())
            elif isinstance(item, Disconnected):
                log.warning("head: lost the broker (%s); reconnecting", item.reason)
            elif isinstance(item, HeadTask):
                item.perform(self)
            elif isinstance(item, ClockRequested):
                self.pause_clock() if item.pause else self.resume_clock()
        self.carry_out(self.coordinator.tick())
        self._automate()
        now = self.clock()
        if self.link.received != self._link_received:  # the link took something in meanwhile
            self._link_received, self._link_arrived_at = self.link.received, now
        if self.link.heard != self._link_heard:
            self._link_heard, self._link_heard_at = self.link.heard, now
        verdict = self.watch.check(self._link_arrived_at, self._link_heard_at)
        if verdict is not None:
            log.warning("%s", verdict.line)
            if verdict.reconnect:
                self.link.reconnect()
        if self.after_step is not None:
            self.after_step()
        return len(batch)

    # --- inputs ---------------------------------------------------------------------------

    def press_bell(self) -> None:
        now = self.clock()
        if now - self._last_bell < 0.5:  # one press, however long the contact chatters
            return
        self._last_bell = now
        night = self.coordinator.night
        if night is None:
            log.info("bell: the night starts; seats drawn")
            self.carry_out(self.coordinator.start_night(self.players))
        elif night.phase == "playing" and self._phase == "playing" \
                and now - self._phase_since < ROUND_START_GUARD:
            # a host who presses twice to start a round must not end it at once
            log.info("bell: ignored, the round started %.1f s ago", now - self._phase_since)
            return
        else:
            self.carry_out(self.coordinator.press_bell())
        self._note_phase()

    def request_undo(self, table: int) -> bool:
        """The host asks table ``table``'s box to undo its latest change, as its undo button
        does; the box enters the Undo into its own stream, so it reaches the log like any
        entry. The request is logged first (its log position is the command's id, so the box
        enters it once). Returns whether the command was sent. On the head's thread; from
        another thread, put ``UndoRequested(table)`` on ``link.inbox``."""
        night = self.coordinator.night
        if not 1 <= table <= self.coordinator.table_count:
            log.warning("undo: there is no table %d tonight (1 to %d)", table,
                        self.coordinator.table_count)
            return False
        if night is None or night.phase not in ("playing", "finishing"):
            log.warning("undo for table %d: no round is being played", table)
            return False
        logged = self.eventlog.append_own(HEAD_NAME, {
            "kind": "command", "command": "undo", "table": table, "round": night.round_index})
        command = UndoCommand(logged[0].position, night.round_index)
        self.link.publish(self.topics.command(table),
                          envelope.message(HEAD_NAME, command_payload(command)), qos=1)
        log.info("undo: asked table %d to undo its latest change (command %d)", table,
                 command.id)
        return True
    def pause_clock(self) -> bool:
        """The host pauses the running clock (announcements); its deadline waits. On the
        head's thread; from another, put ``ClockRequested(pause=True)`` on ``link.inbox``."""
        effects = self.coordinator.pause_clock()
        self.carry_out(effects)
        return any(isinstance(e, Commit) for e in effects)

    def resume_clock(self) -> bool:
        """The host resumes the paused clock; its deadline moves on by the pause's length."""
        effects = self.coordinator.resume_clock()
        self.carry_out(effects)
        return any(isinstance(e, Commit) for e in effects)

    def close_held_round(self) -> None:
        """The host's way out of a round that a dead table holds up: the same input as
        holding the bell button. Safe from any thread (a web console's, gpiozero's): it only
        queues the request for the service's own loop."""
        self.link.inbox.put(BellHeld())  # type: ignore[arg-type]

    def _close_held_round(self) -> None:
        log.info("bell held: closing the round for the tables that have not finished")
        self.carry_out(self.coordinator.close_held_round())
        self._note_phase()

    def _status(self, msg: Message) -> None:
        try:
            ref = parse_topic(msg.topic)
        except TopicError:
            return
        if ref.kind != "status" or ref.night != self.topics.night or not ref.node:
            return
        env = envelope.try_decode(msg.topic, msg.payload, log)
        if env is None:
            return
        node = ref.node
        beat = read_heartbeat(env.payload)
        if beat is not None:  # what a table's outbox holds; its online status is unchanged
            table = int(node[6:]) if node.startswith("table-") and node[6:].isdigit() else 0
            if 1 <= table <= self.coordinator.table_count:
                self.watch.heartbeat(table, beat, self.eventlog.highest(table))
            return
        online = env.payload.get("status") == "online"
        if online:
            if node in self.offline:
                log.info("%s is back online", node)
            self.offline.discard(node)
        else:
            log.warning("%s is OFFLINE", node)
            self.offline.add(node)
        if node.startswith("table-") and node[6:].isdigit():
            if online:
                self.tables_seen.add(int(node[6:]))
            self.carry_out(self.coordinator.table_online(int(node[6:]), online))
            self._note_groups()

    def groups_down(self) -> list[str]:
        """``tables 41-80 offline: access point B?`` for each group gone all at once (of
        those whose boxes had come tonight)."""
        return down_lines(self.groups, self.coordinator.online, self.tables_seen)

    def _note_groups(self) -> None:
        if not self.groups:
            return
        down = frozenset(self.groups_down())
        for line in sorted(down - self._groups_down):
            log.warning("%s", line)
        self._groups_down = down

    def _automate(self) -> None:
        self._note_phase()
        host = self.host
        if host is None:
            return
        if host.hold_after is not None and self._phase in ("playing", "finishing") \
                and self.clock() - self._phase_since >= host.hold_after \
                and self._held_up_by_offline_tables():
            self._phase_since = self.clock()  # one hold per stuck stretch, like a real host
            self.close_held_round()
            return
        if self._phase not in host.phases:
            return
        if self._phase == "lobby" and len(self.coordinator.online) < self.coordinator.table_count:
            return  # a real host waits for every table to come online
        if self.clock() - self._phase_since >= host.delay:
            self.press_bell()
            self._note_phase()

    def _held_up_by_offline_tables(self) -> bool:
        """Every table the round waits for is offline: what a host sees before holding."""
        night = self.coordinator.night
        waiting = [t.setup.table for t in night.tables if not t.done] if night else []
        return bool(waiting) and not set(waiting) & self.coordinator.online

    def _note_phase(self) -> None:
        night = self.coordinator.night
        phase = night.phase if night is not None else "lobby"
        key = f"{phase}:{night.round_index if night else 0}"
        if key != self._phase_key:
            self._phase_key = key
            self._phase = phase
            self._phase_since = self.clock()
            settle_memory()

    # --- effects --------------------------------------------------------------------------

    def carry_out(self, effects: list[Effect]) -> None:
        wrote_record = False
        for effect in effects:
            if isinstance(effect, Commit):
                if effect.records:
                    self.eventlog.append_own(HEAD_NAME, *effect.records)
            elif isinstance(effect, PublishState):
                self._publish_state(effect.state)
                phase = effect.state.get("phase")
                if phase in (RESULTS, ENDED) and not wrote_record:
                    self.record_soon()  # after the results are out, and off this thread
                    wrote_record = True
            elif isinstance(effect, PublishView):
                if self._views.get(effect.table) == effect.view:
                    continue
                self._views[effect.table] = effect.view
                self.link.publish(self.topics.view(effect.table),
                                  envelope.message(HEAD_NAME, self._position().stamp(effect.view)),
                                  retain=True)
            elif isinstance(effect, Buzz):
                if self.buzz is not None:
                    self.buzz(effect.pattern)
            elif isinstance(effect, Refused):
                log.warning("%s", effect.text)  # one line naming the table and the seq
                self.ingest.refuse(effect.table, effect.seq, effect.reason)
            elif isinstance(effect, Note):
                log.info("%s", effect.text)
        if self.on_effects is not None:
            self.on_effects(effects)

    def _publish_state(self, state: dict[str, Any]) -> None:
        """The small state (the bell's message), after any of its parts that changed: the
        state names the position of each part it goes with, so a table uses it only once it
        holds those parts."""
        at = self._position()
        news = self.news if self.news is not None and self.news.connected else self.link
        core, parts = split_state(state)
        refs: dict[str, int] = {}
        # The pages of one part are said together, at one position, whenever any of them
        # changed: the state names one position per part, whichever page a box holds.
        for kind in dict.fromkeys(part_kind(name) for name in parts):
            pages = {name: content for name, content in parts.items()
                     if part_kind(name) == kind}
            held = self._parts.get(kind)
            if held is None or held[0] != pages:
                for name, content in pages.items():
                    news.publish(self.topics.part(name),
                                 envelope.message(HEAD_NAME, at.stamp(content)), retain=True)
                self._parts[kind] = held = (pages, at.pos)
            refs[kind] = held[1]
        core["parts"] = refs
        news.publish(self.topics.state(), envelope.message(HEAD_NAME, at.stamp(core)),
                     retain=True)

    def _position(self) -> NightPosition:
        """Where the night stands: everything published is a function of the log up to here
        (each Commit is carried out before what follows it)."""
        return NightPosition(self.eventlog.epoch, self.eventlog.position)

    def record_soon(self) -> None:
        """Have the night record written on its own thread; no table waits for it."""
        night = self.coordinator.night
        if self.records is not None and night is not None:
            self.records.request(night, self.coordinator.log)

    def write_record(self, timeout: float = 60.0) -> None:
        """Write the night record and wait until it is on disk (at exit)."""
        self.record_soon()
        if self.records is not None and not self.records.flush(timeout):
            log.error("%s: the night record was still being written after %.0f s",
                      self.records.path, timeout)


def settle_memory() -> None:
    """Take what the night holds so far out of the cyclic collector's reach (``gc.freeze``),
    at each change of phase. The night's states are immutable and never form cycles, so
    reference counting frees what is dropped, frozen or not; but every full collection
    went through the whole night (some 500,000 objects a set at 500 tables), and the
    console's snapshot, the record and the bell waited 100 ms at a time for it, a cost that
    grew with the square of the tables. The young generations are collected first, so the
    few cycles made since (an exception's traceback) are not kept for good."""
    gc.collect(1)
    gc.freeze()


def make_players(names: Sequence[str] | None, count: int | None, tables: int) -> list[Player]:
    """Players from a roster of names, or ``count`` anonymous ones; ghosts fill the tables."""
    if names is not None:
        players = [Player(f"p{i + 1}", name) for i, name in enumerate(names)]
    else:
        players = [Player(f"p{i + 1}", f"Player {i + 1}") for i in range(count or 0)]
    if len(players) > tables * 4:
        raise ValueError(f"{len(players)} players do not fit at {tables} tables of 4")
    for g in range(tables * 4 - len(players)):
        players.append(Player(f"ghost{g + 1}", f"Ghost {g + 1}", ghost=True))
    return players


def default_entropy() -> random.Random:
    return random.SystemRandom()
