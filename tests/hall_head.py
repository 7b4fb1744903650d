"""A head of a hall (500 tables, 2,000 names) serving its console, for the hall's browser test
and benchmarks/bench_console_hall.py.

The real head service on its own owner thread (in-process link, real SQLite event log) and the
real console server on loopback. The tables are not 500 processes: their entries and their
presence reach the head's thread as the head's ingest hands them on (committed to the event
log, then accepted), through a ``HeadTask`` on its one queue, as the console's host does.
"""

from __future__ import annotations

import random
import socket
import threading
from pathlib import Path
from typing import Any

from bunco_pi.console.auth import hash_password
from bunco_pi.console.desk import ConsoleBridge
from bunco_pi.console.server import ConsoleServer
from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog, IncomingEvent
from bunco_pi.head.groups import TableGroup
from bunco_pi.head.service import HEAD_NAME, HeadService, HeadTask, make_players
from bunco_pi.net.inproc import InprocBroker, InprocLink
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.protocol import TableEvent, encode_entry
from bunco_pi.rules.house import preset, preset_text

PASSWORD = "hall of tables"
# accents, case and a full-width name: what "find my table" must see through
FIRST_NAMES = ["Zoë", "Chloé", "Renée", "Ana", "Bea", "Cat", "Dot", "Eve", "Fay", "Gus", "Hal",
               "Ida", "Jo", "Kim", "Lou", "Max", "Ned", "Oda", "Pia", "Quin"]
LAST_NAMES = ["Lefèvre", "Núñez", "Straße", "O'Brien", "Smith", "Dubois", "Ngô", "Kowalski",
              "Søren", "Lee", "Martin", "Ito", "Costa", "Meyer", "Silva", "Brown", "Rossi",
              "Nagy", "Popescu", "Ward", "Hill", "Park", "Khan", "Moreau", "Young"]


def hall_names(count: int) -> list[str]:
    """``count`` different names (first and last, then a number after 500)."""
    names = []
    for i in range(count):
        first = FIRST_NAMES[i % len(FIRST_NAMES)]
        last = LAST_NAMES[(i // len(FIRST_NAMES)) % len(LAST_NAMES)]
        names.append(f"{first} {last}" + (f" {i // 500 + 1}" if i >= 500 else ""))
    return names


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hall:
    def __init__(self, tmp: Path, tables: int = 500, players: int = 2000,
                 groups: list[dict[str, Any]] | None = None) -> None:
        self.tmp, self.tables = tmp, tables
        self.names = hall_names(players)
        self.server = ConsoleServer("127.0.0.1", free_port(), password_hash=hash_password(PASSWORD))
        self.groups = groups
        self.service: HeadService | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._owner, daemon=True)
        self.seqs = dict.fromkeys(range(1, tables + 1), 0)
        self.base = f"http://127.0.0.1:{self.server.port}"

    def _owner(self) -> None:  # the head's one owner thread, as `bunco-pi head` runs it
        topics = Topics("hall")
        link = InprocLink(InprocBroker(), HEAD_NAME, status_topic=topics.status(HEAD_NAME))
        coordinator = Coordinator(preset("classic"), preset_text("classic"), "hall",
                                  self.tables, entropy=random.Random(5))
        self.log = EventLog(self.tmp / "hall.sqlite")
        service = HeadService(coordinator, link, self.log, topics,
                              make_players(self.names, None, self.tables))
        if self.groups is not None:  # the head config's [hall] groups
            service.groups = tuple(TableGroup(g["name"], tuple(g["tables"])) for g in self.groups)
        self.server.bridge = ConsoleBridge(service, self.server.publish,
                                           url="http://bunco-head.local:8080/", background=True)
        self.service = service
        service.start()
        self._ready.set()
        try:
            service.run(self._stop.is_set)
        finally:
            self.server.bridge.close()
            self.log.close()

    def start(self) -> Hall:
        self.server.start()
        self._thread.start()
        self._ready.wait(20)
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.server.stop()

    def do(self, work) -> Any:
        """``work(service)`` on the head's owner thread; its result."""
        assert self.service is not None
        task = HeadTask(work)
        self.service.link.inbox.put(task)
        return task.done.result(30)

    def online(self, tables: list[int], online: bool = True) -> None:
        def mark(s: HeadService) -> None:
            for t in tables:
                if online:
                    s.tables_seen.add(t)  # as a box's birth message does
                s.carry_out(s.coordinator.table_online(t, online))

        self.do(mark)

    def start_night(self) -> None:
        self.do(lambda s: s.carry_out(s.coordinator.start_night(s.players)))  # the seats
        self.do(lambda s: s.carry_out(s.coordinator.press_bell()))  # round 1

    def where(self, name: str) -> int:
        """The table ``name`` sits at this round, as the head's night says."""
        def work(service: HeadService) -> int:
            night = service.coordinator.night
            pid = next(p.id for p in night.players if p.name == name)
            return next(i + 1 for i, seats in enumerate(night.seating) if pid in seats)
        return self.do(work)

    def enter(self, table: int, *entries: Any) -> None:
        """A table's entries, committed and accepted as the head's ingest does."""
        def work(service: HeadService) -> None:
            index = service.coordinator.night.round_index
            events = []
            for entry in entries:
                self.seqs[table] += 1
                events.append(TableEvent(table, self.seqs[table], index, entry))
            self.log.commit([IncomingEvent(e.table, e.seq, table_node(e.table),
                                           {"round": e.round_index, "entry": encode_entry(e.entry)})
                             for e in events])
            service.carry_out(service.coordinator.accept(events))
        self.do(work)
