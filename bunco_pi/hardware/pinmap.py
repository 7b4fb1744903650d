"""The default wiring of a bunco-pi box: one table that code, docs and the pinout all read.

BCM GPIO numbers (what gpiozero calls ``GPIO5``) beside the physical header pin, so a builder
can check a wire by counting pins. Every button goes from its GPIO to a ground pin and uses
the Pi's internal pull-up; the buzzer sits on a PWM-capable pin so a ``TonalBuzzer`` works.
"""

from __future__ import annotations

from dataclasses import dataclass

BUZZER_KIND = "TonalBuzzer"
"""The head box's buzzer: a passive one, played as tones (gpiozero's ``TonalBuzzer``), as
hardware/bom.md buys it; an active one is ``"Buzzer"``. The parts list, the generated
head.toml and the head's defaults all follow this (tests/test_buzzer_parts.py)."""


@dataclass(frozen=True)
class PinAssignment:
    role: str
    gpio: int
    header_pin: int
    part: str
    ground_pin: int | None = None


# Buttons sit in a row on the lower right of the 40-pin header, each beside a ground pin.
TABLE_BUTTONS: tuple[PinAssignment, ...] = (
    PinAssignment("point", 5, 29, "tally button: +1 for the roller", ground_pin=30),
    PinAssignment("three", 6, 31, "tally button: three of a kind", ground_pin=30),
    PinAssignment("bunco", 13, 33, "tally button: BUNCO", ground_pin=34),
    PinAssignment("pass", 19, 35, "tally button: pass the dice", ground_pin=34),
    PinAssignment("undo", 26, 37, "tally button: undo", ground_pin=39),
)

HEAD_EXTRAS: tuple[PinAssignment, ...] = (
    PinAssignment("bell", 16, 36, "bell button (host)", ground_pin=39),
    PinAssignment("buzzer", 12, 32, "buzzer, through an NPN transistor", ground_pin=34),
)

# The OLED and its I2C bus: fixed by the Pi's I2C-1 pins.
I2C_PINS: tuple[PinAssignment, ...] = (
    PinAssignment("i2c_sda", 2, 3, "OLED SDA"),
    PinAssignment("i2c_scl", 3, 5, "OLED SCL"),
)
OLED_POWER_PIN = 1  # 3V3
OLED_GROUND_PIN = 9
DEFAULT_I2C_ADDRESS = 0x3C


def default_button_pins() -> dict[str, int]:
    """Role -> BCM GPIO number for a table's tally buttons."""
    return {p.role: p.gpio for p in TABLE_BUTTONS}


def default_head_pins() -> dict[str, int]:
    """Role -> BCM GPIO number for the head box's bell button and buzzer."""
    return {p.role: p.gpio for p in HEAD_EXTRAS}
