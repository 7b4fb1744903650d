"""The audit's own scoring and turn order: one table's round played again from its log entries,
from the house rules' keys alone (nothing here calls the engine's table or scoring code)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bunco_pi.rules.house import HouseRules

# --- a roll's worth, from the scoring keys ------------------------------------------------------


@dataclass(frozen=True)
class Worth:
    points: int
    continues: bool
    target_dice: int = 0
    bunco: bool = False
    baby: bool = False
    wipeout: bool = False
    travels: bool = False


def travels(rules: HouseRules, target: int, bunco: bool, face: int | None) -> bool:
    if not rules.traveler.enabled:
        return False
    if rules.traveler.trigger == "bunco":
        return bunco
    return face == 2 and target != 2  # "Travel is rolling all 2s, unless we are rolling for 2s"


def worth_of_dice(dice: Sequence[int], target: int, rules: HouseRules) -> Worth:
    s = rules.scoring
    hits = sum(1 for d in dice if d == target)
    if hits == 3:
        return Worth(s.bunco_points, True, 3, bunco=True,
                      travels=travels(rules, target, True, target))
    if dice[0] == dice[1] == dice[2]:
        if dice[0] == 1 and rules.wipeout.enabled:
            return Worth(0, not rules.wipeout.ends_turn, wipeout=True)
        pts = s.three_of_a_kind_points
        return Worth(pts, pts > 0 and s.turn_continues == "any-points", baby=s.baby_bunco,
                      travels=travels(rules, target, False, dice[0]))
    return Worth(hits * s.points_per_target_die, hits > 0, hits)


def worth_of_tally(kind: str, face: int | None, target: int, rules: HouseRules) -> Worth:
    s = rules.scoring
    if kind == "point":
        return Worth(s.points_per_target_die, True, 1)
    if kind == "bunco":
        return Worth(s.bunco_points, True, 3, bunco=True,
                      travels=travels(rules, target, True, target))
    if kind == "three" and face != target:
        return Worth(s.three_of_a_kind_points, True, baby=s.baby_bunco,
                      travels=travels(rules, target, False, face))
    if kind == "wipeout" and rules.wipeout.enabled:
        return Worth(0, not rules.wipeout.ends_turn, wipeout=True)
    raise ValueError(f"a '{kind}' entry cannot happen under these house rules")


# --- one table's round, played again from its entries -------------------------------------------


@dataclass
class RollReplay:
    player: str
    seat: int  # 0..3
    dice: list[int] | None
    tally: str | None
    points: int
    rolloff: bool
    session: int
    worth: Worth
    at: int


@dataclass
class TableReplay:
    number: int
    seats: list[str]
    target: int
    can_end: bool
    ghosts: set[str]
    rules: HouseRules
    problems: list[str]
    rolls: list[RollReplay] = field(default_factory=list)
    points: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    rolloff_points: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    roller: int = 0
    turn_rolls: int = 0
    rolled: set[int] = field(default_factory=set)
    phase: str = "playing"  # playing, finishing, last-roll, extra, rolloff, done
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
                worth = worth_of_dice(dice, self.target, rules)
                tally = None
            else:
                dice, tally = None, args[0]
                self.buttons = True
                worth = worth_of_tally(tally, args[1] if len(args) > 1 else None, self.target,
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
        self.rolls.append(RollReplay(player, seat, dice, tally, points, rolloff,
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
        elif self.phase == "last-roll":  # the roll in hand at the horn, and no more
            if dice is not None or over:
                self._decide()
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

    def _reaches_the_end(self, worth: Worth, ghost: bool) -> bool:
        if not self.can_end or self.bell:
            return False
        rules = self.rules
        if rules.round.ends_by == "time":  # only the horn ends a round
            return False
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
        if self.rules.round.minutes > 0:
            # a timed round: "at_horn" says what the turn in progress does, whatever ended it
            if self.rules.round.at_horn == "stop":
                self._decide()
            else:
                self.phase = "last-roll"
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
        elif self.phase == "last-roll":
            self._decide()
        else:
            self._next_in_queue()

    def _end_of_play(self) -> None:
        if self.rules.round.every_player_rolls and not self.rules.round.minutes > 0:
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

    def credited(self, roll: RollReplay) -> str | None:
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
