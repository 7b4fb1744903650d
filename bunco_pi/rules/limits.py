"""The size of a night, in a module of its own so a table box can check its number without
loading the night's rules engine."""

MAX_TABLES = 500  # a charity hall: 2,000 players; see benchmarks/bench_rules.py and docs/network.md
