"""The one de-duplication and gap-holding rule (pure), and the head's bounds built on it."""

from __future__ import annotations

import logging

from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.ingest import HeadIngest
from bunco_pi.net import envelope
from bunco_pi.net.inproc import InprocBroker
from bunco_pi.net.link import Message
from bunco_pi.net.sequence import Limits, SeqWindow, place
from bunco_pi.net.topics import Topics


def test_place_says_duplicate_next_or_ahead():
    assert [place(3, s) for s in (1, 3, 4, 5, 99)] == \
        ["duplicate", "duplicate", "next", "ahead", "ahead"]


def test_early_items_wait_for_the_gap_and_come_out_in_order_once():
    w: SeqWindow[str] = SeqWindow()
    assert w.offer(0, 3, "c", 1) == ("held", [])
    assert w.offer(0, 2, "b", 1) == ("held", [])
    assert w.offer(0, 2, "b", 1) == ("duplicate", [])  # already held
    assert w.offer(0, 1, "a", 1) == ("released", ["a", "b", "c"])
    assert (w.held, w.held_bytes) == (0, 0)
    assert w.offer(3, 2, "b", 1) == ("duplicate", [])


def test_what_is_held_is_bounded_in_count_bytes_and_distance():
    w: SeqWindow[int] = SeqWindow(Limits(count=3, bytes=100, ahead=10))
    assert w.offer(0, 50, 50, 1)[0] == "refused"  # too far ahead
    assert [w.offer(0, s, s, 10)[0] for s in (2, 3, 4, 5)] == ["held", "held", "held", "refused"]
    w2: SeqWindow[int] = SeqWindow(Limits(count=100, bytes=100, ahead=10))
    assert [w2.offer(0, s, s, 40)[0] for s in (2, 3, 4)] == ["held", "held", "refused"]
    assert w2.held_bytes == 80
    assert w2.offer(0, 1, 1, 40) == ("released", [1, 2, 3])
    assert w2.held_bytes == 0


def _event(topics: Topics, table: int, seq: int, payload: dict) -> Message:
    return Message(topics.events(table),
                   envelope.event(f"table-{table}", table, seq, payload), False, 1)


def test_the_head_refuses_far_ahead_seqs_with_one_line_each_and_holds_within_bounds(
        tmp_path, caplog):
    topics = Topics("bounds")
    broker = InprocBroker()
    link = broker.link("head")
    limits = Limits(count=50, bytes=20_000, ahead=200)
    with EventLog(tmp_path / "log.sqlite") as log:
        ingest = HeadIngest(link, topics, log, limits=limits, tables=2)
        entry = {"round": 0, "entry": ["pass"]}
        big = {"round": 0, "entry": ["pass"], "pad": "x" * 2000}
        hostile = [_event(topics, 2, 10_000 + i, entry) for i in range(300)]  # far ahead
        hostile += [_event(topics, 2, 3 + i, big) for i in range(100)]  # near, but big
        with caplog.at_level(logging.WARNING, logger="bunco_pi.head.ingest"):
            assert ingest.handle_many(hostile) == []
        count, size = ingest.held(2)
        assert count <= limits.count and size <= limits.bytes
        refused = [r for r in caplog.records if "refused" in r.getMessage()]
        assert len(refused) == 400 - count
        assert all("\n" not in r.getMessage() and "table 2 seq" in r.getMessage()
                   for r in refused)
        # the real events still go through, in order, once the gap fills
        got = ingest.handle_many([_event(topics, 2, 1, entry), _event(topics, 2, 2, entry)])
        assert [ev.seq for ev in got][:2] == [1, 2]
        assert log.highest(2) == 2 + count
