"""The audit's rounds: each round of the log played again at every table (scoring.py), its
host's seat changes followed, and every table compared with the record's account of it."""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.audit.scoring import RollReplay, TableReplay
from bunco_pi.rules.house import HouseRules

CLOSES = ("close", "close-held")


def split_log(log: list[Any]) -> tuple[list[list[tuple[int, list[Any]]]], bool]:
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
        if event[0] in CLOSES and current is not None:
            rounds.append(current)
            current = None
    return rounds, current is not None


def first_ghosts(players: list[dict[str, Any]], log: list[Any]) -> tuple[set[str], list[str]]:
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


class RoundsCheck:
    """Part of the audit (mixed into it): the rounds and the seat changes between them."""

    rules: HouseRules
    record: dict[str, Any]
    players: list[str]
    ghosts: set[str]
    numbers: list[int]
    problems: list[str]

    def say(self, problem: str) -> None:
        raise NotImplementedError

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

    # --- rounds -----------------------------------------------------------------------------

    def _play_round(self, events: list[tuple[int, list[Any]]], seating: list[list[str]],
                    target: int, where: str) -> list[TableReplay]:
        rules = self.rules
        any_table = rules.round.ends_at == "any-table"
        tables = [TableReplay(self.numbers[t], list(seats), target, t == 0 or any_table,
                         self.ghosts & set(seats), rules, problems=self.problems)
                  for t, seats in enumerate(seating)]
        kept: dict[int, list[tuple[int, list[Any]]]] = {t.number: [] for t in tables}
        index = {t.number: i for i, t in enumerate(tables)}
        causes: list[int] = []  # where the bell may have latched: a ring, a table's end
        for at, event in events:
            kind = event[0]
            if kind in ("ring", "time-up"):
                causes.append(at)
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
                table = TableReplay(number, table.seats, target, table.can_end, table.ghosts, rules,
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

    def _compare_round(self, mine: dict[str, Any], tables: list[TableReplay], set_no: int,
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

    def _compare_table(self, t: dict[str, Any], table: TableReplay, where: str) -> None:
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
        if rules.round.every_player_rolls and not table.buttons and not table.held \
                and not rules.round.minutes:  # at a timed round's horn "at_horn" decides
            rolled = {r.seat for r in table.rolls if not r.rolloff}
            for s in range(4):
                if s not in rolled:
                    self.say(f"{where}: {table.seats[s]} never rolled, and every player gets "
                             "at least one roll per round")

    def _compare_roll(self, got: dict[str, Any], want: RollReplay, where: str) -> None:
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
