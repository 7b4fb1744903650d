"""The table's durable journal: every accepted entry, committed before it is shown.

SQLite in WAL mode with ``synchronous=FULL``: once ``append`` returns, a power cut cannot lose
the entry. A restart reads the open round back and refolds it, so play resumes where it was.
Entries are stored as JSON in an append-only table ordered by ``seq``; an undo is itself an
entry, so the log never rewrites history (and can later be sent to a head as it is).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError

SCHEMA = """
CREATE TABLE IF NOT EXISTS rounds (
    id INTEGER PRIMARY KEY,
    set_number INTEGER NOT NULL,
    round_number INTEGER NOT NULL,
    target INTEGER NOT NULL,
    players TEXT NOT NULL,
    can_end_round INTEGER NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY,
    round_id INTEGER NOT NULL REFERENCES rounds(id),
    entry TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class JournalRound:
    id: int
    set_number: int
    round_number: int
    target: int
    players: tuple[str, str, str, str]
    can_end_round: bool
    finished: bool
    entries: tuple[dict[str, Any], ...]


class Journal:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise UserError(f"{self.path}: cannot open the table journal ({exc})") from None

    def night_seed(self, new: int) -> int:
        """The night's prize tie-break seed: the one stored, or ``new`` stored now, so the
        prizes of a night come out the same after any restart."""
        self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('seed', ?)", (str(new),))
        return int(self._db.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()[0])

    def begin_round(self, set_number: int, round_number: int, target: int,
                    players: tuple[str, ...], can_end_round: bool) -> int:
        with self._db:
            cursor = self._db.execute(
                "INSERT INTO rounds (set_number, round_number, target, players, can_end_round)"
                " VALUES (?, ?, ?, ?, ?)",
                (set_number, round_number, target, json.dumps(list(players)),
                 int(can_end_round)),
            )
        return int(cursor.lastrowid)

    def append(self, round_id: int, entry: dict[str, Any]) -> int:
        """Store one entry durably; returns its seq."""
        with self._db:
            cursor = self._db.execute(
                "INSERT INTO entries (round_id, entry) VALUES (?, ?)",
                (round_id, json.dumps(entry, sort_keys=True)),
            )
        return int(cursor.lastrowid)

    def finish_round(self, round_id: int) -> None:
        with self._db:
            self._db.execute("UPDATE rounds SET finished = 1 WHERE id = ?", (round_id,))

    def reopen_round(self, round_id: int) -> None:
        with self._db:
            self._db.execute("UPDATE rounds SET finished = 0 WHERE id = ?", (round_id,))

    def rounds(self) -> list[JournalRound]:
        out = []
        for rid, set_number, round_number, target, players, can_end, finished in self._db.execute(
            "SELECT id, set_number, round_number, target, players, can_end_round, finished"
            " FROM rounds ORDER BY id"
        ).fetchall():
            entries = tuple(
                json.loads(text)
                for (text,) in self._db.execute(
                    "SELECT entry FROM entries WHERE round_id = ? ORDER BY seq", (rid,)
                )
            )
            out.append(JournalRound(rid, set_number, round_number, target,
                                    tuple(json.loads(players)), bool(can_end), bool(finished),
                                    entries))
        return out

    def last_roll_seq(self) -> int | None:
        """The sensor seq of the latest roll stored: a repeat of it after a restart is ignored."""
        for (text,) in self._db.execute("SELECT entry FROM entries ORDER BY seq DESC"):
            entry = json.loads(text)
            if "roll" in entry and "seq" in entry:
                return int(entry["seq"])
        return None

    def close(self) -> None:
        self._db.close()
