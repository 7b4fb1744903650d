"""Opening an SQLite file so that a committed transaction survives kill -9 and power loss."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bunco_pi.errors import UserError


def open_durable(path: Path | str) -> sqlite3.Connection:
    """WAL journal + synchronous=FULL: COMMIT returns only once the WAL is fsync'ed.

    Autocommit mode (``isolation_level=None``): callers open transactions explicitly with
    ``BEGIN IMMEDIATE``. The connection stays on the thread that opened it (sqlite3's
    default check), which is the single-owner rule of this project enforced for free.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, timeout=10)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    except (OSError, sqlite3.Error) as exc:
        raise UserError(f"{path}: cannot open the database ({exc})") from None
    if str(mode).lower() != "wal":
        conn.close()
        raise UserError(f"{path}: the file system does not support SQLite WAL (got {mode})")
    conn.execute("PRAGMA synchronous=FULL")
    return conn


@contextmanager
def transaction(db: sqlite3.Connection, *, sync: bool = True) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (durable on return), or ``ROLLBACK`` on an exception.

    ``sync=False``: a commit that survives kill -9 (it is in the WAL) but not necessarily a
    power cut, saving an fsync, for what may be lost without harm; the next synced commit
    makes it durable too (the WAL is fsynced whole)."""
    if not sync:
        db.execute("PRAGMA synchronous=NORMAL")
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    finally:
        if not sync:
            db.execute("PRAGMA synchronous=FULL")
