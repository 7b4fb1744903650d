"""Speed of the rules engine: rolls scored per second and whole nights simulated per second;
then the time and memory of a whole night's simulation, record and audit at 100, 200 and 500
tables, with what each table adds.

Run: python3 benchmarks/bench_rules.py [--repeat N] [--rules PRESET|FILE] [--tables 100 200 500]

Every figure is CPU time (time.process_time) of the best of N runs, printed beside a baseline
measured in the same run: drawing the same number of dice with random.Random. Other load on the
machine moves both alike, so the ratio is the figure to compare across machines and commits.
Memory is what each step adds to the peak RSS (Linux's VmHWM, reset before it), in a process of
its own for each size, every step's result kept alive.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import product

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import resolve_rules
from bunco_pi.rules.night import TableEntry
from bunco_pi.rules.record import build_record
from bunco_pi.rules.scoring import score_roll
from bunco_pi.rules.table_round import Roll, TableRound, TableSetup
from bunco_pi.sim.players import simulate_night


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def dice_baseline(count: int) -> Callable[[], object]:
    def run() -> None:
        rng = random.Random(1)
        for _ in range(count):
            (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rules", default="classic", metavar="PRESET|FILE",
                        help="a preset or a house rules file (TOML): the nights' rules")
    parser.add_argument("--tables", type=int, nargs="+", default=[100, 200, 500],
                        help="sizes of the whole nights (default 100 200 500)")
    parser.add_argument("--one-night", type=int, help=argparse.SUPPRESS)  # a size's process
    args = parser.parse_args()
    rules = resolve_rules(args.rules)
    if args.one_night:
        print(json.dumps(one_night(rules, args.one_night)))
        return
    rolls = list(product(range(1, 7), repeat=3))
    rows = []

    def score_all() -> None:
        for target in range(1, 7):
            for dice in rolls:
                score_roll(dice, target, rules)

    n = 6 * len(rolls)
    t = best_of(args.repeat, score_all)
    b = best_of(args.repeat, dice_baseline(n))
    rows.append(("score_roll (no cache)", n, t, b))

    setup = TableSetup(2, ("a", "b", "c", "d"), 3, rules, can_end_round=False)
    entries = [Roll(d) for d in rolls[:150]]

    def table_round() -> None:
        state = TableRound.begin(setup)
        for entry in entries:
            state = state.apply(entry)

    t = best_of(args.repeat, table_round)
    b = best_of(args.repeat, dice_baseline(len(entries)))
    rows.append(("TableRound.apply(Roll)", len(entries), t, b))

    for label, players in (("12-player night", 12), ("50-table night (200 players)", 200)):
        reps = args.repeat if players <= 12 else max(1, args.repeat // 2)
        events = len(simulate_night(rules, players, 1).log)
        rolls_in_night = sum(1 for e in simulate_night(rules, players, 1).log
                             if isinstance(e, TableEntry) and isinstance(e.entry, Roll))
        t = best_of(reps, lambda p=players: simulate_night(rules, p, 1))
        b = best_of(reps, dice_baseline(rolls_in_night))
        rows.append((f"{label} ({events} events)", rolls_in_night, t, b))

    print(f"{'what':44} {'rolls':>7} {'ms':>9} {'per sec':>11} {'baseline ms':>12} {'ratio':>7}")
    for label, count, t, b in rows:
        print(f"{label:44} {count:7d} {t * 1000:9.2f} {count / t:11.0f} {b * 1000:12.2f} "
              f"{t / b:7.2f}")
    print("\nbaseline: drawing the same number of 3-dice rolls with random.Random (CPU time);")
    print("'per sec' is rolls per second; nights per second = 1000 / ms.")
    big_nights(rules, args.rules, sorted(args.tables))


def _vm(key: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def one_night(rules: object, tables: int) -> dict:
    """In a process of its own (``--one-night``): simulate, build the record, audit, each
    step's CPU time and what it adds to the peak RSS (reset before it through
    /proc/self/clear_refs; what a step makes is kept alive, so the next cannot reuse it)."""
    steps: dict[str, tuple[float, float]] = {}
    kept: dict[str, object] = {}

    def step(label: str, fn: Callable[[], object]) -> object:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        before = _vm("VmRSS")
        start = time.process_time()
        out = fn()
        seconds = time.process_time() - start
        steps[label] = (seconds, _vm("VmHWM") - before)
        kept[label] = out
        return out

    result = step("simulate the night", lambda: simulate_night(rules, tables * 4, 1))  # type: ignore[arg-type]
    record = step("build its record", lambda: build_record(
        result.night, result.log, seed=1, source="sim"))  # type: ignore[attr-defined]
    problems = step("audit the record", lambda: audit_record(record, rules))  # type: ignore[arg-type]
    assert problems == [], problems
    rolls = sum(1 for e in result.log  # type: ignore[attr-defined]
                if isinstance(e, TableEntry) and isinstance(e.entry, Roll))
    return {"steps": steps, "rolls": rolls}


def big_nights(rules: object, rules_name: str, sizes: list[int]) -> None:
    """The whole of `bunco-pi sim --players N --check` at each size: the night, its record,
    the audit; CPU time, what each adds to the peak RSS, and both per table and per roll."""
    figures: dict[int, dict[str, tuple[float, float]]] = {}
    rolls: dict[int, int] = {}
    for tables in sizes:
        out = subprocess.run([sys.executable, __file__, "--one-night", str(tables),
                              "--rules", rules_name], capture_output=True, text=True,
                             check=True)
        got = json.loads(out.stdout)
        figures[tables] = {k: tuple(v) for k, v in got["steps"].items()}  # type: ignore[misc]
        rolls[tables] = got["rolls"]
        print(f"  {tables} tables done", file=sys.stderr, flush=True)
    print(f"\nwhole nights ({rules_name}): CPU time, and what each step adds to the peak RSS")
    print(f"{'what':34} {'tables':>6} {'rolls':>8} {'s':>8} {'ms/table':>9} {'us/roll':>8} "
          f"{'peak MiB':>9} {'KiB/table':>10}")
    for tables in sizes:
        for label, (sec, mib) in figures[tables].items():
            print(f"{label:34} {tables:6d} {rolls[tables]:8d} {sec:8.2f} "
                  f"{1000 * sec / tables:9.2f} {1e6 * sec / rolls[tables]:8.1f} {mib:9.1f} "
                  f"{1024 * mib / tables:10.1f}")
    if len(sizes) > 1:
        print("\ngrowth per table added, from each size to the next (flat = linear):")
        for small, big in zip(sizes, sizes[1:], strict=False):
            for label in figures[small]:
                (s0, m0), (s1, m1) = figures[small][label], figures[big][label]
                print(f"  {label:32} {small:>4}->{big:<4} {1000 * (s1 - s0) / (big - small):8.2f} "
                      f"ms/table {1024 * (m1 - m0) / (big - small):8.1f} KiB/table")


if __name__ == "__main__":
    main()
