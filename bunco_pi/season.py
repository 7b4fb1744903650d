"""A season: the group's finished nights side by side, each player under her season id.

``season_table(nights)`` is pure (night records in, rows out); ``load_nights(folder)`` reads the
records the head keeps (``<data dir>/nights/*.json``, named so that file order is night order)
and which season player each card is (``bunco_pi.season_players``: a stable id, never the name,
so two players who share a name on one night stay two, and the host merges or splits players on
purpose); ``season_csv`` / ``read_season_csv`` write and read the table; ``points_chart_svg``
draws each player's points over the nights as an SVG the Pi serves itself.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, field, fields, replace
from html import escape
from pathlib import Path
from typing import Any

from bunco_pi.csvcells import from_cell, text_cell
from bunco_pi.errors import UserError
from bunco_pi.rules.record import FORMAT
from bunco_pi.season_players import PLAYERS_FILE, assign, card_of, read_players, write_players


@dataclass(frozen=True)
class SeasonNight:
    label: str  # the file's name without .json: the date and the night's name
    record: dict[str, Any]
    # the night's player id -> season player id (``load_nights`` fills it in; left empty, the
    # season places the cards itself, as a first look at a folder would)
    ids: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SeasonRow:
    player: str  # the season player's id: s1, s2...
    name: str  # the name on her latest card
    nights: int
    wins: int
    losses: int
    buncos: int
    baby_buncos: int
    points: int
    prizes: int
    money: float


COLUMNS = tuple(f.name for f in fields(SeasonRow))


def load_nights(folder: str | Path) -> list[SeasonNight]:
    """Every finished night record in ``folder``, in file-name order, each card under its
    season player (the folder's ``season-players.json``, and new cards placed as ``assign``
    does); one line on a bad file."""
    root = Path(folder)
    if not root.is_dir():
        raise UserError(f"{root}: no such folder of night records")
    nights = []
    for path in sorted(root.glob("*.json")):
        if path.name == PLAYERS_FILE:
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UserError(f"{path}: not a readable night record ({exc})") from None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise UserError(f"{path}: not a bunco-pi night record")
        if record.get("complete"):
            nights.append(SeasonNight(path.stem, record))
    return with_ids(nights, read_players(root))


def _cards(night: SeasonNight) -> list[tuple[str, str]]:
    names = {p["id"]: p["name"] for p in night.record["players"]}
    return [(card_of(night.label, pid), names.get(pid, pid)) for pid in night.record["cards"]]


def with_ids(nights: Iterable[SeasonNight], known: Mapping[str, str]) -> list[SeasonNight]:
    """``nights`` with every card under a season player: ``known`` first, the rest placed."""
    nights = list(nights)
    assignment = assign((c for n in nights for c in _cards(n)), known)
    return [replace(n, ids={pid: assignment[card_of(n.label, pid)] for pid in n.record["cards"]})
            for n in nights]


def remember_players(folder: str | Path) -> Path | None:
    """Keep every card of ``folder`` under its season player from now on (the head does this
    when it keeps a night, so a later rename or merge never moves an earlier card)."""
    nights = load_nights(folder)
    known = read_players(folder)
    assignment = dict(known)
    for night in nights:
        assignment.update({card_of(night.label, pid): sid for pid, sid in night.ids.items()})
    if assignment == known:
        return None
    return write_players(folder, assignment)


def _placed(nights: Iterable[SeasonNight]) -> list[SeasonNight]:
    nights = list(nights)
    if all(set(n.ids) >= set(n.record["cards"]) for n in nights):
        return nights
    return with_ids(nights, {card_of(n.label, pid): sid for n in nights
                             for pid, sid in n.ids.items()})


def _night_lines(night: SeasonNight) -> dict[str, dict[str, float]]:
    """season id -> this night's figures, for the real players of one record (two cards the
    host merged add up)."""
    record = night.record
    lines: dict[str, dict[str, float]] = {}
    for pid, card in record["cards"].items():
        line = lines.setdefault(night.ids[pid], dict.fromkeys(
            ("wins", "losses", "buncos", "baby_buncos", "points", "prizes", "money"), 0))
        for key in ("wins", "losses", "buncos", "baby_buncos", "points"):
            line[key] += card[key]
    for prize in record["prizes"]:
        sid = night.ids.get(prize.get("player") or "")
        if sid is not None:
            lines[sid]["prizes"] += 1
            if prize.get("cash", True):
                lines[sid]["money"] += prize["amount"]
    return lines


def season_names(nights: Iterable[SeasonNight]) -> dict[str, str]:
    """season id -> the name on her latest card."""
    names: dict[str, str] = {}
    for night in _placed(nights):
        by_id = {p["id"]: p["name"] for p in night.record["players"]}
        for pid in night.record["cards"]:
            names[night.ids[pid]] = by_id.get(pid, pid)
    return names


def season_table(nights: Iterable[SeasonNight]) -> list[SeasonRow]:
    """The season's standings: most wins first, then most points, then name."""
    nights = _placed(nights)
    totals: dict[str, dict[str, float]] = {}
    for night in nights:
        for sid, line in _night_lines(night).items():
            total = totals.setdefault(sid, dict.fromkeys(line, 0) | {"nights": 0})
            total["nights"] += 1
            for key, value in line.items():
                total[key] += value
    names = season_names(nights)
    rows = [SeasonRow(sid, names[sid], int(t["nights"]), int(t["wins"]), int(t["losses"]),
                      int(t["buncos"]), int(t["baby_buncos"]), int(t["points"]),
                      int(t["prizes"]), round(t["money"], 2))
            for sid, t in totals.items()]
    return sorted(rows, key=lambda r: (-r.wins, -r.points, r.name, int(r.player[1:] or 0)))


def season_csv(rows: Sequence[SeasonRow]) -> str:
    """The table as CSV; a name a spreadsheet would run as a formula is written as text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([f"{v:.2f}" if isinstance(v, float) else
                         text_cell(v) if isinstance(v, str) else v for v in astuple(row)])
    return out.getvalue()


def read_season_csv(text: str) -> list[SeasonRow]:
    """A season CSV as ``season_csv`` writes it (one written before season ids, without the
    player column, reads with the ids left empty)."""
    reader = csv.DictReader(io.StringIO(text))
    columns = tuple(reader.fieldnames or ())
    if columns not in (COLUMNS, COLUMNS[1:]):
        raise UserError(f"season CSV: expected the columns {', '.join(COLUMNS)}")
    rows = []
    for line_no, line in enumerate(reader, start=2):
        try:
            rows.append(SeasonRow(from_cell(line.get("player") or ""), from_cell(line["name"]),
                                  *(int(line[c]) for c in COLUMNS[2:-1]),
                                  float(line["money"])))
        except (TypeError, ValueError):
            raise UserError(f"season CSV line {line_no}: not a number where one belongs") from None
    return rows


def render_table(rows: Sequence[SeasonRow], night_count: int) -> str:
    head = f"Season: {night_count} night{'s' if night_count != 1 else ''}, {len(rows)} players"
    widths = max([len("player")] + [len(r.name) for r in rows])
    ids = max([len("id")] + [len(r.player) for r in rows])
    lines = [head, "",
             f"{'id':<{ids}}  {'player':<{widths}}  nights  wins  losses  buncos  babies  "
             "points  prizes   money"]
    for r in rows:
        lines.append(f"{r.player:<{ids}}  {r.name:<{widths}}  {r.nights:>6}  {r.wins:>4}  {r.losses:>6}  "
                     f"{r.buncos:>6}  {r.baby_buncos:>6}  {r.points:>6}  {r.prizes:>6}  "
                     f"{r.money:>6.2f}")
    return "\n".join(lines)


def points_over_nights(nights: Sequence[SeasonNight]) -> dict[str, list[int]]:
    """season id -> the player's season points after each night (flat on the nights she
    missed)."""
    series: dict[str, list[int]] = {}
    for i, night in enumerate(_placed(nights)):
        lines = _night_lines(night)
        for sid in lines:
            series.setdefault(sid, [0] * i)
        for sid, points in series.items():
            line = lines.get(sid)
            before = points[-1] if points else 0
            points.append(before + int(line["points"]) if line else before)
    return series


PALETTE = ("#c0392b", "#2471a3", "#229954", "#b7950b", "#7d3c98", "#ca6f1e", "#17a589", "#566573")


def points_chart_svg(nights: Sequence[SeasonNight], top: int = 8, width: int = 640,
                     height: int = 320) -> str:
    """Season points after each night for the ``top`` players by points, as an SVG."""
    series = points_over_nights(nights)
    names = season_names(nights)
    best = sorted(series, key=lambda n: (-series[n][-1], names[n], n))[:top]
    pad_l, pad_r, pad_t, pad_b = 48, 130, 16, 32
    most = max([series[n][-1] for n in best] + [1])
    count = max(len(nights), 1)

    def x(i: int) -> float:
        return pad_l + (width - pad_l - pad_r) * (i / (count - 1) if count > 1 else 0.5)

    def y(v: float) -> float:
        return pad_t + (height - pad_t - pad_b) * (1 - v / most)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="Season points over the nights" font-size="11" '
             f'font-family="sans-serif">',
             f'<line x1="{pad_l}" y1="{y(0):.1f}" x2="{width - pad_r}" y2="{y(0):.1f}" '
             'stroke="#888"/>',
             f'<text x="4" y="{y(most) + 4:.1f}">{most}</text>',
             f'<text x="4" y="{y(0):.1f}">0</text>',
             f'<text x="{pad_l}" y="{height - 8}">night 1</text>',
             f'<text x="{width - pad_r}" y="{height - 8}" text-anchor="end">night {count}</text>']
    for k, sid in enumerate(best):
        colour = PALETTE[k % len(PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(series[sid]))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{points}"><title>{escape(names[sid])}</title></polyline>')
        parts.append(f'<text x="{width - pad_r + 6}" y="{pad_t + 14 * k + 10}" fill="{colour}">'
                     f'{escape(names[sid])} {series[sid][-1]}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
