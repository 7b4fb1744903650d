"""The Pico table box's own fold of its round and the head's round clock, under MicroPython's
unix port against the real broker and a scripted head: offline (and until the head catches
up) the box shows the running score its own presses make under the night's rules, the engine's
score for the same entries; online the head's word is the score; a state with the head's
``timer`` draws the clock where the shared layout puts it, counting down by the box's clock."""

from __future__ import annotations

import json
import time

import pytest

from bunco_pi.head.views import fold_rules
from bunco_pi.rules import entries as codec
from bunco_pi.rules.house import preset
from bunco_pi.rules.table_round import TableRound, TableSetup
from tests.pico_boxes import PicoBox, micropython
from tests.test_pico_box import PLAYING, VIEW, head_says

pytestmark = pytest.mark.slow


def engine_scores(rules: str, target: int, table: int, wire: list[list]) -> tuple[int, int]:
    state = TableRound.begin(TableSetup(table=table, seats=("a", "b", "c", "d"), target=target,
                                        rules=preset(rules),
                                        can_end_round=table == 1))
    for entry in wire:
        state = state.apply(codec.decode_entry(entry))
    return state.team_scores


def test_offline_the_box_shows_the_score_its_presses_make_and_online_the_heads(
        tmp_path, broker, topics, make_link):
    micropython()
    head = make_link("head")
    head_says(head, topics.ack(3), {"seq": 0})
    state = {**PLAYING, "target": 4, "fold": fold_rules(preset("classic"))}
    head_says(head, topics.state(), state)
    head_says(head, topics.view(3), {**VIEW, "table": 3})
    box = PicoBox(tmp_path, table=3, night=topics.night, host=broker.host, port=broker.port,
                  password=broker.credentials.password("table-3"))
    box.start()
    try:
        box.wait(box.wants_a_roll, 10, "the round on screen")
        # This scripted head commits nothing: its view stays 0-0, the box's presses wait.
        for role in ("point", "point", "three", "bunco"):
            box.tap(role)
        box.wait(lambda: len(box.stored) == 4, 10, "four presses stored")
        box.wait(lambda: box.view.get("score_a") == 1 + 1 + 5 + 21, 10, "the box's own fold")
        assert box.view["score_b"] == 0 and box.view["roller"] == "Ann"
        box.tap("pass")
        box.tap("point")  # Bea's
        box.wait(lambda: len(box.stored) == 6, 10, "the pass and Bea's point")
        box.wait(lambda: box.view.get("roller") == "Bea" and box.view.get("score_b") == 1, 10,
                 "Bea's point for team B")
        wire = [item["x"] for item in box.stored]
        assert (box.view["score_a"], box.view["score_b"]) == engine_scores("classic", 4, 3, wire)
        # A wipeout the house does not play is refused on the box, as on a Pi box: not stored.
        box.send("hold pass")
        box.wait(lambda: box.status() == "these house rules do not play wipeout", 10,
                 "the rules' refusal")
        time.sleep(0.5)
        assert len(box.stored) == 6
    finally:
        box.kill()
    # A power cut and no broker: the round's fold comes back from the journal.
    config = json.loads((tmp_path / "box.json").read_text())
    (tmp_path / "box.json").write_text(json.dumps({**config, "broker_port": 9}))
    box.start()
    try:
        box.wait(lambda: box.view.get("score_a") == 28 and box.view.get("score_b") == 1, 15,
                 "the fold, from flash, offline")
        assert box.status() == "offline, 6 waiting"
        box.tap("point")
        box.wait(lambda: box.view.get("score_b") == 2, 10, "an offline press counts on screen")
        # Held, undo takes back Bea's whole turn, as on a Pi box: her two points, two undos.
        box.send("hold undo")
        box.wait(lambda: len(box.stored) == 9, 10, "two undos stored")
        assert [item["x"] for item in box.stored[-2:]] == [["undo"], ["undo"]]
        box.wait(lambda: box.view.get("score_b") == 0, 10, "Bea's turn taken back")
        assert box.view["roller"] == "Bea" and box.view["flash"] == "undone: whole turn"
    finally:
        box.stop()
    # Online again, the head has it all: its view is the score (here deliberately another, to
    # see whose is shown).
    (tmp_path / "box.json").write_text(json.dumps(config))
    head_says(head, topics.ack(3), {"seq": 9})
    head_says(head, topics.view(3), {**VIEW, "table": 3, "score": [30, 2], "roller_seat": 2,
                                     "pos": 9})
    box.start()
    try:
        box.wait(lambda: box.view.get("score_a") == 30, 15, "the head's score once it has all")
        assert box.view["roller"] == "Bea"
    finally:
        box.stop()


def test_the_heads_round_clock_counts_down_on_the_scoring_screen(tmp_path, broker, topics,
                                                                 make_link):
    micropython()
    head = make_link("head")
    head_says(head, topics.ack(2), {"seq": 0})
    head_says(head, topics.state(), {**PLAYING, "timer": {"phase": "round", "left": 125.4,
                                                          "total": 900.0}})
    head_says(head, topics.view(2), VIEW)
    box = PicoBox(tmp_path, table=2, night=topics.night, host=broker.host, port=broker.port,
                  password=broker.credentials.password("table-2"))
    box.start()
    try:
        box.wait(lambda: box.view.get("timer") in ("2:06", "2:05"), 10, "the clock")
        first = box.view["timer"]
        assert f"to 1 {first}" in box.screen  # drawn in the header, right of the set and table
        box.wait(lambda: box.view.get("timer") in ("2:04", "2:03"), 5, "the clock counting")
        head_says(head, topics.state(), {**PLAYING, "pos": 6, "timer": {
            "phase": "pause", "left": 61.0, "total": 900.0}})
        box.wait(lambda: box.view.get("timer") == "paused 1:01", 10, "the clock held")
        time.sleep(1.5)
        assert box.view["timer"] == "paused 1:01"
        head_says(head, topics.state(), {**PLAYING, "pos": 7, "timer": {
            "phase": "warn", "left": 9.0, "total": 60.0}})
        box.wait(lambda: box.view.get("timer") == "0:09!", 10, "the warning")
        head_says(head, topics.state(), {**PLAYING, "pos": 8})  # timed rounds off
        box.wait(lambda: box.view.get("timer") == "", 10, "no clock")
        assert "target 1" in box.screen
        # Between rounds: who won here and where each player sits next, as on a Pi box.
        head_says(head, topics.view(2), {**VIEW, "pos": 9, "done": True, "result": {
            "winners": ["Ann", "Cat"], "losers": ["Bea", "Dot"], "score": [21, 9]},
            "moves": [{"name": "Bea", "to_table": 1, "to_seat": 2},
                      {"name": "Dot", "to_table": 3, "to_seat": 4}]})
        head_says(head, topics.state(), {**PLAYING, "phase": "results", "pos": 9})
        box.wait(lambda: box.view.get("screen") == "results", 10, "the results")
        assert box.view["won"] and (box.view["score_a"], box.view["score_b"]) == (21, 9)
        assert box.view["moves"] == ["Bea -> T1 S2", "Dot -> T3 S4"]
        assert box.screen[:5] == ["TABLE 2", "21-9", "A WON", "Bea -> T1 S2", "Dot -> T3 S4"]
        assert box.view["hint"] == "next: head's bell"
    finally:
        box.stop()
