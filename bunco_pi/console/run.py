"""Starting the console beside a head service (``bunco-pi head`` and ``bunco-pi demo``).

The web server (aiohttp, seconds to import on a busy Pi) starts on its own thread after the
head is serving, so tables never wait for the console: until it listens, the newest snapshot
waits in ``LatestSnapshot``.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bunco_pi.console.desk import ConsoleBridge
from bunco_pi.errors import UserError
from bunco_pi.head.service import HeadService

log = logging.getLogger("bunco_pi.console")


def console_url(port: int, host: str | None = None) -> str:
    """The address people type or scan: the Pi's mDNS name (``bunco-head.local``)."""
    name = host or f"{socket.gethostname()}.local"
    return f"http://{name}:{port}/"


class LatestSnapshot:
    """The newest snapshot, from the head's thread to the server whenever the server is up."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: str | None = None
        self._sink: Callable[[str, str | None], None] | None = None

    def publish(self, snapshot_json: str, patch_json: str | None = None) -> None:
        with self._lock:
            self._latest, sink = snapshot_json, self._sink
        if sink is not None:
            sink(snapshot_json, patch_json)

    def connect(self, sink: Callable[[str, str | None], None]) -> None:
        with self._lock:
            self._sink, latest = sink, self._latest
        if latest is not None:
            sink(latest, None)  # the server has no earlier one to patch


class Console:
    """The console of a head: ``serve()`` once the head is serving, ``stop()`` when it stops."""

    def __init__(self, bridge: ConsoleBridge, start: Callable[[], None]) -> None:
        self.bridge = bridge
        self.server: Any = None
        self.started = threading.Event()
        self._stopping = threading.Event()
        self._start = start
        self._serving = False

    def serve(self) -> None:
        """Start the web server on its own thread; the head goes on at once."""
        if not self._serving:
            self._serving = True
            threading.Thread(target=self._start, name="console-start", daemon=True).start()

    def stop(self) -> None:
        self._stopping.set()
        if self._serving:
            self.started.wait(30)
        self.bridge.close()  # the last drawings, while the server can still take them
        if self.server is not None:
            self.server.stop()


def tls_context(certificate: str | Path, key: str | Path) -> ssl.SSLContext:
    """The HTTPS port's TLS context (TLS 1.2 or later), or a one-line UserError."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(certificate), str(key))
    except (OSError, ssl.SSLError) as exc:
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or str(exc)
        raise UserError(f"{certificate}: cannot load the console's TLS certificate and key "
                        f"({key}): {reason} (install/install.sh head makes them)") from None
    return context


def serve_console(service: HeadService, *, port: int, password_file: str | Path | None,
                  season_dir: str | Path | None, bind: str = "0.0.0.0",
                  url: str | None = None, https_port: int | None = None,
                  certificate: str | Path | None = None, key: str | Path | None = None,
                  limits: tuple[int, int, int, int] | None = None,
                  roster_file: Path | None = None) -> Console:
    """Attach the console to ``service`` now (before ``service.start()``); call ``serve()`` on
    the result once the head is serving. ``limits``: connections, connections per address,
    event streams, event streams per address (``bunco_pi.console.limits.Limits``)."""
    latest = LatestSnapshot()
    bridge = ConsoleBridge(service, latest.publish, url=url or console_url(port), background=True,
                           season_dir=season_dir, roster_file=roster_file)

    def start() -> None:
        try:
            from bunco_pi.console.auth import read_password_file
            from bunco_pi.console.limits import Limits
            from bunco_pi.console.server import ConsoleServer

            password_hash = None
            if password_file is not None:
                try:
                    password_hash = read_password_file(password_file)
                except UserError as exc:
                    log.warning("console: %s; the host's desk stays locked, the board is open",
                                exc)
            tls = None
            if https_port is not None:
                try:
                    tls = tls_context(certificate or "", key or "")
                except UserError as exc:
                    # the host's desk answers only over HTTPS: without it, it stays locked
                    log.error("console: %s; the host's desk stays locked, the board is open",
                              exc)
                    password_hash = None
            caps = Limits() if limits is None else Limits(
                connections=limits[0], per_address=limits[1], streams=limits[2],
                streams_per_address=limits[3])
            server = ConsoleServer(bind, port, password_hash=password_hash,
                                   season_dir=season_dir, limits=caps,
                                   https_port=https_port if tls is not None else None, tls=tls)
            server.bridge = bridge
            if console._stopping.is_set():
                return
            server.start()
            console.server = server
            latest.connect(server.publish)
            log.info("console: %s%s (at most %d connections, %d per address)", bridge.url,
                     f", the host's desk on HTTPS port {server.https_port}" if tls else "",
                     server.limits.connections, server.limits.per_address)
        except (UserError, ImportError) as exc:  # the night goes on without its console
            log.error("console: %s", exc)
        finally:
            console.started.set()

    console = Console(bridge, start)
    return console
