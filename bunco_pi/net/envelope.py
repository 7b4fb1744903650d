"""The JSON envelope around every MQTT message, and its strict validation.

One envelope, compact JSON, UTF-8::

    {"v": 1, "sender": "table-3", "table": 3, "seq": 17, "payload": {...}}

``table`` and ``seq`` are present on ``table/<n>/events`` messages only, and there they are
required: ``(table, seq)`` is what makes a re-delivered event harmless. ``payload`` is always
a JSON object; what it holds belongs to the protocol layer above this one.

:func:`decode` raises :class:`EnvelopeError` whose message is one line naming the topic and
the problem; :func:`try_decode` logs that line and returns ``None`` instead, for code that
must never raise (message handlers fed by a network thread).
"""

from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

from bunco_pi.net.topics import MAX_TABLE, TopicError, parse_topic

VERSION = 1
MAX_BYTES = 64 * 1024  # a page of the seating (25 tables, 100 names of the longest) fits
# A table's event (one entry: well under 200 bytes) is held to far less, so the head drops
# anything bigger as it reads it (commands/head.py, HEAD_MAX_MESSAGE): a hostile 64 KB "event"
# then never reaches the head's queue.
MAX_EVENT_BYTES = 4 * 1024
MAX_SEQ = 2**53 - 1  # keeps seq exact in every JSON reader, JavaScript's included

_SENDER_RE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_EVENT_KEYS = frozenset({"v", "sender", "table", "seq", "payload"})
_PLAIN_KEYS = frozenset({"v", "sender", "payload"})

log = logging.getLogger(__name__)


MAX_QUOTE = 200  # bytes of a bad message that one log line may quote


def clip(text: str, limit: int = MAX_QUOTE) -> str:
    """``text`` cut to ``limit`` bytes of UTF-8 for a log line, saying how much was left out:
    a hostile 60 KB payload must not become a 60 KB line in the head's log."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    return f"{data[:limit].decode('utf-8', 'ignore')}... ({len(data) - limit} more bytes)"


class EnvelopeError(ValueError):
    """A message that is not a valid envelope for its topic (one-line message, clipped)."""


@dataclass(frozen=True)
class Envelope:
    sender: str
    payload: dict[str, Any] = field(default_factory=dict)
    table: int | None = None
    seq: int | None = None
    v: int = VERSION

    @property
    def is_event(self) -> bool:
        return self.seq is not None


def encode(envelope: Envelope) -> bytes:
    """Serialize; raises :class:`EnvelopeError` if the result would be rejected by a reader."""
    doc: dict[str, Any] = {"v": envelope.v, "sender": envelope.sender}
    if envelope.table is not None or envelope.seq is not None:
        doc["table"] = envelope.table
        doc["seq"] = envelope.seq
    doc["payload"] = envelope.payload
    try:
        data = json.dumps(doc, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise EnvelopeError(f"envelope from {envelope.sender}: payload is not JSON: {exc}") from exc
    limit = MAX_EVENT_BYTES if envelope.is_event else MAX_BYTES
    if len(data) > limit:
        raise EnvelopeError(
            f"envelope from {envelope.sender}: {len(data)} bytes, over the {limit}-byte limit"
        )
    return data


def event(sender: str, table: int, seq: int, payload: dict[str, Any]) -> bytes:
    """Encode one table event."""
    return encode(Envelope(sender=sender, payload=payload, table=table, seq=seq))


def message(sender: str, payload: dict[str, Any]) -> bytes:
    """Encode a message that is not a table event (state, ack, view, status, ...)."""
    return encode(Envelope(sender=sender, payload=payload))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise ValueError(f"duplicate key {key!r}")
        doc[key] = value
    return doc


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decode(topic: str, data: bytes) -> Envelope:
    """Parse and check one message received on ``topic``."""

    def fail(problem: str) -> EnvelopeError:
        return EnvelopeError(f"{clip(topic)}: {clip(problem)}")

    try:
        ref = parse_topic(topic)
    except TopicError as exc:
        raise EnvelopeError(clip(str(exc))) from None
    limit = MAX_EVENT_BYTES if ref.kind == "events" else MAX_BYTES
    if len(data) > limit:
        raise fail(f"{len(data)} bytes, over the {limit}-byte limit")
    try:
        text = bytes(data).decode("utf-8")
        doc = json.loads(
            text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise fail(f"not a JSON envelope ({first_line})") from None
    if not isinstance(doc, dict):
        raise fail(f"envelope must be a JSON object, got {type(doc).__name__}")

    is_event = ref.kind == "events"
    allowed = _EVENT_KEYS if is_event else _PLAIN_KEYS
    missing = sorted(allowed - doc.keys())
    unknown = sorted(doc.keys() - allowed)
    if unknown:
        raise fail(f"unknown envelope field(s) {', '.join(unknown)}")
    if missing:
        raise fail(f"missing envelope field(s) {', '.join(missing)}")

    version = doc["v"]
    if not _is_int(version) or version != VERSION:
        raise fail(f"envelope version {version!r} not supported (this reader speaks {VERSION})")
    sender = doc["sender"]
    if not isinstance(sender, str) or not _SENDER_RE.match(sender):
        raise fail(f"bad sender {sender!r}")
    payload = doc["payload"]
    if not isinstance(payload, dict):
        raise fail(f"payload must be a JSON object, got {type(payload).__name__}")
    if _has_bad_float(payload):
        raise fail("payload holds a number too large for a float")

    if not is_event:
        return Envelope(sender=sender, payload=payload)

    table, seq = doc["table"], doc["seq"]
    if not _is_int(table) or not 1 <= table <= MAX_TABLE:
        raise fail(f"table must be an integer 1..{MAX_TABLE}, got {table!r}")
    if table != ref.table:
        raise fail(f"envelope names table {table} but the topic is table {ref.table}")
    if not _is_int(seq) or not 1 <= seq <= MAX_SEQ:
        raise fail(f"seq must be a positive integer, got {seq!r}")
    return Envelope(sender=sender, payload=payload, table=table, seq=seq)


def _has_bad_float(value: Any) -> bool:
    # json.loads turns 1e999 into inf without calling parse_constant.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def try_decode(topic: str, data: bytes, logger: logging.Logger | None = None) -> Envelope | None:
    """Like :func:`decode`, but logs the one-line reason and returns ``None``; never raises."""
    try:
        return decode(topic, data)
    except EnvelopeError as exc:
        (logger or log).warning("rejected message: %s", exc)
        return None
    except Exception:  # a bug here must not take a network handler down
        (logger or log).exception("rejected message on %s: envelope check failed", clip(topic))
        return None
