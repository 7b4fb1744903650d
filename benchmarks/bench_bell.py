"""The head's service over a real mosquitto: how fast the bell reaches the tables, a press
reaches the head's log, and the head ingests a burst, beside raw paho doing the same fan-out.

Run: python3 benchmarks/bench_bell.py [--rounds 20] [--presses 100] [--burst 600]

(The head in a process of its own, beside raw SQLite: benchmarks/bench_head.py; a whole
night at 50 and 100 tables: benchmarks/bench_night.py.)

Each figure stands beside a raw paho baseline measured in the same run, on the same private
broker: the bell beside a bare retained publish of a payload of the same size to as many bare
subscribers (each also subscribed to its own view's topic, as a table is); a press beside a
bare QoS 1 request/response; the ingest beside bare QoS 1 messages into a bare subscriber.
The head's actions come in through its inbox, as a bell press does, so its loop wakes at
once. Loopback only; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import queue
import random
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog, IncomingEvent
from bunco_pi.head.service import HeadService, HeadTask
from bunco_pi.net import envelope
from bunco_pi.net.broker import Broker
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.protocol import NightPosition, TableEvent, encode_entry, split_state
from bunco_pi.rules.house import preset, preset_text
from bunco_pi.rules.table_round import Bell, Pass, Roll, Tally
from bunco_pi.sim.players import make_players
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.sender import TableSender


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def raw_client(broker: Broker, user: str, cid: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=cid, protocol=mqtt.MQTTv5)
    client.username_pw_set(user, broker.credentials.password(user))
    client.on_socket_open = lambda c, u, sock: sock.setsockopt(6, 1, 1)  # TCP_NODELAY
    client.connect(broker.host, broker.port)
    client.loop_start()
    return client


def stop_clients(clients: list[mqtt.Client]) -> None:
    for c in clients:
        c.loop_stop()
        c.disconnect()


class Listeners:
    """``count`` bare paho subscribers to ``topic`` in a process of their own, as the tables
    are boxes of their own: their threads do not compete with the head's for this process's
    GIL. Subscriber n also takes ``own.format(n=n)`` (a table's own view), as a table does.
    Each arrival is timed on arrival (``time.perf_counter``, the system's monotonic clock, the
    same in both processes) and handed back as (n, time, topic, payload)."""

    def __init__(self, broker: Broker, count: int, topic: str, tag: str, own: str = "") -> None:
        ctx = multiprocessing.get_context("spawn")  # not fork: this process has threads
        self.arrivals = ctx.Queue()
        self._ready = ctx.Event()
        self._stop = ctx.Event()
        # The broker binds a client id to its user name: one user for each live listener.
        users = [(f"reader-{n}", broker.credentials.password(f"reader-{n}"))
                 for n in range(1, count + 1)]
        self.proc = ctx.Process(target=_listen, daemon=True, args=(
            broker.host, broker.port, users, topic, own, tag, self.arrivals, self._ready,
            self._stop))
        self.proc.start()
        if not self._ready.wait(30):
            raise RuntimeError("the listeners did not subscribe in time")

    def get(self, timeout: float) -> tuple[int, float, str, bytes]:
        return self.arrivals.get(timeout=timeout)

    def drain(self) -> None:
        with contextlib.suppress(queue.Empty):
            while True:
                self.arrivals.get_nowait()

    def close(self) -> None:
        self._stop.set()
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()


def _listen(host, port, users, topic, own, tag, arrivals, ready, stop) -> None:  # the child
    seen: queue.Queue[tuple[int, float, str, bytes]] = queue.Queue()
    clients = []
    for n, (user, password) in enumerate(users, start=1):
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"{tag}-{n}",
                        protocol=mqtt.MQTTv5)
        c.username_pw_set(user, password)
        c.on_socket_open = lambda cl, u, sock: sock.setsockopt(6, 1, 1)  # TCP_NODELAY

        def on_message(client, userdata, msg, n=n):  # paho's thread: note the time, no more
            seen.put((n, time.perf_counter(), msg.topic, msg.payload))
        c.on_message = on_message
        c.connect(host, port)
        c.loop_start()
        c.subscribe(topic, qos=1)
        if own:
            c.subscribe(own.format(n=n), qos=1)
        clients.append(c)
    time.sleep(0.5)
    while not seen.empty():
        seen.get_nowait()  # retained messages from before: not timed
    ready.set()
    while not stop.is_set():
        with contextlib.suppress(queue.Empty):
            arrivals.put(seen.get(timeout=0.2))
    stop_clients(clients)


class Head:
    """The real head service on its own thread, as `bunco-pi head` runs it: the thread that
    owns the event log opens it (SQLite connections stay on their thread). The benchmark's
    actions reach it as the web console's do, a ``HeadTask`` on its inbox, which wakes it at
    once (as a bell press on that inbox does)."""

    def __init__(self, broker: Broker, night: str, tables: int, data: Path) -> None:
        self.topics = Topics(night)
        self.coord = Coordinator(preset("classic"), preset_text("classic"), night, tables,
                                 entropy=random.Random(1))
        self.link = MqttLink("head", broker.host, broker.port, username="head",
                             password=broker.credentials.password("head"),
                             status_topic=self.topics.status("head"), client_id=f"head-{night}")
        self.path = data / f"{night}.sqlite"
        self.players = make_players(tables * 4)
        self.stopped = False
        self.published = 0  # messages the head has published
        self.bell_messages = 0  # of which, at the timed bells
        publish = self.link.publish

        def counted(*args, **kwargs):
            self.published += 1
            return publish(*args, **kwargs)
        self.link.publish = counted
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        self.ready.wait(20)

    def _run(self) -> None:  # the head's one owner thread
        self.log = EventLog(self.path)
        self.service = HeadService(self.coord, self.link, self.log, self.topics, self.players)
        self.service.start()
        self.link.wait_connected(10)
        self.link.wait_subscribed(10)
        self.ready.set()
        while not self.stopped:
            self.service.step(timeout=0.2)
        self.link.stop()
        self.log.close()

    def bell(self) -> None:
        """The host's bell, straight to the coordinator (the service's half-second guard
        against a chattering contact would swallow presses this close together)."""
        if self.coord.night is None:
            self.do(lambda: self.service.carry_out(self.coord.start_night(self.players)))
        else:
            self.do(lambda: self.service.carry_out(self.coord.press_bell()))

    def do(self, action: Callable[[], object]) -> None:
        task = HeadTask(lambda service: action())
        self.link.inbox.put(task)
        task.done.result(10)

    def highest(self) -> dict[int, int]:
        result: dict[int, int] = {}
        self.do(lambda: result.update(self.log.highest_all()))
        return result

    def stop(self) -> None:
        self.stopped = True
        self.link.inbox.put(HeadTask(lambda service: None))  # wake it
        self.thread.join(10)


def bell_latency(broker: Broker, tables: int, rounds: int, data: Path
                 ) -> tuple[list[float], list[float], list[float]]:
    """From the host's bell press (ending a round) to the last table holding the news."""
    night = f"bell{tables}"
    head = Head(broker, night, tables, data)
    head.start()
    state_topic = head.topics.state()
    seen = Listeners(broker, tables, state_topic, f"bench-{night}",
                     own=head.topics.view(1).replace("/table/1/", "/table/{n}/"))
    seqs = dict.fromkeys(range(1, tables + 1), 0)

    def finish_round(index: int) -> None:
        # each table hears the bell before anyone rolled: 0-0, a roll-off; seat 1 scores in it;
        # committed to the log, then accepted, as the head's ingest does (on the head's thread)
        events = []
        for t in range(1, tables + 1):
            for entry in (Bell(), Tally("point"), Pass(), Pass(), Pass(), Pass()):
                seqs[t] += 1
                events.append(TableEvent(t, seqs[t], index, entry))
        head.log.commit([IncomingEvent(e.table, e.seq, table_node(e.table),
                                       {"round": e.round_index, "entry": encode_entry(e.entry)})
                         for e in events])
        head.service.carry_out(head.coord.accept(events))

    ours: list[float] = []
    head.bell()  # lobby: the seats are drawn
    head.bell()  # the first round starts
    for _ in range(rounds):
        # A round lasts minutes: let what the round's start sent settle before the bell
        # (otherwise the bell waits behind 100 views in paho's 20 in-flight messages).
        time.sleep(0.3)
        index = head.coord.night.round_index
        seen.drain()
        before = head.published
        t0 = time.perf_counter()
        head.bell()  # the host's bell ends the round: this is what is timed
        head.bell_messages += head.published - before
        # collect first, decode after: decoding while 50 paho threads deliver would make them
        # queue for the GIL and time the benchmark, not the head
        arrivals = []
        deadline = time.monotonic() + 5
        while len(arrivals) < tables and time.monotonic() < deadline:
            try:
                n, t, topic, payload = seen.get(timeout=1)
            except queue.Empty:
                continue
            if topic == state_topic and b'"bell":true' in payload \
                    and f'"round_index":{index},'.encode() in payload:
                arrivals.append((n, t, payload))
        got: set[int] = set()
        last = t0
        for n, t, payload in arrivals:
            state = envelope.decode(state_topic, payload).payload
            if state.get("phase") == "finishing" and state["round_index"] == index:
                got.add(n)
                last = max(last, t)
        if len(got) < tables:
            raise RuntimeError(f"only {len(got)} of {tables} tables heard the bell")
        ours.append((last - t0) * 1000)
        head.do(lambda index=index: finish_round(index))
        head.bell()  # results -> the next round starts (or the break)
        if head.coord.night.phase == "break":
            head.bell()
        if head.coord.night.phase != "playing":
            break
    seen.close()
    # the bell's message as published: the small state (its parts travel on their own; no
    # table's view changes at the bell, so none is said again)
    core, _ = split_state(head.coord.state())
    size = len(envelope.message("head", NightPosition("0" * 12, 99999).stamp(
        {**core, "parts": {"roster": 9999, "seating": 99999, "rules": 9}})))
    print(f"{tables} tables: the bell's state message is {size} bytes; the head published "
          f"{head.bell_messages / max(1, len(ours)):.1f} messages a bell", flush=True)
    head.stop()
    return (ours, raw_fanout(broker, tables, len(ours), size, f"base{tables}"),
            raw_fanout(broker, tables, len(ours), size, f"durable{tables}",
                       durable=data / f"raw-{tables}.sqlite"))


def raw_fanout(broker: Broker, tables: int, count: int, size: int, tag: str,
               durable: Path | None = None) -> list[float]:
    """A bare retained publish of ``size`` bytes to ``tables`` bare subscribers (each also
    subscribed to a topic of its own, as a table is to its view), timed until the last has
    it; with ``durable``, each publish follows a commit to SQLite with the head's guarantees
    (WAL, synchronous=FULL), as the head logs the ring before it announces it."""
    topic = f"bunco/{tag}/state"
    seen = Listeners(broker, tables, topic, f"raw-{tag}", own=f"bunco/{tag}/view/{{n}}")
    pub = raw_client(broker, "head", f"raw-{tag}-pub")
    db = None
    if durable is not None:
        db = sqlite3.connect(durable)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, payload TEXT)")
        db.commit()
    time.sleep(0.5)
    out = []
    for _ in range(count):
        time.sleep(0.3)  # as between the head's bells: what was sent before has settled
        seen.drain()
        t0 = time.perf_counter()
        if db is not None:
            db.execute("INSERT INTO log (payload) VALUES (?)", ('{"kind": "night"}',))
            db.commit()
        pub.publish(topic, b"x" * size, qos=1, retain=True)
        got, last = 0, t0
        deadline = time.monotonic() + 5
        while got < tables and time.monotonic() < deadline:
            try:
                _, arrived, at_topic, _ = seen.get(timeout=1)
            except queue.Empty:
                continue
            if at_topic == topic:
                last = max(last, arrived)
                got += 1
        out.append((last - t0) * 1000)
    seen.close()
    stop_clients([pub])
    if db is not None:
        db.close()
    return out


def press_to_commit(broker: Broker, presses: int, burst: int, data: Path):
    """A table's entry from submit (outbox fsync) until the head's ack (sent after its log
    commit); then a burst from 3 tables at once, for the head's durable ingest rate. The
    tables run in a process of their own, as boxes do: they do not share the head's GIL."""
    head = Head(broker, "press", 3, data)
    head.start()
    head.bell()
    head.bell()  # round 1 is being played
    ctx = multiprocessing.get_context("spawn")  # not fork: this process has threads
    out, go, stop = ctx.Queue(), ctx.Event(), ctx.Event()
    users = {n: broker.credentials.password(table_node(n)) for n in (1, 2, 3)}
    tables = ctx.Process(target=_press_tables, daemon=True, args=(
        broker.host, broker.port, users, head.topics.night, str(data), presses, burst, out,
        go, stop))
    tables.start()
    try:
        latencies = out.get(timeout=120)
        target = out.get(timeout=60)  # each table's last seq once its outbox holds the burst
        before = head.highest()
        go.set()
        t0 = out.get(timeout=30)  # when the tables began to send it (the same clock)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            high = head.highest()
            if all(high.get(n, 0) >= target[n] for n in target):
                break
            time.sleep(0.005)
        elapsed = time.perf_counter() - t0
        committed = sum(head.highest().get(n, 0) - before.get(n, 0) for n in target)
    finally:
        stop.set()
        tables.join(20)
        if tables.is_alive():
            tables.kill()
        head.stop()
    return latencies, raw_round_trip(broker, presses), committed / elapsed, raw_ingest(broker, burst)


def _press_tables(host, port, users, night, data, presses, burst, out, go, stop) -> None:
    """The child: three tables' senders; table 2 presses and times each ack, then all three
    hold ``burst`` entries and send them at once when told."""
    topics = Topics(night)
    senders = []
    for n, password in users.items():
        name = table_node(n)
        link = MqttLink(name, host, port, username=name, password=password,
                        status_topic=topics.status(name), client_id=f"press-{name}")
        sender = TableSender(link, topics, n, Outbox(Path(data) / f"out-{n}.sqlite"))
        link.start()
        link.wait_connected(10)
        link.wait_subscribed(10)
        senders.append((link, sender))
    link2, sender2 = senders[1]
    no_score = encode_entry(Roll((2, 3, 4)))  # round 1: scores nothing, so the dice pass on
    latencies = []
    for _ in range(presses):
        t0 = time.perf_counter()
        seq = sender2.submit({"round": 0, "entry": no_score})
        deadline = time.monotonic() + 5
        while sender2.outbox.acked < seq and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                sender2.handle(link2.inbox.get(timeout=0.5))
        latencies.append((time.perf_counter() - t0) * 1000)
    out.put(latencies)
    for _, sender in senders:  # entries waiting in the outboxes, as after a Wi-Fi cut
        for _ in range(burst // 3):
            sender.outbox.append({"round": 0, "entry": no_score})
    out.put({n: sender.outbox.last_seq for n, (_, sender) in zip(users, senders, strict=True)})
    go.wait(60)
    out.put(time.perf_counter())
    for _, sender in senders:
        sender.resend_pending()
    stop.wait(120)
    for link, sender in senders:
        link.stop()
        sender.outbox.close()


def raw_round_trip(broker: Broker, count: int) -> list[float]:
    got: queue.Queue[float] = queue.Queue()
    # Two users (the broker binds a client id to its user): the head asks, a table answers
    # on the one topic it may write.
    a = raw_client(broker, "head", "raw-rtt-a")
    b = raw_client(broker, "table-1", "raw-rtt-b")
    b.on_message = lambda c, u, m: c.publish("bunco/rtt/table/1/events", m.payload, qos=1)
    a.on_message = lambda c, u, m: got.put(time.perf_counter())
    b.subscribe("bunco/rtt/there", qos=1)
    a.subscribe("bunco/rtt/table/1/events", qos=1)
    time.sleep(0.5)
    out = []
    for _ in range(count):
        t0 = time.perf_counter()
        a.publish("bunco/rtt/there", b"{}", qos=1)
        with contextlib.suppress(queue.Empty):
            out.append((got.get(timeout=5) - t0) * 1000)
    stop_clients([a, b])
    return out


def raw_ingest(broker: Broker, count: int) -> float:
    got = threading.Semaphore(0)
    sub = raw_client(broker, "head", "raw-ing-sub")
    sub.on_message = lambda c, u, m: got.release()
    sub.subscribe("bunco/ing/table/1/events", qos=1)
    pub = raw_client(broker, "table-1", "raw-ing-pub")
    time.sleep(0.5)
    t0 = time.perf_counter()
    for _ in range(count):
        pub.publish("bunco/ing/table/1/events", b'{"round":0,"entry":["roll",[2,3,4]]}', qos=1)
    n = 0
    while n < count and got.acquire(timeout=5):
        n += 1
    rate = n / (time.perf_counter() - t0)
    stop_clients([sub, pub])
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20, help="bells measured per night size")
    parser.add_argument("--presses", type=int, default=100)
    parser.add_argument("--burst", type=int, default=600)
    args = parser.parse_args()
    rows = []
    readers = [f"reader-{n}" for n in range(1, 51)]  # a user per bare subscriber
    with tempfile.TemporaryDirectory() as tmp, \
            Broker(Path(tmp) / "broker", tables=4, readers=readers) as broker:
        data = Path(tmp)
        for tables in (3, 50):
            ours, base, durable = bell_latency(broker, tables, args.rounds, data)
            rows.append((f"bell -> last of {tables} tables has it, p50 (ms)",
                         statistics.median(ours), statistics.median(base)))
            rows.append((f"bell -> last of {tables} tables has it, p99 (ms)",
                         pct(ours, 0.99), pct(base, 0.99)))
            rows.append(("  the same p99, beside an fsynced SQLite commit, then the publish",
                         pct(ours, 0.99), pct(durable, 0.99)))
        lat, base_rtt, rate, base_rate = press_to_commit(broker, args.presses, args.burst, data)
        rows.append(("press -> head's committed event (ack back), p50 (ms)",
                     statistics.median(lat), statistics.median(base_rtt)))
        rows.append(("press -> head's committed event (ack back), p99 (ms)",
                     pct(lat, 0.99), pct(base_rtt, 0.99)))
        rows.append(("head durable ingest, burst from 3 tables (events/s)", rate, base_rate))
    print(f"{'measure':56} {'bunco-pi':>10} {'raw paho':>10} {'ratio':>7}")
    for label, ours_v, base_v in rows:
        print(f"{label:56} {ours_v:10.2f} {base_v:10.2f} {ours_v / base_v:7.2f}")
    print("\nbaselines: bare paho clients on the same broker in the same run (bell: a retained "
          "publish of the\nsame size to as many subscribers, and the same after a commit to "
          "SQLite in WAL mode with\nsynchronous=FULL, as the head logs the ring before it says "
          "it; press: a QoS 1 request/response;\ningest: QoS 1 messages into a bare subscriber, "
          "no storage).")


if __name__ == "__main__":
    main()
