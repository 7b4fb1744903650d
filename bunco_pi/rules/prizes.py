"""Prizes at the end of the night, with each house's way of breaking a tie.

Ties are settled with virtual dice or a virtual draw from a ``random.Random`` the caller seeds:
the seed is part of the night's log, so the prizes replay exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bunco_pi.rules.cards import ScoreCard
from bunco_pi.rules.house import HouseRules, Prize

_METRICS: dict[str, Callable[[ScoreCard, bool], int]] = {
    "most-buncos": lambda c, w: c.buncos,
    "most-wins": lambda c, w: c.weighted_wins if w else c.wins,
    "most-losses": lambda c, w: c.weighted_losses if w else c.losses,
    "most-baby-buncos": lambda c, w: c.baby_buncos,
    "most-wipeouts": lambda c, w: c.wipeouts,
    # "the player with equal wins and losses": closest to equal wins
    "fifty-fifty": lambda c, w: -abs(c.wins - c.losses),
    "draw-without-prize": lambda c, w: 0,
}


@dataclass(frozen=True, slots=True)
class PrizeAward:
    name: str
    player: str | None
    amount_cents: int
    cash: bool
    tied: tuple[str, ...]  # the players who tied for it, if a tie-break was needed
    tie_break: str  # what settled it, readable ("roll-off: ann 11, bea 7")


def pot_cents(rules: HouseRules, paying_players: int) -> int:
    return round(rules.prizes.pot_per_player * 100) * paying_players


def prize_amounts(rules: HouseRules, paying_players: int) -> list[int]:
    """Each prize's amount in cents: cash prizes scaled to pay out exactly the pot."""
    prizes = rules.prizes.prize
    raw = [round(p.amount * 100) for p in prizes]
    cash = [i for i, p in enumerate(prizes) if p.cash]
    total = sum(raw[i] for i in cash)
    pot = pot_cents(rules, paying_players)
    if not rules.prizes.scale_to_pot or total == 0 or total == pot:
        return raw
    # largest remainder, so the cents add up to the pot exactly
    shares = {i: raw[i] * pot / total for i in cash}
    amounts = list(raw)
    for i in cash:
        amounts[i] = int(shares[i])
    left = pot - sum(amounts[i] for i in cash)
    for i in sorted(cash, key=lambda i: (-(shares[i] - int(shares[i])), i))[:left]:
        amounts[i] += 1
    return amounts


def _roll(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))


def settle_tie(method: str, tied: Sequence[str], rng: random.Random) -> tuple[str, str]:
    """The winner among ``tied`` and a readable account of how."""
    group = list(tied)
    account: list[str] = []
    for _ in range(1000):
        if len(group) == 1:
            return group[0], f"{method}: " + "; ".join(account)
        if method == "roll-off":
            totals = {p: sum(_roll(rng)) for p in group}
            account.append(", ".join(f"{p} {totals[p]}" for p in group))
            best = max(totals.values())
            group = [p for p in group if totals[p] == best]
        elif method in ("draw-highest", "draw-lowest"):
            numbers = rng.sample(range(1, len(group) + 1), len(group))
            drawn = dict(zip(group, numbers, strict=True))
            account.append(", ".join(f"{p} drew {drawn[p]}" for p in group))
            pick = max if method == "draw-highest" else min
            group = [pick(group, key=drawn.__getitem__)]
        elif method == "bunco-off":
            # everyone rolls at once until someone rolls three of a kind
            volleys = 0
            while True:
                volleys += 1
                rolls = {p: _roll(rng) for p in group}
                triples = [p for p in group if len(set(rolls[p])) == 1]
                if triples:
                    account.append(f"after {volleys} rolls: " + ", ".join(
                        f"{p} {rolls[p][0]}{rolls[p][1]}{rolls[p][2]}" for p in triples))
                    group = triples
                    break
        else:
            raise ValueError(f"unknown tie-break {method!r}")
    raise RuntimeError("tie not settled after 1000 tries")


def award_prizes(
    rules: HouseRules,
    cards: Mapping[str, ScoreCard],
    traveler: str | None,
    wipeout_traveler: str | None,
    rng: random.Random,
) -> tuple[PrizeAward, ...]:
    """Award every prize of the house rules, in the order the rules list them.

    ``cards`` holds the real players (ghosts win nothing), in the order they checked in.
    A cash prize nobody can win (no traveler, say, or one cash prize each and everyone has
    one) is drawn among the players without a prize, so the prizes always pay out exactly the
    pot.
    """
    players = list(cards)
    amounts = prize_amounts(rules, len(players))
    weighted = rules.score_card.weighted_head
    awards: list[PrizeAward] = []
    cash_winners: set[str] = set()
    any_winners: set[str] = set()
    for prize, amount in zip(rules.prizes.prize, amounts, strict=True):
        eligible = [p for p in players
                    if not (rules.prizes.one_cash_prize_per_player and prize.cash
                            and p in cash_winners)]
        candidates = _candidates(prize, eligible, cards, weighted, traveler, wipeout_traveler,
                                 any_winners)
        method = prize.tie_break
        if not candidates and prize.cash:
            # the pot is always paid out: drawn among those without a prize, or if everyone
            # has one already (a tiny night), among everyone
            candidates = [p for p in eligible if p not in any_winners] or eligible or players
            method = "draw-highest"
        if not candidates:
            awards.append(PrizeAward(prize.name, None, amount, prize.cash, (), "unclaimed"))
            continue
        if len(candidates) == 1:
            winner, account, tied = candidates[0], "", ()
        else:
            winner, account = settle_tie(method, candidates, rng)
            tied = tuple(candidates)
        awards.append(PrizeAward(prize.name, winner, amount, prize.cash, tied, account))
        any_winners.add(winner)
        if prize.cash:
            cash_winners.add(winner)
    return tuple(awards)


def _candidates(
    prize: Prize,
    eligible: list[str],
    cards: Mapping[str, ScoreCard],
    weighted: bool,
    traveler: str | None,
    wipeout_traveler: str | None,
    any_winners: set[str],
) -> list[str]:
    if prize.award == "traveler":
        return [traveler] if traveler in eligible else []
    if prize.award == "wipeout-traveler":
        return [wipeout_traveler] if wipeout_traveler in eligible else []
    if prize.award == "draw-without-prize":
        eligible = [p for p in eligible if p not in any_winners]
    if not eligible:
        return []
    metric = _METRICS[prize.award]
    best = max(metric(cards[p], weighted) for p in eligible)
    return [p for p in eligible if metric(cards[p], weighted) == best]
