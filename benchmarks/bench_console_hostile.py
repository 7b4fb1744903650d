"""A hostile guest against the head's console during a real networked night.

Run: python3 benchmarks/bench_console_hostile.py [--idle 2000] [--readers 500] [--slowloris 200]
                                                 [--guesses 1000] [--no-baseline]

A private mosquitto, `bunco-pi head` (under 1,024 open files, what a systemd unit gets by
default) with its console on loopback, and three simulated `bunco-pi table` boxes, each its own
process, play a one-set night. The host drives the whole night from the console: logged in
over HTTP, it rings the bell (POST /api/host/bell) whenever the night waits for it.

1. Password guesses, before the flood: GUESSES wrong passwords from one address and GUESSES
   more spread over 50 (distinct loopback addresses 127.0.21.x), as fast as the head answers,
   ignoring every Retry-After. Then the right password from another address. The head's RSS
   before and after.
2. The flood, for the rest of the night, from a separate process: IDLE connections that send
   nothing (from 100 addresses), READERS event streams that read the status line and then
   nothing more (from 50), and SLOWLORIS clients that send a header line every 4 s and never
   finish (from 10). Each reconnects a second after the head closes it, until the night ends.
   Meanwhile the head's RSS, its open files and the kernel's TCP memory (/proc/net/sockstat,
   the whole machine's, so the attacker's own sockets count too) are sampled twice a second.

After the night: the record is complete, every table box's outbox equals the head's log seq
for seq (nothing lost, nothing counted twice), the record passes its audit, and the head's
log grew by less than 1 MB. A baseline night first (same night, no attack) gives the bell's
time and the head's memory side by side.

Loopback only; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hostile import TABLES, Night, rss_kib  # noqa: E402

from bunco_pi.console.auth import write_password_file  # noqa: E402
from bunco_pi.net.broker import Broker  # noqa: E402
from bunco_pi.rules.audit import audit_record  # noqa: E402
from bunco_pi.rules.house import parse_rules, preset_text  # noqa: E402

HOST_PASSWORD = "the-host-rings-the-bell"
HEAD_FILES = 1024  # systemd's default soft limit for a service
NIGHT_SECONDS = 600  # the longest a night may take here before the run is called failed
TCP_ESTABLISHED = 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sockstat_tcp_pages() -> int:
    """The kernel's TCP memory, in pages (the `mem` of /proc/net/sockstat's TCP line)."""
    for line in Path("/proc/net/sockstat").read_text().splitlines():
        if line.startswith("TCP:"):
            parts = line.split()
            return int(parts[parts.index("mem") + 1])
    raise RuntimeError("no TCP line in /proc/net/sockstat")


PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


# --- the attacker's process ----------------------------------------------------------------------


def _tcp_state(sock: socket.socket) -> int:
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
    return struct.unpack("B", info[:1])[0]


async def _connect(port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.setblocking(False)
    sock.bind((source, 0))
    await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port)), 5)
    return sock


async def _hold(kind: str, port: int, source: str, until: float, stats: dict[str, int]) -> None:
    """One attacking client, reconnecting a second after the head lets it go."""
    loop = asyncio.get_running_loop()
    while time.monotonic() < until:
        sock = None
        try:
            sock = await _connect(port, source)
            stats[f"{kind} connects"] += 1
            if kind == "reader":
                await loop.sock_sendall(sock, b"GET /events HTTP/1.1\r\nHost: head\r\n\r\n")
                await asyncio.wait_for(loop.sock_recv(sock, 16), 10)  # the status line, no more
            elif kind == "slowloris":
                await loop.sock_sendall(sock, b"GET / HTTP/1.1\r\nHost: head\r\n")
            while time.monotonic() < until:
                await asyncio.sleep(4.0)
                if _tcp_state(sock) != TCP_ESTABLISHED:
                    break
                if kind == "slowloris":
                    await loop.sock_sendall(sock, b"X-Still-Coming: 1\r\n")
                elif kind == "idle":  # the head closes an idle connection; see whether it has
                    with contextlib.suppress(BlockingIOError):
                        if sock.recv(1, socket.MSG_PEEK) == b"":
                            break
            stats[f"{kind} closed by the head"] += 1
        except (OSError, TimeoutError):
            stats[f"{kind} refused or reset"] += 1
        finally:
            if sock is not None:
                sock.close()
        await asyncio.sleep(1.0)


async def _attack(port: int, idle: int, readers: int, slowloris: int, seconds: float) -> None:
    from collections import Counter

    stats: Counter[str] = Counter()
    until = time.monotonic() + seconds
    clients = ([("idle", f"127.0.10.{1 + n % 100}") for n in range(idle)]
               + [("reader", f"127.0.11.{1 + n % 50}") for n in range(readers)]
               + [("slowloris", f"127.0.12.{1 + n % 10}") for n in range(slowloris)])
    tasks = []
    for i, (kind, source) in enumerate(clients):
        tasks.append(asyncio.create_task(_hold(kind, port, source, until, stats)))
        if i % 100 == 99:
            await asyncio.sleep(0.05)  # a burst, not all in one loop turn
    print("ready", flush=True)
    while time.monotonic() < until and not all(t.done() for t in tasks):
        await asyncio.sleep(1.0)
        print(json.dumps(dict(stats)), flush=True)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps(dict(stats)), flush=True)


def run_attacker(argv: list[str]) -> int:
    port, idle, readers, slowloris, seconds = (int(argv[0]), int(argv[1]), int(argv[2]),
                                               int(argv[3]), float(argv[4]))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = idle + readers + slowloris + 200
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        asyncio.run(_attack(port, idle, readers, slowloris, seconds))
    return 0


# --- the host at the console -----------------------------------------------------------------------


class Host:
    """The host, at the console from 127.0.0.1: logs in and rings the bell when asked."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.cookie = ""
        self.csrf = ""
        self.bells: list[float] = []  # seconds from the POST to the head's answer
        self.failed: list[str] = []  # refused by the head
        self.unanswered: list[str] = []  # the connection went before an answer

    def call(self, method: str, path: str, body: dict | None = None, source: str = "127.0.0.1",
             headers: dict[str, str] | None = None) -> tuple[int, dict, str]:
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", int(self.base.rsplit(":", 1)[1]),
                                          timeout=15, source_address=(source, 0))
        try:
            conn.request(method, path, body=json.dumps(body).encode() if body is not None
                         else None, headers={"Content-Type": "application/json",
                                             **(headers or {})})
            reply = conn.getresponse()
            raw = reply.read()
            return reply.status, json.loads(raw) if raw else {}, \
                reply.getheader("Set-Cookie") or ""
        finally:
            conn.close()

    def login(self, source: str = "127.0.0.1") -> int:
        status, reply, cookie = self.call("POST", "/api/login", {"password": HOST_PASSWORD},
                                          source)
        if status == 200:
            self.cookie, self.csrf = cookie.split(";")[0], reply["csrf"]
        return status

    def snapshot(self) -> dict:
        status, reply, _ = self.call("GET", "/api/snapshot")
        return reply if status == 200 else {}

    def act(self, action: str) -> int:
        """Press ``action`` at the console; a press that gets no answer is counted and pressed
        again, as a host would (the next look at the night shows it still waiting)."""
        import http.client

        t0 = time.monotonic()
        try:
            status, reply, _ = self.call("POST", f"/api/host/{action}", {}, headers={
                "Cookie": self.cookie, "X-CSRF-Token": self.csrf})
        except (OSError, http.client.HTTPException) as exc:
            self.unanswered.append(f"{action}: {type(exc).__name__}")
            return 0
        if status == 200:
            self.bells.append(time.monotonic() - t0)
        elif status != 409:  # 409: the night moved on by itself meanwhile
            self.failed.append(f"{action}: {status} {reply.get('error')}")
        return status

    def drive(self, night: Night, seconds: float, stop: threading.Event) -> None:
        """Ring the bell from the console whenever the night waits for the host."""
        import http.client

        deadline = time.monotonic() + seconds
        last_asked: tuple[str, int | None] | None = None
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                snap = self.snapshot()
            except (OSError, ValueError, http.client.HTTPException) as exc:
                self.unanswered.append(f"snapshot: {type(exc).__name__}")
                time.sleep(0.5)
                continue
            phase = snap.get("phase")
            key = (phase, snap.get("round"))
            if phase == "lobby" and len(snap.get("online", [])) == len(TABLES) \
                    and key != last_asked:
                if self.act("start"):
                    last_asked = key
            elif phase in ("ready", "results", "break") and key != last_asked:
                time.sleep(0.3)  # the bell guard: a round must last a moment
                if self.act("bell"):
                    last_asked = key
            elif phase == "ended" or night.head.poll() is not None:
                return
            time.sleep(0.2)


# --- one night ----------------------------------------------------------------------------------------


@dataclass
class Samples:
    rss_kib: list[int] = field(default_factory=list)
    tcp_pages: list[int] = field(default_factory=list)
    files: list[int] = field(default_factory=list)

    def take(self, pid: int) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.rss_kib.append(rss_kib(pid))
        self.tcp_pages.append(sockstat_tcp_pages())
        self.files.append(open_files(pid))


@dataclass
class Outcome:
    bells: list[float]
    failed: list[str]
    unanswered: list[str]
    rss_start_kib: int
    samples: Samples
    tcp_before_pages: int
    log_growth: int
    log_lines: int
    tracebacks: int
    complete: bool
    head_exit: int | None
    uncounted: list[str]
    audit: list[str]
    rounds: int
    guesses: dict[str, int] = field(default_factory=dict)
    guess_rss_kib: tuple[int, int] = (0, 0)
    right_password_elsewhere: int = 0
    attack: dict[str, int] = field(default_factory=dict)
    refusal_lines: list[str] = field(default_factory=list)
    traceback_lines: list[str] = field(default_factory=list)


class ConsoleNight(Night):
    """bench_hostile's night, its head under 1,024 files with the console on loopback, the
    bell left to the host."""

    port: int = 0

    def start(self) -> None:
        password = self.tmp / "console-password"
        write_password_file(password, HOST_PASSWORD)
        self.port = free_port()
        where = ["--broker", f"{self.broker.host}:{self.broker.port}",
                 "--credentials", str(self.broker.workdir / "credentials.json")]
        self.spawn_limited("head", ["head", "--night", "hostile", "--tables", "3", "--rules",
                                    str(self.rules), *where, "--data-dir", str(self.tmp),
                                    "--record", str(self.record), "--exit-after-end", "3",
                                    "--seed", "5", "--no-gpio", "--console-port",
                                    str(self.port), "--console-bind", "127.0.0.1",
                                    "--console-password", str(password)])
        for n in TABLES:
            self.spawn(f"table-{n}", ["table", "--table", str(n), "--night", "hostile", *where,
                                      "--data-dir", str(self.tmp / f"t{n}"), "--simulate",
                                      "--seed", str(n), "--pace", "fast"])

    def spawn_limited(self, name: str, argv: list[str]) -> None:
        logs = self.tmp / "logs"
        logs.mkdir(exist_ok=True)
        out = (logs / f"{name}.log").open("a")

        def files() -> None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (HEAD_FILES, hard))

        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "bunco_pi.cli", *argv],
            env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, preexec_fn=files)

    @property
    def log_path(self) -> Path:
        return self.tmp / "logs" / "head.log"


async def _guess(port: int, source: str, count: int, statuses: dict[str, int]) -> None:
    body = json.dumps({"password": "not-the-password"}).encode()
    request = (f"POST /api/login HTTP/1.1\r\nHost: head\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    for _ in range(count):
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), 10)
            writer.write(request)
            line = await asyncio.wait_for(reader.readline(), 15)
            code = line.split()[1].decode() if len(line.split()) > 1 else "no answer"
            writer.close()
        except (OSError, TimeoutError):
            code = "no answer"
        statuses[code] = statuses.get(code, 0) + 1


async def _guesses(port: int, count: int) -> dict[str, int]:
    """``count`` wrong passwords from one address and ``count`` from 50, all at once."""
    from_one: dict[str, int] = {}
    from_fifty: dict[str, int] = {}
    one = [asyncio.create_task(_guess(port, "127.0.20.1", count // 10, from_one))
           for _ in range(10)]
    fifty = [asyncio.create_task(_guess(port, f"127.0.21.{n}", count // 50, from_fifty))
             for n in range(1, 51)]
    await asyncio.gather(*one, *fifty)
    return {**{f"one address: {k}": v for k, v in sorted(from_one.items())},
            **{f"50 addresses: {k}": v for k, v in sorted(from_fifty.items())}}


def play(workdir: Path, attack: bool, idle: int, readers: int, slowloris: int,
         guesses: int) -> Outcome:
    rules = workdir / "one-set.toml"
    rules.write_text(preset_text("classic").replace("sets = 4", "sets = 1")
                     .replace("break_after_sets = [2]", "break_after_sets = []"))
    with Broker(workdir / "broker", tables=4) as broker:
        night = ConsoleNight(broker, workdir, rules)
        attacker = None
        attack_stats: dict[str, int] = {}
        try:
            night.start()
            host = Host(0)
            host.base = f"http://127.0.0.1:{night.port}"

            def console_up() -> bool:
                try:
                    return bool(host.snapshot().get("online"))
                except OSError:
                    return False
            night.wait(console_up, 120, "the console to answer")
            if host.login() != 200:
                raise SystemExit("the host could not log in")
            rss_start = rss_kib(night.head.pid)
            log_start = night.log_path.stat().st_size
            tcp_before = sockstat_tcp_pages()
            outcome_guesses: dict[str, int] = {}
            guess_rss = (rss_start, rss_start)
            right_elsewhere = 0
            if attack:
                outcome_guesses = asyncio.run(asyncio.wait_for(_guesses(night.port, guesses),
                                                               300))
                time.sleep(1.0)
                guess_rss = (rss_start, rss_kib(night.head.pid))
                right_elsewhere = host.login("127.0.22.1")
                attacker = subprocess.Popen(
                    [sys.executable, __file__, "--attacker-only", str(night.port), str(idle),
                     str(readers), str(slowloris), str(NIGHT_SECONDS)],
                    stdout=subprocess.PIPE, text=True)
                assert attacker.stdout is not None
                if attacker.stdout.readline().strip() != "ready":
                    raise SystemExit("the attacker did not start")

                def pump() -> None:
                    assert attacker is not None and attacker.stdout is not None
                    for line in attacker.stdout:
                        with contextlib.suppress(ValueError):
                            attack_stats.update(json.loads(line))
                threading.Thread(target=pump, daemon=True).start()
                time.sleep(15)  # the flood at its height before the night goes on
            samples = Samples()
            stop = threading.Event()
            driver = threading.Thread(target=host.drive, args=(night, NIGHT_SECONDS, stop),
                                      daemon=True)
            driver.start()
            deadline = time.monotonic() + NIGHT_SECONDS
            while driver.is_alive() and time.monotonic() < deadline:
                samples.take(night.head.pid)
                time.sleep(0.5)
            stop.set()
            night.wait(lambda: night.head.poll() is not None, 30, "the head to exit")
        finally:
            if attacker is not None:
                attacker.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    attacker.wait(15)
            night.stop()
        record = night.state()
        lines = night.log_lines("head")
        return Outcome(
            bells=host.bells, failed=host.failed, unanswered=host.unanswered,
            rss_start_kib=rss_start, samples=samples,
            tcp_before_pages=tcp_before, log_growth=night.log_path.stat().st_size - log_start,
            log_lines=len(lines), tracebacks=sum("Traceback" in line for line in lines),
            complete=bool(record.get("complete")), head_exit=night.head.returncode,
            uncounted=night.uncounted(), audit=audit_record(record, parse_rules(rules.read_text())),
            rounds=len(record.get("rounds", [])), guesses=outcome_guesses,
            guess_rss_kib=guess_rss, right_password_elsewhere=right_elsewhere,
            attack=attack_stats,
            refusal_lines=[line.split(" head ", 1)[-1] for line in lines if "refused" in line],
            traceback_lines=_tracebacks(lines))


def _tracebacks(lines: list[str]) -> list[str]:
    """The first two tracebacks of a log, with the line before each."""
    out: list[str] = []
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback")][:2]
    for i in starts:
        out += lines[max(0, i - 1):i + 25] + ["..."]
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--readers", type=int, default=500)
    parser.add_argument("--slowloris", type=int, default=200)
    parser.add_argument("--guesses", type=int, default=1000)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--attacker-only", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attacker_only:
        sys.exit(run_attacker(args.attacker_only))
    for name, most in (("idle", 5000), ("readers", 2000), ("slowloris", 1000),
                       ("guesses", 10_000)):
        if not 0 <= getattr(args, name) <= most:
            raise SystemExit(f"--{name}: 0..{most}")
    base = None
    if not args.no_baseline:
        with tempfile.TemporaryDirectory(prefix="bunco-console-base-") as tmp:
            base = play(Path(tmp), False, 0, 0, 0, 0)
    with tempfile.TemporaryDirectory(prefix="bunco-console-hostile-") as tmp:
        out = play(Path(tmp), True, args.idle, args.readers, args.slowloris, args.guesses)

    mib = 1024
    tcp_mib = PAGE_KIB / 1024

    def row(label: str, ours: float, theirs: float | None, unit: str) -> str:
        if theirs is None:
            return f"| {label} | {ours:.1f} {unit} | - | - |"
        ratio = f"{ours / theirs:.2f}" if theirs else "-"
        return f"| {label} | {ours:.1f} {unit} | {theirs:.1f} {unit} | {ratio} |"

    def figures(o: Outcome) -> dict[str, float]:
        return {
            "bell from the console, p50 (POST to the head's answer)": pct(o.bells, 0.5) * 1000,
            "bell from the console, worst": max(o.bells, default=float("nan")) * 1000,
            "head RSS at the start": o.rss_start_kib / mib,
            "head RSS, highest during the night": max(o.samples.rss_kib, default=0) / mib,
            "kernel TCP memory before": o.tcp_before_pages * tcp_mib,
            "kernel TCP memory, highest during the night": max(o.samples.tcp_pages,
                                                               default=0) * tcp_mib,
            "head's open files, most": max(o.samples.files, default=0),
            "head's log growth": o.log_growth / 1024,
        }

    units = ["ms", "ms", "MiB", "MiB", "MiB", "MiB", "files", "KiB"]
    ours, theirs = figures(out), figures(base) if base else None
    print(f"\n{args.idle} idle connections, {args.readers} slow readers, {args.slowloris} "
          f"slowloris clients; the head under {HEAD_FILES} open files\n")
    print("| figure | under attack | baseline night | ratio |")
    print("| --- | --- | --- | --- |")
    for (label, value), unit in zip(ours.items(), units, strict=True):
        print(row(label, value, theirs[label] if theirs else None, unit))
    print(f"\nbells rung from the console: {len(out.bells)} (baseline {len(base.bells) if base else '-'}); "
          f"refused: {out.failed or 'none'}; host's requests the head closed unanswered "
          f"(pressed again): {len(out.unanswered)} {out.unanswered[:5]}")
    print(f"rounds played: {out.rounds}; night record complete: {out.complete}; head exit: "
          f"{out.head_exit}; entries lost or counted twice: {out.uncounted or 'none'}; audit: "
          f"{'clean' if not out.audit else out.audit}")
    print(f"head's log: {out.log_growth / 1024:.1f} KiB more over the attack, {out.log_lines} "
          f"lines in all, {out.tracebacks} tracebacks")
    print("\npassword guesses (status: count):")
    for key, n in out.guesses.items():
        print(f"  {n:6}  {key}")
    print(f"the right password from another address: {out.right_password_elsewhere}; head RSS "
          f"{out.guess_rss_kib[0] / mib:.1f} -> {out.guess_rss_kib[1] / mib:.1f} MiB")
    print("\nthe attacker's clients:")
    for key, n in sorted(out.attack.items()):
        print(f"  {n:8}  {key}")
    print(f"\nthe head's refusal lines ({len(out.refusal_lines)}), the first 12:")
    for line in out.refusal_lines[:12]:
        print(f"  {line[:160]}")
    if out.traceback_lines:
        print("\nthe head's tracebacks:")
        for line in out.traceback_lines:
            print(f"  {line[:200]}")
    rss_peak = max(out.samples.rss_kib, default=0)
    ok = (out.complete and out.head_exit == 0 and not out.uncounted and not out.audit
          and not out.failed and out.bells and out.log_growth < 1_000_000
          and out.tracebacks == 0 and out.right_password_elsewhere == 200
          and out.guess_rss_kib[1] - out.guess_rss_kib[0] < 20 * 1024
          and rss_peak - out.rss_start_kib < 64 * 1024)
    print("\nRESULT:", "OK" if ok else "FAILED", "(the night complete from the console's bell, "
          "nothing lost, log growth under 1 MB, no traceback, the right password works from "
          "another address, RSS within 20 MiB over the guesses and 64 MiB over the flood)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
