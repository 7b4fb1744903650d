"""What the console shows, as one JSON-ready dict: a pure function of the head's night.

Built on the head's owner thread after each change and handed to the web server as an
immutable string, so the server never touches the night itself.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from bunco_pi.head.groups import TableGroup, down_lines, presence
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


def board(night: Night, online: set[int]) -> list[dict[str, Any]]:
    names = {p.id: p.name for p in night.players}
    ghosts = night.ghosts
    playing = night.phase in (PLAYING, FINISHING)
    tables = []
    for index, seats in enumerate(night.seating):
        number = index + 1
        row: dict[str, Any] = {"table": number, "online": number in online, "waiting": False,
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
        tables.append(row)
    return tables


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
                     groups: Sequence[TableGroup] = (),
                     seen: Iterable[int] | None = None) -> dict[str, Any]:
    """Everything a viewer's page needs, in one dict. ``groups`` (the head config's ``[hall]
    groups``) gives ``groups``, each group's presence, and ``groups_down``, one line for each
    group whose every table is offline (an access point that dropped; of the groups with a
    table in ``seen``, the tables online at least once tonight, when it is given)."""
    snap: dict[str, Any] = {"night": name, "tables": table_count, "url": console_url,
                            "online": sorted(online), "roster": list(roster),
                            "groups": presence(groups, online, seen),
                            "groups_down": down_lines(groups, online, seen)}
    if night is None:
        snap.update(phase="lobby", board=[], standings=[], prizes=[], final=False,
                    waiting_for=[t for t in range(1, table_count + 1) if t not in online])
        snap["status"] = status_line(snap)
        return snap
    names = {p.id: p.name for p in night.players}
    tables = board(night, online)
    rows = standings(night)
    preview = night.phase != ENDED
    awards = night.prizes if not preview else ()
    snap.update(
        phase=night.phase, round=night.round_number, set=night.set_number,
        round_index=night.round_index, rounds=night.rules.rounds_per_night,
        played=len(night.history),  # rounds closed: what ending the night settles prizes on
        target=night.target, bell=night.bell_rung,
        traveler=names.get(night.traveler or ""),
        board=tables, standings=rows,
        waiting_for=[t["table"] for t in tables if t["waiting"]],
        offline=[t["table"] for t in tables if not t["online"]],
        prizes=_prizes(awards, names), final=not preview,
        players=[_player(p, night) for p in night.players],
    )
    snap["status"] = status_line(snap)
    return snap


def status_line(snap: dict[str, Any]) -> str:
    """The night in one line, as the board, the host's desk and the pages without JavaScript
    all say it: the round, what it waits for, the tables online, who holds the fuzzy die."""
    phase = snap["phase"]
    status = PHASE_TEXT.get(phase, phase)
    waiting = ", ".join(str(t) for t in snap.get("waiting_for") or [])
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


def _player(p: Player, night: Night) -> dict[str, Any]:
    # a ghost with a score card is someone who left: her seat cannot take a late arrival
    return {"id": p.id, "name": p.name, "ghost": p.ghost, "left": p.ghost and p.id in night.cards}
