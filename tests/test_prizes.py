"""Prizes: each text's amounts, winners and tie-breaks; the cash always pays out the pot."""

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bunco_pi.rules.cards import ScoreCard
from bunco_pi.rules.house import PRESET_NAMES, parse_rules, preset
from bunco_pi.rules.prizes import award_prizes, pot_cents, prize_amounts, settle_tie

CLASSIC = preset("classic")
CORE = preset("core")
ROTATE = preset("rotate")
INDIVIDUAL = preset("individual")


def twelve(**special: ScoreCard) -> dict[str, ScoreCard]:
    cards = {f"p{i}": ScoreCard(wins=12, losses=12) for i in range(1, 13)}
    cards.update(special)
    return cards


def by_name(awards) -> dict[str, object]:
    return {a.name: a for a in awards}


def test_classic_prize_values_equal_the_5_dollar_contribution_of_each_player() -> None:
    # "$20 ... $15 ... $10 ... $8 ... $5 ... $2": exactly the pot of 12 players at $5
    assert prize_amounts(CLASSIC, 12) == [2000, 1500, 1000, 800, 500, 200]
    assert pot_cents(CLASSIC, 12) == 6000


def test_classic_prizes_go_to_the_players_the_text_names() -> None:
    cards = twelve(
        p1=ScoreCard(buncos=5, wins=12, losses=12),   # "the player who roles the most BUNCO'S"
        p2=ScoreCard(wins=20, losses=4),               # "most wins"
        p3=ScoreCard(wins=4, losses=20),               # "most losses"
    )
    cards = {p: (c if p in ("p1", "p2", "p3") else ScoreCard(wins=11, losses=13)) for p, c in cards.items()}
    cards["p5"] = ScoreCard(wins=11, losses=13)
    cards["p6"] = ScoreCard(wins=12, losses=12, buncos=1)
    awards = by_name(award_prizes(CLASSIC, cards, "p4", None, random.Random(1)))
    assert awards["Most buncos"].player == "p1" and awards["Most buncos"].amount_cents == 2000
    assert awards["Most wins"].player == "p2" and awards["Most wins"].amount_cents == 1500
    # "$10 prize for traveling... the player who rolled the last BUNCO and is holding the fuzzy die"
    assert awards["Traveling"].player == "p4" and awards["Traveling"].amount_cents == 1000
    # "$8 prize for 50/50... the player with equal wins and losses" (p1 and p6 are both 12-12)
    assert awards["50/50"].player in ("p1", "p6") and set(awards["50/50"].tied) == {"p1", "p6"}
    assert awards["Most losses"].player == "p3" and awards["Most losses"].amount_cents == 500
    # "Collect the remaining score sheets from players without prizes and host draws a winner."
    home = awards["At least I'm taking something home"]
    winners = {a.player for a in awards.values() if a is not home}
    assert home.amount_cents == 200 and home.player not in winners
    assert len(home.tied) == 12 - len(winners)


def test_prizes_scale_to_pay_out_exactly_the_pot() -> None:
    amounts = prize_amounts(CLASSIC, 8)  # 8 players: $40, not $60
    assert sum(amounts) == 4000 and amounts == sorted(amounts, reverse=True)
    fixed = parse_rules('[prizes]\nscale_to_pot = false\n[[prizes.prize]]\nname = "a"\naward = "most-wins"\n'
                        'amount = 7\n')
    assert prize_amounts(fixed, 8) == [700]


def test_core_most_w_points_not_most_ws_wins() -> None:
    cards = {
        "ann": ScoreCard(wins=10, weighted_wins=11, losses=14, weighted_losses=14),
        "bea": ScoreCard(wins=8, weighted_wins=14, losses=16, weighted_losses=20),
        "cat": ScoreCard(wins=14, weighted_wins=14, losses=10, weighted_losses=10, buncos=1),
        "dot": ScoreCard(wins=9, weighted_wins=9, losses=15, weighted_losses=15),
    }
    awards = by_name(award_prizes(CORE, cards, "ann", None, random.Random(3)))
    assert set(awards["Most wins"].tied) == {"bea", "cat"}  # 14 W points each
    # "Most L points, not most L's wins."
    assert awards["Most losses"].player == "bea"
    assert sum(a.amount_cents for a in awards.values()) == pot_cents(CORE, 4)


def test_rotate_players_can_win_only_one_cash_prize() -> None:
    cards = {f"p{i}": ScoreCard() for i in range(1, 9)}
    cards["p1"] = ScoreCard(wins=20, buncos=9, baby_buncos=9, losses=4)
    cards["p2"] = ScoreCard(wins=10, buncos=5, baby_buncos=1, losses=14)
    cards["p3"] = ScoreCard(wins=5, buncos=0, baby_buncos=6, losses=19)
    awards = by_name(award_prizes(ROTATE, cards, "p1", None, random.Random(0)))
    assert awards["Most wins"].player == "p1"
    assert awards["Most buncos"].player == "p2"  # p1 already has a cash prize
    assert awards["Most baby buncos"].player == "p3"
    cash = [a.player for a in awards.values() if a.cash]
    assert len(cash) == len(set(cash))
    # the traveler's gift certificate is not cash: p1 can have it too
    gift = awards["Traveler ($5 gift certificate from the host)"]
    assert gift.player == "p1" and not gift.cash
    assert sum(a.amount_cents for a in awards.values() if a.cash) == pot_cents(ROTATE, 8)


def drawn(account: str) -> dict[str, int]:
    return {m[0]: int(m[1]) for m in re.findall(r"(\w+) drew (\d+)", account)}


@pytest.mark.parametrize("seed", range(10))
def test_rotate_tie_draws_highest_number_wins_except_big_loser_lowest(seed: int) -> None:
    tied = ["ann", "bea", "cat", "dot"]
    winner, account = settle_tie("draw-highest", tied, random.Random(seed))
    numbers = drawn(account)
    assert sorted(numbers.values()) == [1, 2, 3, 4] and numbers[winner] == 4
    winner, account = settle_tie("draw-lowest", tied, random.Random(seed))
    numbers = drawn(account)
    assert numbers[winner] == 1


def test_rotate_big_loser_tie_goes_to_the_lowest_number() -> None:
    cards = {f"p{i}": ScoreCard(wins=3, losses=9 if i in (5, 6) else 3) for i in range(1, 9)}
    award = by_name(award_prizes(ROTATE, cards, None, None, random.Random(5)))["Big loser"]
    assert set(award.tied) == {"p5", "p6"}
    assert drawn(award.tie_break)[award.player] == 1


@pytest.mark.parametrize("seed", range(10))
def test_roll_off_tie_goes_to_the_highest_roll(seed: int) -> None:
    winner, account = settle_tie("roll-off", ["ann", "bea", "cat"], random.Random(seed))
    last = dict(re.findall(r"(\w+) (\d+)", account.split(";")[-1]))
    assert int(last[winner]) == max(int(v) for v in last.values())


@pytest.mark.parametrize("seed", range(10))
def test_individual_bunko_off_the_first_player_to_roll_any_bunko_wins(seed: int) -> None:
    winner, account = settle_tie("bunco-off", ["ann", "bea"], random.Random(seed))
    assert account.startswith("bunco-off: after ")
    rolled = dict(re.findall(r"(\w+) (\d{3})", account.split(";")[-1]))
    assert len(set(rolled[winner])) == 1  # three of a kind


def test_individual_ties_for_a_prize_are_broken_by_a_bunko_off() -> None:
    cards = {f"p{i}": ScoreCard(buncos=2 if i < 4 else 0) for i in range(1, 9)}
    award = award_prizes(INDIVIDUAL, cards, "p8", None, random.Random(2))[0]
    assert set(award.tied) == {"p1", "p2", "p3"} and award.tie_break.startswith("bunco-off")


def test_a_prize_nobody_can_win_is_drawn_so_the_pot_is_paid() -> None:
    cards = {f"p{i}": ScoreCard() for i in range(1, 13)}
    awards = by_name(award_prizes(CLASSIC, cards, None, None, random.Random(4)))  # nobody traveled
    assert awards["Traveling"].player is not None
    assert sum(a.amount_cents for a in awards.values()) == 6000


def test_the_same_seed_gives_the_same_prizes() -> None:
    cards = {f"p{i}": ScoreCard() for i in range(1, 13)}
    assert award_prizes(CLASSIC, cards, None, None, random.Random(9)) == \
        award_prizes(CLASSIC, cards, None, None, random.Random(9))


def test_an_unknown_tie_break_is_refused() -> None:
    with pytest.raises(ValueError):
        settle_tie("coin", ["a", "b"], random.Random(0))


card = st.builds(ScoreCard, wins=st.integers(0, 24), losses=st.integers(0, 24), buncos=st.integers(0, 5),
                 baby_buncos=st.integers(0, 5), weighted_wins=st.integers(0, 48),
                 weighted_losses=st.integers(0, 48))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(PRESET_NAMES), st.lists(card, min_size=1, max_size=40), st.integers(0, 2**32),
       st.booleans())
def test_cash_prizes_always_sum_to_the_pot(name, cards, seed, has_traveler) -> None:
    rules = preset(name)
    players = {f"p{i}": c for i, c in enumerate(cards)}
    traveler = "p0" if has_traveler else None
    awards = award_prizes(rules, players, traveler, None, random.Random(seed))
    assert len(awards) == len(rules.prizes.prize)
    assert sum(a.amount_cents for a in awards if a.cash and a.player) == pot_cents(rules, len(players))
    assert all(a.player in players for a in awards if a.cash)
    if rules.prizes.one_cash_prize_per_player and len(players) >= sum(p.cash for p in rules.prizes.prize):
        cash = [a.player for a in awards if a.cash]
        assert len(cash) == len(set(cash))
