"""The night record, built and written on its own thread so the head's loop never waits.

At 50 tables, round 20, building the record (a replay of the whole log) and writing it took
the head's loop up to 1.6 s at every round end: every table waited that long for its results.
Now the loop hands over a snapshot (the night is immutable, the log is copied) and goes on;
this thread builds and writes it. Requests that pile up while one is being written collapse
into the newest, which holds everything the older ones did. The event log, not this file, is
what makes the night durable: a power cut before a record is written loses nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.head.night_log import as_log
from bunco_pi.recordfile import write_record
from bunco_pi.rules.night import Night, NightEvent
from bunco_pi.rules.record import record_items

log = logging.getLogger("bunco_pi.head")

Snapshot = tuple[Night, tuple[NightEvent, ...]]


class RecordWriter:
    """Writes the newest requested record to ``path``, one at a time, off the caller's thread."""

    def __init__(self, path: str, *, source: str = "head",
                 write: Callable[[str, Any], None] = write_record) -> None:
        self.path = path
        self.source = source
        self._write = write
        self._lock = threading.Condition()
        self._pending: Snapshot | None = None
        self._busy = False
        self._closed = False
        self.written = 0
        self._thread = threading.Thread(target=self._run, name="night-record", daemon=True)
        self._thread.start()

    def request(self, night: Night, events: Sequence[NightEvent]) -> None:
        """Write the record of ``night`` (the fold of ``events``) soon; returns at once."""
        snapshot = (night, as_log(events))  # the caller's log keeps growing; this copy does not
        with self._lock:
            self._pending = snapshot
            self._lock.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every requested record is on disk; False if ``timeout`` ran out."""
        with self._lock:
            return self._lock.wait_for(lambda: self._pending is None and not self._busy,
                                       timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Write what is pending, then stop the thread."""
        done = self.flush(timeout)
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._thread.join(timeout)
        return done

    def _run(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._pending is not None or self._closed)
                if self._pending is None:
                    return
                snapshot, self._pending, self._busy = self._pending, None, True
            try:
                # streamed: a 500-table night's record never stands whole in memory
                self._write(self.path, record_items(*snapshot, source=self.source))
                self.written += 1
            except UserError as exc:  # a full disk must not stop the night: the log has it all
                log.error("%s (the event log still holds the whole night)", exc)
            except Exception:  # a bug here must not silently stop every later record
                log.exception("%s: the night record could not be written", self.path)
            finally:
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()
