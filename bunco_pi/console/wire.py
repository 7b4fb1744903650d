"""The snapshot as the viewers receive it: the whole of it as JSON, and what changed since the
last one as a small patch.

At 500 tables the whole snapshot is half a megabyte; a score changing at one table changes one
row of it. A page that holds the last snapshot gets a patch instead (``event: patch`` on the
stream): the top-level keys whose value changed, and the board's rows that changed by their
index. The whole snapshot is still made for a page that connects, the pages without
JavaScript and ``/api/snapshot``, from each part's JSON kept since the last time, so a part
that is the very same object as last time (``snapshot.Memo`` keeps them) is not encoded again.

Owner thread only (the head's): the strings it returns are immutable and go to the server.
"""

from __future__ import annotations

import json
from typing import Any


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class Wire:
    def __init__(self) -> None:
        self._keys: tuple[str, ...] | None = None
        self._parts: dict[str, tuple[Any, str]] = {}  # key -> (value, its JSON)
        self._rows: list[tuple[Any, str]] = []  # the board's rows, the same way

    def encode(self, snap: dict[str, Any]) -> tuple[str, str | None]:
        """(the whole snapshot's JSON, the patch from the last one's as JSON, or None when a
        page must take the whole: the first snapshot, or one whose keys are not the last's)"""
        keys = tuple(snap)
        whole = self._keys == keys
        changed: list[str] = []
        parts: dict[str, tuple[Any, str]] = {}
        for key in keys:
            if key == "board":
                continue
            value = snap[key]
            kept = self._parts.get(key)
            if kept is not None and kept[0] is value:
                parts[key] = kept
                continue
            text = _dump(value)
            parts[key] = (value, text)
            if kept is None or kept[1] != text:
                changed.append(key)
        board = snap.get("board", [])
        rows: list[tuple[Any, str]] = []
        row_changes: list[int] = []
        for i, row in enumerate(board):
            kept_row = self._rows[i] if i < len(self._rows) else None
            if kept_row is not None and kept_row[0] is row:
                rows.append(kept_row)
                continue
            text = _dump(row)
            rows.append((row, text))
            if kept_row is None or kept_row[1] != text:
                row_changes.append(i)
        board_text = "[" + ",".join(text for _, text in rows) + "]"
        if len(rows) != len(self._rows):
            changed.append("board")
        self._keys, self._parts, self._rows = keys, parts, rows
        full = "{" + ",".join(
            f"{_dump(key)}:{board_text if key == 'board' else parts[key][1]}" for key in keys) + "}"
        if not whole:
            return full, None
        sets = ",".join(f"{_dump(key)}:{board_text if key == 'board' else parts[key][1]}"
                        for key in changed)
        patched = "" if "board" in changed else \
            ",".join(f'"{i}":{rows[i][1]}' for i in row_changes)
        return full, '{"set":{' + sets + '},"rows":{' + patched + "}}"
