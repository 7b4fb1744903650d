"""House rules: one TOML file expresses a group's whole game.

The schema below is the single description of every key: its type, its default, what values it
allows and what it means. Loading validates a file against it and reports the first problem as
one line that names the file, the line, the key and what is allowed.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from bunco_pi.rules.errors import UserError

PRESET_NAMES = ("classic", "core", "rotate", "individual")

PRIZE_AWARDS = (
    "most-buncos",
    "most-wins",
    "most-losses",
    "most-baby-buncos",
    "most-wipeouts",
    "traveler",
    "wipeout-traveler",
    "fifty-fifty",
    "draw-without-prize",
)
TIE_BREAKS = ("roll-off", "draw-highest", "draw-lowest", "bunco-off")


@dataclass(frozen=True, slots=True)
class Scoring:
    points_per_target_die: int = 1
    bunco_points: int = 21
    three_of_a_kind_points: int = 5
    baby_bunco: bool = False
    turn_continues: str = "any-points"


@dataclass(frozen=True, slots=True)
class Wipeout:
    enabled: bool = False
    ends_turn: bool = False
    traveler: bool = False


@dataclass(frozen=True, slots=True)
class NightShape:
    sets: int = 4
    targets: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    break_after_sets: tuple[int, ...] = (2,)
    seats_per_table: int = 4


@dataclass(frozen=True, slots=True)
class RoundRules:
    target_score: int = 21
    ends_at: str = "head"
    bunco_ends_round: bool = True
    after_bell: str = "finish-turn"
    every_player_rolls: bool = False
    held_table: str = "as-it-stands"
    rolloff_turn_continues: str = "as-in-round"
    # Timed rounds (a charity night's air horn): 0 minutes is an untimed round, ended by the
    # goal alone. ``ends_by`` says what ends a round; ``at_horn`` what a turn in progress does
    # when it ends (in a timed round it takes the place of ``after_bell``).
    minutes: float = 0.0
    ends_by: str = "goal"
    warn_seconds: int = 30
    at_horn: str = "finish-roll"
    move_seconds: int = 0

    @property
    def timed(self) -> bool:
        return self.minutes > 0

    @property
    def goal_ends(self) -> bool:
        """Whether a table's goal (the target score, a bunco) can end the round."""
        return self.ends_by != "time"


@dataclass(frozen=True, slots=True)
class Traveler:
    enabled: bool = True
    trigger: str = "bunco"


@dataclass(frozen=True, slots=True)
class Rotation:
    scheme: str = "head-stays"
    split_partners: bool = True


@dataclass(frozen=True, slots=True)
class Ghost:
    points: str = "team"
    bunco_credit: str = "teammate"
    moves_instead: bool = False
    real_partner: bool = False


@dataclass(frozen=True, slots=True)
class ScoreCardRules:
    weighted_head: bool = False
    head_weight: int = 2
    called_bunko_counts: bool = False


@dataclass(frozen=True, slots=True)
class Prize:
    name: str
    award: str
    amount: float = 0.0
    cash: bool = True
    tie_break: str = "roll-off"


@dataclass(frozen=True, slots=True)
class Prizes:
    pot_per_player: float = 5.0
    scale_to_pot: bool = True
    one_cash_prize_per_player: bool = False
    prize: tuple[Prize, ...] = ()


@dataclass(frozen=True, slots=True)
class HouseRules:
    name: str = "custom"
    description: str = ""
    play: str = "team"
    scoring: Scoring = field(default_factory=Scoring)
    wipeout: Wipeout = field(default_factory=Wipeout)
    night: NightShape = field(default_factory=NightShape)
    round: RoundRules = field(default_factory=RoundRules)
    traveler: Traveler = field(default_factory=Traveler)
    rotation: Rotation = field(default_factory=Rotation)
    ghost: Ghost = field(default_factory=Ghost)
    score_card: ScoreCardRules = field(default_factory=ScoreCardRules)
    prizes: Prizes = field(default_factory=Prizes)

    @property
    def team_play(self) -> bool:
        return self.play == "team"

    @property
    def rounds_per_night(self) -> int:
        return self.night.sets * len(self.night.targets)


# --- the schema: key -> (kind, check, description) ------------------------------------------

Check = Callable[[Any], str | None]  # returns what is allowed when the value is wrong


def _choice(*options: str) -> Check:
    return lambda v: None if v in options else "one of " + ", ".join(f'"{o}"' for o in options)


def _int_range(lo: int, hi: int | None = None) -> Check:
    def check(v: int) -> str | None:
        if v < lo or (hi is not None and v > hi):
            return f"a whole number from {lo} to {hi}" if hi is not None else f"a whole number >= {lo}"
        return None

    return check


def _non_negative(v: float) -> str | None:
    return None if v >= 0 else "a number >= 0"


def _minutes(v: float) -> str | None:
    return None if 0 <= v <= 180 else "a number of minutes from 0 to 180"


def _exactly_four(v: int) -> str | None:
    return None if v == 4 else "4 (Bunco is played four to a table: two teams of two)"


def _targets(v: list[int]) -> str | None:
    if not v or any(not isinstance(t, int) or isinstance(t, bool) or not 1 <= t <= 6 for t in v):
        return "a non-empty list of numbers from 1 to 6"
    return None


def _sets_list(v: list[int]) -> str | None:
    if any(not isinstance(t, int) or isinstance(t, bool) or t < 1 for t in v):
        return "a list of set numbers >= 1"
    return None


def _name(v: str) -> str | None:
    return None if v.strip() else "a non-empty text"


_SCHEMA: dict[str, dict[str, tuple[type, Check | None, str]]] = {
    "": {
        "name": (str, _name, "the name of this set of house rules"),
        "description": (str, None, "one line saying where the rules come from"),
        "play": (str, _choice("team", "individual"), "team play (two teams of two) or individual scores"),
    },
    "scoring": {
        "points_per_target_die": (int, _int_range(0, 100), "points for each die showing the target number"),
        "bunco_points": (int, _int_range(0, 100), "points for three dice showing the target number"),
        "three_of_a_kind_points": (int, _int_range(0, 100), "points for three of a kind of another number"),
        "baby_bunco": (bool, None, "count three of a kind of another number as a baby bunco on the card"),
        "turn_continues": (str, _choice("any-points", "target-number"),
                           "a turn goes on after any points, or only after the target shows"),
    },
    "wipeout": {
        "enabled": (bool, None, "three 1s wipe out the roller's points for the round"),
        "ends_turn": (bool, None, "a wipeout also ends the roller's turn"),
        "traveler": (bool, None, "a second fuzzy goes to whoever rolled the last wipeout"),
    },
    "night": {
        "sets": (int, _int_range(1, 20), "sets in a night"),
        "targets": (list, _targets, "the target number of each round in a set, in order"),
        "break_after_sets": (list, _sets_list, "take a break after these sets"),
        "seats_per_table": (int, _exactly_four, "players at a table"),
    },
    "round": {
        "target_score": (int, _int_range(1, 1000), "the score that ends the round"),
        "ends_at": (str, _choice("head", "any-table"), "which tables can end the round"),
        "bunco_ends_round": (bool, None, "a bunco at a table that can end the round ends it"),
        "after_bell": (str, _choice("finish-turn", "finish-if-target", "stop"),
                       "after the bell the current roller finishes her turn (only if her last roll "
                       "showed the target, for finish-if-target), or everyone stops"),
        "every_player_rolls": (bool, None, "after the bell, players who have not rolled get one roll"),
        "held_table": (str, _choice("as-it-stands", "no-result"),
                       "when the host closes a round a table holds up (its box died): its "
                       "scores count as they stand, or its four players get no result"),
        "rolloff_turn_continues": (str, _choice("as-in-round", "target-number"),
                                   "a roll-off turn goes on as a round's turn does, or only while "
                                   "the target number shows"),
        "minutes": (float, _minutes, "a timed round's length in minutes (0: untimed)"),
        "ends_by": (str, _choice("goal", "time", "time-or-goal"),
                    "what ends a round: the head table's goal, the time, or whichever comes "
                    "first"),
        "warn_seconds": (int, _int_range(0, 3600),
                         "a timed round: the warning sounds this many seconds before the end "
                         "(0: none)"),
        "at_horn": (str, _choice("finish-roll", "stop"),
                    "a timed round: at the horn the roller finishes the roll in hand, or "
                    "everyone stops at once"),
        "move_seconds": (int, _int_range(0, 3600),
                         "a timed round: the move break after each round, in seconds, after "
                         "which the next round starts by itself (0: the host's bell starts it)"),
    },
    "traveler": {
        "enabled": (bool, None, "play with the traveling fuzzy die"),
        "trigger": (str, _choice("bunco", "all-twos"), "what passes the traveler to the roller"),
    },
    "rotation": {
        "scheme": (str, _choice("head-stays", "head-losers-to-low", "winners-rotate", "lowest-moves"),
                   "who moves where after a round"),
        "split_partners": (bool, None, "partners who stay at a table are split up"),
    },
    "ghost": {
        "points": (str, _choice("team", "none"), "what a ghost's points count for"),
        "bunco_credit": (str, _choice("teammate", "none"), "who gets the bunco point of a ghost's bunco"),
        "moves_instead": (bool, None, "in individual play the ghost moves instead of the lowest scorer"),
        "real_partner": (bool, None, "a ghost's partner is always a real player (who rolls for her)"),
    },
    "score_card": {
        "weighted_head": (bool, None, "wins and losses at the head table count more"),
        "head_weight": (int, _int_range(1, 10), "what a head-table win or loss counts"),
        "called_bunko_counts": (bool, None, "individual play: reaching the target score and "
                                "calling Bunko counts as a bunco on the card"),
    },
    "prizes": {
        "pot_per_player": (float, _non_negative, "what each player puts in the pot"),
        "scale_to_pot": (bool, None, "scale cash prize amounts so they pay out exactly the pot"),
        "one_cash_prize_per_player": (bool, None, "a player can win at most one cash prize"),
    },
    "prizes.prize": {
        "name": (str, _name, "the prize's name"),
        "award": (str, _choice(*PRIZE_AWARDS), "who wins it"),
        "amount": (float, _non_negative, "what it pays"),
        "cash": (bool, None, "paid from the pot (a gift from the host is not)"),
        "tie_break": (str, _choice(*TIE_BREAKS), "how a tie for it is settled"),
    },
}

_SECTIONS: dict[str, type] = {
    "scoring": Scoring,
    "wipeout": Wipeout,
    "night": NightShape,
    "round": RoundRules,
    "traveler": Traveler,
    "rotation": Rotation,
    "ghost": Ghost,
    "score_card": ScoreCardRules,
    "prizes": Prizes,
}


def schema() -> Mapping[str, Mapping[str, tuple[type, Check | None, str]]]:
    """Every section and key a house rules file may hold (read-only view, for docs and tools)."""
    return _SCHEMA


# --- locating keys in the text, so errors can name a line ------------------------------------


def _find_line(text: str, section: str, key: str | None, index: int = 0) -> int:
    """The 1-based line of ``key`` in ``section`` (the ``index``-th ``[[section]]``), or 0."""
    current = ""
    seen_array = -1
    header_line = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[[") and line.endswith("]]"):
            current = line[2:-2].strip()
            if section == "" and current.split(".", 1)[0].strip().strip('"') == key:
                return number
            if current == section:
                seen_array += 1
                if seen_array == index:
                    header_line = number
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            if current == section and key is None:
                return number
            if section == "" and current.split(".", 1)[0].strip().strip('"') == key:
                return number  # a whole [table] under a top-level name
            continue
        in_place = current == section and (not section.endswith("prize") or seen_array == index)
        if key is not None and in_place and "=" in line:
            name = line.split("=", 1)[0].strip().strip('"')
            if name == key:
                return number
    return header_line


def _where(source: str, text: str, section: str, key: str | None, index: int = 0) -> str:
    line = _find_line(text, section, key, index)
    return f"{source}:{line}" if line else source


def _type_name(kind: type) -> str:
    return {int: "a whole number", float: "a number", bool: "true or false", str: "text",
            list: "a list"}[kind]


def _convert(value: Any, kind: type) -> Any:
    """The value as ``kind``, or raise TypeError. TOML ints are accepted where numbers are."""
    if kind is bool:
        if not isinstance(value, bool):
            raise TypeError
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError
        return float(value)
    if not isinstance(value, kind):
        raise TypeError
    return value


def _check_table(
    data: Mapping[str, Any], section: str, source: str, text: str, index: int = 0
) -> dict[str, Any]:
    spec = _SCHEMA[section]
    values: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{section}.{key}" if section else key
        if key not in spec:
            where = _where(source, text, section, key, index)
            allowed = ", ".join(sorted(spec) + (sorted(f"[{name}]" for name in _SECTIONS)
                                                if not section else []))
            raise UserError(f"{where}: unknown key '{dotted}' (allowed here: {allowed})")
        kind, check, _ = spec[key]
        try:
            converted = _convert(value, kind)
        except TypeError:
            where = _where(source, text, section, key, index)
            raise UserError(
                f"{where}: '{dotted}' must be {_type_name(kind)}, got {value!r}"
            ) from None
        problem = check(converted) if check else None
        if problem:
            where = _where(source, text, section, key, index)
            raise UserError(f"{where}: '{dotted}' must be {problem}, got {value!r}")
        values[key] = tuple(converted) if isinstance(converted, list) else converted
    return values


def parse_rules(text: str, source: str = "<rules>") -> HouseRules:
    """Validate TOML ``text`` and build the house rules; UserError names the first problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{source}: not valid TOML: {exc}") from None
    top: dict[str, Any] = {}
    sections: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                where = _where(source, text, "", key)
                raise UserError(f"{where}: '{key}' must be a [{key}] table")
            sections[key] = value
        else:
            top[key] = value
    kwargs: dict[str, Any] = _check_table(top, "", source, text)
    for name, cls in _SECTIONS.items():
        raw = dict(sections.get(name, {}))
        prize_list = raw.pop("prize", None) if name == "prizes" else None
        values = _check_table(raw, name, source, text)
        if prize_list is not None:
            values["prize"] = _parse_prizes(prize_list, source, text)
        kwargs[name] = cls(**values)
    rules = HouseRules(**kwargs)
    _check_consistency(rules, source, text)
    return rules


def _parse_prizes(items: Any, source: str, text: str) -> tuple[Prize, ...]:
    if not isinstance(items, list) or any(not isinstance(i, dict) for i in items):
        where = _where(source, text, "prizes", "prize")
        raise UserError(f"{where}: prizes must be written as [[prizes.prize]] tables")
    prizes = []
    for index, item in enumerate(items):
        values = _check_table(item, "prizes.prize", source, text, index)
        for required in ("name", "award"):
            if required not in values:
                where = _where(source, text, "prizes.prize", None, index)
                raise UserError(f"{where}: prize {index + 1} needs a '{required}'")
        prizes.append(Prize(**values))
    return tuple(prizes)


def _check_consistency(rules: HouseRules, source: str, text: str) -> None:
    """Rules that are each valid alone but cannot be played together."""

    def fail(section: str, key: str, message: str, index: int = 0) -> None:
        raise UserError(f"{_where(source, text, section, key, index)}: {message}")

    individual_scheme = rules.rotation.scheme == "lowest-moves"
    if individual_scheme and rules.team_play:
        fail("rotation", "scheme", "'rotation.scheme' \"lowest-moves\" needs play = \"individual\"")
    if not individual_scheme and not rules.team_play:
        fail("rotation", "scheme", "individual play needs 'rotation.scheme' = \"lowest-moves\"")
    if rules.ghost.moves_instead and rules.team_play:
        fail("ghost", "moves_instead", "'ghost.moves_instead' only applies to individual play")
    if rules.ghost.real_partner and not rules.team_play:
        fail("ghost", "real_partner", "'ghost.real_partner' only applies to team play")
    if rules.score_card.called_bunko_counts and rules.team_play:
        fail("score_card", "called_bunko_counts",
             "'score_card.called_bunko_counts' only applies to individual play")
    if rules.wipeout.enabled and 1 in rules.night.targets:
        fail("night", "targets",
             "with wipeout on, three 1s are a wipeout, so the ones round must be left out of "
             "'night.targets' (for example [2, 3, 4, 5, 6])")
    if rules.wipeout.traveler and not rules.wipeout.enabled:
        fail("wipeout", "traveler", "'wipeout.traveler' needs 'wipeout.enabled = true'")
    timing = rules.round
    if timing.timed and timing.ends_by == "goal":
        fail("round", "minutes", "'round.minutes' times a round, so 'round.ends_by' must be "
             "\"time\" or \"time-or-goal\"")
    if not timing.timed and timing.ends_by != "goal":
        fail("round", "ends_by", f"'round.ends_by' \"{timing.ends_by}\" needs "
             "'round.minutes' above 0")
    if timing.timed and timing.warn_seconds >= timing.minutes * 60:
        fail("round", "warn_seconds", f"'round.warn_seconds' ({timing.warn_seconds}) must be "
             f"shorter than the round ({timing.minutes:g} minutes)")
    if timing.move_seconds and not timing.timed:
        fail("round", "move_seconds", "'round.move_seconds' needs a timed round "
             "('round.minutes' above 0)")
    if any(s > rules.night.sets for s in rules.night.break_after_sets):
        fail("night", "break_after_sets", "'night.break_after_sets' names a set after the last one")
    for index, prize in enumerate(rules.prizes.prize):
        if prize.award == "traveler" and not rules.traveler.enabled:
            fail("prizes.prize", "award", f"prize '{prize.name}' is for the traveler, "
                 "but 'traveler.enabled' is false", index)
        if prize.award == "wipeout-traveler" and not rules.wipeout.traveler:
            fail("prizes.prize", "award", f"prize '{prize.name}' needs 'wipeout.traveler = true'",
                 index)
        if prize.award == "most-baby-buncos" and not rules.scoring.baby_bunco:
            fail("prizes.prize", "award", f"prize '{prize.name}' needs 'scoring.baby_bunco = true'",
                 index)


def with_timed_rounds(rules: HouseRules, minutes: float, *, ends_by: str = "time",
                      at_horn: str = "finish-roll", warn_seconds: int = 30,
                      move_seconds: int = 0, source: str = "--minutes") -> HouseRules:
    """These house rules with timed rounds (``bunco-pi sim --minutes``): a preset plays its
    text exactly, so a charity night's timing is added to it here, checked as a file's keys."""
    values = {"minutes": float(minutes), "ends_by": ends_by, "at_horn": at_horn,
              "warn_seconds": warn_seconds, "move_seconds": move_seconds}
    for key, value in values.items():
        kind, check, _ = _SCHEMA["round"][key]
        problem = check(value) if check else None
        if problem:
            raise UserError(f"{source}: 'round.{key}' must be {problem}, got {value!r}")
    timed = replace(rules, name=f"{rules.name}, timed {minutes:g} min",
                    round=replace(rules.round, **values))
    _check_consistency(timed, source, "")
    return timed


def load_rules(path: str | Path) -> HouseRules:
    """Read and validate a house rules file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such house rules file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read house rules: {exc}") from None
    return parse_rules(text, str(path))


def preset_text(name: str) -> str:
    """The TOML of a built-in preset, ready to copy and edit."""
    if name not in PRESET_NAMES:
        raise UserError(f"unknown preset '{name}' (presets: {', '.join(PRESET_NAMES)})")
    return resources.files("bunco_pi.rules").joinpath("presets", f"{name}.toml").read_text("utf-8")


@functools.cache
def preset(name: str) -> HouseRules:
    return parse_rules(preset_text(name), f"preset {name}")


def resolve_rules(name_or_path: str) -> HouseRules:
    """A preset by name, or a house rules file by path."""
    if name_or_path in PRESET_NAMES:
        return preset(name_or_path)
    if not Path(name_or_path).exists():
        raise UserError(
            f"'{name_or_path}' is neither a preset ({', '.join(PRESET_NAMES)}) nor a file"
        )
    return load_rules(name_or_path)

