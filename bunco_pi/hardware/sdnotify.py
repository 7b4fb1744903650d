"""Tell systemd how a service is doing: READY=1, WATCHDOG=1 and STATUS=... over $NOTIFY_SOCKET.

The units in ``systemd/`` use ``Type=notify`` and ``WatchdogSec=``: systemd waits for READY=1
before it calls a box started, and restarts the box when the WATCHDOG=1 pings stop (a hung
event loop, a wedged I2C bus). The protocol is one datagram of ``KEY=value`` lines to a Unix
socket, so the standard library is enough. Outside systemd the variable is absent and every
call does nothing, which keeps ``bunco-pi table`` usable from a shell.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping


class SystemdNotifier:
    """Send sd_notify messages; a no-op when the process was not started by systemd."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._address = _socket_address(env.get("NOTIFY_SOCKET", ""))
        watchdog_usec = env.get("WATCHDOG_USEC", "")
        # systemd sets WATCHDOG_PID too; a child process must not ping for its parent.
        watchdog_pid = env.get("WATCHDOG_PID", "")
        self._watchdog_usec = int(watchdog_usec) if watchdog_usec.isdigit() else 0
        if watchdog_pid.isdigit() and int(watchdog_pid) != os.getpid():
            self._watchdog_usec = 0

    @property
    def enabled(self) -> bool:
        """True when there is a systemd socket to talk to."""
        return self._address is not None

    def watchdog_interval(self) -> float | None:
        """Seconds between WATCHDOG=1 pings (half the unit's WatchdogSec), or None if unset."""
        if not self._watchdog_usec:
            return None
        return self._watchdog_usec / 2_000_000

    def notify(self, *lines: str) -> bool:
        """Send ``lines`` as one message; True if it was sent, False when not under systemd.

        A send that fails (systemd restarting, socket gone) is swallowed: telling systemd
        how we are must never be the thing that stops the scoreboard.
        """
        if self._address is None or not lines:
            return False
        payload = "\n".join(lines).encode("utf-8")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(self._address)
                sock.sendall(payload)
        except OSError:
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """The service has started: systemd now reports it active."""
        return self.notify("READY=1", *([f"STATUS={_one_line(status)}"] if status else []))

    def watchdog(self) -> bool:
        """Still alive: call at least every ``watchdog_interval()`` seconds."""
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """A one-line status shown by ``systemctl status``."""
        return self.notify(f"STATUS={_one_line(text)}")

    def stopping(self) -> bool:
        """The service is shutting down on purpose."""
        return self.notify("STOPPING=1")


def _socket_address(value: str) -> str | bytes | None:
    if not value:
        return None
    if value.startswith("@"):
        # An abstract-namespace socket: its name starts with a NUL byte instead of "@".
        return b"\0" + value[1:].encode("utf-8")
    if value.startswith("/"):
        return value
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())
