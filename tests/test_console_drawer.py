"""The console's drawer: the newest snapshot inputs drawn on a thread of its own, each at most
once and in order, a failing drawing logged and the next one drawn."""

from __future__ import annotations

import logging
import threading

from bunco_pi.console.drawer import LatestDrawer


def test_it_draws_on_its_own_thread_and_flush_waits_for_the_drawing():
    drawn: list[tuple[int, str]] = []
    drawer = LatestDrawer(lambda n: drawn.append((n, threading.current_thread().name)))
    drawer.submit(1)
    assert drawer.flush(5)
    assert drawn == [(1, "console-draw")]
    drawer.stop()


def held_drawer() -> tuple[LatestDrawer[int], list[int], threading.Event]:
    """A drawer already drawing 1, which it finishes once the returned event is set."""
    release, started = threading.Event(), threading.Event()
    drawn: list[int] = []

    def draw(n: int) -> None:
        started.set()
        release.wait(5)
        drawn.append(n)

    drawer = LatestDrawer(draw)
    drawer.submit(1)
    assert started.wait(5)
    return drawer, drawn, release


def test_inputs_overtaken_while_it_draws_are_dropped_and_the_newest_is_drawn_last():
    drawer, drawn, release = held_drawer()  # 1 is being drawn
    for n in (2, 3, 4):  # the head goes on: three more changes while 1 is drawn
        drawer.submit(n)
    release.set()
    assert drawer.flush(5)
    assert drawn == [1, 4] and drawer.dropped == 2
    drawer.stop()


def test_stop_draws_what_is_waiting_then_takes_no_more():
    drawer, drawn, release = held_drawer()
    drawer.submit(2)
    release.set()
    drawer.stop()
    drawer.submit(3)
    assert drawn == [1, 2]


def test_a_drawing_that_fails_is_logged_and_the_next_one_is_drawn(caplog):
    drawn: list[int] = []

    def draw(n: int) -> None:
        if n == 1:
            raise KeyError("a row the snapshot did not expect")
        drawn.append(n)

    drawer = LatestDrawer(draw)
    with caplog.at_level(logging.ERROR, logger="bunco_pi.console"):
        drawer.submit(1)
        assert drawer.flush(5)
        drawer.submit(2)
        assert drawer.flush(5)
    assert drawn == [2]
    assert "the snapshot could not be drawn" in caplog.text and "KeyError" in caplog.text
    drawer.stop()
