"""No message from any login can stop the head's intake (real mosquitto, real `bunco-pi head`).

Oversized QoS 1 messages, 20, 100 and 1,000 of them, from each kind of login (a table's
password, the read-only viewer, and anyone aiming at the head's own topics), then 5 ordinary
table events: all 5 reach the head and are acknowledged within 2 s. Before the limits were
decided (the head declared a Maximum Packet Size; mosquitto 2.0.11 kept an in-flight slot
for each message it dropped for it), twenty such messages stopped the head for the night.
"""

from __future__ import annotations

import contextlib
import os
import queue
import time
from collections.abc import Iterator

import pytest

from bunco_pi.net import envelope
from bunco_pi.net.broker import MAX_PACKET_BYTES, Broker
from bunco_pi.net.delivery import read_ack
from bunco_pi.net.link import Disconnected, Message
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics
from tests.conftest import _require_mosquitto
from tests.test_head_service import one_set_rules, start_head

pytestmark = pytest.mark.slow

OVERSIZED = envelope.MAX_EVENT_BYTES + 2000  # more than the head takes, less than the broker
ACK_WITHIN_S = 2.0


class Night:
    """A private broker, a real head process, table 1 sending ordinary events."""

    def __init__(self, tmp_path) -> None:
        self.broker = Broker(tmp_path / "b", tables=3, readers=("viewer",)).start()
        self.topics = Topics(f"limits{os.getpid()}")
        self.head = start_head(self.broker, self.topics.night, tmp_path / "head",
                               tmp_path / "night.json", one_set_rules(tmp_path), tables=3)
        self.links: list[MqttLink] = []
        self.table = self.login("table-1")
        self.table.subscribe(self.topics.ack(1))
        assert self.table.wait_subscribed(10)
        self.seq = 0
        # the head is up once its ack of table 1 (0: nothing yet) is retained
        assert self.acked_within(30) == 0, "the head did not start"

    def login(self, user: str) -> MqttLink:
        link = MqttLink(user, self.broker.host, self.broker.port, username=user,
                        password=self.broker.credentials.password(user), keepalive=5,
                        reconnect_delay=(0.05, 0.5))
        self.links.append(link)
        link.start()
        assert link.wait_connected(10), f"{user} did not connect"
        return link

    def acked_within(self, seconds: float) -> int | None:
        """The highest ack for table 1 that came within ``seconds`` (None: none came)."""
        best = None
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                item = self.table.inbox.get(timeout=min(left, 0.05))
            except queue.Empty:
                continue
            if isinstance(item, Message) and item.topic == self.topics.ack(1):
                best = read_ack(envelope.decode(item.topic, item.payload))
                if best == self.seq:
                    return best
        return best

    def five_ordinary_events_acked(self) -> tuple[int | None, float]:
        start = time.monotonic()
        for _ in range(5):
            self.seq += 1
            self.table.publish(self.topics.events(1), envelope.event(
                "table-1", 1, self.seq, {"round": 0, "entry": ["roll", [2, 3, 4]]}))
        got = self.acked_within(ACK_WITHIN_S)
        return got, time.monotonic() - start

    def close(self) -> None:
        for link in self.links:
            link.stop(timeout=1)
        self.head.terminate()
        out, _ = self.head.communicate(timeout=20)
        self.broker.close()
        self.head_log = out


@pytest.fixture
def night(tmp_path) -> Iterator[Night]:
    _require_mosquitto()
    n = Night(tmp_path)
    yield n
    n.close()


def attack(link: MqttLink, topics: list[str], count: int) -> None:
    """``count`` oversized QoS 1 messages, the topics in turn; waits until the broker has
    answered every one (taken or refused)."""
    receipts = [link.publish(topics[i % len(topics)], b"x" * OVERSIZED, qos=1)
                for i in range(count)]
    deadline = time.monotonic() + 30
    for receipt in receipts:
        assert receipt.wait(max(0.0, deadline - time.monotonic())), "the broker did not answer"


def _logins(t: Topics) -> dict[str, tuple[str, list[str]]]:
    return {
        # a table's password: its own events and its own status, both where the head listens
        "a table": ("table-2", [t.events(2), t.status("table-2")]),
        # the read-only viewer: its own status (the head listens to node/+/status), a table's
        "the viewer": ("viewer", [t.status("viewer"), t.events(1)]),
        # the head's own topics and another table's, as far as a table's login reaches them
        "the head's topics": ("table-3", [t.status("head"), t.state(), t.ack(1), t.events(1),
                                          t.status("table-1"), f"{t.prefix}/node/x/status"]),
    }


@pytest.mark.parametrize("kind", ["a table", "the viewer", "the head's topics"])
def test_oversized_messages_from_any_login_never_stop_the_head(night, kind):
    user, topics = _logins(night.topics)[kind]
    link = night.login(user)
    for count in (20, 100, 1000):
        attack(link, topics, count)
        time.sleep(0.3)  # the broker hands them on to the head
        got, took = night.five_ordinary_events_acked()
        assert got == night.seq, (
            f"after {count} oversized messages from {kind} ({user}): table 1's 5 events "
            f"acked up to {got}, expected {night.seq} within {ACK_WITHIN_S} s")
        print(f"{kind}: {count} oversized, then 5 events acked in {took:.3f} s")


def test_a_message_over_the_brokers_limit_costs_only_its_sender(night):
    """Past the broker's max_packet_size the broker refuses it at the door: the sender is
    disconnected, the head never sees it, and the tables go on."""
    attacker = night.login("table-2")
    attacker.publish(night.topics.events(2), b"y" * (MAX_PACKET_BYTES + 10), qos=1)
    deadline = time.monotonic() + 5
    dropped = False
    while not dropped and time.monotonic() < deadline:
        with contextlib.suppress(queue.Empty):
            dropped = isinstance(attacker.inbox.get(timeout=0.1), Disconnected)
    assert dropped, "the broker took a packet over its limit"
    got, _ = night.five_ordinary_events_acked()
    assert got == night.seq
