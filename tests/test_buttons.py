"""Debounce and gestures, first with plain numbers for time, then through MockFactory pins."""

from __future__ import annotations

import queue
import time

import pytest

from bunco_pi.hardware.buttons import ButtonPanel, Edge, Gestures
from bunco_pi.hardware.pinmap import default_button_pins

ROLES = tuple(default_button_pins())


def gestures(**kwargs) -> Gestures:
    return Gestures(ROLES, hold_roles=frozenset({"pass", "undo"}), debounce=0.03,
                    hold_time=0.8, **kwargs)


def kinds(out):
    return [(g.role, g.kind) for g in out]


def test_tap_button_taps_on_contact_with_no_delay():
    g = gestures()
    assert kinds(g.feed(Edge("point", True, 10.0))) == [("point", "down"), ("point", "tap")]
    assert g.feed(Edge("point", False, 10.2)) == []


def test_chatter_on_press_and_release_counts_once():
    g = gestures()
    out = []
    t = 5.0
    for i in range(15):  # 15 bounces 1 ms apart, ending pressed
        out += g.feed(Edge("point", i % 2 == 0, t))
        t += 0.001
    out += g.feed(Edge("point", True, t))
    out += g.tick(t + 0.1)
    for i in range(15):  # release chatter ending released
        out += g.feed(Edge("point", i % 2 == 1, t + 0.3 + i * 0.001))
    out += g.feed(Edge("point", False, t + 0.32))
    out += g.tick(t + 1.0)
    assert kinds(out) == [("point", "down"), ("point", "tap")]
    assert not g.is_down("point")


def test_bounce_that_ends_released_catches_up_when_the_window_closes():
    g = gestures()
    g.feed(Edge("three", True, 1.0))
    g.feed(Edge("three", False, 1.005))  # inside the window: ignored for now
    assert g.is_down("three")
    assert g.next_deadline() == pytest.approx(1.03)
    assert g.tick(1.03) == []
    assert not g.is_down("three")


def test_hold_fires_once_however_long_the_button_is_held():
    g = gestures()
    assert kinds(g.feed(Edge("pass", True, 0.0))) == [("pass", "down")]
    assert g.tick(0.5) == []
    assert kinds(g.tick(0.8)) == [("pass", "hold")]
    for t in (1.0, 5.0, 60.0, 3600.0):
        assert g.tick(t) == []
    assert g.feed(Edge("pass", False, 3600.5)) == []  # release after a hold is not a tap


def test_short_press_on_a_hold_button_taps_on_release():
    g = gestures()
    g.feed(Edge("undo", True, 0.0))
    assert kinds(g.feed(Edge("undo", False, 0.3))) == [("undo", "tap")]


def test_stuck_tap_button_never_repeats():
    g = gestures()
    out = g.feed(Edge("bunco", True, 0.0))
    for t in range(1, 1000):
        out += g.tick(float(t))
    assert kinds(out) == [("bunco", "down"), ("bunco", "tap")]


def test_unknown_role_is_ignored():
    assert gestures().feed(Edge("bell", True, 0.0)) == []


def test_panel_chattering_mock_pin_counts_once(mock_factory):
    edges: queue.Queue[Edge] = queue.Queue()
    panel = ButtonPanel(default_button_pins(), edges.put, time.monotonic)
    try:
        pin = mock_factory.pin(default_button_pins()["point"])
        for _ in range(20):  # a bouncing contact, far faster than the debounce window
            pin.drive_low()
            pin.drive_high()
        pin.drive_low()
        g = gestures()
        out = []
        while not edges.empty():
            out += g.feed(edges.get_nowait())
        out += g.tick(time.monotonic() + 0.1)
        assert kinds(out) == [("point", "down"), ("point", "tap")]
    finally:
        panel.close()


def test_panel_reports_each_edge_with_role_and_level(mock_factory):
    edges: queue.Queue[Edge] = queue.Queue()
    panel = ButtonPanel({"undo": 26}, edges.put, lambda: 42.0)
    try:
        pin = mock_factory.pin(26)
        pin.drive_low()
        pin.drive_high()
        assert [edges.get_nowait(), edges.get_nowait()] == [
            Edge("undo", True, 42.0), Edge("undo", False, 42.0)]
    finally:
        panel.close()
