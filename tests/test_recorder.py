"""The record file of a standalone table: after each round, at exit, and across a restart."""

from __future__ import annotations

import json
import time

from luma.core.device import dummy

from bunco_pi.hardware.buttons import DEFAULT_DEBOUNCE as DEBOUNCE
from bunco_pi.hardware.pinmap import default_button_pins
from bunco_pi.rules.house import preset
from bunco_pi.rules.record import replay
from bunco_pi.table.box import TableBox
from bunco_pi.table.config import TableConfig
from bunco_pi.table.recorder import record_writer
from bunco_pi.table.standalone_link import StandaloneLink

PLAYERS = ("Ann", "Bea", "Cat", "Dot")
RULES = preset("classic")


def run_box(factory, tmp_path, presses):
    link = StandaloneLink(RULES, PLAYERS)
    write = record_writer(tmp_path / "night.json", link)
    box = TableBox(TableConfig(players=PLAYERS), RULES, link, tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), on_round_over=write)
    box.start()
    for role in presses:
        press(factory, box, role)
    return box, link, write


def press(factory, box, role):
    """A real-time press: each edge outlasts the debounce window, as a finger's does."""
    pin = factory.pin(default_button_pins()[role])
    for edge in (pin.drive_low, pin.drive_high):
        edge()
        time.sleep(DEBOUNCE * 2)
        assert box.node.sync()


def read(tmp_path):
    return json.loads((tmp_path / "night.json").read_text())


def test_record_after_each_round_and_at_exit_survives_a_restart(mock_factory, tmp_path):
    # Round 1 (target 1): Ann +1, pass, Bea BUNCO -> the head table's round is over.
    box, link, write = run_box(mock_factory, tmp_path, ["pass", "point", "pass", "bunco"])
    record = read(tmp_path)
    assert [r["round"] for r in record["rounds"]] == [1]
    assert record["rounds"][0]["tables"][0]["score"] == [1, 21]
    # Round 2 starts; a point is scored and the box stops mid-round.
    press(mock_factory, box, "pass")
    press(mock_factory, box, "point")
    box.stop()
    write(box.node)
    record = read(tmp_path)
    assert record["log"][-1] == ["tally", 1, "point"]
    assert replay(record, RULES).table(1).team_scores == (1, 0)

    # Power back: the same journal gives the same night, and play goes on.
    mock_factory.reset()
    box, link, write = run_box(mock_factory, tmp_path, ["three"])
    try:
        assert box.node.mode == "playing"
        assert box.node.book.state.team_scores == (6, 0)
        assert [r["round"] for r in link.record()["rounds"]] == [1]
    finally:
        box.stop()
    write(box.node)
    record = read(tmp_path)
    assert record["log"][-2:] == [["tally", 1, "point"], ["tally", 1, "three"]]


def test_a_standalone_table_with_an_empty_seat_plays_a_ghost_and_records_its_own_number(
        mock_factory, tmp_path):
    """Three players at table 3: seat 4 is a ghost whose points count for Bea's team (000:
    "If there are not enough players, a ghost player can be substituted"), and the record
    names table 3 throughout and passes the audit."""
    from bunco_pi.rules.audit import audit_record

    players = ("Ann", "Bea", "Cat")
    link = StandaloneLink(RULES, players, table=3)
    write = record_writer(tmp_path / "night.json", link)
    box = TableBox(TableConfig(number=3, players=players), RULES, link, tmp_path / "j.db",
                   device=dummy(width=128, height=64, mode="1"), on_round_over=write)
    box.start()
    # Round 1 (target 1): Ann +1, pass, Bea +1, pass, Cat passes, the ghost's BUNCO ends it.
    for role in ["pass", "point", "pass", "point", "pass", "pass", "bunco"]:
        press(mock_factory, box, role)
    box.stop()
    write(box.node)
    record = read(tmp_path)
    assert {"id": "Ghost 1", "name": "Ghost 1", "ghost": True} in record["players"]
    assert "Ghost 1" not in record["cards"]
    table = record["rounds"][0]["tables"][0]
    assert table["table"] == 3 and table["seats"] == ["Ann", "Bea", "Cat", "Ghost 1"]
    assert table["score"] == [1, 22] and table["winners"] == ["Bea", "Ghost 1"]
    assert record["table_numbers"] == [3]
    assert ["tally", 3, "bunco"] in record["log"]
    assert {m["from_table"] for m in record["rounds"][0]["moves"]} == {3}
    # classic: "her teammate gets the Bunco point"
    assert record["cards"]["Bea"]["buncos"] == 1
    assert audit_record(record, RULES) == []
    assert replay(record, RULES).history[0].tables[0].team_scores == (1, 22)


def test_a_standalone_table_needs_one_to_four_different_players():
    import pytest

    with pytest.raises(ValueError, match="1 to 4 different players"):
        StandaloneLink(RULES, ())
    with pytest.raises(ValueError, match="1 to 4 different players"):
        StandaloneLink(RULES, ("Ann", "Ann"))
