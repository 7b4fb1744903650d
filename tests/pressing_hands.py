"""Hands for a table box in the tests: a clock they move, taps and holds on mock pins.

A box's buttons are timed by the clock the test gives it, so a tap or a hold takes no real
time: the hands drive the pin, move the clock, and post a ``Tick`` for the node to notice.
"""

from __future__ import annotations

from bunco_pi.table.events import Tick


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class PressingHands:
    """Mixed into a test's box: it provides ``pin(role)``, ``clock``, ``node`` and ``sync()``."""

    def tap(self, role, times=1):
        for _ in range(times):
            self.pin(role).drive_low()
            self.clock.t += 0.1
            self.pin(role).drive_high()
            self.clock.t += 0.1
            self.node.post(Tick())
            self.sync()

    def hold(self, role):
        self.pin(role).drive_low()
        self.clock.t += 2.0
        self.node.post(Tick())
        self.sync()
        self.pin(role).drive_high()
        self.clock.t += 0.1
        self.node.post(Tick())
        self.sync()
