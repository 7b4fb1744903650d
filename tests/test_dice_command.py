"""``bunco-pi dice listen PORT``, through its own parser and a real pty."""

from __future__ import annotations

import argparse
import io
import os
import threading
import time
import tty

import pytest

from bunco_pi.commands import dice
from bunco_pi.errors import UserError
from bunco_pi.hardware.dice_wire import Hello, Roll, format_message


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bunco-pi")
    dice.register(parser.add_subparsers(dest="command"))
    if argv and argv[0] == "dice":
        argv = ["dice", "listen", *argv[1:]]
    return parser.parse_args(argv)


def test_watch_prints_events_and_counters():
    master, slave = os.openpty()
    tty.setraw(slave)
    out = io.StringIO()
    args = parse(["dice", os.ttyname(slave), "--seconds", "2"])

    def sensor_side():
        # Wait for the reader to open the port (it flushes what came before), then talk.
        deadline = time.monotonic() + 5
        while "link up" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.write(
            master,
            format_message(Hello("1.0.0", (("proto", "2"),)))
            + format_message(Roll(7, (2, 4, 6), (("src", "cam"),)))
            + format_message(Roll(7, (2, 4, 6)))
            + b"ROLL 8 1 1 \xff*0000\n"
            + b"ROLL 9 1 1 1*0000\n",
        )

    talker = threading.Thread(target=sensor_side)
    talker.start()
    try:
        assert args.func(args, out=out) == 0
    finally:
        talker.join(5)
        os.close(slave)
        os.close(master)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("link up: ")
    assert lines[1:6] == [
        "hello: sensor firmware 1.0.0 (protocol 2)",
        "roll #7: 2 4 6 src=cam",
        "rejected (garbage): ROLL 8 1 1 \\xff*0000",
        "rejected (bad_checksum): ROLL 9 1 1 1*0000",
        "1 rolls, 1 repeats, 0 unknown, 2 rejected (bad_checksum 1, garbage 1)",
    ]


def test_a_missing_port_is_a_user_error(tmp_path):
    args = parse(["dice", str(tmp_path / "ttyACM3"), "--seconds", "0"])
    with pytest.raises(UserError, match="ttyACM3"):
        args.func(args)


def test_keep_trying_waits_without_error(tmp_path):
    out = io.StringIO()
    args = parse(["dice", str(tmp_path / "ttyACM3"), "--seconds", "0.3", "--keep-trying"])
    assert args.func(args, out=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"link down: {tmp_path / 'ttyACM3'}: ")
    assert lines[-1] == "0 rolls, 0 repeats, 0 unknown, 0 rejected"
