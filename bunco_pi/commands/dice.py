"""``bunco-pi dice``: everything about reading dice without buttons.

- ``bunco-pi dice listen PORT``: watch a serial dice sensor, one line per event, then the
  counters; for checking a sensor by hand (a new tray, a cable, a camera box) before a night.
- ``bunco-pi dice read | eval | calibrate | watch``: the dice camera (``commands/camera.py``).
"""

from __future__ import annotations

import argparse
import queue
import time
from typing import TextIO

from bunco_pi.hardware.dice_sensor import DiceSensor, LinkDown, LinkUp, SensorStats
from bunco_pi.hardware.dice_wire import Hello, Rejected, Roll, Rolling, SensorError


def register(subparsers: argparse._SubParsersAction) -> None:
    from bunco_pi.commands.camera import add_actions

    dice = subparsers.add_parser(
        "dice", help="dice without buttons: a serial dice sensor, or a camera over the tray",
        description="Check a serial dice sensor (listen), or read dice with a camera: read "
                    "photos, measure the reader on labelled photos (eval), set up a tray "
                    "(calibrate), watch a camera.",
    )
    actions = dice.add_subparsers(dest="dice_command", metavar="ACTION", required=True)
    parser = actions.add_parser(
        "listen",
        help="watch a serial dice sensor",
        description="Print what a serial dice sensor sends, one line per event, "
        "then how many lines were good, repeated or rejected.",
    )
    add_actions(actions)
    parser.add_argument("port", help="serial port, e.g. /dev/ttyACM0 or /dev/serial/by-id/...")
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long (default: Ctrl-C)")
    parser.add_argument(
        "--keep-trying",
        action="store_true",
        help="wait for a sensor that is not plugged in yet, and for replugs",
    )
    parser.set_defaults(func=run)


def describe(event: object) -> str:
    """One line a person can read for each event."""
    match event:
        case Roll(seq=seq, dice=dice, extensions=extensions):
            extra = "".join(f" {k}={v}" for k, v in extensions)
            return f"roll #{seq}: {dice[0]} {dice[1]} {dice[2]}{extra}"
        case Rolling():
            return "rolling..."
        case Hello(version=version):
            return f"hello: sensor firmware {version} (protocol {event.protocol})"
        case SensorError(text=text):
            return f"sensor error: {text}"
        case Rejected(fault=fault, line=line):
            return f"rejected ({fault.value}): {line.decode('ascii', 'backslashreplace')}"
        case LinkUp(port=port):
            return f"link up: {port}"
        case LinkDown(port=port, reason=reason):
            return f"link down: {port}: {reason}"
    return repr(event)


def summary(stats: SensorStats) -> str:
    rejected = ", ".join(f"{kind} {n}" for kind, n in sorted(stats.rejected.items()))
    return (
        f"{stats.rolls} rolls, {stats.duplicates} repeats, {stats.unknown} unknown, "
        f"{stats.malformed} rejected" + (f" ({rejected})" if rejected else "")
    )


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    import sys

    out = out or sys.stdout
    events: queue.Queue = queue.Queue()
    sensor = DiceSensor(args.port, events, keep_trying=args.keep_trying).start()
    deadline = None if args.seconds is None else time.monotonic() + args.seconds
    try:
        while deadline is None or time.monotonic() < deadline:
            try:
                event = events.get(timeout=0.2)
            except queue.Empty:
                continue
            print(describe(event), file=out, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        sensor.stop()
    print(summary(sensor.stats()), file=out, flush=True)
    return 0
