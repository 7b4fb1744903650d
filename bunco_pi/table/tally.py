"""A round's play folded from its entries, small enough for a Pico: the running score offline.

The head is the authority on every score (its rules engine, ``bunco_pi/rules/``, folds every
table's entries); the Pi box folds its own round through that same engine. The Pico table box
cannot carry the engine, so it folds the play of its round here, under the night's rules as the
head states them (the night state's ``"fold"``, ``head/views.fold_rules``: the points per
press, the goal, what a BUNCO does, the bell), and shows that score while its own entries
have not all reached the head (offline, or before the head's view catches up). What comes
after the play (the extra rolls some house rules give, a tie's roll-off, who won) stays the
head's.

MicroPython runs this file unchanged: no imports, no typing, no dataclasses.

Entries are in their wire form (``presses.wire_entry``): ``["roll", [a, b, c]]``,
``["tally", kind]`` or ``["tally", "three", face]``, ``["pass"]``, ``["bell"]``, ``["undo"]``.
"""

PLAYING, FINISHING, OVER = "playing", "finishing", "over"
UNDOABLE = ("roll", "tally", "pass")


class Refused(ValueError):
    """An entry the night's rules do not allow now (the Pi box shows the engine's reason)."""


def can_end_round(rules, table):
    """Whether this table's play ends the round (``net_link``: the head table, or any table
    where the house plays to "any-table")."""
    return table == 1 or rules.get("ends_at") == "any-table"


def outcome(rules, target, entry):
    """``(points, continues, target_dice, bunco, wipeout)`` of a roll or tally entry."""
    if entry[0] == "roll":
        a, b, c = entry[1]
        hits = (a == target) + (b == target) + (c == target)
        if hits == 3:
            return rules["bunco"], True, 3, True, False
        if a == b == c:
            if a == 1 and rules["wipeout"]:
                return 0, not rules["wipeout_ends"], 0, False, True
            points = rules["three"]
            return points, points > 0 and rules["any_points"], 0, False, False
        return hits * rules["die"], hits > 0, hits, False, False
    kind = entry[1]
    if kind == "point":
        return rules["die"], True, 1, False, False
    if kind == "bunco":
        return rules["bunco"], True, 3, True, False
    if kind == "three":
        if len(entry) > 2 and entry[2] == target:
            raise Refused("three of the target number is a bunco, not three of a kind")
        return rules["three"], True, 0, False, False
    if kind == "wipeout":
        if not rules["wipeout"]:
            raise Refused("these house rules do not play wipeout")
        return 0, not rules["wipeout_ends"], 0, False, True
    raise Refused("unknown tally %r" % (kind,))


class Play:
    """One table's play of a round so far. ``fold`` it from the round's entries, or
    ``apply`` one more (``Refused`` leaves it as it was)."""

    def __init__(self, rules, target, ghosts=(), ends_round=True):
        self.rules = rules
        self.target = target
        self.ghosts = tuple(ghosts)  # seats 1..4 a ghost sits in
        self.ends_round = ends_round
        self.entries = []  # the entries in force (an undo takes one back)
        self._reset()

    def _reset(self):
        self.points = [0, 0, 0, 0]
        self.buncos = [0, 0, 0, 0]
        self.roller = 0  # seat index 0..3
        self.turn_rolls = 0
        self.last_target_dice = 0
        self.bell = False
        self.phase = PLAYING

    @property
    def roller_seat(self):
        return self.roller + 1

    @property
    def team_scores(self):
        p = self.points
        return [p[0] + p[2], p[1] + p[3]]

    @property
    def over(self):
        """The play is over here: what follows is the head's."""
        return self.phase == OVER

    def undo_turn_count(self):
        """How many undos take back the whole current turn, or the previous turn and its pass
        when the roller has done nothing yet (the Pi box's held undo, ``RoundBook.undo_turn``);
        0 for nothing to undo."""
        entries = self.entries
        undoable = [i for i in range(len(entries)) if entries[i][0] != "bell"]
        if not undoable:
            return 0
        seats = [1]  # the roller's seat after each prefix of the entries
        again = Play(self.rules, self.target, self.ghosts, self.ends_round)
        for entry in entries:
            again.apply(entry)
            seats.append(again.roller_seat)
        start = _turn_start(seats, len(entries))
        rest = entries[start:]
        if start == len(entries) or all(e[0] == "bell" for e in rest):
            start = _turn_start(seats, undoable[-1])
        return sum(1 for e in entries[start:] if e[0] != "bell")

    def fold(self, entries):
        for entry in entries:
            self.apply(entry)
        return self

    def apply(self, entry):
        kind = entry[0]
        if kind == "undo":
            self._undo()
            return
        if kind == "bell":
            self.entries.append(entry)
            self._bell()
            return
        if self.phase == OVER:
            # after the play: extra rolls, roll-offs, passes between them: the head's to fold
            self.entries.append(entry)
            return
        if kind == "pass":
            self.entries.append(entry)
            self._next_roller() if self.phase == PLAYING else self._end()
            return
        if kind not in ("roll", "tally"):
            raise Refused("not a table entry: %r" % (entry,))
        result = outcome(self.rules, self.target, entry)
        self.entries.append(entry)
        self._score(result)

    def _undo(self):
        for i in range(len(self.entries) - 1, -1, -1):
            if self.entries[i][0] in UNDOABLE:
                kept = self.entries[:i] + self.entries[i + 1:]
                self.entries = []
                self._reset()
                self.fold(kept)
                return
        raise Refused("nothing to undo")

    def _bell(self):
        if self.bell:
            self.entries.pop()  # a second bell changes nothing, as in the engine
            return
        self.bell = True
        if self.phase != PLAYING:
            return
        after = self.rules["after_bell"]
        # "finish-if-target": "all players stop ... unless a player has just rolled the
        # current number" (the engine's reading of the text)
        if after == "stop" or self.turn_rolls == 0 or (after == "finish-if-target"
                                                       and not self.last_target_dice):
            self._end()
        else:
            self.phase = FINISHING

    def _score(self, result):
        points, continues, target_dice, bunco, wipeout = result
        seat = self.roller
        ghost = (seat + 1) in self.ghosts
        if wipeout:
            points = -self.points[seat]
        elif ghost and self.rules["ghost_points"] == "none":
            points = 0
        self.points[seat] += points
        if bunco:
            self.buncos[seat] += 1
        self.turn_rolls += 1
        self.last_target_dice = target_dice
        if self.phase == PLAYING:
            if self._ends(bunco, ghost):
                self.bell = True
                self._end()
            elif not continues:
                self._next_roller()
        elif not continues:  # finishing the turn after the bell
            self._end()

    def _ends(self, bunco, ghost):
        if not self.ends_round or self.bell:
            return False
        counts = not ghost or self.rules["ghost_points"] == "team"
        if bunco and self.rules["bunco_ends"] and counts:
            return True
        if self.rules["team"]:
            return max(self.team_scores) >= self.rules["goal"]
        return max(self.points) >= self.rules["goal"]

    def _next_roller(self):
        self.roller = (self.roller + 1) % 4
        self.turn_rolls = 0

    def _end(self):
        self.phase = OVER


def _turn_start(seats, end):
    """The index of the first entry of the turn running after the first ``end`` entries."""
    start = end
    while start > 0 and seats[start - 1] == seats[end]:
        start -= 1
    return start
