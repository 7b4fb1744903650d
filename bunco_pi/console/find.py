"""Find my table: where each player sits, by name, from the snapshot every guest already sees.

A guest at the door types part of her name; case, accents and extra spaces do not matter
(``names.search_key``). The answer is her table and seat this round and, between rounds, the
table the next round seats her at. Nothing here is more than the board shows to everyone.
Pure: a snapshot in, an index out; the server builds it once per snapshot.
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.names import search_key

MAX_FOUND = 20  # a phone's screen of answers; "Ann" in a hall of 2,000 needs a second letter


class Seats:
    """Every real player of a snapshot with where she sits, ready to be searched."""

    def __init__(self, snap: dict[str, Any]) -> None:
        where: dict[str, dict[str, Any]] = {}
        for row in snap.get("board") or ():
            for seat, s in enumerate(row["seats"], start=1):
                if not s["ghost"]:
                    where[s["id"]] = {"name": s["name"], "table": row["table"], "seat": seat,
                                      "next_table": None}
            for seat, s in enumerate(row.get("next_seats") or (), start=1):
                if not s["ghost"] and s["id"] in where:
                    where[s["id"]].update(next_table=row["table"], next_seat=seat)
        if not where:  # before the night: the roster, seats not drawn yet
            for i, r in enumerate(snap.get("roster") or ()):
                if r.get("here", True):
                    where[f"roster{i}"] = {"name": r["name"], "table": None, "seat": None,
                                           "next_table": None}
        self.players = sorted(where.values(), key=lambda p: search_key(p["name"]))
        self._keys = [search_key(p["name"]) for p in self.players]

    def find(self, query: str) -> list[dict[str, Any]]:
        """The players whose name holds ``query``; those whose name or a word of it starts
        with it first. At most ``MAX_FOUND``."""
        key = search_key(query)
        if not key:
            return []
        first, then = [], []
        for name, player in zip(self._keys, self.players, strict=True):
            at = name.find(key)
            if at == 0 or (at > 0 and name[at - 1] == " "):
                first.append(player)
            elif at > 0:
                then.append(player)
            if len(first) >= MAX_FOUND:
                break
        return (first + then)[:MAX_FOUND]


def place(player: dict[str, Any]) -> str:
    """Where she goes, in words: "table 12, seat 3", and the next round's table if drawn."""
    if player["table"] is None:
        return "checked in: the seats are drawn when the night starts"
    here = "the head table" if player["table"] == 1 else f"table {player['table']}"
    text = f"{here}, seat {player['seat']}"
    if player["next_table"] is not None:
        nxt = "the head table" if player["next_table"] == 1 else f"table {player['next_table']}"
        text += f" · next round: {nxt}, seat {player['next_seat']}"
    return text
