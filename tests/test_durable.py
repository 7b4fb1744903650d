import sqlite3

import pytest

from bunco_pi.errors import UserError
from bunco_pi.net.durable import open_durable, transaction


def test_opens_in_wal_with_full_sync(tmp_path):
    db = open_durable(tmp_path / "sub" / "x.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2


def test_transaction_commits_or_rolls_back(tmp_path):
    db = open_durable(tmp_path / "x.sqlite")
    db.execute("CREATE TABLE t (x INTEGER)")
    with transaction(db):
        db.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(sqlite3.IntegrityError), transaction(db):
        db.execute("INSERT INTO t VALUES (2)")
        raise sqlite3.IntegrityError("stop")
    assert db.execute("SELECT x FROM t").fetchall() == [(1,)]


def test_an_unopenable_path_is_a_user_error_naming_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UserError, match="cannot open the database"):
        open_durable(blocker / "x.sqlite")
