"""A whole networked night at 200 and 500 tables: the head's bell and results, its memory
round by round, and its CPU, each process apart as on the night.

Run from the repository root:
    python3 benchmarks/bench_night.py [--tables 200 500] [--sets 1] [--pace 2.5] [--whole-night]
    python3 benchmarks/bench_night.py --tables 200 500 --whole-night-only

``--pace S``: each table rolls once every S seconds on average (a human pace: a roll, a look,
the dice passed); without it the tables roll as fast as they can (flat out), which is what the
head can take. ``--whole-night``: also the head's memory over a whole night (4 sets, 24 rounds)
at each size, from its event log of a simulated night replayed by the real ``bunco-pi head``,
and round by round: the head's coordinator fed that log record by record in a process of its
own, its record written by the head's ``RecordWriter`` at each round's end as on the night, and
the RSS read then. ``--whole-night-only``: that alone, without the networked nights.

Three kinds of process over one private mosquitto on loopback: the real ``bunco-pi head``
(its event log, ``--record``, the host's bell pressed by ``--auto-host``); one process of
scripted tables (each its own MQTT client and durable outbox, rolling seeded dice, entering
the bell when it hears it: ``tests/scripted_tables.py``); and this process, with one bare
paho subscriber per table that only notes when the head's state reaches it.

- bell: from table 1 sending the roll that reaches its target (outbox fsync included) to the
  last table holding the head's ``bell: true`` state;
- results: from the entry that finished the last table to the last table holding the results;
- baseline of both, in the same run and timed the same way: a bare paho relay in its own
  process that commits each incoming message to SQLite (WAL, synchronous=FULL, one commit per
  message) and publishes a payload of the head's state size to as many bare subscribers, the
  sender committing to its own SQLite file first, with a gap between messages as between rounds;
- the head's RSS at the start of every round (read from /proc), and its CPU over the night.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
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
host, port, password, db, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
con = sqlite3.connect(db, isolation_level=None)
con.execute("PRAGMA journal_mode=WAL"); con.execute("PRAGMA synchronous=FULL")
con.execute("CREATE TABLE IF NOT EXISTS ev (seq INTEGER PRIMARY KEY, payload BLOB)")
state = b"s" * size
def on_message(c, u, m):
    con.execute("BEGIN"); con.execute("INSERT INTO ev (payload) VALUES (?)", (m.payload,))
    con.execute("COMMIT")
    c.publish("bunco/raw/state", state, qos=1)
c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="raw-relay", protocol=mqtt.MQTTv5)
c.username_pw_set("head", password)
c.on_socket_open = lambda cl, u, sock: sock.setsockopt(6, 1, 1)
c.on_connect = lambda cl, u, f, rc, p: (cl.subscribe("bunco/raw/table/1/events", qos=1),
                                        print("ready", flush=True))
c.on_message = on_message
c.connect(host, port)
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
TABLES_A_PROCESS = 100


class Observers:
    """One bare paho client per table, each a read-only user of its own (``observer-n``: the
    broker binds a client id to its user, so one logged in as the table's user would knock
    the table off): notes when each state arrives. They run in processes of their own,
    ``OBSERVERS_A_PROCESS`` a process, and say each arrival on a line (the monotonic clock is
    the machine's, so the times compare across processes)."""

    def __init__(self, broker: Broker, tables: int, topic: str, tag: str) -> None:
        self.arrivals: queue.Queue[tuple[int, float, dict]] = queue.Queue()
        self.procs = []
        creds = broker.workdir / "credentials.json"
        for first in range(1, tables + 1, OBSERVERS_A_PROCESS):
            last = min(tables, first + OBSERVERS_A_PROCESS - 1)
            proc = subprocess.Popen(
                [sys.executable, __file__, "--observe", f"{first}-{last}",
                 "--observe-broker", f"{broker.host}:{broker.port}",
                 "--observe-credentials", str(creds), "--observe-topic", topic,
                 "--observe-tag", tag], stdout=subprocess.PIPE, text=True, cwd=ROOT)
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line == "ready", f"observers {first}-{last}: {line!r}"
            threading.Thread(target=self._read, args=(proc,), daemon=True).start()
            self.procs.append(proc)

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            n, t, state = line.split(" ", 2)
            self.arrivals.put((int(n), float(t), json.loads(state)))

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
            out.put((n, time.monotonic(), msg.payload))
        c.on_message = on_message
        c.on_subscribe = lambda *a: subscribed.release()
        c.connect(host, int(port))
        c.subscribe(args.observe_topic, qos=1)
        c.loop_start()
        clients.append(c)
    for _ in clients:
        subscribed.acquire(timeout=60)
    print("ready", flush=True)
    try:
        while True:
            n, t, payload = out.get()
            try:
                state = json.loads(payload)["payload"]
                small = {k: state.get(k) for k in ("round_index", "phase", "bell")}
            except (ValueError, KeyError, TypeError):
                small = {}
            small["size"] = len(payload)
            print(n, t, json.dumps(small), flush=True)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0


# --- the tables' process ---------------------------------------------------------------------


def play_tables(args: argparse.Namespace) -> int:
    """Run as its own process: scripted tables play the night; write each send's time."""
    from tests.scripted_tables import ScriptedTable

    host, port = args.play_broker.rsplit(":", 1)

    class Creds:  # what ScriptedTable reads of a Broker
        def __init__(self, users: dict[str, str]) -> None:
            self.users = users

        def password(self, user: str) -> str:
            return self.users[user]

    broker = argparse.Namespace(host=host, port=int(port), credentials=Creds(
        json.loads(Path(args.play_credentials).read_text())["users"]))
    topics = Topics(args.play_night)
    data = Path(args.play_data)
    first, last = (int(x) for x in args.play.split("-"))
    tables = [ScriptedTable(n, broker, topics, data).start()  # type: ignore[arg-type]
              for n in range(first, last + 1)]
    rng = random.Random(7 + first)
    sends: list[tuple[int, int, float]] = []  # (round index, table, monotonic time)
    deadline = time.monotonic() + args.play_limit
    pace = args.play_pace
    due = {t.number: 0.0 for t in tables}  # when each table rolls next (at a human pace)
    while time.monotonic() < deadline:
        for t in tables:
            t.pump()
        states = [t.state for t in tables]
        if all(s is not None and s.get("phase") == "ended" for s in states):
            break
        now = time.monotonic()
        live = [t for t in tables if t.playing and due[t.number] <= now]
        for t in live:  # every live table rolls once a step, as tables do at once
            sends.append((t.round_index, t.number, time.monotonic()))
            t.roll(rng)
            if pace:
                due[t.number] = now + pace * rng.uniform(0.5, 1.5)
        if not live:
            time.sleep(0.005 if not pace else 0.02)
    for t in tables:
        t.stop()
    Path(args.play_out).write_text(json.dumps(sends))
    return 0


# --- the night ---------------------------------------------------------------------------------


def night(tables: int, sets: int, target: int, tmp: Path, limit: float,
          pace: float = 0.0) -> dict:
    rules = tmp / "rules.toml"
    rules.write_text(preset_text("classic").replace("sets = 4", f"sets = {sets}")
                     .replace("break_after_sets = [2]", "break_after_sets = []")
                     .replace("target_score = 21", f"target_score = {target}"))
    with Broker(tmp / "broker", tables=tables,
                readers=[f"observer-{n}" for n in range(1, tables + 1)]) as broker:
        topics = Topics(f"n{tables}")
        creds = broker.workdir / "credentials.json"
        obs = Observers(broker, tables, topics.state(), f"n{tables}")
        record = tmp / "night.json"
        head = subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", "head", "--night", topics.night,
             "--tables", str(tables), "--rules", str(rules),
             "--broker", f"{broker.host}:{broker.port}", "--credentials", str(creds),
             "--data-dir", str(tmp), "--record", str(record), "--no-gpio",
             "--auto-host", "0.3", "--seed", "7", "--exit-after-end", "1",
             "--console-port", str(free_port())],  # the console too, on a port of its own
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=(tmp / "head.log").open("w"))
        (tmp / "outboxes").mkdir()
        sends_files = []
        procs = []
        for first in range(1, tables + 1, TABLES_A_PROCESS):
            last = min(tables, first + TABLES_A_PROCESS - 1)
            sends_files.append(tmp / f"sends-{first}.json")
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--play", f"{first}-{last}",
                 "--play-broker", f"{broker.host}:{broker.port}", "--play-credentials",
                 str(creds), "--play-night", topics.night, "--play-data", str(tmp / "outboxes"),
                 "--play-out", str(sends_files[-1]), "--play-limit", str(limit),
                 "--play-pace", str(pace)],
                cwd=ROOT, stdout=subprocess.DEVNULL,
                stderr=(tmp / f"tables-{first}.log").open("w")))
        t_start = time.monotonic()
        cpu: list[tuple[float, float]] = []  # (head's CPU seconds, wall) at each round start
        rss: list[tuple[int, float]] = []
        bell_at: dict[int, dict[int, float]] = {}     # round -> table -> first bell arrival
        results_at: dict[int, dict[int, float]] = {}
        seen_round = -1
        size = 0
        deadline = t_start + limit
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            try:
                n, t, state = obs.arrivals.get(timeout=0.5)
            except queue.Empty:
                continue
            size = max(size, state["size"])  # the baseline relays the largest state seen
            r, phase = state.get("round_index"), state.get("phase")
            if phase == "playing" and r is not None and r > seen_round:
                seen_round = r
                if head.poll() is None:
                    rss.append((r + 1, rss_mib(head.pid)))
                    cpu.append((cpu_seconds(head.pid), time.monotonic()))
            if state.get("bell") and phase in ("playing", "finishing"):
                bell_at.setdefault(r, {}).setdefault(n, t)
            if phase == "results":
                results_at.setdefault(r, {}).setdefault(n, t)
        busy = (cpu[-1][0] - cpu[0][0]) / (cpu[-1][1] - cpu[0][1]) if len(cpu) > 1 \
            else float("nan")
        for proc in [*procs, head]:  # bounded: a process past the night's limit is ended
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        obs.close()
        sends = sorted((x for f in sends_files if f.exists()
                        for x in json.loads(f.read_text())), key=lambda x: x[2])
        bells, results = [], []
        for r, arrivals in sorted(bell_at.items()):
            if len(arrivals) < tables:
                continue
            first = min(arrivals.values())
            trigger = [t for rr, tab, t in sends if rr == r and tab == 1 and t <= first]
            if trigger:
                bells.append((max(arrivals.values()) - max(trigger)) * 1000)
        for r, arrivals in sorted(results_at.items()):
            if len(arrivals) < tables:
                continue
            first = min(arrivals.values())
            last_entry = [t for rr, _tab, t in sends if rr == r and t <= first]
            if last_entry:
                results.append((max(arrivals.values()) - max(last_entry)) * 1000)
        complete = record.exists() and json.loads(record.read_text()).get("complete")
        base = raw_relay(broker, tables, max(len(bells), 5), size, tmp)
        return {"bells": bells, "results": results, "base": base, "rss": rss, "cpu": busy,
                "complete": complete, "entries": len(sends), "size": size,
                "seconds": sends[-1][2] - sends[0][2] if sends else 0.0}


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


def raw_relay(broker: Broker, tables: int, count: int, size: int, tmp: Path) -> list[float]:
    relay = subprocess.Popen(
        [sys.executable, "-c", RELAY, broker.host, str(broker.port),
         broker.credentials.password("head"), str(tmp / "relay.sqlite"), str(size)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert relay.stdout is not None and relay.stdout.readline().strip() == "ready"
        obs = Observers(broker, tables, "bunco/raw/state", f"raw{tables}")
        import sqlite3
        con = sqlite3.connect(tmp / "sender.sqlite", isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.execute("CREATE TABLE IF NOT EXISTS out (seq INTEGER PRIMARY KEY, payload BLOB)")
        pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="raw-sender", protocol=mqtt.MQTTv5)
        pub.username_pw_set("table-1", broker.credentials.password("table-1"))
        pub.on_socket_open = lambda cl, u, sock: sock.setsockopt(6, 1, 1)
        pub.connect(broker.host, broker.port)
        pub.loop_start()
        time.sleep(1.0)
        entry = b'{"round":0,"entry":["roll",[6,6,6]]}'
        out = []
        for _ in range(count):
            time.sleep(0.3)  # a gap, as between rounds
            while not obs.arrivals.empty():
                obs.arrivals.get()
            t0 = time.monotonic()
            con.execute("BEGIN")
            con.execute("INSERT INTO out (payload) VALUES (?)", (entry,))
            con.execute("COMMIT")
            pub.publish("bunco/raw/table/1/events", entry, qos=1)
            last, got = t0, 0
            deadline = time.monotonic() + 10
            while got < tables and time.monotonic() < deadline:
                try:
                    _, t, _ = obs.arrivals.get(timeout=1)
                except queue.Empty:
                    continue
                last, got = max(last, t), got + 1
            out.append((last - t0) * 1000)
        pub.loop_stop()
        pub.disconnect()
        obs.close()
        con.close()
        return out
    finally:
        relay.terminate()
        relay.wait(10)


def report(tables: int, f: dict) -> None:
    print(f"{'figure':50} {'bunco-pi':>10} {'raw':>10} {'ratio':>7}")
    print("-" * 80)
    base = f["base"]
    for label, ours in (("bell", f["bells"]), ("results", f["results"])):
        if not ours:
            print(f"{tables} tables: no complete {label} measured")
            continue
        for q, name in ((0.5, "p50"), (0.99, "p99")):
            a, b = pct(ours, q), pct(base, q)
            print(f"{f'{label} -> last of {tables} tables, {name} (ms)':50} {a:10.1f} "
                  f"{b:10.1f} {a / b:7.2f}")
    line = " ".join(f"{mib:.1f}" for _, mib in f["rss"])
    grow = (f["rss"][-1][1] - f["rss"][0][1]) / max(1, len(f["rss"]) - 1) if f["rss"] else 0
    print(f"{tables} tables: {len(f['bells'])} bells and {len(f['results'])} results measured; "
          f"the head's state is up to {f['size']} bytes")
    print(f"{tables} tables: head RSS at the start of rounds 1..{len(f['rss'])} (MiB): {line}")
    print(f"  {grow:+.2f} MiB a round; head CPU from round 1 to the last {100 * f['cpu']:.0f}% "
          f"of one core; {f['entries']} entries in {f['seconds']:.0f} s "
          f"({f['entries'] / max(f['seconds'], 1e-9):.0f} a second); record complete: "
          f"{bool(f['complete'])}\n", flush=True)


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
            report(tables, night(tables, args.sets, args.target, kept, args.limit, args.pace))
            continue
        with tempfile.TemporaryDirectory() as tmp:
            report(tables, night(tables, args.sets, args.target, Path(tmp), args.limit,
                                 args.pace))
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
    print(f"\ntables {'flat out' if not args.pace else f'at a pace of one roll in {args.pace} s'}")
    print("\nbaseline: a bare paho relay process committing each message to SQLite (WAL, FULL) "
          "and publishing\nthe head's state size to as many bare subscribers, the sender "
          "committing first; 0.3 s between messages.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
