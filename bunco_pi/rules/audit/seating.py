"""The audit's seating: each round's seats checked against what the rule texts state of them.

Nothing here works a seating out (the engine may seat by any method it likes): it checks the
properties the texts name, whatever seating the record shows.
- every player goes to the table the scheme sends her (a ghost may change tables with a real
  player only where three ghosts would otherwise sit at one table);
- no two ghosts are partners, where there are real players enough to partner every ghost;
- every player has a new partner (ghosts included) where the text says partners change, unless
  no pairing of that table's four gives everyone a new partner and keeps the ghosts apart;
- the player the text keeps in her seat keeps it, and her old partner moves one chair on;
- a table without a result keeps its four where they sat;
- individual play: the lowest scorer takes the seat the previous group's mover left.
Where a rule gives way to one before it, the record must say so (``seating_notes``).
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.audit.scoring import TableReplay
from bunco_pi.rules.house import HouseRules

# The sentences of the groups' texts each property comes from, by preset.
SENTENCES: dict[str, dict[str, str]] = {
    "classic": {
        "tables": 'The winning team stays at the "Head" table. ... The losing team from the '
                  '"Head" table goes down to the "Middle" table.',
        "partners": "Do not stay with your partner--your new partner will be one person from "
                    "the winning or losing team joining you",
        "seat": "Have one teammate move over a chair so they will have different partners for "
                "the next round.",
    },
    "core": {
        "tables": "At the end of each round the winning team from the Middle and Low tables "
                  "move up to a higher table. The losing team from the High table moves to the "
                  "low table.",
        "partners": "During the switch partners are changed.",
    },
    "rotate": {
        "tables": "Los equipos ganadores se mueven a una nueva mesa, rotando en una dirección. "
                  "... Los equipos perdedores de cada mesa se quedan en esa mesa.",
        "partners": "El Bunco se juega por individuos, no por equipos, por lo que las parejas "
                    "cambian después de cada ronda.",
        "seat": "el jugador 1 se queda en su sitio y el jugador 3 se traslada al asiento del "
                "jugador 2",
        "ghosts": "El jugador con el fantasma por compañero tira por el fantasma",
    },
    "individual": {
        "tables": "At the end of each round, the player with the lowest total points score for "
                  "that round moves to the next group.",
    },
}
KEYS = {"tables": "rotation.scheme", "partners": "rotation.split_partners",
        "seat": "rotation.split_partners", "ghosts": "ghost.real_partner"}


def pairings(four: list[str]) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The three ways to split four players into two teams."""
    a, b, c, d = four
    return [(frozenset((a, b)), frozenset((c, d))), (frozenset((a, c)), frozenset((b, d))),
            (frozenset((a, d)), frozenset((b, c)))]


def teams(seats: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset((seats[0], seats[2])), frozenset((seats[1], seats[3]))


class SeatingCheck:
    """Part of the audit (mixed into it): every seating of the night."""

    rules: HouseRules
    record: dict[str, Any]
    players: list[str]
    ghosts: set[str]
    numbers: list[int]

    def say(self, problem: str) -> None:
        raise NotImplementedError

    def rule(self, kind: str) -> str:
        """The text's sentence for a property, quoted, or the house-rules key it comes from."""
        said = SENTENCES.get(self.rules.name, {}).get(kind)
        return f'"{said}"' if said else f"({KEYS[kind]})"

    # --- the first seating and every seating: ghosts ----------------------------------------

    def check_ghost_partners(self, seating: list[list[str]], where: str,
                             moved: list[bool] | None = None) -> int:
        """Ghosts seated as partners where there were real players enough to partner every
        ghost; ``moved``: which tables the rotation seated (a table without a result kept its
        seats). The number of ghost pairs the rules allowed (for want of real players)."""
        if not (self.rules.ghost.real_partner and self.rules.team_play):
            return 0
        tables = [t for t in range(len(seating)) if moved is None or moved[t]]
        pairs = [(t, seating[t][i], seating[t][i + 2]) for t in tables for i in (0, 1)
                 if seating[t][i] in self.ghosts and seating[t][i + 2] in self.ghosts]
        if sum(p in self.ghosts for t in tables for p in seating[t]) > 2 * len(tables):
            return len(pairs)  # more ghosts than partnerships: some must partner each other
        for t, a, b in pairs:
            self.say(f"{where}: table {self.numbers[t]} seats ghosts {a} and {b} as partners, "
                     f"and a ghost needs a real partner to roll for her: {self.rule('ghosts')}")
        return 0

    # --- after a round ----------------------------------------------------------------------

    def check_next_seating(self, tables: list[TableReplay], after: list[list[str]], where: str,
                           notes: list[str]) -> None:
        """The seats after a round (``after``, head table first) against the texts, with the
        ghosts as they are when the next round starts (after any arrival or leaving)."""
        if sorted(p for seats in after for p in seats) != sorted(self.players) or \
                len(after) != len(tables) or any(len(s) != 4 for s in after):
            self.say(f"{where}: the next seating {after} does not seat every player once, four "
                     "to a table")
            return
        after_where = f"after {where}"
        kept = [t.decided for t in tables]
        for t, table in enumerate(tables):
            if not table.decided and after[t] != table.seats and not (
                    sorted(after[t]) == sorted(table.seats) and self._ghost_pair(table.seats)):
                self.say(f"{where} table {table.number}: had no result, but its four did not "
                         f"keep their seats ({table.seats} -> {after[t]})")
        live = [t for t in tables if t.decided]
        if not live:
            return
        allowed = self.check_ghost_partners(after, after_where, kept)
        if self.rules.rotation.scheme == "lowest-moves":
            self._check_lowest_moves(tables, after, where)
            return
        given_way = allowed + self._check_tables(tables, after, self._sent(tables), where)
        prev = {p: t.seats[(s + 2) % 4] for t in live for s, p in enumerate(t.seats)}
        for t, table in enumerate(tables):
            if table.decided:
                given_way += self._check_partners(after[t], prev, f"{where}: table "
                                                  f"{self.numbers[t]}")
                self._check_stay_put(table, live, after[t], where)
        if given_way and not notes:
            self.say(f"{after_where}: the seating breaks {given_way} rule(s) of the text where "
                     "no seating could keep them, and the record does not say so "
                     "(seating_notes)")

    def _ghost_pair(self, seats: list[str]) -> bool:
        return self.rules.ghost.real_partner and any(
            seats[i] in self.ghosts and seats[i + 2] in self.ghosts for i in (0, 1))

    def _sent(self, tables: list[TableReplay]) -> dict[str, int]:
        """Where the scheme sends each player of a table with a result: the index of her next
        table (tables head first; a table without a result is left out as if not there)."""
        scheme = self.rules.rotation.scheme
        live = [t for t, table in enumerate(tables) if table.decided]
        count = len(live)
        sent: dict[str, int] = {}
        for i, t in enumerate(live):
            up, down = live[max(i - 1, 0)], live[min(i + 1, count - 1)]
            if count == 1:
                winners_to = losers_to = t
            elif scheme == "head-stays":
                # "The winning team stays at the Head table ... The losing team from the Head
                # table goes down"; the lowest table's losers stay
                winners_to = t if i == 0 else up
                losers_to = t if i == count - 1 else down
            elif scheme == "head-losers-to-low":
                winners_to = t if i == 0 else up
                losers_to = live[-1] if i == 0 else t
            else:  # winners-rotate: head -> 2 -> 3 -> head; losers stay
                winners_to = live[(i + 1) % count]
                losers_to = t
            sent.update(dict.fromkeys(tables[t].winners, winners_to))
            sent.update(dict.fromkeys(tables[t].losers, losers_to))
        return sent

    def _check_tables(self, tables: list[TableReplay], after: list[list[str]],
                      sent: dict[str, int], where: str) -> int:
        """Everyone at the table the scheme sends her; a ghost may change tables with a real
        player only to leave no more than two ghosts (one a team) where three were sent."""
        given_way = 0
        # who is meant at each table, gathered once: gathered per table it was a look at every
        # player for every table (8 s of a 500-table night's audit)
        meant_at: dict[int, set[str]] = {}
        for p, to in sent.items():
            meant_at.setdefault(to, set()).add(p)
        for t in range(len(tables)):
            if not tables[t].decided:
                continue
            meant = meant_at.get(t, set())
            here = set(after[t])
            out, came = meant - here, here - meant
            ghosts_meant = len(meant & self.ghosts)
            ghosts_here = len(here & self.ghosts)
            sent_off_ghosts = out and out <= self.ghosts and came.isdisjoint(self.ghosts) and \
                ghosts_meant > 2 and ghosts_here >= 2
            took_ghosts = out and out.isdisjoint(self.ghosts) and came <= self.ghosts and \
                ghosts_here <= 2
            if not out:
                continue
            if self.rules.ghost.real_partner and (sent_off_ghosts or took_ghosts):
                given_way += len(out)
                continue
            for p in sorted(out):
                at = next(i for i, seats in enumerate(after) if p in seats)
                self.say(f"{where}: {p} sits at table {self.numbers[at]}, the rules send her to "
                         f"table {self.numbers[t]}: {self.rule('tables')}")
        return given_way

    def _check_partners(self, seats: list[str], prev: dict[str, str], where: str) -> int:
        """Every player a new partner, ghosts' partners too, where the text says so."""
        if not (self.rules.team_play and self.rules.rotation.split_partners):
            return 0
        again = [pair for pair in teams(seats) if all(prev.get(p) in pair - {p} for p in pair)]
        if not again:
            return 0
        ghosts = self.ghosts if self.rules.ghost.real_partner else set()

        def fine(pairing: tuple[frozenset[str], frozenset[str]]) -> bool:
            return all(not pair <= ghosts and not all(prev.get(p) in pair - {p} for p in pair)
                       for pair in pairing)

        if not any(fine(p) for p in pairings(list(seats))):
            return len(again)  # no pairing of these four keeps both rules
        for pair in again:
            a, b = sorted(pair)
            self.say(f"after {where}: {a} and {b} are partners again, where a new partner "
                     f"for each was possible: {self.rule('partners')}")
        return 0

    def _check_stay_put(self, table: TableReplay, live: list[TableReplay], seats: list[str],
                        where: str) -> None:
        """The staying team's first player (seat order) keeps her seat; her old partner moves
        one chair on (split partners) or stays across from her."""
        if not self.rules.team_play:
            return
        stay = self._staying(table, live)
        if not stay:
            return
        first, second = stay
        seat = table.seats.index(first)
        if first in seats and seats[seat] != first:
            self.say(f"after {where}: {first} stays at table {table.number} but not in her seat "
                     f"{seat + 1} (she is in seat {seats.index(first) + 1}): {self.rule('seat')}")
            return
        step = 1 if self.rules.rotation.split_partners else 2
        want = (seat + step) % 4
        if first in seats and second in seats and seats[want] != second:
            self.say(f"after {where}: {second} stays at table {table.number} and moves to seat "
                     f"{seats.index(second) + 1}, the text moves her to seat {want + 1}: "
                     f"{self.rule('seat')}")

    def _staying(self, table: TableReplay, live: list[TableReplay]) -> list[str]:
        """The team of ``table`` that stays there, in seat order (empty if none does)."""
        scheme = self.rules.rotation.scheme
        i = next(k for k, t in enumerate(live) if t is table)
        count = len(live)
        if count == 1:
            group = table.winners
        elif scheme == "head-stays":
            group = table.winners if i == 0 else table.losers if i == count - 1 else []
        elif scheme == "head-losers-to-low":
            group = table.winners if i == 0 else table.losers
        else:
            group = table.losers
        return [p for p in table.seats if p in group]

    def _check_lowest_moves(self, tables: list[TableReplay], after: list[list[str]],
                            where: str) -> None:
        """004: the lowest scorer (or the ghost) of each group moves to the next group, into
        the seat that group's own mover left; the last group's mover goes to the first."""
        live = [t for t, table in enumerate(tables) if table.decided]
        for k, t in enumerate(live):
            table = tables[t]
            mover = table.losers[0]
            incoming = tables[live[k - 1]].losers[0]
            want = [incoming if p == mover else p for p in table.seats]
            if after[t] != want:
                self.say(f"{where} table {table.number}: next seats {after[t]}, but {mover} "
                         f"moves on and {incoming} takes her seat: {self.rule('tables')}")
