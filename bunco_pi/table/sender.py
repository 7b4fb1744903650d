"""A table's half of delivery: send the outbox to the head, drop what the head acknowledged.

On the table's owner thread::

    seq = sender.submit(payload)       # durable in the outbox, then published (QoS 1)
    sender.handle(link_event)          # Connected -> resend pending; ack -> drop acknowledged
    sender.tick()                      # now and then: resend if the head has gone quiet,
                                       # and say what the outbox holds (the heartbeat)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from bunco_pi.net import envelope
from bunco_pi.net.delivery import HEAD_NAME, read_ack, read_refusal
from bunco_pi.net.link import Connected, Link, LinkEvent, Message
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.protocol import HEARTBEAT_S, heartbeat_payload
from bunco_pi.table.outbox import Outbox

log = logging.getLogger(__name__)


class TableSender:
    """Sends a table's outbox to the head and drops what the head acknowledged."""

    def __init__(self, link: Link, topics: Topics, table: int, outbox: Outbox, *,
                 resend_after: float = 3.0, resend_at_most: float = 30.0,
                 heartbeat_every: float | None = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.link, self.topics, self.table, self.outbox = link, topics, table, outbox
        self.name = table_node(table)
        self._events_topic = topics.events(table)
        self._ack_topic = topics.ack(table)
        self._status_topic = topics.status(self.name)
        self._resend_after = resend_after
        self._resend_at_most = resend_at_most
        # How long to wait for an ack before resending: doubled after each resend that brings
        # none, back to ``resend_after`` on any progress. A head that falls behind (a busy Pi,
        # a long replay after a restart) would otherwise get every table's whole backlog again
        # every few seconds, fall further behind on the duplicates, and never catch up.
        self._wait = resend_after
        self._clock = clock
        self._last_progress = clock()
        self._heartbeat_every = heartbeat_every
        self._last_beat = -1e9
        # Since when the outbox's unacknowledged entries have waited with no ack moving on.
        self._waiting_since = clock()
        self._ack_seen = False
        # The latest of this table's entries the head logged but refused (seq, reason), as
        # its ack says: acknowledged (not sent again), never counted.
        self.refused: tuple[int, str] | None = None
        link.subscribe(self._ack_topic)

    @property
    def ack_seen(self) -> bool:
        """Whether an ack came since start. A fresh outbox (``last_seq == 0``) on a night
        already under way should wait for it (it is retained: it comes right after connecting)
        before its first ``submit``, so numbering continues after what the head has."""
        return self._ack_seen

    @property
    def pending_count(self) -> int:
        return self.outbox.last_seq - self.outbox.acked

    def submit(self, payload: dict[str, Any]) -> int:
        """Make an event durable, then send it; returns its seq."""
        return self.submit_many([payload])[0]

    def submit_many(self, payloads: list[dict[str, Any]]) -> list[int]:
        """Make events durable together (one transaction), then send them; their seqs."""
        if self.pending_count == 0:
            self._waiting_since = self._clock()
        seqs = self.outbox.append_many(payloads)
        if self.link.connected:
            for seq, payload in zip(seqs, payloads, strict=True):
                self._send(seq, payload)
        return seqs

    def resend_pending(self) -> int:
        pending = self.outbox.pending()
        for entry in pending:
            self._send(entry.seq, entry.payload)
        self._last_progress = self._clock()
        return len(pending)

    def handle(self, event: LinkEvent) -> bool:
        """Take a link event if it concerns delivery; returns whether it did."""
        if isinstance(event, Connected):
            self._wait = self._resend_after
            self.resend_pending()
            return False  # others may want to know about the connection too
        if not (isinstance(event, Message) and event.topic == self._ack_topic):
            return False
        env = envelope.try_decode(event.topic, event.payload, log)
        seq = read_ack(env) if env is not None else None
        if env is None or seq is None or env.sender != HEAD_NAME:
            log.warning("%s: ignored a malformed ack on %s", self.name, event.topic)
            return True
        self._ack_seen = True
        refused = read_refusal(env)
        if refused is not None and refused != self.refused:
            self.refused = refused
            log.warning("%s: the head refused entry seq %d: %s", self.name, *refused)
        if self.outbox.ack(seq):
            self._last_progress = self._waiting_since = self._clock()
            self._wait = self._resend_after
        return True

    @property
    def waiting(self) -> float:
        """Seconds the unacknowledged entries have waited with no ack moving on (0: none)."""
        return max(0.0, self._clock() - self._waiting_since) if self.pending_count else 0.0

    def tick(self) -> None:
        """Say the heartbeat when it is due; resend if events are pending and no ack has come
        for ``resend_after`` seconds, then for twice as long each time, up to
        ``resend_at_most``."""
        if not self.link.connected:
            return
        self._beat()
        if self._clock() - self._last_progress < self._wait:
            return
        if self.pending_count > 0:
            n = self.resend_pending()
            log.info("%s: no ack for %.1f s, resent %d event(s)", self.name, self._wait, n)
            self._wait = min(self._wait * 2, self._resend_at_most)
        else:
            self._last_progress = self._clock()

    def _beat(self) -> None:
        # QoS 0: it never waits in the head's in-flight window, so it gets through when the
        # head's QoS 1 intake does not (bunco_pi.head.intake_watch).
        every = self._heartbeat_every
        if every is None or self._clock() - self._last_beat < every:
            return
        self._last_beat = self._clock()
        self.link.publish(self._status_topic, envelope.message(self.name, heartbeat_payload(
            self.outbox.last_seq, self.outbox.acked, self.waiting)), qos=0)

    def _send(self, seq: int, payload: dict[str, Any]) -> None:
        self.link.publish(self._events_topic,
                          envelope.event(self.name, self.table, seq, payload), qos=1)
