"""Each preset plays its rule text: ghosts' partners and credit, roll-off turns, called Bunkos,
and a scorekeeper who enters every outcome the rules count. Each test quotes its sentence."""

import dataclasses
from itertools import product

import pytest

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.cards import ScoreCard, add_round
from bunco_pi.rules.house import PRESET_NAMES, parse_rules, preset, preset_text
from bunco_pi.rules.night import Night
from bunco_pi.rules.record import build_record
from bunco_pi.rules.rotation import TableOutcome, next_seating
from bunco_pi.rules.table_round import (
    ROLLOFF,
    Bell,
    Pass,
    Roll,
    TableRound,
    TableSetup,
    Tally,
)
from bunco_pi.sim.players import make_players, simulate_night
from bunco_pi.table.simulated_scorekeeper import presses_for

SEATS = ("ann", "bea", "cat", "dot")  # ann & cat are partners, bea & dot


def table(rules, target=1, head=False, seats=SEATS, ghosts=()) -> TableRound:
    return TableRound.begin(TableSetup(1 if head else 2, seats, target, rules,
                                       can_end_round=head, ghosts=frozenset(ghosts)))


def ghost_pairs(seating, ghosts) -> list:
    return [(s[i], s[i + 2]) for s in seating for i in (0, 1)
            if s[i] in ghosts and s[i + 2] in ghosts]


# --- 003: "El jugador con el fantasma por compañero tira por el fantasma" ----------------------


@pytest.mark.parametrize(("players", "seed"), [(10, 3), (10, 0), (13, 1), (13, 4), (14, 2)])
def test_rotate_the_player_with_the_ghost_as_partner_rolls_for_her_so_ghosts_never_pair(
        players, seed) -> None:
    """003: "El jugador con el fantasma por compañero tira por el fantasma": every ghost has a
    real partner, in every round (10 players, seed 3 once seated ghost2 with ghost1)."""
    rules = preset("rotate")
    sim = simulate_night(rules, players, seed)
    ghosts = sim.night.ghosts
    assert ghosts
    for rnd in sim.night.history:
        assert ghost_pairs([t.seats for t in rnd.tables], ghosts) == [], (rnd.set, rnd.round)
    assert audit_record(build_record(sim.night, sim.log, seed=seed), rules) == []


def test_rotate_a_drawn_ghost_pair_is_split_at_the_start_even_three_ghosts_at_one_table() -> None:
    """003: "El jugador con el fantasma por compañero tira por el fantasma"."""
    roster = make_players(13)  # ghost1..ghost3
    ids = [p.id for p in roster]
    drawn = [("ghost1", "p1", "ghost2", "ghost3"), tuple(ids[1:5]), tuple(ids[5:9]),
             tuple(ids[9:13])]
    night = Night.start(preset("rotate"), roster, drawn)
    assert ghost_pairs(night.seating, night.ghosts) == []
    assert sorted(p for s in night.seating for p in s) == sorted(ids)
    # classic has no such sentence: "The ghost moves from chair to chair like any player would"
    assert Night.start(preset("classic"), roster, drawn).seating == tuple(drawn)


def test_rotate_winners_arriving_beside_a_staying_ghost_are_seated_so_the_ghosts_oppose() -> None:
    """003: "El jugador con el fantasma por compañero tira por el fantasma": losers stay, the
    winners arrive, and if that would make two ghosts partners they sit the other way round
    (the arriving ghost beside the staying one), so partners still all change."""
    rules = preset("rotate")
    head = TableOutcome(("p1", "g2", "p3", "p4"), winners=("g2", "p4"), losers=("p1", "p3"))
    low = TableOutcome(("g1", "p5", "p6", "p7"), winners=("p5", "p7"), losers=("g1", "p6"))
    plain = dataclasses.replace(rules, ghost=dataclasses.replace(rules.ghost, real_partner=False))
    before, _ = next_seating(plain, [head, low], frozenset({"g1", "g2"}))
    assert ghost_pairs(before, {"g1", "g2"}) == [("g1", "g2")]
    seating, moves = next_seating(rules, [head, low], frozenset({"g1", "g2"}))
    assert ghost_pairs(seating, {"g1", "g2"}) == []
    assert seating[1] == ("g1", "p6", "p4", "g2")
    assert {(m.player, m.to_table, m.to_seat) for m in moves} >= {("g2", 2, 4), ("p4", 2, 3)}


# --- 002: "Only the player that actually rolled the BUNCO gets credit." ------------------------


def ghost_bunco_cards(rules) -> dict[str, ScoreCard]:
    t = table(rules, target=2, seats=("ghost1", "bea", "cat", "dot"), ghosts={"ghost1"})
    for dice in [(2, 2, 2), (1, 3, 4), (1, 3, 4), (1, 3, 4), (1, 3, 4)]:
        t = t.apply(Roll(dice))
    t = t.apply(Bell())
    assert t.done and t.rolls[0].outcome.bunco and t.team_scores[0] == 21
    cards = {p: ScoreCard() for p in ("bea", "cat", "dot")}
    add_round(cards, t.setup, t.rolls, t.result.winners, t.result.losers, rules)
    return cards


def test_core_a_ghosts_bunco_goes_on_nobodys_card() -> None:
    """002: "Only the player that actually rolled the BUNCO gets credit. The player's teammate
    does NOT get a score." (002 has no ghost rule, so a ghost's bunco credits nobody.)"""
    assert ghost_bunco_cards(preset("core"))["cat"].buncos == 0  # her partner
    # 000: "If the ghost rolls a Bunco, her team gets the 21 points and her teammate gets the
    # Bunco point."
    assert ghost_bunco_cards(preset("classic"))["cat"].buncos == 1


def test_core_most_buncos_counts_only_buncos_a_player_rolled_herself() -> None:
    """002: "Only the player that actually rolled the BUNCO gets credit." (10 players, seed 7
    once gave p10 Most buncos through her ghost partner's bunco.)"""
    sim = simulate_night(preset("core"), 10, 7)
    rolled: dict[str, int] = {}
    for rnd in sim.night.history:
        for t in rnd.tables:
            for r in t.rolls:
                if r.outcome.bunco and not r.ghost:
                    rolled[r.player] = rolled.get(r.player, 0) + 1
    ghost_buncos = sum(r.outcome.bunco and r.ghost for rnd in sim.night.history
                       for t in rnd.tables for r in t.rolls)
    assert ghost_buncos > 0  # the night has some, and they are on nobody's card
    assert {p: c.buncos for p, c in sim.night.cards.items() if c.buncos} == rolled


# --- 002: a roll-off turn goes on "as long as they are successfully rolling the number" ---------


def tied_table(rules) -> TableRound:
    """A lower table tied 1-1 when the bell comes: a roll-off, seat 1 first."""
    t = table(rules, target=1)
    for dice in [(1, 2, 3), (2, 3, 4), (1, 2, 3), (2, 3, 4), (2, 3, 4), (2, 3, 4)]:
        t = t.apply(Roll(dice))
    t = t.apply(Bell())
    assert t.phase == ROLLOFF and t.roller_seat == 1
    return t


def test_core_a_roll_off_turn_ends_on_three_of_another_number() -> None:
    """002: "This player will continue to roll and accumulate points as long as they are
    successfully rolling the number of that round." Three 2s in the ones round score 5 but
    show no 1: the dice pass."""
    t = tied_table(preset("core")).apply(Roll((2, 2, 2)))
    assert t.rolls[-1].points == 5 and t.rolls[-1].rolloff
    assert t.roller_seat == 2


def test_classic_a_roll_off_turn_is_a_rounds_turn_and_three_of_a_kind_keeps_the_dice() -> None:
    """000: "a Roll-Off is one complete turn around the table ... playing one full round at the
    table while collecting points", and in a round "If you roll three of a kind--of another
    number--give your team 5 points and keep rolling"."""
    t = tied_table(preset("classic")).apply(Roll((2, 2, 2)))
    assert t.roller_seat == 1
    other = parse_rules(preset_text("classic").replace(
        'rolloff_turn_continues = "as-in-round"', 'rolloff_turn_continues = "target-number"'))
    assert tied_table(other).apply(Roll((2, 2, 2))).roller_seat == 2


# --- 004: "When a player rolls a Bunko or reaches 21 points, she should call out, Bunko!" ------


def individual(called: bool):
    return parse_rules(preset_text("individual").replace(
        "called_bunko_counts = false", f"called_bunko_counts = {str(called).lower()}"))


def reach_21(rules) -> TableRound:
    t = table(rules, target=4, head=True)
    for _ in range(10):  # ann: 2 points a roll
        t = t.apply(Roll((4, 4, 1)))
    t = t.apply(Roll((4, 1, 2)))  # 21
    assert t.ended_round
    return t


def settle(t: TableRound) -> TableRound:
    """bea, cat and dot tie on 0 and roll off: bea 1, cat 0, dot 1, so cat moves."""
    for entry in (Roll((4, 1, 2)), Pass(), Pass(), Roll((4, 1, 2)), Pass()):
        t = t.apply(entry)
    assert t.done and t.result.losers == ("cat",)
    return t


def test_individual_a_called_bunko_on_reaching_21_is_a_key() -> None:
    """004: "When a player rolls a Bunko or reaches 21 points, she should call out, "Bunko!" ...
    Players should track the number of Bunkoes they win, as there is a Most Bunkoes Prize.\""""
    for called, expected in ((True, 1), (False, 0)):
        rules = individual(called)
        t = reach_21(rules)
        t = settle(t)
        cards = {p: ScoreCard() for p in SEATS}
        add_round(cards, t.setup, t.rolls, t.result.winners, t.result.losers, rules, True)
        assert cards["ann"].buncos == expected
    assert not preset("individual").score_card.called_bunko_counts  # the preset's choice


def test_individual_a_real_bunko_is_counted_once_whatever_the_key() -> None:
    """004: "When a player rolls a Bunko (3 of the current number at play), she gets to add 21
    points" and calls "Bunko!" once."""
    rules = individual(True)
    t = settle(table(rules, target=4, head=True).apply(Roll((4, 4, 4))))
    cards = {p: ScoreCard() for p in SEATS}
    add_round(cards, t.setup, t.rolls, t.result.winners, t.result.losers, rules, True)
    assert cards["ann"].buncos == 1


# --- the scorekeeper enters every outcome the rules count ---------------------------------------


def press(state: TableRound, role: str) -> TableRound:
    if role == "pass":
        return state.apply(Pass())
    if role == "pass!":
        return state.apply(Tally("wipeout"))
    if role == "three!":
        return state.apply(Tally("three", 2))
    return state.apply(Tally(role))


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_her_presses_count_what_the_dice_count_baby_buncos_and_travels_included(name) -> None:
    """003: "Los Baby BUNCOs no valen puntos pero son premiados al final"; 004: "Travel is
    rolling all 2s, unless we are rolling for 2s": the buttons she presses for every roll give
    the same points, baby buncos, buncos, travels and turn as the dice themselves."""
    rules = preset(name)
    for target, dice in product(rules.night.targets, product(range(1, 7), repeat=3)):
        start = table(rules, target).apply(Tally("point"))
        by_hand = start
        for role in presses_for(dice, start):
            by_hand = press(by_hand, role)
        by_dice = start.apply(Roll(dice))
        assert by_hand.seat_points == by_dice.seat_points, (name, target, dice)
        assert by_hand.roller_seat == by_dice.roller_seat, (name, target, dice)
        counted = [(r.outcome.bunco, r.outcome.baby_bunco, r.outcome.travels)
                   for r in by_hand.rolls[1:] if r.tally != "point"]
        o = by_dice.rolls[-1].outcome
        expected = [(o.bunco, o.baby_bunco, o.travels)] if (o.bunco or o.three_of_a_kind) else []
        assert counted == expected, (name, target, dice)


def test_rotate_a_zero_point_baby_bunco_is_pressed_then_passed() -> None:
    """003: "Cada vez que un jugador saca tres de cualquier número que no sea el de la ronda
    ... obtiene un Baby BUNCO" and "Los Baby BUNCOs no valen puntos"."""
    assert presses_for((5, 5, 5), table(preset("rotate"), 1)) == ["three", "pass"]


def test_individual_three_twos_are_a_held_three() -> None:
    """004: "Travel is rolling all 2s, unless we are rolling for 2s"."""
    assert presses_for((2, 2, 2), table(preset("individual"), 1)) == ["three!"]
    assert presses_for((2, 2, 2), table(preset("individual"), 2)) == ["bunco"]
    assert presses_for((5, 5, 5), table(preset("individual"), 1)) == ["three"]


def test_core_in_a_roll_off_she_passes_after_three_of_another_number() -> None:
    """002: "... continue to roll ... as long as they are successfully rolling the number of
    that round"."""
    assert presses_for((2, 2, 2), tied_table(preset("core"))) == ["three", "pass"]
    assert presses_for((2, 2, 2), tied_table(preset("classic"))) == ["three"]
