"""Who moves where after a round, and who sits in which seat at the next one.

Tables are indexed from 0 (the head table) here; the record numbers them from 1.
Each scheme says, for every table, which group stays and which groups arrive. Seating then
keeps a staying group's first member in her seat and splits partners when the rules say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


def next_seating(
    rules: HouseRules, outcomes: Sequence[TableOutcome], ghosts: frozenset[str] = frozenset(),
    sitting_out: frozenset[int] = frozenset(),
) -> tuple[tuple[Seats, ...], tuple[Move, ...]]:
    """The seating of the next round and the moves that lead to it.

    ``sitting_out``: tables (0 = head) whose round had no result (the host closed it while the
    table's box was dead): their four stay where they are, and the other tables rotate among
    themselves as if it were not there.
    """
    live = [t for t in range(len(outcomes)) if t not in sitting_out]
    rotating = [outcomes[t] for t in live]
    seating = [o.seats for o in outcomes]
    if rotating:
        for t, seats in zip(live, _rotate(rules, rotating, ghosts), strict=True):
            seating[t] = seats
    moves = _moves(outcomes, seating)
    return tuple(seating), moves


def _rotate(rules: HouseRules, outcomes: Sequence[TableOutcome], ghosts: frozenset[str]
            ) -> tuple[Seats, ...]:
    scheme = rules.rotation.scheme
    if scheme == "lowest-moves":
        return _individual_seating(outcomes)
    plan = _team_plan(scheme, len(outcomes), outcomes)
    seating = tuple(
        _seat_table(staying, arriving, outcomes[t].seats, rules.rotation.split_partners)
        for t, (staying, arriving) in enumerate(plan)
    )
    if rules.ghost.real_partner and ghosts:
        seating = give_ghosts_real_partners(seating, ghosts)
    return seating


def give_ghosts_real_partners(seating: Sequence[Seats], ghosts: frozenset[str]
                              ) -> tuple[Seats, ...]:
    """Seating in which no two ghosts are partners, where there are real players enough.

    003: "El jugador con el fantasma por compañero tira por el fantasma": a ghost needs a real
    partner. Two ghosts seated as partners (seats s and s+2): the one in seat s+2 changes places
    with the player in the next seat, s+3, if that player and her partner are real; otherwise
    (three ghosts at one table, only possible in a first draw) with the first real player,
    from the head table down, whose partner is real too.
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
