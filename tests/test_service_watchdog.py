"""Both services tell systemd they are ready and keep feeding its watchdog (Type=notify,
WatchdogSec in the unit files): a real AF_UNIX datagram socket stands in for systemd."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def notifications(sock: socket.socket, seconds: float) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + seconds
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):
            got += sock.recv(4096).decode().splitlines()
        if "READY=1" in got and got.count("WATCHDOG=1") >= 2:
            break
    return got


def run_with_notify_socket(argv: list[str], tmp_path: Path) -> list[str]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    env = {**os.environ, "NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "4000000",
           "GPIOZERO_PIN_FACTORY": "mock", "GPIOZERO_MOCK_PIN_CLASS": "mockpwmpin",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "bunco_pi.cli", *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        got = notifications(sock, 20)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        sock.close()
    return got


def test_the_table_is_ready_and_feeds_the_watchdog(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[display]\ntype = "none"\n')
    got = run_with_notify_socket(["table", "--standalone", "--config", str(config),
                                  "--journal", str(tmp_path / "j.db")], tmp_path)
    assert "READY=1" in got and got.count("WATCHDOG=1") >= 2, got


def test_the_head_is_ready_and_feeds_the_watchdog(broker, tmp_path):
    got = run_with_notify_socket(
        ["head", "--night", "dog", "--broker", f"{broker.host}:{broker.port}",
         "--credentials", str(broker.workdir / "credentials.json"),
         "--data-dir", str(tmp_path)], tmp_path)
    assert "READY=1" in got and got.count("WATCHDOG=1") >= 2, got
