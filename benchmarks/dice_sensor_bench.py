"""How fast the dice sensor code turns bytes into rolls, beside a bare baseline.

    PYTHONPATH=. python3 benchmarks/dice_sensor_bench.py

A serial line at 115200 baud carries at most ~11,500 bytes/s, about 600 ROLL lines a second,
and a real tray sends about one roll a second: the figures show the headroom.

* parse: ``parse_line`` on good ROLL lines, against a baseline that only splits the line and
  converts the integers (no checks at all);
* assemble+parse: ``LineAssembler.feed`` + ``parse_line`` on a stream in 64-byte chunks,
  against ``bytes.split(b"\\n")`` + the same baseline;
* reader via pty: lines/s through ``DiceSensor`` on a pty (its thread, its queue), against
  one thread doing ``os.read`` + split + the baseline parse on the same kind of pty.
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import time
import tty

from bunco_pi.hardware.dice_sensor import DiceSensor, LinkUp
from bunco_pi.hardware.dice_wire import LineAssembler, Roll, format_message, parse_line

LINES = 20000


def make_lines(n: int) -> list[bytes]:
    rng = random.Random(1)
    return [format_message(Roll(i % 65536, tuple(rng.randint(1, 6) for _ in range(3)))) for i in range(n)]


def baseline_parse(line: bytes) -> tuple[int, ...]:
    return tuple(int(x) for x in line.split(b"*")[0].split()[1:])


def per_second(fn, n: int) -> float:
    start = time.perf_counter()
    fn()
    return n / (time.perf_counter() - start)


def bench_parse(lines: list[bytes]) -> tuple[float, float]:
    bare = [line[:-1] for line in lines]
    ours = per_second(lambda: [parse_line(x) for x in bare], len(bare))
    base = per_second(lambda: [baseline_parse(x) for x in bare], len(bare))
    return ours, base


def bench_assemble(lines: list[bytes]) -> tuple[float, float]:
    stream = b"".join(lines)
    chunks = [stream[i : i + 64] for i in range(0, len(stream), 64)]

    def ours() -> None:
        assembler = LineAssembler()
        for chunk in chunks:
            for item in assembler.feed(chunk):
                parse_line(item)

    def base() -> None:
        for line in stream.split(b"\n"):
            if line:
                baseline_parse(line)

    return per_second(ours, len(lines)), per_second(base, len(lines))


def bench_pty(lines: list[bytes]) -> tuple[float, float]:
    stream = b"".join(lines)

    def ours() -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        events: queue.Queue = queue.Queue()
        with DiceSensor(os.ttyname(slave), events):
            assert isinstance(events.get(timeout=5), LinkUp)
            got = 0
            view = memoryview(stream)
            os.set_blocking(master, False)
            while got < len(lines):
                if view:
                    with contextlib.suppress(BlockingIOError):
                        view = view[os.write(master, view[:4096]) :]
                    drained = False
                    while not drained:
                        try:
                            got += isinstance(events.get_nowait(), Roll)
                        except queue.Empty:
                            drained = True
                else:  # all written: wait for the reader instead of spinning
                    got += isinstance(events.get(timeout=5), Roll)
        os.close(slave)
        os.close(master)

    def base() -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        view = memoryview(stream)
        pending = b""
        parsed = 0
        while parsed < len(lines):
            if view:
                with contextlib.suppress(BlockingIOError):
                    view = view[os.write(master, view[:4096]) :]
            *complete, pending = (pending + os.read(slave, 65536)).split(b"\n")
            for line in complete:
                baseline_parse(line)
                parsed += 1
        os.close(slave)
        os.close(master)

    return per_second(ours, len(lines)), per_second(base, len(lines))


def main() -> None:
    lines = make_lines(LINES)
    rows = [
        ("parse_line", *bench_parse(lines)),
        ("assemble+parse", *bench_assemble(lines)),
        ("reader via pty", *bench_pty(lines)),
    ]
    print(f"{LINES} ROLL lines; figures in lines per second")
    print(f"{'stage':<16} {'bunco-pi':>12} {'baseline':>12} {'ratio':>7}")
    for name, ours, base in rows:
        print(f"{name:<16} {ours:>12,.0f} {base:>12,.0f} {ours / base:>7.2f}")
    print("a 115200-baud line carries at most ~600 ROLL lines per second")


if __name__ == "__main__":
    main()
