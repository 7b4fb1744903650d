"""Check a night record against its house rules, independently of the engine that made it.

The audit reads the house rules as data and the record's log, and plays the night again with its
own roll scoring, its own turn order, its own seating and its own prize rules: nothing here calls
the engine's scoring, table, rotation, card or prize code, so an engine bug cannot agree with
itself. It then compares what it derived with what the record says (every roll, its player and
points, the scores, winners, moves, cards, the traveler, the prizes) and lists every
disagreement, each naming its place. An empty list means the record is consistent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bunco_pi.rules.house import HouseRules

_STATS = ("wins", "losses", "buncos", "baby_buncos", "wipeouts", "weighted_wins",
          "weighted_losses", "points")


# --- a roll's worth, from the scoring keys ------------------------------------------------------


@dataclass(frozen=True)
class _Worth:
    points: int
    continues: bool
    target_dice: int = 0
    bunco: bool = False
    baby: bool = False
    wipeout: bool = False
    travels: bool = False


def _travels(rules: HouseRules, target: int, bunco: bool, face: int | None) -> bool:
    if not rules.traveler.enabled:
        return False
    if rules.traveler.trigger == "bunco":
        return bunco
    return face == 2 and target != 2  # "Travel is rolling all 2s, unless we are rolling for 2s"


def _worth_of_dice(dice: Sequence[int], target: int, rules: HouseRules) -> _Worth:
    s = rules.scoring
    hits = sum(1 for d in dice if d == target)
    if hits == 3:
        return _Worth(s.bunco_points, True, 3, bunco=True,
                      travels=_travels(rules, target, True, target))
    if dice[0] == dice[1] == dice[2]:
        if dice[0] == 1 and rules.wipeout.enabled:
            return _Worth(0, not rules.wipeout.ends_turn, wipeout=True)
        pts = s.three_of_a_kind_points
        return _Worth(pts, pts > 0 and s.turn_continues == "any-points", baby=s.baby_bunco,
                      travels=_travels(rules, target, False, dice[0]))
    return _Worth(hits * s.points_per_target_die, hits > 0, hits)


def _worth_of_tally(kind: str, face: int | None, target: int, rules: HouseRules) -> _Worth:
    s = rules.scoring
    if kind == "point":
        return _Worth(s.points_per_target_die, True, 1)
    if kind == "bunco":
        return _Worth(s.bunco_points, True, 3, bunco=True,
                      travels=_travels(rules, target, True, target))
    if kind == "three" and face != target:
        return _Worth(s.three_of_a_kind_points, True, baby=s.baby_bunco,
                      travels=_travels(rules, target, False, face))
    if kind == "wipeout" and rules.wipeout.enabled:
        return _Worth(0, not rules.wipeout.ends_turn, wipeout=True)
    raise ValueError(f"a '{kind}' entry cannot happen under these house rules")


# --- one table's round, played again from its entries -------------------------------------------


@dataclass
class _Roll:
    player: str
    seat: int  # 0..3
    dice: list[int] | None
    tally: str | None
    points: int
    rolloff: bool
    session: int
    worth: _Worth
    at: int


@dataclass
class _Table:
    number: int
    seats: list[str]
    target: int
    can_end: bool
    ghosts: set[str]
    rules: HouseRules
    problems: list[str]
    rolls: list[_Roll] = field(default_factory=list)
    points: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    rolloff_points: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    roller: int = 0
    turn_rolls: int = 0
    rolled: set[int] = field(default_factory=set)
    phase: str = "playing"  # playing, finishing, extra, rolloff, done
    bell: bool = False
    ended_round: bool = False
    ended_at: int | None = None  # log position of the entry that ended the round here
    queue: list[int] = field(default_factory=list)
    group: list[int] = field(default_factory=list)
    sessions: int = 0
    losing: list[int] = field(default_factory=list)
    buttons: bool = False  # a tally or the pass button was used: a turn may leave no roll
    held: str = ""  # the round.held_table rule it counted by, if the host closed it unfinished

    def team(self, pool: list[int]) -> tuple[int, int]:
        return pool[0] + pool[2], pool[1] + pool[3]

    def entry(self, kind: str, args: list[Any], at: int, where: str) -> bool:
        """Apply one entry; False if it does not become one of the table's entries (a bell
        already heard, or an entry that cannot happen here, which is reported)."""
        if kind == "bell":
            return self._bell()
        if self.phase == "done":
            what = "a roll" if kind in ("roll", "tally") else f"a '{kind}'"
            self.problems.append(f"{where}: {what} (log entry {at}) after the table's finishing "
                                 "turn and roll-offs were over")
            return False
        if kind == "pass":
            self.buttons = True
            self._turn_over()
            return True
        rules = self.rules
        try:
            if kind == "roll":
                dice = [int(d) for d in args[0]]
                if len(dice) != 3 or any(not 1 <= d <= 6 for d in dice):
                    raise ValueError(f"{args[0]!r} are not three dice")
                worth = _worth_of_dice(dice, self.target, rules)
                tally = None
            else:
                dice, tally = None, args[0]
                self.buttons = True
                worth = _worth_of_tally(tally, args[1] if len(args) > 1 else None, self.target,
                                        rules)
        except (ValueError, TypeError, IndexError) as exc:
            self.problems.append(f"{where}: log entry {at} cannot be: {exc}")
            return False
        seat = self.roller
        player = self.seats[seat]
        ghost = player in self.ghosts
        rolloff = self.phase == "rolloff"
        pool = self.rolloff_points if rolloff else self.points
        if worth.wipeout:
            points = -pool[seat]
        elif ghost and rules.ghost.points == "none":
            points = 0
        else:
            points = worth.points
        pool[seat] += points
        self.rolls.append(_Roll(player, seat, dice, tally, points, rolloff,
                                self.sessions if rolloff else 0, worth, at))
        self.rolled.add(seat)
        self.turn_rolls += 1
        over = not worth.continues
        if self.phase == "playing":
            if self._reaches_the_end(worth, ghost):
                self.ended_round, self.bell, self.ended_at = True, True, at
                self._end_of_play()
            elif over:
                self.roller, self.turn_rolls = (seat + 1) % 4, 0
        elif self.phase == "finishing":
            if over:
                self._end_of_play()
        elif self.phase == "extra":
            if dice is not None or over:
                self._next_in_queue()
        else:  # rolloff: "as long as they are successfully rolling the number of that round"
            if (dice is not None and not worth.target_dice
                    and rules.round.rolloff_turn_continues == "target-number"):
                over = True
            if over:
                self._next_in_queue()
        return True

    def _reaches_the_end(self, worth: _Worth, ghost: bool) -> bool:
        if not self.can_end or self.bell:
            return False
        rules = self.rules
        if worth.bunco and rules.round.bunco_ends_round and (not ghost
                                                              or rules.ghost.points == "team"):
            return True
        best = max(self.team(self.points)) if rules.team_play else max(self.points)
        return best >= rules.round.target_score

    def _bell(self) -> bool:
        if self.bell:
            return False
        self.bell = True
        if self.phase != "playing":
            return True
        after = self.rules.round.after_bell
        last_showed_target = bool(self.rolls) and self.rolls[-1].worth.target_dice > 0
        if after == "stop" or self.turn_rolls == 0 or (
                after == "finish-if-target" and not last_showed_target):
            self._end_of_play()
        else:
            self.phase = "finishing"
        return True

    def _turn_over(self) -> None:
        if self.phase == "playing":
            self.roller, self.turn_rolls = (self.roller + 1) % 4, 0
        elif self.phase == "finishing":
            self._end_of_play()
        else:
            self._next_in_queue()

    def _end_of_play(self) -> None:
        if self.rules.round.every_player_rolls:
            # "Every player gets at least one roll per round": from the next seat on
            waiting = [s for s in ((self.roller + 1 + i) % 4 for i in range(4))
                       if s not in self.rolled]
            if waiting:
                self.phase, self.queue = "extra", waiting
                self.roller, self.turn_rolls = waiting[0], 0
                return
        self._decide()

    def _next_in_queue(self) -> None:
        self.queue = self.queue[1:]
        self.turn_rolls = 0
        if self.queue:
            self.roller = self.queue[0]
        elif self.phase == "rolloff":
            self._decide_rolloff()
        else:
            self._decide()

    def _rolloff(self, group: list[int]) -> None:
        self.phase, self.group, self.queue = "rolloff", group, list(group)
        self.roller, self.turn_rolls = group[0], 0  # "Player #1 starts off rolling first"
        self.sessions += 1

    def _decide(self) -> None:
        if self.rules.team_play:
            a, b = self.team(self.points)
            if a == b:
                self._rolloff([0, 1, 2, 3])
            else:
                self._done([1, 3] if a > b else [0, 2])
            return
        ghost_seats = [s for s in range(4) if self.seats[s] in self.ghosts]
        if ghost_seats and self.rules.ghost.moves_instead:
            self._done([ghost_seats[0]])  # "The ghost should rotate tables ... rather than"
        else:
            self._lowest([0, 1, 2, 3], self.points)

    def _lowest(self, group: list[int], pool: list[int]) -> None:
        low = min(pool[s] for s in group)
        lowest = [s for s in group if pool[s] == low]
        if len(lowest) == 1:
            self._done(lowest)
        else:
            self._rolloff(lowest)

    def _decide_rolloff(self) -> None:
        if self.rules.team_play:
            a, b = self.team(self.rolloff_points)
            if a == b:
                self._rolloff([0, 1, 2, 3])  # "additional roll-off sessions are repeated"
            else:
                self._done([1, 3] if a > b else [0, 2])
        else:
            self._lowest(self.group, self.rolloff_points)

    def _done(self, losing: list[int]) -> None:
        self.phase, self.losing, self.queue = "done", sorted(losing), []

    def hold(self, rule: str) -> None:
        """The host closed the round before this table finished: "as-it-stands" decides it by
        its round scores as they are, the way the end of play would; a tie, or "no-result",
        leaves it without winners or losers."""
        self.held = rule
        self.losing = []
        if rule != "as-it-stands":
            return
        if self.rules.team_play:
            a, b = self.team(self.points)
            if a != b:
                self.losing = [1, 3] if a > b else [0, 2]
            return
        ghost_seats = [s for s in range(4) if self.seats[s] in self.ghosts]
        if ghost_seats and self.rules.ghost.moves_instead:
            self.losing = [ghost_seats[0]]
            return
        low = min(self.points)
        lowest = [s for s in range(4) if self.points[s] == low]
        if len(lowest) == 1:
            self.losing = lowest

    @property
    def decided(self) -> bool:
        """The round gave this table winners and losers."""
        return self.phase == "done" or bool(self.held and self.losing)

    @property
    def winners(self) -> list[str]:
        if not self.decided:
            return []
        return [self.seats[s] for s in range(4) if s not in self.losing]

    @property
    def losers(self) -> list[str]:
        return [self.seats[s] for s in self.losing]

    def credited(self, roll: _Roll) -> str | None:
        """Who gets a roll's bunco point and the traveler: 000 gives a ghost's to her teammate,
        002 "Only the player that actually rolled the BUNCO gets credit", 003/004 nobody."""
        if roll.player not in self.ghosts:
            return roll.player
        if self.rules.ghost.bunco_credit != "teammate" or not self.rules.team_play:
            return None
        mate = self.seats[(roll.seat + 2) % 4]
        return None if mate in self.ghosts else mate

    def called_bunko(self) -> str | None:
        """004: "When a player rolls a Bunko or reaches 21 points, she should call out Bunko!":
        the player whose roll reached the target and ended the round (not a bunco roll)."""
        totals = [0, 0, 0, 0]
        for roll in self.rolls:
            if roll.rolloff:
                continue
            totals[roll.seat] += roll.points
            if roll.at == self.ended_at:
                ghost = roll.player in self.ghosts
                return None if roll.worth.bunco or ghost else roll.player
        return None


# --- seating, from the rotation keys -----------------------------------------------------------


def _expected_seating(rules: HouseRules, tables: list[_Table], ghosts: set[str]
                      ) -> list[list[str]]:
    """The next round's seats: each scheme as docs/house-rules.md words it."""
    count = len(tables)
    if rules.rotation.scheme == "lowest-moves":
        # the mover of each group takes the seat the previous group's mover left
        return [[tables[t - 1].losers[0] if p == tables[t].losers[0] else p
                 for p in tables[t].seats] for t in range(count)]
    win = [[p for p in t.seats if p in t.winners] for t in tables]
    lose = [[p for p in t.seats if p in t.losers] for t in tables]
    plans: list[tuple[list[list[str]], list[list[str]]]] = []
    scheme, last = rules.rotation.scheme, count - 1
    for t in range(count):
        if count == 1:
            plans.append(([win[0], lose[0]], []))
        elif scheme == "head-stays":
            plans.append(([win[0]], [win[1]]) if t == 0 else
                         ([lose[t]], [lose[t - 1]]) if t == last else
                         ([], [lose[t - 1], win[t + 1]]))
        elif scheme == "head-losers-to-low":
            plans.append(([win[0]], [win[1]]) if t == 0 else
                         ([lose[t]], [lose[0]]) if t == last else
                         ([lose[t]], [win[t + 1]]))
        else:  # winners-rotate: winners head -> 2 -> 3 -> head, losers stay
            plans.append(([lose[t]], [win[t - 1]]))
    split = rules.rotation.split_partners
    seating = []
    for t, (staying, arriving) in enumerate(plans):
        seats: list[str | None] = [None] * 4
        if staying:
            first = staying[0]
            anchor = tables[t].seats.index(first[0])
            seats[anchor] = first[0]
            # "one teammate move over a chair": the pair ends up on opposite teams
            seats[(anchor + (1 if split else 2)) % 4] = first[1]
            rest = [p for group in staying[1:] + arriving for p in group]
        elif split:
            rest = arriving[0] + arriving[1]
        else:
            rest = [arriving[0][0], arriving[1][0], arriving[0][1], arriving[1][1]]
        free = iter(rest)
        seating.append([p if p is not None else next(free) for p in seats])
    if rules.ghost.real_partner:
        _mend_ghost_pairs(seating, ghosts)
    return seating


def _mend_ghost_pairs(seating: list[list[str]], ghosts: set[str]) -> None:
    """docs/house-rules.md: a ghost across from another ghost changes places with the player in
    the next seat, whose team is then one real player and one ghost; failing that (three ghosts
    at a table), with the first real player, head table first, whose partner is real."""
    def real_pair(seats: list[str], seat: int) -> bool:
        return seats[seat] not in ghosts and seats[(seat + 2) % 4] not in ghosts

    for _ in range(4 * len(seating)):  # each change mends a pair and makes none
        pair = next(((t, s) for t, seats in enumerate(seating) for s in (0, 1)
                     if seats[s] in ghosts and seats[s + 2] in ghosts), None)
        if pair is None:
            return
        t, s = pair
        seats = seating[t]
        if real_pair(seats, s + 1):
            seats[s + 2], seats[(s + 3) % 4] = seats[(s + 3) % 4], seats[s + 2]
            continue
        other = next(((u, i) for u, there in enumerate(seating) for i in range(4)
                      if u != t and real_pair(there, i)), None)
        if other is None:
            return  # not real players enough
        u, i = other
        seats[s + 2], seating[u][i] = seating[u][i], seats[s + 2]


# --- the audit ----------------------------------------------------------------------------------


_CLOSES = ("close", "close-held")
_SEAT_CHANGES = ("arrive", "leave", "end-night")


def _split_log(log: list[Any]) -> tuple[list[list[tuple[int, list[Any]]]], bool]:
    """The log's rounds (each a list of (position, event) from "start" to "close" or the host's
    "close-held"), and whether a round is still in play at its end."""
    rounds: list[list[tuple[int, list[Any]]]] = []
    current: list[tuple[int, list[Any]]] | None = None
    for at, event in enumerate(log):
        if not isinstance(event, list) or not event:
            continue
        if event[0] == "start":
            current = []
        if current is not None:
            current.append((at, event))
        if event[0] in _CLOSES and current is not None:
            rounds.append(current)
            current = None
    return rounds, current is not None


def _first_ghosts(players: list[dict[str, Any]], log: list[Any]) -> tuple[set[str], list[str]]:
    """Who sat as a ghost when the night began, and the late arrivals in the order they came.

    The record's players carry who is a ghost at its end; a seat someone first arrives at was a
    ghost's until then, and someone whose first change is leaving was a player until then."""
    ghosts = {p["id"] for p in players if p["ghost"]}
    first: dict[str, str] = {}
    arrived: list[str] = []
    for event in log:
        if isinstance(event, list) and len(event) >= 2 and event[0] in ("arrive", "leave"):
            first.setdefault(event[1], event[0])
            if event[0] == "arrive" and event[1] not in arrived:
                arrived.append(event[1])
    for pid, kind in first.items():
        if kind == "arrive":
            ghosts.add(pid)
        else:
            ghosts.discard(pid)
    return ghosts, arrived


class _Audit:
    def __init__(self, record: dict[str, Any], rules: HouseRules) -> None:
        self.record = record
        self.rules = rules
        self.problems: list[str] = []
        self.players = [p["id"] for p in record["players"]]
        # who sits as a ghost changes only by the host's arrivals and leavings between rounds
        self.ghosts, arrived = _first_ghosts(record["players"], record.get("log", []))
        # a card for everyone who checked in, and for each late arrival when she came
        self.real = [p for p in self.players if p not in self.ghosts] + \
            [p for p in arrived if p in self.ghosts]
        self.cards = {p: dict.fromkeys(_STATS, 0) for p in self.real}
        self.travel: list[tuple[int, str]] = []
        self.wipeout_travel: list[tuple[int, str]] = []
        numbers = record.get("table_numbers")
        self.numbers = list(numbers) if numbers else list(range(1, len(record["first_seating"]) + 1))

    def say(self, problem: str) -> None:
        self.problems.append(problem)

    def run(self) -> list[str]:
        rules, record = self.rules, self.record
        log = record.get("log", [])
        log_rounds, in_play = _split_log(log)
        rounds = record["rounds"]
        per_set = len(rules.night.targets)
        if len(rounds) != len(log_rounds):
            self.say(f"the record holds {len(rounds)} rounds, its log closes {len(log_rounds)}")
        ended_early = any(isinstance(e, list) and e[:1] == ["end-night"] for e in log)
        if record.get("complete") and not ended_early and \
                len(log_rounds) != rules.rounds_per_night:
            self.say(f"a complete night has {rules.rounds_per_night} rounds, the log closes "
                     f"{len(log_rounds)}")
        seating = [list(s) for s in record["first_seating"]]
        self._check_ghost_partners(seating, "the first seating")
        changed = 0  # the log position up to which the host's seat changes are applied
        for index, events in enumerate(log_rounds):
            set_no, round_no = index // per_set + 1, index % per_set + 1
            where = f"set {set_no} round {round_no}"
            target = rules.night.targets[index % per_set]
            changed = self._change_seats(log, changed, events[0][0])
            tables = self._play_round(events, seating, target, where)
            mine = rounds[index] if index < len(rounds) else None
            if mine is None:
                self.say(f"{where}: missing from the record (the log plays it)")
            else:
                self._compare_round(mine, tables, set_no, round_no, target, where)
            self._add_cards(tables)
            if any(t.phase != "done" and not t.held for t in tables):
                break  # no winners to seat the next round by (reported above)
            next_seating = self._next_seating(tables)
            self._compare_moves(index, tables, next_seating, where)
            self._check_ghost_partners(next_seating, f"after {where}",
                                       [t.decided for t in tables])
            seating = next_seating
        else:
            self._change_seats(log, changed, len(log))
            ghosts_now = {p["id"] for p in record["players"] if p["ghost"]}
            if ghosts_now != self.ghosts:
                self.say(f"the record's ghosts {sorted(ghosts_now)} are not who the log's "
                         f"arrivals and leavings leave as ghosts {sorted(self.ghosts)}")
        self._check_breaks(log)
        self._compare_cards()
        if not in_play:
            self._compare_traveler("traveler", self.travel)
            self._compare_traveler("wipeout_traveler", self.wipeout_travel)
        if record.get("complete"):
            self._check_prizes(log)
        return self.problems

    # --- the host's seat changes ---------------------------------------------------------------

    def _change_seats(self, log: list[Any], start: int, end: int) -> int:
        """Apply the arrivals and leavings logged between positions ``start`` and ``end``
        (between rounds), checking each could happen; the position reached."""
        for at in range(start, end):
            event = log[at]
            if not isinstance(event, list) or len(event) < 2 or \
                    event[0] not in ("arrive", "leave"):
                continue
            pid = event[1]
            if pid not in self.players:
                self.say(f"log entry {at}: '{event[0]}' for {pid}, who is not a player tonight")
            elif event[0] == "arrive":
                if pid not in self.ghosts:
                    self.say(f"log entry {at}: a late arrival at {pid}'s seat, which is not a "
                             "ghost's")
                elif self._changed_before(log, pid, at):  # she left: the card is hers
                    self.say(f"log entry {at}: a late arrival at {pid}'s seat, whose card is "
                             "someone else's")
                self.ghosts.discard(pid)
            else:
                if pid in self.ghosts:
                    self.say(f"log entry {at}: {pid} leaves, but she is already a ghost")
                self.ghosts.add(pid)
        return max(start, end)

    @staticmethod
    def _changed_before(log: list[Any], pid: str, at: int) -> bool:
        return any(isinstance(e, list) and e[:2] in (["arrive", pid], ["leave", pid])
                   for e in log[:at])

    def _next_seating(self, tables: list[_Table]) -> list[list[str]]:
        """A table without a result keeps its four where they sit; the others rotate among
        themselves as if it were not there."""
        rotating = [t for t in tables if t.decided]
        seating = [list(t.seats) for t in tables]
        if rotating:
            moved = iter(_expected_seating(self.rules, rotating, self.ghosts))
            seating = [next(moved) if t.decided else seats for t, seats in zip(tables, seating,
                                                                                strict=True)]
        return seating

    # --- rounds -----------------------------------------------------------------------------

    def _play_round(self, events: list[tuple[int, list[Any]]], seating: list[list[str]],
                    target: int, where: str) -> list[_Table]:
        rules = self.rules
        any_table = rules.round.ends_at == "any-table"
        tables = [_Table(self.numbers[t], list(seats), target, t == 0 or any_table,
                         self.ghosts & set(seats), rules, problems=self.problems)
                  for t, seats in enumerate(seating)]
        kept: dict[int, list[tuple[int, list[Any]]]] = {t.number: [] for t in tables}
        index = {t.number: i for i, t in enumerate(tables)}
        causes: list[int] = []  # where the bell may have latched: a ring, a table's end
        for at, event in events:
            kind = event[0]
            if kind == "ring":
                causes.append(at)
            if kind in _SEAT_CHANGES:
                self.say(f"{where}: log entry {at} is a '{kind}' during the round, and seats "
                         "change only between rounds")
            if kind not in ("roll", "tally", "pass", "bell", "undo"):
                continue
            if len(event) < 2 or event[1] not in index:
                self.say(f"{where}: log entry {at} is for a table that is not playing")
                continue
            number = event[1]
            table = tables[index[number]]
            here = f"{where} table {number}"
            if kind == "undo":
                # the table's round is the fold of its entries but the last roll, tally or pass
                entries = kept[number]
                last = next((i for i in range(len(entries) - 1, -1, -1)
                             if entries[i][1][0] != "bell"), None)
                if last is None:
                    self.say(f"{here}: an undo (log entry {at}) with nothing to take back")
                    continue
                del entries[last]
                table = _Table(number, table.seats, target, table.can_end, table.ghosts, rules,
                               problems=self.problems)
                for old_at, old in entries:
                    table.entry(old[0], old[2:], old_at, here)
                tables[index[number]] = table
                continue
            if kind == "bell" and not table.bell and not causes:
                self.say(f"{here}: heard a bell (log entry {at}) before any table ended "
                         "the round or the host rang it")
            ended = table.ended_round
            if table.entry(kind, event[2:], at, here):
                kept[number].append((at, event))
            if table.ended_round and not ended:
                causes.append(at)
        closed_at, close = events[-1]
        if close[0] == "close-held":
            held = [t for t in tables if t.phase != "done"]
            if not held:
                self.say(f"{where}: the host closed a held round (log entry {closed_at}), but "
                         "every table had finished")
            for table in held:
                table.hold(rules.round.held_table)
            causes.append(closed_at)  # the host held the bell
        for table in tables:
            if table.phase != "done" and not table.held:
                self.say(f"{where} table {table.number}: the round was closed before this "
                         f"table finished (it was in its '{table.phase}' phase)")
        if not causes:
            self.say(f"{where}: no table ended the round and the host did not ring the bell")
        return tables

    def _compare_round(self, mine: dict[str, Any], tables: list[_Table], set_no: int,
                       round_no: int, target: int, where: str) -> None:
        if (mine.get("set"), mine.get("round")) != (set_no, round_no):
            self.say(f"{where}: the record calls it set {mine.get('set')} round "
                     f"{mine.get('round')}")
        if mine.get("target") != target:
            self.say(f"{where}: target {mine.get('target')}, rules say {target}")
        seen = sorted(p for t in mine["tables"] for p in t["seats"])
        if seen != sorted(self.players):
            self.say(f"{where}: not every player sits exactly once")
        if len(mine["tables"]) != len(tables):
            self.say(f"{where}: {len(mine['tables'])} tables in the record, "
                     f"{len(tables)} play in the log")
        for t, table in zip(mine["tables"], tables, strict=False):
            self._compare_table(t, table, f"{where} table {table.number}")

    def _compare_table(self, t: dict[str, Any], table: _Table, where: str) -> None:
        rules = self.rules
        if t.get("table") != table.number:
            self.say(f"{where}: the record numbers it table {t.get('table')}")
        if list(t["seats"]) != table.seats:
            self.say(f"{where}: seats {t['seats']}, the rotation gives {table.seats}")
        rolls = t["rolls"]
        if len(rolls) != len(table.rolls):
            self.say(f"{where}: {len(rolls)} rolls in the record, its log entries make "
                     f"{len(table.rolls)}")
        for i, (got, want) in enumerate(zip(rolls, table.rolls, strict=False)):
            self._compare_roll(got, want, f"{where}: roll {i + 1}")
        score = list(table.team(table.points))
        if list(t["score"]) != score:
            self.say(f"{where}: score {t['score']}, its rolls add up to {score}")
        if list(t["seat_scores"]) != table.points:
            self.say(f"{where}: seat scores {t['seat_scores']}, its rolls add up to "
                     f"{table.points}")
        if t["ended_round"] != table.ended_round:
            self.say(f"{where}: ended_round is {t['ended_round']}, its rolls say "
                     f"{table.ended_round}")
        if t.get("held", "") != table.held:
            self.say(f"{where}: held is {t.get('held')!r}, the log gives "
                     f"{table.held or None!r}")
        if table.held and not table.decided and (t["winners"] or t["losers"]):
            self.say(f"{where}: winners {t['winners']} and losers {t['losers']}, but the held "
                     f"table had no result ({table.held}, scores as they stood {table.points})")
        elif table.held and (sorted(t["winners"]) != sorted(table.winners)
                             or sorted(t["losers"]) != sorted(table.losers)):
            self.say(f"{where}: winners {t['winners']} and losers {t['losers']}, its scores as "
                     f"they stood give winners {table.winners}")
        if table.held and t["rolloffs"] != table.sessions:
            self.say(f"{where}: {t['rolloffs']} roll-off sessions in the record, the rolls "
                     f"had {table.sessions} when the host closed the round")
        if table.phase == "done":
            if sorted(t["winners"]) != sorted(table.winners) or \
                    sorted(t["losers"]) != sorted(table.losers):
                self.say(f"{where}: winners {t['winners']} and losers {t['losers']}, the rolls "
                         f"give winners {table.winners}")
            if t["rolloffs"] != table.sessions:
                self.say(f"{where}: {t['rolloffs']} roll-off sessions in the record, the rolls "
                         f"need {table.sessions}")
            if rules.team_play and table.team(table.points)[0] == table.team(table.points)[1] \
                    and not any(r["rolloff"] for r in rolls) and t["rolloffs"] == 0:
                self.say(f"{where}: tied {score} but no roll-off")
        if rules.round.every_player_rolls and not table.buttons and not table.held:
            rolled = {r.seat for r in table.rolls if not r.rolloff}
            for s in range(4):
                if s not in rolled:
                    self.say(f"{where}: {table.seats[s]} never rolled, and every player gets "
                             "at least one roll per round")

    def _compare_roll(self, got: dict[str, Any], want: _Roll, where: str) -> None:
        if got.get("player") != want.player:
            self.say(f"{where} is by {got.get('player')}, but it was {want.player}'s turn "
                     f"(seat {want.seat + 1})")
        if got.get("dice") != want.dice or got.get("tally") != want.tally:
            self.say(f"{where}: the record has {got.get('dice') or got.get('tally')}, the log "
                     f"{want.dice or want.tally}")
        if got.get("points") != want.points:
            self.say(f"{where} {got.get('dice')} by {got.get('player')} scored "
                     f"{got.get('points')}, rules say {want.points}")
        if bool(got.get("rolloff")) != want.rolloff:
            self.say(f"{where}: rolloff is {got.get('rolloff')}, the turn order says "
                     f"{want.rolloff}")
        elif want.rolloff and got.get("session", want.session) != want.session:
            self.say(f"{where}: roll-off session {got.get('session')}, the turn order says "
                     f"{want.session}")
        flags = {"bunco": want.worth.bunco, "baby_bunco": want.worth.baby,
                 "wipeout": want.worth.wipeout, "travels": want.worth.travels}
        for flag, value in flags.items():
            if bool(got.get(flag)) != value:
                self.say(f"{where}: {flag} is {bool(got.get(flag))}, rules say {value}")
        if got.get("at") != want.at:
            self.say(f"{where}: at {got.get('at')}, the log has it at {want.at}")

    def _compare_moves(self, index: int, tables: list[_Table], next_seating: list[list[str]],
                       where: str) -> None:
        rounds = self.record["rounds"]
        mine = rounds[index] if index < len(rounds) else None
        where_now = {p: (t, s) for t, seats in enumerate(next_seating) for s, p in enumerate(seats)}
        expected = [{"player": p, "from_table": table.number,
                     "to_table": self.numbers[where_now[p][0]], "to_seat": where_now[p][1] + 1}
                    for table in tables for p in table.seats]
        if mine is not None and mine.get("moves") != expected:
            wrong = [m for m in mine.get("moves", []) if m not in expected]
            self.say(f"{where}: moves {wrong or mine.get('moves')} are not the rotation's")
        actual = next_seating
        if index + 1 < len(rounds):
            actual = [list(t["seats"]) for t in rounds[index + 1]["tables"]]
            if actual != next_seating:
                self.say(f"{where}: next seating {actual} is not the rotation's {next_seating}")
        if self.rules.team_play and self.rules.rotation.split_partners:
            partners = {frozenset((t.seats[i], t.seats[i + 2])) for t in tables if t.decided
                        for i in (0, 1)}  # a table without a result keeps its seats
            for seats in actual:
                for i in (0, 1):
                    pair = frozenset((seats[i], seats[i + 2]))
                    if pair in partners and not pair & self.ghosts:
                        self.say(f"{where}: partners {seats[i]} and {seats[i + 2]} were not split")

    def _check_ghost_partners(self, seating: list[list[str]], where: str,
                              moved: list[bool] | None = None) -> None:
        """``moved``: which tables the rotation seated (a table without a result kept its
        seats); ghosts pair up among those only where there were real players enough."""
        if not (self.rules.ghost.real_partner and self.rules.team_play):
            return
        tables = [t for t in range(len(seating)) if moved is None or moved[t]]
        if sum(p in self.ghosts for t in tables for p in seating[t]) > 2 * len(tables):
            return  # more ghosts than partnerships: some must partner each other
        for t in tables:
            seats = seating[t]
            for i in (0, 1):
                if seats[i] in self.ghosts and seats[i + 2] in self.ghosts:
                    self.say(f"{where}: table {self.numbers[t]} seats ghosts {seats[i]} and "
                             f"{seats[i + 2]} as partners, and a ghost needs a real partner to "
                             "roll for her")

    def _check_breaks(self, log: list[Any]) -> None:
        per_set = len(self.rules.night.targets)
        closes = 0
        expecting = ended = False
        for at, event in enumerate(log):
            if not isinstance(event, list) or not event:
                continue
            if event[0] == "end-night":
                ended, expecting = True, False
            elif event[0] in ("start", "next") and ended:
                self.say(f"log entry {at}: the night goes on after the host ended it")
            elif event[0] in _CLOSES:
                closes += 1
            elif event[0] == "next":
                finished = closes // per_set if closes % per_set == 0 else 0
                expecting = finished in self.rules.night.break_after_sets and \
                    closes < self.rules.rounds_per_night
            elif event[0] == "end-break":
                if not expecting:
                    self.say(f"log entry {at}: a break ended where the rules have none")
                expecting = False
            elif event[0] == "start" and expecting:
                self.say(f"log entry {at}: a round started during the break")
                expecting = False

    # --- cards and travelers ------------------------------------------------------------------

    def _add_cards(self, tables: list[_Table]) -> None:
        rules = self.rules
        for i, table in enumerate(tables):
            weight = rules.score_card.head_weight if rules.score_card.weighted_head and i == 0 \
                else 1
            # a ghost's seat scores for nobody, even the seat of someone who left with her card
            seated = {p: self.cards[p] for p in table.seats
                      if p in self.cards and p not in table.ghosts}
            # "no-result": nothing of the held round counts on its players' cards; the
            # travelers moved all the same, as the dice did
            cards = {} if table.held == "no-result" else seated
            if table.decided:
                for p in table.winners:
                    if p in cards:
                        cards[p]["wins"] += 1
                        cards[p]["weighted_wins"] += weight
                for p in table.losers:
                    if p in cards:
                        cards[p]["losses"] += 1
                        cards[p]["weighted_losses"] += weight
            for roll in table.rolls:
                if not roll.rolloff and roll.player in cards:
                    cards[roll.player]["points"] += roll.points
                who = table.credited(roll)
                if roll.worth.bunco and who in cards:
                    cards[who]["buncos"] += 1
                if roll.player in cards:
                    cards[roll.player]["baby_buncos"] += roll.worth.baby
                    cards[roll.player]["wipeouts"] += roll.worth.wipeout
                if roll.worth.travels and who is not None:
                    self.travel.append((roll.at, who))
                if roll.worth.wipeout and rules.wipeout.traveler and roll.player in seated:
                    self.wipeout_travel.append((roll.at, roll.player))
            if table.ended_round and rules.score_card.called_bunko_counts:
                caller = table.called_bunko()
                if caller in cards:
                    cards[caller]["buncos"] += 1

    def _compare_cards(self) -> None:
        got = self.record["cards"]
        for pid in got:
            if pid not in self.cards:
                self.say(f"card for {pid}, who is a ghost or unknown")
        missing = [p for p in self.cards if p not in got]
        if missing:
            self.say(f"no card for {', '.join(missing)}")
        for pid, card in self.cards.items():
            if pid not in got:
                continue
            for stat in _STATS:
                if got[pid].get(stat) != card[stat]:
                    self.say(f"{pid}: card says {stat} {got[pid].get(stat)}, rolls say "
                             f"{card[stat]}")

    def _compare_traveler(self, key: str, triggers: list[tuple[int, str]]) -> None:
        holder = max(triggers)[1] if triggers else None
        name = key.replace("_", " ")
        if self.record.get(key) != holder:
            if holder is None:
                self.say(f"{name} is {self.record.get(key)}, but nobody triggered it")
            else:
                self.say(f"{name} is {self.record.get(key)}, the last trigger was by {holder}")

    # --- prizes -------------------------------------------------------------------------------

    def _amounts(self) -> list[int]:
        """Each prize in cents; with scale_to_pot, cash prizes share out exactly the pot, by
        largest remainder (ties to the earlier prize)."""
        prizes = self.rules.prizes
        raw = [round(p.amount * 100) for p in prizes.prize]
        cash = [i for i, p in enumerate(prizes.prize) if p.cash]
        pot = round(prizes.pot_per_player * 100) * len(self.real)
        total = sum(raw[i] for i in cash)
        if not prizes.scale_to_pot or total in (0, pot):
            return raw
        out = list(raw)
        exact = {i: raw[i] * pot / total for i in cash}
        for i in cash:
            out[i] = int(exact[i])
        left = pot - sum(out[i] for i in cash)
        for i in sorted(cash, key=lambda i: (int(exact[i]) - exact[i], i))[:left]:
            out[i] += 1
        return out

    def _metric(self, award: str, card: dict[str, int]) -> int:
        weighted = self.rules.score_card.weighted_head
        return {
            "most-buncos": card["buncos"],
            "most-wins": card["weighted_wins" if weighted else "wins"],
            "most-losses": card["weighted_losses" if weighted else "losses"],
            "most-baby-buncos": card["baby_buncos"],
            "most-wipeouts": card["wipeouts"],
            "fifty-fifty": -abs(card["wins"] - card["losses"]),  # closest to equal
            "draw-without-prize": 0,
        }[award]

    def _check_prizes(self, log: list[Any]) -> None:
        rules, record = self.rules, self.record
        prizes = record["prizes"]
        if not any(isinstance(e, list) and e[:1] == ["prizes"] for e in log):
            self.say("the night is complete but its log never settles the prizes")
        if len(prizes) != len(rules.prizes.prize):
            self.say(f"{len(prizes)} prizes given, rules list {len(rules.prizes.prize)}")
            return
        amounts = self._amounts()
        holders = {"traveler": self._holder(self.travel),
                   "wipeout-traveler": self._holder(self.wipeout_travel)}
        one_each = rules.prizes.one_cash_prize_per_player
        cash_winners: set[str] = set()
        any_winners: set[str] = set()
        for rule, prize, cents in zip(rules.prizes.prize, prizes, amounts, strict=True):
            name = rule.name
            if prize.get("name") != name:
                self.say(f"prize '{prize.get('name')}' is where the rules list '{name}'")
            if round(prize["amount"] * 100) != cents:
                self.say(f"prize '{name}' pays {prize['amount']:.2f}, the rules give "
                         f"{cents / 100:.2f}")
            if bool(prize.get("cash")) != rule.cash:
                self.say(f"prize '{name}': cash is {prize.get('cash')}, rules say {rule.cash}")
            eligible = [p for p in self.real if not (one_each and rule.cash and p in cash_winners)]
            if rule.award in holders:
                holder = holders[rule.award]
                candidates = [holder] if holder in eligible else []
            else:
                pool = [p for p in eligible if p not in any_winners] \
                    if rule.award == "draw-without-prize" else eligible
                best = max((self._metric(rule.award, self.cards[p]) for p in pool), default=None)
                candidates = [p for p in pool if self._metric(rule.award, self.cards[p]) == best]
            method = rule.tie_break
            if not candidates and rule.cash:
                # the pot is always paid out: a draw among those without a prize
                candidates = [p for p in eligible if p not in any_winners] or eligible or self.real
                method = "draw-highest"
            winner = prize.get("player")
            if not candidates:
                if winner is not None:
                    self.say(f"prize '{name}' went to {winner}, but nobody can win it")
                continue
            if winner not in candidates:
                why = "the traveler is " + str(holders[rule.award]) if rule.award in holders \
                    else "who is not the best" if winner in self.cards else "who has no score card"
                if winner in cash_winners and one_each and rule.cash:
                    self.say(f"{winner} won a second cash prize '{name}'")
                self.say(f"prize '{name}' went to {winner}, {why}")
                continue
            self._check_tie_break(name, prize, candidates, method)
            any_winners.add(winner)
            if rule.cash:
                cash_winners.add(winner)
        cash_total = round(sum(p["amount"] for p in prizes if p["cash"] and p["player"]) * 100)
        pot = round(rules.prizes.pot_per_player * 100) * len(self.real)
        if rules.prizes.scale_to_pot and cash_total != pot:
            self.say(f"cash prizes pay {cash_total / 100:.2f}, the pot is {pot / 100:.2f}")

    @staticmethod
    def _holder(triggers: list[tuple[int, str]]) -> str | None:
        return max(triggers)[1] if triggers else None

    def _check_tie_break(self, name: str, prize: dict[str, Any], candidates: list[str],
                         method: str) -> None:
        winner, tied, account = prize["player"], prize.get("tied", []), prize.get("tie_break", "")
        if len(candidates) == 1:
            if tied or account:
                self.say(f"prize '{name}': a tie-break is given, but {winner} had no tie")
            return
        if sorted(tied) != sorted(candidates):
            self.say(f"prize '{name}': tied {tied}, the cards tie {candidates}")
        if not account.startswith(method + ":"):
            self.say(f"prize '{name}': settled by '{account.split(':')[0]}', rules say {method}")
            return
        last = account.split(";")[-1]
        if method in ("draw-highest", "draw-lowest"):
            drawn = {p: int(n) for p, n in re.findall(r"(\S+) drew (\d+)", last)}
            pick = max if method == "draw-highest" else min
            ok = set(drawn) == set(candidates) and pick(drawn, key=drawn.__getitem__) == winner
        elif method == "roll-off":
            totals = {p: int(n) for p, n in re.findall(r"(\S+) (\d+)", last.split(":")[-1])}
            top = max(totals.values(), default=0)
            ok = winner in totals and [p for p in totals if totals[p] == top] == [winner]
        else:  # bunco-off: the first to roll three of a kind
            triples = re.findall(r"(\S+) (\d)(\d)(\d)", last)
            ok = [p for p, a, b, c in triples if a == b == c] == [winner]
        if not ok:
            self.say(f"prize '{name}': its tie-break '{account}' does not name {winner} "
                     "the winner")


def audit_record(record: dict[str, Any], rules: HouseRules) -> list[str]:
    """Every way ``record`` disagrees with ``rules`` and with itself, each naming its place."""
    audit = _Audit(record, rules)
    try:
        return audit.run()
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        return audit.problems + [f"the record cannot be checked further: {exc!r} is missing "
                                 "or malformed"]
