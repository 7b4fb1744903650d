"""The night record: a versioned, JSON-ready export of a night (docs/night-record.md).

Every part of bunco-pi writes it (``bunco-pi sim``, the head table, a standalone table). Besides
the readable parts (players, rounds, cards, prizes) it carries the night's event log, so
``replay(record)`` rebuilds the exact same night.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import GeneratorType
from typing import Any

from bunco_pi.rules.entries import (
    EntryFormatError,
    decode_entry,
    encode_entry,
    with_table,
    without_table,
)
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.night import (
    Arrive,
    CloseHeldRound,
    CloseRound,
    EndBreak,
    EndNight,
    Leave,
    NextRound,
    Night,
    NightEvent,
    PauseClock,
    Player,
    ResumeClock,
    RingBell,
    SettlePrizes,
    StartClock,
    StartRound,
    TableEntry,
    TimeUp,
)
from bunco_pi.rules.table_round import SCORED, UNDOABLE, RollRecord, RuleViolation, Undo

FORMAT = "bunco-pi night record"
VERSION = 1


# --- events as JSON-ready lists ----------------------------------------------------------------


def encode_event(event: NightEvent) -> list[Any]:
    """A night event as a short JSON-ready list, e.g. ``["roll", 2, [3, 3, 5]]``."""
    if isinstance(event, TableEntry):
        return with_table(encode_entry(event.entry), event.table)
    simple = {StartRound: "start", RingBell: "ring", CloseRound: "close", NextRound: "next",
              EndBreak: "end-break", CloseHeldRound: "close-held", EndNight: "end-night"}
    if type(event) in simple:
        return [simple[type(event)]]
    if isinstance(event, SettlePrizes):
        return ["prizes", event.seed]
    if isinstance(event, Arrive):
        return ["arrive", event.player, event.name]
    if isinstance(event, Leave):
        return ["leave", event.player]
    if isinstance(event, StartClock):
        return ["clock", event.phase, event.at, event.deadline]
    if isinstance(event, PauseClock):
        return ["pause", event.at]
    if isinstance(event, ResumeClock):
        return ["resume", event.at, event.deadline]
    if isinstance(event, TimeUp):
        return ["time-up", event.at] + (["late"] if event.late else [])
    raise ValueError(f"cannot encode {event!r}")


_NIGHT_KINDS = {"start": StartRound, "ring": RingBell, "close": CloseRound, "next": NextRound,
                "end-break": EndBreak, "close-held": CloseHeldRound, "end-night": EndNight}


def decode_event(item: Any) -> NightEvent:
    """The inverse of ``encode_event``; ValueError says what is wrong with ``item``."""
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise ValueError(f"an event is a list starting with its kind, got {item!r}")
    kind, args = item[0], item[1:]
    if kind in _NIGHT_KINDS and not args:
        return _NIGHT_KINDS[kind]()
    if kind == "prizes" and len(args) == 1 and isinstance(args[0], int):
        return SettlePrizes(args[0])
    if kind == "arrive" and len(args) == 2 and all(isinstance(a, str) for a in args):
        return Arrive(args[0], args[1])
    if kind == "leave" and len(args) == 1 and isinstance(args[0], str):
        return Leave(args[0])
    times = [a for a in args if isinstance(a, int | float) and not isinstance(a, bool)]
    if kind == "clock" and len(args) == 3 and isinstance(args[0], str) and len(times) == 2:
        return StartClock(args[0], float(times[0]), float(times[1]))
    if kind == "pause" and len(args) == 1 and len(times) == 1:
        return PauseClock(float(times[0]))
    if kind == "resume" and len(args) == 2 and len(times) == 2:
        return ResumeClock(float(times[0]), float(times[1]))
    if kind == "time-up" and args and len(times) == 1 and args[0] == times[0] and \
            args[1:] in ([], ["late"]):
        return TimeUp(float(times[0]), late=args[1:] == ["late"])
    try:
        table, code = without_table(item)
        return TableEntry(table, decode_entry(code))
    except EntryFormatError:
        raise ValueError(f"not a valid event: {item!r}") from None


# --- the record -------------------------------------------------------------------------------


def _roll_json(roll: RollRecord, at: int | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "at": at,
        "player": roll.player,
        "dice": list(roll.dice) if roll.dice is not None else None,
        "points": roll.points,
        "rolloff": roll.rolloff,
    }
    if roll.rolloff:
        data["session"] = roll.session
    if roll.tally is not None:
        data["tally"] = roll.tally
    for flag in ("bunco", "baby_bunco", "wipeout", "travels"):
        if getattr(roll.outcome, flag):
            data[flag] = True
    return data


def build_record(night: Night, log: Sequence[NightEvent], *, seed: int | None = None,
                 source: str = "sim", table_numbers: Sequence[int] | None = None
                 ) -> dict[str, Any]:
    """The night record of ``night``, which is the fold of ``log`` from its first seating.

    ``table_numbers``: the tables' own numbers, head first, where they are not 1, 2, ... (a
    standalone table numbered 3 records itself as table 3).
    """
    record = _build_record(night, log, seed=seed, source=source)
    if table_numbers is not None and list(table_numbers) != list(
            range(1, len(record["first_seating"]) + 1)):
        _renumber(record, list(table_numbers))
    return record


def _renumber(record: dict[str, Any], numbers: list[int]) -> None:
    record["table_numbers"] = numbers
    for rnd in record["rounds"]:
        for t in rnd["tables"]:
            t["table"] = numbers[t["table"] - 1]
        for m in rnd["moves"]:
            m["from_table"] = numbers[m["from_table"] - 1]
            m["to_table"] = numbers[m["to_table"] - 1]
    for event in record["log"]:
        if event[0] in _TABLE_EVENTS:
            event[1] = numbers[event[1] - 1]


_TABLE_EVENTS = ("roll", "tally", "pass", "bell", "undo")


def _build_record(night: Night, log: Sequence[NightEvent], *, seed: int | None,
                  source: str) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, GeneratorType) else value
            for key, value in record_items(night, log, seed=seed, source=source)}


def record_items(night: Night, log: Sequence[NightEvent], *, seed: int | None = None,
                 source: str = "sim") -> Iterator[tuple[str, Any]]:
    """The night record's keys and values in order, for a writer that streams it: the
    rounds and the log come as generators, each round (each logged event) made only as it
    is written, so a 500-table night's record never stands whole in memory. ``build_record``
    is these, gathered."""
    first = _first_seating(night)

    def rounds() -> Iterator[dict[str, Any]]:
        for r, at in zip(night.history, _roll_positions(log), strict=False):
            yield _round_json(r, at)

    yield "format", FORMAT
    yield "version", VERSION
    yield "source", source
    yield "seed", seed
    yield "rules", night.rules.name
    yield "complete", night.phase == "ended"
    yield "players", [{"id": p.id, "name": p.name, "ghost": p.ghost} for p in night.players]
    yield "first_seating", [list(s) for s in first]
    yield "rounds", rounds()
    yield "cards", {pid: card.as_dict() for pid, card in night.cards.items()}
    yield "traveler", night.traveler
    yield "wipeout_traveler", night.wipeout_traveler
    yield "prizes", [
        {"name": a.name, "player": a.player, "amount": a.amount_cents / 100,
         "cash": a.cash, "tied": list(a.tied), "tie_break": a.tie_break}
        for a in night.prizes
    ]
    yield "log", (encode_event(e) for e in log)


def _round_json(r: Any, at: dict[int, list[int]]) -> dict[str, Any]:
    return {
        "set": r.set,
        "round": r.round,
        "target": r.target,
        "tables": [
            {
                "table": t.table,
                "seats": list(t.seats),
                "rolls": [_roll_json(roll, at.get(t.table, [None] * (i + 1))[i])
                          for i, roll in enumerate(t.rolls)],
                "score": list(t.team_scores),
                "seat_scores": list(t.seat_scores),
                "winners": list(t.winners),
                "losers": list(t.losers),
                "rolloffs": t.rolloff_sessions,
                "ended_round": t.ended_round,
                **({"held": t.held} if t.held else {}),
            }
            for t in r.tables
        ],
        "moves": [
            {"player": m.player, "from_table": m.from_table, "to_table": m.to_table,
             "to_seat": m.to_seat}
            for m in r.moves
        ],
        **({"seating_notes": list(r.seating_notes)} if r.seating_notes else {}),
    }


def _first_seating(night: Night) -> tuple:
    if night.history:
        return tuple(t.seats for t in night.history[0].tables)
    if night.tables:
        return tuple(t.setup.seats for t in night.tables)
    return night.seating


def _roll_positions(log: Sequence[NightEvent]) -> Iterator[dict[int, list[int]]]:
    """For each round in turn (round 0 first), table -> the log position of each of its
    rolls: the one order that holds across tables (the traveler goes to whoever triggered it
    last in the log). Read from the log's entries alone, not by folding the night again: each
    roll or tally made one roll, an undo took back the last roll, tally or pass
    (``table_round.UNDOABLE``), and a round's number moves on only at ``NextRound``. A fold
    of the night here held a second copy of it while a 500-table head wrote its record, and
    took as long as the night's own fold. Only one round's positions stand at a time."""
    positions: dict[int, list[int]] = {}
    taken_back: dict[int, list[bool]] = {}  # per table, its undoable entries: a roll or not
    for i, event in enumerate(log):
        kind = type(event)
        if kind is TableEntry:
            entry = type(event.entry)
            if entry is Undo:
                undoable = taken_back.get(event.table)
                if undoable and undoable.pop():
                    positions[event.table].pop()
            elif entry in UNDOABLE:
                scored = entry in SCORED
                taken_back.setdefault(event.table, []).append(scored)
                if scored:
                    positions.setdefault(event.table, []).append(i)
        elif kind is NextRound:
            yield positions
            positions, taken_back = {}, {}
    yield positions


def first_players(players: Sequence[Player], log: Sequence[NightEvent]) -> list[Player]:
    """The players as they checked in, before any late arrival or leaving in ``log``: a late
    arrival's seat was a ghost's (named by its id: nothing shows that name), and someone who
    left was a player until then."""
    arrived = {e.player for e in log if isinstance(e, Arrive)}
    left = {e.player for e in log if isinstance(e, Leave)}
    return [Player(p.id, p.id, True) if p.id in arrived
            else Player(p.id, p.name, False) if p.id in left else p for p in players]


def replay(record: dict[str, Any], rules: HouseRules) -> Night:
    """Rebuild the night a record describes from its log."""
    try:
        players = [Player(p["id"], p["name"], bool(p["ghost"])) for p in record["players"]]
        seating = [tuple(s) for s in record["first_seating"]]
        log = record["log"]
        if record.get("table_numbers"):
            index = {n: i + 1 for i, n in enumerate(record["table_numbers"])}
            log = [[e[0], index.get(e[1], e[1]), *e[2:]] if e and e[0] in _TABLE_EVENTS else e
                   for e in log]
        events = [decode_event(item) for item in log]
    except (KeyError, TypeError, ValueError) as exc:
        raise RuleViolation(f"not a replayable night record: {exc}") from None
    return Night.replay(rules, first_players(players, events), seating, events)
