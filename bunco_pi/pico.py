"""What goes onto a Pico 2 W table box: its files and its config (``box.json``).

The same layout serves ``bunco-pi pico flash`` (copied with mpremote), ``bunco-pi pico
config`` (the config alone, for Thonny users) and the tests, which run the very same files
under MicroPython's unix port.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.net.topics import TopicError, check_night, check_table, table_node

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
SHARED = Path(__file__).resolve().parent / "table" / "presses.py"
CONFIG_NAME = "box.json"
# The keys the firmware's ``bunco_box.box.REQUIRED`` asks for, and its optional ones.
REQUIRED = ("table", "night", "broker_host", "broker_port", "user", "password")
DISPLAYS = ("ssd1306", "sh1106")


def firmware_files(firmware: Path = FIRMWARE) -> list[tuple[Path, str]]:
    """Every file of the table box's firmware: (source here, path on the Pico)."""
    if not (firmware / "bunco_box" / "box.py").exists():
        raise UserError(f"{firmware}: the table box's firmware is not there: give "
                        "--firmware DIR, the firmware/ folder of a bunco-pi checkout")
    files = [(firmware / "table_box_main.py", "main.py"), (SHARED, "presses.py")]
    for package in ("bunco_box", "bunco_dice"):
        files += [(p, f"{package}/{p.name}") for p in sorted((firmware / package).glob("*.py"))]
    files += [(p, f"lib/{p.name}") for p in sorted((firmware / "lib").glob("*.py"))]
    return files


def lay_out(target: Path, firmware: Path = FIRMWARE) -> Path:
    """Copy the firmware into ``target`` as it lies on the Pico (a test's stand-in flash)."""
    for source, dest in firmware_files(firmware):
        (target / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target / dest)
    return target


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
