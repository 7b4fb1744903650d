"""The head box's bell button and buzzer (gpiozero).

The button's callbacks run on gpiozero's threads: they only put a ``BellPressed`` (a press,
counted on release) or a ``BellHeld`` (kept down for ``HOLD_TIME``: the host's way out of a
round a dead table holds up) on the queue they were given. A press waits for the release so
that a hold is never also a press. The buzzer plays each pattern in the background
(gpiozero's own ``beep`` thread for a plain ``Buzzer``; the ``source`` machinery for a
``TonalBuzzer``), so the head's loop never waits for a sound to finish.
"""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bunco_pi.errors import UserError

# (on seconds, off seconds, repeats) for a plain buzzer; a tone sequence for a tonal one.
PATTERNS: dict[str, tuple[float, float, int]] = {
    "round-start": (0.6, 0.2, 1),
    "round-end": (0.15, 0.1, 3),
    "bunco": (0.07, 0.05, 6),
    # a timed round: the warning before the end (two short pips, unlike anything else) and the
    # horn at the deadline (one long blast)
    "warn": (0.05, 0.15, 2),
    "time-up": (1.5, 0.1, 1),
}
TONES: dict[str, list[str | None]] = {
    "round-start": ["C5", "E5", "G5", None],
    "round-end": ["G5", "E5", "C5", None],
    "bunco": ["C6", None, "C6", None, "C6", None, "G6", None],
    "warn": ["A5", None, "A5", None],
    "time-up": ["C5", "C5", "C5", "C5", "C5", None],
}


NO_GPIO = ("no GPIO on this machine (not a Raspberry Pi, or lgpio missing): run with --no-gpio, "
           "or GPIOZERO_PIN_FACTORY=mock to try it without hardware")


HOLD_TIME = 2.0  # seconds: long enough that no ordinary press is taken for the way out


@dataclass(frozen=True)
class BellPressed:
    """The host pressed the bell button."""


@dataclass(frozen=True)
class BellHeld:
    """The host held the bell button down: close the round that unfinished tables hold up."""


class BellButton:
    """The host's bell: a button from a GPIO pin to ground, using the internal pull-up."""

    def __init__(self, pin: int, sink: Callable[[Any], None] | queue.Queue,
                 hold_time: float = HOLD_TIME) -> None:
        from gpiozero import Button
        from gpiozero.exc import BadPinFactory, GPIOPinInUse, PinInvalidPin

        self._put = sink.put if isinstance(sink, queue.Queue) else sink
        # gpiozero calls "held" from its hold thread and "released" from its pin thread: the
        # lock makes a press either a tap or a hold, never both.
        self._lock = threading.Lock()
        self._down = self._was_held = False
        try:
            self._button = Button(pin, pull_up=True, hold_time=hold_time)
        except BadPinFactory:
            raise UserError(NO_GPIO) from None
        except GPIOPinInUse:
            raise UserError(f"bell button: GPIO{pin} is already in use by another program "
                            "(stop it, or choose another pin with --bell-pin)") from None
        except (PinInvalidPin, ValueError) as exc:
            raise UserError(f"bell button: GPIO{pin} is not a usable pin: {exc}") from None
        self._button.when_pressed = self._pressed
        self._button.when_held = self._held
        self._button.when_released = self._released

    def _pressed(self) -> None:
        with self._lock:
            self._down, self._was_held = True, False

    def _held(self) -> None:
        with self._lock:
            if self._down and not self._was_held:
                self._was_held = True
                self._put(BellHeld())

    def _released(self) -> None:
        with self._lock:
            tap = self._down and not self._was_held
            self._down = False
        if tap:
            self._put(BellPressed())

    def close(self) -> None:
        self._button.close()


class BellBuzzer:
    """Distinct sounds for a round's start, its end, and a BUNCO."""

    def __init__(self, pin: int, kind: str = "plain") -> None:
        from gpiozero.exc import BadPinFactory, GPIOPinInUse, PinPWMUnsupported

        if kind not in ("plain", "tonal"):
            raise UserError(f"buzzer kind must be 'plain' or 'tonal', got {kind!r}")
        self.kind = kind
        try:
            if kind == "tonal":
                from gpiozero import TonalBuzzer
                from gpiozero.tones import Tone

                self._device: Any = TonalBuzzer(pin, octaves=3, mid_tone=Tone("C5"))
            else:
                from gpiozero import Buzzer

                self._device = Buzzer(pin)
        except BadPinFactory:
            raise UserError(NO_GPIO) from None
        except PinPWMUnsupported:
            raise UserError(f"buzzer: GPIO{pin} cannot play tones (no PWM there): wire the "
                            "buzzer to a PWM pin (GPIO12, 13, 18 or 19) or use a plain "
                            "(active) buzzer: --buzzer plain") from None
        except GPIOPinInUse:
            raise UserError(f"buzzer: GPIO{pin} is already in use by another program "
                            "(stop it, or choose another pin with --buzzer-pin)") from None
        self.played: list[str] = []

    def play(self, pattern: str) -> None:
        if pattern not in PATTERNS:
            raise ValueError(f"unknown buzzer pattern {pattern!r}")
        self.played.append(pattern)
        if self.kind == "plain":
            on, off, n = PATTERNS[pattern]
            self._device.beep(on_time=on, off_time=off, n=n, background=True)
        else:
            from gpiozero.tones import Tone

            # TonalBuzzer.value runs -1..1 across its octaves either side of the middle tone
            mid, octaves = self._device.mid_tone.frequency, self._device.octaves
            self._device.source_delay = 0.12
            self._device.source = [
                None if t is None else math.log2(Tone(t).frequency / mid) / octaves
                for t in TONES[pattern]
            ]

    def close(self) -> None:
        self._device.close()
