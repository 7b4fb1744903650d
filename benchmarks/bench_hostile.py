"""Hostile messages against a real head through whole nights: what they cost the head.

Run: python3 benchmarks/bench_hostile.py [--payloads 16000]

A private mosquitto, `bunco-pi head` and three simulated `bunco-pi table` boxes, each its own
process, play a one-set night twice: once in peace (the baseline), once under attack. In the
attacked night, from its first round to its end, PAYLOADS hostile messages arrive from every
kind of login there is: a table's password (table 4: a box with no seat tonight, so its own
box is not kicked off while it attacks) and the read-only viewer, aimed at what each may
write and at what it may not (the head's own topics, other tables'), of every kind below,
in turns: a steady stream between bursts of BURST back to back. Besides, a few messages over
the broker's own packet limit, each from a connection of its own (the broker cuts it off).
The figures: the head's peak resident memory (VmHWM) in each night, side by side; how many
payloads of each kind and login; how many the broker refused (ACL); whether the head
survived, its longest log line; and after each night: 0 entries counted that a table box did
not make (each box's outbox equals the head's log, seq for seq), 0 lost, and the night
record passes its audit.

Every loop is bounded in count and time; loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bunco_pi.head.eventlog import EventLog
from bunco_pi.net.broker import MAX_PACKET_BYTES, Broker
from bunco_pi.net.envelope import MAX_BYTES, MAX_EVENT_BYTES
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset_text
from bunco_pi.table.outbox import Outbox

NIGHT = "hostile"
ATTACKER = "table-4"
VIEWER = "viewer"
TABLES = (1, 2, 3)
BURST = 1000
OVER_THE_BROKERS_LIMIT = 20  # each cuts its sender off: a connection of its own each


def envelope_bytes(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def event(table: int, seq: int, payload: object, sender: str = ATTACKER) -> bytes:
    return envelope_bytes({"v": 1, "sender": sender, "table": table, "seq": seq,
                           "payload": payload})


def _table_kinds(i: int) -> list[tuple[str, str, bytes]]:
    """What table 4's password sends: its own topics (where the head listens) and others'."""
    own = f"bunco/{NIGHT}/table/4/events"
    status = f"bunco/{NIGHT}/node/table-4/status"
    roll = ["roll", [2, 3, 4]]
    return [
        ("malformed JSON", own, b'{"v": 1, "sender": "table-4", "seq": ' + b"[" * (i % 50)),
        ("invalid UTF-8", own, b'{"v":1,"sender":"\xff\xfe' + bytes([i % 256]) + b'"}'),
        ("deep nesting", own, b"[" * 5000 + b"]" * 5000),
        ("wrong types", own, envelope_bytes({"v": "1", "sender": 4, "table": "4",
                                             "seq": [i], "payload": "x" * 100})),
        ("just over a table event", own, event(4, 2 + i, {"round": 0, "entry": roll,
                                                          "pad": "x" * MAX_EVENT_BYTES})),
        ("huge, under the envelope limit", own, event(4, 1, {"round": 0, "entry": roll,
                                                            "pad": "x" * (MAX_BYTES - 200)})),
        ("huge, over the envelope limit", own,
         b'{"v":1,"pad":"' + b"y" * (MAX_BYTES + 10) + b'"}'),
        ("oversized status", status, b"s" * (MAX_EVENT_BYTES + 2000)),
        ("heartbeat that lies", status, envelope_bytes({"v": 1, "sender": ATTACKER, "payload": {
            "status": "online", "heartbeat": 1, "holds": 10**9, "acked": 0, "waiting": 1e6}})),
        ("another table's events", f"bunco/{NIGHT}/table/{1 + i % 3}/events",
         event(1 + i % 3, 1 + i, {"round": 0, "entry": roll}, f"table-{1 + i % 3}")),
        ("another table's status", f"bunco/{NIGHT}/node/table-{1 + i % 3}/status",
         envelope_bytes({"v": 1, "sender": f"table-{1 + i % 3}",
                         "payload": {"status": "offline"}})),
        ("head's topics", f"bunco/{NIGHT}/{('state', 'control', 'standings')[i % 3]}",
         envelope_bytes({"v": 1, "sender": "head", "payload": {"phase": "ended"}})),
        ("head's status", f"bunco/{NIGHT}/node/head/status", b"h" * (MAX_EVENT_BYTES + 2000)),
        ("another table's ack", f"bunco/{NIGHT}/table/{1 + i % 3}/ack",
         envelope_bytes({"v": 1, "sender": "head", "payload": {"seq": 10**9}})),
        ("replayed seq", own, event(4, 1, {"round": 0, "entry": roll})),
        ("far-ahead seq", own, event(4, 1000 + i, {"round": 0, "entry": roll})),
        ("bad entry", own, event(4, 2 + i, {"round": 0, "entry": [
            ["roll", [7, 7, 7]], ["tally", "x", 9], ["nope"], "roll", None][i % 5]})),
        ("forbidden entry", own, event(4, 2 + i, {"round": i % 6, "entry": [
            ["bell"], ["undo"], ["tally", "wipeout"], ["tally", "three", 1], ["pass"]][i % 5]})),
        ("wrong round", own, event(4, 2 + i, {"round": -1 - i, "entry": roll})),
        ("wrong night", f"bunco/other-{i % 7}/table/4/events",
         event(4, 1, {"round": 0, "entry": roll})),
        ("envelope names another table", own, event(2, 2 + i, {"round": 0, "entry": roll},
                                                    "table-2")),
        ("topic not ours", f"bunco/{NIGHT}/table/4/events/extra", b"{}"),
    ]


def _viewer_kinds(i: int) -> list[tuple[str, str, bytes]]:
    """What the read-only viewer sends: it may write nowhere, least of all where the head
    listens."""
    roll = ["roll", [2, 3, 4]]
    return [
        ("viewer: its own status, oversized", f"bunco/{NIGHT}/node/viewer/status",
         b"v" * (MAX_EVENT_BYTES + 2000)),
        ("viewer: its own status", f"bunco/{NIGHT}/node/viewer/status",
         envelope_bytes({"v": 1, "sender": VIEWER, "payload": {"status": "online"}})),
        ("viewer: a table's events", f"bunco/{NIGHT}/table/{1 + i % 3}/events",
         event(1 + i % 3, 1 + i, {"round": 0, "entry": roll}, f"table-{1 + i % 3}")),
        ("viewer: a table's heartbeat", f"bunco/{NIGHT}/node/table-{1 + i % 3}/status",
         envelope_bytes({"v": 1, "sender": f"table-{1 + i % 3}", "payload": {
             "status": "online", "heartbeat": 1, "holds": 10**9, "acked": 0,
             "waiting": 1e6}})),
        ("viewer: head's topics", f"bunco/{NIGHT}/{('state', 'rules', 'roster')[i % 3]}",
         b"w" * (MAX_EVENT_BYTES + 2000)),
    ]


LOGINS: dict[str, Callable[[int], list[tuple[str, str, bytes]]]] = {
    ATTACKER: _table_kinds, VIEWER: _viewer_kinds}


def hostile_payloads(count: int, login: str = ATTACKER,
                     skip: tuple[str, ...] = ()) -> Iterator[tuple[str, str, bytes]]:
    """(kind, topic, payload) from ``login``, ``count`` of them, the kinds taken in turn (but
    those whose name starts with one of ``skip``)."""
    kinds = LOGINS[login]
    i = 0
    while i < count:
        for item in kinds(i):
            if item[0].startswith(skip):
                continue
            if i >= count:
                return
            yield item
            i += 1


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """``field`` of the process's memory (VmRSS now, VmHWM its peak), in KiB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for process {pid}")


@dataclass
class Night:
    """The processes of a night, started the way `bunco-pi demo` starts them."""

    broker: Broker
    tmp: Path
    rules: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def spawn(self, name: str, argv: list[str]) -> None:
        logs = self.tmp / "logs"
        logs.mkdir(exist_ok=True)
        out = (logs / f"{name}.log").open("a")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", *argv], env=env, stdout=out,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def start(self) -> None:
        where = ["--broker", f"{self.broker.host}:{self.broker.port}",
                 "--credentials", str(self.broker.workdir / "credentials.json")]
        self.spawn("head", ["head", "--night", NIGHT, "--tables", "3", "--rules",
                            str(self.rules), *where, "--data-dir", str(self.tmp),
                            "--record", str(self.record), "--auto-host", "0",
                            "--exit-after-end", "3", "--seed", "5", "--no-gpio",
                            "--no-console"])
        for n in TABLES:
            self.spawn(f"table-{n}", ["table", "--table", str(n), "--night", NIGHT, *where,
                                      "--data-dir", str(self.tmp / f"t{n}"), "--simulate",
                                      "--seed", str(n), "--pace", "fast"])

    @property
    def record(self) -> Path:
        return self.tmp / "night.json"

    @property
    def head(self) -> subprocess.Popen:
        return self.procs["head"]

    def state(self) -> dict:
        try:
            return json.loads(self.record.read_text())
        except (OSError, ValueError):
            return {}

    def wait(self, done: Callable[[], bool], seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out waiting for {what}; logs in {self.tmp / 'logs'}")
            for name, proc in self.procs.items():
                if proc.poll() not in (None, 0):
                    raise SystemExit(f"{name} died ({proc.returncode}); logs in "
                                     f"{self.tmp / 'logs'}")
            time.sleep(0.1)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def log_lines(self, name: str) -> list[str]:
        return (self.tmp / "logs" / f"{name}.log").read_text(errors="replace").splitlines()

    def uncounted(self) -> list[str]:
        """Every table's outbox against the head's log: what differs (nothing, we hope)."""
        problems = []
        with EventLog(self.tmp / f"night-{NIGHT}.sqlite") as log:
            logged: dict[int, list] = {}
            for ev in log.replay(include_rejected=True):
                logged.setdefault(ev.table, []).append((ev.seq, ev.payload))
        for n in TABLES:
            with Outbox(self.tmp / f"t{n}" / f"outbox-{NIGHT}-table-{n}.sqlite") as outbox:
                made = [(e.seq, e.payload) for e in outbox.entries()]
            if not made or logged.get(n) != made:
                problems.append(f"table {n}: outbox ({len(made)}) and head log "
                                f"({len(logged.get(n, []))}) differ")
        return problems


class PeakRss:
    """The head's peak resident memory (VmHWM), read every 0.2 s until it exits."""

    def __init__(self, pid: int) -> None:
        self.pid, self.kib = pid, 0
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline:
            try:
                self.kib = max(self.kib, rss_kib(self.pid, "VmHWM"))
            except (OSError, RuntimeError):
                return  # it exited
            time.sleep(0.2)


@dataclass
class Attack:
    sent: Counter[str] = field(default_factory=Counter)
    by_login: Counter[str] = field(default_factory=Counter)
    refused_by_broker: int = 0
    cut_off: int = 0  # senders the broker disconnected for a packet over its limit
    seconds: float = 0.0


def _client(broker: Broker, user: str, client_id: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5)
    client.username_pw_set(user, broker.credentials.password(user))
    client.max_inflight_messages_set(100)
    client.connect(broker.host, broker.port, keepalive=30)
    return client


def send_from(broker: Broker, login: str, count: int, seconds: float, result: Attack,
              lock: threading.Lock, stop: threading.Event,
              skip: tuple[str, ...] = ()) -> None:
    """``count`` hostile payloads with ``login``'s password, QoS 1, over about ``seconds``:
    bursts of BURST back to back, a steady stream between them."""
    client = _client(broker, login, f"hostile-{login}")
    acks: list[bool] = []
    client.on_publish = lambda c, u, mid, reason, props: acks.append(reason.is_failure)
    client.loop_start()
    pause = seconds / max(1, count)  # the steady stream's gap (twice it, half the time)
    sent = 0
    t0 = time.monotonic()
    try:
        for kind, topic, payload in hostile_payloads(count, login, skip):
            while sent - len(acks) > 500:  # at most 500 unanswered by the broker
                if time.monotonic() - t0 > seconds + 300:
                    raise SystemExit(f"the broker stopped taking {login}'s payloads")
                time.sleep(0.001)
            client.publish(topic, payload, qos=1)
            sent += 1
            with lock:
                result.sent[kind] += 1
                result.by_login[login] += 1
            if (sent // BURST) % 2 == 1 and not stop.is_set():
                time.sleep(2 * pause)  # the steady stream; the even thousands are bursts
        deadline = time.monotonic() + 60
        while len(acks) < sent and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        client.disconnect()
        client.loop_stop()
    with lock:
        result.refused_by_broker += sum(acks)


def over_the_brokers_limit(broker: Broker, result: Attack) -> None:
    """Packets over the broker's own limit, each from a connection of its own (QoS 0: the
    broker cuts the sender off; a QoS 1 one would be sent again on every reconnect)."""
    topic = f"bunco/{NIGHT}/table/4/events"
    for i in range(OVER_THE_BROKERS_LIMIT):
        client = _client(broker, ATTACKER, f"oversize-{i}")
        cut = threading.Event()
        client.on_disconnect = lambda *a, cut=cut: cut.set()
        client.loop_start()
        client.publish(topic, b"z" * (MAX_PACKET_BYTES + 100), qos=0)
        if cut.wait(5):
            result.cut_off += 1
        client.loop_stop()
        result.sent["over the broker's packet limit"] += 1
        result.by_login[ATTACKER] += 1


def attack(broker: Broker, count: int, seconds: float, stop: threading.Event,
           skip: tuple[str, ...] = ()) -> Attack:
    """``count`` payloads in all, a quarter from the viewer, the rest with table 4's."""
    result = Attack()
    lock = threading.Lock()
    shares = {VIEWER: count // 4, ATTACKER: count - count // 4 - OVER_THE_BROKERS_LIMIT}
    t0 = time.monotonic()
    threads = [threading.Thread(target=send_from, args=(broker, login, n, seconds, result,
                                                        lock, stop, skip), daemon=True)
               for login, n in shares.items()]
    threads.append(threading.Thread(target=over_the_brokers_limit, args=(broker, result),
                                    daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 600)
    result.seconds = time.monotonic() - t0
    return result


@dataclass
class NightOutcome:
    peak_rss_kib: int
    seconds: float
    head_exit: int | None
    longest_log_line: int
    tracebacks: int
    uncounted: list[str]
    audit: list[str]
    rounds: int
    recoveries: int  # times the head connected again for want of events


@dataclass
class Outcome:
    peaceful: NightOutcome
    attacked: NightOutcome
    attack: Attack


def one_night(workdir: Path, rules: Path, payloads: int, night_seconds: float,
              skip: tuple[str, ...] = ()) -> tuple[NightOutcome, Attack | None]:
    """A whole night; under attack from its first round when ``payloads``."""
    workdir.mkdir(parents=True)
    with Broker(workdir / "broker", tables=4, readers=(VIEWER,)) as broker:
        night = Night(broker, workdir, rules)
        hit = None
        stop = threading.Event()
        t0 = time.monotonic()
        try:
            night.start()
            peak = PeakRss(night.head.pid)
            if payloads:
                time.sleep(2)  # the head has connected: from here to the end of the night
                hit = attack(broker, payloads, night_seconds, stop, skip)
            night.wait(lambda: bool(night.state().get("complete")), 900, "the end of the night")
            stop.set()
            night.wait(lambda: night.head.poll() is not None, 60, "the head to exit")
        finally:
            night.stop()
        seconds = time.monotonic() - t0
        record = night.state()
        lines = night.log_lines("head")
        return NightOutcome(
            peak_rss_kib=peak.kib, seconds=seconds, head_exit=night.head.returncode,
            longest_log_line=max((len(line.encode()) for line in lines), default=0),
            tracebacks=sum("Traceback" in line for line in lines),
            uncounted=night.uncounted(),
            audit=audit_record(record, parse_rules(rules.read_text())),
            rounds=len(record.get("rounds", [])),
            recoveries=sum("connecting to the broker again" in line for line in lines),
        ), hit


def run(payloads: int, workdir: Path, skip: tuple[str, ...] = ()) -> Outcome:
    rules = workdir / "one-set.toml"
    rules.write_text(preset_text("classic").replace("sets = 4", "sets = 1")
                     .replace("break_after_sets = [2]", "break_after_sets = []"))
    peaceful, _ = one_night(workdir / "peaceful", rules, 0, 0)
    # the attack spread over about two thirds of a night, so all of it lands inside one
    attacked, hit = one_night(workdir / "attacked", rules, payloads,
                              max(10.0, peaceful.seconds * 0.66), skip)
    assert hit is not None
    return Outcome(peaceful, attacked, hit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payloads", type=int, default=16_000)
    parser.add_argument("--skip", action="append", default=[], metavar="KIND",
                        help="leave out the kinds whose name starts with KIND (to tell what "
                             "costs what)")
    args = parser.parse_args()
    if not OVER_THE_BROKERS_LIMIT * 2 <= args.payloads <= 100_000:
        raise SystemExit(f"--payloads: {OVER_THE_BROKERS_LIMIT * 2}..100000")
    with tempfile.TemporaryDirectory(prefix="bunco-hostile-") as tmp:
        out = run(args.payloads, Path(tmp), tuple(args.skip))
    a, p, hit = out.attacked, out.peaceful, out.attack
    rows = [
        ("head peak RSS, VmHWM (MiB)", a.peak_rss_kib / 1024, p.peak_rss_kib / 1024),
        ("night's length (s)", a.seconds, p.seconds),
        ("rounds played", a.rounds, p.rounds),
        ("times the head connected again for want of events", a.recoveries, p.recoveries),
        ("longest line in the head's log (bytes)", a.longest_log_line, p.longest_log_line),
    ]
    print(f"{'measure':52} {'attacked':>10} {'peaceful':>10} {'ratio':>7}")
    for label, ours, base in rows:
        ratio = f"{ours / base:7.2f}" if base else "      -"
        print(f"{label:52} {ours:10.2f} {base:10.2f} {ratio}")
    print(f"\n{sum(hit.sent.values())} hostile payloads over {hit.seconds:.0f} s "
          f"({', '.join(f'{n} from {login}' for login, n in hit.by_login.items())}; "
          f"{hit.refused_by_broker} refused by the broker's ACL, {hit.cut_off} senders cut "
          f"off for a packet over its limit):")
    for kind, n in hit.sent.items():
        print(f"  {n:6}  {kind}")
    for name, night in (("attacked", a), ("peaceful", p)):
        print(f"\n{name} night: head exit code {night.head_exit}; tracebacks in its log: "
              f"{night.tracebacks}; entries lost or counted that no table box made: "
              f"{'none' if not night.uncounted else night.uncounted}; audit: "
              f"{'clean' if not night.audit else night.audit}")
    growth = a.peak_rss_kib - p.peak_rss_kib
    ok = (growth < 10 * 1024 and a.head_exit == 0 and p.head_exit == 0 and not a.tracebacks
          and not a.uncounted and not a.audit and a.rounds == p.rounds == 6)
    print("\nRESULT:", "OK" if ok else "FAILED", f"(peak RSS {growth / 1024:+.2f} MiB beside "
          "the peaceful night, within 10 MiB; both nights complete; nothing lost or made up; "
          "audit clean)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
