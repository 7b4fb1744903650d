"""``bunco-pi season [DIR]``: the season's table across the finished nights the head kept."""

from __future__ import annotations

import argparse
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.season import load_nights, points_chart_svg, render_table, season_csv, season_table

DEFAULT_DIR = "/var/lib/bunco-pi/nights"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "season", help="the season's table across the nights kept (players matched by name)",
        description="Add up every finished night record in DIR (the head keeps one per night "
                    "in its data folder's nights/): nights, wins, losses, buncos, baby buncos, "
                    "points, prizes and money per player.")
    p.add_argument("dir", nargs="?", default=DEFAULT_DIR, metavar="DIR",
                   help=f"a folder of night records (default {DEFAULT_DIR})")
    p.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    p.add_argument("--chart", metavar="FILE", help="also draw the points over the nights (SVG)")
    p.set_defaults(func=run)


def _write(path: str, text: str, what: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot write the {what}: {exc.strerror}") from None


def run(args: argparse.Namespace) -> int:
    nights = load_nights(args.dir)
    if not nights:
        raise UserError(f"{args.dir}: no finished night records (*.json) there yet")
    rows = season_table(nights)
    print(render_table(rows, len(nights)))
    if args.csv:
        _write(args.csv, season_csv(rows), "season CSV")
        print(f"\nSeason CSV written to {args.csv}")
    if args.chart:
        _write(args.chart, points_chart_svg(nights), "season chart")
        print(f"Season chart written to {args.chart}")
    return 0
