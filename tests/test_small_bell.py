"""The bell's message stays small: the seating (in pages, with the names seated there) and the
rules travel on retained topics of their own, each said again only when it changes (and on
every connect)."""

from __future__ import annotations

import time
import uuid

from bunco_pi.hardware.bell import BellPressed
from bunco_pi.net import envelope
from bunco_pi.net.inproc import InprocBroker
from bunco_pi.net.link import Message
from bunco_pi.net.topics import Topics
from bunco_pi.protocol import merge_state, parts_named, seats_at
from bunco_pi.rules.night import Player
from tests.service_head import ServiceHead

TABLES = 50


def drain(link) -> list[Message]:
    out = []
    while not link.inbox.empty():
        item = link.inbox.get_nowait()
        if isinstance(item, Message):
            out.append(item)
    return out


def wait_for(link, seen, test, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not test(seen):
        assert time.monotonic() < deadline, "the head never said it"
        seen += drain(link)
        time.sleep(0.02)
    return seen


def test_the_bell_is_a_few_hundred_bytes_at_50_tables_and_parts_change_only_when_they_do(
        tmp_path):
    broker = InprocBroker()
    topics = Topics(f"b{uuid.uuid4().hex[:6]}")
    players = [Player(f"p{i}", f"Player number {i}") for i in range(1, TABLES * 4 + 1)]
    head = ServiceHead(lambda sink: broker.link("head", sink=sink), topics,
                       tmp_path / "head.sqlite", players, tables=TABLES)
    watcher = broker.link("table-1")
    pages = (topics.seating(1), topics.seating(2))  # 25 tables a page
    for topic in (*pages, topics.rules(), topics.state()):
        watcher.subscribe(topic)
    watcher.start()
    try:
        def states(seen):
            return [envelope.decode(m.topic, m.payload).payload for m in seen
                    if m.topic == topics.state()]

        def said(seen, topic):
            return [m for m in seen if m.topic == topic]

        head.put(BellPressed())  # the night starts
        seen = wait_for(watcher, [], lambda s: any(st.get("phase") == "ready" for st in states(s)))
        time.sleep(0.6)
        head.put(BellPressed())  # round 1
        seen = wait_for(watcher, seen,
                        lambda s: any(st.get("phase") == "playing" for st in states(s)))
        time.sleep(3.1)  # the head ignores a bell this soon after a round starts
        before = len(seen)
        head.put(BellPressed())  # the host ends round 1: the bell
        seen = wait_for(watcher, seen, lambda s: any(st.get("bell") for st in states(s)))
        bell = [m for m in seen[before:] if m.topic == topics.state()]
        assert len(bell[-1].payload) < 600, len(bell[-1].payload)
        # the parts were said when the night started (and when the head connected), not for
        # the bell: nothing in them changed
        for topic in (*pages, topics.rules()):
            assert said(seen, topic) and not said(seen[before:], topic), topic
        page = said(seen, pages[1])[-1]
        assert len(page.payload) > 10 * len(bell[-1].payload)  # what the bell no longer carries
        # a table has the whole state back from the small one and the parts it names: the
        # rules and its own page of the seating
        last = states(seen)[-1]
        assert set(parts_named(last)) == {"seating", "rules"}
        seating = envelope.decode(pages[1], page.payload).payload
        rules = envelope.decode(topics.rules(), said(seen, topics.rules())[-1].payload).payload
        whole = merge_state(last, {"seating": seating, "rules": rules})
        assert whole["seating_first"] == 26 and len(whole["seating"]) == 25
        assert len(whole["players"]) == 100  # the names seated on the page, not all 200
        seats = seats_at(whole, 30)
        assert seats is not None and len(seats) == 4
        assert {p["id"] for p in whole["players"]} >= set(seats)
        assert seats_at(whole, 1) is None  # another page's table
        assert whole["rules_toml"].strip()
    finally:
        watcher.stop()
        head.close()
