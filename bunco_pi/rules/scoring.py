"""Scoring one roll of three dice, or one button entry that stands for a roll's outcome."""

from __future__ import annotations

from itertools import product
from typing import NamedTuple

from bunco_pi.rules.house import HouseRules

Dice = tuple[int, int, int]

_FACES = frozenset(range(1, 7))

# Button entries a scorekeeper can make instead of reporting dice.
TALLY_KINDS = ("point", "three", "bunco", "wipeout")


class RollOutcome(NamedTuple):
    """What one roll (or one tally entry) is worth, before ghost rules and wipe-outs apply."""

    points: int
    continues: bool
    target_dice: int = 0
    bunco: bool = False
    three_of_a_kind: bool = False
    baby_bunco: bool = False
    wipeout: bool = False
    travels: bool = False


def check_dice(dice: object) -> Dice:
    """``dice`` as a Dice tuple, or ValueError saying what is wrong."""
    if type(dice) is tuple and len(dice) == 3 and dice[0] in _FACES and dice[1] in _FACES \
            and dice[2] in _FACES and type(dice[0]) is int and type(dice[1]) is int \
            and type(dice[2]) is int:
        return dice  # type: ignore[return-value]
    if not isinstance(dice, tuple | list) or len(dice) != 3:
        raise ValueError(f"a roll is three dice, got {dice!r}")
    if any(isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6 for d in dice):
        raise ValueError(f"dice show 1 to 6, got {dice!r}")
    return (dice[0], dice[1], dice[2])


def _travels(rules: HouseRules, target: int, *, bunco: bool, face: int | None) -> bool:
    if not rules.traveler.enabled:
        return False
    if rules.traveler.trigger == "bunco":
        return bunco
    # all-twos: "Travel is rolling all 2s, unless we are rolling for 2s"
    return face == 2 and target != 2


def score_roll(dice: Dice, target: int, rules: HouseRules) -> RollOutcome:
    """Score three dice in a round whose target number is ``target``."""
    a, b, c = check_dice(dice)
    scoring = rules.scoring
    hits = (a == target) + (b == target) + (c == target)
    if hits == 3:
        return RollOutcome(
            points=scoring.bunco_points, continues=True, target_dice=3, bunco=True,
            travels=_travels(rules, target, bunco=True, face=a),
        )
    if a == b == c:
        if a == 1 and rules.wipeout.enabled:
            return RollOutcome(points=0, continues=not rules.wipeout.ends_turn, wipeout=True)
        points = scoring.three_of_a_kind_points
        return RollOutcome(
            points=points,
            continues=points > 0 and scoring.turn_continues == "any-points",
            three_of_a_kind=True,
            baby_bunco=scoring.baby_bunco,
            travels=_travels(rules, target, bunco=False, face=a),
        )
    return RollOutcome(points=hits * scoring.points_per_target_die, continues=hits > 0,
                       target_dice=hits)


def score_tally(kind: str, target: int, rules: HouseRules, face: int | None = None) -> RollOutcome:
    """Score a button entry. A tally never ends the turn by itself (the pass button does),
    except a wipeout whose rules end the turn.

    ``face`` is the number shown by a "three" entry, which matters only for the all-twos
    traveler.
    """
    scoring = rules.scoring
    if kind == "point":
        return RollOutcome(points=scoring.points_per_target_die, continues=True, target_dice=1)
    if kind == "bunco":
        return RollOutcome(
            points=scoring.bunco_points, continues=True, target_dice=3, bunco=True,
            travels=_travels(rules, target, bunco=True, face=target),
        )
    if kind == "three":
        if face == target:
            raise ValueError("three of the target number is a bunco, not three of a kind")
        return RollOutcome(
            points=scoring.three_of_a_kind_points, continues=True, three_of_a_kind=True,
            baby_bunco=scoring.baby_bunco,
            travels=_travels(rules, target, bunco=False, face=face),
        )
    if kind == "wipeout":
        if not rules.wipeout.enabled:
            raise ValueError("these house rules do not play wipeout")
        return RollOutcome(points=0, continues=not rules.wipeout.ends_turn, wipeout=True)
    raise ValueError(f"unknown tally kind {kind!r} (kinds: {', '.join(TALLY_KINDS)})")


_TABLES: dict[int, tuple[HouseRules, dict[int, dict[Dice, RollOutcome]]]] = {}


def outcome_table(rules: HouseRules, target: int) -> dict[Dice, RollOutcome]:
    """Every roll's outcome for ``target``, computed once per rules: a night scores thousands
    of rolls and there are only 216 different ones."""
    entry = _TABLES.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_TABLES) >= 32:  # a long-running box loads a handful of rules; tests load many
            _TABLES.pop(next(iter(_TABLES)))
        entry = (rules, {})
        _TABLES[id(rules)] = entry
    by_target = entry[1]
    table = by_target.get(target)
    if table is None:
        table = {d: score_roll(d, target, rules) for d in product(range(1, 7), repeat=3)}
        by_target[target] = table
    return table
