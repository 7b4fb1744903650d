import signal
import subprocess
import sys
import textwrap
import time

import pytest

from bunco_pi.net.envelope import EnvelopeError
from bunco_pi.table.outbox import MAX_PAYLOAD_BYTES, Outbox, OutboxEntry


def test_seq_is_monotonic_and_survives_reopening(tmp_path):
    path = tmp_path / "outbox.sqlite"
    with Outbox(path) as box:
        assert [box.append({"n": n}) for n in range(3)] == [1, 2, 3]
    with Outbox(path) as box:
        assert box.append({"n": 3}) == 4
        assert box.pending() == [OutboxEntry(s, {"n": s - 1}) for s in (1, 2, 3, 4)]


def test_ack_is_cumulative_durable_and_keeps_history(tmp_path):
    path = tmp_path / "outbox.sqlite"
    with Outbox(path) as box:
        for n in range(5):
            box.append({"n": n})
        assert box.ack(3) == 3
        assert box.ack(2) == 0  # an older ack changes nothing
        assert box.ack(3) == 0
    with Outbox(path) as box:
        assert [e.seq for e in box.pending()] == [4, 5]
        assert [e.seq for e in box.entries()] == [1, 2, 3, 4, 5]
        assert box.ack(5) == 2 and box.pending() == []
        assert box.append({"n": 5}) == 6


def test_an_ack_beyond_our_last_seq_moves_numbering_past_it(tmp_path):
    # A replaced card: the head has committed seq 1..40 of this table already.
    with Outbox(tmp_path / "outbox.sqlite") as box:
        box.append({"n": 0})
        box.ack(40)
        assert box.pending() == []
        assert box.append({"n": 1}) == 41


def test_payload_that_could_not_be_sent_is_refused_at_append(tmp_path):
    with Outbox(tmp_path / "outbox.sqlite") as box:
        with pytest.raises(EnvelopeError, match="not JSON"):
            box.append({"x": float("nan")})
        with pytest.raises(EnvelopeError, match="over"):
            box.append({"x": "y" * MAX_PAYLOAD_BYTES})
        assert box.last_seq == 0


def test_database_is_wal_with_full_sync(tmp_path):
    with Outbox(tmp_path / "outbox.sqlite") as box:
        assert box._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert box._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_an_ack_is_not_fsynced_unless_it_moves_the_numbering(tmp_path):
    """An ack a power cut forgets costs nothing (the events go again and the head drops them
    as duplicates), so it skips the fsync that a slow SD card makes long; an entry, and an
    ack that moves the numbering on, are synced (synchronous=FULL) as before."""
    with Outbox(tmp_path / "outbox.sqlite") as box:
        said: list[str] = []
        box._db.set_trace_callback(said.append)

        def sync_level_of(statement: str) -> str:
            """The last synchronous setting said before ``statement`` (FULL at open)."""
            level = "FULL"
            for line in said[: said.index(next(s for s in said if s.startswith(statement)))]:
                if line.startswith("PRAGMA synchronous="):
                    level = line.split("=", 1)[1]
            return level

        box.append({"n": 1})
        box.append({"n": 2})
        assert sync_level_of("INSERT") == "FULL"
        said.clear()
        assert box.ack(1) == 1
        assert sync_level_of("UPDATE") == "NORMAL"
        assert box._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again after
        said.clear()
        box.ack(40)  # a replaced card: the head has seq 1..40 already
        assert sync_level_of("UPDATE") == "FULL"
        assert box.append({"n": 3}) == 41


WRITER = textwrap.dedent("""
    import sys
    from bunco_pi.table.outbox import Outbox
    box = Outbox(sys.argv[1])
    n = 0
    while True:
        n += 1
        seq = box.append({"n": n})
        if n % 7 == 0:
            box.ack(seq - 3)
        print(seq, flush=True)
""")


@pytest.mark.slow
def test_kill_9_mid_writes_loses_nothing_returned_and_doubles_nothing(tmp_path):
    path = tmp_path / "outbox.sqlite"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                             text=True)
    reported = []
    deadline = time.monotonic() + 20
    assert child.stdout is not None
    while len(reported) < 60 and time.monotonic() < deadline:
        reported.append(int(child.stdout.readline()))
    child.send_signal(signal.SIGKILL)
    child.wait(5)
    assert len(reported) == 60
    with Outbox(path) as box:
        seqs = [e.seq for e in box.entries()]
        assert seqs == list(range(1, len(seqs) + 1))  # contiguous: nothing lost, nothing twice
        assert set(reported) <= set(seqs)
        assert [e.payload["n"] for e in box.entries()] == seqs
        assert box.last_seq == len(seqs)
        # The ack made after seq 56 (7*8) said "up to 53"; it was durable before 56 printed.
        assert box.acked >= 53
        assert box.append({"n": -1}) == len(seqs) + 1


def test_append_many_is_all_or_none(tmp_path):
    with Outbox(tmp_path / "o.sqlite") as outbox:
        assert outbox.append({"a": 1}) == 1
        assert outbox.append_many([{"undo": 1}, {"undo": 2}, {"undo": 3}]) == [2, 3, 4]
        with pytest.raises(EnvelopeError):
            outbox.append_many([{"undo": 4}, {"bad": float("nan")}])  # the second cannot be stored
        assert [e.seq for e in outbox.entries()] == [1, 2, 3, 4]
        assert outbox.last_seq == 4
