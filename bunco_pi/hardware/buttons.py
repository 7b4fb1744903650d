"""Tally buttons: gpiozero edges in, debounced taps and holds out.

gpiozero's callbacks run on its own threads, so a :class:`ButtonPanel` only stamps each edge
with the monotonic clock and hands it to a callback you supply (normally ``queue.put``). All
debouncing and gesture timing happens in :class:`Gestures`, a pure object owned by the one
thread that owns the table's state, so it is tested with plain numbers for time.

Debounce is ours, not gpiozero's (its ``bounce_time`` depends on the pin factory and is ignored
by mock pins): the first edge counts at once, then the contact is ignored for ``debounce``
seconds; when that window closes, the debounced level catches up with the pin's real level.
A press therefore shows on the OLED with no added delay, and chatter counts once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

DEFAULT_DEBOUNCE = 0.03  # seconds; cheap tactile switches settle in 5-20 ms
DEFAULT_HOLD_TIME = 0.8  # seconds a press must last to count as a hold


@dataclass(frozen=True)
class Edge:
    """A raw level change of one button: ``pressed`` is the new level, ``t`` monotonic seconds."""

    role: str
    pressed: bool
    t: float


@dataclass(frozen=True)
class Gesture:
    """What a scorekeeper did with a button.

    ``kind`` is ``"down"`` (contact made: show feedback now), ``"tap"`` (released before the
    hold time, or made on a button with no hold meaning) or ``"hold"`` (kept down for the hold
    time; fires once however long the button stays down).
    """

    role: str
    kind: str
    t: float


@dataclass
class _Contact:
    raw: bool = False  # the pin's latest level as reported
    level: bool = False  # the debounced level
    quiet_until: float = 0.0  # edges before this instant are contact bounce
    down_since: float | None = None
    held: bool = False  # the hold gesture already fired for this press


@dataclass
class Gestures:
    """Turn raw edges into gestures. Pure: the caller passes the time in.

    ``hold_roles`` are the buttons whose tap waits for release (so a hold can mean something
    else); every other button taps on contact, the fastest feedback there is.
    """

    roles: Iterable[str]
    hold_roles: frozenset[str] = frozenset()
    debounce: float = DEFAULT_DEBOUNCE
    hold_time: float = DEFAULT_HOLD_TIME
    _contacts: dict[str, _Contact] = field(init=False)

    def __post_init__(self) -> None:
        self._contacts = {role: _Contact() for role in self.roles}

    def feed(self, edge: Edge) -> list[Gesture]:
        """Take one raw edge; return the gestures it completes (often none)."""
        contact = self._contacts.get(edge.role)
        if contact is None:
            return []
        contact.raw = edge.pressed
        out = self.tick(edge.t)
        if edge.t >= contact.quiet_until and contact.level != contact.raw:
            out += self._settle(edge.role, contact, edge.t)
        return out

    def tick(self, now: float) -> list[Gesture]:
        """Advance the clock: close debounce windows and fire holds that are due."""
        out: list[Gesture] = []
        for role, contact in self._contacts.items():
            if contact.quiet_until and now >= contact.quiet_until:
                contact.quiet_until = 0.0
                if contact.level != contact.raw:
                    out += self._settle(role, contact, now)
            if (
                contact.level
                and not contact.held
                and role in self.hold_roles
                and contact.down_since is not None
                and now - contact.down_since >= self.hold_time
            ):
                contact.held = True
                out.append(Gesture(role, "hold", now))
        return out

    def next_deadline(self) -> float | None:
        """The next instant :meth:`tick` has work to do, or None when nothing is pending."""
        times = []
        for role, contact in self._contacts.items():
            if contact.quiet_until:
                times.append(contact.quiet_until)
            if contact.level and not contact.held and role in self.hold_roles:
                assert contact.down_since is not None
                times.append(contact.down_since + self.hold_time)
        return min(times, default=None)

    def is_down(self, role: str) -> bool:
        return self._contacts[role].level

    def _settle(self, role: str, contact: _Contact, now: float) -> list[Gesture]:
        contact.level = contact.raw
        contact.quiet_until = now + self.debounce
        if contact.level:
            contact.down_since = now
            contact.held = False
            if role in self.hold_roles:
                return [Gesture(role, "down", now)]
            return [Gesture(role, "down", now), Gesture(role, "tap", now)]
        contact.down_since = None
        if role in self.hold_roles and not contact.held:
            return [Gesture(role, "tap", now)]
        return []


class ButtonPanel:
    """gpiozero buttons wired GPIO -> switch -> ground, using the Pi's internal pull-ups.

    ``on_edge`` is called on gpiozero's thread with an :class:`Edge`; it must only hand the
    edge on (``queue.put``), never touch state.
    """

    def __init__(
        self,
        pins: Mapping[str, int | str],
        on_edge: Callable[[Edge], None],
        clock: Callable[[], float],
        pin_factory: object | None = None,
    ) -> None:
        # Lazy: the rest of the package runs without GPIO. A plain DigitalInputDevice rather
        # than gpiozero's Button: Button starts a hold-polling thread per button (10 wake-ups
        # a second each), and hold timing is ours anyway.
        from gpiozero import DigitalInputDevice

        self.buttons = {}
        try:
            for role, pin in pins.items():
                button = DigitalInputDevice(pin, pull_up=True, bounce_time=None,
                                            pin_factory=pin_factory)
                button.when_activated = _edge_callback(role, True, on_edge, clock)
                button.when_deactivated = _edge_callback(role, False, on_edge, clock)
                self.buttons[role] = button
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        for button in self.buttons.values():
            button.close()
        self.buttons = {}


def _edge_callback(
    role: str, pressed: bool, on_edge: Callable[[Edge], None], clock: Callable[[], float]
) -> Callable[[], None]:
    def callback() -> None:
        on_edge(Edge(role, pressed, clock()))

    return callback
