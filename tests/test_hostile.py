"""Hostile messages from every kind of login against a real `bunco-pi head` through a whole
night (mosquitto, head and three tables as processes): the night completes, the head counts
nothing a table box did not make and loses nothing, logs short lines, its record passes the
audit, and its peak memory stays beside a night without the attack. The same run as
benchmarks/bench_hostile.py, which prints the figures; here with fewer payloads."""

from __future__ import annotations

import pytest

from tests.conftest import _require_mosquitto

pytestmark = pytest.mark.slow


def test_a_night_under_attack_from_every_login_completes_and_costs_the_head_no_memory(
        tmp_path):
    _require_mosquitto()
    from benchmarks.bench_hostile import (
        ATTACKER,
        OVER_THE_BROKERS_LIMIT,
        VIEWER,
        _table_kinds,
        _viewer_kinds,
        run,
    )

    out = run(2000, tmp_path)
    hit, a, p = out.attack, out.attacked, out.peaceful
    assert sum(hit.sent.values()) == 2000
    assert len(hit.sent) == len(_table_kinds(0)) + len(_viewer_kinds(0)) + 1  # every kind
    assert hit.by_login[VIEWER] == 500 and hit.by_login[ATTACKER] == 1500
    # the viewer writes nowhere; table 4 not on others' topics, nor the head's
    forbidden_to_table = sum(n for kind, n in hit.sent.items()
                             if kind.startswith(("another table's", "head's", "topic not ours")))
    assert hit.refused_by_broker == 500 + forbidden_to_table
    assert hit.cut_off == OVER_THE_BROKERS_LIMIT
    for night in (a, p):
        assert night.head_exit == 0 and night.tracebacks == 0
        assert night.uncounted == [] and night.audit == [] and night.rounds == 6
    assert a.longest_log_line <= 400  # a bad payload is quoted up to 200 bytes
    growth_kib = a.peak_rss_kib - p.peak_rss_kib
    print(f"head peak RSS, attacked vs peaceful night: {growth_kib:+} KiB")
    assert growth_kib < 10 * 1024
