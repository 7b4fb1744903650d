"""The board and the standings drawn on the Pi, for a browser with JavaScript off; and the
season chart drawn at a phone's width.

The live page (static/index.html) draws everything from the event stream with a script; a
phone with JavaScript off would wait on "Connecting..." for ever. Its ``<noscript>`` sends such
a browser here instead: the same snapshot the stream carries, as plain HTML that reloads itself
every ``REFRESH`` seconds. The host's desk needs the script (each action carries the session's
CSRF token), so its page here says so instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from bunco_pi.console.snapshot import timer_line
from bunco_pi.season import SeasonNight, points_chart_svg

REFRESH = 5  # seconds between reloads: a score shows within this, and a reload is one small GET
# The season chart's labels are 11 units high: drawn 640 wide and shrunk onto a phone they
# were 6 px; drawn this wide they keep their size there.
PHONE_CHART = {"width": 360, "height": 300}
NAV = (("board", "/board", "Board"), ("standings", "/standings", "Standings"),
       ("host", "/host", "Host"), ("season", "/season", "Season"))


def _layout(title: str, view: str, body: str, *, refresh: bool = True) -> str:
    nav = " ".join(f'<a href="{href}"{" class=on" if key == view else ""}>{label}</a>'
                   for key, href, label in NAV)
    reload = f'<meta http-equiv="refresh" content="{REFRESH}">' if refresh else ""
    note = (f'<p class="legend">JavaScript is off: this page reloads itself every {REFRESH} s. '
            'With it on, <a href="/">the live page</a> shows each change at once.</p>'
            if refresh else "")
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"{reload}<title>{escape(title)}</title>"
            '<link rel="stylesheet" href="/static/console.css"></head>'
            f'<body class="plain"><nav>{nav}</nav><main>{body}{note}</main></body></html>')


def _cells(*values: Any, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return "".join(f"<td{attr}>{escape(str(v))}</td>" for v in values)


def _waiting(snap: dict[str, Any]) -> str:
    return '<p class="status">Waiting for the head…</p>' if not snap else ""


def _money(prize: dict[str, Any]) -> str:
    return f"${prize['amount']:.2f}"


def prize_table(prizes: Sequence[dict[str, Any]]) -> str:
    rows = "".join(f"<tr>{_cells(p['name'], p['winner'])}"
                   f"{_cells(_money(p) if p.get('cash') else '', cls='money')}</tr>"
                   for p in prizes)
    return f'<table class="prize-list"><tbody>{rows}</tbody></table>'


def _table_card(t: dict[str, Any], phase: str) -> str:
    tags = []
    if not t["online"]:
        tags.append('<span class="tag off">offline</span>')
    if t["waiting"]:
        tags.append('<span class="tag wait">playing</span>')
    if t["ended_round"]:
        tags.append('<span class="tag bell">rang the bell</span>')
    seats = "".join(
        f'<li class="{"roller " if s["name"] == t["roller"] else ""}{"ghost" if s["ghost"] else ""}">'
        f'{i}. {escape(s["name"])}{" ◀ rolls" if s["name"] == t["roller"] else ""}</li>'
        for i, s in enumerate(t["seats"], start=1))
    score = t["last_score"] if "last_score" in t and phase not in ("playing", "finishing") \
        else t["score"]
    classes = "table" + (" waiting" if t["waiting"] else "") + ("" if t["online"] else " offline")
    name = "Head table" if t["table"] == 1 else f"Table {t['table']}"
    return (f'<div class="{classes}" id="table-{t["table"]}"><h2>{name}<span>{"".join(tags)}'
            f'</span></h2><div class="score" data-score="{score[0]}-{score[1]}">'
            f'{score[0]} – {score[1]}</div><ul class="seats">{seats}</ul></div>')


def board_page(snap: dict[str, Any]) -> str:
    if not snap:
        return _layout("Bunco night", "board", "<h1>Bunco night</h1>" + _waiting(snap))
    tables = "".join(_table_card(t, snap["phase"]) for t in snap["board"])
    if not snap["board"]:
        tables = "".join(
            f'<div class="table{"" if n in snap["online"] else " offline"}" id="table-{n}"><h2>'
            f'{"Head table" if n == 1 else f"Table {n}"}<span class="tag'
            f'{"" if n in snap["online"] else " off"}">'
            f'{"online" if n in snap["online"] else "offline"}</span></h2></div>'
            for n in range(1, snap["tables"] + 1))
    final = f"<h2>Prizes</h2>{prize_table(snap['prizes'])}" if snap.get("final") else ""
    body = (f'<h1 id="title">Bunco night: {escape(snap["night"])}</h1>'
            f'<p class="status" id="status">{escape(snap["status"])}</p>'
            + (f'<p class="timer {escape(snap["timer"]["phase"])}" id="timer">'
               f'{escape(timer_line(snap["timer"]))}</p>' if snap.get("timer") else "")
            + f'<div class="tables" id="tables">{tables}</div><div id="final">{final}</div>')
    return _layout(f"Bunco night: {snap['night']}", "board", body)


def standings_page(snap: dict[str, Any]) -> str:
    if not snap:
        return _layout("Standings", "standings", "<h1>Standings</h1>" + _waiting(snap))
    rows = "".join(
        f"<tr>{_cells(r['name'] + (' (fuzzy die)' if r['traveler'] else ''), cls='name')}"
        f"{_cells(r['wins'], r['losses'], r['buncos'], r['baby_buncos'], r['points'])}"
        f"{_cells(', '.join(r['prizes']), cls='prizes')}</tr>"
        for r in snap["standings"])
    note = "Final standings." if snap.get("final") else (
        "As they stand now; the prizes column is what each player would take if the night "
        "ended now.")
    final = f"<h2>Prizes</h2>{prize_table(snap['prizes'])}" if snap.get("final") else ""
    body = (f'<h1>Standings</h1><p class="status" id="status">{escape(snap["status"])}</p>'
            f"<p>{note}</p>"
            '<table id="standings"><thead><tr><th>player</th><th title="wins">W</th>'
            '<th title="losses">L</th><th title="buncos">B</th><th title="baby buncos">bb</th>'
            f'<th title="points">pts</th><th>prizes</th></tr></thead><tbody>{rows}</tbody></table>'
            '<p class="legend">W wins · L losses · B buncos · bb baby buncos · pts points</p>'
            f"{final}")
    return _layout("Standings", "standings", body)


def host_page() -> str:
    body = ("<h1>Host</h1><p>The host&#39;s desk needs JavaScript: each of its actions carries "
            "the session&#39;s token, which a script adds. Turn JavaScript on for this site, "
            'then open <a href="/#host">the desk</a>. The <a href="/board">board</a> and the '
            '<a href="/standings">standings</a> work without it.</p>')
    return _layout("Host", "host", body, refresh=False)


class Drawn:
    """A page drawn once per snapshot: every reload between two changes of the night gets the
    same string, so a room of phones reloading every few seconds costs the Pi one drawing per
    change, not one per reload."""

    def __init__(self, draw: Callable[[dict[str, Any]], str]) -> None:
        self._draw = draw
        self._source: str | None = None
        self._page = ""

    def __call__(self, source: str) -> str:
        if source is not self._source:  # the server keeps one string per snapshot
            self._page = self._draw(json.loads(source or "{}"))
            self._source = source
        return self._page


def register(router: Any, latest: Callable[[], str],
             nights: Callable[[], Sequence[SeasonNight]]) -> None:
    """Add the pages to the console's aiohttp router: ``latest`` gives the snapshot's JSON,
    ``nights`` the season's kept nights (for the season chart drawn at a phone's width)."""
    from aiohttp import web

    drawn_board, drawn_standings = Drawn(board_page), Drawn(standings_page)

    def html(text: str) -> web.Response:
        return web.Response(text=text, content_type="text/html",
                            headers={"Cache-Control": "no-cache"})

    async def board(request: web.Request) -> web.Response:
        return html(drawn_board(latest()))

    async def standings(request: web.Request) -> web.Response:
        return html(drawn_standings(latest()))

    async def host(request: web.Request) -> web.Response:
        return html(host_page())

    async def phone_chart(request: web.Request) -> web.Response:
        return web.Response(text=points_chart_svg(nights(), **PHONE_CHART),
                            content_type="image/svg+xml")

    router.add_get("/board", board)
    router.add_get("/standings", standings)
    router.add_get("/host", host)
    router.add_get("/season-phone.svg", phone_chart)
