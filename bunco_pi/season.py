"""A season: the group's finished nights side by side, players matched across nights by name.

``season_table(nights)`` is pure (night records in, rows out); ``load_nights(folder)`` reads the
records the head keeps (``<data dir>/nights/*.json``, named so that file order is night order);
``season_csv`` / ``read_season_csv`` write and read the table; ``points_chart_svg`` draws each
player's points over the nights as an SVG the Pi serves itself.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields
from html import escape
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.rules.record import FORMAT


@dataclass(frozen=True)
class SeasonNight:
    label: str  # the file's name without .json: the date and the night's name
    record: dict[str, Any]


@dataclass(frozen=True)
class SeasonRow:
    name: str
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
    """Every finished night record in ``folder``, in file-name order; one line on a bad file."""
    root = Path(folder)
    if not root.is_dir():
        raise UserError(f"{root}: no such folder of night records")
    nights = []
    for path in sorted(root.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UserError(f"{path}: not a readable night record ({exc})") from None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise UserError(f"{path}: not a bunco-pi night record")
        if record.get("complete"):
            nights.append(SeasonNight(path.stem, record))
    return nights


def _night_lines(record: dict[str, Any]) -> dict[str, dict[str, float]]:
    """name -> this night's figures, for the real players of one record."""
    names = {p["id"]: p["name"] for p in record["players"]}
    lines: dict[str, dict[str, float]] = {}
    for pid, card in record["cards"].items():
        lines[names[pid]] = {"wins": card["wins"], "losses": card["losses"],
                             "buncos": card["buncos"], "baby_buncos": card["baby_buncos"],
                             "points": card["points"], "prizes": 0, "money": 0.0}
    for prize in record["prizes"]:
        line = lines.get(names.get(prize["player"], ""))
        if line is not None:
            line["prizes"] += 1
            if prize.get("cash", True):
                line["money"] += prize["amount"]
    return lines


def season_table(nights: Iterable[SeasonNight]) -> list[SeasonRow]:
    """The season's standings: most wins first, then most points, then name."""
    totals: dict[str, dict[str, float]] = {}
    for night in nights:
        for name, line in _night_lines(night.record).items():
            total = totals.setdefault(name, dict.fromkeys(line, 0) | {"nights": 0})
            total["nights"] += 1
            for key, value in line.items():
                total[key] += value
    rows = [SeasonRow(name, int(t["nights"]), int(t["wins"]), int(t["losses"]), int(t["buncos"]),
                      int(t["baby_buncos"]), int(t["points"]), int(t["prizes"]),
                      round(t["money"], 2))
            for name, t in totals.items()]
    return sorted(rows, key=lambda r: (-r.wins, -r.points, r.name))


def season_csv(rows: Sequence[SeasonRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([f"{v:.2f}" if isinstance(v, float) else v for v in astuple(row)])
    return out.getvalue()


def read_season_csv(text: str) -> list[SeasonRow]:
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise UserError(f"season CSV: expected the columns {', '.join(COLUMNS)}")
    rows = []
    for line_no, line in enumerate(reader, start=2):
        try:
            rows.append(SeasonRow(line["name"], *(int(line[c]) for c in COLUMNS[1:-1]),
                                  float(line["money"])))
        except (TypeError, ValueError):
            raise UserError(f"season CSV line {line_no}: not a number where one belongs") from None
    return rows


def render_table(rows: Sequence[SeasonRow], night_count: int) -> str:
    head = f"Season: {night_count} night{'s' if night_count != 1 else ''}, {len(rows)} players"
    widths = max([len("player")] + [len(r.name) for r in rows])
    lines = [head, "",
             f"{'player':<{widths}}  nights  wins  losses  buncos  babies  points  prizes   money"]
    for r in rows:
        lines.append(f"{r.name:<{widths}}  {r.nights:>6}  {r.wins:>4}  {r.losses:>6}  "
                     f"{r.buncos:>6}  {r.baby_buncos:>6}  {r.points:>6}  {r.prizes:>6}  "
                     f"{r.money:>6.2f}")
    return "\n".join(lines)


def points_over_nights(nights: Sequence[SeasonNight]) -> dict[str, list[int]]:
    """name -> the player's season points after each night (flat on the nights she missed)."""
    series: dict[str, list[int]] = {}
    for i, night in enumerate(nights):
        lines = _night_lines(night.record)
        for name in lines:
            series.setdefault(name, [0] * i)
        for name, points in series.items():
            line = lines.get(name)
            before = points[-1] if points else 0
            points.append(before + int(line["points"]) if line else before)
    return series


PALETTE = ("#c0392b", "#2471a3", "#229954", "#b7950b", "#7d3c98", "#ca6f1e", "#17a589", "#566573")


def points_chart_svg(nights: Sequence[SeasonNight], top: int = 8, width: int = 640,
                     height: int = 320) -> str:
    """Season points after each night for the ``top`` players by points, as an SVG."""
    series = points_over_nights(nights)
    best = sorted(series, key=lambda n: (-series[n][-1], n))[:top]
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
    for k, name in enumerate(best):
        colour = PALETTE[k % len(PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(series[name]))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{points}"><title>{escape(name)}</title></polyline>')
        parts.append(f'<text x="{width - pad_r + 6}" y="{pad_t + 14 * k + 10}" fill="{colour}">'
                     f'{escape(name)} {series[name][-1]}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
