"""The console in a hall: find my table by name (case and accents aside), the board a page at
a time for a phone and round and round on a projector, the hall's groups of tables, and a
printable card per table with the night's rules in the group's words."""

from __future__ import annotations

import re

import pytest

from bunco_pi.console.find import MAX_FOUND, Seats, place
from bunco_pi.console.pages import ADVANCE, PAGE, board_page, find_page
from bunco_pi.console.snapshot import console_snapshot
from bunco_pi.console.table_cards import group_words, rules_paragraph, table_cards_html
from bunco_pi.head.groups import TableGroup
from bunco_pi.rules.house import PRESET_NAMES, preset, preset_text
from bunco_pi.rules.names import search_key
from bunco_pi.rules.night import CloseHeldRound, NextRound, Night, Player, RingBell, StartRound, TableEntry
from bunco_pi.rules.table_round import Tally

TABLES = 60
NAMES = ["Zoë Lefèvre", "ZOE Martin", "Chloé  Dubois", "Anne-Marie Straße", "Ｋｉｍ Lee"]


def _night(tables: int = TABLES) -> Night:
    players = [Player(f"p{i}", name) for i, name in enumerate(NAMES)]
    players += [Player(f"p{i}", f"Player {i}") for i in range(len(NAMES), tables * 4 - 1)]
    players.append(Player("ghost1", "Ghost 1", True))
    seating = [tuple(p.id for p in players[t * 4:t * 4 + 4]) for t in range(tables)]
    return Night.start(preset("classic"), players, seating)


def _snap(night: Night | None, tables: int = TABLES, **kw) -> dict:
    return console_snapshot(night, name="hall", table_count=tables,
                            online=set(range(1, tables + 1)), **kw)


def test_search_keys_fold_case_accents_spaces_and_widths() -> None:
    assert search_key("ZOË") == search_key("zoe") == "zoe"
    assert search_key("  Chloé   Dubois ") == "chloe dubois"
    assert search_key("Straße") == "strasse"
    assert search_key("Ｋｉｍ") == "kim"


def test_find_my_table_by_any_part_of_a_name() -> None:
    seats = Seats(_snap(_night().apply(StartRound())))
    found = seats.find("zoe")
    assert [p["name"] for p in found] == ["Zoë Lefèvre", "ZOE Martin"]
    assert found[0]["table"] == 1 and found[0]["seat"] == 1
    assert place(found[0]) == "the head table, seat 1"
    assert [p["name"] for p in seats.find("CHLOE dub")] == ["Chloé  Dubois"]
    assert [p["name"] for p in seats.find("strasse")] == ["Anne-Marie Straße"]
    assert [p["name"] for p in seats.find("kim")] == ["Ｋｉｍ Lee"]
    assert seats.find("nobody") == [] and seats.find("   ") == []
    assert seats.find("ghost") == []  # the empty seats are nobody's
    lots = seats.find("player")
    assert len(lots) == MAX_FOUND
    # a name that starts with it comes before one that only holds it
    assert [p["name"] for p in seats.find("mart")] == ["ZOE Martin"]
    assert seats.find("Player 17")[0]["table"] == 5 and seats.find("Player 17")[0]["seat"] == 2


def test_between_rounds_it_says_the_next_table_too() -> None:
    night = _night(3).apply(StartRound()).apply(TableEntry(2, Tally("point")))
    night = night.apply(RingBell()).apply(CloseHeldRound())
    assert night.phase == "results"
    snap = _snap(night, 3)
    found = Seats(snap).find("Player 6")[0]
    assert found["next_table"] is not None
    assert "next round: " in place(found) and f"seat {found['next_seat']}" in place(found)
    night = night.apply(NextRound())
    again = Seats(_snap(night, 3)).find("Player 6")[0]
    assert (again["table"], again["seat"]) == (found["next_table"], found["next_seat"])


def test_before_the_night_the_roster_is_searched() -> None:
    snap = _snap(None, roster=[{"name": "Zoë", "here": True}, {"name": "Zoey", "here": False}])
    found = Seats(snap).find("ZOE")
    assert [p["name"] for p in found] == ["Zoë"]
    assert "seats are drawn when the night starts" in place(found[0])


def test_the_no_script_find_page_answers_in_the_page() -> None:
    snap = _snap(_night().apply(StartRound()))
    page = find_page(snap, "zoe", Seats(snap).find("zoe"))
    assert '<form class="find" action="/find" method="get"' in page and 'value="zoe"' in page
    assert "Zoë Lefèvre</b>: the head table, seat 1" in page
    none = find_page(snap, "<b>x", [])
    assert "No one called “&lt;b&gt;x”" in none and "<b>x" not in none


def test_the_board_is_paged_for_a_phone_and_advances_on_a_projector() -> None:
    snap = _snap(_night().apply(StartRound()))
    first = board_page(snap)
    assert len(re.findall(r'id="table-\d+"', first)) == PAGE
    assert 'id="table-1"' in first and f'id="table-{PAGE + 1}"' not in first
    assert f"Tables 1–{PAGE} of {TABLES}" in first and 'href="/board?group=3"' in first
    third = board_page(snap, 3)
    assert f'id="table-{2 * PAGE + 1}"' in third and 'id="table-1"' not in third
    assert 'http-equiv="refresh" content="5"' in third  # a phone reloads in place
    projector = board_page(snap, 2, projector=True)
    assert f'content="{ADVANCE}; url=/board?page=3"' in projector
    assert 'class="plain projector"' in projector
    last = board_page(snap, 3, projector=True)
    assert "url=/board?page=1" in last  # round and round
    assert 'id="table-60"' in board_page(snap, 99)  # past the end: the last page
    small = _snap(_night(2).apply(StartRound()), 2)
    assert 'id="pager"' not in board_page(small)  # a living room: no pages


def test_the_status_line_names_a_few_tables_and_counts_a_hall_s_others() -> None:
    snap = _snap(_night().apply(StartRound()))
    assert snap["status"].endswith("playing at table 1, 2, 3, 4, 5, 6, 7, 8 and 52 more")
    assert len(snap["waiting_for"]) == TABLES  # the list itself is whole


def test_groups_of_tables_say_which_are_offline() -> None:
    groups = (TableGroup("door", (1, 2, 3)), TableGroup("stage", (4, 5)))
    snap = console_snapshot(None, name="n", table_count=5, online={1, 3, 4, 5}, groups=groups)
    assert snap["groups"] == [
        {"name": "door", "tables": "1-3", "count": 3, "online": 2, "offline": [2], "down": False},
        {"name": "stage", "tables": "4-5", "count": 2, "online": 2, "offline": [], "down": False}]
    assert snap["groups_down"] == []
    # the door's access point drops, after its boxes had come tonight
    snap = console_snapshot(None, name="n", table_count=5, online={4}, groups=groups,
                            seen={1, 2, 3, 4, 5})
    assert snap["groups"][0]["offline"] == [1, 2, 3] and snap["groups"][0]["down"]
    assert snap["groups_down"] == ["tables 1-3 offline: door?"]


def test_the_rules_paragraph_is_in_the_group_s_words_where_the_file_quotes_them() -> None:
    words = group_words(preset_text("classic"))
    assert words[("round", "target_score")].startswith("When the Head table reaches 21")
    text = rules_paragraph(preset("classic"), preset_text("classic"))
    # "When the Head table reaches 21 points or rolls a BUNCO they ring the bell"
    assert "When the Head table reaches 21 points or rolls a BUNCO they ring the bell." in text
    # a quote that leaves words out ("... (21 points)") is said in the card's own words
    assert "Three of the round's number is a Bunco: 21 points." in text
    assert "\n" not in text


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_preset_has_a_paragraph_that_says_its_numbers(name: str) -> None:
    rules = preset(name)
    text = rules_paragraph(rules, preset_text(name))
    plain = rules_paragraph(rules, "")  # the card's own words only
    assert str(rules.scoring.bunco_points) in plain and str(rules.round.target_score) in plain
    assert len(text) > 200 and text.endswith(".")


def test_a_card_per_table_with_its_number_a_qr_code_and_the_rules() -> None:
    page = table_cards_html(3, "http://bunco-head.local:8080/", preset("classic"),
                            preset_text("classic"), "hall")
    assert page.count('class="table-card"') == 3
    assert '<b>3</b>' in page and "Head table" in page
    assert page.count('src="data:image/svg+xml') == 3
    assert "http://" not in page.replace("http://bunco-head.local:8080/", "")  # nothing else
    assert 'href="/static/table-cards.css"' in page
