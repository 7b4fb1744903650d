"""The reference emitter: seq leases on disk, lines the reader accepts, the stdin pump."""

from __future__ import annotations

import io
import os
import queue
import select
import time
import tty

import pytest
import serial

from bunco_pi.errors import UserError
from bunco_pi.hardware.dice_emitter import DiceEmitter, SeqLease, main, pump
from bunco_pi.hardware.dice_sensor import DiceSensor, LinkUp
from bunco_pi.hardware.dice_wire import Hello, Roll, Rolling, SensorError, parse_line


def test_seq_lease_never_reuses_across_restarts(tmp_path):
    path = tmp_path / "state" / "emitter.seq"
    sent = []
    for _restart in range(4):
        lease = SeqLease(path, block=5)
        sent += [lease.take() for _ in range(7)]
    assert len(set(sent)) == len(sent) == 28
    assert sent[:9] == [0, 1, 2, 3, 4, 5, 6, 10, 11]
    assert path.read_text() == "40\n"
    assert not path.with_name("emitter.seq.new").exists()


def test_seq_lease_wraps(tmp_path):
    path = tmp_path / "s"
    path.write_text("65535\n")
    lease = SeqLease(path, block=2)
    assert [lease.take() for _ in range(3)] == [65535, 0, 1]


@pytest.mark.parametrize("content", ["x", "65536", "", "-1"])
def test_a_bad_seq_file_is_a_one_line_user_error(tmp_path, content):
    path = tmp_path / "s"
    path.write_text(content)
    with pytest.raises(UserError, match=str(path)) as caught:
        SeqLease(path)
    assert "\n" not in str(caught.value)


def test_emitter_lines_parse_back(tmp_path):
    out: list[bytes] = []
    emitter = DiceEmitter(out.append, SeqLease(tmp_path / "s"), version="cam-0.3")
    emitter.hello()
    emitter.rolling()
    sent = emitter.roll([6, 1, 2], (("src", "cam"),))
    emitter.error("lens * fogged\n")
    assert [parse_line(line.rstrip(b"\n")) for line in out] == [
        Hello("cam-0.3", (("proto", "2"),)),
        Rolling(),
        Roll(0, (6, 1, 2), (("src", "cam"),)),
        SensorError("lens ? fogged?"),
    ]
    assert sent == Roll(0, (6, 1, 2), (("src", "cam"),))
    assert all(line[-6:-5] == b"*" for line in out)  # four CRC digits before the newline


def test_emitter_speaks_protocol_1_for_an_older_table(tmp_path):
    out: list[bytes] = []
    emitter = DiceEmitter(out.append, SeqLease(tmp_path / "s"), version="cam-0.3", protocol=1)
    emitter.hello()
    emitter.roll([3, 3, 5])
    assert out == [b"HELLO cam-0.3*0D\n", b"ROLL 0 3 3 5*18\n"]
    assert [parse_line(line.rstrip(b"\n")) for line in out] == [Hello("cam-0.3"),
                                                                 Roll(0, (3, 3, 5))]
    with pytest.raises(ValueError):
        DiceEmitter(out.append, SeqLease(tmp_path / "s"), protocol=3)


@pytest.mark.parametrize("dice", [(1, 2), (1, 2, 3, 4), (0, 1, 2), (1, 2, 7)])
def test_emitter_refuses_impossible_dice_without_using_a_seq(tmp_path, dice):
    out: list[bytes] = []
    emitter = DiceEmitter(out.append, SeqLease(tmp_path / "s"))
    with pytest.raises(ValueError):
        emitter.roll(dice)
    assert out == []
    assert emitter.roll((1, 2, 3)).seq == 0


def test_pump_through_loop_url_to_the_reader(tmp_path):
    port = serial.serial_for_url("loop://", timeout=0.05)
    events: queue.Queue = queue.Queue()
    complaints = io.StringIO()
    with DiceSensor("loop://", events, opener=lambda _url: port):
        emitter = DiceEmitter(port.write, SeqLease(tmp_path / "s"))
        emitter.hello()
        refused = pump(
            emitter,
            io.StringIO("3 3 5\nrolling\n\n1 2\n4 4 4\nerr tray open\nsix six six\n2 2 2\n"),
            complaints,
        )
        seen: list = []
        deadline = time.monotonic() + 10
        while Roll(2, (2, 2, 2)) not in seen:
            assert time.monotonic() < deadline
            seen.append(events.get(timeout=10))
    assert refused == 2
    assert seen == [
        LinkUp("loop://"),
        Hello("emitter-1", (("proto", "2"),)),
        Roll(0, (3, 3, 5)),
        Rolling(),
        Roll(1, (4, 4, 4)),
        SensorError("tray open"),
        Roll(2, (2, 2, 2)),
    ]
    lines = complaints.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("dice_emitter: input line 4: '1 2'")
    assert lines[1].startswith("dice_emitter: input line 7:")


def test_main_writes_to_a_pty(tmp_path):
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        code = main(
            ["--port", os.ttyname(slave), "--state", str(tmp_path / "s"), "--version", "v9"],
            stdin=io.StringIO("5 5 5\n"),
        )
        assert code == 0
        data = b""
        while data.count(b"\n") < 2 and select.select([master], [], [], 5)[0]:
            data += os.read(master, 4096)
    finally:
        os.close(slave)
        os.close(master)
    assert [parse_line(x) for x in data.splitlines()] == [Hello("v9", (("proto", "2"),)),
                                                               Roll(0, (5, 5, 5))]


def test_main_names_a_missing_port(tmp_path, capsys):
    missing = tmp_path / "ttyUSB4"
    assert main(["--port", str(missing), "--state", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and err.count("\n") == 1
