"""Generate hardware/pico-wiring.md from the Pico table box's one pin map.

The pin map is the firmware's own (``firmware/bunco_box/pins.py``): the Pico reads it at
start, and this document is derived from it, so a builder never solders to a pin the firmware
does not read. Run ``python3 -m bunco_pi.hardware.pico_wiring`` after changing the pin map,
or ``... --check`` to fail when the committed document is stale (the test suite does this).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
PINS_FILE = REPO_ROOT / "firmware" / "bunco_box" / "pins.py"
DEFAULT_OUT = REPO_ROOT / "hardware" / "pico-wiring.md"

# The Pico 2 W's (and Pico W's, Pico's) 40 pins: physical pin -> what is there. Pin 1 is GP0 at
# the USB end of the left row; pin 21 is GP16 at the far end of the right row.
HEADER: dict[int, str | int] = {
    1: 0, 2: 1, 3: "GND", 4: 2, 5: 3, 6: 4, 7: 5, 8: "GND", 9: 6, 10: 7,
    11: 8, 12: 9, 13: "GND", 14: 10, 15: 11, 16: 12, 17: 13, 18: "GND", 19: 14, 20: 15,
    21: 16, 22: 17, 23: "GND", 24: 18, 25: 19, 26: 20, 27: 21, 28: "GND", 29: 22, 30: "RUN",
    31: 26, 32: 27, 33: "GND", 34: 28, 35: "ADC_VREF", 36: "3V3(OUT)", 37: "3V3_EN",
    38: "GND", 39: "VSYS", 40: "VBUS",
}
# I2C0's SDA/SCL pairs on the Pico (SDA, SCL): the OLED must sit on one of them.
I2C0_PAIRS = {(0, 1), (4, 5), (8, 9), (12, 13), (16, 17), (20, 21)}
OLED_POWER_PIN = 36
OLED_GROUND_PIN = 38


class PinMapError(ValueError):
    """The pin map contradicts the Pico (a GP not on the header, a clash, a wrong I2C pair)."""


def load_pins(path: Path = PINS_FILE) -> dict[str, Any]:
    """The firmware's pin map: plain assignments, read without importing the firmware."""
    names: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), {}, names)
    return names


def physical(gp: int) -> int:
    for pin, what in HEADER.items():
        if what == gp:
            return pin
    raise PinMapError(f"GP{gp} is not on the Pico's header (GP23-25 and GP29 drive its "
                      "Wi-Fi chip)")


def nearest_ground(pin: int) -> int:
    grounds = [p for p, what in HEADER.items() if what == "GND" and (p <= 20) == (pin <= 20)]
    return min(grounds, key=lambda g: abs(g - pin))


def check(pins: dict[str, Any]) -> None:
    used: dict[int, str] = {}
    roles = [(f"button {role}", gp) for role, gp in pins["BUTTONS"].items()]
    roles += [("OLED SDA", pins["SDA"]), ("OLED SCL", pins["SCL"])]
    for role, gp in roles:
        physical(gp)
        if gp in used:
            raise PinMapError(f"GP{gp} is wired twice: {used[gp]} and {role}")
        used[gp] = role
    if pins["I2C_ID"] != 0 or (pins["SDA"], pins["SCL"]) not in I2C0_PAIRS:
        raise PinMapError(f"GP{pins['SDA']}/GP{pins['SCL']} are not an I2C0 SDA/SCL pair")


def render(pins: dict[str, Any] | None = None) -> str:
    pins = load_pins() if pins is None else pins
    check(pins)
    lines = [
        "# Pico table box wiring",
        "",
        "Generated from the firmware's pin map, `firmware/bunco_box/pins.py`, by",
        "`python3 -m bunco_pi.hardware.pico_wiring`: do not edit by hand.",
        "",
        "Pins are counted from pin 1 at the USB end, down the left side (pin 1 = GP0), then",
        "up the right side (pin 21 = GP16 ... pin 40 = VBUS), with the Pico's top (the side",
        "with the chip) facing you. Every button goes from its GP pin to a ground pin; the",
        "firmware turns on the Pico's internal pull-up, so no resistors are needed.",
        "",
        "## Buttons",
        "",
        "| button | GP | Pico pin | ground pin (nearest) |",
        "| --- | --- | ---: | ---: |",
    ]
    for role, gp in pins["BUTTONS"].items():
        pin = physical(gp)
        lines.append(f"| `{role}` | GP{gp} | {pin} | {nearest_ground(pin)} |")
    lines += [
        "",
        f"## OLED (I2C{pins['I2C_ID']}, address 0x{pins['OLED_ADDRESS']:02x})",
        "",
        "| OLED pin | Pico pin | name |",
        "| --- | ---: | --- |",
        f"| SDA | {physical(pins['SDA'])} | GP{pins['SDA']} (I2C0 SDA) |",
        f"| SCL | {physical(pins['SCL'])} | GP{pins['SCL']} (I2C0 SCL) |",
        f"| VCC | {OLED_POWER_PIN} | 3V3(OUT) |",
        f"| GND | {OLED_GROUND_PIN} | GND |",
        "",
        "An SSD1306 (0.96\") or an SH1106 (1.3\") module: `bunco-pi pico config --display`",
        "names which.",
        "",
        "## Power",
        "",
        "The Pico's own micro-USB socket: any 5 V USB charger, or a USB power bank (a Pico",
        "with Wi-Fi on and an OLED draws around a tenth of an amp, so a small bank lasts a",
        "night; a bank that switches itself off under a light load needs its always-on or",
        "low-current mode).",
        "",
        "## Pins by number",
        "",
        "| Pico pin | what | wired to |",
        "| ---: | --- | --- |",
    ]
    wired: dict[int, str] = {physical(gp): f"button `{role}`"
                             for role, gp in pins["BUTTONS"].items()}
    wired[physical(pins["SDA"])] = "OLED SDA"
    wired[physical(pins["SCL"])] = "OLED SCL"
    wired[OLED_POWER_PIN] = "OLED VCC"
    wired[OLED_GROUND_PIN] = "OLED GND"
    for pin in sorted(wired):
        what = HEADER[pin]
        name = f"GP{what}" if isinstance(what, int) else what
        lines.append(f"| {pin} | {name} | {wired[pin]} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true",
                        help="fail if the committed document is not what the pin map gives")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out.name}: out of date; run python3 -m bunco_pi.hardware.pico_wiring",
                  file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
