"""A reference dice sensor: anything that knows three dice can speak the protocol with it.

A camera box, a bridge for Bluetooth smart dice, or a test rig makes a :class:`DiceEmitter`
over a serial port (or any ``write(bytes)``) and calls :meth:`~DiceEmitter.roll`; the
emitter numbers the rolls, keeps the numbers across restarts in a small state file, and
writes well-formed lines.  From a shell or another language, pipe lines into it:

    printf '3 3 5\\nrolling\\n1 1 1\\n' | python3 -m bunco_pi.hardware.dice_emitter \\
        --port /dev/ttyGS0 --state ~/.local/state/dice-emitter.seq

Each input line is three faces (``3 3 5``), ``rolling``, or ``err <text>``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from bunco_pi.errors import UserError
from bunco_pi.hardware.dice_wire import (
    PROTOCOL,
    PROTOCOL_EXTENSION,
    SEQ_MODULUS,
    Extensions,
    Hello,
    Roll,
    Rolling,
    SensorError,
    format_message,
)

SEQ_BLOCK = 64
DEFAULT_VERSION = "emitter-1"


class SeqLease:
    """Seqs that are never reused across restarts, with one file write per SEQ_BLOCK rolls.

    The file holds the first seq not yet leased.  Taking the first seq of a block writes
    the block's end first (new file, fsync, rename over the old, fsync the directory), so a
    crash at any point leaves a number no smaller than any seq already sent.  The firmware
    does the same on the Pico (firmware/bunco_dice/logic.py).
    """

    def __init__(self, path: Path, block: int = SEQ_BLOCK) -> None:
        self.path = path
        self._block = block
        self._next = self._load()
        self._left = 0

    def _load(self) -> int:
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return 0
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"dice emitter: cannot read seq file {self.path}: {exc}") from None
        if not (text.isdigit() and int(text) < SEQ_MODULUS):
            raise UserError(
                f"dice emitter: seq file {self.path} holds {text[:20]!r}, not 0..65535: "
                "delete it to count from 0"
            )
        return int(text)

    def take(self) -> int:
        if self._left == 0:
            self._save((self._next + self._block) % SEQ_MODULUS)
            self._left = self._block
        seq = self._next
        self._next = (self._next + 1) % SEQ_MODULUS
        self._left -= 1
        return seq

    def _save(self, value: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".new")
        with open(tmp, "w", encoding="ascii") as f:
            f.write(f"{value}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


class DiceEmitter:
    """Writes dice sensor lines through ``write``; one thread at a time, please.

    ``protocol=1`` writes the old XOR checksum, for a table whose bunco-pi predates
    protocol 2 (it rejects every protocol 2 line as ``no_checksum``).
    """

    def __init__(
        self,
        write: Callable[[bytes], object],
        seqs: SeqLease,
        version: str = DEFAULT_VERSION,
        protocol: int = PROTOCOL,
    ) -> None:
        if protocol not in (1, 2):
            raise ValueError(f"protocol {protocol}: use 1 or 2")
        self._write = write
        self._seqs = seqs
        self.version = version
        self.protocol = protocol

    def hello(self) -> None:
        """Send on start and whenever the link may have been reopened."""
        announce = ((PROTOCOL_EXTENSION, str(self.protocol)),) if self.protocol > 1 else ()
        self._send(Hello(self.version, announce))

    def rolling(self) -> None:
        self._send(Rolling())

    def roll(self, dice: Iterable[int], extensions: Extensions = ()) -> Roll:
        """Number and send one settled roll; returns what was sent."""
        faces = tuple(dice)
        if len(faces) != 3 or any(f not in range(1, 7) for f in faces):
            raise ValueError(f"{faces} are not three faces 1..6")
        message = Roll(self._seqs.take(), (faces[0], faces[1], faces[2]), extensions)
        self._send(message)
        return message

    def error(self, text: str) -> None:
        clean = "".join(c if " " <= c <= "~" and c != "*" else "?" for c in text).strip()
        self._send(SensorError(clean[:70] or "unknown error"))

    def _send(self, message: Hello | Rolling | Roll | SensorError) -> None:
        self._write(format_message(message, self.protocol))


def pump(emitter: DiceEmitter, lines: TextIO, complain: TextIO) -> int:
    """Turn text lines into protocol lines; returns how many input lines were refused."""
    refused = 0
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        word = text.split()[0].lower()
        try:
            if word == "rolling":
                emitter.rolling()
            elif word == "err":
                emitter.error(text[3:].strip())
            else:
                emitter.roll(int(t) for t in text.split())
        except ValueError:
            refused += 1
            print(
                f"dice_emitter: input line {number}: {text[:40]!r} is not three faces 1..6, "
                "'rolling' or 'err <text>'",
                file=complain,
                flush=True,
            )
    return refused


def main(argv: list[str] | None = None, stdin: TextIO = sys.stdin) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m bunco_pi.hardware.dice_emitter",
        description="Send dice read from stdin as serial dice sensor lines.",
    )
    parser.add_argument("--port", required=True, help="serial path or pyserial URL")
    parser.add_argument("--state", type=Path, required=True, help="file that keeps the seq")
    parser.add_argument("--version", default=DEFAULT_VERSION, help="sent in HELLO")
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=PROTOCOL,
                        help="2 (CRC-16, the default) or 1 (XOR, for a table with an older "
                        "bunco-pi)")
    args = parser.parse_args(argv)
    import serial

    try:
        seqs = SeqLease(args.state)
        try:
            port = serial.serial_for_url(args.port, baudrate=115200)
        except (serial.SerialException, ValueError) as exc:
            raise UserError(f"dice emitter: cannot open {args.port}: {exc}") from None
    except UserError as exc:
        print(exc, file=sys.stderr)
        return 2
    with port:
        emitter = DiceEmitter(port.write, seqs, args.version, args.protocol)
        emitter.hello()
        pump(emitter, stdin, sys.stderr)
        port.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
