"""The serial dice sensor's line protocol: pure code, no ports, no threads, no clock.

A sensor (the Pico firmware, a camera box, a Bluetooth bridge) sends ASCII lines such as
``ROLL 17 3 3 5*2A``.  This module turns raw bytes into typed, immutable messages and back:

* :class:`LineAssembler` cuts a byte stream into lines and rejects over-long or garbage ones;
* :func:`parse_line` turns one line into a message or a :class:`Rejected` (it never raises);
* :func:`format_message` is the inverse, for emitters and tests;
* :class:`SeqFilter` makes a repeated ``ROLL`` harmless.

docs/dice-sensor-protocol.md is the protocol in prose; keep the two in step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

MAX_LINE_BYTES = 80
"""Longest line a reader accepts, counting the ``*HH`` checksum but not the ``\\r\\n``."""

SEQ_MODULUS = 65536
FACES = range(1, 7)

# Printable ASCII: the only bytes a line may hold (space included, tab and controls not).
_PRINTABLE = frozenset(range(0x20, 0x7F))
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")


class Fault(enum.StrEnum):
    """Why a line was rejected; the value is the counter's name."""

    GARBAGE = "garbage"  # a byte outside printable ASCII
    TOO_LONG = "too_long"  # more than MAX_LINE_BYTES before the newline
    PARTIAL = "partial"  # bytes with no newline when the link went down
    NO_CHECKSUM = "no_checksum"  # the line does not end in *HH
    BAD_CHECKSUM = "bad_checksum"  # *HH does not match the bytes before it
    DICE_COUNT = "dice_count"  # ROLL without exactly three dice
    BAD_FACE = "bad_face"  # a die that is not 1..6
    BAD_SEQ = "bad_seq"  # seq missing, not a number, or above 65535
    BAD_FIELD = "bad_field"  # any other field that breaks the grammar


Extensions = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Hello:
    """The sensor (re)started or announces itself: ``HELLO <fw-version>``."""

    version: str
    extensions: Extensions = ()


@dataclass(frozen=True)
class Rolling:
    """Dice are tumbling; a ``ROLL`` should follow."""

    extensions: Extensions = ()


@dataclass(frozen=True)
class Roll:
    """One settled roll of three dice, numbered by the sensor."""

    seq: int
    dice: tuple[int, int, int]
    extensions: Extensions = ()


@dataclass(frozen=True)
class SensorError:
    """The sensor reports a problem in its own words: ``ERR <text>``."""

    text: str


@dataclass(frozen=True)
class Unknown:
    """A well-formed line of a type this reader does not know: ignored, counted."""

    kind: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class Rejected:
    """A line that breaks the protocol: counted and reported, never scored."""

    fault: Fault
    line: bytes = field(default=b"")


Message = Hello | Rolling | Roll | SensorError | Unknown
Parsed = Message | Rejected


def checksum(body: bytes | str) -> str:
    """The two uppercase hex digits of the XOR of every byte of ``body``."""
    data = body.encode("ascii") if isinstance(body, str) else body
    value = 0
    for byte in data:
        value ^= byte
    return f"{value:02X}"


# --- parsing -------------------------------------------------------------------------------


def parse_line(line: bytes | str) -> Parsed:
    """One line (without its ``\\n``; a trailing ``\\r`` is dropped) to a message.

    Never raises: anything that is not a valid message comes back as :class:`Rejected`.
    """
    if isinstance(line, str):
        try:
            line = line.encode("ascii")
        except UnicodeEncodeError:
            return Rejected(Fault.GARBAGE, line.encode("utf-8", "replace")[:MAX_LINE_BYTES])
    if line.endswith(b"\r"):
        line = line[:-1]
    if len(line) > MAX_LINE_BYTES:
        return Rejected(Fault.TOO_LONG, line[:MAX_LINE_BYTES])
    if not _PRINTABLE.issuperset(line):
        return Rejected(Fault.GARBAGE, line)
    if len(line) < 3 or line[-3] != ord("*") or not _HEX_DIGITS.issuperset(line[-2:]):
        return Rejected(Fault.NO_CHECKSUM, line)
    body = line[:-3]
    if checksum(body) != line[-2:].decode("ascii").upper():
        return Rejected(Fault.BAD_CHECKSUM, line)
    text = body.decode("ascii")
    kind, _, rest = text.partition(" ")
    if not kind:
        return Rejected(Fault.BAD_FIELD, line)
    parser = _PARSERS.get(kind)
    if parser is None:
        return Unknown(kind, tuple(rest.split()))
    result = parser(rest)
    if isinstance(result, Fault):
        return Rejected(result, line)
    return result


def _split_extensions(tokens: list[str]) -> Extensions | None:
    """``name=value`` tokens after the defined fields; None if any token is not one."""
    pairs = []
    for token in tokens:
        name, eq, value = token.partition("=")
        if not eq or not name:
            return None
        pairs.append((name, value))
    return tuple(pairs)


def _parse_hello(rest: str) -> Hello | Fault:
    tokens = rest.split()
    if not tokens or "=" in tokens[0]:
        return Fault.BAD_FIELD
    extensions = _split_extensions(tokens[1:])
    if extensions is None:
        return Fault.BAD_FIELD
    return Hello(tokens[0], extensions)


def _parse_rolling(rest: str) -> Rolling | Fault:
    extensions = _split_extensions(rest.split())
    if extensions is None:
        return Fault.BAD_FIELD
    return Rolling(extensions)


def _parse_roll(rest: str) -> Roll | Fault:
    tokens = rest.split()
    if not tokens:
        return Fault.BAD_SEQ
    seq_text = tokens[0]
    if not (seq_text.isdigit() and len(seq_text) <= 5 and int(seq_text) < SEQ_MODULUS):
        return Fault.BAD_SEQ
    # Dice are the bare tokens after the seq; extensions (name=value) may follow them.
    dice_tokens = []
    for token in tokens[1:]:
        if "=" in token:
            break
        dice_tokens.append(token)
    if len(dice_tokens) != 3:
        return Fault.DICE_COUNT
    extensions = _split_extensions(tokens[1 + len(dice_tokens) :])
    if extensions is None:
        return Fault.BAD_FIELD
    faces = []
    for token in dice_tokens:
        if not token.isdigit() or len(token) > 1 or int(token) not in FACES:
            return Fault.BAD_FACE
        faces.append(int(token))
    return Roll(int(seq_text), (faces[0], faces[1], faces[2]), extensions)


def _parse_error(rest: str) -> SensorError | Fault:
    text = rest.strip()
    if not text:
        return Fault.BAD_FIELD
    return SensorError(text)


_PARSERS = {
    "HELLO": _parse_hello,
    "ROLLING": _parse_rolling,
    "ROLL": _parse_roll,
    "ERR": _parse_error,
}


# --- formatting ----------------------------------------------------------------------------


def format_message(message: Message) -> bytes:
    """The wire form of ``message``, checksum and ``\\n`` included.

    Raises ValueError for a message no reader would accept (a programming error in an
    emitter, not a user mistake).
    """
    body = _body(message)
    line = f"{body}*{checksum(body)}"
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"line is {len(line)} bytes, the limit is {MAX_LINE_BYTES}: {line!r}")
    encoded = line.encode("ascii", "strict")
    if not _PRINTABLE.issuperset(encoded):
        raise ValueError(f"line holds a byte outside printable ASCII: {line!r}")
    return encoded + b"\n"


def _body(message: Message) -> str:
    match message:
        case Hello(version=version, extensions=extensions):
            _check_token("version", version)
            return _join("HELLO", version, extensions)
        case Rolling(extensions=extensions):
            return _join("ROLLING", None, extensions)
        case Roll(seq=seq, dice=dice, extensions=extensions):
            if not 0 <= seq < SEQ_MODULUS:
                raise ValueError(f"seq {seq} is outside 0..65535")
            if len(dice) != 3 or any(d not in FACES for d in dice):
                raise ValueError(f"dice {dice} are not three faces 1..6")
            return _join("ROLL", f"{seq} {dice[0]} {dice[1]} {dice[2]}", extensions)
        case SensorError(text=text):
            if not text.strip() or "*" in text:
                raise ValueError(f"error text {text!r} is empty or holds '*'")
            return f"ERR {text}"
        case Unknown(kind=kind, fields=fields):
            _check_token("kind", kind)
            for item in fields:
                if not item or " " in item or "*" in item:
                    raise ValueError(f"field {item!r} is empty or holds a space or '*'")
            return " ".join((kind, *fields))
    raise TypeError(f"not a dice sensor message: {message!r}")


def _join(kind: str, fields: str | None, extensions: Extensions) -> str:
    parts = [kind] if fields is None else [kind, fields]
    for name, value in extensions:
        _check_token("extension name", name)
        if " " in value or "*" in value:
            raise ValueError(f"extension value {value!r} holds a space or '*'")
        parts.append(f"{name}={value}")
    return " ".join(parts)


def _check_token(what: str, token: str) -> None:
    if not token or any(c in token for c in " =*"):
        raise ValueError(f"{what} {token!r} is empty or holds a space, '=' or '*'")


# --- framing -------------------------------------------------------------------------------


class LineAssembler:
    """Cuts a byte stream into lines; rejects lines that are too long or hold garbage.

    ``feed`` returns, in order, each complete line (``bytes``, without ``\\r\\n``) and a
    :class:`Rejected` for each line it threw away.  Memory stays bounded: an over-long line
    is dropped as it arrives, and only its first ``max_len`` bytes are kept for the report.
    Blank lines are skipped silently (a serial console sends them freely).
    """

    def __init__(self, max_len: int = MAX_LINE_BYTES) -> None:
        self._max_len = max_len
        self._buffer = bytearray()
        self._overflowed = False

    def feed(self, data: bytes) -> list[bytes | Rejected]:
        out: list[bytes | Rejected] = []
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline
            self._append(data[start:end])
            if newline < 0:
                break
            out.extend(self._finish())
            start = newline + 1
        return out

    def flush(self) -> list[Rejected]:
        """The link went down: an unterminated line can never complete, so report it."""
        pending = bytes(self._buffer)
        overflowed = self._overflowed
        self._buffer.clear()
        self._overflowed = False
        if overflowed:
            return [Rejected(Fault.TOO_LONG, pending)]
        return [Rejected(Fault.PARTIAL, pending)] if pending else []

    def _append(self, chunk: bytes) -> None:
        # +1 leaves room for the '\r' a writer may send before '\n'.
        room = self._max_len + 1 - len(self._buffer)
        if len(chunk) > room:
            self._overflowed = True
        if room > 0:
            self._buffer += chunk[:room]

    def _finish(self) -> list[bytes | Rejected]:
        line = bytes(self._buffer)
        overflowed = self._overflowed
        self._buffer.clear()
        self._overflowed = False
        if line.endswith(b"\r"):
            line = line[:-1]
        if overflowed or len(line) > self._max_len:
            return [Rejected(Fault.TOO_LONG, line[: self._max_len])]
        if not line:
            return []
        if not _PRINTABLE.issuperset(line):
            return [Rejected(Fault.GARBAGE, line)]
        return [line]


# --- de-duplication --------------------------------------------------------------------------


class SeqFilter:
    """Decides whether a ``ROLL`` is new or a repeat, from its seq alone.

    The rule (serial-number arithmetic, as in RFC 1982, on 0..65535):

    * the first roll ever seen is new;
    * a roll whose seq is 1..32767 ahead of the last accepted one (modulo 65536, so
      65535 -> 0 is one step ahead) is new; gaps are fine (a sensor skips seqs it had
      reserved before a reset);
    * the same seq again is a repeat;
    * a seq *behind* the last accepted one is a stale repeat, unless the sensor said HELLO
      (or the port was reopened) since that roll was accepted: then the sensor may be a new
      or wiped one counting from anywhere, so the roll is new, and is the new baseline.

    Give ``last_seq`` to carry the baseline across a restart of the reader.
    """

    def __init__(self, last_seq: int | None = None) -> None:
        self._last = last_seq
        self._resync = False

    @property
    def last_seq(self) -> int | None:
        return self._last

    def sensor_restarted(self) -> None:
        """A HELLO arrived or the link came back: the next roll may count from anywhere."""
        self._resync = True

    def accept(self, seq: int) -> bool:
        """True if the roll is new (and becomes the baseline), False if it is a repeat."""
        if self._last is not None:
            ahead = (seq - self._last) % SEQ_MODULUS
            if ahead == 0 or (ahead >= SEQ_MODULUS // 2 and not self._resync):
                return False
        self._last = seq
        self._resync = False
        return True
