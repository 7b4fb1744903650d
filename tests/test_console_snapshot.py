"""What the console shows is a pure function of the night: the board, the standings, who the
round waits for, and the prizes as they would fall now."""

import json

from bunco_pi.console.cards import CARD_COLUMNS, cards_csv, cards_html
from bunco_pi.console.snapshot import console_snapshot
from bunco_pi.rules.house import preset
from bunco_pi.rules.night import Leave, NextRound, Night, Player, RingBell, StartRound, TableEntry
from bunco_pi.rules.record import build_record
from bunco_pi.rules.table_round import Bell, Pass, Tally
from bunco_pi.sim.players import simulate_night

RULES = preset("classic")
PLAYERS = [Player(f"p{i}", f"P{i}") for i in range(1, 8)] + [Player("ghost1", "Ghost 1", True)]
SEATING = [("p1", "p2", "p3", "p4"), ("p5", "p6", "p7", "ghost1")]


def snap(night, online=frozenset({1, 2})):
    return console_snapshot(night, name="club", table_count=2, online=set(online))


def test_the_lobby_says_which_tables_are_still_to_come() -> None:
    s = console_snapshot(None, name="club", table_count=3, online={1, 3})
    assert s["phase"] == "lobby" and s["waiting_for"] == [2] and s["board"] == []


def test_the_board_follows_the_round_and_the_tables_it_waits_for() -> None:
    night = Night.start(RULES, PLAYERS, SEATING).apply(StartRound())
    night = night.apply(TableEntry(2, Tally("point")))
    s = snap(night, {1})
    t1, t2 = s["board"]
    assert t2["score"] == [1, 0] and t2["roller"] == "P5" and t1["score"] == [0, 0]
    assert [seat["name"] for seat in t2["seats"]] == ["P5", "P6", "P7", "Ghost 1"]
    assert t2["seats"][3]["ghost"] and not t2["online"] and s["offline"] == [2]
    assert s["waiting_for"] == [1, 2]
    night = night.apply(RingBell())  # the host rings it; table 2 hears it, and passes
    for entry in (Bell(), Pass()):
        night = night.apply(TableEntry(2, entry))
    s = snap(night)
    assert s["bell"] and s["waiting_for"] == [1]
    json.dumps(s)  # everything in it goes to the browser as JSON


def test_standings_rank_by_wins_and_show_the_prizes_as_they_would_fall() -> None:
    sim = simulate_night(RULES, 8, seed=4)
    s = snap(sim.night)
    assert s["final"] and s["prizes"] and all(p["winner"] for p in s["prizes"])
    wins = [r["wins"] for r in s["standings"]]
    assert wins == sorted(wins, reverse=True)
    named = {name for r in s["standings"] for name in r["prizes"]}
    assert named == {a.name for a in sim.night.prizes if a.player}
    # mid-night: a preview, the same every time (a fixed tie-break seed)
    mid = Night.replay(RULES, sim.night.players, [t.seats for t in sim.night.history[0].tables],
                       sim.log[: len(sim.log) // 2])
    first, again = snap(mid), snap(mid)
    assert not first["final"] and first["prizes"] == [] and first == again
    assert any(r["prizes"] for r in first["standings"])


def test_someone_who_left_is_marked_so_her_seat_takes_no_late_arrival() -> None:
    night = Night.start(RULES, PLAYERS, SEATING).apply(StartRound())
    for t in (1, 2):
        night = night.apply(TableEntry(t, Tally("point")))
    night = night.apply(RingBell())
    for t in (1, 2):
        night = night.apply(TableEntry(t, Bell())).apply(TableEntry(t, Pass()))
    from bunco_pi.rules.night import CloseRound

    if night.phase != "results":
        night = night.apply(CloseRound())
    night = night.apply(Leave("p2")).apply(NextRound())
    players = {p["id"]: p for p in snap(night)["players"]}
    assert players["p2"]["left"] and players["p2"]["ghost"]
    assert players["ghost1"]["ghost"] and not players["ghost1"]["left"]


def test_score_cards_as_csv_and_a_page_per_player() -> None:
    sim = simulate_night(RULES, 10, seed=2)
    record = build_record(sim.night, sim.log)
    lines = cards_csv(record).splitlines()
    assert lines[0] == ",".join(CARD_COLUMNS) and len(lines) == 1 + len(record["cards"])
    names = {p["id"]: p["name"] for p in record["players"]}
    first_id, first_card = next(iter(record["cards"].items()))
    assert lines[1].startswith(f"{names[first_id]},{first_card['wins']},{first_card['losses']},")
    page = cards_html(record)
    # the console's content policy refuses inline styles: the look comes from the Pi's stylesheet
    assert page.count('class="card"') == 10 and "/static/cards.css" in page
    assert "<style" not in page and " style=" not in page
    assert page.count("<tr><td>set ") == sum(c["wins"] + c["losses"] for c in record["cards"].values())
