"""Who moves where after a round, and who sits in which seat at the next one.

Tables are indexed from 0 (the head table) here; the record numbers them from 1.
Each scheme says, for every table, which group stays and which groups arrive. Seating then
lays out each table's four so that every rule of the text holds (no two ghosts partners, a new
partner for everyone, the staying player in her seat), or, where none can, by a fixed priority
that the plan's notes account for (docs/house-rules.md, *Seating*).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import permutations

from bunco_pi.rules.house import HouseRules

Seats = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class TableOutcome:
    """A finished table: its seats and who won and lost there."""

    seats: Seats
    winners: tuple[str, ...]
    losers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Move:
    player: str
    from_table: int  # 1 = head
    to_table: int
    to_seat: int  # 1..4


def _in_seat_order(seats: Seats, group: Sequence[str]) -> tuple[str, ...]:
    return tuple(p for p in seats if p in group)


def _team_plan(scheme: str, count: int, outcomes: Sequence[TableOutcome]) -> list[tuple]:
    """For each table: (staying groups, arriving groups), each group a tuple of players."""
    win = [_in_seat_order(o.seats, o.winners) for o in outcomes]
    lose = [_in_seat_order(o.seats, o.losers) for o in outcomes]
    if count == 1:
        return [((win[0], lose[0]), ())]
    last = count - 1
    plan = []
    for t in range(count):
        if scheme == "head-stays":
            # head winners stay, head losers go down one; middle winners up, losers down;
            # low winners up, low losers stay.
            if t == 0:
                plan.append(((win[0],), (win[1],)))
            elif t == last:
                plan.append(((lose[t],), (lose[t - 1],)))
            else:
                plan.append(((), (lose[t - 1], win[t + 1])))
        elif scheme == "head-losers-to-low":
            # head losers go to the lowest table; the winners of every other table move up one.
            if t == 0:
                plan.append(((win[0],), (win[1],)))
            elif t == last:
                plan.append(((lose[t],), (lose[0],)))
            else:
                plan.append(((lose[t],), (win[t + 1],)))
        elif scheme == "winners-rotate":
            # winners go head -> 2 -> 3 -> head; losers stay.
            plan.append(((lose[t],), (win[t - 1],)))
        else:
            raise ValueError(f"not a team rotation scheme: {scheme}")
    return plan


def _seat_table(staying: Sequence[tuple[str, ...]], arriving: Sequence[tuple[str, ...]],
                old_seats: Seats, split: bool) -> Seats:
    """The seats the text describes, before ghosts are thought of: a staying group's first
    member keeps her seat and her teammate moves one chair on (or stays across, unsplit)."""
    seats: list[str | None] = [None, None, None, None]
    if staying:
        first = staying[0]
        anchor = old_seats.index(first[0])
        seats[anchor] = first[0]
        if split:
            # "one teammate moves over a chair", so the pair ends up on different teams
            seats[(anchor + 1) % 4] = first[1]
        else:
            seats[(anchor + 2) % 4] = first[1]
        rest = [p for group in list(staying[1:]) + list(arriving) for p in group]
    else:
        groups = list(arriving)
        if split:
            # pair X in seats 1,2 and pair Y in 3,4: new teams are (X1, Y1) and (X2, Y2)
            rest = [p for group in groups for p in group]
        else:
            rest = [groups[0][0], groups[1][0], groups[0][1], groups[1][1]]
    free = [i for i in range(4) if seats[i] is None]
    for index, player in zip(free, rest, strict=True):
        seats[index] = player
    return tuple(seats)  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class SeatingPlan:
    """The next round's seats, the moves that lead there, and each rule of the text the seats
    could not keep (empty when they keep every one), said the way the record says it."""

    seating: tuple[Seats, ...]
    moves: tuple[Move, ...]
    notes: tuple[str, ...] = ()


def next_seating(
    rules: HouseRules, outcomes: Sequence[TableOutcome], ghosts: frozenset[str] = frozenset(),
    sitting_out: frozenset[int] = frozenset(),
) -> tuple[tuple[Seats, ...], tuple[Move, ...]]:
    """The seating of the next round and the moves that lead to it (``plan_next_seating``
    without its notes)."""
    plan = plan_next_seating(rules, outcomes, ghosts, sitting_out)
    return plan.seating, plan.moves


def plan_next_seating(
    rules: HouseRules, outcomes: Sequence[TableOutcome], ghosts: frozenset[str] = frozenset(),
    sitting_out: frozenset[int] = frozenset(),
) -> SeatingPlan:
    """The seating of the next round: each table's four as the scheme sends them, seated so
    that every rule of the text holds. Where no seating keeps them all, the one that breaks the
    fewest by this priority (docs/house-rules.md, *Seating*):

    1. no two ghosts are partners (``ghost.real_partner``: a ghost needs a real partner to roll
       for her);
    2. everyone goes to the table the scheme sends her;
    3. everyone has a new partner (``rotation.split_partners``);
    4. the staying player keeps her seat and her old partner moves one chair on;
    5. the seats otherwise as the text lays them out.

    ``sitting_out``: tables (0 = head) whose round had no result (the host closed it while the
    table's box was dead): their four stay where they are, and the other tables rotate among
    themselves as if it were not there.
    """
    if rules.rotation.scheme == "lowest-moves":
        live = [t for t in range(len(outcomes)) if t not in sitting_out]
        seating = [o.seats for o in outcomes]
        if live:
            moved = _individual_seating([outcomes[t] for t in live])
            for t, seats in zip(live, moved, strict=True):
                seating[t] = seats
        return SeatingPlan(tuple(seating), _moves(outcomes, seating))
    aims = _aims(rules, outcomes, sitting_out)
    seating, notes = _seat(rules, aims, outcomes, ghosts)
    return SeatingPlan(seating, _moves(outcomes, seating), notes)


def seating_faults(
    rules: HouseRules, outcomes: Sequence[TableOutcome], ghosts: frozenset[str],
    sitting_out: frozenset[int], seating: Sequence[Seats],
) -> tuple[int, ...]:
    """How far ``seating`` falls short of the rules, by the priority of ``plan_next_seating``
    (compared as a tuple: smaller is better); all zeros when it keeps every rule."""
    if rules.rotation.scheme == "lowest-moves":
        return (0,)
    aims = _aims(rules, outcomes, sitting_out)
    context = _Context(rules, ghosts, _partners(outcomes, sitting_out))
    return _total([context.faults(tuple(seats), aim) for seats, aim in zip(seating, aims,
                                                                          strict=True)],
                  _moved(aims, [tuple(s) for s in seating]))


def seating_notes(
    rules: HouseRules, outcomes: Sequence[TableOutcome], ghosts: frozenset[str],
    sitting_out: frozenset[int], seating: Sequence[Seats],
) -> tuple[str, ...]:
    """Each rule of the text ``seating`` breaks, as ``SeatingPlan.notes`` says it."""
    if rules.rotation.scheme == "lowest-moves":
        return ()
    aims = _aims(rules, outcomes, sitting_out)
    context = _Context(rules, ghosts, _partners(outcomes, sitting_out))
    return _notes(rules, aims, context, [tuple(s) for s in seating])


@dataclass(frozen=True, slots=True)
class _Aim:
    """What the text asks of one table's next seats."""

    players: frozenset[str]  # the four the scheme sends here
    reference: Seats  # the text's own layout of them
    anchor: tuple[tuple[str, int], ...]  # (player, seat) the text keeps: the stay-put player
    fresh: bool  # everyone here needs a new partner
    live: bool  # False: a table without a result, whose four keep their seats


def _aims(rules: HouseRules, outcomes: Sequence[TableOutcome], sitting_out: frozenset[int]
          ) -> list[_Aim]:
    split = rules.rotation.split_partners
    live = [t for t in range(len(outcomes)) if t not in sitting_out]
    aims: list[_Aim | None] = [None] * len(outcomes)
    for t in range(len(outcomes)):
        if t in sitting_out:
            seats = outcomes[t].seats
            aims[t] = _Aim(frozenset(seats), seats, tuple((p, s) for s, p in enumerate(seats)),
                           False, False)
    if live:
        rotating = [outcomes[t] for t in live]
        plan = _team_plan(rules.rotation.scheme, len(rotating), rotating)
        for t, (staying, arriving) in zip(live, plan, strict=True):
            old = outcomes[t].seats
            reference = _seat_table(staying, arriving, old, split)
            anchor: tuple[tuple[str, int], ...] = ()
            if staying:
                first = staying[0]
                seat = old.index(first[0])
                anchor = ((first[0], seat), (first[1], (seat + (1 if split else 2)) % 4))
            aims[t] = _Aim(frozenset(reference), reference, anchor, split, True)
    return aims  # type: ignore[return-value]


def _partners(outcomes: Sequence[TableOutcome], sitting_out: frozenset[int]) -> dict[str, str]:
    """Each player's partner in the round just played, at the tables that rotate."""
    return {o.seats[s]: o.seats[(s + 2) % 4] for t, o in enumerate(outcomes)
            if t not in sitting_out for s in range(4)}


@dataclass(frozen=True, slots=True)
class _Context:
    rules: HouseRules
    ghosts: frozenset[str]
    partners: dict[str, str]

    def faults(self, seats: Seats, aim: _Aim) -> tuple[int, int, int, int]:
        """(ghost pairs, repeated partners, seats the text keeps that are not kept, seats
        other than the text's layout) of one table."""
        ghosts, partners = self.ghosts, self.partners
        pairs = [(seats[0], seats[2]), (seats[1], seats[3])]
        ghost_pairs = sum(a in ghosts and b in ghosts for a, b in pairs) \
            if self.rules.ghost.real_partner else 0
        repeated = sum(partners.get(a) == b for a, b in pairs) if aim.fresh else 0
        unkept = sum(p in seats and seats[s] != p for p, s in aim.anchor)
        other = sum(a != b for a, b in zip(seats, aim.reference, strict=True))
        return ghost_pairs, repeated, unkept, other

    def best(self, players: Seats, aim: _Aim) -> tuple[tuple[int, int, int, int], Seats]:
        """The layout of these four that keeps the most, by the priority; ties go to the
        first in the order of ``players`` (the text's own layout comes first)."""
        found = None
        for seats in permutations(players):
            faults = self.faults(seats, aim)  # type: ignore[arg-type]
            if found is None or faults < found[0]:
                found = (faults, seats)
                if not any(faults):
                    break
        assert found is not None
        return found  # type: ignore[return-value]


def _moved(aims: Sequence[_Aim], seating: Sequence[Seats]) -> int:
    return sum(p not in aim.players for seats, aim in zip(seating, aims, strict=True)
               for p in seats)


def _total(faults: Sequence[tuple[int, ...]], moved: int) -> tuple[int, ...]:
    sums = [sum(f[i] for f in faults) for i in range(4)]
    return (sums[0], moved, *sums[1:])


def _seat(rules: HouseRules, aims: Sequence[_Aim], outcomes: Sequence[TableOutcome],
          ghosts: frozenset[str]) -> tuple[tuple[Seats, ...], tuple[str, ...]]:
    sitting_out = frozenset(t for t, aim in enumerate(aims) if not aim.live)
    context = _Context(rules, ghosts, _partners(outcomes, sitting_out))
    groups = [aim.reference for aim in aims]  # who sits at each table, in the text's order
    chosen = [context.best(g, aim) for g, aim in zip(groups, aims, strict=True)]
    live = [t for t, aim in enumerate(aims) if aim.live]
    # Only three ghosts at one table (players who left) keep two ghosts partners whatever the
    # layout: then a ghost changes tables with a real player, the change that keeps the most.
    for _ in range(4 * len(aims)):
        now = _total([c[0] for c in chosen], _moved(aims, [c[1] for c in chosen]))
        if not now[0]:
            break
        best = None
        for t, g, u, r in _exchanges(live, chosen, groups, ghosts):
            here = tuple(r if p == g else p for p in groups[t])
            there = tuple(g if p == r else p for p in groups[u])
            trial = list(chosen)
            trial[t] = context.best(here, aims[t])  # type: ignore[arg-type]
            trial[u] = context.best(there, aims[u])  # type: ignore[arg-type]
            key = _total([c[0] for c in trial], _moved(aims, [c[1] for c in trial]))
            if best is None or key < best[0]:
                best = (key, t, here, u, there, trial)
                if key[0] < now[0] and not any(key[2:4]) and key[1] == now[1] + 2:
                    break  # as good as one change can be, but for the text's layout
        if best is None or best[0][0] >= now[0]:
            break  # more ghosts than real players to partner them
        _, t, here, u, there, chosen = best
        groups[t], groups[u] = here, there  # type: ignore[assignment]
    seating = tuple(c[1] for c in chosen)
    return seating, _notes(rules, aims, context, seating)


def _exchanges(live: Sequence[int], chosen: Sequence[tuple], groups: Sequence[Seats],
               ghosts: frozenset[str]) -> Iterator[tuple[int, str, int, str]]:
    """(table, its ghost, other table, its real player) for every change of a ghost at a
    table with ghost partners for a real player elsewhere, head table first."""
    for t in (t for t in live if chosen[t][0][0]):
        for g in (p for p in groups[t] if p in ghosts):
            for u in (u for u in live if u != t):
                for r in (p for p in groups[u] if p not in ghosts):
                    yield t, g, u, r


def _notes(rules: HouseRules, aims: Sequence[_Aim], context: _Context,
           seating: Sequence[Seats]) -> tuple[str, ...]:
    """Each rule the chosen seats break, one sentence each (tables numbered from 1)."""
    notes = []
    home = {p: t for t, aim in enumerate(aims) for p in aim.players}
    for t, (seats, aim) in enumerate(zip(seating, aims, strict=True)):
        for p in seats:
            if p not in aim.players:
                notes.append(f"{p} sits at table {t + 1}, not table {home[p] + 1} where the "
                             "rotation sends her, so that no two ghosts are partners")
        for a, b in ((seats[0], seats[2]), (seats[1], seats[3])):
            if rules.ghost.real_partner and a in context.ghosts and b in context.ghosts:
                notes.append(f"table {t + 1}: ghosts {a} and {b} are partners: there are not "
                             "real players enough to partner every ghost")
            elif aim.fresh and context.partners.get(a) == b:
                notes.append(f"table {t + 1}: {a} and {b} stay partners: no seating there "
                             "gives everyone a new partner and keeps the ghosts apart")
        for p, s in aim.anchor:
            if aim.live and p in seats and seats[s] != p:
                notes.append(f"table {t + 1}: {p} does not keep seat {s + 1}: no seating "
                             "there keeps it and the rules before it")
    return tuple(notes)


def give_ghosts_real_partners(seating: Sequence[Seats], ghosts: frozenset[str]
                              ) -> tuple[Seats, ...]:
    """The first draw mended so that no two ghosts are partners, where there are real players
    enough (a draw has no partners to change and nobody to keep in her seat).

    003: "El jugador con el fantasma por compañero tira por el fantasma": a ghost needs a real
    partner. Two ghosts seated as partners (seats s and s+2): the one in seat s+2 changes places
    with the player in the next seat, s+3, if that player and her partner are real; otherwise
    (three ghosts at one table) with the first real player, from the head table down, whose
    partner is real too. After a round, ``plan_next_seating`` seats by the rules instead.
    """
    tables = [list(seats) for seats in seating]

    def real_pair(seats: list[str], first: int) -> bool:
        return seats[first] not in ghosts and seats[(first + 2) % 4] not in ghosts

    for _ in range(4 * len(tables)):  # each swap mends one ghost pair and makes none
        found = next(((t, s) for t, seats in enumerate(tables) for s in (0, 1)
                      if seats[s] in ghosts and seats[s + 2] in ghosts), None)
        if found is None:
            break
        t, s = found
        here = tables[t]
        if real_pair(here, s + 1):
            here[s + 2], here[(s + 3) % 4] = here[(s + 3) % 4], here[s + 2]
            continue
        other = next(((u, i) for u, seats in enumerate(tables) for i in range(4)
                      if u != t and real_pair(seats, i)), None)
        if other is None:
            break  # more ghosts than real partners for them
        u, i = other
        here[s + 2], tables[u][i] = tables[u][i], here[s + 2]
    return tuple(tuple(seats) for seats in tables)  # type: ignore[misc]


def _individual_seating(outcomes: Sequence[TableOutcome]) -> tuple[Seats, ...]:
    """The lowest scorer (or the ghost) of each group moves to the next group, taking the seat
    the mover there has left; the last group's mover goes to the head table."""
    count = len(outcomes)
    seating = []
    for t, outcome in enumerate(outcomes):
        incoming = outcomes[(t - 1) % count].losers[0]
        mover = outcome.losers[0]
        seating.append(tuple(incoming if p == mover else p for p in outcome.seats))
    return tuple(seating)  # type: ignore[arg-type]


def _moves(outcomes: Sequence[TableOutcome], seating: Sequence[Seats]) -> tuple[Move, ...]:
    where = {p: (t, s) for t, seats in enumerate(seating) for s, p in enumerate(seats)}
    moves = []
    for t, outcome in enumerate(outcomes):
        for player in outcome.seats:
            new_table, new_seat = where[player]
            moves.append(Move(player, t + 1, new_table + 1, new_seat + 1))
    return tuple(moves)


def initial_seating(players: Sequence[str], draw: Sequence[int]) -> tuple[Seats, ...]:
    """Seat players by a draw (a permutation of seat positions, like drawing star cards).

    ``draw[i]`` is the position (table * 4 + seat index) of ``players[i]``.
    """
    if sorted(draw) != list(range(len(players))) or len(players) % 4:
        raise ValueError("the draw must place every player in a distinct seat of full tables")
    positions: list[str | None] = [None] * len(players)
    for player, position in zip(players, draw, strict=True):
        positions[position] = player
    return tuple(tuple(positions[i : i + 4]) for i in range(0, len(positions), 4))  # type: ignore[misc]
