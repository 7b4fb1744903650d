"""Hostile payloads against a real head during a real night: what they cost the head.

Run: python3 benchmarks/bench_hostile.py [--payloads 10000]

A private mosquitto, `bunco-pi head` and three simulated `bunco-pi table` boxes, each its own
process, play a one-set night. After the first round, a client holding one table's password
(table 4: a box with no seat tonight, so its own box is not kicked off while it attacks)
sends PAYLOADS messages, round-robin over the kinds below, as fast as the broker takes them.
The figures: the head's resident memory (VmRSS) growth over the attack, beside its growth
over the same number of seconds of ordinary play just before (the baseline, same run); how
many payloads of each kind; whether the head survived, and the longest line in its log.
After the night: 0 entries counted that a table box did not make (each box's outbox equals
the head's log, seq for seq), and the night record passes its audit.

Every loop is bounded in count and time; loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bunco_pi.head.eventlog import EventLog
from bunco_pi.net.broker import Broker
from bunco_pi.net.envelope import MAX_BYTES
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset_text
from bunco_pi.table.outbox import Outbox

NIGHT = "hostile"
ATTACKER = "table-4"
TABLES = (1, 2, 3)


def envelope_bytes(doc: object) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def event(table: int, seq: int, payload: object, sender: str = ATTACKER) -> bytes:
    return envelope_bytes({"v": 1, "sender": sender, "table": table, "seq": seq,
                           "payload": payload})


def hostile_payloads(count: int, skip: tuple[str, ...] = ()) -> Iterator[tuple[str, str, bytes]]:
    """(kind, topic, payload), ``count`` of them, the kinds taken in turn (but those whose
    name starts with one of ``skip``)."""
    own = f"bunco/{NIGHT}/table/4/events"
    roll = ["roll", [2, 3, 4]]

    def kinds(i: int) -> list[tuple[str, str, bytes]]:
        return [
            ("malformed JSON", own, b'{"v": 1, "sender": "table-4", "seq": ' + b"[" * (i % 50)),
            ("invalid UTF-8", own, b'{"v":1,"sender":"\xff\xfe' + bytes([i % 256]) + b'"}'),
            ("deep nesting", own, b"[" * 5000 + b"]" * 5000),
            ("wrong types", own, envelope_bytes({"v": "1", "sender": 4, "table": "4",
                                                 "seq": [i], "payload": "x" * 100})),
            ("huge, under the limit", own, event(4, 1, {"round": 0, "entry": roll,
                                                        "pad": "x" * (MAX_BYTES - 200)})),
            ("huge, over the limit", own, b'{"v":1,"pad":"' + b"y" * (MAX_BYTES + 10) + b'"}'),
            ("another table's events", f"bunco/{NIGHT}/table/{1 + i % 3}/events",
             event(1 + i % 3, 1 + i, {"round": 0, "entry": roll}, f"table-{1 + i % 3}")),
            ("head's topics", f"bunco/{NIGHT}/{('state', 'control', 'standings')[i % 3]}",
             envelope_bytes({"v": 1, "sender": "head", "payload": {"phase": "ended"}})),
            ("another table's ack", f"bunco/{NIGHT}/table/{1 + i % 3}/ack",
             envelope_bytes({"v": 1, "sender": "head", "payload": {"seq": 10**9}})),
            ("replayed seq", own, event(4, 1, {"round": 0, "entry": roll})),
            ("far-ahead seq", own, event(4, 1000 + i, {"round": 0, "entry": roll})),
            ("bad entry", own, event(4, 2 + i, {"round": 0, "entry": [
                ["roll", [7, 7, 7]], ["tally", "x", 9], ["nope"], "roll", None][i % 5]})),
            ("wrong round", own, event(4, 2 + i, {"round": -1 - i, "entry": roll})),
            ("wrong night", f"bunco/other-{i % 7}/table/4/events",
             event(4, 1, {"round": 0, "entry": roll})),
            ("envelope names another table", own, event(2, 2 + i, {"round": 0, "entry": roll},
                                                        "table-2")),
            ("topic not ours", f"bunco/{NIGHT}/table/4/events/extra", b"{}"),
        ]

    i = 0
    while i < count:
        for item in kinds(i):
            if item[0].startswith(skip):
                continue
            if i >= count:
                return
            yield item
            i += 1


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


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
                            "--exit-after-end", "3", "--seed", "5", "--no-gpio"])
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


@dataclass
class Attack:
    sent: Counter[str] = field(default_factory=Counter)
    refused_by_broker: int = 0
    seconds: float = 0.0


def attack(broker: Broker, count: int, time_limit: float, skip: tuple[str, ...] = ()) -> Attack:
    """Send ``count`` hostile payloads with table-4's password, QoS 1, at most 100 in flight."""
    result = Attack()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="hostile",
                         protocol=mqtt.MQTTv5)
    client.username_pw_set(ATTACKER, broker.credentials.password(ATTACKER))
    client.max_inflight_messages_set(100)
    acks: list[bool] = []
    client.on_publish = lambda c, u, mid, reason, props: acks.append(reason.is_failure)
    client.connect(broker.host, broker.port, keepalive=30)
    client.loop_start()
    t0 = time.monotonic()
    try:
        for kind, topic, payload in hostile_payloads(count, skip):
            while len(result.sent) and sum(result.sent.values()) - len(acks) > 500:
                if time.monotonic() - t0 > time_limit:
                    raise SystemExit("the broker stopped taking the hostile payloads")
                time.sleep(0.001)
            client.publish(topic, payload, qos=1)
            result.sent[kind] += 1
        deadline = time.monotonic() + 30
        while len(acks) < count and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        result.seconds = time.monotonic() - t0
        client.disconnect()
        client.loop_stop()
    result.refused_by_broker = sum(acks)
    return result


@dataclass
class Outcome:
    rss_before_kib: int
    rss_after_kib: int
    baseline_growth_kib: int
    baseline_seconds: float
    attack: Attack
    head_alive_after_attack: bool
    head_exit: int | None
    longest_log_line: int
    tracebacks: int
    uncounted: list[str]
    audit: list[str]
    rounds: int


def run(payloads: int, workdir: Path, skip: tuple[str, ...] = ()) -> Outcome:
    rules = workdir / "one-set.toml"
    rules.write_text(preset_text("classic").replace("sets = 4", "sets = 1")
                     .replace("break_after_sets = [2]", "break_after_sets = []"))
    with Broker(workdir / "broker", tables=4) as broker:
        night = Night(broker, workdir, rules)
        try:
            night.start()
            night.wait(lambda: len(night.state().get("rounds", [])) >= 1, 180, "the first round")
            # the baseline: the head's growth over ordinary play, as long as the attack lasts
            start = rss_kib(night.head.pid)
            estimate = max(5.0, payloads / 1000)
            time.sleep(estimate)
            before = rss_kib(night.head.pid)
            hit = attack(broker, payloads, time_limit=300, skip=skip)
            time.sleep(2)  # the head works through what is still queued for it
            alive = night.head.poll() is None
            after = rss_kib(night.head.pid) if alive else 0
            night.wait(lambda: bool(night.state().get("complete")), 300, "the end of the night")
            night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
        finally:
            night.stop()
        record = night.state()
        lines = night.log_lines("head")
        return Outcome(
            rss_before_kib=before, rss_after_kib=after, baseline_growth_kib=before - start,
            baseline_seconds=estimate, attack=hit, head_alive_after_attack=alive,
            head_exit=night.head.returncode,
            longest_log_line=max((len(line.encode()) for line in lines), default=0),
            tracebacks=sum("Traceback" in line for line in lines),
            uncounted=night.uncounted(),
            audit=audit_record(record, parse_rules(rules.read_text())),
            rounds=len(record.get("rounds", [])),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payloads", type=int, default=10_000)
    parser.add_argument("--skip", action="append", default=[], metavar="KIND",
                        help="leave out the kinds whose name starts with KIND (to tell what "
                             "costs what)")
    args = parser.parse_args()
    if not 1 <= args.payloads <= 100_000:
        raise SystemExit("--payloads: 1..100000")
    with tempfile.TemporaryDirectory(prefix="bunco-hostile-") as tmp:
        out = run(args.payloads, Path(tmp), tuple(args.skip))
    growth = out.rss_after_kib - out.rss_before_kib
    rows = [
        ("head RSS before the attack (MiB)", out.rss_before_kib / 1024, None),
        ("head RSS growth (MiB): attack vs ordinary play",
         growth / 1024, out.baseline_growth_kib / 1024),
        ("seconds: attack vs baseline window", out.attack.seconds, out.baseline_seconds),
    ]
    print(f"{'measure':52} {'hostile':>10} {'baseline':>10} {'ratio':>7}")
    for label, ours, base in rows:
        ratio = f"{ours / base:7.2f}" if base else "      -"
        base_s = f"{base:10.2f}" if base is not None else "         -"
        print(f"{label:52} {ours:10.2f} {base_s} {ratio}")
    print(f"\n{sum(out.attack.sent.values())} hostile payloads with {ATTACKER}'s password "
          f"({out.attack.refused_by_broker} refused by the broker's ACL):")
    for kind, n in out.attack.sent.items():
        print(f"  {n:6}  {kind}")
    print(f"\nhead alive after the attack: {out.head_alive_after_attack}; exit code at the end "
          f"of the night: {out.head_exit}; tracebacks in its log: {out.tracebacks}; "
          f"longest log line: {out.longest_log_line} bytes")
    print(f"rounds played: {out.rounds}; entries counted that no table box made: "
          f"{'none' if not out.uncounted else out.uncounted}; audit: "
          f"{'clean' if not out.audit else out.audit}")
    ok = (growth < 5 * 1024 and out.head_alive_after_attack and out.head_exit == 0
          and not out.tracebacks and not out.uncounted and not out.audit)
    print("\nRESULT:", "OK" if ok else "FAILED", "(RSS growth under 5 MiB, no crash, 0 points)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
