"""The board and standings the Pi draws for browsers with JavaScript off: what a reload costs.

Run: python3 benchmarks/bench_pages.py [--tables 10 50 100] [--gets 200]

1. Drawing: ``board_page`` and ``standings_page`` on a night of N tables (a simulated night
   of 4N players at its end), beside ``json.loads`` of the same snapshot (what any reader of
   it pays first), and a reload served from ``Drawn``'s copy (no change of the night since).
2. Serving: a real ConsoleServer on loopback holding that snapshot; GET /board and
   GET /standings timed beside GET /api/snapshot (the JSON string as it is, the baseline).

Loopback only; every loop is bounded in count.
"""

from __future__ import annotations

import argparse
import json
import socket
import time
import urllib.request

from bunco_pi.console.pages import Drawn, board_page, standings_page
from bunco_pi.console.server import ConsoleServer
from bunco_pi.console.snapshot import console_snapshot
from bunco_pi.rules.house import preset


def snapshot_json(tables: int) -> str:
    from bunco_pi.sim.players import simulate_night

    sim = simulate_night(preset("classic"), tables * 4, seed=7)
    snap = console_snapshot(sim.night, name="bench", table_count=tables,
                            online=set(range(1, tables + 1)))
    return json.dumps(snap, separators=(",", ":"))


def per_call_ms(fn, arg, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn(arg)
    return (time.perf_counter() - start) / repeat * 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_ms(url: str, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        with urllib.request.urlopen(url, timeout=10) as r:
            r.read()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[10, 50, 100])
    parser.add_argument("--gets", type=int, default=200)
    args = parser.parse_args()
    print("| tables | figure | value | baseline | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for tables in args.tables:
        source = snapshot_json(tables)
        repeat = max(5, 2000 // tables)
        parse = per_call_ms(json.loads, source, repeat)
        board = per_call_ms(lambda s: board_page(json.loads(s)), source, repeat)
        standings = per_call_ms(lambda s: standings_page(json.loads(s)), source, repeat)
        cached = Drawn(board_page)
        cached(source)
        reload = per_call_ms(cached, source, repeat * 100)
        size = len(board_page(json.loads(source)).encode())
        rows = [("JSON snapshot size (baseline) vs board page size", size / 1024,
                 len(source) / 1024, "kB"),
                ("draw the board (baseline: json.loads)", board, parse, "ms"),
                ("draw the standings (baseline: json.loads)", standings, parse, "ms"),
                ("a reload with no change (baseline: json.loads)", reload, parse, "ms")]
        server = ConsoleServer("127.0.0.1", free_port(), password_hash=None).start()
        try:
            server.publish(source)
            base = f"http://127.0.0.1:{server.port}"
            time.sleep(0.2)
            for path in ("/board", "/standings"):  # the first reload after a change draws
                get_ms(f"{base}{path}", 1)
            snap_times = get_ms(f"{base}/api/snapshot", args.gets)
            for path in ("/board", "/standings"):
                times = get_ms(f"{base}{path}", args.gets)
                for q, label in ((0.5, "p50"), (0.99, "p99")):
                    rows.append((f"GET {path} {label} (baseline: GET /api/snapshot)",
                                 pct(times, q), pct(snap_times, q), "ms"))
        finally:
            server.stop()
        for figure, value, baseline, unit in rows:
            print(f"| {tables} | {figure} | {value:.3f} {unit} | {baseline:.3f} {unit} | "
                  f"{value / baseline:.2f} |")
    print(f"\nDrawing: the mean of repeated calls. Serving: {args.gets} GETs of each path, one "
          "at a time, after the first (which draws the page) has been made.")


if __name__ == "__main__":
    main()
