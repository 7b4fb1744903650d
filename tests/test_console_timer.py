"""A timed round on the console, in a real headless Chromium against a real head process, two
table boxes and a real mosquitto: the board shows the minutes left and counts them down, and the
host's desk pauses the clock (logged; the board says so) and resumes it."""

from __future__ import annotations

import json
import re
import sqlite3
import time
import urllib.request
from pathlib import Path

import pytest

from bunco_pi.net.broker import Broker
from bunco_pi.rules.house import preset_text
from tests.browser import LAPTOP, PHONE, chrome
from tests.conftest import _require_mosquitto
from tests.test_console_browser import (
    NIGHT,
    ConsoleNight,
    click,
    host_login,
    open_desk,
    shoot,
    text_of,
    wait_page,
)

pytestmark = pytest.mark.slow


class TimedConsoleNight(ConsoleNight):
    def __init__(self, broker: Broker, tmp: Path) -> None:
        super().__init__(broker, tmp)
        self.rules = tmp / "timed.toml"
        self.rules.write_text(preset_text("classic").replace(
            "[round]\n", '[round]\nminutes = 2\nends_by = "time"\nwarn_seconds = 30\n'
            "move_seconds = 60\n", 1))

    def start_head(self) -> None:
        self.head = self._spawn("head", [
            "head", *self.common(), "--tables", "2", "--roster", str(self.tmp / "roster.txt"),
            "--rules", str(self.rules),
            "--data-dir", str(self.tmp / "data"), "--record", str(self.tmp / "night.json"),
            "--no-gpio", "--seed", "3", "--console-port", str(self.port),
            "--console-bind", "127.0.0.1", "--console-password", str(self.password_file)])
        self.wait(lambda: self.snapshot().get("night") == NIGHT, "the console to serve")

    def logged(self, kind: str) -> list[list]:
        with sqlite3.connect(self.tmp / "data" / f"night-{NIGHT}.sqlite") as db:
            rows = db.execute("SELECT payload FROM events WHERE table_no = 0").fetchall()
        events = [json.loads(p).get("event") for (p,) in rows]
        return [e for e in events if isinstance(e, list) and e[0] == kind]


@pytest.fixture
def night(tmp_path):
    _require_mosquitto()
    with Broker(tmp_path / "broker", tables=2) as broker:
        n = TimedConsoleNight(broker, tmp_path)
        try:
            n.start_head()
            for t in (1, 2):
                n.start_table(t)
            yield n
        finally:
            n.stop()


def board_seconds(browser) -> int | None:
    match = re.match(r"(\d+):(\d\d) ", text_of(browser, "#timer"))
    return int(match[1]) * 60 + int(match[2]) if match else None


def test_the_board_counts_the_round_down_and_the_host_pauses_it(night):
    with chrome(PHONE) as browser:
        host_login(browser, night)
        open_desk(browser, night)
        night.wait(lambda: len(night.snapshot().get("online", [])) == 2, "both tables online")
        click(browser, "act-start")
        night.wait(lambda: night.phase() == "ready", "the seats drawn")
        assert browser.execute_script(
            "return document.getElementById('act-pause').classList.contains('hidden')")
        time.sleep(0.6)  # the bell takes one press per half second (a chattering contact)
        click(browser, "act-bell")
        night.wait(lambda: night.snapshot().get("timer", {}).get("phase") == "round",
                   "the round's clock")
        [clock] = night.logged("clock")
        assert clock[3] - clock[2] == pytest.approx(120)

        browser.get(night.base + "/#board")
        wait_page(browser, lambda: (board_seconds(browser) or 0) > 100, "the minutes left")
        first = board_seconds(browser)
        assert text_of(browser, "#timer").endswith(" left")
        time.sleep(2.2)
        assert first - 3 <= board_seconds(browser) <= first - 2  # counted down on the page

        open_desk(browser, night)
        wait_page(browser, lambda: browser.execute_script(
            "return !document.getElementById('act-pause').classList.contains('hidden')"),
            "the pause button")
        click(browser, "act-pause")
        night.wait(lambda: night.snapshot().get("timer", {}).get("phase") == "pause",
                   "the clock paused")
        assert len(night.logged("pause")) == 1
        browser.get(night.base + "/#board")
        wait_page(browser, lambda: text_of(browser, "#timer").endswith(" paused"),
                  "the board saying paused")
        held = board_seconds(browser)
        time.sleep(1.5)
        assert board_seconds(browser) == held  # a paused clock stands still
        shoot(browser, "timer", PHONE)
        shoot(browser, "timer", LAPTOP)

        open_desk(browser, night)
        click(browser, "act-resume")
        night.wait(lambda: night.snapshot().get("timer", {}).get("phase") == "round",
                   "the clock running again")
        [pause], [resume] = night.logged("pause"), night.logged("resume")
        # the deadline moved on by exactly the pause's length
        assert resume[2] - clock[3] == pytest.approx(resume[1] - pause[1])
        with urllib.request.urlopen(night.base + "/board", timeout=5) as page:  # no JavaScript
            assert re.search(r"id=\"timer\">\d:\d\d left<", page.read().decode())
