"""The board and standings the Pi draws for a browser with JavaScript off: the same snapshot
the live page reads, as escaped HTML that reloads itself, with no inline style or script (the
console's content policy would refuse them)."""

import json
import re

from bunco_pi.console.pages import REFRESH, Drawn, board_page, host_page, standings_page
from bunco_pi.console.snapshot import console_snapshot, status_line
from bunco_pi.rules.house import preset
from bunco_pi.rules.night import Night, Player, StartRound, TableEntry
from bunco_pi.rules.table_round import Tally
from bunco_pi.sim.players import simulate_night

RULES = preset("classic")
HOSTILE = '<img src=x onerror=alert(1)>"Zoë'
ESCAPED = "&lt;img src=x onerror=alert(1)&gt;&quot;Zoë"
PLAYERS = [Player("p1", HOSTILE)] + [Player(f"p{i}", f"P{i}") for i in range(2, 8)] + \
    [Player("ghost1", "Ghost 1", True)]
SEATING = [("p1", "p2", "p3", "p4"), ("p5", "p6", "p7", "ghost1")]


def _snap(night):
    return console_snapshot(night, name="club", table_count=2, online={1, 2})


def _no_inline_code(page: str) -> None:
    assert "<script" not in page and "<style" not in page and " style=" not in page
    assert not re.search(r"\son\w+=", page.replace(ESCAPED, ""))


def test_the_board_is_the_snapshot_drawn_escaped_and_reloading() -> None:
    night = Night.start(RULES, PLAYERS, SEATING).apply(StartRound())
    night = night.apply(TableEntry(2, Tally("point")))
    page = board_page(_snap(night))
    assert f'<meta http-equiv="refresh" content="{REFRESH}">' in page
    assert HOSTILE not in page and ESCAPED in page
    assert 'data-score="1-0"' in page and 'data-score="0-0"' in page
    assert "Set 1, round 1 (target 1) · playing at table 1, 2" in page
    assert 'class="ghost">4. Ghost 1' in page and "Connecting" not in page
    _no_inline_code(page)


def test_the_standings_and_the_prizes_at_the_end() -> None:
    sim = simulate_night(RULES, 10, seed=2)
    snap = console_snapshot(sim.night, name="club", table_count=3, online={1, 2, 3})
    page = standings_page(snap)
    assert page.count("<tr><td class=\"name\">") == len(snap["standings"])
    assert "Final standings." in page and "the night is over" in snap["status"]
    assert snap["played"] == RULES.rounds_per_night  # what ending the night settles prizes on
    cash = [p for p in snap["prizes"] if p["cash"]]
    assert cash and all(f'<td class="money">${p["amount"]:.2f}</td>' in page for p in cash)
    assert page.count('<td class="money">') == len(snap["prizes"])
    _no_inline_code(page)
    assert "<h2>Prizes</h2>" in board_page(snap)


def test_before_the_head_has_said_anything_the_pages_wait_and_the_host_page_explains() -> None:
    assert "Waiting for the head" in board_page({})
    assert "Waiting for the head" in standings_page({})
    host = host_page()
    assert "needs JavaScript" in host and 'href="/#host"' in host and "refresh" not in host


def test_the_status_line_says_where_the_night_is() -> None:
    lobby = console_snapshot(None, name="club", table_count=3, online={1, 3})
    assert status_line(lobby) == "waiting for tables · online: 2 of 3" == lobby["status"]
    night = Night.start(RULES, PLAYERS, SEATING)
    assert _snap(night)["status"] == "Set 1, round 1 (target 1) · ready: the bell starts the round"


def test_a_page_is_drawn_once_per_snapshot_however_often_it_is_reloaded() -> None:
    drawn: list[dict] = []
    page = Drawn(lambda snap: drawn.append(snap) or f"page {len(drawn)}")
    first = json.dumps({"n": 1})
    assert page(first) == page(first) == "page 1" and len(drawn) == 1
    assert page(json.dumps({"n": 2})) == "page 2" and drawn[-1] == {"n": 2}
