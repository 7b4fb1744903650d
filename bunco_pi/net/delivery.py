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


def ack_payload(seq: int) -> dict[str, Any]:
    return {"seq": seq}


def read_ack(env: envelope.Envelope) -> int | None:
    seq = env.payload.get("seq")
    if isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq <= envelope.MAX_SEQ:
        return seq
    return None
