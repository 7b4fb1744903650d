"""What the console shows, as one JSON-ready dict: a pure function of the head's night.

Built on the head's owner thread after each change and handed to the web server as an
immutable string, so the server never touches the night itself.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from bunco_pi.head.groups import TableGroup, down_lines, presence
from bunco_pi.head.views import timer_of
from bunco_pi.rules.night import ENDED, FINISHING, PLAYING, RESULTS, Night, Player
from bunco_pi.rules.prizes import PrizeAward, award_prizes

PREVIEW_SEED = 0  # the "if the night ended now" prizes break ties the same way every time

PHASE_TEXT = {"lobby": "waiting for tables", "ready": "ready: the bell starts the round",
              "playing": "playing", "finishing": "the bell has rung: finishing turns",
              "results": "round over: players move", "break": "the break",
              "prizes": "settling prizes", "ended": "the night is over"}


def _prizes(awards: Iterable[PrizeAward], names: dict[str, str]) -> list[dict[str, Any]]:
    return [{"name": a.name, "winner": names.get(a.player or "", "-"),
             "amount": a.amount_cents / 100, "cash": a.cash, "tied": [names.get(p, p) for p in a.tied]}
            for a in awards]


def board(night: Night, online: set[int], memo: Memo | None = None) -> list[dict[str, Any]]:
    if memo is not None:
        return memo.board(night, online)
    names = {p.id: p.name for p in night.players}
    ghosts = night.ghosts
    return [board_row(night, index, index + 1 in online, names, ghosts)
            for index in range(len(night.seating))]


def board_row(night: Night, index: int, online: bool, names: dict[str, str],
              ghosts: frozenset[str]) -> dict[str, Any]:
    """One table of the board: its seats, scores, roller, and where the next round seats it."""
    playing = night.phase in (PLAYING, FINISHING)
    seats = night.seating[index]
    number = index + 1
    row: dict[str, Any] = {"table": number, "online": online, "waiting": False,
                           "seats": [{"id": p, "name": names[p], "ghost": p in ghosts}
                                     for p in seats],
                           "score": [0, 0], "roller": None, "phase": night.phase,
                           "ended_round": False}
    if playing and index < len(night.tables):
        t = night.tables[index]
        row.update(seats=[{"id": p, "name": names[p], "ghost": p in ghosts}
                          for p in t.setup.seats],
                   score=list(t.team_scores), roller=names[t.setup.seats[t.roller_seat - 1]],
                   phase=t.phase, waiting=not t.done, ended_round=t.ended_round)
    elif night.history:
        last = night.history[-1].tables[index]
        row["last_score"] = list(last.team_scores)
    if night.phase == RESULTS and index < len(night.next_seats):
        # where the next round seats them: mended at once if someone leaves or arrives
        row["next_seats"] = [{"id": p, "name": names[p], "ghost": p in ghosts}
                             for p in night.next_seats[index]]
    return row


class Memo:
    """The last board rows and standings, kept on the head's thread between two snapshots.

    The night is immutable and a change replaces only the parts it touches (an entry at table
    7 replaces that table's round, nothing else), so a part that is the very same object as
    last time gives the very same row. A snapshot of 500 tables then costs what changed, not
    the whole hall: the standings (the prizes as they would fall, most of the cost) are
    computed again only when a card, the fuzzy die or the prizes change.
    """

    def __init__(self) -> None:
        self._rows: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._standings: tuple[tuple[Any, ...], list[dict[str, Any]]] | None = None
        self._players: tuple[tuple[Any, ...], list[dict[str, Any]]] | None = None
        self._board: tuple[tuple[Any, ...], tuple[Any, ...], list[dict[str, Any]]] | None = None

    def board(self, night: Night, online: set[int]) -> list[dict[str, Any]]:
        # The usual change is an entry at one table: only the rounds in play differ from
        # last time, and only the tables whose round is a new object are looked at again.
        around = (night.players, night.phase, night.seating, night.history, night.next_seats,
                  frozenset(online))
        last = self._board
        if last is not None and _same(last[0], around) and len(last[1]) == len(night.tables):
            rows = list(last[2])
            changed = [i for i, (was, now) in enumerate(zip(last[1], night.tables, strict=True))
                       if was is not now]
        else:
            rows = [{} for _ in night.seating]
            changed = list(range(len(night.seating)))
        if changed:
            names = {p.id: p.name for p in night.players}
            ghosts = night.ghosts
            for index in changed:
                rows[index] = self.row(night, index, index + 1 in online, names, ghosts)
        self._board = (around, night.tables, rows)
        return rows

    def row(self, night: Night, index: int, online: bool, names: dict[str, str],
            ghosts: frozenset[str]) -> dict[str, Any]:
        playing = night.phase in (PLAYING, FINISHING)
        key = (night.players, night.phase, night.seating[index], online,
               night.tables[index] if playing and index < len(night.tables) else None,
               night.history[-1] if night.history else None,
               night.next_seats[index] if index < len(night.next_seats) else None)
        kept = self._rows.get(index)
        if kept is not None and _same(kept[0], key):
            return kept[1]
        row = board_row(night, index, online, names, ghosts)
        self._rows[index] = (key, row)
        return row

    def players(self, night: Night) -> list[dict[str, Any]]:
        key = (night.players, night.cards)
        if self._players is not None and _same(self._players[0], key):
            return self._players[1]
        rows = _players(night)
        self._players = (key, rows)
        return rows

    def standings(self, night: Night) -> list[dict[str, Any]]:
        key = (night.players, night.cards, night.prizes, night.phase == ENDED, night.traveler,
               night.wipeout_traveler, night.rules)
        if self._standings is not None and _same(self._standings[0], key):
            return self._standings[1]
        rows = standings(night)
        self._standings = (key, rows)
        return rows


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    # the night's parts by identity (a new part is a change); the flags and ids by value
    return all(x is y or (isinstance(x, str | bool | int | frozenset) and x == y)
               for x, y in zip(a, b, strict=True))


def standings(night: Night) -> list[dict[str, Any]]:
    names = {p.id: p.name for p in night.players}
    if night.phase == ENDED:
        awards: Sequence[PrizeAward] = night.prizes
    else:
        try:
            awards = award_prizes(night.rules, night.cards, night.traveler,
                                  night.wipeout_traveler, random.Random(PREVIEW_SEED))
        except (ValueError, KeyError):
            awards = ()
    won: dict[str, list[str]] = {}
    for a in awards:
        if a.player:
            won.setdefault(a.player, []).append(a.name)
    rows = [{"id": pid, "name": names[pid], "wins": c.wins, "losses": c.losses,
             "buncos": c.buncos, "baby_buncos": c.baby_buncos, "points": c.points,
             "prizes": won.get(pid, []), "traveler": pid == night.traveler}
            for pid, c in night.cards.items()]
    return sorted(rows, key=lambda r: (-r["wins"], -r["buncos"], -r["points"], r["name"]))


def console_snapshot(night: Night | None, *, name: str, table_count: int, online: set[int],
                     roster: Sequence[dict[str, Any]] = (), console_url: str = "",
                     groups: Sequence[TableGroup] = (), seen: Iterable[int] | None = None,
                     memo: Memo | None = None, now: float | None = None) -> dict[str, Any]:
    """Everything a viewer's page needs, in one dict. ``groups`` (the head config's ``[hall]
    groups``) gives ``groups``, each group's presence, and ``groups_down``, one line for each
    group whose every table is offline (an access point that dropped; of the groups with a
    table in ``seen``, the tables online at least once tonight, when it is given); ``memo``
    reuses what has not changed since the last snapshot built with it (the same dict, not a
    copy: see ``Memo``); ``now`` is the head's wall clock, for a timed round's minutes left,
    which the page counts down from when it received them."""
    snap: dict[str, Any] = {"night": name, "tables": table_count, "url": console_url,
                            "online": sorted(online), "roster": list(roster),
                            "groups": presence(groups, online, seen),
                            "groups_down": down_lines(groups, online, seen)}
    if night is None:
        snap.update(phase="lobby", board=[], standings=[], prizes=[], final=False,
                    waiting_for=[t for t in range(1, table_count + 1) if t not in online])
        snap["status"] = status_line(snap)
        return snap
    tables = board(night, online, memo)
    rows = memo.standings(night) if memo is not None else standings(night)
    preview = night.phase != ENDED
    awards = night.prizes if not preview else ()
    snap.update(
        phase=night.phase, round=night.round_number, set=night.set_number,
        round_index=night.round_index, rounds=night.rules.rounds_per_night,
        played=len(night.history),  # rounds closed: what ending the night settles prizes on
        target=night.target, bell=night.bell_rung,
        traveler=_name_of(night, night.traveler),
        board=tables, standings=rows,
        waiting_for=[t["table"] for t in tables if t["waiting"]],
        offline=[t["table"] for t in tables if not t["online"]],
        prizes=_prizes(awards, {p.id: p.name for p in night.players}) if awards else [],
        final=not preview,
        players=memo.players(night) if memo is not None else _players(night),
    )
    timer = timer_of(night, now) if now is not None else None
    if timer is not None:
        snap["timer"] = timer
    snap["status"] = status_line(snap)
    return snap


def status_line(snap: dict[str, Any]) -> str:
    """The night in one line, as the board, the host's desk and the pages without JavaScript
    all say it: the round, what it waits for, the tables online, who holds the fuzzy die."""
    phase = snap["phase"]
    status = PHASE_TEXT.get(phase, phase)
    waiting = _tables_list(snap.get("waiting_for") or [])
    if waiting and phase == "playing":
        status = f"playing at table {waiting}"
    elif waiting and phase == "finishing":
        status = f"{status} · the round waits for table {waiting}"
    if snap.get("round"):
        status = f"Set {snap['set']}, round {snap['round']} (target {snap['target']}) · {status}"
    if phase == "lobby":
        status += f" · online: {len(snap['online'])} of {snap['tables']}"
    if snap.get("traveler"):
        status += f" · fuzzy die: {snap['traveler']}"
    return status


def timer_line(timer: dict[str, Any]) -> str:
    """A timed round's minutes left in words, as the page drawn on the Pi says them (a page
    with JavaScript counts them down itself)."""
    left = int(timer["left"] + 0.999)
    words = {"pause": "paused", "move": "to move", "warn": "left: nearly time!"}.get(
        timer["phase"], "left")
    return f"{left // 60}:{left % 60:02d} {words}"


STATUS_TABLES = 8  # tables named in the status line; a hall's others are counted


def _tables_list(tables: Sequence[int]) -> str:
    """"3, 7" for a few tables; "1, 2, ... 8 and 492 more" for a hall's round."""
    named = ", ".join(str(t) for t in tables[:STATUS_TABLES])
    more = len(tables) - STATUS_TABLES
    return f"{named} and {more} more" if more > 0 else named


def _name_of(night: Night, pid: str | None) -> str | None:
    return next((p.name for p in night.players if p.id == pid), None) if pid else None


def _players(night: Night) -> list[dict[str, Any]]:
    return [_player(p, night) for p in night.players]


def _player(p: Player, night: Night) -> dict[str, Any]:
    # a ghost with a score card is someone who left: her seat cannot take a late arrival
    return {"id": p.id, "name": p.name, "ghost": p.ghost, "left": p.ghost and p.id in night.cards}
