"""A table box with names in every script: each event leaves the screen showing what the box
means to show (the frame on luma's dummy device is the current view's), never an old frame.

The late arrival is the case that failed: a ghost's seat named between rounds, her name in a
script the box font lacked, then her table's rounds and the prizes screen she won.
"""

from __future__ import annotations

import pytest
from test_node import Table as NodeTable

from bunco_pi.hardware.pinmap import default_button_pins
from bunco_pi.rules.house import preset
from bunco_pi.table.events import BellRang, NightEnd, RoundResults, RoundStart, Waiting
from bunco_pi.table.gallery import NAME_SCRIPTS
from bunco_pi.table.link import InProcessLink
from bunco_pi.table.screens import render

PINS = default_button_pins()
CLASSIC = preset("classic")
SEATS = ("p1", "p2", "p3", "ghost1")


class Table(NodeTable):
    """test_node's running box, seated with a ghost, that checks what its screen shows."""

    def __init__(self, factory, tmp_path):
        super().__init__(factory, tmp_path, InProcessLink(),
                         players=("Ann", "Bea", "Cat", "Ghost 1"))

    def send(self, event):
        self.link.send(event)
        self.sync()

    def shows_its_view(self, step):
        """The dummy device holds the frame of the node's current view, and no draw failed."""
        assert "cannot draw" not in self.log.getvalue(), (step, self.log.getvalue())
        expected = render(self.node.view()).tobytes()
        assert self.device.image.convert("1").tobytes() == expected, step


@pytest.mark.parametrize("script", sorted(NAME_SCRIPTS))
def test_a_late_arrival_named_in_any_script_is_drawn_through_the_night(
        mock_factory, tmp_path, script):
    a, b, c, late = NAME_SCRIPTS[script]
    t = Table(mock_factory, tmp_path)
    try:
        t.send(Waiting(("Ann", "Bea", "Cat", "Ghost 1"), "round 1 soon"))
        t.shows_its_view("waiting, a ghost in seat 4")
        # Between rounds the host seats the late arrival at the ghost's seat; the head renames
        # the seat's id and, as every table, the others have names of her script too.
        names = (("p1", a), ("p2", b), ("p3", c), ("ghost1", late))
        t.send(Waiting((a, b, c, late), "round 2 soon"))
        t.shows_its_view("waiting, the late arrival seated")
        t.send(RoundStart(1, 2, 2, SEATS, True, round_index=2, names=names))
        t.shows_its_view("playing")
        for _ in range(3):
            t.tap("point")
            t.shows_its_view("a point")
        t.tap("pass")
        t.shows_its_view("seat 2 rolls")
        for _ in range(2):
            t.tap("pass")
            t.shows_its_view("the next roller")
        assert late in t.node.view().__dict__.get("roller", late)
        t.send(BellRang())
        t.shows_its_view("the bell")
        t.tap("pass")
        t.send(RoundResults((f"{a}, {c}: stay T1", f"{b}, {late}: go to T2"), headline=""))
        t.shows_its_view("results")
        t.send(NightEnd((("Most buncos", a), ("Most wins", late), ("50/50", late),
                         ("Traveler", b))))
        assert t.node.mode == "ended"
        t.shows_its_view("the prizes")
    finally:
        t.box.stop()
