"""The head over a real mosquitto, in its own process: how fast a press reaches the head's
log, and how fast the head ingests a burst.

Run: python3 benchmarks/bench_head.py [--presses 100] [--burst 600]

Each figure stands beside the raw version of the same work, measured in the same run: a press
beside a bare QoS 1 request/response on the same broker; the ingest beside SQLite with the
head's guarantees (WAL, synchronous=FULL, a commit per event) in a process of its own, and
beside bare QoS 1 messages. Loopback only; every loop is bounded in count and time.
(The bell and the results at 50 and 100 tables: benchmarks/bench_night.py.)
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bunco_pi.net import envelope
from bunco_pi.net.broker import Broker
from bunco_pi.net.link import Message
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import Topics, table_node
from bunco_pi.protocol import encode_entry
from bunco_pi.rules.table_round import Roll
from bunco_pi.table.outbox import Outbox
from bunco_pi.table.sender import TableSender

ROOT = Path(__file__).resolve().parent.parent


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


class HeadProcess:
    """The real ``bunco-pi head`` in its own process, as on the night; ``--auto-host`` presses
    the bell (seats, then round 1) once every table is online."""

    def __init__(self, broker: Broker, night: str, tables: int, data: Path) -> None:
        self.topics = Topics(night)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", "head", "--night", night,
             "--tables", str(tables), "--broker", f"{broker.host}:{broker.port}",
             "--credentials", str(broker.workdir / "credentials.json"),
             "--data-dir", str(data), "--no-gpio", "--auto-host", "0.2", "--seed", "7"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def wait_acked(senders: list[tuple[MqttLink, TableSender]], target: dict[int, int],
               limit: float) -> bool:
    """Take acks on this thread until every sender's outbox is acknowledged up to ``target``."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if all(s.outbox.acked >= target[s.table] for _, s in senders):
            return True
        for link, sender in senders:
            while True:
                try:
                    sender.handle(link.inbox.get_nowait())
                except queue.Empty:
                    break
        time.sleep(0.0005)
    return False


def press_to_commit(broker: Broker, presses: int, burst: int, data: Path):
    """A table's entry from submit (its outbox fsync) until the head's ack (sent after its
    log commit); then a burst from 3 tables at once, for the head's durable ingest rate. The
    head is its own process; the three tables share this one."""
    head = HeadProcess(broker, "press", 3, data)
    senders = []
    for n in (1, 2, 3):
        name = table_node(n)
        link = MqttLink(name, broker.host, broker.port, username=name,
                        password=broker.credentials.password(name),
                        status_topic=head.topics.status(name), client_id=f"press-{name}")
        sender = TableSender(link, head.topics, n, Outbox(data / f"out-{n}.sqlite"))
        link.subscribe(head.topics.state())
        link.start()
        link.wait_connected(10)
        link.wait_subscribed(10)
        senders.append((link, sender))
    link2, sender2 = senders[1]
    deadline = time.monotonic() + 30
    playing = False
    while not playing and time.monotonic() < deadline:  # round 1 starts once all are online
        with contextlib.suppress(queue.Empty):
            item = link2.inbox.get(timeout=0.5)
            if isinstance(item, Message) and item.topic == head.topics.state():
                playing = envelope.decode(item.topic, item.payload).payload["phase"] == "playing"
    if not playing:
        raise RuntimeError("the head never started round 1")
    no_score = encode_entry(Roll((2, 3, 4)))  # round 1: scores nothing, so the dice pass on
    latencies = []
    for _ in range(presses):
        t0 = time.perf_counter()
        seq = sender2.submit({"round": 0, "entry": no_score})
        wait_acked([(link2, sender2)], {2: seq}, 5)
        latencies.append((time.perf_counter() - t0) * 1000)
    for _, sender in senders:  # entries waiting in the outboxes, as after a Wi-Fi cut
        for _ in range(burst // 3):
            sender.outbox.append({"round": 0, "entry": no_score})
    target = {s.table: s.outbox.last_seq for _, s in senders}
    count = sum(target[s.table] - s.outbox.acked for _, s in senders)
    t0 = time.perf_counter()
    for _, sender in senders:
        sender.resend_pending()
    if not wait_acked(senders, target, 120):
        raise RuntimeError("the head did not acknowledge the burst in 120 s")
    elapsed = time.perf_counter() - t0
    for link, sender in senders:
        link.stop()
        sender.outbox.close()
    head.stop()
    return (latencies, raw_round_trip(broker, presses, data), count / elapsed,
            raw_sqlite(data / "raw.sqlite", burst), raw_ingest(broker, burst))


def raw_sqlite(path: Path, count: int) -> float:
    """The storage the head promises, bare: SQLite, WAL, synchronous=FULL, a commit per event
    of the same payload, in a process of its own."""
    code = (
        "import sqlite3, sys, time\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('PRAGMA journal_mode=WAL'); con.execute('PRAGMA synchronous=FULL')\n"
        "con.execute('CREATE TABLE ev (t INTEGER, seq INTEGER, payload TEXT, UNIQUE (t, seq))')\n"
        "p = '{\"round\":0,\"entry\":[\"roll\",[2,3,4]]}'\n"
        "n = int(sys.argv[2]); t0 = time.perf_counter()\n"
        "for i in range(n):\n"
        "    con.execute('BEGIN'); con.execute('INSERT INTO ev VALUES (?, ?, ?)', (i % 3, i, p))\n"
        "    con.execute('COMMIT')\n"
        "print(n / (time.perf_counter() - t0))\n")
    out = subprocess.run([sys.executable, "-c", code, str(path), str(count)], check=True,
                         capture_output=True, text=True, timeout=300).stdout
    return float(out)


def durable(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("CREATE TABLE IF NOT EXISTS ev (seq INTEGER PRIMARY KEY, payload BLOB)")
    return con


def commit(con: sqlite3.Connection, payload: bytes) -> None:
    con.execute("BEGIN")
    con.execute("INSERT INTO ev (payload) VALUES (?)", (payload,))
    con.execute("COMMIT")


def raw_round_trip(broker: Broker, count: int, data: Path) -> list[float]:
    """The same work bare: the sender commits (WAL, FULL), publishes QoS 1; the receiver
    commits, answers QoS 1; the same payload."""
    got: queue.Queue[float] = queue.Queue()
    a = raw_client(broker, "head", "raw-rtt-a")
    b = raw_client(broker, "head", "raw-rtt-b")
    a_db, b_db = durable(data / "rtt-a.sqlite"), durable(data / "rtt-b.sqlite")

    def answer(c: mqtt.Client, u: object, m: mqtt.MQTTMessage) -> None:
        commit(b_db, m.payload)
        c.publish("bunco/rtt/back", m.payload, qos=1)
    b.on_message = answer
    a.on_message = lambda c, u, m: got.put(time.perf_counter())
    b.subscribe("bunco/rtt/there", qos=1)
    a.subscribe("bunco/rtt/back", qos=1)
    time.sleep(0.5)
    payload = b'{"round":0,"entry":["roll",[2,3,4]]}'
    out = []
    for _ in range(count):
        t0 = time.perf_counter()
        commit(a_db, payload)
        a.publish("bunco/rtt/there", payload, qos=1)
        with contextlib.suppress(queue.Empty):
            out.append((got.get(timeout=5) - t0) * 1000)
    stop_clients([a, b])
    a_db.close()
    b_db.close()
    return out


def raw_ingest(broker: Broker, count: int) -> float:
    got = threading.Semaphore(0)
    sub = raw_client(broker, "head", "raw-ing-sub")
    sub.on_message = lambda c, u, m: got.release()
    sub.subscribe("bunco/ing/x", qos=1)
    pub = raw_client(broker, "head", "raw-ing-pub")
    time.sleep(0.5)
    t0 = time.perf_counter()
    for _ in range(count):
        pub.publish("bunco/ing/x", b'{"round":0,"entry":["roll",[2,3,4]]}', qos=1)
    n = 0
    while n < count and got.acquire(timeout=5):
        n += 1
    rate = n / (time.perf_counter() - t0)
    stop_clients([sub, pub])
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--presses", type=int, default=100)
    parser.add_argument("--burst", type=int, default=600)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Broker(Path(tmp) / "broker", tables=4) as broker:
        data = Path(tmp)
        lat, base_rtt, rate, sqlite_rate, paho_rate = press_to_commit(
            broker, args.presses, args.burst, data)
        rows.append(("press -> head's committed event (ack back), p50 (ms)",
                     statistics.median(lat), statistics.median(base_rtt), "SQLite + QoS 1 echo"))
        rows.append(("press -> head's committed event (ack back), p99 (ms)",
                     pct(lat, 0.99), pct(base_rtt, 0.99), "SQLite + QoS 1 echo"))
        rows.append(("head durable ingest, burst from 3 tables (events/s)", rate, sqlite_rate,
                     "SQLite FULL commit/event"))
        rows.append(("  the same, against bare QoS 1 delivery (events/s)", rate, paho_rate,
                     "paho QoS 1, no storage"))
    print(f"{'measure':56} {'bunco-pi':>10} {'raw':>10} {'ratio':>7}  raw is")
    for label, ours_v, base_v, what in rows:
        print(f"{label:56} {ours_v:10.2f} {base_v:10.2f} {ours_v / base_v:7.2f}  {what}")
    print("\nThe head is a `bunco-pi head` process of its own; the three tables share this one.\n"
          "Baselines from the same run: press: each side commits to SQLite (WAL, FULL), then a "
          "bare\npaho QoS 1 request/response; ingest: SQLite in WAL mode, synchronous=FULL, one "
          "commit per\nevent of the same payload, in its own process (the goal is >= 0.5x); and "
          "bare QoS 1 messages\ninto a bare subscriber, for reference. The bell at 50 and 100 "
          "tables, the head apart from\nthe tables: benchmarks/bench_night.py.")


if __name__ == "__main__":
    main()
