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

from bunco_pi.console.find import Seats, place
from bunco_pi.console.snapshot import timer_line
from bunco_pi.season import SeasonNight, points_chart_svg

REFRESH = 5  # seconds between reloads: a score shows within this, and a reload is one small GET
PAGE = 20  # tables on one page of the board: two rows of ten on a projector, readable at the back
ADVANCE = 10  # seconds a projector shows a page of the board before the next
# The season chart's labels are 11 units high: drawn 640 wide and shrunk onto a phone they
# were 6 px; drawn this wide they keep their size there.
PHONE_CHART = {"width": 360, "height": 300}
NAV = (("board", "/board", "Board"), ("find", "/find", "Find"),
       ("standings", "/standings", "Standings"),
       ("host", "/host", "Host"), ("season", "/season", "Season"))


def _layout(title: str, view: str, body: str, *, refresh: bool = True, then: str = "",
            body_class: str = "plain") -> str:
    """A page without script; ``then``: the address it goes on to after ``ADVANCE`` seconds
    (a projector's next page) instead of reloading itself."""
    nav = " ".join(f'<a href="{href}"{" class=on" if key == view else ""}>{label}</a>'
                   for key, href, label in NAV)
    reload = f'<meta http-equiv="refresh" content="{REFRESH}">' if refresh else ""
    if then:
        reload = f'<meta http-equiv="refresh" content="{ADVANCE}; url={escape(then)}">'
    note = (f'<p class="legend">JavaScript is off: this page reloads itself every {REFRESH} s. '
            'With it on, <a href="/">the live page</a> shows each change at once.</p>'
            if refresh else "")
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"{reload}<title>{escape(title)}</title>"
            '<link rel="stylesheet" href="/static/console.css"></head>'
            f'<body class="{body_class}"><nav>{nav}</nav><main>{body}{note}</main></body></html>')


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


def pages_of(table_count: int) -> int:
    return max(1, -(-table_count // PAGE))


def _pager(snap: dict[str, Any], current: int, param: str) -> str:
    count = pages_of(snap["tables"])
    if count == 1:
        return ""
    links = " ".join(
        f'<a href="/board?{param}={n}"{" class=on" if n == current else ""}>'
        f'{(n - 1) * PAGE + 1}–{min(n * PAGE, snap["tables"])}</a>' for n in range(1, count + 1))
    return f'<p class="pager" id="pager">Tables: {links}</p>'


def board_page(snap: dict[str, Any], page: int | None = None, projector: bool = False) -> str:
    """The board; in a hall of more than ``PAGE`` tables, one page of them (``page``, from
    1) with links to the others. ``projector``: big type, and on to the next page after
    ``ADVANCE`` seconds, round and round (``/board?page=N``)."""
    if not snap:
        return _layout("Bunco night", "board", "<h1>Bunco night</h1>" + _waiting(snap))
    count = pages_of(snap["tables"])
    page = min(max(1, page or 1), count)
    low, high = (page - 1) * PAGE + 1, page * PAGE
    rows = [t for t in snap["board"] if low <= t["table"] <= high]
    tables = "".join(_table_card(t, snap["phase"]) for t in rows)
    if not snap["board"]:
        tables = "".join(
            f'<div class="table{"" if n in snap["online"] else " offline"}" id="table-{n}"><h2>'
            f'{"Head table" if n == 1 else f"Table {n}"}<span class="tag'
            f'{"" if n in snap["online"] else " off"}">'
            f'{"online" if n in snap["online"] else "offline"}</span></h2></div>'
            for n in range(low, min(high, snap["tables"]) + 1))
    final = f"<h2>Prizes</h2>{prize_table(snap['prizes'])}" if snap.get("final") else ""
    shown = (f'<p class="legend" id="page-of">Tables {low}–{min(high, snap["tables"])} of '
             f'{snap["tables"]}</p>' if count > 1 else "")
    pager = _pager(snap, page, "page" if projector else "group")
    body = (f'<h1 id="title">Bunco night: {escape(snap["night"])}</h1>'
            f'<p class="status" id="status">{escape(snap["status"])}</p>{shown}'
            + (f'<p class="timer {escape(snap["timer"]["phase"])}" id="timer">'
               f'{escape(timer_line(snap["timer"]))}</p>' if snap.get("timer") else "")
            + f'<div class="tables" id="tables">{tables}</div>{pager}<div id="final">{final}</div>')
    if projector:
        return _layout(f"Bunco night: {snap['night']}", "board", body,
                       then=f"/board?page={page % count + 1}", body_class="plain projector")
    return _layout(f"Bunco night: {snap['night']}", "board", body)


def find_page(snap: dict[str, Any], query: str, found: Sequence[dict[str, Any]]) -> str:
    """Find my table without JavaScript: a form that GETs this page with the name."""
    form = ('<form class="find" action="/find" method="get" role="search">'
            '<label for="find-name">Your name</label> '
            f'<input id="find-name" name="name" value="{escape(query)}" maxlength="40" '
            'autocomplete="off" autocapitalize="words"> <button type="submit">Find</button></form>')
    answer = ""
    if query.strip():
        if found:
            items = "".join(f'<li><b>{escape(p["name"])}</b>: {escape(place(p))}</li>'
                            for p in found)
            answer = f'<ul class="found" id="found">{items}</ul>'
        else:
            answer = (f'<p class="found" id="found">No one called “{escape(query)}” tonight: '
                      "try fewer letters, or ask the host.</p>")
    status = f'<p class="status">{escape(snap["status"])}</p>' if snap else _waiting(snap)
    body = f"<h1>Find my table</h1>{status}{form}{answer}"
    return _layout("Find my table", "find", body, refresh=False)


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

    def __init__(self, draw: Callable[[dict[str, Any]], Any]) -> None:
        self._draw = draw
        self._source: str | None = None
        self._snap: dict[str, Any] = {}
        self._page: Any = ""

    def __call__(self, source: str) -> Any:
        if source is not self._source:  # the server keeps one string per snapshot
            self._snap = json.loads(source or "{}")
            self._page = self._draw(self._snap)
            self._source = source
        return self._page

    def snap(self, source: str) -> dict[str, Any]:
        """The snapshot as read for the last drawing (``source``'s, once drawn)."""
        self(source)
        return self._snap


def register(router: Any, latest: Callable[[], str],
             nights: Callable[[], Sequence[SeasonNight]]) -> None:
    """Add the pages to the console's aiohttp router: ``latest`` gives the snapshot's JSON,
    ``nights`` the season's kept nights (for the season chart drawn at a phone's width)."""
    from aiohttp import web

    drawn_board, drawn_standings = Drawn(board_page), Drawn(standings_page)
    seats = Drawn(Seats)  # the search's index, made once per snapshot

    def html(text: str) -> web.Response:
        return web.Response(text=text, content_type="text/html",
                            headers={"Cache-Control": "no-cache"})

    def number(request: web.Request, key: str) -> int | None:
        text = request.query.get(key, "")
        return int(text) if text.isdigit() and len(text) < 6 else None

    async def board(request: web.Request) -> web.Response:
        projector, group = number(request, "page"), number(request, "group")
        if projector is None and group is None:
            return html(drawn_board(latest()))
        source = latest()
        snap = json.loads(source or "{}")
        return html(board_page(snap, projector or group, projector=projector is not None))

    async def find(request: web.Request) -> web.Response:
        query = request.query.get("name", "")[:40]
        source = latest()
        return html(find_page(seats.snap(source), query, seats(source).find(query)))

    async def find_json(request: web.Request) -> web.Response:
        query = request.query.get("name", "")[:40]
        found = seats(latest()).find(query)
        return web.json_response({"name": query,
                                  "found": [{**p, "place": place(p)} for p in found]},
                                 headers={"Cache-Control": "no-cache"})

    async def standings(request: web.Request) -> web.Response:
        return html(drawn_standings(latest()))

    async def host(request: web.Request) -> web.Response:
        return html(host_page())

    async def phone_chart(request: web.Request) -> web.Response:
        return web.Response(text=points_chart_svg(nights(), **PHONE_CHART),
                            content_type="image/svg+xml")

    router.add_get("/board", board)
    router.add_get("/find", find)
    router.add_get("/api/find", find_json)
    router.add_get("/standings", standings)
    router.add_get("/host", host)
    router.add_get("/season-phone.svg", phone_chart)
