"""The Pico box's buttons (firmware/bunco_box/box.py's Button), under CPython: its debounce is
the Pi box's (the first edge counts at once, chatter after it does not), its hold is 0.8 s."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "firmware"))

from bunco_box.box import DEBOUNCE_MS, HOLD_MS, Button  # noqa: E402


def diff(a: int, b: int) -> int:
    return a - b


def run(role: str, levels: list[tuple[int, bool]], waits=("pass", "undo"), until: int = 3000):
    """Feed the button its level at each ms from a list of (from_ms, level) changes."""
    button, out = Button(role), []
    changes = dict(levels)
    level = False
    for now in range(until):
        level = changes.get(now, level)
        out += [(now, g) for g in button.feed(now, level, waits, diff)]
    return out


def test_a_tally_counts_on_its_first_edge_and_its_chatter_once():
    chatter = [(100, True), (101, False), (102, True), (104, False), (105, True), (300, False),
               (302, True), (303, False)]
    assert run("point", chatter) == [(100, "tap")]


def test_a_press_after_the_quiet_window_counts_again():
    presses = [(100, True), (150, False), (200, True), (250, False)]
    assert run("roll", presses) == [(100, "tap"), (200, "tap")]
    assert DEBOUNCE_MS < 50


def test_pass_waits_for_release_or_holds_once():
    assert run("pass", [(100, True), (300, False)]) == [(100, "down"), (300, "tap")]
    held = run("pass", [(100, True), (2500, False)])
    assert held == [(100, "down"), (100 + HOLD_MS, "hold")]  # no tap after a hold, no repeat
    assert HOLD_MS == 800  # the Pi box's hold_time
