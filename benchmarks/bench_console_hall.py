"""The console in a hall of 500 tables: what a change costs the head, what it sends each phone,
and how fast a phone finds its table and loads the board, beside a small night.

Run: python3 benchmarks/bench_console_hall.py [--tables 100 200 500] [--entries 200]
                                              [--finds 20] [--loads 5]

1. The head's thread, per table entry mid-round: the snapshot as the console built it before
   (drawn whole, the standings' prizes-if-it-ended-now included, and encoded whole) beside
   now (``Memo`` keeps what did not change, ``Wire`` encodes what did); and the bytes each
   viewer's stream carries per entry: the whole snapshot beside the patch.
2. In headless Chromium at a phone's size (390x844), against the real head service and console
   server (tests/hall_head.py: 500 tables, 2,000 names; the baseline a night of 5 tables):
   the board from the address typed to its first page of tables drawn, with and without
   JavaScript; "find my table" from the keystroke to the answer in the page; what drawing
   the board's page and the host's desk costs the page after a change.

Loopback only; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bunco_pi.console.snapshot import Memo, console_snapshot  # noqa: E402
from bunco_pi.console.wire import Wire  # noqa: E402
from bunco_pi.rules.house import preset  # noqa: E402
from bunco_pi.rules.night import Night, Player, StartRound, TableEntry  # noqa: E402
from bunco_pi.rules.table_round import Tally  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def snapshot_costs(tables: int, entries: int) -> dict[str, float]:
    players = [Player(f"p{i}", f"Player {i}") for i in range(tables * 4)]
    seating = [tuple(f"p{i}" for i in range(t * 4, t * 4 + 4)) for t in range(tables)]
    night = Night.start(preset("classic"), players, seating).apply(StartRound())
    online = set(range(1, tables + 1))
    memo, wire = Memo(), Wire()
    wire.encode(console_snapshot(night, name="b", table_count=tables, online=online, memo=memo))
    whole_ms, now_ms, whole_bytes, patch_bytes = [], [], [], []
    for i in range(entries):
        night = night.apply(TableEntry(1 + (i * 37) % tables, Tally("point")))
        start = time.perf_counter()
        text = json.dumps(console_snapshot(night, name="b", table_count=tables, online=online),
                          separators=(",", ":"))
        whole_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        full, patch = wire.encode(console_snapshot(night, name="b", table_count=tables,
                                                   online=online, memo=memo))
        now_ms.append((time.perf_counter() - start) * 1000)
        assert patch is not None and len(full) == len(text)
        whole_bytes.append(len(text))
        patch_bytes.append(len(patch))
    return {"whole_ms": statistics.median(whole_ms), "now_ms": statistics.median(now_ms),
            "whole_p99": pct(whole_ms, 0.99), "now_p99": pct(now_ms, 0.99),
            "whole_kb": statistics.median(whole_bytes) / 1000,
            "patch_kb": statistics.median(patch_bytes) / 1000}


def browser_figures(tables: int, players: int, finds: int, loads: int) -> dict[str, list[float]]:
    from tests.browser import PHONE, chrome
    from tests.hall_head import PASSWORD, Hall, hall_names

    out: dict[str, list[float]] = {"board": [], "plain": [], "find": [], "find_page": [],
                                   "draw_board": [], "draw_desk": []}
    with tempfile.TemporaryDirectory() as tmp:
        hall = Hall(Path(tmp), tables, players).start()
        try:
            hall.online(list(range(1, tables + 1)))
            hall.start_night()
            time.sleep(1.0)
            first = min(20, tables)
            with chrome(PHONE) as browser:
                for _ in range(loads):
                    browser.get("about:blank")
                    start = time.perf_counter()
                    browser.get(hall.base + "/")
                    _wait(lambda: browser.execute_script(
                        "return document.querySelectorAll('#tables .table').length") == first)
                    out["board"].append((time.perf_counter() - start) * 1000)
                queries = [re.sub(r" \d+$", "", n).upper()[:7] for n in hall_names(players)[:finds]]
                field = browser.find_element("id", "find-name")
                for query in queries:
                    field.clear()
                    start = time.perf_counter()
                    field.send_keys(query)
                    _wait(lambda q=query: browser.execute_script(
                        "return document.getElementById('found').dataset.query") == q)
                    out["find"].append((time.perf_counter() - start) * 1000)
                    out["find_page"].append(float(browser.execute_script(
                        "return document.getElementById('found').dataset.ms")))
                # what one snapshot or patch costs the page to draw: the board's page, the desk
                for _ in range(loads * 4):
                    out["draw_board"].append(browser.execute_script(
                        "const t = performance.now(); renderBoard(); return performance.now() - t"))
                browser.get(hall.base + "/#host")
                _wait(lambda: browser.execute_script(
                    "return !document.getElementById('login').classList.contains('hidden')"))
                browser.find_element("id", "password").send_keys(PASSWORD)
                browser.find_element("css selector", "#login button").click()
                _wait(lambda: browser.execute_script(
                    "return document.querySelectorAll('#desk-tables li').length") == first)
                for _ in range(loads * 4):
                    out["draw_desk"].append(browser.execute_script(
                        "const t = performance.now(); renderHost(); return performance.now() - t"))
            with chrome(PHONE, javascript=False) as plain:
                for _ in range(loads):
                    plain.get("about:blank")
                    start = time.perf_counter()
                    plain.get(hall.base + "/board")
                    _wait(lambda: len(plain.find_elements("css selector", "#tables .table"))
                          == first)
                    out["plain"].append((time.perf_counter() - start) * 1000)
        finally:
            hall.stop()
    return out


def _wait(predicate, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.005)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[100, 200, 500])
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--finds", type=int, default=20)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--small", type=int, default=5, help="the baseline night's tables")
    args = parser.parse_args()

    print("\n1. the head's thread per table entry, mid-round (median; p99)\n")
    print("| tables | snapshot whole, as before | now: what changed | ratio | "
          "bytes to each viewer, whole | now: the patch | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for tables in args.tables:
        c = snapshot_costs(tables, args.entries)
        print(f"| {tables} | {c['whole_ms']:.1f} ms ({c['whole_p99']:.1f}) | "
              f"{c['now_ms']:.2f} ms ({c['now_p99']:.2f}) | "
              f"{c['now_ms'] / c['whole_ms']:.3f} | {c['whole_kb']:.0f} kB | "
              f"{c['patch_kb']:.2f} kB | {c['patch_kb'] / c['whole_kb']:.4f} |")

    big_tables = max(args.tables)
    big = browser_figures(big_tables, big_tables * 4, args.finds, args.loads)
    small = browser_figures(args.small, args.small * 4, args.finds, args.loads)
    print(f"\n2. headless Chromium at 390x844: {big_tables} tables ({big_tables * 4} names) "
          f"beside {args.small} tables; {args.loads} loads, {args.finds} searches\n")
    print("| figure | p50 | p99 | baseline p50 | baseline p99 | ratio p99 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key, name in (("board", "the board, address to its first page drawn"),
                      ("plain", "the board without JavaScript (/board)"),
                      ("find", "find my table: typing 7 letters (WebDriver) to the answer shown"),
                      ("find_page", "find my table: the page's request to the answer drawn"),
                      ("draw_board", "the page draws the board after a change"),
                      ("draw_desk", "the page draws the host's desk after a change")):
        ours, base = big[key], small[key]
        print(f"| {name} | {pct(ours, .5):.1f} ms | {pct(ours, .99):.1f} ms | "
              f"{pct(base, .5):.1f} ms | {pct(base, .99):.1f} ms | "
              f"{pct(ours, .99) / pct(base, .99):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
