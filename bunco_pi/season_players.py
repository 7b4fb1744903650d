"""Who is who across a season: each night's score cards under a stable season player id.

A night record names each player once, by the night's own id (``p1``, ``ghost3``...). The
season needs more: the same person on many nights, and two people who shared a name on one
night kept apart (a player who left and a late arrival seated under the same name, as a host
does to mend a mis-tap, are two cards, never one). So the season keeps its players in
``season-players.json`` beside the records::

    {"format": "bunco-pi-season-players/1", "next": 3,
     "players": {"s1": ["2026-03-06-club/p1", "2026-03-13-club/p4"], "s2": [...]}}

Each card ("<night file's name>/<the night's player id>") belongs to one season player, whose
id never changes. A card not yet in the file is placed by ``assign``: with the season player
who last played under the same name (any case or spacing) if she has no card that night yet,
else as a new player. The host puts right what that guessed wrong, on purpose: ``merge`` two
season players into one, ``split`` a card off into a player of its own. An id is never given
twice (``next`` is the number of the next new one), so one merged away is not reused. Names are
never kept here: a season player is shown under the name on her latest card.

``assign``, ``merge`` and ``split`` are pure; ``read_players`` / ``write_players`` are the file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.rules.names import name_key

PLAYERS_FILE = "season-players.json"
FORMAT = "bunco-pi-season-players/1"
_ID = re.compile(r"s[1-9][0-9]*")

Assignment = dict[str, str]  # card ("<night label>/<player id>") -> season player id
NEXT = ""  # the key under which an assignment keeps the number of the next new id


def card_of(label: str, player: str) -> str:
    return f"{label}/{player}"


def night_of(card: str) -> str:
    return card.rsplit("/", 1)[0]


def assign(cards: Iterable[tuple[str, str]], known: Mapping[str, str]) -> Assignment:
    """Every card a season player: ``cards`` are (card, name) in night order, ``known`` the
    cards already placed. Returns the whole assignment (``known`` included, unchanged)."""
    out: Assignment = dict(known)
    latest: dict[str, tuple[str, str]] = {}  # season id -> (night label, name) of latest card
    nights_of: dict[str, set[str]] = {}
    listed = list(cards)
    for card, sid in out.items():
        if card != NEXT:
            nights_of.setdefault(sid, set()).add(night_of(card))
    next_id = _next(out)
    for card, name in listed:
        night = night_of(card)
        sid = out.get(card)
        if sid is None:
            candidates = [s for s, (_, last) in latest.items()
                          if name_key(last) == name_key(name) and night not in nights_of[s]]
            if candidates:
                sid = max(candidates, key=lambda s: (latest[s][0], -int(s[1:])))
            else:
                sid, next_id = f"s{next_id}", next_id + 1
            out[card] = sid
        nights_of.setdefault(sid, set()).add(night)
        latest[sid] = (night, name)
    out[NEXT] = str(next_id)
    return out


def _next(assignment: Mapping[str, str]) -> int:
    used = [int(sid[1:]) for card, sid in assignment.items()
            if card != NEXT and _ID.fullmatch(sid)]
    kept = assignment.get(NEXT, "")
    return max([max(used, default=0) + 1] + ([int(kept)] if kept.isdigit() else []))


def merge(assignment: Mapping[str, str], keep: str, other: str) -> Assignment:
    """``other``'s cards become ``keep``'s: the host says they are one person."""
    ids = {sid for card, sid in assignment.items() if card != NEXT}
    for sid in (keep, other):
        if sid not in ids:
            raise UserError(f"--merge: no season player {sid!r} (the ids are in the table's "
                            "first column)")
    if keep == other:
        raise UserError(f"--merge: {keep} and {other} are the same player")
    out = {card: keep if sid == other and card != NEXT else sid
           for card, sid in assignment.items()}
    out[NEXT] = str(_next(assignment))  # ``other`` is never given again
    return out


def split(assignment: Mapping[str, str], card: str) -> Assignment:
    """``card`` becomes a season player of its own: the host says it was someone else."""
    if card not in assignment or card == NEXT:
        raise UserError(f"--split: no card {card!r} (a card is NIGHT/PLAYER, as --players "
                        "lists them)")
    number = _next(assignment)
    out = dict(assignment)
    out[card] = f"s{number}"
    out[NEXT] = str(number + 1)
    return out


def read_players(folder: str | Path) -> Assignment:
    """The season's players as kept in ``folder``; nothing yet is an empty assignment."""
    path = Path(folder) / PLAYERS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable list of season players ({exc})") from None
    players = data.get("players") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(players,
                                                                                  dict):
        raise UserError(f"{path}: not a bunco-pi list of season players")
    out: Assignment = {}
    kept_next = data.get("next", 1)
    if isinstance(kept_next, bool) or not isinstance(kept_next, int) or kept_next < 1:
        raise UserError(f"{path}: next must be the number of the next new id (1 or more)")
    out[NEXT] = str(kept_next)
    for sid, cards in players.items():
        if not _ID.fullmatch(str(sid)) or not isinstance(cards, list) \
                or not all(isinstance(c, str) and "/" in c for c in cards):
            raise UserError(f"{path}: player {sid!r}: an id like s1 with a list of "
                            "NIGHT/PLAYER cards, please")
        for card in cards:
            if card in out:
                raise UserError(f"{path}: card {card!r} is with {out[card]} and {sid}")
            out[card] = sid
    return out


def write_players(folder: str | Path, assignment: Mapping[str, str]) -> Path:
    """Keep the assignment in ``folder`` (whole or not at all: a new file moved into place)."""
    path = Path(folder) / PLAYERS_FILE
    players: dict[str, list[str]] = {}
    for card, sid in sorted(assignment.items()):
        if card != NEXT:
            players.setdefault(sid, []).append(card)
    ordered = dict(sorted(players.items(), key=lambda item: int(item[0][1:])))
    text = json.dumps({"format": FORMAT, "next": _next(assignment), "players": ordered},
                      indent=1, ensure_ascii=False)
    tmp = path.with_name(path.name + ".new")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise UserError(f"{path}: cannot keep the season's players: {exc.strerror}") from None
    return path
