import logging
import socket

import pytest

from bunco_pi.net import envelope
from bunco_pi.net.link import Connected, Disconnected, Message, Published
from bunco_pi.net.mqtt import MqttLink
from tests.conftest import CutProxy, collect, pump


def messages(events):
    return [e for e in events if isinstance(e, Message)]


def test_qos1_publish_is_acknowledged_and_delivered(make_link, topics):
    head = make_link("head")
    head.subscribe(topics.all_events())
    assert head.wait_subscribed(5)
    table = make_link("table-1")
    receipt = table.publish(topics.events(1), envelope.event("table-1", 1, 1, {"k": 1}))
    assert receipt.wait(3) and receipt.acknowledged()
    seen: list = []
    assert pump(table.inbox, seen.append, lambda: any(isinstance(e, Published) for e in seen))
    seen += collect(table.inbox, 0.2)  # and nothing more
    acks = [e for e in seen if isinstance(e, Published)]
    assert [(p.mid, p.ok) for p in acks] == [(receipt.mid, True)]
    arrived: list = []
    assert pump(head.inbox, arrived.append, lambda: messages(arrived))
    got = messages(arrived + collect(head.inbox, 0.2))
    assert [(m.topic, envelope.decode(m.topic, m.payload).seq) for m in got] == \
        [(topics.events(1), 1)]


def test_socket_has_tcp_nodelay(make_link):
    link = make_link("table-1")
    sock = link._client.socket()
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_birth_then_will_when_the_wire_is_cut(make_link, topics, cut_proxy: CutProxy):
    watcher = make_link("head")
    watcher.subscribe(topics.all_status())
    assert watcher.wait_subscribed(5)
    make_link("table-2", port=cut_proxy.port, status_topic=topics.status("table-2"))
    got = []
    assert pump(watcher.inbox, got.append, lambda: messages(got), timeout=5)  # the birth
    got = messages(got)
    cut_proxy.cut()
    after: list = []
    assert pump(watcher.inbox, after.append, lambda: messages(after), timeout=15)  # the will
    got += messages(after)
    states = [envelope.decode(m.topic, m.payload).payload["status"] for m in got]
    assert states == ["online", "offline"]
    assert all(m.topic == topics.status("table-2") for m in got)
    late = make_link("table-1")
    late.subscribe(topics.status("table-2"))
    late_got: list = []
    assert pump(late.inbox, late_got.append, lambda: messages(late_got))
    retained = messages(late_got + collect(late.inbox, 0.2))
    assert [(envelope.decode(m.topic, m.payload).payload["status"], m.retain)
            for m in retained] == [("offline", True)]


def test_session_survives_a_cut_and_queued_messages_arrive(make_link, topics, cut_proxy):
    table = make_link("table-3", port=cut_proxy.port)
    table.subscribe(topics.control())
    assert table.wait_subscribed(5)
    head = make_link("head")
    cut_proxy.cut()
    sent = [head.publish(topics.control(), envelope.message("head", {"n": n})) for n in range(5)]
    assert all(r.wait(3) for r in sent)
    cut_proxy.restore()
    events = []
    pump(table.inbox, events.append, lambda: len(messages(events)) == 5, timeout=5)
    kinds = [type(e) for e in events]
    assert Disconnected in kinds
    assert Connected(True) in events  # the broker kept the session
    got = [envelope.decode(m.topic, m.payload).payload["n"] for m in messages(events)]
    assert got == [0, 1, 2, 3, 4]


def test_an_exception_in_the_owner_sink_does_not_kill_the_network_thread(
        broker, make_link, topics, caplog):
    seen = []

    def fragile_sink(event):
        if isinstance(event, Message):
            seen.append(event)
            if len(seen) == 1:
                raise RuntimeError("boom")

    link = MqttLink("table-4", broker.host, broker.port, username="table-4",
                    password=broker.credentials.password("table-4"), sink=fragile_sink,
                    client_id=f"fragile-{topics.night}")
    link.subscribe(topics.control())
    caplog.set_level(logging.ERROR)
    link.start()
    try:
        assert link.wait_subscribed(5)
        head = make_link("head")
        for n in range(3):
            head.publish(topics.control(), envelope.message("head", {"n": n})).wait(3)
        collect(head.inbox, 0.3)
        assert len(seen) == 3
        assert link.connected
        assert any("error in MQTT callback" in r.getMessage() for r in caplog.records)
    finally:
        link.stop()


@pytest.mark.slow
def test_reconnects_by_itself_after_a_broker_restart(make_private_link, private_broker, topics):
    link = make_private_link("table-1")
    collect(link.inbox, 0.2)
    private_broker.restart()
    events = []
    assert pump(link.inbox, events.append,
                lambda: any(isinstance(e, Connected) for e in events), timeout=5)
    assert isinstance(events[0], Disconnected)
    assert link.connected


def test_wait_subscribed_means_the_next_message_is_received(make_link, topics):
    head = make_link("head")
    for n in range(1, 4):
        table = make_link(f"table-{n}")
        table.subscribe(topics.view(n))
        assert table.wait_subscribed(5) and not table._subs_unacked
        head.publish(topics.view(n), envelope.message("head", {"n": n}))  # not retained
        got: list = []

        def here(events: list, topic: str = topics.view(n)) -> list:
            # the broker keys a session on the user: what an earlier test's "table-n" left
            # queued on its own topics may come first
            return [m for m in messages(events) if m.topic == topic]
        assert pump(table.inbox, got.append, lambda g=got: here(g), timeout=5)
        assert envelope.decode(topics.view(n), here(got)[0].payload).payload == {"n": n}


def test_a_node_with_a_packet_limit_never_receives_a_bigger_message(private_broker,
                                                                     make_private_link, topics):
    """A node may declare MQTT v5's Maximum Packet Size: the broker drops a bigger message for
    it and goes on delivering the rest. (Not the head: mosquitto 2.0.11 keeps an in-flight
    slot for each message so dropped, tests/test_intake_limits.py.)"""
    small = MqttLink("head", private_broker.host, private_broker.port, username="head",
                     password=private_broker.credentials.password("head"),
                     max_packet_size=2048, keepalive=5, reconnect_delay=(0.05, 0.5))
    small.subscribe(topics.events(2))
    small.start()
    try:
        assert small.wait_subscribed(5)
        table = make_private_link("table-2")
        for size in (100, 60_000, 100):
            assert table.publish(topics.events(2), b"x" * size).wait(5)
        got = [e for e in collect(small.inbox, 1.5) if isinstance(e, Message)]
        assert [len(m.payload) for m in got] == [100, 100]
        assert small.connected
    finally:
        small.stop()


def test_a_node_dropping_big_messages_queues_none_and_keeps_receiving(private_broker,
                                                                       make_private_link,
                                                                       topics, caplog):
    """The head's way (drop_larger_than): every message is delivered and acknowledged, so
    the broker's in-flight slots come back; the big ones are dropped in paho's thread, never
    queued, with one log line for a burst."""
    head = MqttLink("head", private_broker.host, private_broker.port, username="head",
                    password=private_broker.credentials.password("head"),
                    drop_larger_than=2048, keepalive=5, reconnect_delay=(0.05, 0.5))
    head.subscribe(topics.events(2))
    head.start()
    try:
        assert head.wait_subscribed(5)
        table = make_private_link("table-2")
        for _ in range(50):  # more than the 20 in-flight slots
            table.publish(topics.events(2), b"x" * 60_000)
        assert table.publish(topics.events(2), b"y" * 100).wait(5)
        got = [e for e in collect(head.inbox, 1.5) if isinstance(e, Message)]
        assert [len(m.payload) for m in got] == [100]
        assert head.dropped == 50
        lines = [r for r in caplog.records if "dropped" in r.getMessage()]
        assert len(lines) == 1 and "over 2048 bytes" in lines[0].getMessage()
    finally:
        head.stop()


def test_reconnect_keeps_the_session(private_broker, make_private_link, topics):
    head = MqttLink("head", private_broker.host, private_broker.port, username="head",
                    password=private_broker.credentials.password("head"),
                    keepalive=5, reconnect_delay=(0.05, 0.5))
    head.subscribe(topics.events(3))
    head.start()
    try:
        assert head.wait_subscribed(5)
        head.reconnect()
        assert head.wait_subscribed(5)
        table = make_private_link("table-3")
        assert table.publish(topics.events(3), b"after").wait(5)
        got = [e for e in collect(head.inbox, 1.0) if isinstance(e, Message)]
        assert [m.payload for m in got] == [b"after"]
    finally:
        head.stop()


def test_a_node_sends_every_qos1_message_without_waiting_for_earlier_acks(make_link, topics,
                                                                          cut_proxy):
    """At 500 tables the head publishes a batch's hundreds of acks and views, then the bell's
    state. paho sends only 20 QoS 1 messages ahead of the broker's PUBACKs by default, so the
    bell waited in its queue for round trips. Here no PUBACK comes back at all, and every
    message must still reach the broker and its subscribers."""
    reader = make_link("head")
    reader.subscribe(topics.all_events())
    assert reader.wait_subscribed(5)
    table = make_link("table-1", port=cut_proxy.port)
    cut_proxy.hold_replies()
    receipts = [table.publish(topics.events(1), envelope.event("table-1", 1, seq, {"k": seq}))
                for seq in range(1, 61)]
    got: list = []
    pump(reader.inbox, got.append, lambda: len(messages(got)) >= 60, timeout=10)
    seqs = [envelope.decode(m.topic, m.payload).seq for m in messages(got)]
    assert seqs == list(range(1, 61))
    assert not any(r.acknowledged() for r in receipts)  # the replies were held throughout
