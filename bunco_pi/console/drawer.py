"""The console's snapshots drawn on a thread of their own, so the head's thread never waits for
one.

At 500 tables a snapshot that must look at every row again (the round closed, the fuzzy die
moved and the prizes as they would fall are settled again among hundreds of tied players)
costs tens of milliseconds of an idle machine and several times that of a busy one. Drawn on
the head's thread, a bell that arrived meanwhile waited for it. So the head's thread only
hands over what the snapshot is made from (the night is immutable; the rest is copied), and
this thread draws the newest of those: one still waiting when a newer comes is dropped, as a
phone would have been shown the newer one at once anyway. The drawing's own state (the
``Memo`` of the last rows, the ``Wire`` that makes patches) is touched by this thread alone.

Python runs one thread at a time, but hands over every few milliseconds to a thread that waits
(``sys.getswitchinterval``), so a bell waits that long for a drawing, not the whole drawing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger("bunco_pi.console")

T = TypeVar("T")


class LatestDrawer(Generic[T]):
    """``submit(inputs)`` from any thread; ``draw(inputs)`` runs on this drawer's thread for
    the newest inputs submitted, in the order they were submitted, each at most once."""

    def __init__(self, draw: Callable[[T], None], name: str = "console-draw") -> None:
        self._draw = draw
        self._ready = threading.Condition()
        self._waiting: list[T] = []  # the newest inputs not drawn yet: none or one
        self._busy = False
        self._stopped = False
        self.dropped = 0  # inputs a newer one replaced before they were drawn
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, inputs: T) -> None:
        with self._ready:
            if self._stopped:
                return
            if self._waiting:
                self.dropped += 1
            self._waiting[:] = [inputs]
            self._ready.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted so far is drawn; False if ``timeout`` ran out."""
        with self._ready:
            return self._ready.wait_for(lambda: not self._waiting and not self._busy, timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Draw what is waiting, then end the thread."""
        with self._ready:
            self._stopped = True
            self._ready.notify_all()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._waiting or self._stopped)
                if not self._waiting:
                    return  # stopped, and nothing left to draw
                inputs = self._waiting.pop()
                self._busy = True
            try:
                self._draw(inputs)
            except Exception:  # a drawing that fails must not end the drawing: log it whole
                log.exception("console: the snapshot could not be drawn")
            finally:
                with self._ready:
                    self._busy = False
                    self._ready.notify_all()
