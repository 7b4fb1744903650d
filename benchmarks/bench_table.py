"""Table box figures: press-to-frame latency, frames per press, idle CPU and memory.

Run from the repository root:  python3 benchmarks/bench_table.py [--presses N]

Everything goes through the real stack: a gpiozero MockFactory pin driven low, the debounce
and gesture code, the node's queue and thread, the SQLite journal (WAL, synchronous=FULL),
rendering and luma's dummy device. Baselines measured side by side, timed the same way (from
the mock pin driven low to the frame reaching the device): the raw version of the same work,
a bare gpiozero ``Button`` whose ``when_pressed`` callback draws a two-line frame with luma's
``canvas``; and the same with an fsynced SQLite commit (WAL, synchronous=FULL) before the
drawing, as our durability promise asks. CPU and memory: the same process before the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpiozero.pins.mock import MockFactory  # noqa: E402
from luma.core.device import dummy  # noqa: E402

from bunco_pi.hardware.pinmap import default_button_pins  # noqa: E402
from bunco_pi.rules.house import preset  # noqa: E402
from bunco_pi.table.box import TableBox  # noqa: E402
from bunco_pi.table.config import TableConfig  # noqa: E402
from bunco_pi.table.journal import Journal  # noqa: E402
from bunco_pi.table.link import InProcessLink  # noqa: E402
from bunco_pi.table.screens import PlayingView, render  # noqa: E402


class TimedDummy(dummy):
    """A dummy device that notes when each frame arrives."""

    def __init__(self) -> None:
        super().__init__(width=128, height=64, mode="1")
        self.frames = 0
        self.arrived = threading.Condition()
        self.last_time = 0.0

    def display(self, image):
        super().display(image)
        with self.arrived:
            self.frames += 1
            self.last_time = time.perf_counter()
            self.arrived.notify_all()


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def press_and_time(box: TableBox, device: TimedDummy, factory: MockFactory, presses: int) -> list[float]:
    """Press the point button ``presses`` times; seconds from each press to its new frame."""
    pin = factory.pin(default_button_pins()["point"])
    latencies = []
    for _ in range(presses):
        with device.arrived:
            before = device.frames
        t0 = time.perf_counter()
        pin.drive_low()
        with device.arrived:
            device.arrived.wait_for(lambda b=before: device.frames > b, timeout=5)
            latencies.append(device.last_time - t0)
        time.sleep(0.035)  # past the debounce window, as a finger would be
        pin.drive_high()
        time.sleep(0.035)
    box.node.sync()
    return latencies


def raw_press_to_frame(factory: MockFactory, presses: int, db_path: str | None) -> list[float]:
    """A bare gpiozero press callback drawing a 2-line frame (after a durable commit when
    ``db_path`` is given): seconds from each press to its frame."""
    import sqlite3

    from gpiozero import Button
    from luma.core.render import canvas

    device = TimedDummy()
    db = None
    if db_path is not None:
        db = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE entries (seq INTEGER PRIMARY KEY, entry TEXT)")
    count = [0]

    def pressed() -> None:  # gpiozero's thread
        count[0] += 1
        if db is not None:
            db.execute("BEGIN")
            db.execute("INSERT INTO entries (entry) VALUES (?)", ('{"tally":"point"}',))
            db.execute("COMMIT")
        with canvas(device) as draw:
            draw.text((0, 0), "Table 1  Round 3", fill="white")
            draw.text((0, 16), f"Ann  {count[0]} points", fill="white")

    button = Button(default_button_pins()["point"], pin_factory=factory)
    button.when_pressed = pressed
    pin = factory.pin(default_button_pins()["point"])
    latencies = []
    try:
        for _ in range(presses):
            with device.arrived:
                before = device.frames
            t0 = time.perf_counter()
            pin.drive_low()
            with device.arrived:
                device.arrived.wait_for(lambda b=before: device.frames > b, timeout=5)
                latencies.append(device.last_time - t0)
            time.sleep(0.035)
            pin.drive_high()
            time.sleep(0.035)
    finally:
        button.close()
        if db is not None:
            db.close()
    return latencies


def idle_cpu(seconds: float) -> float:
    start_cpu, start = time.process_time(), time.perf_counter()
    time.sleep(seconds)
    return 100.0 * (time.process_time() - start_cpu) / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=300)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    args = parser.parse_args()

    # Baseline: the process with everything imported, before any table exists.
    base_rss = rss_kib()
    base_cpu = idle_cpu(args.idle_seconds)

    bare = TimedDummy()
    frames = [render(PlayingView(1, 3, i, 0, "Ann", "A")) for i in range(args.presses)]
    bare_lat = []
    for image in frames:
        t0 = time.perf_counter()
        bare.display(image)
        bare_lat.append(time.perf_counter() - t0)
    render_lat = []
    for i in range(args.presses):
        t0 = time.perf_counter()
        render(PlayingView(1, 3, i, 0, "Ann", "A"))
        render_lat.append(time.perf_counter() - t0)

    journal_lat = []
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(os.path.join(tmp, "bare.db"))
        rid = journal.begin_round(1, 1, 1, TableConfig().players, False)
        for _ in range(args.presses):
            t0 = time.perf_counter()
            journal.append(rid, {"tally": "point"})
            journal_lat.append(time.perf_counter() - t0)
        journal.close()

    with tempfile.TemporaryDirectory() as tmp:
        raw_lat = raw_press_to_frame(MockFactory(), args.presses, None)
        durable_lat = raw_press_to_frame(MockFactory(), args.presses, os.path.join(tmp, "raw.db"))

    factory = MockFactory()
    device = TimedDummy()
    link = InProcessLink()
    with tempfile.TemporaryDirectory() as tmp:
        box = TableBox(TableConfig(), preset("classic"), link, os.path.join(tmp, "j.db"),
                       device=device, pin_factory=factory)
        box.start()
        try:
            # Not the head table: the round runs on however many points are pressed.
            link.start_round(1, 1, 1, TableConfig().players, can_end_round=False)
            box.node.sync()
            first_frames = device.frames
            latencies = press_and_time(box, device, factory, args.presses)
            per_press = (device.frames - first_frames) / args.presses
            table_rss = rss_kib()
            table_cpu = idle_cpu(args.idle_seconds)
        finally:
            box.stop()

    ms = 1000.0
    rows = [
        ("press-to-frame p50 (ms)", pct(latencies, 0.5) * ms, pct(raw_lat, 0.5) * ms),
        ("press-to-frame p99 (ms)", pct(latencies, 0.99) * ms, pct(raw_lat, 0.99) * ms),
        ("  vs raw press+commit+frame p50", pct(latencies, 0.5) * ms,
         pct(durable_lat, 0.5) * ms),
        ("  vs raw press+commit+frame p99", pct(latencies, 0.99) * ms,
         pct(durable_lat, 0.99) * ms),
        ("  of which render() p50", pct(render_lat, 0.5) * ms, pct(raw_lat, 0.5) * ms),
        ("  of which journal commit p50", pct(journal_lat, 0.5) * ms, pct(raw_lat, 0.5) * ms),
        ("  of which journal commit p99", pct(journal_lat, 0.99) * ms, pct(raw_lat, 0.99) * ms),
        ("display() of a drawn frame p50", pct(bare_lat, 0.5) * ms, pct(raw_lat, 0.5) * ms),
        ("frames pushed per press", per_press, 1.0),
        ("idle CPU (% of one core)", table_cpu, base_cpu),
        ("memory RSS (MiB)", table_rss / 1024, base_rss / 1024),
    ]
    print(f"{'figure':30} {'table':>10} {'baseline':>10} {'ratio':>8}")
    print("-" * 61)
    for name, value, base in rows:
        ratio = f"{value / base:8.1f}" if base > 0 else "       -"
        print(f"{name:30} {value:10.3f} {base:10.3f} {ratio}")
    print(f"\n{args.presses} presses; baseline of the latency rows: a bare gpiozero Button on the "
          "same mock pins\nwhose callback draws a 2-line luma frame (the vs rows: after an "
          "fsynced SQLite commit);\nCPU and memory: this process idle before the table "
          "started.")
    print(f"mean press-to-frame {statistics.mean(latencies) * ms:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
