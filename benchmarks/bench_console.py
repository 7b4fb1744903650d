"""The web console under a 50-table night: does the bell reach 50 phones as fast as 50 tables?

Run: python3 benchmarks/bench_console.py [--tables 50] [--viewers 50] [--rounds 20]

1. Bell to the last viewer beside bell to the last table, in the same run: the real head
   service (as in bench_bell.py) with the console attached, over a private mosquitto; 50 bare
   MQTT subscribers stand for the tables (the head's retained state, as table boxes read it)
   and 50 browsers' server-sent-event streams, held by a separate process, stand for the
   phones. Each bell is timed from the host's press to the last table and the last viewer
   holding the news that the round is finishing.
2. The head's start-up time and memory (RSS), `bunco-pi head --tables 50` as a process, with
   the console (and its 50 viewers connected) and without it (--no-console), side by side.

Loopback only; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bell import Head, Listeners, pct  # noqa: E402

from bunco_pi.console.desk import ConsoleBridge  # noqa: E402
from bunco_pi.console.server import ConsoleServer  # noqa: E402
from bunco_pi.head.eventlog import IncomingEvent  # noqa: E402
from bunco_pi.head.service import HeadService  # noqa: E402
from bunco_pi.net.broker import Broker  # noqa: E402
from bunco_pi.net.topics import table_node  # noqa: E402
from bunco_pi.protocol import TableEvent, encode_entry  # noqa: E402
from bunco_pi.rules.table_round import Bell, Pass, Tally  # noqa: E402


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the viewers' process ----------------------------------------------------------------------


async def _viewer(port: int, number: int, ready: asyncio.Event, count: list[int], total: int,
                  out: asyncio.Queue) -> None:
    # each phone its own address, as on the Wi-Fi: the console caps streams per address
    source = f"127.0.{30 + number // 250}.{1 + number % 250}"
    # a whole snapshot is one line: 100 kB at 100 tables, past asyncio's 64 KiB line limit
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0),
                                                   limit=1 << 23)
    writer.write(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 "Accept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    first = True
    index = b"-1"
    while True:
        line = await reader.readline()
        if not line:
            return
        if not line.startswith(b"data: "):
            continue
        if first:
            first = False
            count[0] += 1
            if count[0] == total:
                ready.set()
        if b'"round_index":' in line:  # no JSON parsing: time the head, not this process
            start = line.index(b'"round_index":') + 14
            index = line[start:line.index(b",", start)]
        # a patch (event: patch) carries the keys that changed: the phase, not the round
        if b'"phase":"finishing"' in line:
            out.put_nowait(f"{number} {time.monotonic():.6f} {index.decode()}")


async def _viewers(port: int, total: int) -> None:
    ready, count, out = asyncio.Event(), [0], asyncio.Queue()
    tasks = [asyncio.create_task(_viewer(port, n, ready, count, total, out)) for n in range(total)]
    await asyncio.wait_for(ready.wait(), 30)
    print("ready", flush=True)
    while True:
        line = await out.get()
        print(line, flush=True)
        if all(t.done() for t in tasks):
            return


def run_viewers(port: int, total: int) -> int:
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        asyncio.run(_viewers(port, total))
    return 0


def spawn_viewers(port: int, total: int) -> tuple[subprocess.Popen, queue.Queue]:
    proc = subprocess.Popen([sys.executable, __file__, "--viewers-only", str(port), str(total)],
                            stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.strip())
    threading.Thread(target=pump, daemon=True).start()
    first = lines.get(timeout=60)
    if first != "ready":
        raise RuntimeError(f"the viewers did not connect: {first}")
    return proc, lines


# --- 1. bell to the last table and the last viewer ------------------------------------------


class ConsoleHead(Head):
    """bench_bell's head, with the console attached as `bunco-pi head` attaches it."""

    def __init__(self, *args, port: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.server = ConsoleServer("127.0.0.1", port, password_hash=None).start()

    def _run(self) -> None:
        from bunco_pi.head.eventlog import EventLog

        self.log = EventLog(self.path)
        self.service = HeadService(self.coord, self.link, self.log, self.topics, self.players)
        self.server.bridge = ConsoleBridge(self.service, self.server.publish)
        self.service.start()
        self.link.wait_connected(10)
        self.link.wait_subscribed(10)
        self.ready.set()
        while not self.stopped:
            self.service.step(timeout=0.005)
        self.link.stop()
        self.log.close()


def bell_to_everyone(broker: Broker, tables: int, viewers: int, rounds: int, data: Path
                     ) -> tuple[list[float], list[float]]:
    night = f"console{tables}"
    port = free_port()
    head = ConsoleHead(broker, night, tables, data, port=port)
    head.start()
    # the tables: bare subscribers in a process of their own, each its own user (bench_bell.py)
    heard = Listeners(broker, tables, head.topics.state(), f"bench-{night}",
                      own=head.topics.view(1).replace("/table/1/", "/table/{n}/"))
    head.bell()  # the seats are drawn
    viewer_proc, seen = spawn_viewers(port, viewers)
    time.sleep(0.5)
    seqs = dict.fromkeys(range(1, tables + 1), 0)

    def finish_round(index: int) -> None:
        # committed to the log, then accepted, as the head's ingest does (bench_bell.py)
        events = []
        for t in range(1, tables + 1):
            for entry in (Bell(), Tally("point"), Pass(), Pass(), Pass(), Pass()):
                seqs[t] += 1
                events.append(TableEvent(t, seqs[t], index, entry))
        head.log.commit([IncomingEvent(e.table, e.seq, table_node(e.table),
                                       {"round": e.round_index, "entry": encode_entry(e.entry)})
                         for e in events])
        head.service.carry_out(head.coord.accept(events))

    to_tables: list[float] = []
    to_viewers: list[float] = []
    head.bell()  # the first round starts
    try:
        for _ in range(rounds):
            index = head.coord.night.round_index
            heard.drain()
            while not seen.empty():
                seen.get()
            t0 = time.monotonic()
            head.bell()  # the host's bell ends the round: this is what is timed
            table_times: dict[int, float] = {}
            viewer_times: dict[int, float] = {}
            deadline = time.monotonic() + 10
            marker = f'"round_index":{index},'.encode()
            while (len(table_times) < tables or len(viewer_times) < viewers) \
                    and time.monotonic() < deadline:
                try:
                    n, t, _, payload = heard.get(timeout=0.01)
                    if b'"bell":true' in payload and marker in payload:
                        table_times.setdefault(n, t)
                except queue.Empty:
                    pass
                while not seen.empty():
                    number, t_text, got_index = seen.get().split()
                    if int(got_index) == index:
                        viewer_times.setdefault(int(number), float(t_text))
            if len(table_times) < tables or len(viewer_times) < viewers:
                raise RuntimeError(f"round {index}: {len(table_times)} tables and "
                                   f"{len(viewer_times)} viewers heard the bell")
            to_tables.append((max(table_times.values()) - t0) * 1000)
            to_viewers.append((max(viewer_times.values()) - t0) * 1000)
            head.do(lambda index=index: finish_round(index))
            head.bell()
            if head.coord.night.phase == "break":
                head.bell()
            if head.coord.night.phase != "playing":
                break
    finally:
        viewer_proc.terminate()
        viewer_proc.wait(10)
        heard.close()
        head.stop()
        head.server.stop()
    return to_tables, to_viewers


# --- 2. start-up and memory of the head process -----------------------------------------------


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def head_process(broker: Broker, tables: int, viewers: int, data: Path, console: bool
                 ) -> tuple[float, int, int, float]:
    """(seconds to ready, RSS at ready, RSS with the viewers connected, seconds until the
    console answers) of `bunco-pi head`."""
    port = free_port()
    night = f"proc{'c' if console else 'n'}{tables}"
    log_path = data / f"{night}.log"
    argv = [sys.executable, "-m", "bunco_pi.cli", "head", "--night", night, "--tables",
            str(tables), "--broker", f"{broker.host}:{broker.port}", "--credentials",
            str(broker.workdir / "credentials.json"), "--data-dir", str(data / night),
            "--no-gpio", "--seed", "1"]
    argv += ["--console-port", str(port), "--console-bind", "127.0.0.1", "--console-password",
             str(data / "none")] if console \
        else ["--no-console"]
    t0 = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        deadline = time.monotonic() + 60
        while "head: night" not in log_path.read_text():
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"the head did not start: {log_path.read_text()[-500:]}")
            time.sleep(0.01)
        ready = time.monotonic() - t0
        answered = ready
        while console:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/snapshot", timeout=5).read()
                answered = time.monotonic() - t0
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the console never answered") from None
                time.sleep(0.01)
        time.sleep(1.0)
        at_ready = rss_kib(proc.pid)
        with_viewers = at_ready
        if console:
            viewer_proc, _ = spawn_viewers(port, viewers)
            time.sleep(1.0)
            with_viewers = rss_kib(proc.pid)
            viewer_proc.terminate()
            viewer_proc.wait(10)
        return ready, at_ready, with_viewers, answered
    finally:
        proc.terminate()
        proc.wait(15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--starts", type=int, default=3, help="head starts timed each way")
    parser.add_argument("--viewers-only", nargs=2, type=int, metavar=("PORT", "N"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.viewers_only:
        return run_viewers(*args.viewers_only)
    readers = [f"reader-{n}" for n in range(1, args.tables + 1)]
    with tempfile.TemporaryDirectory() as tmp, Broker(Path(tmp) / "broker", tables=args.tables,
                                                      readers=readers) as broker:
        data = Path(tmp)
        tables_ms, viewers_ms = bell_to_everyone(broker, args.tables, args.viewers, args.rounds,
                                                 data)
        without = [head_process(broker, args.tables, args.viewers, data, False)
                   for _ in range(args.starts)]
        with_console = [head_process(broker, args.tables, args.viewers, data, True)
                        for _ in range(args.starts)]

    def row(name: str, ours: list[float], base: list[float], unit: str = "ms") -> str:
        p50, p99 = pct(ours, 0.5), pct(ours, 0.99)
        b50, b99 = pct(base, 0.5), pct(base, 0.99)
        return (f"| {name} | {p50:.1f} {unit} | {p99:.1f} {unit} | {b50:.1f} {unit} | "
                f"{b99:.1f} {unit} | {p99 / b99 if b99 else float('nan'):.2f} |")

    print(f"\n{args.tables} tables, {args.viewers} viewers, {len(tables_ms)} bells; "
          f"head starts: {args.starts} each way\n")
    print("| figure | p50 | p99 | baseline p50 | baseline p99 | ratio p99 |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(row("bell to the last viewer (baseline: bell to the last table)", viewers_ms,
              tables_ms))
    print(row("head start-up to ready (baseline: --no-console)",
              [w[0] * 1000 for w in with_console], [w[0] * 1000 for w in without]))
    print(row("head start-up to the console answering (baseline: head start-up, no console)",
              [w[3] * 1000 for w in with_console], [w[0] * 1000 for w in without]))
    mib = 1024
    print(row("head RSS at ready (baseline: --no-console)",
              [w[1] / mib for w in with_console], [w[1] / mib for w in without], "MiB"))
    print(row(f"head RSS, {args.viewers} viewers connected (baseline: --no-console)",
              [w[2] / mib for w in with_console], [w[2] / mib for w in without], "MiB"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
