from __future__ import annotations

import sqlite3

import pytest

from bunco_pi.errors import UserError
from bunco_pi.table.journal import Journal


def test_entries_survive_reopening_in_order(tmp_path):
    path = tmp_path / "j.db"
    journal = Journal(path)
    first = journal.begin_round(1, 1, 1, ("a", "b", "c", "d"), True)
    journal.append(first, {"tally": "point"})
    journal.append(first, {"roll": [1, 1, 2], "seq": 9})
    journal.finish_round(first)
    second = journal.begin_round(1, 2, 2, ("a", "b", "c", "d"), False)
    journal.append(second, {"pass": True})
    journal.close()

    again = Journal(path)
    rounds = again.rounds()
    assert [(r.round_number, r.target, r.can_end_round, r.finished, r.entries)
            for r in rounds] == [
        (1, 1, True, True, ({"tally": "point"}, {"roll": [1, 1, 2], "seq": 9})),
        (2, 2, False, False, ({"pass": True},)),
    ]
    assert rounds[0].players == ("a", "b", "c", "d")
    assert again.last_roll_seq() == 9
    again.reopen_round(first)
    assert not again.rounds()[0].finished


def test_durability_settings(tmp_path):
    journal = Journal(tmp_path / "j.db")
    mode = journal._db.execute("PRAGMA journal_mode").fetchone()[0]
    sync = journal._db.execute("PRAGMA synchronous").fetchone()[0]
    assert (mode, sync) == ("wal", 2)  # 2 = FULL


def test_committed_before_append_returns(tmp_path):
    path = tmp_path / "j.db"
    journal = Journal(path)
    rid = journal.begin_round(1, 1, 1, ("a", "b", "c", "d"), True)
    journal.append(rid, {"tally": "bunco"})
    # A second connection (as after a crash) sees the entry without any close or commit.
    other = sqlite3.connect(path)
    assert other.execute("SELECT entry FROM entries").fetchall() == [('{"tally": "bunco"}',)]


def test_unopenable_journal_is_one_line(tmp_path):
    with pytest.raises(UserError, match="cannot open the table journal"):
        Journal(tmp_path / "no" / "such" / "dir.db")


def test_the_nights_prize_seed_is_kept_across_restarts(tmp_path):
    path = tmp_path / "j.db"
    first = Journal(path)
    assert first.night_seed(1234) == 1234
    first.close()
    again = Journal(path)
    assert again.night_seed(999) == 1234  # a restart draws anew; the journal's seed stands
    again.close()
