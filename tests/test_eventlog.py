import signal
import subprocess
import sys
import textwrap
import time

import pytest

from bunco_pi.head.eventlog import OWN_SOURCE, EventLog, IncomingEvent


def ev(table, seq, **payload):
    return IncomingEvent(table, seq, f"table-{table}", payload or {"s": seq})


def test_commit_assigns_log_positions_in_the_order_given(tmp_path):
    with EventLog(tmp_path / "log.sqlite") as log:
        result = log.commit([ev(2, 1), ev(1, 1), ev(2, 2)])
        assert [(e.position, e.table, e.seq) for e in result.committed] == \
            [(1, 2, 1), (2, 1, 1), (3, 2, 2)]
        assert log.highest(2) == 2 and log.highest(1) == 1 and log.highest(9) == 0


def test_a_committed_seq_is_a_reported_duplicate_even_after_reopening(tmp_path):
    path = tmp_path / "log.sqlite"
    with EventLog(path) as log:
        log.commit([ev(1, 1), ev(1, 2)])
    with EventLog(path) as log:
        result = log.commit([ev(1, 2, s=99), ev(1, 1), ev(1, 3)])
        assert result.duplicates == [(1, 2), (1, 1)]
        assert [(e.table, e.seq) for e in result.committed] == [(1, 3)]
        assert [e.payload for e in log.replay()] == [{"s": 1}, {"s": 2}, {"s": 3}]
        assert len(log) == 3


def test_a_gap_is_refused_so_the_highest_seq_is_a_cumulative_ack(tmp_path):
    with EventLog(tmp_path / "log.sqlite") as log:
        result = log.commit([ev(1, 1), ev(1, 3), ev(1, 2)])
        assert result.out_of_order == [(1, 3)]
        assert [e.seq for e in result.committed] == [1, 2]
        assert log.highest(1) == 2


def test_replay_reads_everything_in_log_order_from_a_position(tmp_path):
    with EventLog(tmp_path / "log.sqlite") as log:
        log.commit([ev(1, 1), ev(2, 1)])
        [own] = log.append_own("head", {"bell": True})
        log.commit([ev(1, 2)])
        assert own.table == OWN_SOURCE and own.seq == 1 and own.position == 3
        assert [(e.table, e.seq) for e in log.replay()] == [(1, 1), (2, 1), (0, 1), (1, 2)]
        assert [e.position for e in log.replay(after_position=2)] == [3, 4]
        assert [e.seq for e in log.append_own("head", {}, {"x": 1})] == [2, 3]
        assert [e.position for e in log.replay(after_position=4)] == [5, 6]


def test_a_failed_transaction_leaves_neither_rows_nor_cached_highs(tmp_path):
    with EventLog(tmp_path / "log.sqlite") as log:
        bad = IncomingEvent(1, 2, "table-1", {"x": float("nan")})
        try:
            log.commit([ev(1, 1), bad])
        except ValueError:
            pass
        else:
            raise AssertionError("a NaN payload must not be logged")
        assert len(log) == 0 and log.highest(1) == 0
        assert [e.seq for e in log.commit([ev(1, 1)]).committed] == [1]


WRITER = textwrap.dedent("""
    import sys
    from bunco_pi.head.eventlog import EventLog, IncomingEvent
    log = EventLog(sys.argv[1])
    seq = 0
    while True:
        seq += 1
        batch = [IncomingEvent(t, seq, "table-%d" % t, {"t": t, "s": seq}) for t in (1, 2, 3)]
        result = log.commit(batch)
        print(seq, len(result.committed), flush=True)
""")


@pytest.mark.slow
def test_kill_9_mid_commits_keeps_every_reported_commit_once(tmp_path):
    path = tmp_path / "log.sqlite"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                             text=True)
    assert child.stdout is not None
    reported = []
    deadline = time.monotonic() + 20
    while len(reported) < 40 and time.monotonic() < deadline:
        seq, n = map(int, child.stdout.readline().split())
        assert n == 3
        reported.append(seq)
    child.send_signal(signal.SIGKILL)
    child.wait(5)
    assert len(reported) == 40
    with EventLog(path) as log:
        rows = list(log.replay())
        pairs = [(e.table, e.seq) for e in rows]
        assert len(pairs) == len(set(pairs))
        top = max(e.seq for e in rows)
        assert top >= reported[-1]
        # Batches are atomic: every table reached the same seq, and all below it are there.
        assert sorted(pairs) == sorted((t, s) for t in (1, 2, 3) for s in range(1, top + 1))
        assert [e.position for e in rows] == sorted(e.position for e in rows)
        again = log.commit([ev(2, s) for s in reported])
        assert again.committed == [] and len(again.duplicates) == len(reported)


def test_a_duplicate_with_a_different_payload_is_reported_as_a_conflict(tmp_path):
    with EventLog(tmp_path / "log.sqlite") as log:
        log.commit([ev(1, 1, a=1), ev(1, 2, a=2)])
        result = log.commit([ev(1, 1, a=1), ev(1, 2, a=99)])
        assert result.duplicates == [(1, 1), (1, 2)] and result.conflicts == [(1, 2)]
        assert log.conflicts([ev(1, 1, a=5), ev(1, 2, a=2), ev(1, 7)]) == [(1, 1)]
        assert [e.payload for e in log.replay()] == [{"a": 1}, {"a": 2}]


def test_a_rejected_event_uses_its_seq_but_is_not_replayed_for_applying(tmp_path):
    path = tmp_path / "log.sqlite"
    with EventLog(path) as log:
        bad = IncomingEvent(1, 2, "table-1", {"entry": ["roll", [9, 9, 9]]}, "bad dice")
        result = log.commit([ev(1, 1), bad, ev(1, 3)])
        assert [e.rejected for e in result.committed] == [None, "bad dice", None]
    with EventLog(path) as log:
        assert log.highest(1) == 3
        assert [e.seq for e in log.replay()] == [1, 3]
        assert [(e.seq, e.rejected) for e in log.replay(include_rejected=True)] == \
            [(1, None), (2, "bad dice"), (3, None)]
