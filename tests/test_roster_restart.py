"""The roster the host types into the console before the night survives a head restart: a
real `bunco-pi head` process, a real mosquitto, the console over HTTP, the head stopped (and
killed) and started again."""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bunco_pi.console.auth import write_password_file
from bunco_pi.net.broker import free_port

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow
PASSWORD = "host-pass-1"
ROSTER = [{"name": "Ada", "here": True}, {"name": "Bea", "here": False},
          {"name": "Cy", "here": True}, {"name": "Dot", "here": True}]


class Head:
    def __init__(self, broker, tmp_path: Path) -> None:
        self.port = free_port()
        self.password_file = tmp_path / "console-password"
        write_password_file(self.password_file, PASSWORD)
        self.argv = [sys.executable, "-m", "bunco_pi.cli", "head", "--night", "rosters",
                     "--tables", "2", "--broker", f"{broker.host}:{broker.port}",
                     "--credentials", str(broker.workdir / "credentials.json"),
                     "--data-dir", str(tmp_path / "data"), "--no-gpio",
                     "--console-port", str(self.port), "--console-bind", "127.0.0.1",
                     "--console-password", str(self.password_file)]
        self.log = tmp_path / "head.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(self.argv, env=env, stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("a"))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                self.snapshot()
                return
            except (OSError, ValueError):
                time.sleep(0.2)
        raise AssertionError(f"the console did not answer: {self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def snapshot(self) -> dict:
        with urllib.request.urlopen(self.url("/api/snapshot"), timeout=5) as reply:
            return json.loads(reply.read())

    def host(self, action: str, body: dict) -> dict:
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        login = urllib.request.Request(self.url("/api/login"), method="POST",
                                       data=json.dumps({"password": PASSWORD}).encode(),
                                       headers={"Content-Type": "application/json"})
        with opener.open(login, timeout=15) as reply:
            csrf = json.loads(reply.read())["csrf"]
        post = urllib.request.Request(self.url(f"/api/host/{action}"), method="POST",
                                      data=json.dumps(body).encode(),
                                      headers={"Content-Type": "application/json",
                                               "X-CSRF-Token": csrf})
        with opener.open(post, timeout=15) as reply:
            return json.loads(reply.read())

    def wait_roster(self, expected: list[dict], seconds: float = 10) -> list[dict]:
        deadline = time.monotonic() + seconds
        roster: list[dict] = []
        while time.monotonic() < deadline:
            roster = self.snapshot().get("roster", [])
            if roster == expected:
                break
            time.sleep(0.2)
        return roster


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["stopped", "killed"])
def test_the_roster_typed_before_the_night_survives_a_head_restart(broker, tmp_path, how):
    head = Head(broker, tmp_path)
    head.start()
    try:
        default = head.snapshot()["roster"]
        assert [r["name"] for r in default] != [r["name"] for r in ROSTER]
        head.host("roster", {"roster": ROSTER})
        assert head.wait_roster(ROSTER) == ROSTER
        head.stop(how)
        head.start()
        assert head.wait_roster(ROSTER) == ROSTER
        # The night starts with the kept roster: the three checked in, ghosts in the rest.
        head.host("start", {})
        deadline = time.monotonic() + 10
        while "players" not in (snap := head.snapshot()) and time.monotonic() < deadline:
            time.sleep(0.2)
        players = [p["name"] for p in snap["players"] if not p["ghost"]]
        assert sorted(players) == ["Ada", "Cy", "Dot"], snap
        assert sum(p["ghost"] for p in snap["players"]) == 5
    finally:
        head.stop()
