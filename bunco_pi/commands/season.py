"""``bunco-pi season [DIR]``: the season's table across the finished nights the head kept, and
the host's say on who is who (``--merge``, ``--split``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.season import (
    load_nights,
    points_chart_svg,
    render_table,
    season_csv,
    season_names,
    season_table,
)
from bunco_pi.season_players import card_of, merge, read_players, split, write_players

DEFAULT_DIR = "/var/lib/bunco-pi/nights"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "season", help="the season's table across the nights kept (players by season id)",
        description="Add up every finished night record in DIR (the head keeps one per night "
                    "in its data folder's nights/): nights, wins, losses, buncos, baby buncos, "
                    "points, prizes and money per player. Each player has a season id (s1, "
                    "s2...): a new night's card joins the player last seen under the same name, "
                    "unless she already has a card that night. --merge and --split put right "
                    "what that guessed wrong; DIR/season-players.json keeps the result.")
    p.add_argument("dir", nargs="?", default=DEFAULT_DIR, metavar="DIR",
                   help=f"a folder of night records (default {DEFAULT_DIR})")
    p.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    p.add_argument("--chart", metavar="FILE", help="also draw the points over the nights (SVG)")
    p.add_argument("--players", action="store_true",
                   help="list each season player's cards (NIGHT/PLAYER, the name on it)")
    p.add_argument("--merge", nargs=2, metavar=("KEEP", "OTHER"), action="append", default=[],
                   help="season player OTHER is KEEP: her cards become KEEP's (repeatable)")
    p.add_argument("--split", metavar="NIGHT/PLAYER", action="append", default=[],
                   help="this card was someone else: a season player of its own (repeatable)")
    p.set_defaults(func=run)


def _write(path: str, text: str, what: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot write the {what}: {exc.strerror}") from None


def _decide(args: argparse.Namespace) -> None:
    """Apply the host's merges and splits to the kept players, then keep them."""
    nights = load_nights(args.dir)
    assignment = dict(read_players(args.dir))
    for night in nights:
        assignment.update({card_of(night.label, pid): sid for pid, sid in night.ids.items()})
    for keep, other in args.merge:
        assignment = merge(assignment, keep, other)
        print(f"{other} merged into {keep}")
    for card in args.split:
        assignment = split(assignment, card)
        print(f"{card} is now {assignment[card]}")
    path = write_players(args.dir, assignment)
    print(f"season players kept in {path}\n")


def run(args: argparse.Namespace) -> int:
    nights = load_nights(args.dir)
    if not nights:
        raise UserError(f"{args.dir}: no finished night records (*.json) there yet")
    if args.merge or args.split:
        _decide(args)
        nights = load_nights(args.dir)
    rows = season_table(nights)
    print(render_table(rows, len(nights)))
    if args.players:
        names = season_names(nights)
        print("\nCards of each season player:")
        for row in sorted(rows, key=lambda r: int(r.player[1:])):
            cards = [f"{n.label}/{pid} ({_name(n, pid)})" for n in nights
                     for pid, sid in n.ids.items() if sid == row.player]
            print(f"{row.player}  {names[row.player]}: {', '.join(cards)}")
    if args.csv:
        _write(args.csv, season_csv(rows), "season CSV")
        print(f"\nSeason CSV written to {args.csv}")
    if args.chart:
        _write(args.chart, points_chart_svg(nights), "season chart")
        print(f"Season chart written to {args.chart}")
    return 0


def _name(night, pid: str) -> str:
    return next((p["name"] for p in night.record["players"] if p["id"] == pid), pid)
