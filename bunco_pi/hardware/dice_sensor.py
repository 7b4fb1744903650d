"""Reads a serial dice sensor on its own thread and hands each event to one place.

The reader owns the port: it opens it (a ``/dev/tty*`` path, a ``/dev/serial/by-id/...``
link, a pty, or any pyserial URL such as ``loop://``), cuts the bytes into lines, parses
them (:mod:`bunco_pi.hardware.dice_wire`; once the sensor has spoken protocol 2, protocol 1
lines are refused until the port is reopened), drops repeated rolls, and passes every event to
the ``sink`` the owner gave: a :class:`queue.Queue` or a callable that just enqueues.  No
other state is shared with the owner's thread except :meth:`DiceSensor.stats`, a snapshot
taken under a lock.

When the device goes away (a USB cable pulled, the sensor rebooting) the reader reports
:class:`LinkDown`, then tries to reopen the port with a backoff that doubles from
``MIN_BACKOFF_S`` to at most ``MAX_BACKOFF_S``, and reports :class:`LinkUp` when it is back.

Starting: ``keep_trying=False`` (the default, for ``bunco-pi doctor`` and one-off tools)
opens the port in :meth:`DiceSensor.start` and raises a one-line :class:`UserError` if it
cannot.  ``keep_trying=True`` (for the running table) never fails at start: it reports
:class:`LinkDown` and keeps trying until the sensor is plugged in.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import serial

from bunco_pi.errors import UserError
from bunco_pi.hardware.dice_wire import (
    Hello,
    LineAssembler,
    LineParser,
    Rejected,
    Roll,
    Rolling,
    SensorError,
    SeqFilter,
    Unknown,
)

log = logging.getLogger(__name__)

BAUDRATE = 115200
READ_TIMEOUT_S = 0.1  # how long stop() can wait for a blocked read
MIN_BACKOFF_S = 0.05
MAX_BACKOFF_S = 2.0
JOIN_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class LinkUp:
    """The port is open; lines may arrive."""

    port: str


@dataclass(frozen=True)
class LinkDown:
    """The port is closed or could not be opened; ``reason`` says why, in one line."""

    port: str
    reason: str


SensorEvent = Roll | Rolling | Hello | SensorError | Rejected | LinkUp | LinkDown
Sink = Callable[[SensorEvent], None]
Opener = Callable[[str], serial.SerialBase]


@dataclass(frozen=True)
class SensorStats:
    """Counters since the reader was made: a snapshot, safe to keep."""

    good: int = 0  # valid lines of a known type, repeats excluded
    rolls: int = 0  # new rolls handed to the sink
    duplicates: int = 0  # rolls dropped because their seq was seen
    unknown: int = 0  # valid lines of a type this reader does not know (ignored)
    rejected: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    link_downs: int = 0
    protocol: int | None = None  # what the sensor on the link speaks; None: nothing valid yet

    @property
    def malformed(self) -> int:
        return sum(self.rejected.values())


def open_serial(port: str) -> serial.SerialBase:
    """The default opener: a path or a pyserial URL, 115200 8N1, short read timeout."""
    extra: dict[str, Any] = {} if "://" in port else {"exclusive": True}
    return serial.serial_for_url(port, baudrate=BAUDRATE, timeout=READ_TIMEOUT_S, **extra)


class DiceSensor:
    """A dice sensor on one serial port, read on a daemon thread.

    ``sink`` receives every event, on the reader's thread, in the order they happened:
    :class:`~bunco_pi.hardware.dice_wire.Roll` (new rolls only), ``Rolling``, ``Hello``,
    ``SensorError``, ``Rejected`` (a malformed line: report it, never score it),
    :class:`LinkUp` and :class:`LinkDown`.  Lines of unknown types are counted and dropped.
    ``last_seq`` carries the de-duplication baseline across a restart of the owner.
    """

    def __init__(
        self,
        port: str,
        sink: queue.Queue[SensorEvent] | Sink,
        *,
        keep_trying: bool = False,
        last_seq: int | None = None,
        opener: Opener = open_serial,
    ) -> None:
        self.port = port
        self._emit_to = sink.put if isinstance(sink, queue.Queue) else sink
        self._keep_trying = keep_trying
        self._opener = opener
        self._filter = SeqFilter(last_seq)
        self._assembler = LineAssembler()
        self._parser = LineParser()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._rejected: Counter[str] = Counter()
        self._serial: serial.SerialBase | None = None
        self._up: bool | None = None  # None: not reported yet
        self._thread: threading.Thread | None = None

    # --- the owner's side ---------------------------------------------------------------------

    def start(self) -> DiceSensor:
        """Open the port (or, with ``keep_trying``, begin trying to) and start reading."""
        if self._thread is not None:
            raise RuntimeError("DiceSensor.start() called twice")
        if not self._keep_trying:
            try:
                self._serial = self._opener(self.port)
            except (serial.SerialException, OSError, ValueError) as exc:
                raise UserError(
                    f"dice sensor: cannot open {self.port} ({_one_line(exc)}): {_fix_for(exc)}"
                ) from None
            self._link_up()
        self._thread = threading.Thread(target=self._run, name=f"dice-sensor {self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop reading and close the port; returns once the thread has ended."""
        self._stop.set()
        port = self._serial
        if port is not None and hasattr(port, "cancel_read"):
            # If this races the reader closing the port, the read ends on its timeout.
            with contextlib.suppress(OSError, serial.SerialException, AttributeError, TypeError):
                port.cancel_read()
        if self._thread is not None:
            self._thread.join(JOIN_TIMEOUT_S)
            if self._thread.is_alive():
                log.warning("dice sensor reader on %s did not stop in time", self.port)
        elif self._serial is not None:
            self._close("stopped")

    def __enter__(self) -> DiceSensor:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stats(self) -> SensorStats:
        with self._lock:
            return SensorStats(
                good=self._counts["good"],
                rolls=self._counts["rolls"],
                duplicates=self._counts["duplicates"],
                unknown=self._counts["unknown"],
                rejected=MappingProxyType(dict(self._rejected)),
                link_downs=self._counts["link_downs"],
                protocol=self._parser.protocol,
            )

    # --- the reader thread ----------------------------------------------------------------------

    def _run(self) -> None:
        backoff = MIN_BACKOFF_S
        try:
            while not self._stop.is_set():
                if self._serial is None:
                    try:
                        self._serial = self._opener(self.port)
                    except (serial.SerialException, OSError, ValueError) as exc:
                        self._link_down(_one_line(exc))
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, MAX_BACKOFF_S)
                        continue
                    self._link_up()
                try:
                    data = self._serial.read(self._serial.in_waiting or 1)
                except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                    # TypeError/AttributeError: pyserial's posix read after a racing close.
                    if self._stop.is_set():
                        break
                    self._close(_one_line(exc))
                    self._stop.wait(backoff)
                    continue
                if data:
                    backoff = MIN_BACKOFF_S
                    for item in self._assembler.feed(data):
                        self._handle(item)
        except Exception as exc:  # a bug here must not end the thread without a word
            log.exception("dice sensor reader on %s crashed", self.port)
            port, self._serial = self._serial, None
            if port is not None:
                with contextlib.suppress(OSError, serial.SerialException):
                    port.close()
            self._link_down(f"reader crashed: {_one_line(exc)}")
        finally:
            if self._serial is not None:
                self._close("stopped")

    def _handle(self, item: bytes | Rejected) -> None:
        if isinstance(item, bytes):
            with self._lock:  # stats() reads the protocol
                parsed = self._parser.parse(item)
        else:
            parsed = item
        match parsed:
            case Rejected(fault=fault):
                with self._lock:
                    self._rejected[fault.value] += 1
                self._emit(parsed)
            case Unknown():
                self._count("unknown")
            case Roll(seq=seq):
                if self._filter.accept(seq):
                    self._count("good", "rolls")
                    self._emit(parsed)
                else:
                    self._count("duplicates")
            case Hello():
                self._filter.sensor_restarted()
                self._count("good")
                self._emit(parsed)
            case _:
                self._count("good")
                self._emit(parsed)

    def _link_up(self) -> None:
        # A port that comes back may hold a different or reset sensor, maybe an older one.
        self._filter.sensor_restarted()
        with self._lock:
            self._parser.link_reopened()
        self._up = True
        self._emit(LinkUp(self.port))

    def _link_down(self, reason: str) -> None:
        if self._up is False:
            return  # report the change once, not every retry
        if self._up:
            self._count("link_downs")
        self._up = False
        self._emit(LinkDown(self.port, reason))

    def _close(self, reason: str) -> None:
        port, self._serial = self._serial, None
        for rejected in self._assembler.flush():
            self._handle(rejected)
        try:
            if port is not None:
                port.close()
        except (OSError, serial.SerialException):
            pass  # already gone with the device
        self._link_down(reason)

    def _count(self, *names: str) -> None:
        with self._lock:
            for name in names:
                self._counts[name] += 1

    def _emit(self, event: SensorEvent) -> None:
        try:
            self._emit_to(event)
        except Exception:  # the owner's sink must not kill the reader
            log.exception("dice sensor sink raised on %r", event)


def _fix_for(exc: BaseException) -> str:
    """What the person at the table should do about a port that will not open."""
    text = str(exc)
    if getattr(exc, "errno", None) == errno.EACCES or "Permission denied" in text:
        return "add your user to the dialout group (sudo usermod -aG dialout $USER) and log in again"
    if "exclusively lock" in text:
        return "another program is reading this port: stop it (a terminal, another bunco-pi)"
    return "plug the sensor in, or give its port (see ls /dev/serial/by-id/)"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
