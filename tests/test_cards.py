"""Score cards: W and L, bunco points, baby buncos, wipeouts and weighted head-table marks."""

from bunco_pi.rules.cards import ScoreCard, add_round, credited_player
from bunco_pi.rules.house import parse_rules, preset, preset_text
from bunco_pi.rules.table_round import Bell, Roll, TableRound, TableSetup

CLASSIC = preset("classic")
CORE = preset("core")
ROTATE = preset("rotate")
INDIVIDUAL = preset("individual")
SEATS = ("ann", "bea", "cat", "dot")


def finished(rules, target, rolls, *, table=2, seats=SEATS, ghosts=(), after_bell=()) -> TableRound:
    t = TableRound.begin(TableSetup(table, seats, target, rules, can_end_round=table == 1,
                                    ghosts=frozenset(ghosts)))
    for dice in rolls:
        t = t.apply(Roll(dice))
    if not t.done:
        t = t.apply(Bell())
    for dice in after_bell:
        t = t.apply(Roll(dice))
    assert t.done
    return t


def cards_after(t: TableRound, rules, players=None) -> dict[str, ScoreCard]:
    cards = {p: ScoreCard() for p in (players or [p for p in t.setup.seats if p not in t.setup.ghosts])}
    add_round(cards, t.setup, t.rolls, t.result.winners, t.result.losers, rules)
    return cards


def test_classic_give_yourself_not_your_teammate_one_bunco_point() -> None:
    t = finished(CLASSIC, 2, [(2, 2, 2), (2, 2, 2), (1, 3, 4)])
    cards = cards_after(t, CLASSIC)
    assert cards["ann"].buncos == 2 and cards["cat"].buncos == 0
    assert cards["ann"].points == 42 and cards["cat"].points == 0


def test_classic_write_w_or_l_on_your_own_score_sheet() -> None:
    t = finished(CLASSIC, 1, [(1, 3, 4), (3, 4, 5)])
    cards = cards_after(t, CLASSIC)
    assert [(cards[p].wins, cards[p].losses) for p in SEATS] == [(1, 0), (0, 1), (1, 0), (0, 1)]
    # cards add up over rounds
    add_round(cards, t.setup, t.rolls, t.result.winners, t.result.losers, CLASSIC)
    assert cards["ann"].wins == 2 and cards["bea"].losses == 2


def test_classic_ghost_her_teammate_gets_the_bunco_point() -> None:
    seats = ("ann", "ghost", "cat", "dot")
    t = finished(CLASSIC, 3, [(1, 2, 4), (3, 3, 3)], table=1, seats=seats, ghosts={"ghost"})
    assert t.ended_round
    assert credited_player(t.setup, t.rolls[-1]) == "dot"
    cards = cards_after(t, CLASSIC)
    assert "ghost" not in cards and cards["dot"].buncos == 1 and cards["dot"].wins == 1


def test_a_ghost_whose_teammate_is_a_ghost_credits_nobody() -> None:
    seats = ("ann", "g1", "cat", "g2")
    t = finished(CLASSIC, 3, [(1, 2, 4), (3, 3, 3)], table=1, seats=seats, ghosts={"g1", "g2"})
    assert credited_player(t.setup, t.rolls[-1]) is None
    assert sum(c.buncos for c in cards_after(t, CLASSIC).values()) == 0


def test_core_only_the_player_that_actually_rolled_the_bunco_gets_credit() -> None:
    t = finished(CORE, 5, [(1, 2, 3), (5, 5, 5), (1, 2, 3), (1, 2, 3), (1, 2, 3)])
    cards = cards_after(t, CORE)
    assert cards["bea"].buncos == 1 and cards["dot"].buncos == 0


def test_core_each_red_w_counts_as_2_and_each_red_l_as_two() -> None:
    head = finished(CORE, 6, [(6, 6, 6), (1, 1, 1), (1, 1, 2), (1, 1, 3)], table=1)
    cards = cards_after(head, CORE)
    assert (cards["ann"].wins, cards["ann"].weighted_wins) == (1, 2)
    assert (cards["bea"].losses, cards["bea"].weighted_losses) == (1, 2)
    # "Blue and black W's and L's count as one each."
    low = finished(CORE, 6, [(6, 1, 2), (1, 2, 3), (1, 2, 3), (1, 2, 3), (1, 2, 3)], table=3)
    add_round(cards, low.setup, low.rolls, low.result.winners, low.result.losers, CORE)
    assert (cards["ann"].wins, cards["ann"].weighted_wins) == (2, 3)
    assert (cards["bea"].losses, cards["bea"].weighted_losses) == (2, 3)


def test_wipeouts_are_counted_on_the_card() -> None:
    text = preset_text("core").replace("[wipeout]\nenabled = false", "[wipeout]\nenabled = true")
    text = text.replace('targets = [1, 2, 3, 4, 5, 6]       # "There are six rounds in each set"',
                        "targets = [2, 3, 4, 5, 6]")
    rules = parse_rules(text)
    # core: everyone who has not rolled gets one roll after the bell
    t = finished(rules, 2, [(2, 3, 4), (1, 1, 1), (3, 4, 5)], after_bell=[(2, 5, 6), (3, 4, 5), (3, 4, 5)])
    cards = cards_after(t, rules)
    assert cards["ann"].wipeouts == 1 and cards["ann"].points == 0


def test_rotate_baby_buncos_are_marked_on_the_card() -> None:
    t = finished(ROTATE, 2, [(2, 1, 3), (4, 4, 4), (5, 5, 5)])
    cards = cards_after(t, ROTATE)
    assert cards["ann"].baby_buncos == 1 and cards["bea"].baby_buncos == 1
    assert cards["ann"].points == 1 and cards["bea"].points == 0


def test_rotate_the_ghost_collects_only_points_not_buncos_or_baby_buncos() -> None:
    seats = ("ann", "ghost", "cat", "dot")
    t = finished(ROTATE, 2, [(1, 3, 4), (2, 2, 1), (2, 2, 2), (4, 4, 4), (1, 3, 4), (1, 3, 4)],
                 seats=seats, ghosts={"ghost"})
    cards = cards_after(t, ROTATE)
    assert t.player_score("ghost") == 5 and t.team_scores == (0, 5)
    assert t.rolls[2].outcome.bunco and t.rolls[3].outcome.baby_bunco
    assert all(c.buncos == 0 and c.baby_buncos == 0 for c in cards.values())
    assert credited_player(t.setup, t.rolls[2]) is None


def test_individual_any_bunkoes_rolled_for_the_ghost_do_not_count() -> None:
    seats = ("ann", "ghost", "cat", "dot")
    t = finished(INDIVIDUAL, 4, [(1, 2, 3), (4, 4, 4), (1, 2, 3)], seats=seats, ghosts={"ghost"})
    cards = cards_after(t, INDIVIDUAL)
    assert all(c.buncos == 0 for c in cards.values())
    assert t.result.losers == ("ghost",)  # and the ghost moves


def test_roll_off_points_are_not_round_points() -> None:
    t = TableRound.begin(TableSetup(2, SEATS, 1, CLASSIC, False))
    for dice in [(1, 2, 3), (2, 3, 4), (1, 3, 4), (2, 3, 4)]:
        t = t.apply(Roll(dice))
    t = t.apply(Bell())
    for dice in [(1, 1, 1), (1, 1, 2), (2, 3, 4), (2, 3, 4), (2, 3, 4), (2, 3, 4)]:
        t = t.apply(Roll(dice))
    assert t.done and t.result.rolloff_sessions == 1
    cards = cards_after(t, CLASSIC)
    assert cards["ann"].points == 1 and cards["ann"].buncos == 1  # a bunco in a roll-off still counts
    assert cards["ann"].as_dict()["points"] == 1


def test_players_not_on_the_cards_are_left_alone() -> None:
    t = finished(CLASSIC, 1, [(1, 3, 4), (3, 4, 5)])
    cards = {"ann": ScoreCard(), "zed": ScoreCard(wins=4)}
    add_round(cards, t.setup, t.rolls, t.result.winners, t.result.losers, CLASSIC)
    assert cards["zed"] == ScoreCard(wins=4) and cards["ann"].wins == 1
