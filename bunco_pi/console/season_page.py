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
    # short headers, as the standings have, so nine columns fit a phone's width
    table = (f'<table id="season"><thead><tr><th>player</th><th title="nights">n</th>'
             f'<th title="wins">W</th><th title="losses">L</th><th title="buncos">B</th>'
             f'<th title="baby buncos">bb</th><th title="points">pts</th>'
             f'<th title="prizes">prz</th><th title="money">$</th></tr></thead>'
             f"<tbody>{body}</tbody></table>"
             '<p class="legend">n nights · W wins · L losses · B buncos · bb baby buncos · '
             "pts points · prz prizes won · $ money won</p>") if rows else \
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
            '<picture><source media="(max-width: 599px)" srcset="/season-phone.svg">'
            '<img class="chart" src="/season.svg" alt="season points after each night"></picture>'
            "</main></body></html>")
