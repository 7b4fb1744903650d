"""Scoring one roll, sentence by sentence from the rule texts, and against a plain formula."""

from itertools import product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunco_pi.rules.house import parse_rules, preset, preset_text
from bunco_pi.rules.scoring import check_dice, outcome_table, score_roll, score_tally

CLASSIC = preset("classic")
CORE = preset("core")
ROTATE = preset("rotate")
INDIVIDUAL = preset("individual")
WIPEOUT = parse_rules(
    preset_text("core")
    .replace("enabled = false                    # optional", "enabled = true  # optional")
    .replace('targets = [1, 2, 3, 4, 5, 6]       # "There are six', 'targets = [2, 3, 4, 5, 6]  # "'),
    "core+wipeout",
)
WIPEOUT_ENDS_TURN = parse_rules(
    preset_text("core")
    .replace("enabled = false                    # optional", "enabled = true  # optional")
    .replace("ends_turn = false", "ends_turn = true")
    .replace('targets = [1, 2, 3, 4, 5, 6]       # "There are six', 'targets = [2, 3, 4, 5, 6]  # "'),
    "core+wipeout ending the turn",
)


def test_wipeout_variant_is_built_from_the_core_preset() -> None:
    assert WIPEOUT.wipeout.enabled and not WIPEOUT.wipeout.ends_turn
    assert WIPEOUT.night.targets == (2, 3, 4, 5, 6)
    assert WIPEOUT_ENDS_TURN.wipeout.ends_turn


# --- 000 classic -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", range(1, 7))
def test_classic_if_1_of_the_die_shows_the_number_up_tally_1_point_if_2_tally_2(target: int) -> None:
    other = target % 6 + 1
    third = other % 6 + 1
    one = score_roll((target, other, third), target, CLASSIC)
    two = score_roll((target, target, other), target, CLASSIC)
    assert (one.points, one.continues, one.target_dice) == (1, True, 1)
    assert (two.points, two.continues, two.target_dice) == (2, True, 2)
    assert not one.bunco and not two.bunco


@pytest.mark.parametrize("target", range(1, 7))
def test_classic_three_of_a_kind_of_the_number_up_is_a_bunco_21_keep_rolling(target: int) -> None:
    out = score_roll((target, target, target), target, CLASSIC)
    assert out.bunco and out.points == 21 and out.continues
    # "the fuzzy die is passed from player to player as BUNCO'S are rolled"
    assert out.travels


@pytest.mark.parametrize(("face", "target"), [(f, t) for f in range(1, 7) for t in range(1, 7) if f != t])
def test_classic_three_of_a_kind_of_another_number_give_your_team_5_points_and_keep_rolling(
        face: int, target: int) -> None:
    out = score_roll((face, face, face), target, CLASSIC)
    assert out.points == 5 and out.continues and out.three_of_a_kind
    assert not out.bunco and not out.travels and not out.baby_bunco


def test_classic_if_you_do_not_roll_the_number_up_the_person_to_your_left_takes_their_turn() -> None:
    out = score_roll((2, 3, 4), 1, CLASSIC)
    assert out.points == 0 and not out.continues


# --- 002 core ----------------------------------------------------------------------------------


def test_core_rolling_in_round_1_earns_2_in_round_2_one_in_rounds_3_to_6_none() -> None:
    # the text's example roll is two ones and a two
    roll = (1, 1, 2)
    assert score_roll(roll, 1, CORE).points == 2
    assert score_roll(roll, 2, CORE).points == 1
    assert [score_roll(roll, t, CORE).points for t in (3, 4, 5, 6)] == [0, 0, 0, 0]


def test_core_five_points_for_three_of_a_kind_of_any_number_except_the_target() -> None:
    assert score_roll((3, 3, 3), 2, CORE).points == 5
    assert score_roll((3, 3, 3), 3, CORE).points == 21  # "Rolling BUNCO is worth 21 points"


def test_core_the_player_rolls_as_long_as_they_score_one_or_more_points() -> None:
    for dice in product(range(1, 7), repeat=3):
        out = score_roll(dice, 4, CORE)
        assert out.continues == (out.points > 0)


def test_wipeout_three_ones_loses_the_round_points_and_optionally_the_turn() -> None:
    for target in WIPEOUT.night.targets:
        out = score_roll((1, 1, 1), target, WIPEOUT)
        assert out.wipeout and out.points == 0 and out.continues and not out.three_of_a_kind
        ends = score_roll((1, 1, 1), target, WIPEOUT_ENDS_TURN)
        assert ends.wipeout and not ends.continues
    # without wipeout three 1s are just three of a kind
    assert score_roll((1, 1, 1), 2, CORE).points == 5


# --- 003 rotate --------------------------------------------------------------------------------


def test_rotate_each_time_a_player_rolls_the_rounds_number_the_team_gets_a_point() -> None:
    assert score_roll((4, 4, 2), 4, ROTATE).points == 2
    # a BUNCO is the dice alone (3) in the basic game
    out = score_roll((4, 4, 4), 4, ROTATE)
    assert out.bunco and out.points == 3 and out.travels


def test_rotate_baby_buncos_are_worth_no_points_but_are_tracked() -> None:
    out = score_roll((5, 5, 5), 2, ROTATE)
    assert out.baby_bunco and out.points == 0
    # "Cuando un jugador deja de tirar el numero de la ronda ... el dado pasa"
    assert not out.continues


def test_rotate_funko_variation_a_baby_bunco_is_worth_5_points() -> None:
    text = preset_text("rotate").replace("three_of_a_kind_points = 0", "three_of_a_kind_points = 5")
    funko = parse_rules(text)
    out = score_roll((5, 5, 5), 2, funko)
    assert out.baby_bunco and out.points == 5


# --- 004 individual ----------------------------------------------------------------------------


def test_individual_3_of_a_kind_not_the_current_number_5_points_and_continues() -> None:
    out = score_roll((6, 6, 6), 3, INDIVIDUAL)
    assert out.points == 5 and out.continues


def test_individual_travel_is_rolling_all_2s_unless_we_are_rolling_for_2s() -> None:
    assert score_roll((2, 2, 2), 1, INDIVIDUAL).travels
    assert score_roll((2, 2, 2), 5, INDIVIDUAL).travels
    twos = score_roll((2, 2, 2), 2, INDIVIDUAL)
    assert twos.bunco and not twos.travels
    # a bunco of another number is not a travel
    assert not score_roll((4, 4, 4), 4, INDIVIDUAL).travels
    assert not score_roll((3, 3, 3), 1, INDIVIDUAL).travels


# --- tallies and bad dice ----------------------------------------------------------------------


def test_tallies_score_like_the_rolls_they_stand_for() -> None:
    assert score_tally("point", 3, CLASSIC).points == 1
    assert score_tally("bunco", 3, CLASSIC) == score_roll((3, 3, 3), 3, CLASSIC)
    assert score_tally("three", 3, CLASSIC, face=5).points == 5
    assert score_tally("three", 1, INDIVIDUAL, face=2).travels
    assert not score_tally("three", 1, INDIVIDUAL, face=4).travels
    assert score_tally("wipeout", 3, WIPEOUT).wipeout


@pytest.mark.parametrize(("kind", "face", "rules"), [
    ("three", 3, CLASSIC), ("wipeout", None, CLASSIC), ("double", None, CLASSIC)])
def test_impossible_tallies_are_refused(kind: str, face: int | None, rules) -> None:
    with pytest.raises(ValueError):
        score_tally(kind, 3, rules, face)


@pytest.mark.parametrize(
    "dice", [(0, 1, 2), (1, 2, 7), (1, 2), (1, 2, 3, 4), (True, 1, 1), "123", (1.0, 2, 3)])
def test_bad_dice_are_refused(dice: object) -> None:
    with pytest.raises(ValueError):
        check_dice(dice)
    with pytest.raises(ValueError):
        score_roll(dice, 1, CLASSIC)  # type: ignore[arg-type]


def test_dice_as_a_list_are_accepted() -> None:
    assert check_dice([1, 2, 3]) == (1, 2, 3)


# --- every roll against an independent formula -------------------------------------------------

ALL_ROLLS = list(product(range(1, 7), repeat=3))


def expected_points(dice: tuple[int, int, int], target: int, rules) -> tuple[int, bool]:
    s = rules.scoring
    hits = dice.count(target)
    if hits == 3:
        return s.bunco_points, True
    if len(set(dice)) == 1:
        if dice[0] == 1 and rules.wipeout.enabled:
            return 0, not rules.wipeout.ends_turn
        pts = s.three_of_a_kind_points
        return pts, pts > 0 and s.turn_continues == "any-points"
    return hits * s.points_per_target_die, hits > 0


@pytest.mark.parametrize("rules", [CLASSIC, CORE, ROTATE, INDIVIDUAL, WIPEOUT, WIPEOUT_ENDS_TURN],
                         ids=lambda r: r.name)
def test_all_216_rolls_times_6_targets_match_a_plain_formula(rules) -> None:
    checked = 0
    for target in range(1, 7):
        table = outcome_table(rules, target)
        assert len(table) == 216
        for dice in ALL_ROLLS:
            out = score_roll(dice, target, rules)
            assert table[dice] == out
            assert (out.points, out.continues) == expected_points(dice, target, rules), (dice, target)
            assert out.bunco == (dice.count(target) == 3)
            checked += 1
    assert checked == 216 * 6


@given(st.tuples(*[st.integers(1, 6)] * 3), st.integers(1, 6),
       st.integers(0, 9), st.integers(0, 40), st.integers(0, 9), st.booleans())
def test_scoring_follows_the_numbers_in_the_rules(dice, target, per_die, bunco, three, baby) -> None:
    text = (f"name = 'x'\n[scoring]\npoints_per_target_die = {per_die}\nbunco_points = {bunco}\n"
            f"three_of_a_kind_points = {three}\nbaby_bunco = {str(baby).lower()}\n")
    rules = parse_rules(text)
    out = score_roll(dice, target, rules)
    assert (out.points, out.continues) == expected_points(dice, target, rules)
    assert out.baby_bunco == (baby and len(set(dice)) == 1 and dice[0] != target)
