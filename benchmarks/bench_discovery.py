"""How long a table waits to find the head: zeroconf browse on loopback vs the fallback.

Run: python3 benchmarks/bench_discovery.py [--repeat N]

Wall-clock seconds (time.monotonic) for a table to learn the broker's address at start, the
head advertising on 127.0.0.1. The baseline, measured in the same run, is a plain TCP connect
to the configured address (what a table does when discovery is off): the ratio says what
discovery costs at every start. "No head" is how long a table waits before it falls back.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time

from bunco_pi.net.discovery import Advertiser, browse

LOOPBACK = ["127.0.0.1"]


def timed(fn) -> float:
    start = time.monotonic()
    fn()
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=3.0, help="browse timeout (s)")
    args = parser.parse_args()

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    connect = [timed(lambda: socket.create_connection(("127.0.0.1", port), 1).close())
               for _ in range(args.repeat)]
    listener.close()

    with Advertiser("bench-night", port, addresses=LOOPBACK, interfaces=LOOPBACK):
        found = []
        for _ in range(args.repeat):
            found.append(timed(lambda: found_head(args.timeout)))
    missing = [timed(lambda: browse(args.timeout, night="nobody", interfaces=LOOPBACK))
               for _ in range(min(args.repeat, 2))]

    base = statistics.median(connect)
    print(f"{'figure':<44} {'median s':>10} {'ratio':>12}")
    print(f"{'baseline: TCP connect to configured address':<44} {base:>10.5f} {1:>12.0f}")
    med = statistics.median(found)
    print(f"{'zeroconf browse finds the head':<44} {med:>10.5f} {med / base:>12.0f}")
    med = statistics.median(missing)
    print(f"{'no head: browse gives up, falls back':<44} {med:>10.5f} {med / base:>12.0f}")


def found_head(timeout: float) -> None:
    if browse(timeout, night="bench-night", interfaces=LOOPBACK) is None:
        raise SystemExit("the head was not found on loopback: multicast unavailable here?")


if __name__ == "__main__":
    main()
