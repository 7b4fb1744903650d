"""A whole networked night at 200 and 500 tables: the head's bell and results, its memory
round by round, and its CPU, each process apart as on the night.

Run from the repository root:
    python3 benchmarks/bench_night.py [--tables 200 500] [--sets 1] [--pace 2.5] [--receivers]
                                      [--whole-night]
    python3 benchmarks/bench_night.py --tables 200 500 --whole-night-only

``--pace S``: each table rolls once every S seconds on average (a human pace: a roll, a look,
the dice passed); without it the tables roll flat out: each table rolls again as soon as the
head's ack of its last entry is back, so the entries a second are what the head can take.
``--tables-nice N``: the tables' processes run at nice N. In a hall each table is a box of its
own; here 500 tables share two cores with the head and the broker, and at nice 0 they can
starve the head's network thread past its keepalive. Their clients still note each arrival,
the relay's and the bell's alike, so both wait the same for a niced table process.
``--head-table-apart``: table 1, whose roll rings the bell and whose process sends the relay's
pings, in a process of its own. Packed 100 to a process, its roll waits its turn behind the
other 99 tables' Python work on the shared cores, the bell's and the relay's alike; in a
hall the head table is a box of its own.
``--no-relay-at-bell``: no relay ping at the very moment table 1's roll rings the bell, only
the pings once a second. The broker fans out one message at a time: a ping sent with the bell
is fanned out to the same 1,000 clients just before or just after it, and whichever comes
second waits for the other's fan-out (20 to 110 ms at 500 tables here, round by round in the
kept files). So "the relay at the same moment" measures each against the other, not the room.
``--receivers``: also a receiver of each table's own in C (``mosquitto_sub``, from Debian's
mosquitto-clients), timing the bell, the results and the relay to the last of them: what a
hall's boxes, each a computer of its own, would see, where the tables' Python clients here
wait their turn for two shared cores.
``--whole-night``: also the head's memory over a whole night (4 sets, 24 rounds) at each size,
from its event log of a simulated night replayed by the real ``bunco-pi head``, and round by
round: the head's coordinator fed that log record by record in a process of its own, its
record written by the head's ``RecordWriter`` at each round's end as on the night, and the
RSS read then. ``--whole-night-only``: that alone, without the networked nights.

Over one private mosquitto on loopback: the real ``bunco-pi head`` (its event log,
``--record``, the host's bell pressed by ``--auto-host``, a few clocks read on its bell path);
processes of scripted tables (``--per-process``, 100 by default; each its own MQTT client,
login and durable outbox, rolling seeded dice, entering the bell when it hears it:
``tests/scripted_tables.py``), each table's client noting in paho's thread when each state
reaches it; and a bare relay.

- bell: from table 1 sending the roll that reaches its target (outbox fsync included) to the
  last table's client holding the head's ``bell: true`` state;
- results: from the entry that finished the last table to the last table holding the results;
- the baseline, timed the same way through the same broker to the same tables' clients,
  during the same night: a bare paho relay process commits each ping to SQLite (WAL,
  synchronous=FULL, one commit per message) and publishes it, padded to the size of the
  head's bell state, to a topic every table's client also listens to; the pings are sent
  from the tables' process that holds table 1, committed to their own SQLite file first,
  once at the very moment table 1's roll rings the bell ("at the same moment") and once a
  second in between ("during the night"). Earlier versions timed the relay after the night,
  on an idle broker and machine, against the bell under a full night's load: at 200 tables
  that made the head look three to four times slower than a relay that, sent at the bell's
  moment, was as slow as the bell itself;
- where the bell's time goes, from clocks in the head's process: table 1's roll reaching
  the head's paho thread, the owner thread taking the batch, its commit, its fold, the bell
  handed to paho, then the broker's fan-out to the tables' clients;
- the head's RSS at the start of every round (read from /proc), and its CPU over the night.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import paho.mqtt.client as mqtt  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402

from bunco_pi.net.broker import Broker, free_port  # noqa: E402
from bunco_pi.net.topics import Topics  # noqa: E402
from bunco_pi.rules.house import preset_text  # noqa: E402

RELAY = r"""
import sqlite3, sys, paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
host, port, user, password, db, size, inbound, outbound = sys.argv[1:9]
size = int(size)
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode=WAL"); con.execute("PRAGMA synchronous=FULL")
con.execute("CREATE TABLE IF NOT EXISTS ev (seq INTEGER PRIMARY KEY, payload BLOB)")
def on_message(c, u, m):
    con.execute("BEGIN"); con.execute("INSERT INTO ev (payload) VALUES (?)", (m.payload,))
    con.execute("COMMIT")
    c.publish(outbound, m.payload + b" " * max(0, size - len(m.payload)), qos=1)
c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user, protocol=mqtt.MQTTv5)
c.username_pw_set(user, password)
c.on_socket_open = lambda cl, u, sock: sock.setsockopt(6, 1, 1)
c.on_connect = lambda cl, u, f, rc, p: (cl.subscribe(inbound, qos=1), print("ready", flush=True))
c.on_message = on_message
c.connect(host, int(port), keepalive=60)
c.loop_forever()
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# paho waits on its sockets with select(), which takes no descriptor past 1,023: a process
# holds at most this many clients (a table's also holds its outbox's three SQLite files).
OBSERVERS_A_PROCESS = 200
PING_EVERY_S = 1.0  # the relay's pings during the night, besides one at each bell
SLOW_STEP_S = 0.04  # a step of the head's owner thread this long is written down, with its parts
RELAY_SIZE = 600  # bytes the relay says: the head's bell state is held to that much


def raw_topics(tables: int) -> tuple[str, str]:
    """The relay's two topics, under a night of its own ("raw"): the pings in (written by the
    spare user ``table-<tables+1>``) and the relayed state out (``table-<tables+2>``). The
    broker lets a table user write its own events topic in any night, and every table's
    client reads them all."""
    return f"bunco/raw/table/{tables + 1}/events", f"bunco/raw/table/{tables + 2}/events"


class Observers:
    """Bare read-only paho clients (``observer-n``, a user each: the broker binds a client id
    to its user), ``OBSERVERS_A_PROCESS`` a process, each saying every arrival on a line (the
    monotonic clock is the machine's, so the times compare across processes). The night uses
    one, to follow the head's state for the round starts; the figures are taken at the
    tables' own clients."""

    def __init__(self, broker: Broker, tables: int, topics: list[str], tag: str) -> None:
        self.arrivals: queue.Queue[tuple[int, float, str, dict]] = queue.Queue()
        self.procs = []
        creds = broker.workdir / "credentials.json"
        for first in range(1, tables + 1, OBSERVERS_A_PROCESS):
            last = min(tables, first + OBSERVERS_A_PROCESS - 1)
            proc = subprocess.Popen(
                [sys.executable, __file__, "--observe", f"{first}-{last}",
                 "--observe-broker", f"{broker.host}:{broker.port}",
                 "--observe-credentials", str(creds), "--observe-topic", ",".join(topics),
                 "--observe-tag", tag], stdout=subprocess.PIPE, text=True, cwd=ROOT)
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line == "ready", f"observers {first}-{last}: {line!r}"
            threading.Thread(target=self._read, args=(proc,), daemon=True).start()
            self.procs.append(proc)

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            n, t, topic, state = line.split(" ", 3)
            self.arrivals.put((int(n), float(t), topic, json.loads(state)))

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(30)


def observe(args: argparse.Namespace) -> int:
    """Run as its own process: observers ``first``-``last``; one line per arrival."""
    first, last = (int(x) for x in args.observe.split("-"))
    host, port = args.observe_broker.rsplit(":", 1)
    users = json.loads(Path(args.observe_credentials).read_text())["users"]
    topics = args.observe_topic.split(",")
    out = queue.Queue()
    clients = []
    subscribed = threading.Semaphore(0)
    for n in range(first, last + 1):
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"obs-{args.observe_tag}-{n}",
                        protocol=mqtt.MQTTv5)
        user = f"observer-{n}"
        c.username_pw_set(user, users[user])
        c.on_socket_open = lambda cl, u, sock: sock.setsockopt(6, 1, 1)

        def on_message(client, userdata, msg, n=n):  # paho's thread: note the time only
            out.put((n, time.monotonic(), msg.topic, msg.payload))
        c.on_message = on_message
        c.on_subscribe = lambda *a: subscribed.release()
        c.connect(host, int(port), keepalive=60)
        c.subscribe([(topic, 1) for topic in topics])
        c.loop_start()
        clients.append(c)
        time.sleep(0.005)  # a hall's boxes do not all connect in the same millisecond
    for _ in clients:
        subscribed.acquire(timeout=60)
    print("ready", flush=True)
    try:
        while True:
            n, t, topic, payload = out.get()
            try:
                state = json.loads(payload)
                if "payload" in state:  # the head's envelope
                    state = state["payload"]
                    small = {k: state.get(k) for k in ("round_index", "phase", "bell")}
                else:  # the relay's ping
                    small = {"ping": state["ping"]}
            except (ValueError, KeyError, TypeError):
                small = {}
            small["size"] = len(payload)
            print(n, t, topic, json.dumps(small), flush=True)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0


class Receivers:
    """A receiver of each table's own, beside its scripted client: ``mosquitto_sub`` (C, from
    mosquitto-clients), one process a table, logged in as ``receiver-<n>``, subscribed to the
    head's state and the relay's topic, writing each arrival with its wall-clock time (``%U``)
    to a file of its own. In a hall each table is a box of its own and holds the bell as soon
    as mosquitto's fan-out reaches its connection; here the tables' Python clients share two
    cores a hundred to a process and take their turn for the processor and the GIL, which is
    most of what the bell and the relay alike measure at them. A receiver wakes, notes the time
    and sleeps again in a few microseconds of C, so the last receiver's time is close to what
    the last box would see. The relay's pings reach them the same way: the two stay comparable.
    """

    def __init__(self, broker: Broker, tables: int, topics: list[str], workdir: Path) -> None:
        exe = shutil.which("mosquitto_sub")
        if exe is None:
            raise SystemExit("--receivers needs mosquitto_sub: sudo apt-get install "
                             "mosquitto-clients")
        workdir.mkdir()
        self.files = [workdir / f"receiver-{n}.txt" for n in range(1, tables + 1)]
        self.procs = []
        for n, out in enumerate(self.files, start=1):
            user = f"receiver-{n}"
            subscribe = [arg for topic in topics for arg in ("-t", topic)]
            # -d: its SUBACK line says it is ready; -R: no retained state from before the night
            # stdbuf -oL: a line at a time into its file, not a buffer full at its exit
            self.procs.append(subprocess.Popen(
                ["stdbuf", "-oL", exe, "-h", broker.host, "-p", str(broker.port), "-u", user,
                 "-P", broker.credentials.password(user), "-i", user, "-q", "1", "-R", "-d",
                 *subscribe, "-F", "%U %t %p"],
                stdout=out.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        deadline = time.monotonic() + 60 + tables * 0.05
        waiting = list(self.files)
        while waiting and time.monotonic() < deadline:
            waiting = [f for f in waiting if "SUBACK" not in f.read_text(errors="replace")]
            time.sleep(0.2)
        if waiting:
            raise SystemExit(f"{len(waiting)} receivers did not subscribe in time, "
                             f"e.g. {waiting[0]}")

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(30)

    def arrivals(self, state_topic: str) -> tuple[list, list]:
        """The head's states as (table, monotonic time, round, phase, bell), and the relay's
        pings as (table, monotonic time, ping), in this process's monotonic clock."""
        offset = time.time() - time.monotonic()  # the same machine: one shift for all
        states, pings = [], []
        for n, path in enumerate(self.files, start=1):
            for line in path.read_text(errors="replace").splitlines():
                parts = line.split(" ", 2)
                if len(parts) < 3 or not parts[0][:1].isdigit():
                    continue  # a debug line of mosquitto_sub's own
                try:
                    t, body = float(parts[0]) - offset, json.loads(parts[2])
                except ValueError:
                    continue
                if parts[1] == state_topic and isinstance(body.get("payload"), dict):
                    state = body["payload"]
                    states.append((n, t, state.get("round_index"), state.get("phase"),
                                   bool(state.get("bell"))))
                elif "ping" in body:
                    pings.append((n, t, body["ping"]))
        return states, pings


# --- the tables' process ---------------------------------------------------------------------


class Pinger:
    """The relay's sender, in the tables' process that holds table 1: commits each ping to
    its own SQLite file (as a box's outbox does) and publishes it, at the moment table 1's
    roll rings the bell and every ``PING_EVERY_S`` between, so the relay is timed through
    the same broker, the same processes and the same load as the bell, at the same moment."""

    def __init__(self, host: str, port: int, user: str, password: str, topic: str,
                 db: Path) -> None:
        import sqlite3

        self.topic = topic
        self.con = sqlite3.connect(db, isolation_level=None)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=FULL")
        self.con.execute("CREATE TABLE IF NOT EXISTS out (seq INTEGER PRIMARY KEY, payload BLOB)")
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user,
                                  protocol=mqtt.MQTTv5)
        self.client.username_pw_set(user, password)
        self.client.on_socket_open = lambda cl, u, sock: sock.setsockopt(6, 1, 1)
        self.client.connect(host, port, keepalive=60)
        self.client.loop_start()
        self.sent: list[tuple[int, float, bool]] = []  # (ping, monotonic time, at a bell)
        self.last = 0.0

    def ping(self, at_bell: bool) -> None:
        k = len(self.sent)
        payload = json.dumps({"ping": k}).encode()
        t0 = time.monotonic()
        self.con.execute("BEGIN")
        self.con.execute("INSERT INTO out (payload) VALUES (?)", (payload,))
        self.con.execute("COMMIT")
        self.client.publish(self.topic, payload, qos=1)
        self.sent.append((k, t0, at_bell))
        self.last = t0

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
        self.con.close()


def play_tables(args: argparse.Namespace) -> int:
    """Run as its own process: scripted tables play the night; write each send's time, when
    each table's client received each state (in paho's thread), and the relay's pings."""
    from bunco_pi.net.link import Message
    from tests.scripted_tables import ScriptedTable

    host, port = args.play_broker.rsplit(":", 1)

    class Creds:  # what ScriptedTable reads of a Broker
        def __init__(self, users: dict[str, str]) -> None:
            self.users = users

        def password(self, user: str) -> str:
            return self.users[user]

    users = json.loads(Path(args.play_credentials).read_text())["users"]
    broker = argparse.Namespace(host=host, port=int(port), credentials=Creds(users))
    topics = Topics(args.play_night)
    data = Path(args.play_data)
    first, last = (int(x) for x in args.play.split("-"))
    states: list[tuple[int, float, bytes]] = []  # (table, arrival, payload), paho's threads
    relayed: list[tuple[int, float, bytes]] = []  # the relay's pings, as they arrive

    def stamped(table: ScriptedTable):
        put, topic = table.link.inbox.put, topics.state()

        def sink(event, n=table.number) -> None:
            if isinstance(event, Message) and event.topic == topic:
                states.append((n, time.monotonic(), event.payload))
            elif isinstance(event, Message) and event.topic == args.play_relayed:
                relayed.append((n, time.monotonic(), event.payload))
                return  # the table has nothing to do with it
            put(event)
        return sink

    tables = []
    for n in range(first, last + 1):
        # a box's own wait before it resends (3 s, doubling): the tests' half second would
        # have a head behind at 500 tables checking every table's entries again
        table = ScriptedTable(n, broker, topics, data,  # type: ignore[arg-type]
                              keepalive=args.play_keepalive, resend_after=3.0)
        table.link._sink = stamped(table)  # the bench's only look inside the link
        table.link.subscribe(args.play_relayed)
        tables.append(table.start())
        time.sleep(args.play_stagger)  # a hall's boxes come on over a minute, not at once
    pinger = None
    if args.play_ping:
        user, topic = args.play_ping.split(",")
        pinger = Pinger(host, int(port), user, users[user], topic, data / "pinger.sqlite")
    rng = random.Random(7 + first)
    sends: list[tuple[int, int, float]] = []  # (round index, table, monotonic time)
    deadline = time.monotonic() + args.play_limit
    pace = args.play_pace
    due = {t.number: 0.0 for t in tables}  # when each table rolls next (at a human pace)
    while time.monotonic() < deadline:
        for t in tables:
            t.pump()
        if all(t.state is not None and t.state.get("phase") == "ended" for t in tables):
            break
        now = time.monotonic()
        if pace:
            live = [t for t in tables if t.playing and due[t.number] <= now]
        else:  # flat out: a table rolls again as soon as the head has its last entry
            live = [t for t in tables if t.playing and t.outbox.acked >= t.outbox.last_seq]
        for t in live:  # every live table rolls once a step, as tables do at once
            before = (t.round.done, t.round.bell) if t.round is not None else None
            sends.append((t.round_index, t.number, time.monotonic()))
            t.roll(rng)
            if pinger is not None and args.play_ping_at_bell and t.number == 1 \
                    and t.round is not None and (t.round.done, t.round.bell) != before:
                pinger.ping(at_bell=True)  # this roll rings the bell: the relay goes with it
            if pace:
                due[t.number] = now + pace * rng.uniform(0.5, 1.5)
        if pinger is not None and time.monotonic() - pinger.last >= PING_EVERY_S:
            pinger.ping(at_bell=False)
        if not live:
            time.sleep(0.005 if not pace else 0.02)
    if pinger is not None:
        pinger.close()
    received = []
    for n, t, payload in list(states):
        try:
            state = json.loads(payload)["payload"]
        except (ValueError, KeyError, TypeError):
            continue
        received.append((n, t, state.get("round_index"), state.get("phase"),
                         bool(state.get("bell"))))
    pinged = [(n, t, json.loads(payload)["ping"]) for n, t, payload in list(relayed)]
    Path(args.play_out).write_text(json.dumps({
        "sends": sends, "states": received, "pings": pinger.sent if pinger else [],
        "pinged": pinged}))
    for t in tables:  # after the figures are out: a hundred goodbyes take a while
        t.stop(timeout=0.2)
    return 0


# --- the head, traced ------------------------------------------------------------------------


def traced_head(trace: Path, argv: list[str]) -> int:
    """Run as its own process: the real ``bunco-pi head`` with a few clocks read on its bell
    path, one line per bell: when table 1's last event reached paho's thread (``rx``), when
    the owner thread took the batch (``handle``, of ``batch`` items), when the batch was
    committed and folded, and when the bell's state was handed to paho (``published``)."""
    from bunco_pi import cli
    from bunco_pi.console.desk import ConsoleBridge
    from bunco_pi.head.coordinator import Coordinator
    from bunco_pi.head.ingest import HeadIngest
    from bunco_pi.head.service import HeadService
    from bunco_pi.net.mqtt import MqttLink

    out = trace.open("w", buffering=1)
    marks: dict[str, float] = {}
    events_1 = Topics(argv[argv.index("--night") + 1]).events(1)
    on_message, handle_many = MqttLink._on_message, HeadIngest.handle_many
    accept, publish_state = Coordinator.accept, HeadService._publish_state
    rung = [False]

    def traced_on_message(self, client, userdata, msg):  # type: ignore[no-untyped-def]
        if msg.topic == events_1:
            marks["rx"] = time.monotonic()
        return on_message(self, client, userdata, msg)

    def traced_handle_many(self, events):  # type: ignore[no-untyped-def]
        events = list(events)
        marks["handle"], marks["batch"] = time.monotonic(), len(events)
        try:
            return handle_many(self, events)
        finally:
            marks["committed"] = time.monotonic()

    def traced_accept(self, events):  # type: ignore[no-untyped-def]
        try:
            return accept(self, events)
        finally:
            marks["accepted"] = time.monotonic()

    def traced_publish_state(self, state):  # type: ignore[no-untyped-def]
        publish_state(self, state)
        bell = bool(state.get("bell")) and state.get("phase") in ("playing", "finishing")
        if bell and not rung[0]:
            out.write(json.dumps({"round": state.get("round_index"),
                                  "published": time.monotonic(), **marks}) + "\n")
        rung[0] = bell

    slow = (trace.parent / "head-slow-steps.jsonl").open("w", buffering=1)
    spent: dict[str, float] = {}
    owner = [0]  # the owner thread's ident: only its own time is written down
    collecting = [0.0]  # when the owner thread's running collection began

    def timed(name: str, method):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                if threading.get_ident() == owner[0]:
                    spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
        return run

    def on_gc(phase: str, info: dict) -> None:
        if threading.get_ident() != owner[0]:
            return  # a collection another thread's allocations set off (the console's drawer)
        if phase == "start":
            collecting[0] = time.perf_counter()
        elif collecting[0]:
            name = f"gc{info['generation']}"
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - collecting[0]
            collecting[0] = 0.0

    gc.callbacks.append(on_gc)
    step = HeadService.step

    def traced_step(self, timeout: float = 0.2) -> int:  # type: ignore[no-untyped-def]
        spent.clear()
        owner[0] = threading.get_ident()
        start = time.perf_counter()
        items = step(self, timeout)
        took = time.perf_counter() - start - spent.pop("waiting", 0.0)
        if took > SLOW_STEP_S:
            slow.write(json.dumps({"at": time.monotonic(), "ms": round(took * 1000, 1),
                                   "items": items, **{k: round(v * 1000, 1)
                                                      for k, v in dict(spent).items()}}) + "\n")
        return items

    waiting = queue.Queue.get

    def traced_get(self, block=True, timeout=None):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return waiting(self, block, timeout)
        finally:
            if block and threading.get_ident() == owner[0]:
                spent["waiting"] = spent.get("waiting", 0.0) + time.perf_counter() - start

    queue.Queue.get = traced_get  # type: ignore[method-assign]
    for cls, name in ((HeadService, "carry_out"), (HeadService, "_status"),
                      (HeadService, "_automate"), (Coordinator, "tick")):
        setattr(cls, name, timed(f"{cls.__name__}.{name}", getattr(cls, name)))
    HeadService.step = traced_step  # type: ignore[method-assign]
    MqttLink._on_message = traced_on_message  # type: ignore[method-assign]
    HeadIngest.handle_many = traced_handle_many  # type: ignore[method-assign]
    Coordinator.accept = traced_accept  # type: ignore[method-assign]
    HeadService._publish_state = traced_publish_state  # type: ignore[method-assign]
    for cls, name in ((HeadIngest, "handle_many"), (Coordinator, "accept"),
                      (ConsoleBridge, "publish_if_changed")):
        setattr(cls, name, timed(f"{cls.__name__}.{name}", getattr(cls, name)))
    return cli.main(argv)


# --- the night ---------------------------------------------------------------------------------


def first_arrivals(rows, want) -> dict:
    """round -> table -> the first arrival that ``want(phase, bell)`` takes."""
    at: dict = {}
    for n, t, r, phase, bell in rows:
        if want(phase, bell):
            at.setdefault(r, {}).setdefault(n, t)
    return at


def table_ranges(tables: int, per_process: int, head_table_apart: bool) -> list[tuple[int, int]]:
    """The tables each process plays, first to last: ``per_process`` a process, or with
    ``head_table_apart`` table 1 (whose roll rings the bell, and the relay's pinger with it) in
    a process of its own and the others ``per_process`` a process after it."""
    start = 2 if head_table_apart else 1
    ranges = [(1, 1)] if head_table_apart else []
    return ranges + [(first, min(tables, first + per_process - 1))
                     for first in range(start, tables + 1, per_process)]


def night(tables: int, sets: int, target: int, tmp: Path, limit: float,
          pace: float = 0.0, stagger: float = 0.01, keepalive: int = 10,
          tables_nice: int = 0, per_process: int = 100,
          receivers: bool = False, head_table_apart: bool = False,
          relay_at_bell: bool = True) -> dict:
    rules = tmp / "rules.toml"
    rules.write_text(preset_text("classic").replace("sets = 4", f"sets = {sets}")
                     .replace("break_after_sets = [2]", "break_after_sets = []")
                     .replace("target_score = 21", f"target_score = {target}"))
    # two spare table users: the relay's sender and the relay itself
    readers = ["observer-1", *(f"receiver-{n}" for n in range(1, tables + 1) if receivers)]
    with Broker(tmp / "broker", tables=tables + 2, readers=readers) as broker:
        topics = Topics(f"n{tables}")
        creds = broker.workdir / "credentials.json"
        ping_topic, relayed_topic = raw_topics(tables)
        relay_user = f"table-{tables + 2}"
        relay = subprocess.Popen(
            [sys.executable, "-c", RELAY, broker.host, str(broker.port), relay_user,
             broker.credentials.password(relay_user), str(tmp / "relay.sqlite"),
             str(RELAY_SIZE), ping_topic, relayed_topic], stdout=subprocess.PIPE, text=True)
        assert relay.stdout is not None and relay.stdout.readline().strip() == "ready"
        # one bare client follows the head's state, for the round starts (the head's RSS);
        # the figures are taken at the tables' own clients
        obs = Observers(broker, 1, [topics.state()], f"n{tables}")
        rx = Receivers(broker, tables, [topics.state(), relayed_topic], tmp / "receivers") \
            if receivers else None
        record = tmp / "night.json"
        trace = tmp / "head-trace.jsonl"
        head = subprocess.Popen(
            [sys.executable, __file__, "--head-trace", str(trace), "--",
             "head", "--night", topics.night,
             "--tables", str(tables), "--rules", str(rules),
             "--broker", f"{broker.host}:{broker.port}", "--credentials", str(creds),
             "--data-dir", str(tmp), "--record", str(record), "--no-gpio",
             "--auto-host", "0.3", "--seed", "7", "--exit-after-end", "1",
             "--console-port", str(free_port())],  # the console too, on a port of its own
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=(tmp / "head.log").open("w"))
        (tmp / "outboxes").mkdir()
        outs = []
        procs = []
        for first, last in table_ranges(tables, per_process, head_table_apart):
            outs.append(tmp / f"tables-{first}.json")
            ping = ["--play-ping", f"table-{tables + 1},{ping_topic}"] if first == 1 else []
            # nice(1) rather than a preexec_fn: this process runs threads (the observers')
            niced = ["nice", "-n", str(tables_nice)] if tables_nice else []
            procs.append(subprocess.Popen(
                [*niced, sys.executable, __file__, "--play", f"{first}-{last}",
                 "--play-broker", f"{broker.host}:{broker.port}", "--play-credentials",
                 str(creds), "--play-night", topics.night, "--play-data", str(tmp / "outboxes"),
                 "--play-out", str(outs[-1]), "--play-limit", str(limit),
                 "--play-pace", str(pace), "--play-stagger", str(stagger),
                 "--play-keepalive", str(keepalive), "--play-relayed", relayed_topic, *ping,
                 "--play-ping-at-bell", str(int(relay_at_bell))],
                cwd=ROOT, stdout=subprocess.DEVNULL,
                stderr=(tmp / f"tables-{first}.log").open("w")))
        t_start, ticks_start = time.monotonic(), cpu_ticks()
        cpu: list[tuple[float, float]] = []  # (head's CPU seconds, wall) at each round start
        rss: list[tuple[int, float]] = []
        seen_round = -1
        size = 0
        deadline = t_start + limit
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            try:
                n, t, topic, state = obs.arrivals.get(timeout=0.5)
            except queue.Empty:
                continue
            size = max(size, state["size"])
            r, phase = state.get("round_index"), state.get("phase")
            if phase == "playing" and r is not None and r > seen_round:
                seen_round = r
                if head.poll() is None:
                    rss.append((r + 1, rss_mib(head.pid)))
                    cpu.append((cpu_seconds(head.pid), time.monotonic()))
        busy = (cpu[-1][0] - cpu[0][0]) / (cpu[-1][1] - cpu[0][1]) if len(cpu) > 1 \
            else float("nan")
        for proc in [*procs, head]:  # bounded: a process past the night's limit is ended
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        obs.close()
        if rx is not None:
            rx.close()
        relay.terminate()
        relay.wait(10)
        played = [json.loads(f.read_text()) for f in outs if f.exists()]
        sends = sorted((x for p in played for x in p["sends"]), key=lambda x: x[2])
        pings = [x for p in played for x in p["pings"]]
        at_tables = [tuple(x) for p in played for x in p["states"]]
        pinged_rows = [x for p in played for x in p["pinged"]]
        figures = timings(at_tables, pinged_rows, sends, pings, tables)
        traces = {}
        if trace.exists():
            for line in trace.read_text().splitlines():
                x = json.loads(line)
                traces[x["round"]] = x
        stages: list[dict[str, float]] = []
        for r, arrivals in sorted(first_arrivals(at_tables, ringing).items()):
            first = min(arrivals.values())
            trigger = [t for rr, tab, t in sends if rr == r and tab == 1 and t <= first]
            if len(arrivals) == tables and trigger and r in traces:
                x, t0 = traces[r], max(trigger)
                stages.append({
                    "to the head's paho thread": x.get("rx", t0) - t0,
                    "waiting for the owner thread": x.get("handle", t0) - x.get("rx", t0),
                    "commit (batch of n)": x.get("committed", t0) - x.get("handle", t0),
                    "fold": x.get("accepted", t0) - x.get("committed", t0),
                    "bell handed to paho": x["published"] - x.get("accepted", t0),
                    "to the first table's client": first - x["published"],
                    "first to last table's client": max(arrivals.values()) - first,
                    "items in the head's batch": x.get("batch", 0) / 1000})
        at_receivers: dict[str, list[float]] = {}
        bell_rows: list[tuple[float, ...]] = []
        if rx is not None:
            rx_states, rx_pings = rx.arrivals(topics.state())
            at_receivers = timings(rx_states, rx_pings, sends, pings, tables)
            bell_rows = bells_at_receivers(rx_states, sends, pings, traces, tables)
        complete = record.exists() and json.loads(record.read_text()).get("complete")
        ticks_end = cpu_ticks()
        stolen = (ticks_end[1] - ticks_start[1]) / max(1, ticks_end[0] - ticks_start[0])
        return {**figures, "receivers": at_receivers, "bell_rows": bell_rows,
                "stages": stages, "pings": len(pings), "stolen": stolen,
                "rss": rss, "cpu": busy,
                "complete": complete, "entries": len(sends), "size": size,
                "seconds": sends[-1][2] - sends[0][2] if sends else 0.0,
                "head_log": (tmp / "head.log").read_text(errors="replace")}


def bells_at_receivers(states: list, sends: list, pings: list, traces: dict,
                       tables: int) -> list[tuple[float, ...]]:
    """Each bell's time at the receivers in its parts (ms): table 1's roll to the head's paho
    thread, the head (to the bell handed to paho), on to the first receiver, first to last
    receiver, the whole; and how far from the roll the nearest relay ping was sent (a ping
    fanned out to the same receivers just before the bell holds it up)."""
    rows = []
    for r, arrivals in sorted(first_arrivals(states, ringing).items()):
        first, last = min(arrivals.values()), max(arrivals.values())
        trigger = [t for rr, tab, t in sends if rr == r and tab == 1 and t <= first]
        if len(arrivals) != tables or not trigger or r not in traces:
            continue
        x, t0 = traces[r], max(trigger)
        ping = min((t - t0 for _k, t, _at in pings), key=abs, default=float("nan"))
        rows.append(tuple(v * 1000 for v in (
            x.get("rx", t0) - t0, x["published"] - x.get("rx", t0), first - x["published"],
            last - first, last - t0, ping)))
    return rows


def ringing(phase: str | None, bell: bool) -> bool:
    return bell and phase in ("playing", "finishing")


def timings(states: list, pinged_rows: list, sends: list, pings: list,
            tables: int) -> dict[str, list[float]]:
    """The night's figures from where they were noted (the tables' clients, or their
    receivers): states as (table, time, round, phase, bell), the relay's pings as (table, time,
    ping); ``sends`` and ``pings`` as the tables' process wrote them. In milliseconds: the bell,
    from table 1's roll to the last table holding it; the results, from the last entry to the
    last table holding them; the relay, from each ping's send to the last table."""
    out: dict[str, list[float]] = {"bells": [], "results": [], "relay_at_bell": [],
                                   "relay_between": []}
    for r, arrivals in sorted(first_arrivals(states, ringing).items()):
        trigger = [t for rr, tab, t in sends if rr == r and tab == 1
                   and t <= min(arrivals.values())]
        if len(arrivals) == tables and trigger:
            out["bells"].append((max(arrivals.values()) - max(trigger)) * 1000)
    for r, arrivals in sorted(first_arrivals(states, lambda p, b: p == "results").items()):
        last_entry = [t for rr, _tab, t in sends if rr == r and t <= min(arrivals.values())]
        if len(arrivals) == tables and last_entry:
            out["results"].append((max(arrivals.values()) - max(last_entry)) * 1000)
    pinged: dict[int, dict[int, float]] = {}  # ping -> table -> first arrival
    for n, t, k in pinged_rows:
        pinged.setdefault(k, {}).setdefault(n, t)
    for k, t0, at_bell in pings:
        arrivals = pinged.get(k, {})
        if len(arrivals) == tables:
            out["relay_at_bell" if at_bell else "relay_between"].append(
                (max(arrivals.values()) - t0) * 1000)
    return out


def vm(pid: int, key: str) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def whole_night(tables: int, tmp: Path) -> dict:
    """A whole simulated night (24 rounds) written into the head's event log as the head
    would have logged it, then replayed by the real ``bunco-pi head``: its memory at the end
    of a whole night, record included, without playing 24 rounds over the network."""
    from bunco_pi.head.eventlog import EventLog, IncomingEvent
    from bunco_pi.rules.entries import encode_entry
    from bunco_pi.rules.house import preset
    from bunco_pi.rules.night import Night, TableEntry
    from bunco_pi.rules.record import encode_event
    from bunco_pi.rules.rotation import initial_seating
    from bunco_pi.sim.players import make_players, simulate_night

    rules = preset("classic")
    result = simulate_night(rules, tables * 4, 1)
    name = f"w{tables}"
    rng = random.Random(1)  # the simulation's own draw of the seats (sim/players.py)
    roster = make_players(tables * 4)
    start = Night.start(rules, roster, initial_seating(
        [p.id for p in roster], rng.sample(range(len(roster)), len(roster))))
    seqs: dict[int, int] = {}
    entries = rounds = 0
    with EventLog(tmp / f"night-{name}.sqlite") as log:
        log.append_own("head", {
            "kind": "setup", "name": name, "rules_toml": preset_text("classic"),
            "players": [{"id": p.id, "name": p.name, "ghost": p.ghost} for p in start.players],
            "seating": [list(x) for x in start.seating]})
        night = start
        batch: list[IncomingEvent] = []
        for event in result.log:
            if isinstance(event, TableEntry):
                seqs[event.table] = seqs.get(event.table, 0) + 1
                batch.append(IncomingEvent(event.table, seqs[event.table],
                                           f"table-{event.table}",
                                           {"round": night.round_index,
                                            "entry": encode_entry(event.entry)}))
                entries += 1
            else:
                if batch:
                    log.commit(batch)
                    batch = []
                log.append_own("head", {"kind": "night", "event": encode_event(event)})
                rounds += type(event).__name__ == "CloseRound"
            night = night.apply(event)
        if batch:
            log.commit(batch)
    assert isinstance(night, Night) and night.phase == "ended"
    per_round = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--rounds-of",
         str(tmp / f"night-{name}.sqlite"), "--tables", str(tables)],
        cwd=ROOT, capture_output=True, text=True, timeout=1800, check=True)
    by_round = json.loads(per_round.stdout.strip().splitlines()[-1])
    with Broker(tmp / "broker", tables=tables) as broker:
        t0 = time.monotonic()
        head = subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", "head", "--night", name,
             "--tables", str(tables), "--rules", "classic",
             "--broker", f"{broker.host}:{broker.port}",
             "--credentials", str(broker.workdir / "credentials.json"),
             "--data-dir", str(tmp), "--record", str(tmp / "record.json"), "--no-gpio",
             "--no-console", "--exit-after-end", "2"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=(tmp / "head.log").open("w"))
        peak = replayed = 0.0
        while head.poll() is None and time.monotonic() - t0 < 900:
            try:
                peak = max(peak, vm(head.pid, "VmHWM"))
                replayed = replayed or (vm(head.pid, "VmRSS")
                                        if (tmp / "record.json").exists() else 0.0)
            except (FileNotFoundError, ProcessLookupError):
                break
            time.sleep(0.05)
        head.wait(60)
    return {"peak": peak, "replayed": replayed, "seconds": time.monotonic() - t0,
            "rounds": rounds, "entries": entries, **by_round}


def rounds_of(path: Path, tables: int) -> dict:
    """In a process of its own: the head's coordinator fed its event log record by record,
    as the head's fold took them on the night, and at each round's end the night record
    written by the head's ``RecordWriter`` (waited for) and the RSS read: the head's memory
    round by round over a whole night, without playing it over the network."""
    from bunco_pi.head.coordinator import Coordinator
    from bunco_pi.head.eventlog import EventLog
    from bunco_pi.head.records import RecordWriter
    from bunco_pi.head.service import records_from, settle_memory
    from bunco_pi.rules.house import preset

    coordinator = Coordinator(preset("classic"), preset_text("classic"), "w", tables)
    writer = RecordWriter(str(path.with_suffix(".json")))
    rss: list[float] = []
    t0 = time.monotonic()

    def records(log: EventLog):
        for record in records_from(log.replay()):
            yield record
            if record.get("kind") == "night" and record["event"] in (["close"], ["next"]):
                settle_memory()  # the head's own step at each change of phase
            if record.get("kind") == "night" and record["event"] == ["close"]:
                writer.request(coordinator.night, coordinator.log)
                writer.flush()
                rss.append(vm(os.getpid(), "VmRSS"))

    with EventLog(path) as log:
        coordinator.restore(records(log))
    writer.close()
    return {"by_round": rss, "round_peak": vm(os.getpid(), "VmHWM"),
            "round_seconds": time.monotonic() - t0}


def cpu_ticks() -> tuple[int, int]:
    """(all the machine's CPU ticks, those stolen by the hypervisor) from /proc/stat: on a
    virtual machine whose host is busy, a share of every core goes to other guests, and every
    figure of the night waits for it alike."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields[:8]), fields[7] if len(fields) > 7 else 0


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def report(tables: int, f: dict) -> None:
    print(f"{'figure':72} {'bunco-pi':>9} {'relay':>9} {'ratio':>6}")
    print("-" * 100)
    rows = (
        ("bell -> last table", f["bells"], f["relay_at_bell"], "relay at the same moment"),
        ("bell -> last table", f["bells"], f["relay_between"], "relay during the night"),
        ("results -> last table", f["results"], f["relay_between"], "relay during the night"),
    )
    rx = f.get("receivers") or {}
    if rx:
        rows += (
            ("bell -> last table's receiver", rx["bells"], rx["relay_at_bell"],
             "relay at the same moment"),
            ("bell -> last table's receiver", rx["bells"], rx["relay_between"],
             "relay during the night"),
            ("results -> last table's receiver", rx["results"], rx["relay_between"],
             "relay during the night"),
        )
    for label, ours, base, against in rows:
        if not ours or not base:
            print(f"{tables} tables: no complete {label} measured against the {against}")
            continue
        for q, name in ((0.5, "p50"), (0.99, "p99")):
            a, b = pct(ours, q), pct(base, q)
            print(f"{f'{label}, {name} (ms), vs {against}':72} {a:9.1f} {b:9.1f} "
                  f"{a / b:6.2f}")
    if f["stages"]:
        print(f"{tables} tables: where the bell's time goes (ms; median and worst of "
              f"{len(f['stages'])} bells):")
        for key in f["stages"][0]:
            values = [s[key] * 1000 for s in f["stages"]]
            print(f"  {key:32} {pct(values, 0.5):8.1f} {max(values):8.1f}")
    if f.get("bell_rows"):
        print(f"{tables} tables: each bell at the receivers (ms): table 1's roll to the head's "
              "paho thread, the head, to the first receiver, first to last, the whole; the "
              "nearest relay ping, from the roll")
        for n, row in enumerate(f["bell_rows"], start=1):
            print(f"  bell {n:2}" + "".join(f" {v:8.1f}" for v in row))
    line = " ".join(f"{mib:.1f}" for _, mib in f["rss"])
    grow = (f["rss"][-1][1] - f["rss"][0][1]) / max(1, len(f["rss"]) - 1) if f["rss"] else 0
    print(f"{tables} tables: {len(f['bells'])} bells and {len(f['results'])} results measured; "
          f"{len(f['relay_at_bell'])} + {len(f['relay_between'])} relay pings in the night; "
          f"the head's state is up to {f['size']} bytes")
    print(f"{tables} tables: head RSS at the start of rounds 1..{len(f['rss'])} (MiB): {line}")
    print(f"  {grow:+.2f} MiB a round; head CPU from round 1 to the last {100 * f['cpu']:.0f}% "
          f"of one core; {f['entries']} entries in {f['seconds']:.0f} s "
          f"({f['entries'] / max(f['seconds'], 1e-9):.0f} a second); record complete: "
          f"{bool(f['complete'])}; load average {load_average()}; "
          f"{100 * f.get('stolen', 0.0):.0f}% of the CPU stolen by the hypervisor")
    lines = f["head_log"].splitlines()
    again = [line for line in lines if "connecting to the broker again" in line]
    lost = [line for line in lines if "lost the broker" in line]
    behind = [line for line in lines if "behind, not" in line]
    print(f"  the head's intake watch reconnected it {len(again)} time(s), found it behind "
          f"{len(behind)} time(s); it lost the broker {len(lost)} time(s)")
    print(flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[200, 500])
    parser.add_argument("--pace", type=float, default=0.0,
                        help="seconds between a table's rolls, on average (default 0: flat out)")
    parser.add_argument("--whole-night", action="store_true",
                        help="also the head's memory over a whole night (24 rounds) at each "
                             "size, replayed from a simulated night's event log")
    parser.add_argument("--whole-night-only", action="store_true",
                        help="only the head's memory over a whole night (no networked night)")
    parser.add_argument("--rounds-of", type=Path, help=argparse.SUPPRESS)  # an event log
    parser.add_argument("--sets", type=int, default=1, help="sets of 6 rounds (default 1)")
    parser.add_argument("--target", type=int, default=21,
                        help="the head table's target score (lower: shorter rounds; default 21)")
    parser.add_argument("--limit", type=float, default=900, help="seconds per night at most")
    parser.add_argument("--stagger", type=float, default=0.01,
                        help="seconds between two tables' connects (default 0.01)")
    parser.add_argument("--keepalive", type=int, default=10,
                        help="the tables' MQTT keepalive in seconds (default 10, as a box's)")
    parser.add_argument("--per-process", type=int, default=100, metavar="N",
                        help="scripted tables in each process (default 100)")
    parser.add_argument("--tables-nice", type=int, default=0, metavar="N",
                        help="run the tables' processes at this nice level: in a hall each "
                             "table is a box of its own, here they share the head's cores")
    parser.add_argument("--head-table-apart", action="store_true",
                        help="table 1, whose roll rings the bell, in a process of its own (as "
                             "the head table is a box of its own), the others --per-process")
    parser.add_argument("--no-relay-at-bell", action="store_true",
                        help="no relay ping at the bell's moment: it is fanned out to the same "
                             "receivers at the same moment, and the bell queues behind it")
    parser.add_argument("--receivers", action="store_true",
                        help="also time the bell, the results and the relay to a receiver of "
                             "each table's own in C (mosquitto_sub, from mosquitto-clients)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep each night's files (the head's and tables' logs, the record, "
                             "the event log) in DIR/n<tables> to look into a slow figure")
    parser.add_argument("--play", help=argparse.SUPPRESS)  # a tables' process: "first-last"
    parser.add_argument("--observe", help=argparse.SUPPRESS)  # an observers' process
    for name in ("broker", "credentials", "topic", "tag"):
        parser.add_argument(f"--observe-{name}", help=argparse.SUPPRESS)
    for name in ("broker", "credentials", "night", "data", "out"):
        parser.add_argument(f"--play-{name}", help=argparse.SUPPRESS)
    parser.add_argument("--play-limit", type=float, default=900, help=argparse.SUPPRESS)
    parser.add_argument("--play-pace", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--play-stagger", type=float, default=0.01, help=argparse.SUPPRESS)
    parser.add_argument("--play-keepalive", type=int, default=10, help=argparse.SUPPRESS)
    parser.add_argument("--play-ping", help=argparse.SUPPRESS)  # "user,topic"
    parser.add_argument("--play-relayed", help=argparse.SUPPRESS)
    parser.add_argument("--play-ping-at-bell", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--head-trace", type=Path, help=argparse.SUPPRESS)
    argv = sys.argv[1:]
    if "--head-trace" in argv:  # the traced head: its own arguments follow "--"
        split = argv.index("--")
        return traced_head(Path(argv[argv.index("--head-trace") + 1]), argv[split + 1:])
    args = parser.parse_args()
    if args.rounds_of:
        print(json.dumps(rounds_of(args.rounds_of, args.tables[0])))
        return 0
    if args.play:
        return play_tables(args)
    if args.observe:
        return observe(args)
    if args.keep and any((args.keep / f"n{t}").exists() for t in args.tables):
        parser.error(f"--keep {args.keep}: it already holds a night of these sizes; "
                     "name an empty folder")
    for tables in args.tables:  # each size's figures as soon as its night is over
        if args.whole_night_only:
            break
        if args.keep:
            kept = args.keep / f"n{tables}"
            kept.mkdir(parents=True)
            report(tables, night(tables, args.sets, args.target, kept, args.limit, args.pace,
                                 args.stagger, args.keepalive, args.tables_nice,
                                 args.per_process, args.receivers, args.head_table_apart,
                                 not args.no_relay_at_bell))
            continue
        with tempfile.TemporaryDirectory() as tmp:
            report(tables, night(tables, args.sets, args.target, Path(tmp), args.limit,
                                 args.pace, args.stagger, args.keepalive, args.tables_nice,
                                 args.per_process, args.receivers, args.head_table_apart,
                                 not args.no_relay_at_bell))
    if args.whole_night or args.whole_night_only:
        print()
        for tables in args.tables:
            with tempfile.TemporaryDirectory() as tmp:
                w = whole_night(tables, Path(tmp))
            print(f"{tables} tables, a whole night ({w['rounds']} rounds, {w['entries']} "
                  f"entries) replayed by the head: peak RSS {w['peak']:.1f} MiB, RSS once "
                  f"replayed {w['replayed']:.1f} MiB, replay and record {w['seconds']:.1f} s")
            line = " ".join(f"{mib:.1f}" for mib in w["by_round"])
            print(f"{tables} tables, the head's fold round by round, its record written at each "
                  f"round's end: RSS after rounds 1..{len(w['by_round'])} (MiB): {line}; "
                  f"peak {w['round_peak']:.1f} MiB ({w['round_seconds']:.1f} s)", flush=True)
        if args.whole_night_only:
            return 0
    print(f"\ntables {'flat out' if not args.pace else f'at a pace of one roll in {args.pace} s'}"
          + f", {args.per_process} to a process"
          + (" (table 1 in a process of its own)" if args.head_table_apart else "")
          + (f", their processes at nice {args.tables_nice}" if args.tables_nice else ""))
    print("\nbaseline: a bare paho relay process committing each ping to SQLite (WAL, FULL) "
          f"and publishing it\n({RELAY_SIZE} bytes) to every table's client, the sender "
          "committing first; pinged at each bell\nand once a second during the same night.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
