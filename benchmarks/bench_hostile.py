"""Hostile payloads from one table's credentials: what the head holds, beside a bare subscriber.

    python3 benchmarks/bench_hostile.py [--payloads 10000]

Starts a private mosquitto and the real head (`bunco-pi head`, its own process, a night of 3
tables whose boxes check in, so its simulated host starts the night and a round), then
publishes ``--payloads`` hostile messages on
``table/2/events`` with table 2's password: far-ahead seqs, near seqs with ~8 KB payloads,
malformed JSON, unknown fields, bad entries, the wrong table, oversize envelopes. Prints the
growth of the head's resident memory (VmRSS) beside that of a bare paho subscriber process
receiving the same messages, whether the head is still alive, and how many entries of table 2
its log counted as points (it must be 0). Loopback only; bounded in count and time.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bunco_pi.net import envelope  # noqa: E402
from bunco_pi.net.broker import Broker  # noqa: E402
from bunco_pi.net.topics import Topics  # noqa: E402

NIGHT = "hostile"

SUBSCRIBER = """
import sys, time, paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
host, port, user, password, topic = sys.argv[1:6]
c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bare-sub", protocol=mqtt.MQTTv5)
c.username_pw_set(user, password)
got = []
c.on_message = lambda cl, u, m: got.append(len(m.payload))
c.connect(host, int(port)); c.subscribe(topic, qos=1); c.loop_start()
while True:
    time.sleep(0.5)
"""


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def hostile(topics: Topics, i: int) -> tuple[str, bytes]:
    """The i-th hostile message: a topic and its bytes."""
    kind = i % 8
    pad = "x" * 8000
    if kind == 0:  # far ahead: never to be held
        return topics.events(2), envelope.event("table-2", 2, 1_000_000 + i,
                                                {"round": 0, "entry": ["tally", "bunco"]})
    if kind == 1:  # near, but big: held only within the byte bound
        return topics.events(2), envelope.event("table-2", 2, 3 + i,
                                                {"round": 0, "entry": ["pass"], "pad": pad})
    if kind == 2:
        return topics.events(2), b"{not json" + pad.encode()
    if kind == 3:
        return topics.events(2), json.dumps({"v": 1, "sender": "table-2", "table": 2,
                                             "seq": 5 + i, "payload": {}, "evil": pad}).encode()
    if kind == 4:  # a bad entry far ahead
        return topics.events(2), envelope.event("table-2", 2, 2_000_000 + i,
                                                {"round": 0, "entry": ["roll", [9, 9, 9]]})
    if kind == 5:  # the wrong table in the envelope
        return topics.events(2), envelope.event("table-2", 3, 7 + i,
                                                {"round": 0, "entry": ["tally", "bunco"]})
    if kind == 6:  # oversize
        return topics.events(2), b"{" + b"y" * 70_000 + b"}"
    return topics.events(2), envelope.event("table-2", 2, 3_000_000 + i,  # ahead, big
                                            {"round": 0, "entry": ["pass"], "pad": pad})


def checked_in(broker: Broker, topics: Topics) -> None:
    """Each table says it is online (its retained status, with its own password)."""
    for n in (1, 2, 3):
        name = f"table-{n}"
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"status-{name}",
                        protocol=mqtt.MQTTv5)
        c.username_pw_set(name, broker.credentials.password(name))
        c.connect(broker.host, broker.port)
        c.loop_start()
        c.publish(topics.status(name), envelope.message(name, {"status": "online"}), qos=1,
                  retain=True).wait_for_publish(10)
        c.loop_stop()
        c.disconnect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--payloads", type=int, default=10_000)
    args = parser.parse_args()
    topics = Topics(NIGHT)
    with tempfile.TemporaryDirectory() as tmp, Broker(Path(tmp) / "broker", tables=4) as broker:
        data = Path(tmp)
        creds = str(broker.workdir / "credentials.json")
        head = subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", "head", "--night", NIGHT, "--tables", "3",
             "--broker", f"{broker.host}:{broker.port}", "--credentials", creds,
             "--data-dir", str(data), "--no-gpio", "--auto-host", "0.2", "--seed", "1"],
            stdout=subprocess.DEVNULL, stderr=(data / "head.log").open("w"),
            env=dict(os.environ, PYTHONUNBUFFERED="1"))
        bare = subprocess.Popen(
            [sys.executable, "-c", SUBSCRIBER, broker.host, str(broker.port), "head",
             broker.credentials.password("head"), topics.all_events()])
        pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="hostile-2",
                          protocol=mqtt.MQTTv5)
        pub.username_pw_set("table-2", broker.credentials.password("table-2"))
        pub.connect(broker.host, broker.port)
        pub.loop_start()
        try:
            time.sleep(2)
            checked_in(broker, topics)  # the simulated host starts the night, then a round
            time.sleep(4)  # a round is being played: no table presses, so it stays open
            head_before, bare_before = rss_kib(head.pid), rss_kib(bare.pid)
            deadline = time.monotonic() + 300
            for i in range(args.payloads):
                topic, data_bytes = hostile(topics, i)
                info = pub.publish(topic, data_bytes, qos=1)
                if i % 200 == 199:
                    info.wait_for_publish(10)
                if time.monotonic() > deadline:
                    raise RuntimeError("publishing took over 300 s")
            time.sleep(5)  # let both take everything in
            head_after, bare_after = rss_kib(head.pid), rss_kib(bare.pid)
            alive = head.poll() is None
        finally:
            pub.loop_stop()
            for proc in (head, bare):
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        with sqlite3.connect(data / f"night-{NIGHT}.sqlite") as db:
            points = db.execute("SELECT COUNT(*) FROM events WHERE table_no = 2 AND "
                                "rejected IS NULL").fetchone()[0]
            starts = db.execute("SELECT COUNT(*) FROM events WHERE table_no = 0 AND "
                                "payload LIKE '%\"event\":[\"start\"]%'").fetchone()[0]
        phase = f"round {starts} being played" if starts else "no round started"
        grow_head = (head_after - head_before) / 1024
        grow_bare = (bare_after - bare_before) / 1024
        print(f"{args.payloads} hostile payloads on table/2/events with table 2's password")
        print(f"{'measure':44} {'head':>10} {'bare paho':>10} {'ratio':>7}")
        print(f"{'RSS growth (MiB)':44} {grow_head:10.2f} {grow_bare:10.2f} "
              f"{(grow_head / grow_bare) if grow_bare else float('nan'):7.2f}")
        print(f"head still running: {alive}; night phase then: {phase}; "
              f"table 2 entries counted: {points}")
        print(f"head's log lines: {sum(1 for _ in (data / 'head.log').open())}")


if __name__ == "__main__":
    main()
