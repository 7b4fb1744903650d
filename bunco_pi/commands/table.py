"""``bunco-pi table``: run a table's scoreboard box (buttons, OLED, dice sensor).

``--standalone`` plays rounds at this one table, which is its own head table; ``--emulate``
runs the box in the terminal with mock pins and a drawn OLED. See docs/table-box.md.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError

DEFAULT_JOURNAL = Path("~/.local/state/bunco-pi/table-journal.db")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "table",
        help="run a table's scoreboard box",
        description="Run a table's scoreboard box: tally buttons, OLED and dice sensor.",
    )
    parser.add_argument("--config", type=Path, help="table config TOML (default: built-in)")
    parser.add_argument("--standalone", action="store_true",
                        help="play at this one table, which is its own head table")
    parser.add_argument("--emulate", action="store_true",
                        help="no hardware: keys for buttons, the OLED drawn in the terminal")
    parser.add_argument("--rules", default="classic", metavar="PRESET|FILE",
                        help="house rules: a preset name or a TOML file (default: classic)")
    parser.add_argument("--dice-port", metavar="URL",
                        help="dice sensor serial port or pyserial URL (overrides the config)")
    parser.add_argument("--camera", metavar="SOURCE",
                        help="read the dice with a camera: picamera, opencv:INDEX or folder:DIR")
    parser.add_argument("--camera-calibration", type=Path, metavar="FILE",
                        help="the tray's settings from `bunco-pi camera calibrate`")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="keep FILE updated with the night record after every round")
    parser.add_argument("--journal", type=Path, metavar="FILE",
                        help="SQLite journal of every entry, for resuming after a power cut "
                             f"(default: {DEFAULT_JOURNAL}; in-memory with --emulate)")
    parser.add_argument("--new-night", action="store_true",
                        help="set the journal of the last night aside and start a new night")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bunco_pi.rules.house import resolve_rules
    from bunco_pi.table.box import TableBox
    from bunco_pi.table.config import load_config
    from bunco_pi.table.link import StandaloneLink
    from bunco_pi.table.recorder import record_writer

    if not args.standalone:
        raise UserError("a networked table needs a head on the LAN, which this version does "
                        "not have yet: run `bunco-pi table --standalone`")
    config = load_config(args.config)
    rules = resolve_rules(args.rules)
    journal = _journal_path(args)
    device = pin_factory = None
    if args.emulate:
        from gpiozero.pins.mock import MockFactory

        from bunco_pi.hardware.oled import DisplayConfig, open_device

        pin_factory = MockFactory()
        device = open_device(DisplayConfig(kind="dummy"))
    # The seed settles prize tie-breaks at the end of the night; the rules take it as given.
    link = StandaloneLink(rules, config.players, seed=random.SystemRandom().randrange(2**31))
    write = record_writer(args.record, link) if args.record else None
    box = TableBox(config, rules, link, journal, device=device, pin_factory=pin_factory,
                   dice_port=args.dice_port, on_round_over=write,
                   camera=args.camera, camera_calibration=args.camera_calibration)
    stop = threading.Event()
    _on_signals(stop)
    box.start()
    try:
        if args.emulate:
            from bunco_pi.table import emulator

            keypad = emulator.KeyPad(pin_factory, config.buttons.pins,
                                     config.buttons.hold_time, box.node.post)
            emulator.run(box, keypad, stop=stop)
        else:
            print(f"bunco-pi table {config.number}: running standalone; Ctrl-C to stop",
                  file=sys.stderr, flush=True)
            while not stop.wait(1.0):
                pass
    except KeyboardInterrupt:
        pass
    finally:
        box.stop()
        if write is not None:
            write(box.node)
    return 0


def _journal_path(args: argparse.Namespace) -> str:
    if args.journal is not None:
        path = args.journal
    elif args.emulate:
        return ":memory:"
    else:
        path = DEFAULT_JOURNAL.expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    if args.new_night and path.exists():
        _set_aside(path)
    return os.fspath(path)


def _set_aside(path: Path) -> Path:
    """Rename the journal (and its WAL files) to the first free ``<name>.<n>.old``."""
    for n in range(1, 10_000):
        target = path.with_name(f"{path.name}.{n}.old")
        if not target.exists():
            break
    else:
        raise UserError(f"{path}: too many old journals beside it; delete some")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    path.rename(target)
    return target


def _on_signals(stop: threading.Event) -> None:
    """SIGTERM (systemd stop) ends the table like Ctrl-C: record written, journal closed."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: object) -> None:
        # Once is enough: a second signal must not cut the final record write short.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
