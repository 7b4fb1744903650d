"""The console's link to the head: snapshots out, the host's requests in.

``ConsoleBridge(service, publish)`` hooks the head's effects: after each change the owner
thread has the snapshot built (pure) and the server handed an immutable JSON string; at the
head on a thread of its own (``background``, ``console/drawer.py``), so the bell never waits
for a drawing. The host's requests travel the other way as ``HeadTask`` items on the head's
one queue, so only the owner thread ever touches the night. The head also keeps each finished
night for the season here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from bunco_pi.console.drawer import LatestDrawer
from bunco_pi.console.roster_file import load_roster, save_roster
from bunco_pi.console.snapshot import Memo, console_snapshot
from bunco_pi.console.wire import Wire
from bunco_pi.head.coordinator import Effect, PublishState
from bunco_pi.head.groups import TableGroup
from bunco_pi.head.service import HeadService, HeadTask, make_players
from bunco_pi.recordfile import write_record
from bunco_pi.rules.names import BadName, check_names, clean_name, name_key
from bunco_pi.rules.night import ENDED, FINISHING, PLAYING, Arrive, EndNight, Leave, Night
from bunco_pi.rules.table_round import RuleViolation
from bunco_pi.season import remember_players

log = logging.getLogger("bunco_pi.console")

# Scores change many times a second in a hall of 500 tables. A snapshot costs the head's thread
# what changed since the last (``Memo``, ``Wire``: about a millisecond for a score at 500
# tables here, where drawing it whole cost 190 ms), and the phones get only the changed rows;
# still, a score shows within this many seconds, so a burst of entries is drawn once, while
# the state's news (a round, the bell, the results) and the host's own actions show at once.
SNAPSHOT_EVERY = 0.5


class SnapshotInputs(NamedTuple):
    """What a console snapshot is made from, handed from the head's thread to the drawer."""

    night: Night | None
    name: str
    table_count: int
    online: frozenset[int]
    roster: list[dict[str, Any]]
    url: str
    now: float
    groups: Sequence[TableGroup]
    seen: frozenset[int]


class Refused(Exception):
    """A host request the night cannot take now; its text is shown to the host as it is."""


class ConsoleBridge:
    def __init__(self, service: HeadService, publish: Callable[[str, str | None], None], *,
                 url: str = "", season_dir: str | Path | None = None,
                 today: Callable[[], str] = lambda: time.strftime("%Y-%m-%d"),
                 clock: Callable[[], float] = time.monotonic,
                 every: float = SNAPSHOT_EVERY, roster_file: Path | None = None,
                 background: bool = False) -> None:
        self.service = service
        self.publish = publish
        self.url = url
        self.season_dir = Path(season_dir) if season_dir else None
        self.today = today
        # the roster before the night: owner thread only
        self.roster: list[dict[str, Any]] = [{"name": p.name, "here": True}
                                             for p in service.players if not p.ghost]
        self.roster_file = roster_file
        self._restore_roster()
        self.clock = clock
        self.every = every
        self._dirty = True
        self._urgent = True
        self._published_at = float("-inf")
        self._memo = Memo()
        self._wire = Wire()
        # background: drawn on a thread of its own (the head); else here, when asked (tests)
        self._drawer: LatestDrawer[SnapshotInputs] | None = \
            LatestDrawer(self._draw) if background else None
        self._chained = service.on_effects
        service.on_effects = self._after
        service.after_step = self.publish_if_changed

    # --- owner thread ------------------------------------------------------------------------

    def _restore_roster(self) -> None:
        # The roster typed before a restart, as long as the night has not started (after
        # that the event log has the seating); names that no longer fit are logged and left.
        if self.roster_file is None or self.service.coordinator.night is not None:
            return
        rows = load_roster(self.roster_file)
        if rows is None:
            return
        try:
            # the file is on the head's disk, but it may be hand-edited or older than the
            # names rule: it goes through the same door as a roster typed in the console
            names = check_names([r["name"] for r in rows])
            players = make_players([n for n, r in zip(names, rows, strict=True) if r["here"]],
                                   None, self.service.coordinator.table_count)
        except ValueError as exc:  # BadName is a ValueError
            log.warning("%s: kept roster not used: %s", self.roster_file, exc)
            return
        if any(not p.ghost for p in self.service.players):
            log.info("%s: the roster kept before the restart replaces the configured one",
                     self.roster_file)
        self.service.players = players
        self.roster = [{**r, "name": n} for n, r in zip(names, rows, strict=True)]

    def keep_roster(self, rows: list[dict[str, Any]]) -> None:
        if self.roster_file is not None:
            save_roster(self.roster_file, rows)

    def _inputs(self) -> SnapshotInputs:
        # What a snapshot is made from, as it stands now: the night is immutable, the roster
        # is replaced (never changed in place), the sets are copied.
        c = self.service.coordinator
        return SnapshotInputs(c.night, c.name, c.table_count, frozenset(c.online), self.roster,
                              self.url, c.wall(), self.service.groups,
                              frozenset(self.service.tables_seen))

    def _draw(self, inputs: SnapshotInputs) -> None:
        # the drawer's thread when there is one, else the owner thread: never both
        snap = console_snapshot(inputs.night, name=inputs.name, table_count=inputs.table_count,
                                online=set(inputs.online), roster=inputs.roster,
                                console_url=inputs.url, now=inputs.now, groups=inputs.groups,
                                seen=inputs.seen, memo=self._memo)
        self.publish(*self._wire.encode(snap))

    def close(self) -> None:
        """Draw what is waiting and end the drawer's thread (with ``background``)."""
        if self._drawer is not None:
            self._drawer.stop()

    def _after(self, effects: list[Effect]) -> None:
        if self._chained is not None:
            self._chained(effects)
        self._dirty = True  # drawn once per batch of the head's loop, however many changes
        states = [e.state for e in effects if isinstance(e, PublishState)]
        if states:
            self._urgent = True  # the state's news is drawn at once
        if any(state.get("phase") == ENDED for state in states):
            self.keep_night()

    def publish_if_changed(self) -> None:
        """After each batch of the head's loop: a changed night is drawn at once when its state
        changed or the host acted, else at most once every ``every`` seconds (the loop comes
        back within its step's timeout, so a last change is not left unshown)."""
        if not self._dirty:
            return
        now = self.clock()
        if not self._urgent and now - self._published_at < self.every:
            return
        self._dirty = self._urgent = False
        self._published_at = now
        if self._drawer is not None:
            self._drawer.submit(self._inputs())
        else:
            self._draw(self._inputs())

    def keep_night(self) -> Path | None:
        """The finished night's record into the season folder, once per night name."""
        if self.season_dir is None:
            return None
        record = self.service.coordinator.record(source="head")
        if record is None or not record["complete"]:
            return None
        name = self.service.coordinator.name
        if any(self.season_dir.glob(f"*-{name}.json")):
            return None
        path = self.season_dir / f"{self.today()}-{name}.json"
        try:
            self.season_dir.mkdir(parents=True, exist_ok=True)
            write_record(str(path), record)
        except Exception as exc:  # a full disk must not stop the night: the log has it all
            log.error("cannot keep the night for the season: %s", exc)
            return None
        try:
            # Tonight's cards under their season players from now on: a later rename or a
            # player met under the same name never moves them.
            remember_players(self.season_dir)
        except Exception as exc:  # the season places them again when it is next read
            log.error("cannot keep the season's players: %s", exc)
        return path

    # --- any thread ------------------------------------------------------------------------

    def task(self, work: Callable[[HeadService], Any]) -> HeadTask:
        """Queue ``work`` for the owner thread; await or wait on ``.done``."""
        def acted(service: HeadService) -> Any:
            self._urgent = True  # the host who pressed it watches for the change
            return work(service)

        task = HeadTask(acted)
        self.service.link.inbox.put(task)
        return task



# --- the host's requests: each runs on the owner thread -----------------------------------------


def _night(service: HeadService):
    night = service.coordinator.night
    if night is None:
        raise Refused("the night has not started")
    return night


def _host_event(service: HeadService, event: Any) -> str:
    try:
        service.carry_out(service.coordinator.host_event(event))
    except RuleViolation as exc:
        raise Refused(str(exc)) from None
    return "done"


def set_roster(bridge: ConsoleBridge, entries: Sequence[dict[str, Any]]) -> Callable[[HeadService], str]:
    rows = []
    first: dict[str, int] = {}
    for i, e in enumerate(entries, start=1):
        raw = e.get("name", "") if isinstance(e, dict) else ""
        try:
            name = clean_name(raw if isinstance(raw, str) else "")
        except BadName as exc:
            raise Refused(f"roster line {i}: {exc}") from None
        if name_key(name) in first:
            raise Refused(f"roster line {i}: '{name}' is on the roster twice "
                          f"(line {first[name_key(name)]} too)")
        first[name_key(name)] = i
        rows.append({"name": name, "here": bool(e.get("here", True))})

    def work(service: HeadService) -> str:
        if service.coordinator.night is not None:
            raise Refused("the night has started: seat late arrivals in a ghost's seat instead")
        try:
            players = make_players([r["name"] for r in rows if r["here"]], None,
                                   service.coordinator.table_count)
        except ValueError as exc:
            raise Refused(str(exc)) from None
        try:
            bridge.keep_roster(rows)
        except OSError as exc:
            raise Refused(f"cannot keep the roster on the head's disk: {exc.strerror}") from None
        service.players = players
        bridge.roster = rows
        bridge._after([])  # the roster is not the night's: say it changed
        here = sum(r["here"] for r in rows)
        return f"{here} checked in, {len(players) - here} ghosts"
    return work


def start_night(service: HeadService) -> str:
    if service.coordinator.night is not None:
        raise Refused("the night has already started")
    service.press_bell()
    return "the night has started: seats drawn"


def ring_bell(service: HeadService) -> str:
    _night(service)
    before = service.coordinator.night
    service.press_bell()
    if service.coordinator.night is before:
        raise Refused("the bell did nothing (a round that has just started cannot end yet)")
    return "bell rung"


def arrive(ghost: str, name: str) -> Callable[[HeadService], str]:
    try:
        name = clean_name(name)
    except BadName as exc:
        raise Refused(f"the late arrival's name: {exc}") from None

    def work(service: HeadService) -> str:
        night = _night(service)
        same = next((p for p in night.players
                     if not p.ghost and name_key(p.name) == name_key(name)), None)
        if same is not None:
            raise Refused(f"'{same.name}' is already playing tonight: give the late arrival "
                          "a name the tables can tell apart")
        _host_event(service, Arrive(ghost, name))
        return f"{name} takes the seat"
    return work


def leave(player: str) -> Callable[[HeadService], str]:
    def work(service: HeadService) -> str:
        _night(service)
        _host_event(service, Leave(player))
        return "a ghost takes her seat"
    return work


def end_night(service: HeadService) -> str:
    night = _night(service)
    if night.phase in (PLAYING, FINISHING):
        raise Refused("a round is being played: ring the bell and let it close first")
    if night.phase == ENDED:
        raise Refused("the night has already ended")
    _host_event(service, EndNight())
    return "the night has ended: prizes settled"


def undo_last(table: int) -> Callable[[HeadService], str]:
    def work(service: HeadService) -> str:
        if not 1 <= table <= service.coordinator.table_count:
            raise Refused(f"there is no table {table}")
        if not service.request_undo(table):
            raise Refused(f"table {table} is not playing a round: nothing to undo")
        return f"table {table}: undo asked"
    return work


def pause_clock(service: HeadService) -> str:
    _night(service)
    if not service.pause_clock():
        raise Refused("no clock is running: a timed round or a move break pauses")
    return "the clock is paused: resume it when the announcements are over"


def resume_clock(service: HeadService) -> str:
    _night(service)
    if not service.resume_clock():
        raise Refused("the clock is not paused")
    return "the clock runs again"


def close_held_round(service: HeadService) -> str:
    night = _night(service)
    if night.phase not in (PLAYING, FINISHING):
        raise Refused("no round is being played")
    if night.all_tables_done:
        raise Refused("every table has finished: the round closes by itself")
    service.close_held_round()
    return "round closed"


def night_record(service: HeadService) -> dict[str, Any]:
    record = service.coordinator.record(source="head")
    if record is None:
        raise Refused("the night has not started")
    return record
