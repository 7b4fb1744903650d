"""What both ends of delivery agree on: the head's node name and the ack's payload.

Delivery is at least once with exactly-once effects, between a table's outbox and the head's
log. Each side owns its half: the table's sender and outbox are in ``bunco_pi.table.sender``
and ``bunco_pi.table.outbox``, the head's ingest and log in ``bunco_pi.head.ingest`` and
``bunco_pi.head.eventlog``; the one de-duplication and gap-holding rule they follow is
``bunco_pi.net.sequence``. Order is never by wall clock: a table's events are committed in seq
order, and the log position orders the night. The ack is cumulative and published only after
the commit is durable.
"""

from __future__ import annotations

from typing import Any

from bunco_pi.net import envelope

HEAD_NAME = "head"


MAX_REASON = 160  # characters of a refusal's reason an ack carries


def ack_payload(seq: int, refused: tuple[int, str] | None = None) -> dict[str, Any]:
    """``{"seq": highest committed}``; with ``refused``, the latest of the table's entries the
    head logged but refused, ``{"seq", "reason"}`` (optional: a box that does not know the key
    ignores it, and it is still acknowledged by ``seq``, so not sent again)."""
    payload: dict[str, Any] = {"seq": seq}
    if refused is not None:
        payload["refused"] = {"seq": refused[0], "reason": refused[1][:MAX_REASON]}
    return payload


def read_ack(env: envelope.Envelope) -> int | None:
    seq = env.payload.get("seq")
    if isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq <= envelope.MAX_SEQ:
        return seq
    return None


def read_refusal(env: envelope.Envelope) -> tuple[int, str] | None:
    """The ack's ``refused`` (seq, reason), or None if it has none (or none that reads)."""
    refused = env.payload.get("refused")
    if not isinstance(refused, dict):
        return None
    seq, reason = refused.get("seq"), refused.get("reason")
    if isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq <= envelope.MAX_SEQ \
            and isinstance(reason, str):
        return seq, reason[:MAX_REASON]
    return None
