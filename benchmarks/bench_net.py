"""Network and durable-ingest figures, each beside a baseline measured in the same run.

    python3 benchmarks/bench_net.py [--quick]

Needs mosquitto (``apt-get install mosquitto``). Starts its own broker on a free loopback
port, runs a few seconds, prints one table. Baselines:

- round trip: two raw paho clients (TCP_NODELAY) ping-ponging QoS 1 messages, no storage;
- fan-out: the head's real state as the bell rings (its size at 3 and 50 tables) to raw paho
  subscribers noting it in their own on_message, beside our links whose owner threads decode
  and read it as a table does;
- ingest: raw sqlite3 inserts (WAL, synchronous=FULL), one commit per event.
"""

from __future__ import annotations

import argparse
import queue
import random
import socket
import sqlite3
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

from bunco_pi.head.coordinator import Coordinator  # noqa: E402
from bunco_pi.head.eventlog import EventLog, IncomingEvent  # noqa: E402
from bunco_pi.head.ingest import HeadIngest  # noqa: E402
from bunco_pi.net import envelope  # noqa: E402
from bunco_pi.net.broker import Broker  # noqa: E402
from bunco_pi.net.link import Message  # noqa: E402
from bunco_pi.net.mqtt import MqttLink  # noqa: E402
from bunco_pi.net.topics import Topics  # noqa: E402
from bunco_pi.protocol import NightPosition, split_state  # noqa: E402
from bunco_pi.rules.house import preset, preset_text  # noqa: E402
from bunco_pi.sim.players import make_players  # noqa: E402
from bunco_pi.table.outbox import Outbox  # noqa: E402
from bunco_pi.table.sender import TableSender  # noqa: E402


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ms(x: float) -> str:
    return f"{x * 1000:.2f} ms"


class Bench:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.links: list[MqttLink] = []
        self.raws: list[mqtt.Client] = []

    def link(self, user: str) -> MqttLink:
        b = self.broker
        link = MqttLink(user, b.host, b.port, username=user,
                        password=b.credentials.password(user),
                        client_id=f"bench-{user}-{uuid.uuid4().hex[:6]}")
        link.start()
        if not link.wait_connected(10):
            raise SystemExit(f"{user}: could not connect to the broker")
        self.links.append(link)
        return link

    def raw(self, user: str, on_message: Callable[..., None] | None = None) -> mqtt.Client:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"raw-{uuid.uuid4().hex[:8]}",
                             protocol=mqtt.MQTTv5)
        client.username_pw_set(user, self.broker.credentials.password(user))
        client.on_socket_open = lambda c, u, s: s.setsockopt(
            socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connected = threading.Event()
        client.on_connect = lambda c, u, f, rc, p: connected.set()
        if on_message:
            client.on_message = on_message
        client.connect(self.broker.host, self.broker.port)
        client.loop_start()
        if not connected.wait(10):
            raise SystemExit(f"raw {user}: could not connect")
        self.raws.append(client)
        return client

    def close(self) -> None:
        for link in self.links:
            link.stop(timeout=0.5)
        for client in self.raws:
            client.disconnect()
            client.loop_stop()


def subscribe_and_settle(client: mqtt.Client, topic: str) -> None:
    done = threading.Event()
    client.on_subscribe = lambda *a: done.set()
    client.subscribe(topic, 1)
    done.wait(5)


def raw_round_trip(bench: Bench, n: int) -> list[float]:
    got = threading.Event()
    night = Topics(f"raw-{uuid.uuid4().hex[:6]}")
    head = bench.raw("head", lambda c, u, m: c.publish(night.ack(1), m.payload, qos=1))
    subscribe_and_settle(head, night.events(1))
    table = bench.raw("table-1", lambda c, u, m: got.set())
    subscribe_and_settle(table, night.ack(1))
    data = envelope.event("table-1", 1, 1, {"kind": "roll", "dice": [1, 2, 3]})
    out = []
    for _ in range(n):
        got.clear()
        t0 = time.perf_counter()
        table.publish(night.events(1), data, qos=1)
        if not got.wait(5):
            raise SystemExit("raw round trip timed out")
        out.append(time.perf_counter() - t0)
    return out


def our_round_trip(bench: Bench, n: int, tmp: Path) -> list[float]:
    """submit() (outbox fsync) -> broker -> head commit (log fsync) -> retained ack -> outbox."""
    topics = Topics(f"ours-{uuid.uuid4().hex[:6]}")
    head_link, table_link = bench.link("head"), bench.link("table-2")
    ready, stop = threading.Event(), threading.Event()

    def head_loop() -> None:  # the head's owner thread: sqlite stays on the thread that opened it
        log = EventLog(tmp / "log.sqlite")
        ingest = HeadIngest(head_link, topics, log)
        ready.set()
        while not stop.is_set():
            try:
                batch = [head_link.inbox.get(timeout=0.05)]
            except queue.Empty:
                continue
            while not head_link.inbox.empty():
                batch.append(head_link.inbox.get_nowait())
            ingest.handle_many(batch)
        log.close()

    worker = threading.Thread(target=head_loop, daemon=True)
    worker.start()
    ready.wait(5)
    sender = TableSender(table_link, topics, 2, Outbox(tmp / "outbox.sqlite"))
    if not (head_link.wait_subscribed(5) and table_link.wait_subscribed(5)):
        raise SystemExit("subscriptions not acknowledged")
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        sender.submit({"kind": "roll", "dice": [1, 2, 3], "i": i})
        deadline = t0 + 5
        while sender.pending_count:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise SystemExit("round trip timed out")
            with contextlib.suppress(queue.Empty):
                sender.handle(table_link.inbox.get(timeout=left))
        out.append(time.perf_counter() - t0)
    stop.set()
    worker.join(2)
    return out


def link_round_trip(bench: Bench, n: int) -> list[float]:
    """The same ping-pong as the raw baseline, through MqttLink and owner threads: no storage."""
    topics = Topics(f"link-{uuid.uuid4().hex[:6]}")
    head, table = bench.link("head"), bench.link("table-3")
    head.subscribe(topics.events(3))
    table.subscribe(topics.ack(3))
    stop = threading.Event()

    def echo() -> None:
        while not stop.is_set():
            try:
                event = head.inbox.get(timeout=0.05)
            except queue.Empty:
                continue
            if isinstance(event, Message):
                head.publish(topics.ack(3), event.payload)

    worker = threading.Thread(target=echo, daemon=True)
    worker.start()
    if not (head.wait_subscribed(5) and table.wait_subscribed(5)):
        raise SystemExit("subscriptions not acknowledged")
    data = envelope.event("table-3", 3, 1, {"kind": "roll", "dice": [1, 2, 3]})
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        table.publish(topics.events(3), data)
        while not isinstance(table.inbox.get(timeout=5), Message):
            pass
        out.append(time.perf_counter() - t0)
    stop.set()
    worker.join(2)
    return out


def fan_out(bench: Bench, subscribers: int, n: int, raw: bool) -> list[float]:
    topics = Topics(f"fan-{uuid.uuid4().hex[:6]}")
    lock = threading.Lock()
    state = {"count": 0}
    all_in = threading.Event()

    def arrived() -> None:
        with lock:
            state["count"] += 1
            if state["count"] == subscribers:
                all_in.set()

    users = [f"table-{i}" for i in range(1, subscribers + 1)]
    if raw:
        for user in users:
            subscribe_and_settle(bench.raw(user, lambda c, u, m: arrived()), topics.control())
        publisher = bench.raw("head")

        def publish(data: bytes) -> None:
            publisher.publish(topics.control(), data, qos=1)
    else:
        for user in users:
            link = bench.link(user)
            link.subscribe(topics.control())
            link.wait_subscribed(5)

            def consume(link: MqttLink = link) -> None:  # each node's owner thread
                while True:
                    event = link.inbox.get()
                    if event is None:
                        return
                    if not isinstance(event, Message):
                        continue
                    env = envelope.try_decode(event.topic, event.payload)
                    # what a table does with the head's state: read the phase, round and bell
                    if env is not None and env.payload["bell"] and env.payload["round_index"] >= 0:
                        arrived()

            threading.Thread(target=consume, daemon=True).start()
        head = bench.link("head")

        def publish(data: bytes) -> None:
            head.publish(topics.control(), data)
    time.sleep(0.3)
    out = []
    data = bell_state(subscribers)
    for _ in range(n):
        with lock:
            state["count"] = 0
        all_in.clear()
        t0 = time.perf_counter()
        publish(data)
        if not all_in.wait(5):
            raise SystemExit(f"fan-out to {subscribers} timed out")
        out.append(time.perf_counter() - t0)
    if not raw:
        for link in bench.links:
            link.inbox.put(None)  # type: ignore[arg-type]
    return out


def bell_state(tables: int) -> bytes:
    """The head's real retained state as the bell rings at ``tables`` tables: the small state
    the bell travels in (the roster, seating and rules go on their own topics, and only when
    they change), with the position and the parts' versions the head stamps on it."""
    coord = Coordinator(preset("classic"), preset_text("classic"), "fan", tables,
                        entropy=random.Random(1))
    coord.start_night(make_players(tables * 4))
    coord.press_bell()  # round 1 starts
    coord.press_bell()  # the host's bell ends it
    core, parts = split_state(coord.state())
    core["parts"] = dict.fromkeys(parts, 123456)
    return envelope.message("head", NightPosition("0123456789abcdef", 123456).stamp(core))


def ingest_rate(tmp: Path, n: int, batch: int) -> float:
    log = EventLog(tmp / f"ingest-{batch}.sqlite")
    log.commit([IncomingEvent(2, s, "table-2", {}) for s in range(1, 11)])  # warm the WAL
    events = [IncomingEvent(1, s, "table-1", {"kind": "roll", "dice": [1, 2, 3]})
              for s in range(1, n + 1)]
    t0 = time.perf_counter()
    for i in range(0, n, batch):
        log.commit(events[i:i + batch])
    elapsed = time.perf_counter() - t0
    assert len(log) == n + 10
    log.close()
    return n / elapsed


def raw_sqlite_rate(tmp: Path, n: int) -> float:
    db = sqlite3.connect(tmp / "raw.sqlite", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE e (t INTEGER, s INTEGER, p TEXT, UNIQUE (t, s))")
    for s in range(1, 11):  # warm the WAL, as for the event log
        db.execute("INSERT INTO e VALUES (2, ?, '{}')", (s,))
    t0 = time.perf_counter()
    for s in range(1, n + 1):
        db.execute("INSERT INTO e VALUES (1, ?, ?)", (s, '{"kind":"roll","dice":[1,2,3]}'))
    elapsed = time.perf_counter() - t0
    db.close()
    return n / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    n = 50 if args.quick else 200
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmpdir, Broker(tables=50) as broker:
        tmp = Path(tmpdir)
        def measured(measure: Callable[..., list[float]], *args: object,
                     **kwargs: object) -> list[float]:
            # Fresh clients per measure, closed after it: the broker binds each client id to
            # its user, so two live connections of one user would keep taking over each other.
            bench = Bench(broker)
            try:
                return measure(bench, *args, **kwargs)
            finally:
                bench.close()

        raw = measured(raw_round_trip, n)
        links = measured(link_round_trip, n)
        ours = measured(our_round_trip, n, tmp)
        for label, mine in (("QoS1 ping-pong via MqttLink, no storage", links),
                            ("QoS1 event: outbox, head log commit, ack", ours)):
            for p in (50, 99):
                rows.append((f"{label}, p{p}", ms(pct(mine, p)), ms(pct(raw, p)),
                             f"{pct(mine, p) / pct(raw, p):.1f}x"))
        for subs, count in ((3, n // 2), (50, n // 4)):
            base = measured(fan_out, subs, count, raw=True)
            mine = measured(fan_out, subs, count, raw=False)
            for p in (50, 99):
                rows.append((f"fan-out bell state ({len(bell_state(subs))} B) -> {subs} nodes "
                             f"(last one), p{p}",
                             ms(pct(mine, p)), ms(pct(base, p)),
                             f"{pct(mine, p) / pct(base, p):.1f}x"))
        base_rate = raw_sqlite_rate(tmp, n)
        single = ingest_rate(tmp, n, 1)
        batched = ingest_rate(tmp, n * 10, 100)
        rows.append(("event log ingest, one commit per event", f"{single:,.0f} ev/s",
                     f"{base_rate:,.0f} ev/s", f"{single / base_rate:.2f}x"))
        rows.append(("event log ingest, 100 events per commit", f"{batched:,.0f} ev/s",
                     f"{base_rate:,.0f} ev/s", f"{batched / base_rate:.1f}x"))
    head = ("measure", "bunco-pi", "baseline", "ratio")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    for row in [head, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    print(f"\n{n} round trips, loopback, one mosquitto. Baselines: raw paho QoS 1 ping-pong; "
          "raw paho subscribers;\nraw sqlite3 (WAL, synchronous=FULL) one commit per insert. "
          "The full event round trip includes two fsyncs (outbox, then log).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
