"""The serial dice sensor's line protocol: pure code, no ports, no threads, no clock.

A sensor (the Pico firmware, a camera box, a Bluetooth bridge) sends ASCII lines such as
``ROLL 17 3 3 5*F8D0`` (protocol 2: a CRC-16) or ``ROLL 17 3 3 5*2E`` (protocol 1: an XOR).
This module turns raw bytes into typed, immutable messages and back:

* :class:`LineAssembler` cuts a byte stream into lines and rejects over-long or garbage ones;
* :func:`parse_line` turns one line into a message or a :class:`Rejected` (it never raises);
* :class:`LineParser` is ``parse_line`` for one link: once a sensor has spoken protocol 2,
  it refuses protocol 1 lines, so noise cannot pass as the weaker checksum;
* :func:`format_message` is the inverse, for emitters and tests;
* :class:`SeqFilter` makes a repeated ``ROLL`` harmless.

docs/dice-sensor-protocol.md is the protocol in prose; keep the two in step.
"""

from __future__ import annotations

import binascii
import enum
from dataclasses import dataclass, field

MAX_LINE_BYTES = 80
"""Longest line a reader accepts, counting the ``*HHHH`` checksum but not the ``\\r\\n``."""

PROTOCOL = 2
"""The protocol writers speak: a CRC-16 after the ``*``; readers also take protocol 1."""
PROTOCOL_EXTENSION = "proto"
"""The ``HELLO`` extension that announces the protocol: ``HELLO 2.0.0 proto=2``."""
_CHECK_DIGITS = {1: 2, 2: 4}  # hex digits after the '*', by protocol

SEQ_MODULUS = 65536
FACES = range(1, 7)

# Printable ASCII: the only bytes a line may hold (space included, tab and controls not).
_PRINTABLE = frozenset(range(0x20, 0x7F))
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")
_UPPER_HEX_DIGITS = frozenset(b"0123456789ABCDEF")


class Fault(enum.StrEnum):
    """Why a line was rejected; the value is the counter's name."""

    GARBAGE = "garbage"  # a byte outside printable ASCII
    TOO_LONG = "too_long"  # more than MAX_LINE_BYTES before the newline
    PARTIAL = "partial"  # bytes with no newline when the link went down
    NO_CHECKSUM = "no_checksum"  # the line ends in neither *HHHH nor *HH
    BAD_CHECKSUM = "bad_checksum"  # the checksum does not match the bytes before it
    OLD_CHECKSUM = "old_checksum"  # a protocol 1 line from a sensor that spoke protocol 2
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

    @property
    def protocol(self) -> int:
        """The protocol the sensor announces (``proto=2``); 1 if it says nothing."""
        value = dict(self.extensions).get(PROTOCOL_EXTENSION, "1")
        return int(value) if value.isdigit() and len(value) <= 3 else 1


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


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection): 0x29B1 for b"123456789"."""
    return binascii.crc_hqx(data, 0xFFFF)


def checksum(body: bytes | str, protocol: int = PROTOCOL) -> str:
    """What follows the ``*``: protocol 2, the CRC-16 of ``body`` as four uppercase hex
    digits; protocol 1, the XOR of its bytes as two."""
    data = body.encode("ascii") if isinstance(body, str) else body
    if protocol == 2:
        return f"{crc16(data):04X}"
    if protocol != 1:
        raise ValueError(f"protocol {protocol}: this reader knows 1 and 2")
    value = 0
    for byte in data:
        value ^= byte
    return f"{value:02X}"


# --- parsing -------------------------------------------------------------------------------


def parse_line(line: bytes | str, *, accept_v1: bool = True) -> Parsed:
    """One line (without its ``\\n``; a trailing ``\\r`` is dropped) to a message.

    Never raises: anything that is not a valid message comes back as :class:`Rejected`.
    ``accept_v1=False`` refuses protocol 1 (XOR) lines as ``old_checksum``.
    """
    return _parse(line, accept_v1)[0]


class LineParser:
    """:func:`parse_line` for one link, remembering which protocol the sensor speaks.

    Until a protocol 2 line checks, both protocols are taken (an old sensor keeps working).
    After one, a protocol 1 line is refused as ``old_checksum``: a v2 sensor never sends
    one, so it can only be noise, and noise must face the CRC, not the XOR.  Call
    :meth:`link_reopened` when the port is reopened: a different sensor may be there.
    """

    def __init__(self) -> None:
        self.protocol: int | None = None  # None: no valid line yet on this link

    def link_reopened(self) -> None:
        self.protocol = None

    def parse(self, line: bytes | str) -> Parsed:
        parsed, protocol = _parse(line, accept_v1=self.protocol != 2)
        if protocol is not None and not isinstance(parsed, Rejected):
            self.protocol = max(protocol, self.protocol or 1)
        return parsed


def _parse(line: bytes | str, accept_v1: bool) -> tuple[Parsed, int | None]:
    """The message and the protocol its checksum used (None if it had no checksum)."""
    if isinstance(line, str):
        try:
            line = line.encode("ascii")
        except UnicodeEncodeError:
            bad = line.encode("utf-8", "replace")[:MAX_LINE_BYTES]
            return Rejected(Fault.GARBAGE, bad), None
    if line.endswith(b"\r"):
        line = line[:-1]
    if len(line) > MAX_LINE_BYTES:
        return Rejected(Fault.TOO_LONG, line[:MAX_LINE_BYTES]), None
    if not _PRINTABLE.issuperset(line):
        return Rejected(Fault.GARBAGE, line), None
    protocol = _framing(line)
    if protocol is None:
        return Rejected(Fault.NO_CHECKSUM, line), None
    if protocol == 1 and not accept_v1:
        return Rejected(Fault.OLD_CHECKSUM, line), 1
    digits = _CHECK_DIGITS[protocol]
    body = line[: -digits - 1]
    if checksum(body, protocol) != line[-digits:].decode("ascii").upper():
        return Rejected(Fault.BAD_CHECKSUM, line), protocol
    text = body.decode("ascii")
    kind, _, rest = text.partition(" ")
    if not kind:
        return Rejected(Fault.BAD_FIELD, line), protocol
    parser = _PARSERS.get(kind)
    if parser is None:
        return Unknown(kind, tuple(rest.split())), protocol
    result = parser(rest)
    if isinstance(result, Fault):
        return Rejected(result, line), protocol
    return result, protocol


def _framing(line: bytes) -> int | None:
    """2 for a line ending in ``*HHHH`` (uppercase), 1 for ``*HH`` (either case), else None."""
    if len(line) >= 5 and line[-5] == 0x2A and _UPPER_HEX_DIGITS.issuperset(line[-4:]):
        return 2
    if len(line) >= 3 and line[-3] == 0x2A and _HEX_DIGITS.issuperset(line[-2:]):
        return 1
    return None


def _split_extensions(tokens: list[str]) -> Extensions | None:
    """``name=value`` tokens after the defined fields; None if any token is not one."""
    pairs = []
    for token in tokens:
        name, eq, value = token.partition("=")
        if not eq or not name or "*" in token:
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


def format_message(message: Message, protocol: int = PROTOCOL) -> bytes:
    """The wire form of ``message`` in ``protocol`` (1 or 2), checksum and ``\\n`` included.

    Raises ValueError for a message no reader would accept (a programming error in an
    emitter, not a user mistake).
    """
    body = _body(message)
    line = f"{body}*{checksum(body, protocol)}"
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
