"""Hand-made damage to good night records: every kind is caught by the audit and named.

Each test damages a copy of a real simulated record (and, where the damage would be made
consistently, its log too) and checks the audit's list names that damage.
"""

import copy
import functools
import json

import pytest

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import parse_rules, preset, preset_text
from bunco_pi.rules.night import (
    Arrive,
    CloseHeldRound,
    CloseRound,
    EndNight,
    Leave,
    NextRound,
    Night,
    Player,
    RingBell,
    SettlePrizes,
    StartRound,
    TableEntry,
)
from bunco_pi.rules.record import build_record, replay
from bunco_pi.rules.table_round import Bell, Pass, Roll, RuleViolation, Tally
from bunco_pi.sim.players import simulate_night

BASES = {"classic": (12, 5), "core": (10, 7), "rotate": (10, 3), "individual": (9, 2)}


@functools.cache
def _base(name: str) -> dict:
    players, seed = BASES[name]
    sim = simulate_night(preset(name), players, seed)
    record = build_record(sim.night, sim.log, seed=seed)
    assert audit_record(record, preset(name)) == []
    return record


def good(name: str) -> dict:
    return copy.deepcopy(_base(name))


def caught(record: dict, name: str, *words: str) -> list[str]:
    problems = audit_record(record, preset(name))
    hits = [p for p in problems if all(w in p for w in words)]
    assert hits, problems[:10]
    return hits


def rolls(record: dict, test=lambda r: True):
    """(round index, table dict, roll index, roll) of every roll that passes ``test``."""
    for r_index, rnd in enumerate(record["rounds"]):
        for t in rnd["tables"]:
            for i, roll in enumerate(t["rolls"]):
                if test(roll):
                    yield r_index, t, i, roll


def where(record: dict, r_index: int, t: dict) -> str:
    rnd = record["rounds"][r_index]
    return f"set {rnd['set']} round {rnd['round']} table {t['table']}"


def test_a_rolls_points() -> None:
    record = good("classic")
    r, t, i, roll = next(rolls(record, lambda x: x["points"] > 0 and not x["rolloff"]))
    roll["points"] += 1
    caught(record, "classic", where(record, r, t), f"roll {i + 1}", "rules say")


def test_a_rolls_dice() -> None:
    record = good("classic")
    r, t, i, roll = next(rolls(record, lambda x: x["dice"] == [1, 2, 3]
                               or x["dice"] == [2, 3, 4]))
    roll["dice"] = [6, 6, 5]
    caught(record, "classic", where(record, r, t), f"roll {i + 1}", "the record has [6, 6, 5]")


def test_a_winner() -> None:
    record = good("classic")
    t = record["rounds"][5]["tables"][2]
    t["winners"], t["losers"] = t["losers"], t["winners"]
    caught(record, "classic", "set 1 round 6 table 3", "the rolls give winners")


def test_a_seat() -> None:
    record = good("classic")
    tables = record["rounds"][9]["tables"]
    tables[0]["seats"][1], tables[2]["seats"][3] = tables[2]["seats"][3], tables[0]["seats"][1]
    caught(record, "classic", "set 2 round 3: moves", "do not lead to the seats")
    caught(record, "classic", "set 2 round 3:", "sits at table", "the rules send her to table")


def test_a_move_of_the_last_round() -> None:
    record = good("classic")
    move = record["rounds"][-1]["moves"][0]
    move["to_seat"] = move["to_seat"] % 4 + 1
    caught(record, "classic", "set 4 round 6: the move", "is not one move of a player")


def test_a_turn_out_of_order() -> None:
    record = good("classic")
    r, t, i, roll = next(rolls(record, lambda x: not x["rolloff"]))
    roll["player"] = next(p for p in t["seats"] if p != roll["player"])
    caught(record, "classic", where(record, r, t), f"roll {i + 1} is by {roll['player']}",
           "turn")


def test_a_roll_after_the_finishing_turn() -> None:
    record = good("classic")
    close = record["log"].index(["close"])
    record["log"].insert(close, ["roll", 3, [3, 1, 1]])  # the low table, done already
    caught(record, "classic", "set 1 round 1 table 3", f"a roll (log entry {close}) after the "
           "table's finishing turn")


def test_a_missing_roll_off() -> None:
    record = good("rotate")
    r, t, _, _ = next(rolls(record, lambda x: x["rolloff"]))
    ats = {roll["at"] for roll in t["rolls"] if roll["rolloff"]}
    t["rolls"] = [roll for roll in t["rolls"] if not roll["rolloff"]]
    t["rolloffs"] = 0
    record["log"] = [e if i not in ats else ["pass", t["table"]]
                     for i, e in enumerate(record["log"])]
    caught(record, "rotate", where(record, r, t), "closed before this table finished",
           "'rolloff' phase")


def test_a_roll_off_session() -> None:
    record = good("rotate")
    r, t, i, roll = next(rolls(record, lambda x: x["rolloff"]))
    roll["session"] += 1
    caught(record, "rotate", where(record, r, t), f"roll {i + 1}", "roll-off session")


def test_the_traveler() -> None:
    record = good("classic")
    holder = record["traveler"]
    record["traveler"] = next(p for p in record["cards"] if p != holder)
    caught(record, "classic", f"the last trigger was by {holder}")


def test_a_travel_trigger_moved_in_time() -> None:
    record = good("classic")
    buncos = sorted((roll["at"], roll) for _, _, _, roll in rolls(record, lambda x: x.get("bunco")))
    last, earlier = buncos[-1][1], buncos[0][1]
    last["at"], earlier["at"] = earlier["at"], last["at"]
    caught(record, "classic", f"at {last['at']}, the log has it at {earlier['at']}")


def test_a_prize_given_twice_under_one_cash_prize() -> None:
    record = good("rotate")
    cash = [p for p in record["prizes"] if p["cash"]]
    cash[1]["player"] = cash[0]["player"]
    cash[1]["tied"], cash[1]["tie_break"] = [], ""
    caught(record, "rotate", f"{cash[0]['player']} won a second cash prize")


def test_a_prize_amount() -> None:
    record = good("classic")
    record["prizes"][0]["amount"] += 1
    record["prizes"][1]["amount"] -= 1  # the pot still adds up
    caught(record, "classic", f"prize '{record['prizes'][0]['name']}' pays", "the rules give")


def test_a_prize_to_someone_not_the_best() -> None:
    record = good("classic")
    prize = next(p for p in record["prizes"] if p["name"] == "Most buncos")
    cards = record["cards"]
    prize["player"] = min(cards, key=lambda p: cards[p]["buncos"])
    caught(record, "classic", "prize 'Most buncos' went to", "who is not the best")


def test_a_prize_tie_break_that_names_another_winner() -> None:
    record = good("rotate")
    prize = next(p for p in record["prizes"] if len(p["tied"]) > 1)
    prize["player"] = next(p for p in prize["tied"] if p != prize["player"])
    caught(record, "rotate", f"prize '{prize['name']}'", f"does not name {prize['player']}")


def test_a_prize_tie_with_a_player_left_out() -> None:
    record = good("rotate")
    prize = next(p for p in record["prizes"] if len(p["tied"]) > 1)
    left_out = next(p for p in prize["tied"] if p != prize["player"])
    prize["tied"].remove(left_out)
    caught(record, "rotate", f"prize '{prize['name']}': tied", "the cards tie")


def test_a_prize_paid_as_a_gift() -> None:
    record = good("classic")
    record["prizes"][2]["cash"] = False
    caught(record, "classic", f"prize '{record['prizes'][2]['name']}': cash is False")


def test_a_card_count() -> None:
    record = good("classic")
    record["cards"]["p4"]["buncos"] += 1
    caught(record, "classic", "p4: card says buncos")


def test_a_weighted_win() -> None:
    record = good("core")
    player = next(iter(record["cards"]))
    record["cards"][player]["weighted_wins"] += 1
    caught(record, "core", f"{player}: card says weighted_wins")


def test_a_head_table_win_weighted_as_a_lower_tables() -> None:
    """002: "High table scores (red marks) count double": the card must carry the red marks."""
    record = good("core")
    head_winner = record["rounds"][0]["tables"][0]["winners"][0]
    card = record["cards"].get(head_winner)
    if card is None:  # a ghost has no card: take the other winner
        head_winner = record["rounds"][0]["tables"][0]["winners"][1]
        card = record["cards"][head_winner]
    card["weighted_wins"] -= 1
    caught(record, "core", f"{head_winner}: card says weighted_wins")


def test_a_ghosts_bunco_on_her_partners_card_under_core() -> None:
    """002: "Only the player that actually rolled the BUNCO gets credit.\""""
    record = good("core")
    r, t, _, roll = next(rolls(record, lambda x: x.get("bunco") and x["player"].startswith("ghost")))
    mate = t["seats"][(t["seats"].index(roll["player"]) + 2) % 4]
    record["cards"][mate]["buncos"] += 1
    caught(record, "core", f"{mate}: card says buncos")


def test_a_card_for_a_ghost() -> None:
    record = good("core")
    record["cards"]["ghost1"] = dict(record["cards"]["p1"])
    caught(record, "core", "card for ghost1, who is a ghost or unknown")


def test_a_missing_round() -> None:
    record = good("classic")
    del record["rounds"][7]
    caught(record, "classic", "the record holds 23 rounds, its log closes 24")


def test_a_round_missing_from_the_record_and_its_log() -> None:
    record = good("classic")
    starts = [i for i, e in enumerate(record["log"]) if e == ["start"]]
    nexts = [i for i, e in enumerate(record["log"]) if e == ["next"]]
    del record["log"][starts[7]:nexts[7] + 1]
    del record["rounds"][7]
    caught(record, "classic", "a complete night has 24 rounds, the log closes 23")


def test_a_wrong_target() -> None:
    record = good("classic")
    record["rounds"][8]["target"] = 1
    caught(record, "classic", "set 2 round 3: target 1, rules say 3")


def test_a_bell_before_anything_rang_it() -> None:
    record = good("classic")
    start = record["log"].index(["start"])
    record["log"].insert(start + 1, ["bell", 2])
    caught(record, "classic", "set 1 round 1 table 2: heard a bell", "before any table ended")


def test_a_missing_end_of_break() -> None:
    record = good("classic")
    record["log"].remove(["end-break"])
    caught(record, "classic", "a round started during the break")


def test_a_baby_bunco_left_off_a_roll() -> None:
    record = good("rotate")
    r, t, i, roll = next(rolls(record, lambda x: x.get("baby_bunco")))
    del roll["baby_bunco"]
    caught(record, "rotate", where(record, r, t), f"roll {i + 1}", "baby_bunco is False")


def test_ghosts_seated_as_partners_under_rotate() -> None:
    """003: "El jugador con el fantasma por compañero tira por el fantasma"."""
    record = good("rotate")
    first = record["first_seating"]
    ghosts = [p["id"] for p in record["players"] if p["ghost"]]
    t = next(i for i, s in enumerate(first) if ghosts[0] in s)
    seats = first[t]
    g = seats.index(ghosts[0])
    other = next(i for i, s in enumerate(first) if ghosts[1] in s)
    o = first[other].index(ghosts[1])
    # put the second ghost across from the first
    seats[(g + 2) % 4], first[other][o] = first[other][o], seats[(g + 2) % 4]
    caught(record, "rotate", "the first seating", "as partners")


def test_an_individual_mover() -> None:
    record = good("individual")
    t = record["rounds"][2]["tables"][1]
    other = next(p for p in t["seats"] if p != t["losers"][0])
    t["losers"], t["winners"] = [other], [p for p in t["seats"] if p != other]
    caught(record, "individual", "set 1 round 3 table 2", "the rolls give winners")


def test_a_lower_table_said_to_end_the_round() -> None:
    record = good("classic")
    t = record["rounds"][0]["tables"][2]
    t["ended_round"] = True
    caught(record, "classic", "set 1 round 1 table 3: ended_round is True, its rolls say False")


def test_a_table_score() -> None:
    record = good("classic")
    record["rounds"][2]["tables"][1]["score"][0] += 2
    caught(record, "classic", "set 1 round 3 table 2: score", "its rolls add up to")


@pytest.mark.parametrize("name", ["core"])
def test_a_players_only_roll_taken_away_where_everyone_rolls(name) -> None:
    """002: "Every player gets at least one roll per round.": take away the one roll a player
    had in a round (log and record alike) and the table is left waiting for her."""
    record = good(name)
    for r_index, rnd in enumerate(record["rounds"]):
        for t in rnd["tables"]:
            round_rolls = [x for x in t["rolls"] if not x["rolloff"]]
            last = round_rolls[-1]
            if sum(x["player"] == last["player"] for x in round_rolls) == 1 and \
                    not any(x["rolloff"] for x in t["rolls"]):
                t["rolls"].remove(last)
                record["log"][last["at"]] = ["bell", t["table"]]  # a bell heard twice is nothing
                caught(record, name, where(record, r_index, t), "closed before this table "
                       "finished", "'extra' phase")
                return
    pytest.fail("no round where the last roller rolled once")


# --- the host's way out and the host's seat changes ---------------------------------------------


def _held_rules(held: str):
    text = preset_text("classic")
    return parse_rules(text.replace('held_table = "as-it-stands"', f'held_table = "{held}"'))


@functools.cache
def _held_base(held: str) -> dict:
    """Classic, three tables: round 1 closed by the host while table 3's box was dead (p9 had
    scored 1, so as it stood p9 and p11 were winning), then round 2 played to its close."""
    rules = _held_rules(held)
    players = [Player(f"p{i}", f"P{i}") for i in range(1, 13)]
    seating = [tuple(f"p{i}" for i in range(t, t + 4)) for t in (1, 5, 9)]
    night = Night.start(rules, players, seating)
    log = []
    for event in (StartRound(), TableEntry(3, Roll((1, 4, 5))), TableEntry(2, Roll((1, 1, 3))),
                  TableEntry(2, Roll((2, 3, 4))), TableEntry(1, Roll((1, 1, 1))),
                  TableEntry(2, Bell()), CloseHeldRound(), NextRound(), StartRound(),
                  *(TableEntry(t, Roll(d)) for t in (2, 3) for d in ((2, 1, 1), (3, 4, 5))),
                  TableEntry(1, Roll((2, 2, 2))), TableEntry(2, Bell()), TableEntry(3, Bell()),
                  CloseRound()):
        night = night.apply(event)
        log.append(event)
    record = json.loads(json.dumps(build_record(night, log)))
    assert record["rounds"][0]["tables"][2]["held"] == held
    assert audit_record(record, rules) == []
    return record


def held(held: str) -> dict:
    return copy.deepcopy(_held_base(held))


def held_caught(record: dict, held: str, *words: str) -> list[str]:
    problems = audit_record(record, _held_rules(held))
    hits = [p for p in problems if all(w in p for w in words)]
    assert hits, problems[:10]
    return hits


def test_a_held_tables_result_against_its_scores_as_they_stood() -> None:
    record = held("as-it-stands")
    t = record["rounds"][0]["tables"][2]
    assert t["winners"] == ["p9", "p11"]
    t["winners"], t["losers"] = t["losers"], t["winners"]
    held_caught(record, "as-it-stands", "set 1 round 1 table 3", "scores as they stood",
                "['p9', 'p11']")


def test_a_held_table_given_a_result_under_no_result() -> None:
    record = held("no-result")
    t = record["rounds"][0]["tables"][2]
    t["winners"], t["losers"] = ["p9", "p11"], ["p10", "p12"]
    held_caught(record, "no-result", "set 1 round 1 table 3", "had no result")


def test_a_no_result_tables_players_credited() -> None:
    record = held("no-result")
    card = record["cards"]["p9"]
    points, wins = card["points"], card["wins"]
    card["points"] += 1  # the point p9 rolled before the box died
    card["wins"] += 1  # and the win it stood at
    held_caught(record, "no-result", f"p9: card says points {points + 1}, rolls say {points}")
    held_caught(record, "no-result", f"p9: card says wins {wins + 1}, rolls say {wins}")


def test_a_held_table_that_finished_or_a_finished_table_marked_held() -> None:
    record = held("as-it-stands")
    del record["rounds"][0]["tables"][2]["held"]
    record["rounds"][0]["tables"][1]["held"] = "as-it-stands"
    held_caught(record, "as-it-stands", "set 1 round 1 table 3: held is None", "as-it-stands")
    held_caught(record, "as-it-stands", "set 1 round 1 table 2: held is 'as-it-stands'",
                "the log gives None")


def test_a_sitting_out_tables_players_moved() -> None:
    record = held("no-result")
    assert record["rounds"][1]["tables"][2]["seats"] == ["p9", "p10", "p11", "p12"]
    record["rounds"][1]["tables"][2]["seats"].reverse()
    for move in record["rounds"][0]["moves"]:
        if move["from_table"] == 3:
            move["to_seat"] = 5 - move["to_seat"]
    held_caught(record, "no-result", "set 1 round 1 table 3: had no result, but its four did "
                "not keep their seats")


def test_a_held_close_where_every_table_had_finished() -> None:
    record = held("as-it-stands")
    record["log"][record["log"].index(["close"])] = ["close-held"]
    held_caught(record, "as-it-stands", "set 1 round 2", "closed a held round",
                "every table had finished")


def test_an_ordinary_close_on_a_dead_table() -> None:
    record = held("as-it-stands")
    record["log"][record["log"].index(["close-held"])] = ["close"]
    held_caught(record, "as-it-stands", "set 1 round 1 table 3: the round was closed before "
                "this table finished")


RULES = preset("classic")


@functools.cache
def _host_base() -> dict:
    """Classic, two tables, ghost1 at table 2: round 1; Zoe arrives at ghost1's seat and p3
    leaves; round 2; the host ends the night and the prizes are settled."""
    players = [Player(f"p{i}", f"P{i}") for i in range(1, 8)] + [Player("ghost1", "G", True)]
    night = Night.start(RULES, players, [("p1", "p2", "p3", "p4"), ("p5", "p6", "p7", "ghost1")])
    log = []
    one_round = (StartRound(), TableEntry(1, Tally("point")), TableEntry(2, Tally("point")),
                 RingBell(), TableEntry(1, Bell()), TableEntry(2, Bell()),
                 TableEntry(1, Pass()), TableEntry(2, Pass()), CloseRound())
    for event in (*one_round, Arrive("ghost1", "Zoe"), Leave("p3"), NextRound(), *one_round,
                  EndNight(), SettlePrizes(3)):
        night = night.apply(event)
        log.append(event)
    record = json.loads(json.dumps(build_record(night, log, source="head")))
    assert audit_record(record, RULES) == []
    return record


def host() -> dict:
    return copy.deepcopy(_host_base())


def test_a_late_arrival_credited_with_the_ghosts_earlier_round() -> None:
    record = host()
    first = record["rounds"][0]["tables"][1]
    assert "ghost1" in first["losers"]  # the ghost's loss is nobody's
    before = record["cards"]["ghost1"]["losses"]
    record["cards"]["ghost1"]["losses"] += 1
    caught(record, "classic", f"ghost1: card says losses {before + 1}, rolls say {before}")


def test_a_leaver_credited_after_she_left() -> None:
    record = host()
    second = next(t for t in record["rounds"][1]["tables"] if "p3" in t["seats"])
    mark = "wins" if "p3" in second["winners"] else "losses"
    record["cards"]["p3"][mark] += 1
    caught(record, "classic", f"p3: card says {mark}")


def test_a_seat_change_during_a_round() -> None:
    record = host()
    log = record["log"]
    arrive = log.index(["arrive", "ghost1", "Zoe"])
    log.insert(log.index(["start"]) + 1, log.pop(arrive))
    caught(record, "classic", "set 1 round 1: log entry 1 is a 'arrive' during the round")


def test_a_late_arrival_at_the_seat_of_someone_who_left() -> None:
    record = host()
    record["log"].insert(record["log"].index(["next"]), ["arrive", "p3", "Ann"])
    caught(record, "classic", "a late arrival at p3's seat, whose card is someone else's")


def test_a_leaver_still_marked_a_player() -> None:
    record = host()
    next(p for p in record["players"] if p["id"] == "p3")["ghost"] = False
    caught(record, "classic", "the record's ghosts", "arrivals and leavings")


def test_a_round_after_the_host_ended_the_night() -> None:
    record = host()
    log = record["log"]
    log.insert(log.index(["end-night"]) + 1, ["start"])
    caught(record, "classic", "the night goes on after the host ended it")


def test_a_held_close_counts_towards_the_break() -> None:
    """The close that ends set 2 is the host's: the break after it is still the rules' break
    (the audit says only that no table was held up)."""
    record = good("classic")
    closes = [i for i, e in enumerate(record["log"]) if e == ["close"]]
    record["log"][closes[11]] = ["close-held"]
    problems = caught(record, "classic", "set 2 round 6", "every table had finished")
    assert not [p for p in audit_record(record, preset("classic")) if "break" in p], problems


# --- the log's order: duplicated events ----------------------------------------------------------


def insert_event(record: dict, at: int, event: list) -> None:
    """Put ``event`` into the log at position ``at``, keeping the rolls' log positions true."""
    record["log"].insert(at, event)
    for rnd in record["rounds"]:
        for t in rnd["tables"]:
            for roll in t["rolls"]:
                if roll["at"] >= at:
                    roll["at"] += 1


@pytest.mark.parametrize("name", list(BASES))
@pytest.mark.parametrize("kind", ["start", "close", "next", "prizes"])
def test_a_duplicated_event_is_named_as_a_duplicate_and_nothing_else_is_blamed(
        name, kind, tmp_path, capsys) -> None:
    """The engine refuses to replay a log with any of these repeated; `bunco-pi audit` names
    the repeat, and only the repeat, on one line."""
    from bunco_pi.cli import main

    record = good(name)
    log = record["log"]
    places = [i for i, e in enumerate(log) if e[0] == kind]
    first = places[len(places) // 2]
    insert_event(record, first + 1, list(log[first]))
    with pytest.raises(RuleViolation):  # the engine will not replay it
        replay(record, preset(name))
    path = tmp_path / "night.json"
    path.write_text(json.dumps(record))
    assert main(["audit", str(path)]) == 1
    problems = capsys.readouterr().out.splitlines()
    assert problems[-1] == f"{path}: 1 problem against the {name} rules"
    did = {"start": "started this round", "close": "closed this round",
           "next": "went on from this round", "prizes": "settled the prizes"}[kind]
    assert problems[:-1] == [f"log entry {first + 1}: a duplicate '{kind}': log entry {first} "
                             f"already {did} ({problems[0].rsplit('(', 1)[-1]}"], problems


def test_a_duplicated_next_into_the_break_is_a_duplicate_not_a_round_during_the_break() -> None:
    """The message was "a round started during the break" before the audit read the order."""
    record = good("classic")
    nexts = [i for i, e in enumerate(record["log"]) if e == ["next"]]
    insert_event(record, nexts[11] + 1, ["next"])  # the 12th next goes into the break
    problems = audit_record(record, preset("classic"))
    assert len(problems) == 1 and "a duplicate 'next'" in problems[0] and \
        "set 2 round 6" in problems[0]


def test_a_table_entry_between_rounds() -> None:
    record = good("core")
    at = record["log"].index(["next"])
    insert_event(record, at, ["roll", 2, [1, 1, 1]])
    caught(record, "core", f"log entry {at}: a 'roll' for table 2 after a round closed")


# --- seating: what the texts state of it ---------------------------------------------------------


def _losers_with_a_ghost(record: dict) -> tuple[int, dict, list[str]]:
    """A round (not the last) with a table whose losers, who stay under rotate, are a ghost
    and a real player: (round index, that table, its losers in seat order)."""
    ghosts = {p["id"] for p in record["players"] if p["ghost"]}
    for r, rnd in enumerate(record["rounds"][:-1]):
        for t in rnd["tables"]:
            losers = [p for p in t["seats"] if p in t["losers"]]
            if len(set(losers) & ghosts) == 1:
                return r, t, losers
    raise AssertionError("no losing team with one ghost")


def _reseat(record: dict, r: int, table: int, seats: list[str]) -> None:
    """Seat table ``table`` of round ``r + 1`` so, and round ``r``'s moves with it."""
    index = record["rounds"][r + 1]["tables"].index(
        next(t for t in record["rounds"][r + 1]["tables"] if t["table"] == table))
    record["rounds"][r + 1]["tables"][index]["seats"] = seats
    for m in record["rounds"][r]["moves"]:
        if m["player"] in seats:
            m["to_table"], m["to_seat"] = table, seats.index(m["player"]) + 1


def test_a_real_player_kept_with_her_ghost_partner_under_rotate() -> None:
    """003: "... por lo que las parejas cambian después de cada ronda": a ghost's partner too
    (the audit used to skip any repeated pair with a ghost in it)."""
    record = good("rotate")
    r, t, (first, second) = _losers_with_a_ghost(record)
    nxt = next(x for x in record["rounds"][r + 1]["tables"] if x["table"] == t["table"])
    seats = list(nxt["seats"])
    s = seats.index(first)
    across = seats[(s + 2) % 4]
    seats[seats.index(second)], seats[(s + 2) % 4] = across, second
    _reseat(record, r, t["table"], seats)
    where = f"set {record['rounds'][r]['set']} round {record['rounds'][r]['round']}"
    caught(record, "rotate", f"after {where}: table {t['table']}: {min(first, second)} and "
           f"{max(first, second)} are partners again", "las parejas cambian")


def test_the_stay_put_player_moved_under_rotate() -> None:
    """003: "el jugador 1 se queda en su sitio y el jugador 3 se traslada al asiento del
    jugador 2": the table turned two seats round keeps every partner new, but player 1 is not
    in her seat."""
    record = good("rotate")
    r, t, (first, _) = _losers_with_a_ghost(record)
    nxt = next(x for x in record["rounds"][r + 1]["tables"] if x["table"] == t["table"])
    seats = nxt["seats"][2:] + nxt["seats"][:2]
    _reseat(record, r, t["table"], seats)
    where = f"set {record['rounds'][r]['set']} round {record['rounds'][r]['round']}"
    caught(record, "rotate", f"after {where}: {first} stays at table {t['table']} but not in "
           "her seat", "el jugador 1 se queda en su sitio")


def test_a_breach_of_a_rule_the_record_does_not_own_up_to() -> None:
    """Three ghosts sent to one table: one changes tables, and the record says so; the same
    record without its seating note is told off."""
    players = [Player(f"p{i}", f"P{i}") for i in range(1, 6)] + \
        [Player(f"g{i}", f"G{i}", True) for i in range(1, 4)]
    rules = preset("rotate")
    night = Night.start(rules, players, [("p1", "g3", "p3", "p4"), ("g1", "p5", "p2", "g2")])
    log = []
    head_bunco = TableEntry(1, Roll((1, 1, 1)))  # 3 points under rotate: seven make 21
    for event in (StartRound(), TableEntry(1, Roll((2, 3, 4))), *[head_bunco] * 7,
                  TableEntry(2, Roll((2, 3, 4))), TableEntry(2, Roll((1, 3, 4))),
                  TableEntry(2, Bell()), CloseRound(), Leave("p2")):
        night = night.apply(event)
        log.append(event)
    # the head's winners g3 and p4 go to table 2, where g1 and p2 lost and stay; p2 leaves
    assert night.history[0].tables[0].winners == ("g3", "p4")
    assert night.history[0].tables[1].losers == ("g1", "p2")
    record = json.loads(json.dumps(build_record(night, log)))
    notes = record["rounds"][0]["seating_notes"]
    assert any("so that no two ghosts are partners" in n for n in notes), notes
    assert audit_record(record, rules) == []
    del record["rounds"][0]["seating_notes"]
    caught(record, "rotate", "after set 1 round 1: the seating breaks", "does not say so")


def test_seats_after_a_leave_are_checked_with_the_ghosts_of_the_next_round() -> None:
    """A leave after the round closed: the seats the rotation drew had the leaver beside a
    ghost; seats that pair the two ghosts are caught (the audit used to check the ghosts as
    they were before the leave)."""
    record = good("rotate")
    ghosts = {p["id"] for p in record["players"] if p["ghost"]}
    r = 4
    nxt = record["rounds"][r + 1]["tables"]
    t = next(x for x in nxt if set(x["seats"]) & ghosts)
    g = next(p for p in t["seats"] if p in ghosts)
    mate = t["seats"][(t["seats"].index(g) + 2) % 4]
    # make the partner of that ghost leave right after round r closed
    closes = [i for i, e in enumerate(record["log"]) if e == ["close"]]
    insert_event(record, closes[r] + 1, ["leave", mate])
    next(p for p in record["players"] if p["id"] == mate)["ghost"] = True
    problems = audit_record(record, preset("rotate"))
    where = f"after set {record['rounds'][r]['set']} round {record['rounds'][r]['round']}"
    assert any(where in p and f"seats ghosts {min(g, mate)}" in p or
               where in p and f"ghosts {g} and {mate}" in p or
               where in p and f"ghosts {mate} and {g}" in p for p in problems), problems


# --- a bunco at a held "no-result" table ---------------------------------------------------------


def _no_result_bunco() -> tuple[dict, object]:
    """Classic under "no-result": table 3 rolls a bunco (p9), then its box dies and the host
    holds the bell."""
    rules = _held_rules("no-result")
    players = [Player(f"p{i}", f"P{i}") for i in range(1, 13)]
    night = Night.start(rules, players, [tuple(f"p{i}" for i in range(t, t + 4))
                                         for t in (1, 5, 9)])
    log = []
    for event in (StartRound(), TableEntry(3, Roll((1, 1, 1))), TableEntry(2, Roll((2, 3, 4))),
                  TableEntry(1, Roll((1, 1, 1))), TableEntry(2, Bell()), CloseHeldRound()):
        night = night.apply(event)
        log.append(event)
    return json.loads(json.dumps(build_record(night, log))), rules


def test_a_bunco_at_a_no_result_table_moves_the_traveler_and_marks_no_card() -> None:
    """000: "the fuzzy die is passed from player to player as BUNCO'S are rolled" and "give
    yourself ... one BUNCO point on the bottom of your score sheet after your turn is
    finished": the die went to p9 when she rolled; her turn never finished, and nothing of a
    "no-result" table's round counts, so her card shows no bunco. The head table's later
    bunco (p1) takes the traveler from her."""
    record, rules = _no_result_bunco()
    table = record["rounds"][0]["tables"][2]
    assert table["held"] == "no-result" and table["rolls"][0]["bunco"]
    assert record["cards"]["p9"]["buncos"] == 0 and record["cards"]["p1"]["buncos"] == 1
    assert record["traveler"] == "p1"
    assert audit_record(record, rules) == []
    record["cards"]["p9"]["buncos"] = 1
    assert any("p9: card says buncos 1, rolls say 0" in p for p in audit_record(record, rules))


def test_the_traveler_stays_with_a_no_result_tables_bunco_when_nobody_rolls_another() -> None:
    record, rules = _no_result_bunco()
    # without the head's bunco (its roll a plain one instead), p9 holds the die
    record["log"] = [["roll", 1, [1, 2, 3]] if e == ["roll", 1, [1, 1, 1]] else e
                     for e in record["log"]]
    problems = audit_record(record, rules)
    assert any("traveler is p1, the last trigger was by p9" in p for p in problems), problems
