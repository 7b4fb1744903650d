"""The dice sensor, seen from the table: sensor events in, node events out.

The reader (``bunco_pi.hardware.dice_sensor``) runs on its own thread; this sink only
translates each event and posts it, so the node's thread stays the only one with state.
"""

from __future__ import annotations

from collections.abc import Callable

from bunco_pi.hardware.dice_sensor import DiceSensor, LinkDown, LinkUp
from bunco_pi.hardware.dice_wire import Rejected, Roll, Rolling, SensorError
from bunco_pi.table.events import DiceRoll, DiceStatus

Post = Callable[[object], None]


def translate(event: object) -> object | None:
    """The node event for a sensor event, or None for one the table does not show."""
    if isinstance(event, Roll):
        return DiceRoll(event.seq, event.dice)
    if isinstance(event, LinkDown):
        return DiceStatus(False, "dice unplugged: use buttons")
    if isinstance(event, LinkUp):
        return DiceStatus(True)
    if isinstance(event, Rolling):
        return DiceStatus(True, "rolling...")
    if isinstance(event, SensorError):
        return DiceStatus(True, f"dice: {event.text}")
    if isinstance(event, Rejected):
        return None  # counted by the reader (stats); never scored
    return None


class DiceFeed:
    def __init__(self, port: str, post: Post, last_seq: int | None = None) -> None:
        def sink(event: object) -> None:
            translated = translate(event)
            if translated is not None:
                post(translated)

        self.sensor = DiceSensor(port, sink, keep_trying=False, last_seq=last_seq)

    def start(self) -> None:
        """Open the port now (a missing device is a one-line UserError), then read on."""
        self.sensor.start()

    def stop(self) -> None:
        self.sensor.stop()

    def summary(self) -> str:
        """One line of the reader's counters, for the log when the table stops."""
        stats = self.sensor.stats()
        return (f"dice sensor {self.sensor.port}: {stats.rolls} rolls, {stats.duplicates} "
                f"repeats ignored, {stats.malformed} malformed lines rejected, "
                f"{stats.link_downs} disconnects")
