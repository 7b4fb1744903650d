"""The audit catches every kind of tampering with a real night record, and names the place."""

import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import PRESET_NAMES, parse_rules, preset, preset_text
from bunco_pi.rules.night import (
    BREAK,
    ENDED,
    PRIZES,
    READY,
    RESULTS,
    Arrive,
    CloseHeldRound,
    CloseRound,
    EndBreak,
    EndNight,
    Leave,
    NextRound,
    Night,
    RingBell,
    SettlePrizes,
    StartRound,
    TableEntry,
)
from bunco_pi.rules.record import build_record, replay
from bunco_pi.rules.rotation import initial_seating
from bunco_pi.rules.table_round import Bell, Pass, Roll, RuleViolation, Tally, Undo
from bunco_pi.sim.players import make_players, simulate_night


def real_record(name: str, players: int = 12, seed: int = 5) -> dict:
    sim = simulate_night(preset(name), players, seed)
    return build_record(sim.night, sim.log, seed=seed)


@pytest.fixture(scope="module")
def classic() -> dict:
    return real_record("classic")


@pytest.fixture
def record(classic) -> dict:
    return copy.deepcopy(classic)


RULES = preset("classic")


def only(problems: list[str], *words: str) -> list[str]:
    hits = [p for p in problems if all(w in p for w in words)]
    assert hits, problems
    return hits


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_an_untouched_record_is_consistent(name: str) -> None:
    assert audit_record(real_record(name), preset(name)) == []


def scoring_roll(record: dict, round_index: int = 3):
    rnd = record["rounds"][round_index]
    for t in rnd["tables"]:
        for i, roll in enumerate(t["rolls"]):
            if roll["points"] > 0 and not roll["rolloff"]:
                return rnd, t, i, roll
    raise AssertionError("no scoring roll")


def test_changing_a_rolls_points_is_caught(record) -> None:
    rnd, t, i, roll = scoring_roll(record)
    roll["points"] += 1
    problems = audit_record(record, RULES)
    where = f"set {rnd['set']} round {rnd['round']} table {t['table']}"
    only(problems, where, f"roll {i + 1}", f"scored {roll['points']}", f"rules say {roll['points'] - 1}")


def test_changing_a_rolls_dice_is_caught(record) -> None:
    rnd, t, i, roll = scoring_roll(record, 7)
    roll["dice"] = [d % 6 + 1 for d in roll["dice"]] if len(set(roll["dice"])) > 1 else [1, 2, 3]
    assert audit_record(record, RULES)


def test_changing_a_tables_score_is_caught(record) -> None:
    t = record["rounds"][2]["tables"][1]
    t["score"][0] += 2
    only(audit_record(record, RULES), "set 1 round 3 table 2", "score", "its rolls add up to")


def test_swapping_a_winner_and_a_loser_is_caught(record) -> None:
    t = record["rounds"][5]["tables"][2]
    t["winners"], t["losers"] = t["losers"], t["winners"]
    problems = audit_record(record, RULES)
    only(problems, "set 1 round 6 table 3", "winners", "the rolls give winners")


def test_changing_a_card_count_is_caught(record) -> None:
    card = record["cards"]["p4"]
    card["buncos"] += 1
    only(audit_record(record, RULES), "p4: card says buncos")
    card["buncos"] -= 1
    card["wins"] += 1
    only(audit_record(record, RULES), "p4: card says wins")


def test_a_missing_card_is_caught(record) -> None:
    del record["cards"]["p7"]
    only(audit_record(record, RULES), "no card for p7")


def test_changing_the_traveler_is_caught(record) -> None:
    holder = record["traveler"]
    assert holder is not None
    other = next(p["id"] for p in record["players"] if p["id"] != holder)
    record["traveler"] = other
    problems = audit_record(record, RULES)
    only(problems, f"traveler is {other}", f"the last trigger was by {holder}")


def test_reordering_the_travelers_trigger_is_caught(record) -> None:
    """The traveler is whoever rolled the LAST bunco: move the last bunco earlier in time."""
    buncos = [(r["at"], r) for rnd in record["rounds"] for t in rnd["tables"] for r in t["rolls"]
              if r.get("bunco")]
    buncos.sort(key=lambda item: item[0])
    last = buncos[-1][1]
    earlier = next(r for _, r in reversed(buncos) if r["player"] != last["player"])
    last["at"], earlier["at"] = earlier["at"], last["at"]
    only(audit_record(record, RULES), f"at {last['at']}, the log has it at {earlier['at']}")


def test_changing_a_seat_in_the_next_round_is_caught(record) -> None:
    nxt = record["rounds"][9]["tables"]
    nxt[0]["seats"][1], nxt[2]["seats"][3] = nxt[2]["seats"][3], nxt[0]["seats"][1]
    problems = audit_record(record, RULES)
    only(problems, "set 2 round 3: moves", "do not lead to the seats of the next round")
    # 000: the head's winners stay, its losers go down one: swapped across tables, both wrong
    mover = nxt[0]["seats"][1]
    only(problems, f"set 2 round 3: {mover} sits at table 1, the rules send her to table",
         '"The winning team stays at the "Head" table.')


def test_swapping_two_seats_at_one_table_is_caught(record) -> None:
    seats = record["rounds"][6]["tables"][1]["seats"]
    seats[0], seats[1] = seats[1], seats[0]
    only(audit_record(record, RULES), "set 1 round 6: moves",
         "do not lead to the seats of the next round")


def test_partners_not_split_is_caught(record) -> None:
    # seat the head table's staying winners across from each other in the next round
    w1, w2 = record["rounds"][0]["tables"][0]["winners"]
    nxt = record["rounds"][1]["tables"][0]["seats"]
    i = nxt.index(w1)
    j = (i + 2) % 4
    nxt[nxt.index(w2)], nxt[j] = nxt[j], w2
    problems = audit_record(record, RULES)
    only(problems, f"after set 1 round 1: table 1: {min(w1, w2)} and {max(w1, w2)} are partners "
         "again",
         "Do not stay with your partner")


def test_a_player_seated_twice_is_caught(record) -> None:
    seats = record["rounds"][4]["tables"][1]["seats"]
    seats[0] = seats[1]
    only(audit_record(record, RULES), "set 1 round 5", "not every player sits exactly once")


def test_changing_a_prize_amount_is_caught(record) -> None:
    record["prizes"][1]["amount"] += 3
    only(audit_record(record, RULES), "cash prizes pay 63.00, the pot is 60.00")


def test_giving_a_prize_to_someone_else_is_caught(record) -> None:
    prize = next(p for p in record["prizes"] if p["name"] == "Most buncos")
    cards = record["cards"]
    worst = min(cards, key=lambda p: cards[p]["buncos"])
    prize["player"] = worst
    only(audit_record(record, RULES), "prize 'Most buncos' went to", "who is not the best")
    travel = next(p for p in record["prizes"] if p["name"] == "Traveling")
    travel["player"] = next(p for p in cards if p != record["traveler"])
    only(audit_record(record, RULES), "prize 'Traveling' went to", "the traveler is")


def test_a_missing_prize_is_caught(record) -> None:
    record["prizes"].pop()
    only(audit_record(record, RULES), "5 prizes given, rules list 6")


def test_a_wrong_target_is_caught(record) -> None:
    record["rounds"][8]["target"] = 1
    only(audit_record(record, RULES), "set 2 round 3: target 1, rules say 3")


def test_rolls_after_the_head_table_won_are_caught(record) -> None:
    rnd = record["rounds"][0]
    head = rnd["tables"][0]
    assert head["ended_round"]
    close = record["log"].index(["close"])
    record["log"].insert(close, ["roll", 1, [2, 3, 4]])
    head["rolls"].append({"at": close, "player": head["seats"][0], "dice": [2, 3, 4], "points": 0,
                          "rolloff": False})
    only(audit_record(record, RULES), "set 1 round 1 table 1", f"a roll (log entry {close}) after "
         "the table's finishing turn")


def test_an_end_of_round_that_never_reached_21_is_caught(record) -> None:
    low = record["rounds"][0]["tables"][2]
    low["ended_round"] = True
    low["rolls"] = [r for r in low["rolls"] if not r.get("bunco")]
    problems = audit_record(record, RULES)
    if low["score"][0] < 21 and low["score"][1] < 21:
        only(problems, "set 1 round 1 table 3", "never reached 21")


def test_a_tie_without_a_roll_off_is_caught(record) -> None:
    t = record["rounds"][11]["tables"][1]
    t["rolls"] = []
    t["score"], t["seat_scores"], t["rolloffs"] = [0, 0], [0, 0, 0, 0], 0
    only(audit_record(record, RULES), "set 2 round 6 table 2", "0 rolls in the record, its log "
         "entries make")


def test_individual_the_wrong_mover_is_caught() -> None:
    rules = preset("individual")
    record = real_record("individual", players=12, seed=2)
    t = record["rounds"][2]["tables"][1]
    mover = t["losers"][0]
    other = next(p for p in t["seats"] if p != mover)
    t["losers"] = [other]
    t["winners"] = [p for p in t["seats"] if p != other]
    only(audit_record(record, rules), "set 1 round 3 table 2", "the rolls give winners")


def test_rotate_a_second_cash_prize_is_caught() -> None:
    rules = preset("rotate")
    record = real_record("rotate", players=12, seed=3)
    cash = [p for p in record["prizes"] if p["cash"]]
    cash[1]["player"] = cash[0]["player"]
    only(audit_record(record, rules), "won a second cash prize")


def test_a_ghost_bunco_credited_to_the_ghost_is_caught() -> None:
    record = real_record("classic", players=11, seed=8)
    record["cards"]["ghost1"] = dict(record["cards"]["p1"])
    only(audit_record(record, RULES), "card for ghost1, who is a ghost or unknown")


def test_a_head_table_playing_on_past_21_is_caught(record) -> None:
    """Unmark the head table's end of the round and let it roll on: the round then has no bell."""
    rnd = record["rounds"][4]
    head = rnd["tables"][0]
    head["ended_round"] = False
    head["rolls"].append({"at": head["rolls"][-1]["at"], "player": head["seats"][0], "dice": [1, 2, 3],
                          "points": 0, "rolloff": False})
    only(audit_record(record, RULES), "set 1 round 5 table 1", "ended_round is False, its rolls "
         "say True")


def test_a_round_ended_by_the_hosts_bell_is_fine() -> None:
    rules = preset("classic")
    players = make_players(8)
    seating = [tuple(p.id for p in players[:4]), tuple(p.id for p in players[4:])]
    log = [StartRound(), TableEntry(1, Roll((1, 2, 3))), TableEntry(2, Roll((1, 1, 3))), RingBell(),
           TableEntry(1, Bell()), TableEntry(2, Bell()), TableEntry(1, Roll((2, 3, 4))),
           TableEntry(2, Roll((2, 3, 4))), CloseRound()]
    night = Night.replay(rules, players, seating, log)
    record = build_record(night, log)
    assert not any(t["ended_round"] for t in record["rounds"][0]["tables"])
    assert audit_record(record, rules) == []
    record["log"].remove(["ring"])
    only(audit_record(record, rules), "set 1 round 1", "no table ended the round")


def button_night(rules, entries, close: bool = True):
    players = make_players(4)
    seating = [tuple(p.id for p in players)]
    log = [StartRound(), *(e if isinstance(e, RingBell) else TableEntry(1, e) for e in entries)]
    log += [CloseRound()] if close else []
    night = Night.replay(rules, players, seating, log)
    return night, build_record(night, log)


def test_a_button_entered_three_twos_is_a_travel_in_individual_play() -> None:
    """004: "Travel is rolling all 2s" also when the scorekeeper enters it with the buttons."""
    rules = preset("individual")
    entries = [Tally("point"), Tally("three", 2), Pass(), Roll((5, 5, 5)), Roll((3, 4, 5)), Roll((1, 1, 1))]
    night, record = button_night(rules, entries)
    assert night.traveler == "p1" and record["traveler"] == "p1"
    assert audit_record(record, rules) == []
    record["traveler"] = "p3"
    only(audit_record(record, rules), "traveler is p3", "the last trigger was by p1")


def test_a_record_of_a_round_still_in_play_is_consistent() -> None:
    rules = preset("classic")
    night, record = button_night(rules, [Roll((1, 2, 3)), Roll((1, 1, 1))], close=False)
    assert night.traveler == "p1" and record["rounds"] == [] and not record["complete"]
    assert audit_record(record, rules) == []


def test_an_impossible_tally_is_named_not_a_crash(record) -> None:
    roll = record["rounds"][0]["tables"][1]["rolls"][0]
    roll["dice"], roll["tally"] = None, "wipeout"
    only(audit_record(record, RULES), "set 1 round 1 table 2", "roll 1", "wipeout")


def test_a_round_whose_winning_bunco_was_undone_after_the_bell_is_not_flagged() -> None:
    """The bell rang for a head-table bunco that was then taken back: the other tables had
    stopped, and the head table finished its turn after hearing the bell itself."""
    rules = preset("classic")
    players = make_players(8)
    seating = [tuple(p.id for p in players[:4]), tuple(p.id for p in players[4:])]
    log = [StartRound(), TableEntry(2, Roll((1, 2, 3))), TableEntry(1, Roll((1, 1, 1))),
           TableEntry(2, Bell()), TableEntry(2, Roll((2, 3, 4))), TableEntry(1, Undo()),
           TableEntry(1, Roll((1, 4, 5))), TableEntry(1, Bell()), TableEntry(1, Roll((2, 3, 4))),
           CloseRound()]
    night = Night.replay(rules, players, seating, log)
    record = build_record(night, log)
    assert not any(t["ended_round"] for t in record["rounds"][0]["tables"])
    assert audit_record(record, rules) == []


def test_individual_roll_off_with_a_turn_passed_on_the_button_is_consistent() -> None:
    """A scorekeeper enters a roll that scores nothing as just the pass button: that turn leaves
    no roll in the record, and the roll-off is still followed correctly."""
    rules = preset("individual")
    entries = [Tally("point"), Pass(), Pass(), Pass(), Pass(),  # p1 1, the others 0
               RingBell(), Bell(),  # nobody is rolling: p2, p3, p4 roll off for who moves
               Pass(), Tally("point"), Pass(), Tally("point"), Pass()]  # p2 0, p3 1, p4 1
    night, record = button_night(rules, entries)
    table = record["rounds"][0]["tables"][0]
    assert table["losers"] == ["p2"] and table["rolloffs"] == 1
    assert audit_record(record, rules) == []
    table["losers"], table["winners"] = ["p3"], ["p1", "p2", "p4"]
    only(audit_record(record, rules), "the rolls give winners ['p1', 'p3', 'p4']")


def core_with_wipeout():
    text = preset_text("core").replace("[wipeout]\nenabled = false", "[wipeout]\nenabled = true")
    text = text.replace('targets = [1, 2, 3, 4, 5, 6]       # "There are six rounds in each set"',
                        "targets = [2, 3, 4, 5, 6]")
    return parse_rules(text)


FUZZ_RULES = [preset(n) for n in PRESET_NAMES] + [core_with_wipeout()]


def messy_night(rules, players: int, seed: int, host: bool = False):
    """A night played through every kind of entry a box can send: dice, buttons, the pass
    button, undo, the host's bell; entries the night refuses are left out, as a box's are.
    ``host``: the host also seats late arrivals, lets players leave, closes rounds held up by
    a table, and may end the night early."""
    rng = random.Random(seed)
    roster = make_players(players)
    seating = initial_seating([p.id for p in roster], rng.sample(range(len(roster)), len(roster)))
    night = Night.start(rules, roster, seating)
    log = []

    def play(event) -> None:
        nonlocal night
        try:
            night = night.apply(event)
        except RuleViolation:
            return
        log.append(event)

    def dice():
        return (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))

    for _ in range(30000):
        phase = night.phase
        if phase == PRIZES:
            play(SettlePrizes(rng.getrandbits(32)))
            break
        if phase in (READY, BREAK, RESULTS):
            if host and rng.random() < 0.3:
                who = rng.choice(night.players)
                if rng.random() < 0.03:
                    play(EndNight())
                elif who.ghost:
                    play(Arrive(who.id, f"Late {len(log)}"))
                else:
                    play(Leave(who.id))
                continue
            play({READY: StartRound(), BREAK: EndBreak(), RESULTS: NextRound()}[phase])
            continue
        if night.all_tables_done:
            play(CloseRound())
            continue
        table = rng.randint(1, len(night.tables))
        r = rng.random()
        if r < 0.6:
            entry = Roll(dice())
        elif r < 0.7:
            entry = Tally(rng.choice(["point", "three", "bunco", "wipeout"]), rng.choice([None, 2, 5]))
        elif r < 0.78:
            entry = Pass()
        elif r < 0.86:
            entry = Undo()
        elif r < 0.88:
            play(RingBell())
            continue
        elif host and r < 0.885:
            play(CloseHeldRound())  # refused where every table has finished
            continue
        else:  # a table hears the bell only once it has rung
            entry = Bell() if night.bell_rung else Roll((rng.randint(1, 6),) * 3)
        play(TableEntry(table, entry))
    assert night.phase == ENDED
    return night, log


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(FUZZ_RULES), st.integers(1, 14), st.integers(0, 2**32 - 1))
def test_any_mix_of_entries_gives_a_record_the_audit_agrees_with(rules, players, seed) -> None:
    night, log = messy_night(rules, players, seed)
    record = build_record(night, log, seed=seed)
    assert audit_record(record, rules) == []
    assert replay(record, rules) == night


HELD_RULES = [parse_rules(preset_text(n).replace('held_table = "as-it-stands"',
                                                  f'held_table = "{held}"'))
              for n in PRESET_NAMES for held in ("as-it-stands", "no-result")]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(HELD_RULES), st.integers(1, 14), st.integers(0, 2**32 - 1))
def test_held_rounds_and_seat_changes_give_a_record_the_audit_agrees_with(rules, players,
                                                                         seed) -> None:
    night, log = messy_night(rules, players, seed, host=True)
    record = build_record(night, log, seed=seed)
    assert audit_record(record, rules) == []
    assert replay(record, rules) == night


def test_individual_roll_off_sessions_are_told_apart_when_a_turn_leaves_no_roll() -> None:
    """Three tied on 0 roll off; the second passes without scoring, so her first roll in the
    record belongs to the second session: the audit must not count it in the first."""
    rules = preset("individual")
    entries = [Tally("bunco"),  # p1 21: the round ends, p2, p3, p4 tie on 0
               Tally("point"), Pass(),  # session 1: p2 1
               Pass(), Pass(),  # p3 and p4 score nothing (no roll in the record): they tie again
               Tally("three", 5), Pass(),  # session 2: p3 5
               Tally("point"), Tally("point"), Pass()]  # p4 2: she moves, not p2
    night, record = button_night(rules, entries)
    table = record["rounds"][0]["tables"][0]
    assert table["rolloffs"] == 2 and table["losers"] == ["p4"]
    assert audit_record(record, rules) == []
    # moving p4's rolls into the first session settles it there (p3 lowest): p4 is not the mover
    for roll in table["rolls"]:
        if roll["player"] == "p4":
            roll["session"] = 1
    only(audit_record(record, rules), "roll-off session 1, the turn order says 2")
