from bunco_pi.net import envelope
from bunco_pi.net.inproc import InprocBroker
from bunco_pi.net.link import Connected, Disconnected, Message, Published
from bunco_pi.net.topics import Topics

T = Topics("fri")


def drain(link):
    out = []
    while not link.inbox.empty():
        out.append(link.inbox.get_nowait())
    return out


def msgs(link):
    return [(m.topic, m.payload, m.retain) for m in drain(link) if isinstance(m, Message)]


def test_wildcard_subscription_and_qos1_receipt():
    broker = InprocBroker()
    head, table = broker.link("head"), broker.link("table-1")
    head.start(), table.start()
    head.subscribe(T.all_events())
    receipt = table.publish(T.events(1), b"e1")
    table.publish(T.state(), b"not for head")
    assert receipt.acknowledged()
    assert Published(receipt.mid, True) in drain(table)
    assert msgs(head) == [(T.events(1), b"e1", False)]


def test_retained_goes_to_late_subscribers_and_empty_payload_clears_it():
    broker = InprocBroker()
    head, late = broker.link("head"), broker.link("table-2")
    head.start(), late.start()
    head.publish(T.ack(2), b"old", retain=True)
    head.publish(T.ack(2), b"new", retain=True)
    late.subscribe(T.ack(2))
    assert msgs(late) == [(T.ack(2), b"new", True)]
    head.publish(T.ack(2), b"", retain=True)
    assert broker.retained(T.ack(2)) is None


def test_birth_and_will_on_cut_but_not_on_clean_stop():
    broker = InprocBroker()
    watcher = broker.link("head")
    watcher.start()
    watcher.subscribe(T.all_status())
    a = broker.link("table-1", status_topic=T.status("table-1"))
    b = broker.link("table-2", status_topic=T.status("table-2"))
    a.start(), b.start()
    a.cut()
    b.stop()
    got = [(topic, envelope.decode(topic, p).payload["status"]) for topic, p, _ in msgs(watcher)]
    assert got == [(T.status("table-1"), "online"), (T.status("table-2"), "online"),
                   (T.status("table-1"), "offline"), (T.status("table-2"), "offline")]
    assert Disconnected("connection lost") in drain(a)


def test_session_keeps_subscriptions_and_queues_qos1_while_cut():
    broker = InprocBroker()
    head, table = broker.link("head"), broker.link("table-1")
    head.start(), table.start()
    table.subscribe(T.control())
    table.cut()
    drain(table)
    head.publish(T.control(), b"bell")
    head.publish(T.control(), b"qos0", qos=0)
    assert not table.publish(T.events(1), b"lost").acknowledged()
    table.start()
    events = drain(table)
    assert events[0] == Connected(True)
    assert [m.payload for m in events if isinstance(m, Message)] == [b"bell"]
