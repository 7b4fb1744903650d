"""A networked table's figures beside a standalone table's: press-to-frame, idle CPU.

Run from the repository root:  python3 benchmarks/bench_net_table.py [--presses N]

Both tables run the real stack (MockFactory pin, debounce, node thread, rules, luma dummy
device). The standalone table stores each press in its journal; the networked one in its outbox
(WAL, synchronous=FULL) and then publishes it over the in-process broker, so the difference is
what joining a night costs a press (a stand-in head acknowledges each event at once). The
baseline is the standalone table, measured in the same run. Idle CPU includes the networked
table's resend check (every 0.5 s).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import TimedDummy, idle_cpu, pct, press_and_time  # noqa: E402
from gpiozero.pins.mock import MockFactory  # noqa: E402

from bunco_pi.net import envelope  # noqa: E402
from bunco_pi.net.inproc import InprocBroker  # noqa: E402
from bunco_pi.net.link import Message  # noqa: E402
from bunco_pi.net.topics import Topics  # noqa: E402
from bunco_pi.rules.house import preset, preset_text  # noqa: E402
from bunco_pi.table.box import TableBox  # noqa: E402
from bunco_pi.table.config import TableConfig  # noqa: E402
from bunco_pi.table.link import InProcessLink  # noqa: E402
from bunco_pi.table.net_link import NetTableLink  # noqa: E402

SEATS = ("p1", "p2", "p3", "p4")


def measure(box: TableBox, device: TimedDummy, factory: MockFactory, presses: int,
            idle_seconds: float) -> tuple[list[float], float]:
    return press_and_time(box, device, factory, presses), idle_cpu(idle_seconds)


def standalone(tmp: str, presses: int, idle_seconds: float) -> tuple[list[float], float]:
    factory, device, link = MockFactory(), TimedDummy(), InProcessLink()
    box = TableBox(TableConfig(), preset("classic"), link, f"{tmp}/j.db", device=device,
                   pin_factory=factory)
    box.start()
    try:
        link.start_round(1, 1, 1, SEATS, can_end_round=False)
        box.node.sync()
        return measure(box, device, factory, presses, idle_seconds)
    finally:
        box.stop()
        factory.close()


def networked(tmp: str, presses: int, idle_seconds: float) -> tuple[list[float], float]:
    broker, topics = InprocBroker(), Topics("bench")
    state = {"phase": "playing", "round_index": 0, "set": 1, "round": 1, "target": 1,
             "bell": False, "rules_toml": preset_text("classic"),
             "players": [{"id": p, "name": p, "ghost": False} for p in SEATS],
             "seating": [["x1", "x2", "x3", "x4"], list(SEATS)]}  # this is table 2
    def acknowledge(event: object) -> None:  # a head that commits every event at once
        if isinstance(event, Message) and event.topic == topics.events(2):
            seq = envelope.decode(event.topic, event.payload).seq
            head.publish(topics.ack(2), envelope.message("head", {"seq": seq}), retain=True)

    head = broker.link("head", sink=acknowledge)
    head.subscribe(topics.events(2))
    head.start()
    # No table of tonight has anything at the head yet: the ack says so.
    head.publish(topics.ack(2), envelope.message("head", {"seq": 0}), retain=True)
    head.publish(topics.state(), envelope.message("head", state), retain=True)
    factory, device = MockFactory(), TimedDummy()
    link = NetTableLink(lambda sink: broker.link("table-2", sink=sink), topics, 2,
                        f"{tmp}/outbox.sqlite")
    box = TableBox(TableConfig(number=2), preset("classic"), link, ":memory:", device=device,
                   pin_factory=factory)
    box.start()
    try:
        deadline = time.monotonic() + 5
        while box.node.mode != "playing" and time.monotonic() < deadline:
            box.node.sync()
        return measure(box, device, factory, presses, idle_seconds)
    finally:
        box.stop()
        factory.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=300)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base_lat, base_cpu = standalone(tmp, args.presses, args.idle_seconds)
        net_lat, net_cpu = networked(tmp, args.presses, args.idle_seconds)
    ms = 1000.0
    rows = [
        ("press-to-frame p50 (ms)", pct(net_lat, 0.5) * ms, pct(base_lat, 0.5) * ms),
        ("press-to-frame p99 (ms)", pct(net_lat, 0.99) * ms, pct(base_lat, 0.99) * ms),
        ("idle CPU (% of one core)", net_cpu, base_cpu),
    ]
    print(f"{'figure':30} {'networked':>10} {'standalone':>10} {'ratio':>8}")
    print("-" * 61)
    for name, value, base in rows:
        ratio = f"{value / base:8.1f}" if base > 0 else "       -"
        print(f"{name:30} {value:10.3f} {base:10.3f} {ratio}")
    print(f"\n{args.presses} presses each; baseline: a standalone table in the same run.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
