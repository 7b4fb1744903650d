"""The season page: the table across nights, its CSV and the points chart, as plain HTML."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from bunco_pi.season import SeasonNight, season_table


def season_html(nights: Sequence[SeasonNight]) -> str:
    rows = season_table(nights)
    body = "".join(
        f'<tr><td><bdi>{escape(r.name)}</bdi> <small class="pid">{escape(r.player)}</small></td>'
        f"<td>{r.nights}</td><td>{r.wins}</td><td>{r.losses}</td>"
        f"<td>{r.buncos}</td><td>{r.baby_buncos}</td><td>{r.points}</td><td>{r.prizes}</td>"
        f"<td>{r.money:.2f}</td></tr>" for r in rows)
    table = (f'<table id="season"><thead><tr><th>player</th><th>nights</th><th>wins</th>'
             f"<th>losses</th><th>buncos</th><th>baby</th><th>points</th><th>prizes</th>"
             f"<th>money</th></tr></thead><tbody>{body}</tbody></table>") if rows else \
        "<p>No finished nights yet: the head keeps each night here when its prizes are settled.</p>"
    return ("<!doctype html><html lang=en><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>Bunco season</title><link rel="stylesheet" href="/static/console.css">'
            '<body><nav><a href="/">Board</a> <a href="/#standings">Standings</a> '
            '<a href="/#host">Host</a> <a href="/season" class="on">Season</a></nav>'
            f"<main><h1>Season</h1><p>{len(nights)} night{'s' if len(nights) != 1 else ''}. "
            'Each player keeps a season id (s1, s2...): a night\u2019s card joins the player last '
            "seen under the same name, unless she has a card that night already, so two "
            "players who share a name on one night stay two. The host merges or splits players "
            'with <code>bunco-pi season --merge</code> / <code>--split</code>. '
            '<a href="/season.csv">CSV</a></p>'
            f'<div class="scroll">{table}</div><h2>Points over the nights</h2>'
            '<img class="chart" src="/season.svg" alt="season points after each night">'
            "</main></body></html>")
