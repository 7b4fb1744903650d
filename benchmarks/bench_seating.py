"""Cost of seating by the rules: the next round's seats worked out after a round.

Run: python3 benchmarks/bench_seating.py [--repeat N]

For 3, 50 and 200 tables under the rotate preset (ghosts must have real partners, partners
change, player 1 keeps her seat), with no ghosts, two, and a table of three ghosts (players who
left), one round's seating is worked out by ``plan_next_seating`` (every layout of each table's
four checked against the rules). The baseline, measured in the same run, is the text's own
layout of the same teams with no rule checked (``_team_plan`` and ``_seat_table``). Figures
are CPU time (time.process_time) per seating, best of N; the ratio is the figure to compare
across machines and commits.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from bunco_pi.rules.house import preset
from bunco_pi.rules.rotation import (
    TableOutcome,
    _seat_table,
    _team_plan,
    plan_next_seating,
)

ROTATE = preset("rotate")


def best_of(repeat: int, runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(runs):
            fn()
        times.append((time.process_time() - start) / runs)
    return min(times)


def outcomes(tables: int, ghosts: int, seed: int = 1) -> tuple[list[TableOutcome], frozenset[str]]:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(4 * tables)]
    out = []
    for t in range(tables):
        seats = tuple(players[4 * t: 4 * t + 4])
        a, b = (seats[0], seats[2]), (seats[1], seats[3])
        out.append(TableOutcome(seats, *((a, b) if rng.random() < 0.5 else (b, a))))
    if ghosts == 3:  # table 2's losers both left, and the head's winners bring a third ghost
        return out, frozenset({*out[1].losers, out[0].winners[0]})
    return out, frozenset(out[-1].seats[:ghosts])  # one ghost on each team of the last table


def text_layout(out: list[TableOutcome]) -> tuple:
    plan = _team_plan("winners-rotate", len(out), out)
    return tuple(_seat_table(staying, arriving, out[t].seats, True)
                 for t, (staying, arriving) in enumerate(plan))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'tables':>6} {'ghosts':>7} {'text layout':>12} {'by the rules':>13} {'ratio':>6}")
    for tables in (3, 50, 200):
        for ghosts in (0, 2, 3):
            out, g = outcomes(tables, ghosts)
            runs = max(1, 600 // tables)
            base = best_of(args.repeat, runs, lambda out=out: text_layout(out))
            ruled = best_of(args.repeat, runs,
                            lambda out=out, g=g: plan_next_seating(ROTATE, out, g))
            print(f"{tables:>6} {ghosts:>7} {base * 1e3:>10.3f}ms {ruled * 1e3:>11.3f}ms "
                  f"{ruled / base:>6.1f}")


if __name__ == "__main__":
    main()
