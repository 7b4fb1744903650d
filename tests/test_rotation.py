"""Who moves where after a round: each rule text's rotation sentences, and permutation laws."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bunco_pi.rules.house import parse_rules, preset, preset_text
from bunco_pi.rules.rotation import Move, TableOutcome, initial_seating, next_seating

CLASSIC = preset("classic")
CORE = preset("core")
ROTATE = preset("rotate")
INDIVIDUAL = preset("individual")
NO_SPLIT = {
    name: parse_rules(preset_text(name).replace("split_partners = true", "split_partners = false"))
    for name in ("classic", "core", "rotate")
}


def tables(count: int) -> list[tuple[str, str, str, str]]:
    return [tuple(f"t{t}s{s}" for s in range(1, 5)) for t in range(1, count + 1)]


def outcome(seats, winning_team: str) -> TableOutcome:
    a, b = (seats[0], seats[2]), (seats[1], seats[3])
    return TableOutcome(seats, *((a, b) if winning_team == "A" else (b, a)))


def teams(seats) -> set[frozenset[str]]:
    return {frozenset((seats[0], seats[2])), frozenset((seats[1], seats[3]))}


def where(seating) -> dict[str, tuple[int, int]]:
    """player -> (table 1.., seat 1..)"""
    return {p: (t + 1, s + 1) for t, seats in enumerate(seating) for s, p in enumerate(seats)}


# --- 000 classic: head winners stay, head losers to the middle ----------------------------------


def test_classic_rotation_for_head_middle_and_losing_tables() -> None:
    head, middle, low = tables(3)
    out = [outcome(head, "A"), outcome(middle, "B"), outcome(low, "A")]
    seating, moves = next_seating(CLASSIC, out)
    at = where(seating)
    # "The winning team stays at the Head table."
    assert at["t1s1"][0] == 1 and at["t1s3"][0] == 1
    # "Have one teammate move over a chair so they will have different partners"
    assert at["t1s1"] == (1, 1) and at["t1s3"] == (1, 2)
    # "The losing team from the Head table goes down to the Middle table."
    assert at["t1s2"][0] == 2 and at["t1s4"][0] == 2
    # "The winning team from the Middle table goes to the Head table"
    assert at["t2s2"][0] == 1 and at["t2s4"][0] == 1
    # "... and the winning team from the Losing table goes to the Middle table."
    assert at["t3s1"][0] == 2 and at["t3s3"][0] == 2
    # "The losing team from the Middle table goes down to the Losing table"
    assert at["t2s1"][0] == 3 and at["t2s3"][0] == 3
    # "the losing team at the Losing table stays at the table but one player moves over one chair"
    assert at["t3s2"] == (3, 2) and at["t3s4"] == (3, 3)
    # "Do not stay with your partner": nobody keeps a partner
    old = set().union(*(teams(s) for s in (head, middle, low)))
    assert not old & set().union(*(teams(s) for s in seating))
    assert {m.player: (m.to_table, m.to_seat) for m in moves} == at
    assert Move("t1s2", 1, *at["t1s2"]) in moves


def test_classic_with_two_tables_head_losers_and_low_winners_swap() -> None:
    head, low = tables(2)
    seating, _ = next_seating(CLASSIC, [outcome(head, "B"), outcome(low, "B")])
    assert {p for p in seating[0]} == {"t1s2", "t1s4", "t2s2", "t2s4"}
    assert {p for p in seating[1]} == {"t1s1", "t1s3", "t2s1", "t2s3"}


def test_one_table_everyone_stays_and_partners_change() -> None:
    (only,) = tables(1)
    for rules in (CLASSIC, CORE, ROTATE):
        seating, _ = next_seating(rules, [outcome(only, "A")])
        assert set(seating[0]) == set(only) and not teams(seating[0]) & teams(only)


# --- 002 core: head losers to the low table ----------------------------------------------------


def test_core_winners_move_up_and_the_losing_team_from_the_high_table_moves_to_the_low_table() -> None:
    head, middle, low = tables(3)
    seating, _ = next_seating(CORE, [outcome(head, "A"), outcome(middle, "A"), outcome(low, "B")])
    at = where(seating)
    assert {at[p][0] for p in ("t1s1", "t1s3")} == {1}  # head winners stay
    assert {at[p][0] for p in ("t2s1", "t2s3")} == {1}  # middle winners move up
    assert {at[p][0] for p in ("t3s2", "t3s4")} == {2}  # low winners move up
    assert {at[p][0] for p in ("t1s2", "t1s4")} == {3}  # head losers to low
    assert {at[p][0] for p in ("t2s2", "t2s4")} == {2}  # middle losers stay
    assert {at[p][0] for p in ("t3s1", "t3s3")} == {3}  # low losers stay
    # "During the switch partners are changed."
    old = set().union(*(teams(s) for s in (head, middle, low)))
    assert not old & set().union(*(teams(s) for s in seating))


# --- 003 rotate: winners rotate, losers stay ---------------------------------------------------


def test_rotate_winners_go_head_to_2_to_3_to_head_and_losers_stay() -> None:
    head, two, three = tables(3)
    seating, _ = next_seating(ROTATE, [outcome(head, "A"), outcome(two, "B"), outcome(three, "A")])
    at = where(seating)
    # "los ganadores de la mesa principal pasan a la mesa 2, los ganadores de la mesa 2 pasan a
    #  la mesa 3 y los ganadores de la mesa 3 pasan a la mesa principal"
    assert {at[p][0] for p in ("t1s1", "t1s3")} == {2}
    assert {at[p][0] for p in ("t2s2", "t2s4")} == {3}
    assert {at[p][0] for p in ("t3s1", "t3s3")} == {1}
    # "Los equipos perdedores de cada mesa se quedan en esa mesa."
    assert {at[p][0] for p in ("t1s2", "t1s4")} == {1}
    assert {at[p][0] for p in ("t2s1", "t2s3")} == {2}
    assert {at[p][0] for p in ("t3s2", "t3s4")} == {3}


def test_rotate_player_1_stays_put_and_player_3_moves_to_player_2s_seat() -> None:
    head, two, three = tables(3)
    seating, _ = next_seating(ROTATE, [outcome(head, "B"), outcome(two, "B"), outcome(three, "B")])
    at = where(seating)
    for t in (1, 2, 3):
        assert at[f"t{t}s1"] == (t, 1)
        assert at[f"t{t}s3"] == (t, 2)
    assert not teams(seating[1]) & teams(two)


# --- 004 individual: the lowest scorer moves to the next group ---------------------------------


def test_individual_the_player_with_the_lowest_score_moves_to_the_next_group() -> None:
    groups = tables(3)
    out = [TableOutcome(s, tuple(p for p in s if p != s[i]), (s[i],)) for i, s in enumerate(groups)]
    seating, moves = next_seating(INDIVIDUAL, out)
    # each mover takes the seat the mover of the next group left
    assert seating[1] == ("t2s1", "t1s1", "t2s3", "t2s4")
    assert seating[2] == ("t3s1", "t3s2", "t2s2", "t3s4")
    assert seating[0] == ("t3s3", "t1s2", "t1s3", "t1s4")
    assert sum(1 for m in moves if m.from_table != m.to_table) == 3


# --- without splitting -------------------------------------------------------------------------


def test_without_split_partners_a_staying_pair_stays_partners() -> None:
    head, middle, low = tables(3)
    seating, _ = next_seating(NO_SPLIT["classic"], [outcome(head, "A"), outcome(middle, "A"),
                                                    outcome(low, "A")])
    assert frozenset(("t1s1", "t1s3")) in teams(seating[0])


# --- initial seating ---------------------------------------------------------------------------


def test_initial_seating_follows_the_draw() -> None:
    players = [f"p{i}" for i in range(8)]
    seating = initial_seating(players, [7, 6, 5, 4, 3, 2, 1, 0])
    assert seating == (("p7", "p6", "p5", "p4"), ("p3", "p2", "p1", "p0"))
    with pytest.raises(ValueError):
        initial_seating(players, [0, 0, 1, 2, 3, 4, 5, 6])
    with pytest.raises(ValueError):
        initial_seating(players[:6], list(range(6)))


# --- properties --------------------------------------------------------------------------------

SCHEMES = [CLASSIC, CORE, ROTATE, *NO_SPLIT.values()]


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 50), st.sampled_from(SCHEMES), st.integers(0, 2**32 - 1))
def test_next_seating_is_a_permutation_and_splits_partners(count: int, rules, seed: int) -> None:
    rnd = random.Random(seed)
    seating = [tuple(rnd.sample(s, 4)) for s in tables(count)]
    out = [outcome(s, rnd.choice("AB")) for s in seating]
    new, moves = next_seating(rules, out)
    assert len(new) == count and all(len(s) == 4 for s in new)
    flat = [p for s in new for p in s]
    assert sorted(flat) == sorted(p for s in seating for p in s)
    assert len(moves) == 4 * count
    if rules.rotation.split_partners:
        old = set().union(*(teams(s) for s in seating))
        assert not old & set().union(*(teams(s) for s in new))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_individual_seating_is_a_permutation_moving_one_player_per_group(count: int, seed: int) -> None:
    rnd = random.Random(seed)
    seating = tables(count)
    out = []
    for s in seating:
        loser = rnd.choice(s)
        out.append(TableOutcome(s, tuple(p for p in s if p != loser), (loser,)))
    new, moves = next_seating(INDIVIDUAL, out)
    assert sorted(p for s in new for p in s) == sorted(p for s in seating for p in s)
    for t, (before, after) in enumerate(zip(seating, new, strict=True)):
        assert sum(a != b for a, b in zip(before, after, strict=True)) == (1 if count > 1 else 0)
        assert out[(t - 1) % count].losers[0] in after
