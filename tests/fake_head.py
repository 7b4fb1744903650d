"""A head table for table tests: the real Coordinator, EventLog and HeadIngest on a thread of
their own, publishing the state and views the way the head's service does."""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from bunco_pi.head.coordinator import Commit, Coordinator, PublishState, PublishView
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.ingest import HeadIngest
from bunco_pi.net import envelope
from bunco_pi.net.link import Link, Sink
from bunco_pi.net.topics import Topics
from bunco_pi.protocol import TableEvent, read_table_event
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.night import Player


class FakeHead:
    """``call(fn)`` runs ``fn(head)`` on the head's thread and returns what it returns."""

    def __init__(self, connect: Callable[[Sink], Link], topics: Topics, log_path: Any, *,
                 tables: int, rules: str = "classic", seed: int = 1) -> None:
        self.topics = topics
        self.queue: queue.Queue[Any] = queue.Queue()
        self.link = connect(self.queue.put)
        self.coord = Coordinator(preset(rules), preset_text(rules), topics.night, tables,
                                 entropy=random.Random(seed))
        self.log_path = log_path
        self.notes: list[str] = []
        self.applied: list[TableEvent] = []
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-head", daemon=True)
        self._thread.start()
        assert self._ready.wait(5), "the head did not start"

    # --- the test thread ---------------------------------------------------------------------

    def call(self, fn: Callable[[FakeHead], Any], timeout: float = 5.0) -> Any:
        box: dict[str, Any] = {}
        done = threading.Event()

        def job() -> None:
            try:
                box["value"] = fn(self)
            except Exception as exc:  # handed back to the caller
                box["error"] = exc
            done.set()

        self.queue.put(job)
        assert done.wait(timeout), "the head did not answer"
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def start_night(self, players: list[Player], seating: list[tuple[str, ...]] | None = None
                    ) -> None:
        self.call(lambda h: h.carry_out(h.coord.start_night(players, seating)))

    def bell(self) -> None:
        self.call(lambda h: h.carry_out(h.coord.press_bell()))

    def night(self) -> Any:
        return self.call(lambda h: h.coord.night)

    def wait_until(self, test: Callable[[Any], bool], timeout: float = 10.0) -> Any:
        """Poll the head's night until ``test(night)``; bounded."""
        deadline = time.monotonic() + timeout
        while True:
            night = self.night()
            if night is not None and test(night):
                return night
            if time.monotonic() > deadline:
                raise AssertionError(f"the head never got there; night is {night!r}")
            time.sleep(0.02)

    def close(self) -> None:
        self._stop.set()
        self.queue.put(None)
        self._thread.join(5)

    # --- the head's thread -------------------------------------------------------------------

    def carry_out(self, effects: list[Any]) -> None:
        for effect in effects:
            if isinstance(effect, Commit):
                self.log.append_own("head", *effect.records)
            elif isinstance(effect, PublishState):
                self.link.publish(self.topics.state(), envelope.message("head", effect.state),
                                  retain=True)
            elif isinstance(effect, PublishView):
                self.link.publish(self.topics.view(effect.table),
                                  envelope.message("head", effect.view), retain=True)
            else:
                self.notes.append(repr(effect))

    def _run(self) -> None:
        self.log = EventLog(self.log_path)
        self.ingest = HeadIngest(self.link, self.topics, self.log,
                                 check=lambda ev: read_table_event(ev.table, ev.seq, ev.payload))
        self.link.start()
        self.link.wait_subscribed(5)
        self._ready.set()
        try:
            while not self._stop.is_set():
                item = self.queue.get()
                batch = [item]
                while not self.queue.empty():
                    batch.append(self.queue.get_nowait())
                records = []
                for item in batch:
                    if callable(item):
                        self._records(records)
                        records = []
                        item()
                    elif item is not None:
                        records.append(item)
                self._records(records)
        finally:
            self.link.stop()
            self.log.close()

    def _records(self, records: list[Any]) -> None:
        if not records:
            return
        batch = [ev.decoded for ev in self.ingest.handle_many(records)]
        self.applied.extend(batch)
        if batch:
            self.carry_out(self.coord.accept(batch))
