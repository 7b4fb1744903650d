"""What the console lets any one guest, and all of them together, hold of the head.

A head on the party Wi-Fi serves people it does not know. Without limits, about a thousand idle
TCP connections used up the head's open files (the night record could not be written), 500
event streams that stopped reading grew the kernel's TCP buffers by 830 MiB, and every refused
accept() logged a traceback. Here, the way a well-run public server does it:

- **Connections**: at most ``connections`` in all and ``per_address`` from one address. When
  the total is reached, the oldest connection that is not in the middle of a request (idle, or
  still sending its headers) makes room for the new one, so a flood of idle sockets cannot
  lock out a host who is actually asking for something; over its own address's cap a new
  connection is closed at once.
- **Timeouts**: a connection with no request in progress lives ``idle_timeout`` seconds (from
  the connect or the end of its last response): this is both the keep-alive limit and the
  header timeout that closes a slowloris client. A request body must arrive within
  ``body_timeout``.
- **Event streams**: at most ``streams`` in all and ``streams_per_address``; a stream's socket
  has a small kernel send buffer (``stream_sndbuf``), and a viewer whose unsent data has not
  drained for ``write_timeout`` seconds is dropped.
- **Open files**: the console's share of the process's file limit is capped below the limit
  with ``fd_reserve`` left for the night itself (event log, record, broker, bell), so nothing
  a guest does with sockets can stop the head from writing its record.
- **Logging**: each kind of refusal is one line per ``log_every`` seconds, with a count.

Everything here runs on the console's event loop thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import resource
import socket
import ssl
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("bunco_pi.console")

# How long a new connection has to send its request before it may be closed to make room.
ROOM_GRACE = 1.0
# Connections taken from the kernel's queue per turn of the event loop (asyncio accepts up to
# its backlog at once): each accepted socket is a file until its connection is let go, a turn
# later at the earliest, so this is what a flood can hold above the connection cap.
ACCEPT_BATCH = 32


@dataclass(frozen=True)
class Limits:
    connections: int = 512
    per_address: int = 24
    streams: int = 200
    streams_per_address: int = 8
    idle_timeout: float = 10.0
    body_timeout: float = 10.0
    write_timeout: float = 15.0
    stream_sndbuf: int = 16 * 1024
    body_max: int = 64 * 1024
    fd_reserve: int = 256
    log_every: float = 60.0

    def for_open_files(self, soft_limit: int | None = None) -> Limits:
        """These limits with the connection caps cut to fit the process's file limit, leaving
        ``fd_reserve`` files for the night."""
        if soft_limit is None:
            soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft_limit == resource.RLIM_INFINITY:
            return self
        room = max(16, soft_limit - self.fd_reserve - 2 * ACCEPT_BATCH)
        if room >= self.connections:
            return self
        from dataclasses import replace

        return replace(self, connections=room, streams=min(self.streams, room // 2),
                       per_address=min(self.per_address, room))


def address_key(peer: Any) -> str:
    """Whom a connection counts against: its address (an IPv4-mapped IPv6 one as IPv4). Not
    an IPv6 /64, as a public server would: on the party's LAN every phone shares the one /64
    (and the console listens on IPv4 unless told otherwise)."""
    host = peer[0] if isinstance(peer, tuple) and peer else str(peer)
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return str(host)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return str(addr.ipv4_mapped)
    return str(addr)


class RefusalLog:
    """One log line per kind of refusal per interval: the first at once, then a count."""

    def __init__(self, every: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self.clock = clock
        self.counts: Counter[str] = Counter()  # refusals of each kind since the guard started
        self._held: Counter[str] = Counter()
        self._last: dict[str, float] = {}

    def refuse(self, kind: str, detail: str = "") -> None:
        self.counts[kind] += 1
        now = self.clock()
        last = self._last.get(kind)
        if last is None or now - last >= self.every:
            held = self._held.pop(kind, 0)
            more = f" ({held} more since the last line)" if held else ""
            log.warning("console: refused: %s%s%s", kind, f" ({detail})" if detail else "", more)
            self._last[kind] = now
        else:
            self._held[kind] += 1

    def flush(self) -> None:
        """Say what was held back, once an interval has passed since a kind's last line."""
        now = self.clock()
        for kind in list(self._held):
            if now - self._last.get(kind, 0.0) >= self.every:
                log.warning("console: refused: %s, %d times in the last %.0f s", kind,
                            self._held.pop(kind), now - self._last[kind])
                self._last[kind] = now


class Connection:
    """One client connection as the guard sees it."""

    __slots__ = ("address", "busy", "timer", "transport", "stream", "protocol", "heard",
                 "idle_since")

    def __init__(self, address: str, transport: asyncio.BaseTransport) -> None:
        self.address = address
        self.transport = transport
        self.busy = 0  # requests being handled (a streaming response counts while it streams)
        self.timer: asyncio.TimerHandle | None = None
        self.stream = False
        self.protocol: GuardedProtocol | None = None
        self.heard = False  # has sent a byte
        self.idle_since = time.monotonic()  # when its last request ended (or it connected)


class Guard:
    """Counts and times every connection of the console's listening sockets."""

    def __init__(self, limits: Limits, refusals: RefusalLog | None = None) -> None:
        self.limits = limits
        self.refusals = refusals or RefusalLog(limits.log_every)
        self._conns: dict[Any, Connection] = {}
        # The connections with no request in progress, oldest first, in the order they are
        # let go when the total is reached: first those that never sent a byte (an idle
        # flood), then those between requests or still sending headers. A request being
        # handled, an event stream included, is never let go for room.
        self._silent: OrderedDict[Any, None] = OrderedDict()
        self._waiting: OrderedDict[Any, None] = OrderedDict()
        self._per_address: Counter[str] = Counter()
        self._streams: Counter[str] = Counter()
        self.peak_connections = 0

    # --- figures ------------------------------------------------------------------------------

    @property
    def connections(self) -> int:
        return len(self._conns)

    @property
    def streams(self) -> int:
        return sum(self._streams.values())

    # --- connections ----------------------------------------------------------------------------

    def connection(self, transport: Any) -> Connection | None:
        return self._conns.get(transport)

    def admit(self, transport: asyncio.BaseTransport) -> Connection | None:
        """A new connection: its record, or None once it has been closed (over a cap)."""
        address = address_key(transport.get_extra_info("peername"))
        if self._per_address[address] >= self.limits.per_address:
            self.refusals.refuse("connections over one address's cap",
                                 f"{self.limits.per_address} each; last from {address}")
            transport.abort()
            return None
        if len(self._conns) >= self.limits.connections and not self._let_one_go():
            self.refusals.refuse("connections over the console's cap, all busy",
                                 f"{self.limits.connections} in all")
            transport.abort()
            return None
        conn = Connection(address, transport)
        self._conns[transport] = conn
        self._silent[transport] = None
        self._per_address[address] += 1
        self.peak_connections = max(self.peak_connections, len(self._conns))
        self._arm(conn)
        return conn

    def _let_one_go(self) -> bool:
        """Close one connection with no request in progress: the oldest silent one if it has
        had ``ROOM_GRACE`` seconds to speak, else the longest waiting, else the older of the
        two. A burst of accepts then never closes the newest connection of the burst (the
        host's, whose request is already in its socket) while a slowloris client waits."""
        heads = [self._conns[next(iter(queue))] for queue in (self._silent, self._waiting)
                 if queue]
        if not heads:
            return False
        now = time.monotonic()
        ripe = [conn for conn in heads if now - conn.idle_since >= ROOM_GRACE]
        conn = ripe[0] if ripe else min(heads, key=lambda c: c.idle_since)
        self.refusals.refuse("idle connections closed to make room",
                             f"{self.limits.connections} in all")
        transport = conn.transport
        self.forget(transport)
        transport.abort()
        return True

    def heard(self, conn: Connection) -> None:
        """The connection's first bytes: it is someone, not an idle socket."""
        conn.heard = True
        transport = conn.transport
        if self._silent.pop(transport, False) is None:
            self._waiting[transport] = None

    def move(self, old: Any, new: Any) -> Connection | None:
        """The connection of ``old`` is known as ``new`` from now on (TLS over TCP)."""
        conn = self._conns.pop(old, None)
        if conn is None:
            return None
        conn.transport = new
        self._conns[new] = conn
        for queue in (self._silent, self._waiting):
            if queue.pop(old, False) is None:
                queue[new] = None
        return conn

    def forget(self, transport: Any) -> None:
        conn = self._conns.pop(transport, None)
        if conn is None:
            return
        self._silent.pop(transport, None)
        self._waiting.pop(transport, None)
        if conn.timer is not None:
            conn.timer.cancel()
        self._per_address[conn.address] -= 1
        if self._per_address[conn.address] <= 0:
            del self._per_address[conn.address]
        if conn.stream:
            self.end_stream(conn)

    def _arm(self, conn: Connection) -> None:
        if conn.timer is not None:
            conn.timer.cancel()
        conn.timer = asyncio.get_running_loop().call_later(self.limits.idle_timeout,
                                                           self._idle, conn)

    def _idle(self, conn: Connection) -> None:
        conn.timer = None
        if conn.busy == 0 and conn.transport in self._conns:
            self.refusals.refuse("connections closed after idling or sending headers slowly",
                                 f"{self.limits.idle_timeout:g} s without a request")
            self.forget(conn.transport)
            conn.transport.abort()

    def request_started(self, transport: Any) -> Connection | None:
        conn = self._conns.get(transport)
        if conn is not None:
            conn.busy += 1
            self._silent.pop(transport, None)
            self._waiting.pop(transport, None)
            if conn.timer is not None:
                conn.timer.cancel()
                conn.timer = None
        return conn

    def request_ended(self, conn: Connection | None) -> None:
        if conn is None:
            return
        conn.busy -= 1
        if conn.busy <= 0 and conn.transport in self._conns:
            conn.busy = 0
            conn.idle_since = time.monotonic()
            self._waiting[conn.transport] = None
            self._arm(conn)  # the response's last bytes and the keep-alive share this time

    # --- event streams --------------------------------------------------------------------------

    def start_stream(self, conn: Connection | None, address: str) -> bool:
        if self._streams[address] >= self.limits.streams_per_address:
            self.refusals.refuse("event streams over one address's cap",
                                 f"{self.limits.streams_per_address} each; last from {address}")
            return False
        if self.streams >= self.limits.streams:
            self.refusals.refuse("event streams over the console's cap",
                                 f"{self.limits.streams} in all")
            return False
        self._streams[address] += 1
        if conn is not None:
            conn.stream = True
        return True

    def end_stream(self, conn: Connection | None, address: str | None = None) -> None:
        if conn is not None:
            if not conn.stream:
                return
            conn.stream = False
            address = conn.address
        if address is None:
            return
        self._streams[address] -= 1
        if self._streams[address] <= 0:
            del self._streams[address]

    def close_all(self) -> None:
        for transport in list(self._conns):
            self.forget(transport)
            transport.abort()


def small_send_buffer(transport: Any, size: int) -> None:
    """Keep what the kernel holds for one slow reader small (Linux doubles ``size``): a fixed
    SO_SNDBUF also turns off the kernel's growing of it up to megabytes."""
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
    if transport is not None:
        # any unsent byte pauses the writer, so drain() waits until the kernel took it all
        transport.set_write_buffer_limits(high=0)


class GuardedProtocol(asyncio.Protocol):
    """aiohttp's request handler behind the guard: counted, timed, closed over a cap, and, on
    the HTTPS port, its TLS handshake done under the same idle timer."""

    def __init__(self, guard: Guard, inner: asyncio.Protocol,
                 tls: ssl.SSLContext | None = None) -> None:
        self.guard = guard
        self.inner = inner
        self.tls = tls
        self._raw: asyncio.BaseTransport | None = None
        self._made = False
        self._paused = False
        self._drained: asyncio.Future[None] | None = None
        # Bytes the TLS layer hands over between the handshake's end and start_tls's return to
        # us (the client's request can come in that gap): kept, then given to aiohttp.
        self._early: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        conn = self.guard.admit(transport)
        if conn is None:
            return
        conn.protocol = self
        self._raw = transport
        if self.tls is None:
            self._made = True
            self.inner.connection_made(transport)
            return
        transport.pause_reading()  # type: ignore[attr-defined]  # the ClientHello waits for start_tls
        asyncio.ensure_future(self._start_tls(transport))

    async def _start_tls(self, transport: asyncio.BaseTransport) -> None:
        loop = asyncio.get_running_loop()
        try:
            tls = await loop.start_tls(transport, self, self.tls, server_side=True,  # type: ignore[arg-type]
                                       ssl_handshake_timeout=self.guard.limits.idle_timeout)
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError, RuntimeError):
            self.guard.refusals.refuse("TLS handshakes that failed")
            self.guard.forget(transport)
            transport.abort()
            return
        if tls is None or tls.is_closing():
            self.guard.forget(transport)
            return
        # the guard knows this connection by the socket's transport; requests carry the TLS one
        if self.guard.move(transport, tls) is None:
            tls.abort()
            return
        self._raw = tls
        self._made = True
        self.inner.connection_made(tls)
        early, self._early = self._early, []
        for chunk in early:
            self.data_received(chunk)

    def data_received(self, data: bytes) -> None:
        if not self._made and self.tls is not None:
            self._early.append(data)
            return
        if self._made:
            conn = self.guard.connection(self._raw)
            if conn is not None and not conn.heard:
                self.guard.heard(conn)
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self._made else None

    def pause_writing(self) -> None:
        self._paused = True
        if self._made:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        self._paused = False
        self._wake()
        if self._made:
            self.inner.resume_writing()

    def _wake(self) -> None:
        waiter, self._drained = self._drained, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def drained(self) -> None:
        """Until the transport has handed every byte to the kernel (ConnectionResetError if
        the connection goes first)."""
        if self._raw is None or self._raw.is_closing():
            raise ConnectionResetError("the viewer has gone")
        if not self._paused:
            return
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._drained)
        if self._raw is None or self._raw.is_closing():
            raise ConnectionResetError("the viewer has gone")

    def connection_lost(self, exc: Exception | None) -> None:
        if self._raw is not None:
            self.guard.forget(self._raw)
        self._wake()
        if self._made:
            self._made = False
            self.inner.connection_lost(exc)


def quiet_exception_handler(refusals: RefusalLog) -> Callable[[asyncio.AbstractEventLoop,
                                                               dict[str, Any]], None]:
    """The console loop's exception handler: an accept() out of files (which asyncio reports
    once per waiting connection, each with a traceback) or a client's reset is one counted
    line per interval; anything else goes to asyncio's own handler."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        message = str(context.get("message", ""))
        if "accept" in message or isinstance(exc, ConnectionError | ssl.SSLError):
            refusals.refuse(f"{message or type(exc).__name__}",
                            f"{type(exc).__name__}: {exc}" if exc else "")
            return
        loop.default_exception_handler(context)

    return handle
