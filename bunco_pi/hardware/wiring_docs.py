"""Generate hardware/wiring.md and hardware/pinout.svg from the default pin map.

The pin map in ``bunco_pi.hardware.pinmap`` is the one source of truth for the wiring; these
documents are derived from it so a builder never solders to a pin the software does not read.
Run ``python3 -m bunco_pi.hardware.wiring_docs`` after changing the pin map, or
``... --check`` to fail when the committed documents are stale (the test suite does this).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path

from bunco_pi.hardware import pinmap
from bunco_pi.hardware.pinmap import PinAssignment

# The Raspberry Pi 40-pin header (every model since the B+): physical pin -> what is there.
# Power and ground are names; GPIOs are their BCM numbers.
HEADER: dict[int, str | int] = {
    1: "3V3", 2: "5V", 3: 2, 4: "5V", 5: 3, 6: "GND", 7: 4, 8: 14, 9: "GND", 10: 15,
    11: 17, 12: 18, 13: 27, 14: "GND", 15: 22, 16: 23, 17: "3V3", 18: 24, 19: 10, 20: "GND",
    21: 9, 22: 25, 23: 11, 24: 8, 25: "GND", 26: 7, 27: 0, 28: 1, 29: 5, 30: "GND",
    31: 6, 32: 12, 33: 13, 34: "GND", 35: 19, 36: 16, 37: 26, 38: 20, 39: "GND", 40: 21,
}
# Pins the Pi itself reserves: the HAT EEPROM bus must stay free.
RESERVED_GPIOS = {0: "HAT EEPROM (ID_SD)", 1: "HAT EEPROM (ID_SC)"}
# The buzzer's transistor is powered from 5 V: a magnetic buzzer draws more than a GPIO can give.
BUZZER_SUPPLY_PIN = 2

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "hardware"


class PinMapError(ValueError):
    """The pin map contradicts the header (wrong pin for a GPIO, a clash, a ground that isn't)."""


def header_pin_of(gpio: int) -> int:
    """The physical header pin of a BCM GPIO number."""
    for pin, what in HEADER.items():
        if what == gpio:
            return pin
    raise PinMapError(f"GPIO{gpio} is not on the 40-pin header")


def check_pinmap(assignments: Iterable[PinAssignment]) -> None:
    """Raise PinMapError naming the role if any assignment disagrees with the header."""
    seen_gpio: dict[int, str] = {}
    for a in assignments:
        if HEADER.get(a.header_pin) != a.gpio:
            raise PinMapError(
                f"pin map role {a.role!r}: GPIO{a.gpio} is header pin {header_pin_of(a.gpio)}, "
                f"not {a.header_pin}"
            )
        if a.gpio in RESERVED_GPIOS:
            raise PinMapError(f"pin map role {a.role!r}: GPIO{a.gpio} is reserved for the "
                              f"{RESERVED_GPIOS[a.gpio]}")
        if a.gpio in seen_gpio:
            raise PinMapError(f"pin map roles {seen_gpio[a.gpio]!r} and {a.role!r} both use "
                              f"GPIO{a.gpio}")
        seen_gpio[a.gpio] = a.role
        if a.ground_pin is not None and HEADER.get(a.ground_pin) != "GND":
            raise PinMapError(f"pin map role {a.role!r}: ground pin {a.ground_pin} is "
                              f"{HEADER.get(a.ground_pin)}, not GND")
    for name, pin, expected in (("OLED_POWER_PIN", pinmap.OLED_POWER_PIN, "3V3"),
                                ("OLED_GROUND_PIN", pinmap.OLED_GROUND_PIN, "GND")):
        if HEADER.get(pin) != expected:
            raise PinMapError(f"pin map {name}: pin {pin} is {HEADER.get(pin)}, not {expected}")


def all_assignments() -> tuple[PinAssignment, ...]:
    return pinmap.I2C_PINS + pinmap.TABLE_BUTTONS + pinmap.HEAD_EXTRAS


def _row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table_box_rows() -> list[str]:
    rows = [
        _row("Part", "Lead", "Connects to", "GPIO (BCM)", "Header pin"),
        _row("---", "---", "---", "---", "---"),
        _row("OLED (SSD1306/SH1106, I2C)", "VCC", "3.3 V", "-", pinmap.OLED_POWER_PIN),
        _row("OLED", "GND", "ground", "-", pinmap.OLED_GROUND_PIN),
    ]
    for a in pinmap.I2C_PINS:
        lead = a.part.split()[-1]
        rows.append(_row("OLED", lead, f"I2C-1 {lead}", f"GPIO{a.gpio}", a.header_pin))
    for a in pinmap.TABLE_BUTTONS:
        rows.extend(_button_rows(a))
    rows.append(_row("Pico dice sensor (optional)", "micro-USB / USB-C", "any USB-A port of the Pi",
                     "-", "-"))
    rows.append(_row("Camera (optional)", "ribbon cable", "CSI camera connector", "-", "-"))
    return rows


def _button_rows(a: PinAssignment) -> list[str]:
    name = a.part
    return [
        _row(name, "leg 1", f"`{a.role}` input, internal pull-up", f"GPIO{a.gpio}", a.header_pin),
        _row(name, "leg 2", "ground", "-", a.ground_pin),
    ]


def _head_box_rows() -> list[str]:
    extras = {a.role: a for a in pinmap.HEAD_EXTRAS}
    bell, buzzer = extras["bell"], extras["buzzer"]
    rows = [
        _row("Part", "Lead", "Connects to", "GPIO (BCM)", "Header pin"),
        _row("---", "---", "---", "---", "---"),
        _row(bell.part, "leg 1", "`bell` input, internal pull-up",
             f"GPIO{bell.gpio}", bell.header_pin),
        _row(bell.part, "leg 2", "ground", "-", bell.ground_pin),
        _row("1 kΩ resistor", "end 1", "`buzzer` output (PWM)", f"GPIO{buzzer.gpio}",
             buzzer.header_pin),
        _row("1 kΩ resistor", "end 2", "transistor base", "-", "-"),
        _row("NPN transistor (2N2222 / BC337)", "emitter", "ground", "-", buzzer.ground_pin),
        _row("NPN transistor", "collector", "buzzer −", "-", "-"),
        _row("buzzer", "+", "5 V", "-", BUZZER_SUPPLY_PIN),
        _row("1N4148 diode (magnetic buzzer only)", "cathode (band)", "buzzer +", "-", "-"),
        _row("1N4148 diode (magnetic buzzer only)", "anode", "buzzer − (collector)", "-", "-"),
    ]
    return rows


def render_wiring_md() -> str:
    """The whole of hardware/wiring.md."""
    check_pinmap(all_assignments())
    lines = [
        "<!-- Generated by `python3 -m bunco_pi.hardware.wiring_docs` from "
        "bunco_pi/hardware/pinmap.py. Do not edit by hand. -->",
        "# Wiring",
        "",
        "Every wire of a bunco-pi box, in the order you solder them. GPIO numbers are BCM",
        "numbers (what `pinout` and gpiozero print); header pins are counted on the 40-pin",
        "header with pin 1 nearest the SD card slot, odd pins on the inner row.",
        "See [pinout.svg](pinout.svg) for the picture.",
        "",
        "Rules that hold for every box:",
        "",
        "- Each button goes from its GPIO to a ground pin; the Pi's internal pull-up holds the",
        "  input high, so no resistor is needed. Two buttons may share one ground pin.",
        "- The OLED runs at 3.3 V. Never feed it, or anything on a GPIO, from the 5 V pins.",
        f"- The OLED answers on I2C bus 1 at address 0x{pinmap.DEFAULT_I2C_ADDRESS:02x} "
        "(`i2cdetect -y 1`).",
        "- The dice sensor (a Pico) needs no GPIO: it is a USB serial port (`/dev/ttyACM0`).",
        "",
        "## Table box",
        "",
        "Every table has one, the head table too.",
        "",
        *_table_box_rows(),
        "",
        "## Head box",
        "",
        "The head box is a table box plus the host's bell button and the buzzer. A GPIO",
        "gives at most a few milliamps at 3.3 V, so the buzzer is switched by an NPN",
        "transistor from the 5 V pin. A magnetic buzzer is a coil: its diode, across the",
        "buzzer with the band towards +5 V, takes the spike when the transistor turns off.",
        "A piezo buzzer needs no diode.",
        "",
        *_head_box_rows(),
        "",
        "## Pins by number",
        "",
        _row("Header pin", "GPIO (BCM)", "Role", "Box"),
        _row("---", "---", "---", "---"),
    ]
    boxes = {**{a.role: "both" for a in pinmap.I2C_PINS + pinmap.TABLE_BUTTONS},
             **{a.role: "head" for a in pinmap.HEAD_EXTRAS}}
    for a in sorted(all_assignments(), key=lambda a: a.header_pin):
        lines.append(_row(a.header_pin, f"GPIO{a.gpio}", a.role, boxes[a.role]))
    lines.append("")
    return "\n".join(lines)


def _pin_label(pin: int, by_pin: dict[int, PinAssignment]) -> tuple[str, str]:
    """(label, fill colour) of one header pin in the drawing."""
    what = HEADER[pin]
    if isinstance(what, str):
        return what, {"3V3": "#f4a300", "5V": "#d62728", "GND": "#222222"}[what]
    if pin in by_pin:
        a = by_pin[pin]
        colour = "#1f77b4" if a.role.startswith("i2c") else (
            "#2ca02c" if a in pinmap.TABLE_BUTTONS else "#9467bd")
        return f"GPIO{what} {a.role}", colour
    return f"GPIO{what}", "#dddddd"


def render_pinout_svg() -> str:
    """The whole of hardware/pinout.svg: the 40-pin header with the used pins labelled."""
    check_pinmap(all_assignments())
    by_pin = {a.header_pin: a for a in all_assignments()}
    used_power = {pinmap.OLED_POWER_PIN, pinmap.OLED_GROUND_PIN, BUZZER_SUPPLY_PIN} | {
        a.ground_pin for a in all_assignments() if a.ground_pin is not None}
    pitch, top, width = 26, 70, 640
    col_x = (290, 350)  # odd pins on the left column, even on the right
    height = top + 20 * pitch + 70
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        "<!-- Generated by `python3 -m bunco_pi.hardware.wiring_docs` from "
        "bunco_pi/hardware/pinmap.py. Do not edit by hand. -->",
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        '<text x="320" y="28" text-anchor="middle" font-size="16" font-weight="bold">'
        "bunco-pi: Raspberry Pi 40-pin header</text>",
        '<text x="320" y="48" text-anchor="middle">pin 1 is nearest the SD card; '
        "labelled pins are wired, grey pins are free</text>",
        f'<rect x="{col_x[0] - 18}" y="{top - 18}" width="{col_x[1] - col_x[0] + 36}" '
        f'height="{20 * pitch + 10}" rx="6" fill="#2b2b2b"/>',
    ]
    for pin in range(1, 41):
        row, side = (pin - 1) // 2, (pin - 1) % 2
        x, y = col_x[side], top + row * pitch
        label, fill = _pin_label(pin, by_pin)
        wired = pin in by_pin or pin in used_power
        shape = "rect" if pin == 1 else "circle"
        if shape == "rect":
            out.append(f'<rect x="{x - 9}" y="{y - 9}" width="18" height="18" fill="{fill}" '
                       'stroke="#ffffff" stroke-width="1.5"/>')
        else:
            out.append(f'<circle cx="{x}" cy="{y}" r="9" fill="{fill}" stroke="#ffffff" '
                       'stroke-width="1.5"/>')
        number_colour = "#000000" if fill in ("#dddddd", "#f4a300") else "#ffffff"
        out.append(f'<text x="{x}" y="{y + 4}" text-anchor="middle" font-size="9" '
                   f'fill="{number_colour}">{pin}</text>')
        weight = "bold" if wired else "normal"
        colour = "#000000" if wired else "#888888"
        if side == 0:
            out.append(f'<text x="{x - 22}" y="{y + 4}" text-anchor="end" font-weight="{weight}" '
                       f'fill="{colour}">{escape(label)}</text>')
        else:
            out.append(f'<text x="{x + 22}" y="{y + 4}" font-weight="{weight}" '
                       f'fill="{colour}">{escape(label)}</text>')
    legend_y = top + 20 * pitch + 25
    legend = (("#2ca02c", "table buttons"), ("#9467bd", "head: bell, buzzer"),
              ("#1f77b4", "OLED I2C"), ("#f4a300", "3.3 V"), ("#d62728", "5 V"),
              ("#222222", "ground"))
    lx = 20
    for fill, text in legend:
        out.append(f'<circle cx="{lx}" cy="{legend_y}" r="6" fill="{fill}"/>')
        out.append(f'<text x="{lx + 10}" y="{legend_y + 4}">{escape(text)}</text>')
        lx += 30 + 7 * len(text)  # a generous width per character of 12px sans-serif
    out.append("</svg>")
    return "\n".join(out) + "\n"


def rendered(out_dir: Path) -> dict[Path, str]:
    """Each generated file and its expected content."""
    return {out_dir / "wiring.md": render_wiring_md(), out_dir / "pinout.svg": render_pinout_svg()}


def stale_files(out_dir: Path) -> list[Path]:
    """Generated files that are missing or differ from what the pin map gives."""
    return [path for path, text in rendered(out_dir).items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the hardware/ folder")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a generated file is stale")
    args = parser.parse_args(argv)
    try:
        if args.check:
            stale = stale_files(args.out)
            for path in stale:
                print(f"{path}: out of date with bunco_pi/hardware/pinmap.py; regenerate with "
                      "python3 -m bunco_pi.hardware.wiring_docs", file=sys.stderr)
            return 1 if stale else 0
        args.out.mkdir(parents=True, exist_ok=True)
        for path, text in rendered(args.out).items():
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    except PinMapError as exc:
        print(f"wiring_docs: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
