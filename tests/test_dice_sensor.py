"""The dice sensor reader, through pyserial's loop:// and through a real pty pair."""

from __future__ import annotations

import fcntl
import os
import queue
import random
import termios
import time
import tty
from collections import Counter
from pathlib import Path

import pytest
import serial

from bunco_pi.errors import UserError
from bunco_pi.hardware.dice_sensor import DiceSensor, LinkDown, LinkUp
from bunco_pi.hardware.dice_wire import (
    Fault,
    Hello,
    Rejected,
    Roll,
    Rolling,
    SensorError,
    checksum,
    format_message,
)

WAIT_S = 10.0


def signed(body: str) -> bytes:
    """A protocol 2 line for any body, even one format_message would refuse."""
    return f"{body}*{checksum(body)}\n".encode("ascii")


def wait_for(events: queue.Queue, predicate, seen: list) -> list:
    """Collect events into ``seen`` until ``predicate(seen)``; bounded by WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while not predicate(seen):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out; events so far: {seen[-10:]!r}")
        try:
            seen.append(events.get(timeout=remaining))
        except queue.Empty:
            continue
    return seen


def rolls_in(seen: list) -> list[Roll]:
    return [e for e in seen if isinstance(e, Roll)]


class NoisyStream:
    """120 good rolls (seq wrapping past 65535) with 100 bad or repeated lines among them."""

    CORRUPTIONS = {
        "bad_checksum": 15,
        "dice_count": 10,
        "bad_face": 10,
        "garbage": 10,
        "too_long": 10,
        "truncated": 10,
        "no_checksum": 10,
        "repeat": 15,
        "stale": 5,
        "unknown": 5,
    }

    def __init__(self, seed: int = 7, first_seq: int = 65480, good: int = 120) -> None:
        rng = random.Random(seed)
        kinds = [k for k, n in self.CORRUPTIONS.items() for _ in range(n)]
        rng.shuffle(kinds)
        self.good: list[Roll] = []
        lines: list[bytes] = []
        slots = sorted(rng.sample(range(1, good), len(kinds) // 2))  # two per chosen slot
        for i in range(good):
            roll = Roll((first_seq + i) % 65536, tuple(rng.randint(1, 6) for _ in range(3)))
            if rng.random() < 0.3:
                lines.append(format_message(Rolling()))
            wire = format_message(roll)
            if rng.random() < 0.5:
                wire = wire[:-1] + b"\r\n"
            lines.append(wire)
            self.good.append(roll)
            while slots and slots[0] == i:
                slots.pop(0)
                for _ in range(2):
                    lines.append(self._corrupt(kinds.pop(), rng))
        assert not kinds
        self.lines = lines
        self.bytes = b"".join(lines)
        self.expected_rejected = {
            Fault.BAD_CHECKSUM: 15,
            Fault.DICE_COUNT: 10,
            Fault.BAD_FACE: 10,
            Fault.GARBAGE: 10,
            Fault.TOO_LONG: 10,
            Fault.NO_CHECKSUM: 20,  # truncated lines end with no checksum
        }
        self.expected_duplicates = 20
        self.expected_unknown = 5

    def _corrupt(self, kind: str, rng: random.Random) -> bytes:
        last = self.good[-1]
        seq = (last.seq + 1) % 65536
        match kind:
            case "bad_checksum":
                good = format_message(Roll(seq, (1, 2, 3)))
                flipped = b"%04X" % (int(good[-5:-1], 16) ^ rng.randint(1, 0xFFFF))
                return good[:-5] + flipped + b"\n"
            case "dice_count":
                return signed(f"ROLL {seq} " + " ".join(["2"] * rng.choice((1, 2, 4, 5))))
            case "bad_face":
                return signed(f"ROLL {seq} 3 {rng.choice((0, 7))} 4")
            case "garbage":
                noise = bytes(rng.choice((0, 3, 9, 0x1B, 0x80, 0xFF)) for _ in range(3))
                return noise + format_message(Roll(seq, (1, 1, 1)))[: rng.randint(0, 8)] + b"\n"
            case "too_long":
                return signed(f"ROLL {seq} 1 2 3 pad=" + "x" * rng.randint(80, 300))
            case "truncated":
                return format_message(Roll(seq, (4, 5, 6)))[: rng.randint(4, 14)] + b"\n"
            case "no_checksum":
                return f"ROLL {seq} 6 6 6\n".encode()
            case "repeat":
                return format_message(last)
            case "stale":
                older = self.good[max(0, len(self.good) - rng.randint(2, 20))]
                return format_message(Roll(older.seq, (6, 5, 4)))
            case "unknown":
                return signed(f"TILT {rng.randint(0, 90)}")
        raise AssertionError(kind)

    def chunks(self, rng: random.Random):
        data = self.bytes
        pos = 0
        while pos < len(data):
            size = rng.randint(1, 64)
            yield data[pos : pos + size]
            pos += size


def assert_stream_result(sensor: DiceSensor, seen: list, stream: NoisyStream, fences: int) -> None:
    """Exactly the good rolls, once each and in order; every bad line counted by kind."""
    assert rolls_in(seen) == stream.good
    faults = Counter(e.fault for e in seen if isinstance(e, Rejected))
    assert faults == stream.expected_rejected
    stats = sensor.stats()
    assert stats.rolls == len(stream.good) + fences
    assert stats.duplicates == stream.expected_duplicates
    assert stats.unknown == stream.expected_unknown
    assert dict(stats.rejected) == {f.value: n for f, n in stream.expected_rejected.items()}
    assert stats.malformed == 75
    rolling = sum(1 for line in stream.lines if line.startswith(b"ROLLING"))
    assert stats.good == len(stream.good) + fences + rolling
    assert sum(isinstance(e, Rolling) for e in seen) == rolling


def test_noisy_stream_is_what_the_test_says_it_is():
    stream = NoisyStream()
    assert len(stream.good) == 120
    seqs = [r.seq for r in stream.good]
    assert 65535 in seqs and 0 in seqs  # the stream wraps
    # Every corruption is one line and 100 of them are there.
    assert len(stream.lines) - len(stream.good) - stream.bytes.count(b"ROLLING*") == 100


# --- loop:// ----------------------------------------------------------------------------------


def test_noisy_stream_through_loop_url():
    stream = NoisyStream(seed=1)
    port = serial.serial_for_url("loop://", timeout=0.05)
    events: queue.Queue = queue.Queue()
    sensor = DiceSensor("loop://", events, opener=lambda _url: port)
    seen: list = []
    with sensor:
        wait_for(events, lambda s: LinkUp("loop://") in s, seen)
        for chunk in stream.chunks(random.Random(2)):
            port.write(chunk)
        wait_for(events, lambda s: len(rolls_in(s)) >= len(stream.good), seen)
        # A trailing repeat must not add a roll: send one more good roll as a fence.
        port.write(format_message(stream.good[-1]))
        fence = Roll((stream.good[-1].seq + 1) % 65536, (2, 2, 2))
        port.write(format_message(fence))
        wait_for(events, lambda s: fence in s, seen)
    seen.remove(fence)
    wait_for(events, lambda s: isinstance(s[-1], LinkDown), seen)
    assert seen[0] == LinkUp("loop://")
    assert seen[-1] == LinkDown("loop://", "stopped")
    stream.expected_duplicates += 1
    assert_stream_result(sensor, seen, stream, fences=1)


def test_every_event_type_reaches_a_callback_sink():
    port = serial.serial_for_url("loop://", timeout=0.05)
    got: list = []
    sensor = DiceSensor("loop://", got.append, opener=lambda _url: port)
    with sensor:
        port.write(
            format_message(Hello("1.2.3"))
            + format_message(Rolling())
            + format_message(Roll(4, (1, 5, 6)))
            + format_message(SensorError("no display"))
            + b"ROLL 5 1 1 1*0000\n"
        )
        deadline = time.monotonic() + WAIT_S
        while len(got) < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert got == [
        LinkUp("loop://"),
        Hello("1.2.3"),
        Rolling(),
        Roll(4, (1, 5, 6)),
        SensorError("no display"),
        Rejected(Fault.BAD_CHECKSUM, b"ROLL 5 1 1 1*0000"),
        LinkDown("loop://", "stopped"),
    ]


def test_a_sink_that_raises_does_not_stop_the_reader():
    port = serial.serial_for_url("loop://", timeout=0.05)
    got: queue.Queue = queue.Queue()

    def sink(event):
        if isinstance(event, Hello):
            raise RuntimeError("owner bug")
        got.put(event)

    with DiceSensor("loop://", sink, opener=lambda _url: port):
        port.write(format_message(Hello("x")) + format_message(Roll(1, (2, 3, 4))))
        seen = wait_for(got, lambda s: Roll(1, (2, 3, 4)) in s, [])
    assert Hello("x") not in seen


def test_a_reader_bug_is_reported_as_link_down_not_a_silent_dead_thread():
    port = serial.serial_for_url("loop://", timeout=0.05)

    def broken_read(_size=1):
        raise RuntimeError("bug")

    port.read = broken_read
    events: queue.Queue = queue.Queue()
    with DiceSensor("loop://", events, opener=lambda _url: port):
        seen = wait_for(events, lambda s: len(s) >= 2, [])
    assert seen == [LinkUp("loop://"), LinkDown("loop://", "reader crashed: bug")]


def test_last_seq_carries_the_baseline_across_a_restart():
    port = serial.serial_for_url("loop://", timeout=0.05)
    events: queue.Queue = queue.Queue()
    with DiceSensor("loop://", events, last_seq=41, opener=lambda _url: port) as sensor:
        port.write(format_message(Roll(41, (1, 1, 1))) + format_message(Roll(42, (2, 2, 2))))
        seen = wait_for(events, lambda s: rolls_in(s), [])
    assert rolls_in(seen) == [Roll(42, (2, 2, 2))]
    assert sensor.stats().duplicates == 1


def test_stats_is_a_snapshot():
    port = serial.serial_for_url("loop://", timeout=0.05)
    events: queue.Queue = queue.Queue()
    with DiceSensor("loop://", events, opener=lambda _url: port) as sensor:
        before = sensor.stats()
        port.write(b"junk\n" + format_message(Roll(1, (1, 2, 3))))
        wait_for(events, lambda s: rolls_in(s), [])
        after = sensor.stats()
    assert (before.rolls, before.malformed) == (0, 0)
    assert (after.rolls, dict(after.rejected)) == (1, {"no_checksum": 1})
    with pytest.raises(TypeError):
        after.rejected["no_checksum"] = 0  # type: ignore[index]


def test_missing_port_at_start_is_a_one_line_user_error(tmp_path):
    port = tmp_path / "ttyACM9"
    with pytest.raises(UserError) as caught:
        DiceSensor(str(port), queue.Queue()).start()
    message = str(caught.value)
    assert str(port) in message
    assert "plug the sensor in" in message
    assert "\n" not in message


def test_a_port_another_reader_holds_is_a_user_error_saying_so(usb):
    usb.plug()
    with DiceSensor(str(usb.link), queue.Queue()), pytest.raises(UserError) as caught:
        DiceSensor(str(usb.link), queue.Queue()).start()
    assert "another program is reading this port" in str(caught.value)
    assert str(usb.link) in str(caught.value)


def test_permission_denied_names_the_dialout_group():
    def opener(_port):
        raise serial.SerialException(13, "could not open port /dev/ttyACM0: [Errno 13] Permission denied")

    with pytest.raises(UserError, match="dialout group"):
        DiceSensor("/dev/ttyACM0", queue.Queue(), opener=opener).start()


# --- a real pty pair ------------------------------------------------------------------------


class FakeUsbSerial:
    """A pty pair behind a stable symlink, like /dev/serial/by-id/...: plug and unplug it."""

    def __init__(self, link: Path) -> None:
        self.link = link
        self.master: int | None = None

    def plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        tmp = self.link.with_suffix(".new")
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, self.link)
        self.master, self._slave = master, slave

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.master, view) :]

    def drained(self) -> bool:
        """True when the reader has read every byte written (the pty's input queue is empty)."""
        waiting = fcntl.ioctl(self._slave, termios.FIONREAD, b"\0\0\0\0")
        return int.from_bytes(waiting, "little") == 0

    def wait_drained(self) -> None:
        deadline = time.monotonic() + WAIT_S
        while not self.drained():
            assert time.monotonic() < deadline, "the reader never drained the pty"
            time.sleep(0.01)

    def unplug(self) -> None:
        os.close(self._slave)
        os.close(self.master)
        self.master = None

    def close(self) -> None:
        if self.master is not None:
            self.unplug()


@pytest.fixture
def usb(tmp_path):
    device = FakeUsbSerial(tmp_path / "dice-sensor")
    yield device
    device.close()


def test_noisy_stream_through_a_pty(usb):
    stream = NoisyStream(seed=3, first_seq=65530)
    usb.plug()
    events: queue.Queue = queue.Queue()
    seen: list = []
    with DiceSensor(str(usb.link), events) as sensor:
        wait_for(events, lambda s: s, seen)
        for chunk in stream.chunks(random.Random(4)):
            usb.write(chunk)
        wait_for(events, lambda s: len(rolls_in(s)) >= len(stream.good), seen)
        usb.wait_drained()
        # Repeats at the very end must not sneak in after the last good roll.
        usb.write(format_message(stream.good[-1]) + format_message(stream.good[-2]))
        usb.wait_drained()
        fence = Roll((stream.good[-1].seq + 1) % 65536, (6, 6, 6))
        usb.write(format_message(fence))
        wait_for(events, lambda s: fence in s, seen)
    wait_for(events, lambda s: isinstance(s[-1], LinkDown), seen)
    seen.remove(fence)
    stream.expected_duplicates += 2
    assert seen[0] == LinkUp(str(usb.link))
    assert_stream_result(sensor, seen, stream, fences=1)


def test_unplug_and_replug_reopens_the_port(usb):
    usb.plug()
    events: queue.Queue = queue.Queue()
    seen: list = []
    with DiceSensor(str(usb.link), events) as sensor:
        wait_for(events, lambda s: s, seen)
        first = [Roll(s, (s % 6 + 1, 2, 3)) for s in range(1, 6)]
        usb.write(b"".join(format_message(r) for r in first) + b"ROLL 6 1")
        wait_for(events, lambda s: len(rolls_in(s)) == 5, seen)
        usb.wait_drained()
        usb.unplug()
        wait_for(events, lambda s: isinstance(s[-1], LinkDown), seen)
        time.sleep(0.3)  # several reopen attempts fail while nothing is plugged in
        usb.plug()
        wait_for(events, lambda s: s.count(LinkUp(str(usb.link))) == 2, seen)
        # The sensor rebooted: HELLO, then its next seq skips ahead (reserved before reset);
        # a repeat of the last roll before the reset is still dropped.
        usb.write(
            format_message(Hello("1.0.0"))
            + format_message(first[-1])
            + format_message(Roll(70, (4, 4, 4)))
            + format_message(Roll(71, (5, 5, 5)))
        )
        wait_for(events, lambda s: Roll(71, (5, 5, 5)) in s, seen)
        usb.unplug()
        wait_for(events, lambda s: isinstance(s[-1], LinkDown), seen)
        # Plugged back while the table runs: no HELLO heard, a wiped sensor counting from 0.
        usb.plug()
        # pyserial flushes the input on open, like a real USB sensor that cannot send
        # before the host opens it: write once the link is up.
        wait_for(events, lambda s: s.count(LinkUp(str(usb.link))) == 3, seen)
        usb.write(format_message(Roll(0, (1, 1, 2))))
        wait_for(events, lambda s: Roll(0, (1, 1, 2)) in s, seen)
    link = str(usb.link)
    assert seen[: len(first) + 1] == [LinkUp(link), *first]
    rest = seen[len(first) + 1 :]
    assert rest[0] == Rejected(Fault.PARTIAL, b"ROLL 6 1")
    assert isinstance(rest[1], LinkDown)
    assert rest[2:6] == [LinkUp(link), Hello("1.0.0"), Roll(70, (4, 4, 4)), Roll(71, (5, 5, 5))]
    assert isinstance(rest[6], LinkDown)
    assert rest[7:9] == [LinkUp(link), Roll(0, (1, 1, 2))]
    stats = sensor.stats()
    # Two unplugs and the final stop.
    assert (stats.rolls, stats.duplicates, stats.link_downs) == (8, 1, 3)


def test_keep_trying_waits_for_a_sensor_plugged_in_later(usb):
    events: queue.Queue = queue.Queue()
    seen: list = []
    link = str(usb.link)
    with DiceSensor(link, events, keep_trying=True):
        wait_for(events, lambda s: s, seen)
        assert isinstance(seen[0], LinkDown) and seen[0].port == link
        time.sleep(0.2)
        usb.plug()
        wait_for(events, lambda s: LinkUp(link) in s, seen)
        usb.write(format_message(Roll(9, (3, 3, 3))))
        wait_for(events, lambda s: rolls_in(s), seen)
    # One LinkDown while absent, not one per retry.
    assert seen[:3] == [seen[0], LinkUp(link), Roll(9, (3, 3, 3))]


def test_stop_ends_the_thread_and_closes_the_port(usb):
    usb.plug()
    sensor = DiceSensor(str(usb.link), queue.Queue()).start()
    sensor.stop()
    assert not sensor._thread.is_alive()
    # Closed and unlocked: another reader can open it now.
    again = DiceSensor(str(usb.link), queue.Queue()).start()
    again.stop()


def test_a_protocol_2_link_refuses_xor_lines_until_another_sensor_is_plugged_in(usb):
    usb.plug()
    events: queue.Queue = queue.Queue()
    seen: list = []
    link = str(usb.link)
    hello_v2 = Hello("2.0.0", (("proto", "2"),))
    with DiceSensor(link, events) as sensor:
        wait_for(events, lambda s: s, seen)
        assert sensor.stats().protocol is None
        # Noise that happens to carry a valid XOR must not pass once the sensor spoke v2.
        usb.write(format_message(hello_v2) + format_message(Roll(1, (1, 2, 3)))
                  + format_message(Roll(2, (6, 6, 6)), protocol=1)
                  + format_message(Roll(3, (2, 2, 2))))
        wait_for(events, lambda s: Roll(3, (2, 2, 2)) in s, seen)
        assert sensor.stats().protocol == 2
        usb.wait_drained()
        usb.unplug()
        wait_for(events, lambda s: isinstance(s[-1], LinkDown), seen)
        usb.plug()  # an older tray, protocol 1, on the same port
        wait_for(events, lambda s: s.count(LinkUp(link)) == 2, seen)
        usb.write(format_message(Hello("1.0.0"), protocol=1)
                  + format_message(Roll(9, (4, 5, 6)), protocol=1))
        wait_for(events, lambda s: Roll(9, (4, 5, 6)) in s, seen)
        assert sensor.stats().protocol == 1
    old = format_message(Roll(2, (6, 6, 6)), protocol=1)[:-1]
    assert seen[:5] == [LinkUp(link), hello_v2, Roll(1, (1, 2, 3)),
                        Rejected(Fault.OLD_CHECKSUM, old), Roll(3, (2, 2, 2))]
    assert seen[6:9] == [LinkUp(link), Hello("1.0.0"), Roll(9, (4, 5, 6))]
    assert dict(sensor.stats().rejected) == {"old_checksum": 1}
