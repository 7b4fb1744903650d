"""The size of a night, in a module of its own so a table box can check its number without
loading the night's rules engine."""

MAX_TABLES = 200  # a charity night runs to 100 tables and more; see benchmarks/bench_rules.py
