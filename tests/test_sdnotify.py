import os
import socket

import pytest

from bunco_pi.hardware.sdnotify import SystemdNotifier


@pytest.fixture
def listener(tmp_path):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(2.0)
    yield path, sock
    sock.close()


def test_absent_socket_is_a_noop():
    notifier = SystemdNotifier({})
    assert not notifier.enabled
    assert notifier.ready() is False
    assert notifier.watchdog() is False
    assert notifier.watchdog_interval() is None


def test_ready_with_status_is_one_datagram(listener):
    path, sock = listener
    notifier = SystemdNotifier({"NOTIFY_SOCKET": path})
    assert notifier.ready("table 3\nconnected")
    assert sock.recv(4096) == b"READY=1\nSTATUS=table 3 connected"


def test_watchdog_and_status_and_stopping(listener):
    path, sock = listener
    notifier = SystemdNotifier({"NOTIFY_SOCKET": path})
    assert notifier.watchdog()
    assert sock.recv(4096) == b"WATCHDOG=1"
    assert notifier.status("round 2 of set 1")
    assert sock.recv(4096) == b"STATUS=round 2 of set 1"
    assert notifier.stopping()
    assert sock.recv(4096) == b"STOPPING=1"


@pytest.mark.skipif(not os.path.exists("/proc/self"), reason="abstract sockets need Linux")
def test_abstract_namespace_socket():
    name = f"bunco-pi-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    sock.settimeout(2.0)
    try:
        assert SystemdNotifier({"NOTIFY_SOCKET": "@" + name}).ready()
        assert sock.recv(4096) == b"READY=1"
    finally:
        sock.close()


def test_vanished_socket_does_not_raise(tmp_path):
    notifier = SystemdNotifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    assert notifier.enabled
    assert notifier.watchdog() is False


def test_watchdog_interval_is_half_of_watchdogsec():
    env = {"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}
    assert SystemdNotifier(env).watchdog_interval() == 15.0


def test_watchdog_for_another_pid_is_ignored():
    env = {"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}
    assert SystemdNotifier(env).watchdog_interval() is None


def test_relative_socket_path_is_not_used():
    assert not SystemdNotifier({"NOTIFY_SOCKET": "relative.sock"}).enabled
