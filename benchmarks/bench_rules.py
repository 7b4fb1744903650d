"""Speed of the rules engine: rolls scored per second and whole nights simulated per second.

Run: python3 benchmarks/bench_rules.py [--repeat N]

Every figure is CPU time (time.process_time) of the best of N runs, printed beside a baseline
measured in the same run: drawing the same number of dice with random.Random. Other load on the
machine moves both alike, so the ratio is the figure to compare across machines and commits.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from itertools import product

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import preset
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
    args = parser.parse_args()
    rules = preset("classic")
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

    # Big nights (charity nights run to 100 tables and more): the whole of `bunco-pi sim
    # --players N --check` beside the dice it draws: the night, its record, the audit.
    for tables in (50, 100, 200):
        players = tables * 4
        result = simulate_night(rules, players, 1)
        rolls_in_night = sum(1 for e in result.log
                             if isinstance(e, TableEntry) and isinstance(e.entry, Roll))
        b = best_of(1, dice_baseline(rolls_in_night))
        t = best_of(1, lambda p=players: simulate_night(rules, p, 1))
        rows.append((f"{tables} tables: simulate the night", rolls_in_night, t, b))
        record = build_record(result.night, result.log, seed=1, source="sim")
        t = best_of(1, lambda r=result: build_record(r.night, r.log, seed=1, source="sim"))
        rows.append((f"{tables} tables: build its record", rolls_in_night, t, b))
        t = best_of(1, lambda r=record: audit_record(r, rules))
        rows.append((f"{tables} tables: audit the record", rolls_in_night, t, b))

    print(f"{'what':44} {'rolls':>7} {'ms':>9} {'per sec':>11} {'baseline ms':>12} {'ratio':>7}")
    for label, count, t, b in rows:
        print(f"{label:44} {count:7d} {t * 1000:9.2f} {count / t:11.0f} {b * 1000:12.2f} "
              f"{t / b:7.2f}")
    print("\nbaseline: drawing the same number of 3-dice rolls with random.Random (CPU time);")
    print("'per sec' is rolls per second; nights per second = 1000 / ms.")


if __name__ == "__main__":
    main()
