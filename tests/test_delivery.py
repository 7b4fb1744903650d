import logging
import queue
import time

import pytest

from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.ingest import HeadIngest
from bunco_pi.net import envelope
from bunco_pi.net.delivery import ack_payload
from bunco_pi.net.inproc import InprocBroker
from bunco_pi.net.link import Message
from bunco_pi.net.topics import Topics
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.sender import TableSender
from tests.conftest import collect


class Head:
    """The head's owner loop, run in steps on the test thread."""

    def __init__(self, link, topics, path):
        self.link = link
        self.log = EventLog(path)
        self.ingest = HeadIngest(link, topics, self.log)
        self.applied = []
        if link.connected:
            assert link.wait_subscribed(5)

    def step(self):
        batch = []
        while True:
            try:
                batch.append(self.link.inbox.get_nowait())
            except queue.Empty:
                break
        self.applied += self.ingest.handle_many(batch)
        return bool(batch)


class Table:
    def __init__(self, link, topics, n, path, **kw):
        self.link = link
        self.outbox = Outbox(path)
        self.sender = TableSender(link, topics, n, self.outbox, **kw)
        if link.connected:
            assert link.wait_subscribed(5)

    def step(self):
        busy = False
        while True:
            try:
                self.sender.handle(self.link.inbox.get_nowait())
                busy = True
            except queue.Empty:
                break
        self.sender.tick()
        return busy


def run_until(nodes, until, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            return False
        if not any([node.step() for node in nodes]):
            time.sleep(0.002)
    return True


def assert_exactly_once_in_seq_order(head, table, count):
    rows = [(e.table, e.seq) for e in head.log.replay() if e.table == table]
    assert rows == [(table, s) for s in range(1, count + 1)]
    assert [(e.table, e.seq) for e in head.applied if e.table == table] == rows


# --- in-process: the logic, fast and deterministic -----------------------------------------


def test_inproc_every_event_committed_once_and_outbox_emptied(tmp_path):
    broker, topics = InprocBroker(), Topics("fri")
    head = Head(broker.link("head"), topics, tmp_path / "log.sqlite")
    tables = [Table(broker.link(f"table-{n}"), topics, n, tmp_path / f"ob{n}.sqlite")
              for n in (1, 2)]
    head.link.start()
    for t in tables:
        t.link.start()
    for i in range(10):
        for n, t in enumerate(tables, 1):
            t.sender.submit({"n": n, "i": i})
        run_until([head, *tables], lambda: False, timeout=0)  # interleave a little
    assert run_until([head, *tables], lambda: all(t.sender.pending_count == 0 for t in tables))
    for n in (1, 2):
        assert_exactly_once_in_seq_order(head, n, 10)
    assert head.ingest.stats.duplicates == 0


def test_inproc_table_cut_keeps_appending_and_catches_up(tmp_path):
    broker, topics = InprocBroker(), Topics("fri")
    head = Head(broker.link("head"), topics, tmp_path / "log.sqlite")
    table = Table(broker.link("table-1"), topics, 1, tmp_path / "ob.sqlite")
    head.link.start()
    table.link.start()
    table.sender.submit({"i": 0})
    table.link.cut()
    for i in range(1, 6):
        table.sender.submit({"i": i})
    run_until([head, table], lambda: False, timeout=0.05)
    # The head committed seq 1, but its ack waits in the cut table's session.
    assert len(head.log) == 1 and table.sender.pending_count == 6
    table.link.start()
    assert run_until([head, table], lambda: table.sender.pending_count == 0)
    assert_exactly_once_in_seq_order(head, 1, 6)


def test_head_restart_replays_its_log_and_ignores_resent_events(tmp_path):
    broker, topics = InprocBroker(), Topics("fri")
    head = Head(broker.link("head"), topics, tmp_path / "log.sqlite")
    table = Table(broker.link("table-1"), topics, 1, tmp_path / "ob.sqlite",
                  resend_after=0.05)
    head.link.start(), table.link.start()
    for i in range(4):
        table.sender.submit({"i": i})
    assert run_until([head, table], lambda: table.sender.pending_count == 0)
    head.link.cut()
    head.log.close()
    table.outbox.ack(0)  # nothing changes: acks only move forward
    # The table believes 3 and 4 were never acknowledged (its ack got lost): it resends.
    table.outbox._db.execute("UPDATE outbox_state SET acked = 2")
    head2 = Head(broker.link("head"), topics, tmp_path / "log.sqlite")
    head2.link.start()
    table.sender.resend_pending()
    table.sender.submit({"i": 4})
    assert run_until([head2, table], lambda: table.sender.pending_count == 0)
    assert [e.payload["i"] for e in head2.log.replay()] == [0, 1, 2, 3, 4]
    assert head2.ingest.stats.duplicates == 2


# --- a real mosquitto ----------------------------------------------------------------------


def test_duplicated_and_reordered_deliveries_commit_once_in_seq_order(make_link, topics,
                                                                      tmp_path):
    head = Head(make_link("head"), topics, tmp_path / "log.sqlite")
    raw = make_link("table-2")
    raw.subscribe(topics.ack(2))
    assert raw.wait_subscribed(5)
    for seq in [2, 1, 1, 3, 6, 5, 2, 4, 6]:
        raw.publish(topics.events(2), envelope.event("table-2", 2, seq, {"s": seq})).wait(3)
    assert run_until([head], lambda: len(head.log) == 6)
    assert_exactly_once_in_seq_order(head, 2, 6)
    assert [e.payload["s"] for e in head.applied] == [1, 2, 3, 4, 5, 6]
    acks = [envelope.decode(m.topic, m.payload).payload["seq"]
            for m in collect(raw.inbox, 0.5) if isinstance(m, Message)]
    assert acks and acks[-1] == 6 and acks == sorted(acks)  # never an ack of an uncommitted seq
    assert head.ingest.stats.duplicates == 3


def test_malformed_and_oversized_events_are_logged_and_skipped(make_link, topics, tmp_path,
                                                               caplog):
    head = Head(make_link("head"), topics, tmp_path / "log.sqlite")
    raw = make_link("table-1")
    caplog.set_level(logging.WARNING)
    bad = [b"", b"\x00\xff", b"{}", b"[]", b'{"v":1}', b"x" * (20 * 1024),
           envelope.event("table-1", 1, 1, {"pad": "p" * 3000}).replace(b"}}", b"},\"z\":1}"),
           envelope.event("table-1", 1, 1, {}).replace(b'"table":1', b'"table":2')]
    for data in bad:
        raw.publish(topics.events(1), data).wait(3)
    raw.publish(topics.events(1), envelope.event("table-1", 1, 1, {"ok": True})).wait(3)
    assert run_until([head], lambda: len(head.log) == 1)
    assert head.ingest.stats.rejected == len(bad)
    lines = [r.getMessage() for r in caplog.records if "rejected message" in r.getMessage()]
    assert len(lines) == len(bad)
    assert all(topics.events(1) in line and "\n" not in line for line in lines)


def test_table_ignores_malformed_acks_and_keeps_working(make_link, topics, tmp_path, caplog):
    head_link = make_link("head")
    table = Table(make_link("table-3"), topics, 3, tmp_path / "ob.sqlite")
    table.sender.submit({"i": 0})
    caplog.set_level(logging.WARNING)
    for data in [b"{", envelope.message("head", {"seq": "7"}), envelope.message("head", {}),
                 envelope.message("table-3", {"seq": 1}), b"y" * 17000]:
        head_link.publish(topics.ack(3), data, retain=True).wait(3)
    run_until([table], lambda: False, timeout=0.5)
    assert table.outbox.acked == 0 and table.sender.pending_count == 1
    assert sum("ignored a malformed ack" in r.getMessage() for r in caplog.records) == 5
    head = Head(head_link, topics, tmp_path / "log.sqlite")
    table.sender.resend_pending()
    assert run_until([head, table], lambda: table.sender.pending_count == 0)


@pytest.mark.slow
def test_broker_restart_mid_stream_every_event_arrives_once(make_private_link, private_broker,
                                                             topics, tmp_path):
    head = Head(make_private_link("head"), topics, tmp_path / "log.sqlite")
    table = Table(make_private_link("table-1"), topics, 1, tmp_path / "ob.sqlite",
                  resend_after=0.5)
    for i in range(60):
        table.sender.submit({"i": i})
        if i == 30:
            private_broker.restart()
        head.step(), table.step()
    assert run_until([head, table], lambda: table.sender.pending_count == 0, timeout=15)
    assert_exactly_once_in_seq_order(head, 1, 60)


@pytest.mark.slow
def test_broker_crash_loses_its_queue_but_not_our_events(make_private_link, private_broker,
                                                          topics, tmp_path):
    head = Head(make_private_link("head"), topics, tmp_path / "log.sqlite")
    head.link.stop()  # the head is away: the broker queues for it, in memory
    table = Table(make_private_link("table-1"), topics, 1, tmp_path / "ob.sqlite",
                  resend_after=0.5)
    for i in range(20):
        table.sender.submit({"i": i})
    run_until([table], lambda: False, timeout=0.2)
    private_broker.kill()  # SIGKILL: whatever was not autosaved is gone
    private_broker.start()
    head.link.start()
    assert run_until([head, table], lambda: table.sender.pending_count == 0, timeout=15)
    assert_exactly_once_in_seq_order(head, 1, 20)


@pytest.mark.slow
def test_a_table_cut_off_keeps_appending_and_everything_arrives_once(make_link, topics,
                                                                     tmp_path, cut_proxy):
    head = Head(make_link("head"), topics, tmp_path / "log.sqlite")
    table = Table(make_link("table-2", port=cut_proxy.port), topics, 2,
                  tmp_path / "ob.sqlite", resend_after=0.5)
    for i in range(5):
        table.sender.submit({"i": i})
    assert run_until([head, table], lambda: table.sender.pending_count == 0)
    cut_proxy.cut()
    cut_until = time.monotonic() + 1.5
    i = 5
    while time.monotonic() < cut_until:  # bounded: 1.5 s of play with no network
        table.sender.submit({"i": i})
        i += 1
        run_until([head, table], lambda: False, timeout=0.05)
    assert len(head.log) == 5 and table.sender.pending_count == i - 5
    cut_proxy.restore()
    assert run_until([head, table], lambda: table.sender.pending_count == 0, timeout=10)
    assert_exactly_once_in_seq_order(head, 2, i)


@pytest.mark.parametrize("reboot", ["table", "head"])
def test_a_node_reboot_with_events_in_flight_still_gives_exactly_once(
        make_link, topics, tmp_path, reboot):
    head = Head(make_link("head"), topics, tmp_path / "log.sqlite")
    table = Table(make_link("table-4"), topics, 4, tmp_path / "ob.sqlite")
    for i in range(10):
        table.sender.submit({"i": i})
    head.step()  # some may be committed, some in flight, some acks not yet seen
    if reboot == "table":
        table.link.stop()
        table.outbox.close()
        table = Table(make_link("table-4"), topics, 4, tmp_path / "ob.sqlite")
    else:
        head.link.stop()
        head.log.close()
        head = Head(make_link("head"), topics, tmp_path / "log.sqlite")
    for i in range(10, 15):
        table.sender.submit({"i": i})
    assert run_until([head, table], lambda: table.sender.pending_count == 0)
    assert [e.payload["i"] for e in head.log.replay()] == list(range(15))


def test_a_renumbered_table_is_caught_not_silently_merged(tmp_path, caplog):
    broker, topics = InprocBroker(), Topics("fri")
    head = Head(broker.link("head"), topics, tmp_path / "log.sqlite")
    old = Table(broker.link("table-1"), topics, 1, tmp_path / "old.sqlite")
    head.link.start(), old.link.start()
    for i in range(3):
        old.sender.submit({"i": i})
    assert run_until([head, old], lambda: old.sender.pending_count == 0)
    old.link.stop()
    # A new card with an empty outbox: the retained ack arrives right after connecting ...
    fresh = Table(broker.link("table-1"), topics, 1, tmp_path / "new.sqlite")
    assert not fresh.sender.ack_seen
    fresh.link.start()
    fresh.step()
    assert fresh.sender.ack_seen and fresh.outbox.last_seq == 3
    assert fresh.sender.submit({"i": 3}) == 4  # ... so numbering continues after the head's
    assert run_until([head, fresh], lambda: fresh.sender.pending_count == 0)
    assert [e.payload["i"] for e in head.log.replay()] == [0, 1, 2, 3]
    # A table that submits before hearing the ack reuses a seq: the head says so, loudly.
    caplog.set_level(logging.ERROR)
    head.link.inbox.put(Message(topics.events(1), envelope.event("table-1", 1, 1, {"i": 9})))
    head.step()
    assert any("different payload" in r.getMessage() for r in caplog.records)
    assert len(head.log) == 4


def test_a_payload_the_protocol_refuses_is_logged_as_rejected_and_does_not_block(tmp_path,
                                                                                 caplog):
    from bunco_pi.protocol import decode_entry

    broker, topics = InprocBroker(), Topics("fri")
    head = Head(broker.link("head"), topics, tmp_path / "log.sqlite")
    head.ingest.check = lambda ev: decode_entry(ev.payload["entry"])
    table = Table(broker.link("table-1"), topics, 1, tmp_path / "ob.sqlite")
    head.link.start(), table.link.start()
    caplog.set_level(logging.WARNING)
    for entry in (["roll", [1, 2, 3]], ["roll", [9, 9, 9]], ["pass"]):
        table.sender.submit({"round": 0, "entry": entry})
    table.sender.submit({"round": 0})  # no entry at all
    table.sender.submit({"round": 0, "entry": ["undo"]})
    assert run_until([head, table], lambda: table.sender.pending_count == 0)
    assert [e.seq for e in head.applied] == [1, 3, 5]
    assert [e.seq for e in head.log.replay()] == [1, 3, 5]
    assert head.log.highest(1) == 5 and head.ingest.stats.rejected == 2
    lines = [r.getMessage() for r in caplog.records if "refused by the protocol" in r.getMessage()]
    assert len(lines) == 2 and "seq 2" in lines[0] and "seq 4" in lines[1]


# --- the head coordinator on top of this layer ---------------------------------------------


def test_the_coordinator_over_delivery_gives_the_same_night_after_a_restore(tmp_path):
    """A round played through outboxes, the link and the log, with every event sent twice;
    the head's night equals one rebuilt from its log alone."""
    import random

    from bunco_pi.head.coordinator import Commit, Coordinator, PublishState, PublishView
    from bunco_pi.head.eventlog import OWN_SOURCE
    from bunco_pi.protocol import TableEvent, decode_entry, encode_entry
    from bunco_pi.rules.house import preset, preset_text
    from bunco_pi.rules.table_round import Bell, Roll
    from bunco_pi.sim.players import make_players

    broker, topics = InprocBroker(), Topics("fri")
    head = Head(broker.link("head"), topics, tmp_path / "log.sqlite")
    head.ingest.check = lambda ev: decode_entry(ev.payload["entry"])
    coord = Coordinator(preset("classic"), preset_text("classic"), "fri", 3,
                        entropy=random.Random(1))

    def carry_out(effects):  # the head's shell: commit first, then say it
        for effect in effects:
            if isinstance(effect, Commit) and effect.records:
                head.log.append_own("head", *effect.records)
            elif isinstance(effect, PublishState):
                head.link.publish(topics.state(), envelope.message("head", effect.state),
                                  retain=True)
            elif isinstance(effect, PublishView):
                head.link.publish(topics.view(effect.table),
                                  envelope.message("head", effect.view), retain=True)

    def head_step():
        busy = head.step()
        batch = [TableEvent(ev.table, ev.seq, ev.payload["round"],
                            decode_entry(ev.payload["entry"])) for ev in head.applied]
        head.applied.clear()
        if batch:
            carry_out(coord.accept(batch))
        return busy

    head_node = type("HeadNode", (), {"step": staticmethod(head_step)})
    tables = {n: Table(broker.link(f"table-{n}"), topics, n, tmp_path / f"ob{n}.sqlite")
              for n in (1, 2, 3)}
    head.link.start()
    for t in tables.values():
        t.link.start()
    carry_out(coord.start_night(make_players(12)))
    carry_out(coord.press_bell())
    assert coord.night.phase == "playing"

    rng, heard = random.Random(5), set()
    for _ in range(2000):  # bounded; a round takes a few hundred rolls
        if coord.night.phase not in ("playing", "finishing"):
            break
        if coord.night.bell_rung:
            waiting = [t.setup.table for t in coord.night.tables
                       if not t.bell and not t.done and t.setup.table not in heard]
            if waiting:
                n, entry = waiting[0], Bell()
                heard.add(n)
            else:
                n = rng.choice([t.setup.table for t in coord.night.tables if not t.done])
                entry = Roll((rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6)))
        else:
            n = rng.choice([t.setup.table for t in coord.night.tables if not t.done])
            entry = Roll((rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6)))
        table = tables[n]
        table.sender.submit({"round": coord.night.round_index, "entry": encode_entry(entry)})
        table.sender.resend_pending()  # every event arrives at least twice
        assert run_until([head_node, *tables.values()],
                         lambda t=table: t.sender.pending_count == 0)
    assert coord.night.phase == "results"
    assert head.ingest.stats.duplicates > 0

    records = [ev.payload if ev.table == OWN_SOURCE else
               {"kind": "table", "table": ev.table, "seq": ev.seq,
                "round": ev.payload["round"], "entry": ev.payload["entry"]}
               for ev in head.log.replay()]
    again = Coordinator(preset("classic"), preset_text("classic"), "fri", 3)
    again.restore(records)
    assert again.night == coord.night


def test_a_table_resends_less_and_less_often_while_no_ack_comes(tmp_path):
    """A head that has fallen behind must not get every table's whole backlog again every few
    seconds: the wait doubles after each resend that brings no ack (3, 6, 12, 24, then 30 s),
    and the first ack brings it back to 3 s."""
    broker, topics = InprocBroker(), Topics("fri")
    silent = broker.link("head")  # hears every event, acknowledges nothing until told to
    silent.subscribe(topics.events(1))
    silent.start()
    now = [0.0]
    table = Table(broker.link("table-1"), topics, 1, tmp_path / "ob.sqlite",
                  clock=lambda: now[0])
    table.link.start()
    heard: list[int] = []

    def advance(seconds):
        now[0] += seconds
        table.step()
        while not silent.inbox.empty():  # the in-process broker delivers as it publishes
            m = silent.inbox.get_nowait()
            if isinstance(m, Message):
                heard.append(envelope.decode(m.topic, m.payload).seq)

    advance(0)  # the table takes its Connected
    table.sender.submit({"i": 1})
    table.sender.submit({"i": 2})
    advance(0)
    assert heard == [1, 2]
    resent_at = []
    for _ in range(90):  # 90 s without an ack
        before = len(heard)
        advance(1)
        if len(heard) > before:
            assert heard[before:] == [1, 2]  # the whole backlog, each time
            resent_at.append(now[0])
    assert resent_at == [3, 9, 21, 45, 75]
    silent.publish(topics.ack(1), envelope.message("head", ack_payload(1)), qos=1, retain=True)
    advance(0)
    assert table.sender.pending_count == 1
    del heard[:]
    advance(2.5)
    assert heard == []
    advance(0.5)  # progress: three seconds again
    assert heard == [2]
