"""Check a night record against its house rules, independently of the engine that made it.

The audit reads the house rules as data and the record's log, and plays the night again with its
own roll scoring and turn order (scoring.py, rounds.py), and checks the seats (seating.py), the
cards and travelers (cards.py), the prizes (prizes.py), the log's order (order.py) and a timed
round's clocks and what counted after its horn (clock.py) against
what the texts state: nothing here calls the engine's scoring, table, rotation, card or prize
code, so an engine bug cannot agree with itself. It lists every disagreement, each on one line
naming its place. An empty list means the record is consistent.
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.audit.cards import STATS, CardsCheck
from bunco_pi.rules.audit.clock import check_after_horn, check_clocks
from bunco_pi.rules.audit.order import check_order
from bunco_pi.rules.audit.prizes import PrizesCheck
from bunco_pi.rules.audit.rounds import RoundsCheck, first_ghosts, split_log
from bunco_pi.rules.audit.scoring import TableReplay
from bunco_pi.rules.audit.seating import SeatingCheck
from bunco_pi.rules.audit.verdict import Verdict
from bunco_pi.rules.house import HouseRules

__all__ = ["Verdict", "audit_record"]


class _Audit(RoundsCheck, SeatingCheck, CardsCheck, PrizesCheck):
    def __init__(self, record: dict[str, Any], rules: HouseRules) -> None:
        self.record = record
        self.rules = rules
        self.problems: list[str] = []
        self.players = [p["id"] for p in record["players"]]
        # who sits as a ghost changes only by the host's arrivals and leavings between rounds
        self.ghosts, arrived = first_ghosts(record["players"], record.get("log", []))
        # a card for everyone who checked in, and for each late arrival when she came
        self.real = [p for p in self.players if p not in self.ghosts] + \
            [p for p in arrived if p in self.ghosts]
        self.cards = {p: dict.fromkeys(STATS, 0) for p in self.real}
        self.travel: list[tuple[int, str]] = []
        self.wipeout_travel: list[tuple[int, str]] = []
        numbers = record.get("table_numbers")
        self.numbers = list(numbers) if numbers else list(range(1, len(record["first_seating"]) + 1))

    def say(self, problem: str) -> None:
        self.problems.append(problem)

    def run(self) -> list[str]:
        rules, record = self.rules, self.record
        raw = record.get("log", [])
        if not isinstance(raw, list):
            raise ValueError("the record's 'log'")
        refused = check_order(raw, rules, self.say)
        # the rest reads the log as the engine replays it: without the events it refuses
        log = [None if at in refused else event for at, event in enumerate(raw)]
        log_rounds, in_play = split_log(log)
        rounds = record["rounds"]
        check_clocks(log, rules, self.say)
        check_after_horn(log, rounds, rules, self.say)
        per_set = len(rules.night.targets)
        if len(rounds) != len(log_rounds):
            self.say(f"the record holds {len(rounds)} rounds, its log closes {len(log_rounds)}")
        ended_early = any(isinstance(e, list) and e[:1] == ["end-night"] for e in log)
        if record.get("complete") and not ended_early and \
                len(log_rounds) != rules.rounds_per_night:
            self.say(f"a complete night has {rules.rounds_per_night} rounds, the log closes "
                     f"{len(log_rounds)}")
        seating = [list(s) for s in record["first_seating"]]
        self.check_ghost_partners(seating, "the first seating")
        changed = 0  # the log position up to which the host's seat changes are applied
        before: tuple[int, list[TableReplay], str] | None = None  # the round to seat after
        for index, events in enumerate(log_rounds):
            set_no, round_no = index // per_set + 1, index % per_set + 1
            where = f"set {set_no} round {round_no}"
            target = rules.night.targets[index % per_set]
            changed = self._change_seats(log, changed, events[0][0])
            if before is not None:
                # the seats after the last round, with the ghosts of the seat changes since
                seating = self._seat_after(*before)
            tables = self._play_round(events, seating, target, where)
            mine = rounds[index] if index < len(rounds) else None
            if mine is None:
                self.say(f"{where}: missing from the record (the log plays it)")
            else:
                self._compare_round(mine, tables, set_no, round_no, target, where)
            self._add_cards(tables)
            if any(t.phase != "done" and not t.held for t in tables):
                break  # no winners to seat the next round by (reported above)
            before = (index, tables, where)
        else:
            self._change_seats(log, changed, len(log))
            if before is not None:
                self._seat_after(*before)
            ghosts_now = {p["id"] for p in record["players"] if p["ghost"]}
            if ghosts_now != self.ghosts:
                self.say(f"the record's ghosts {sorted(ghosts_now)} are not who the log's "
                         f"arrivals and leavings leave as ghosts {sorted(self.ghosts)}")
        self._compare_cards()
        if not in_play:
            self._compare_traveler("traveler", self.travel)
            self._compare_traveler("wipeout_traveler", self.wipeout_travel)
        if record.get("complete"):
            self._check_prizes(log)
        return self.problems

    def _seat_after(self, index: int, tables: list[TableReplay], where: str) -> list[list[str]]:
        """The seats the record gives after round ``index`` (the next round's, or where its
        moves lead for the last one), its moves checked against them and the seats against the
        texts; the seats the next round is played in."""
        rounds = self.record["rounds"]
        mine = rounds[index] if index < len(rounds) else {}
        moves = mine.get("moves", [])
        led = self._where_moves_lead(tables, moves, where)
        if index + 1 < len(rounds):
            after = [list(t["seats"]) for t in rounds[index + 1]["tables"]]
        elif led is not None:
            after = led
        else:
            return [list(t.seats) for t in tables]
        if led is not None and led != after:
            wrong = [m for m in moves if m.get("to_table") not in self.numbers
                     or after[self.numbers.index(m["to_table"])][m["to_seat"] - 1] != m["player"]]
            self.say(f"{where}: moves {wrong} do not lead to the seats of the next round "
                     f"{after}")
        self.check_next_seating(tables, after, where, list(mine.get("seating_notes", [])))
        return after

    def _where_moves_lead(self, tables: list[TableReplay], moves: list[dict[str, Any]],
                          where: str) -> list[list[str]] | None:
        """The seating the round's moves give: one move for each player, from her table."""
        seats: list[list[str | None]] = [[None] * 4 for _ in tables]
        at = {p: table.number for table in tables for p in table.seats}
        place = {number: i for i, number in enumerate(self.numbers)}  # a table's by its number
        moved = set()
        for m in moves:
            p, to, seat = m.get("player"), m.get("to_table"), m.get("to_seat")
            if p not in at or m.get("from_table") != at[p] or p in moved or \
                    isinstance(to, list | dict) or to not in place or seat not in (1, 2, 3, 4) or \
                    seats[place[to]][seat - 1] is not None:
                self.say(f"{where}: the move {m} is not one move of a player from her table to "
                         "a free seat")
                return None
            moved.add(p)
            seats[place[to]][seat - 1] = p
        if moved != set(at):
            self.say(f"{where}: no move for {', '.join(sorted(set(at) - moved))}")
            return None
        return seats  # type: ignore[return-value]


def audit_record(record: dict[str, Any], rules: HouseRules) -> list[str]:
    """Every way ``record`` disagrees with ``rules`` and with itself, each naming its place."""
    audit: _Audit | None = None
    try:
        audit = _Audit(record, rules)
        return audit.run()
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return (audit.problems if audit else []) + [
            f"the record cannot be checked further: {exc!r} is missing or malformed"]
