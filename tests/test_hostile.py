"""Hostile payloads from one table's password against a real `bunco-pi head` during a real
night (mosquitto, head and three tables as processes): the head survives, counts nothing a
table box did not make, logs short lines, and its memory stays put. The same run as
benchmarks/bench_hostile.py, which prints the figures; here with fewer payloads."""

from __future__ import annotations

import pytest

from tests.conftest import _require_mosquitto

pytestmark = pytest.mark.slow


def test_hostile_payloads_crash_nothing_count_nothing_and_cost_the_head_no_memory(tmp_path):
    _require_mosquitto()
    from benchmarks.bench_hostile import ATTACKER, run

    out = run(2000, tmp_path)
    assert sum(out.attack.sent.values()) == 2000 and len(out.attack.sent) == 16
    assert out.attack.refused_by_broker == 500  # the writes its ACL forbids table-4
    assert out.head_alive_after_attack and out.head_exit == 0 and out.tracebacks == 0
    assert out.uncounted == [] and out.audit == [] and out.rounds == 6
    assert out.longest_log_line <= 400  # a bad payload is quoted up to 200 bytes
    growth_kib = out.rss_after_kib - out.rss_before_kib
    print(f"head RSS growth over 2000 hostile payloads from {ATTACKER}: {growth_kib} KiB")
    assert growth_kib < 5 * 1024
