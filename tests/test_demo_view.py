"""The demo's terminal view (pure text) and its short night (pure rules text)."""

from __future__ import annotations

import pytest

from bunco_pi.commands.demo_view import (
    compact_screen,
    fits_oled,
    oled_screen,
    table_line,
)
from bunco_pi.rules.house import PRESET_NAMES, parse_rules, preset_text
from bunco_pi.sim.players import make_players
from bunco_pi.sim.short_night import short_night_rules

HEADLINE = "bunco-pi demo  Set 1 round 2, target 2: playing  *** BELL: the round is over, " \
           "rollers finish their turns ***"


def _views(tables: int) -> dict[int, dict]:
    """Views as the head sends them mid-round, with the longest names the demo seats."""
    names = sorted((p.name for p in make_players(tables * 4)), key=len, reverse=True)
    return {n: {"phase": "playing", "table": n, "seats": names[4 * (n - 1): 4 * n],
                "score": [121, 7], "seat_scores": [60, 3, 61, 4], "roller_seat": 3,
                "table_phase": "rolling", "done": False}
            for n in range(1, tables + 1)}


@pytest.mark.parametrize("tables", range(3, 9))
@pytest.mark.parametrize("team_play", [True, False])
def test_every_table_fits_an_80x24_terminal(tables, team_play):
    notes = ["Watch it in a browser: http://bunco-head.local:8080/", "offline: table-2"]
    assert not fits_oled(tables, 80, 24, reserved=1 + len(notes))
    lines = compact_screen(HEADLINE, _views(tables), tables, 80, 24, notes, team_play)
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
    body = lines[3:]
    assert [line.split()[0] for line in body] == [f"T{n}" for n in range(1, tables + 1)]
    for n, line in enumerate(body, start=1):
        seats = _views(tables)[n]["seats"]
        assert seats[2][:7] in line  # the roller (seat 3) is named
        if team_play:
            assert "121 : 7" in line
        else:
            assert "60" in line and "61" in line


def test_a_small_terminal_says_how_many_tables_it_left_out():
    lines = compact_screen("head", _views(8), 8, 40, 6)
    assert len(lines) == 6 and all(len(line) <= 40 for line in lines)
    assert lines[-1].startswith("(+4 more tables")


def test_a_big_terminal_gets_the_oled_pictures():
    assert fits_oled(3, 200, 40) and fits_oled(6, 200, 70)
    assert not fits_oled(6, 200, 40) and not fits_oled(1, 60, 40)
    frame = ["x" * 64] * 32
    lines = oled_screen("head", [frame] * 3, 200)
    assert len(lines) == 1 + 1 + 32 and all(len(line) == 200 for line in lines)
    assert lines[1].split() == ["table", "1", "table", "2", "table", "3"]


def test_a_table_line_follows_the_round():
    view = _views(3)[1]
    assert "rolls:" in table_line(1, view)
    done = {**view, "done": True}
    assert table_line(1, done).endswith("done")
    result = {**view, "phase": "results", "result": {"winners": view["seats"][:2],
                                                     "score": [21, 9]}}
    assert "21 : 9" in table_line(1, result) and "won:" in table_line(1, result)
    assert "waiting for players" in table_line(2, {"phase": "lobby"})


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_the_short_night_is_the_same_rules_with_three_rounds(name):
    full = parse_rules(preset_text(name))
    short = parse_rules(short_night_rules(preset_text(name)))
    assert short.rounds_per_night == 3 and short.night.sets == 1
    assert short.night.targets == full.night.targets[:3]
    assert short.night.break_after_sets == ()
    assert (short.scoring, short.round, short.rotation, short.prizes) == \
        (full.scoring, full.round, full.rotation, full.prizes)


def test_the_short_night_of_a_house_file_without_a_night_section():
    text = preset_text("classic")
    start = text.index("[night]")
    end = text.index("[round]")
    without = text[:start] + text[end:]
    multi_line = text[:start] + "[night]\ntargets = [\n  2, 3,\n  4, 5,\n]\nsets = 2\n" + text[end:]
    assert parse_rules(short_night_rules(without)).night.targets == (1, 2, 3)
    assert parse_rules(short_night_rules(multi_line)).night.targets == (2, 3, 4)
