"""Starting the console beside a head service (``bunco-pi head`` and ``bunco-pi demo``)."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

from bunco_pi.console.auth import read_password_file
from bunco_pi.console.desk import ConsoleBridge
from bunco_pi.console.server import ConsoleServer
from bunco_pi.errors import UserError
from bunco_pi.head.service import HeadService

log = logging.getLogger("bunco_pi.console")


def console_url(port: int, host: str | None = None) -> str:
    """The address people type or scan: the Pi's mDNS name (``bunco-head.local``)."""
    name = host or f"{socket.gethostname()}.local"
    return f"http://{name}:{port}/"


def serve_console(service: HeadService, *, port: int, password_file: str | Path | None,
                  season_dir: str | Path | None, bind: str = "0.0.0.0",
                  url: str | None = None) -> ConsoleServer:
    """Start the web console for ``service`` (before ``service.start()``)."""
    password_hash = None
    if password_file is not None:
        try:
            password_hash = read_password_file(password_file)
        except UserError as exc:
            log.warning("console: %s; the host's desk stays locked, the board is open", exc)
    server = ConsoleServer(bind, port, password_hash=password_hash, season_dir=season_dir)
    server.start()
    server.bridge = ConsoleBridge(service, server.publish, url=url or console_url(port),
                                  season_dir=season_dir)
    log.info("console: %s", server.bridge.url)
    return server
