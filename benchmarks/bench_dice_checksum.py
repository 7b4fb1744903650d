"""How much line noise each dice sensor protocol lets through, and what the CRC costs.

    PYTHONPATH=. python3 benchmarks/bench_dice_checksum.py

Protocol 1 (an XOR of the bytes, two hex digits) is the baseline, measured side by side with
protocol 2 (CRC-16/CCITT-FALSE, four hex digits) on the same ROLL lines and the same noise:

* two-bit: 10,000 lines, each with two random bits flipped;
* multi-bit: 100,000 lines, each with 2..8 scattered bit flips, a 2..24-bit burst, or 2..4
  bytes replaced by other printable characters.

A corrupted line is *taken* when the reader's framing and parser hand back a ``Roll``
(the reader of a protocol 2 link, which refuses XOR lines once it has heard protocol 2);
*a different roll* when that roll is not the one that was sent.  Speed is ``parse_line`` on
good lines, in lines per second.
"""

from __future__ import annotations

import random
import time

from bunco_pi.hardware.dice_wire import (
    LineAssembler,
    LineParser,
    Roll,
    format_message,
    parse_line,
)

TWO_BIT = 10_000
MULTI_BIT = 100_000
SPEED_LINES = 20_000


def make_lines(rng: random.Random, n: int, protocol: int) -> list[tuple[bytes, Roll]]:
    out = []
    for i in range(n):
        extensions = (("src", "cam"), ("conf", "0.97")) if i % 3 == 0 else ()
        dice = (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))
        roll = Roll(rng.randrange(65536), dice, extensions)
        out.append((format_message(roll, protocol)[:-1], roll))
    return out


def flip(line: bytes, bits: list[int]) -> bytes:
    mask = 0
    for bit in bits:
        mask ^= 1 << bit
    return (int.from_bytes(line, "big") ^ mask).to_bytes(len(line), "big")


def two_bit(rng: random.Random, line: bytes) -> bytes:
    return flip(line, rng.sample(range(len(line) * 8), 2))


def multi_bit(rng: random.Random, line: bytes) -> bytes:
    kind = rng.randrange(3)
    if kind == 0:
        return flip(line, rng.sample(range(len(line) * 8), rng.randint(2, 8)))
    if kind == 1:
        length = rng.randint(2, 24)
        start = rng.randrange(len(line) * 8 - length + 1)
        pattern = rng.getrandbits(length) | 1 | 1 << (length - 1)
        return flip(line, [start + i for i in range(length) if pattern >> i & 1])
    data = bytearray(line)
    for pos in rng.sample(range(len(data)), rng.randint(2, 4)):
        other = rng.randrange(0x20, 0x7E)
        data[pos] = other + 1 if other >= data[pos] else other
    return bytes(data)


def noise_through_reader(protocol: int, n: int, corrupt, seed: int) -> tuple[int, int]:
    """(taken as a roll, taken as a different roll) out of ``n`` corrupted lines."""
    rng = random.Random(seed)
    lines = make_lines(rng, 500, protocol)
    assembler = LineAssembler()
    link = LineParser()
    link.parse(lines[0][0])  # the link has heard this sensor's protocol
    taken = different = 0
    for i in range(n):
        line, sent = lines[i % len(lines)]
        for item in assembler.feed(corrupt(rng, line) + b"\r\n"):
            if isinstance(item, bytes) and isinstance(got := link.parse(item), Roll):
                taken += 1
                different += got != sent
    return taken, different


def parse_speed(protocol: int) -> float:
    lines = [line for line, _ in make_lines(random.Random(1), SPEED_LINES, protocol)]
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for line in lines:
            parse_line(line)
        best = min(best, time.perf_counter() - start)
    return len(lines) / best


def main() -> None:
    print("ROLL lines with random noise, through the reader's framing and parser")
    print(f"{'measure':<48} {'v2 (CRC-16)':>12} {'v1 (XOR)':>12} {'v2/v1':>7}")
    for label, n, corrupt, seed in (("two-bit", TWO_BIT, two_bit, 2),
                                    ("multi-bit", MULTI_BIT, multi_bit, 3)):
        v2 = noise_through_reader(2, n, corrupt, seed)
        v1 = noise_through_reader(1, n, corrupt, seed)
        for what, index in (("taken as a roll", 0), ("taken as a different roll", 1)):
            ratio = v2[index] / v1[index] if v1[index] else float("nan")
            print(f"{f'{label} of {n:,}: {what}':<48} {v2[index]:>12,} {v1[index]:>12,} "
                  f"{ratio:>7.3f}")
    v2_speed, v1_speed = parse_speed(2), parse_speed(1)
    print(f"{'parse_line, good lines per second':<48} {v2_speed:>12,.0f} {v1_speed:>12,.0f} "
          f"{v2_speed / v1_speed:>7.2f}")
    print("a 115200-baud line carries at most ~600 ROLL lines per second")


if __name__ == "__main__":
    main()
