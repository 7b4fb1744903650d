"""Cost of the independent audit beside the engine: auditing a night against simulating it.

Run: python3 benchmarks/bench_audit.py [--repeat N] [--players P]

For each preset one night is simulated (the baseline: the engine folding every event) and its
record audited (the audit playing the log again with its own rules). Figures are CPU time
(time.process_time), best of N, measured side by side in the same run, so the ratio is the
figure to compare across machines and commits.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import PRESET_NAMES, preset
from bunco_pi.rules.record import build_record
from bunco_pi.sim.players import simulate_night


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--players", type=int, default=12)
    args = parser.parse_args()
    print(f"{'preset':<11} {'events':>7} {'simulate ms':>12} {'audit ms':>9} {'audit/simulate':>15}")
    for name in PRESET_NAMES:
        rules = preset(name)
        sim = simulate_night(rules, args.players, 1)
        record = build_record(sim.night, sim.log, seed=1)
        assert audit_record(record, rules) == []
        simulate = best_of(args.repeat,
                           lambda r=rules: simulate_night(r, args.players, 1))
        audit = best_of(args.repeat, lambda r=rules, rec=record: audit_record(rec, r))
        print(f"{name:<11} {len(sim.log):>7} {simulate * 1000:>12.1f} {audit * 1000:>9.1f} "
              f"{audit / simulate:>15.2f}")


if __name__ == "__main__":
    main()
