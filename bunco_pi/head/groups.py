"""Groups of tables in the hall: which tables sit on which Wi-Fi access point (or in which
room), from the head config's ``[hall] groups``, so that when a whole group drops off at once
the head and the console say so: "tables 41-80 offline: access point B?".

Pure: the config's text in, groups out; the tables online in, each group's presence out.

    [hall]
    groups = { "access point A" = "1-40", "access point B" = "41-80", "stage" = "81-84, 90" }
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_GROUP_NAME = 40


class GroupError(ValueError):
    """A group that cannot be: the text says what, for the config's one-line error."""


@dataclass(frozen=True, slots=True)
class TableGroup:
    name: str
    tables: tuple[int, ...]  # ascending

    @property
    def spans(self) -> str:
        return spans(self.tables)


def spans(tables: Iterable[int]) -> str:
    """``1-40, 45, 50-52``: tables as a person reads them."""
    out: list[str] = []
    run: list[int] = []
    for t in sorted(tables):
        if run and t == run[-1] + 1:
            run.append(t)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [t]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


def parse_spans(text: str, table_count: int) -> tuple[int, ...]:
    """``"1-40, 45"`` -> (1, ..., 40, 45); every table 1..table_count; GroupError otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise GroupError("give the tables as text such as \"1-40\" or \"41-80, 90\"")
    tables: set[int] = set()
    for item in text.split(","):
        item = item.strip()
        first, dash, last = item.partition("-")
        if not first.strip().isdigit() or (dash and not last.strip().isdigit()):
            raise GroupError(f"{item!r} is not a table number or a range such as 41-80")
        lo, hi = int(first), int(last) if dash else int(first)
        if lo > hi:
            raise GroupError(f"{item!r}: the range runs backwards")
        if lo < 1 or hi > table_count:
            raise GroupError(f"{item!r}: the night has tables 1 to {table_count}")
        tables.update(range(lo, hi + 1))
    return tuple(sorted(tables))


def parse_groups(value: Any, table_count: int) -> tuple[TableGroup, ...]:
    """The ``[hall] groups`` table: ``{name: "1-40", ...}``. A table in two groups, an empty
    or overlong name, or a table the night does not have is a GroupError naming it."""
    if not isinstance(value, dict):
        raise GroupError('give a table of names and tables: { "access point A" = "1-40" }')
    groups: list[TableGroup] = []
    owner: dict[int, str] = {}
    for name, text in value.items():
        if not name.strip() or len(name) > MAX_GROUP_NAME:
            raise GroupError(f"a group's name is 1 to {MAX_GROUP_NAME} characters ({name!r})")
        try:
            tables = parse_spans(text, table_count)
        except GroupError as exc:
            raise GroupError(f"group {name!r}: {exc}") from None
        for t in tables:
            if t in owner:
                raise GroupError(f"table {t} is in group {owner[t]!r} and in {name!r}")
            owner[t] = name
        groups.append(TableGroup(name, tables))
    return tuple(groups)


def presence(groups: Sequence[TableGroup], online: Iterable[int],
             seen: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """Each group's presence, for the console: its tables online and offline, and whether
    all of it is gone (``down``: what an access point that drops looks like). With ``seen``
    (the tables ever online tonight), a group none of whose boxes has come yet is not down:
    in the lobby, before the boxes start, every table is offline."""
    up = set(online)
    came = None if seen is None else set(seen)
    out = []
    for g in groups:
        offline = [t for t in g.tables if t not in up]
        gone = len(offline) == len(g.tables) and len(g.tables) > 1
        if came is not None and not came.intersection(g.tables):
            gone = False
        out.append({"name": g.name, "tables": g.spans, "count": len(g.tables),
                    "online": len(g.tables) - len(offline), "offline": offline,
                    "down": gone})
    return out


def down_lines(groups: Sequence[TableGroup], online: Iterable[int],
               seen: Iterable[int] | None = None) -> list[str]:
    """One line for each group whose every table is offline: ``tables 41-80 offline:
    access point B?`` (a group of one table is just that table, and not said here)."""
    return [f"tables {g['tables']} offline: {g['name']}?"
            for g in presence(groups, online, seen) if g["down"]]
