"""Score cards: what each player writes at the bottom of her sheet."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.table_round import RollRecord, TableSetup


@dataclass(frozen=True, slots=True)
class ScoreCard:
    wins: int = 0
    losses: int = 0
    buncos: int = 0
    baby_buncos: int = 0
    wipeouts: int = 0
    weighted_wins: int = 0
    weighted_losses: int = 0
    points: int = 0

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}  # type: ignore[attr-defined]


def credited_player(setup: TableSetup, record: RollRecord) -> str | None:
    """Who gets the bunco point (and the traveler) for a roll.

    A ghost has no score card: her bunco goes to her teammate or to nobody, per house rules.
    """
    if not record.ghost:
        return record.player
    rules = setup.rules
    if rules.ghost.bunco_credit != "teammate" or not rules.team_play:
        return None
    mate = setup.seats[(record.seat + 1) % 4]  # seat is 1-based: partner of seat s is s+2
    return None if mate in setup.ghosts else mate


def add_round(
    cards: dict[str, ScoreCard],
    setup: TableSetup,
    rolls: tuple[RollRecord, ...],
    winners: tuple[str, ...],
    losers: tuple[str, ...],
    rules: HouseRules,
    ended_round: bool = False,
) -> None:
    """Add one finished table's round to ``cards`` (a fresh dict owned by the caller).

    ``ended_round``: this table's play ended the round (for a called Bunko on reaching 21).
    """
    weighted = rules.score_card.weighted_head and setup.table == 1
    weight = rules.score_card.head_weight if weighted else 1
    # a ghost's seat scores for nobody, even the seat of someone who left and kept her card
    delta: dict[str, dict[str, int]] = {p: {} for p in setup.seats
                                        if p in cards and p not in setup.ghosts}

    def add(player: str | None, stat: str, amount: int = 1) -> None:
        if player in delta:
            counts = delta[player]
            counts[stat] = counts.get(stat, 0) + amount

    for player in winners:
        add(player, "wins")
        add(player, "weighted_wins", weight)
    for player in losers:
        add(player, "losses")
        add(player, "weighted_losses", weight)
    for record in rolls:
        outcome = record.outcome
        if not record.rolloff:
            add(record.player, "points", record.points)
        if outcome.bunco:
            add(credited_player(setup, record), "buncos")
        if not record.ghost:
            if outcome.baby_bunco:
                add(record.player, "baby_buncos")
            if outcome.wipeout:
                add(record.player, "wipeouts")
    if ended_round and rules.score_card.called_bunko_counts:
        add(_called_bunko(setup, rolls, rules), "buncos")
    for player, counts in delta.items():
        card = cards[player]
        cards[player] = replace(card, **{k: getattr(card, k) + v for k, v in counts.items()})


def _called_bunko(setup: TableSetup, rolls: tuple[RollRecord, ...], rules: HouseRules
                  ) -> str | None:
    """Who called "Bunko!" on reaching the target score with the roll that ended the round
    (004: "When a player rolls a Bunko or reaches 21 points, she should call out, Bunko!");
    None when that roll was a bunco itself, which is counted already."""
    totals = dict.fromkeys(setup.seats, 0)
    for record in rolls:
        if record.rolloff:
            continue
        totals[record.player] += record.points
        if record.outcome.bunco and not record.ghost:
            return None
        if totals[record.player] >= rules.round.target_score:
            return None if record.ghost else record.player
    return None
