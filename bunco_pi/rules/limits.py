"""The size of a night, in a module of its own so a table box can check its number without
loading the night's rules engine."""

MAX_TABLES = 500  # 2,000 players in one hall: bench_rules.py, docs/network.md
