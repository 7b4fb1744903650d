"""A leave or a late arrival between rounds: the seats already drawn for the next round are
checked again with the ghosts as they now are, and mended under the same rules; the console's
table views show the mended moves before the next round starts; the audit agrees."""

from __future__ import annotations

import functools

import pytest

from bunco_pi.head.views import table_view
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import preset
from bunco_pi.rules.night import RESULTS, Arrive, CloseRound, Leave, NextRound, Night
from bunco_pi.rules.record import build_record
from bunco_pi.rules.table_round import RuleViolation
from bunco_pi.sim.players import simulate_night

ROTATE = preset("rotate")


@functools.cache
def rotate_night(players: int):
    sim = simulate_night(ROTATE, players, players)
    first = Night.start(ROTATE, sim.night.players, [t.seats for t in sim.night.history[0].tables])
    return first, tuple(sim.log)


def ghost_pairs(seating, ghosts) -> list[tuple[str, str]]:
    return [(s[i], s[i + 2]) for s in seating for i in (0, 1)
            if s[i] in ghosts and s[i + 2] in ghosts]


def drawn(night: Night):
    return night.next_seats if night.phase == RESULTS else night.seating


def the_leaver(night: Night) -> str:
    """The real player whose leaving would pair two ghosts in the seats already drawn, if
    there is one (the case the mend is for), else the first real player still playing."""
    for seats in drawn(night):
        for s, p in enumerate(seats):
            if p in night.ghosts and seats[(s + 2) % 4] not in night.ghosts:
                return seats[(s + 2) % 4]
    return next(p.id for p in night.players if not p.ghost)


def between_rounds(log) -> list[int]:
    """Every log position at which the night is between rounds: after each close (the results
    are up) and after each next (the next round not yet started), up to the last round."""
    return [i + 1 for i, e in enumerate(log[:-3]) if isinstance(e, CloseRound | NextRound)]


@pytest.mark.slow
@pytest.mark.parametrize("players", [6, 7, 10, 13])
def test_a_player_leaving_at_each_point_of_a_rotate_night_leaves_no_two_ghosts_partners(
        players) -> None:
    """003: "El jugador con el fantasma por compañero tira por el fantasma". The night's dice
    are replayed with a Leave at each point between rounds; the seats of every later round
    pair no two ghosts (there are real players enough: at most one ghost a team), and the
    independent audit of the night's record finds nothing."""
    first, log = rotate_night(players)
    points = between_rounds(log)
    assert len(points) == 2 * (ROTATE.rounds_per_night - 1)
    mended = 0
    for point in points:
        night = first
        for event in log[:point]:
            night = night.apply(event)
        leaver = the_leaver(night)
        would_pair = ghost_pairs(drawn(night), night.ghosts | {leaver})
        events = [*log[:point], Leave(leaver), *log[point:]]
        after = night.apply(Leave(leaver))
        assert ghost_pairs(drawn(after), after.ghosts) == []
        if would_pair:
            mended += 1
            assert drawn(after) != drawn(night)
        for event in log[point:]:
            after = after.apply(event)
        assert len(after.ghosts) <= 2 * len(after.seating)
        for r in after.history[len(night.history):]:  # the rounds played after she left
            assert ghost_pairs([t.seats for t in r.tables], after.ghosts) == [], (point, r.round)
        record = build_record(after, events)
        assert audit_record(record, ROTATE) == [], (players, point, leaver)
    assert mended > 0  # the leaver was chosen so that some seats needed mending


def test_the_console_shows_the_mended_moves_before_the_next_round() -> None:
    """After a round closes, the tables' views list where everyone goes; a leave that would
    pair two ghosts changes those moves at once, and the next round is played in them."""
    first, log = rotate_night(6)
    night = first
    for event in log:
        night = night.apply(event)
        if night.phase == RESULTS:
            leaver = the_leaver(night)
            if ghost_pairs(night.next_seats, night.ghosts | {leaver}):
                break
    else:
        pytest.fail("no round where a leave pairs two ghosts")
    before = [table_view(night, t)["moves"] for t in (1, 2)]
    after = night.apply(Leave(leaver))
    shown = [table_view(after, t)["moves"] for t in (1, 2)]
    assert shown != before
    names = {p.id: p.name for p in after.players}
    for t, seats in enumerate(after.next_seats, start=1):
        for seat, player in enumerate(seats, start=1):
            assert any(m["name"] == names[player] and (m["to_table"], m["to_seat"]) == (t, seat)
                       for view in shown for m in view)
    started = after.apply(NextRound())
    assert started.seating == after.next_seats


def test_a_late_arrival_leaves_seats_that_keep_every_rule_alone() -> None:
    """An arrival never moves anyone for nothing: seats that kept every rule stay as drawn."""
    first, log = rotate_night(6)
    night = first
    for event in log:
        night = night.apply(event)
        if night.phase == RESULTS:
            break
    ghost = next(p.id for p in night.players if p.ghost)
    arrived = night.apply(Arrive(ghost, "Zoe"))
    assert arrived.next_seats == night.next_seats
    assert arrived.history[-1].moves == night.history[-1].moves
    with pytest.raises(RuleViolation):
        arrived.apply(Arrive(ghost, "Yan"))


def test_the_consoles_board_shows_the_next_seats_mended_as_soon_as_someone_leaves() -> None:
    from bunco_pi.console.snapshot import console_snapshot

    first, log = rotate_night(6)
    night = first
    for event in log:
        night = night.apply(event)
        if night.phase == RESULTS and ghost_pairs(night.next_seats,
                                                  night.ghosts | {the_leaver(night)}):
            break
    leaver = the_leaver(night)

    def shown(n: Night) -> list[list[tuple[str, bool]]]:
        board = console_snapshot(n, name="club", table_count=2, online={1, 2})["board"]
        return [[(s["id"], s["ghost"]) for s in t["next_seats"]] for t in board]

    before, after = shown(night), shown(night.apply(Leave(leaver)))
    assert before == [[(p, p in night.ghosts) for p in s] for s in night.next_seats]
    mended = night.apply(Leave(leaver)).next_seats
    assert after == [[(p, p in night.ghosts | {leaver}) for p in s] for s in mended]
    assert after != before and ghost_pairs(mended, night.ghosts | {leaver}) == []
    started = night.apply(Leave(leaver)).apply(NextRound())
    assert "next_seats" not in console_snapshot(started, name="club", table_count=2,
                                                online={1, 2})["board"][0]


def test_a_late_arrival_undoes_the_compromise_a_leave_forced() -> None:
    """p2 leaves after round 1 and three ghosts are sent to table 2: one changes tables with a
    real player, and the record's notes say so. Zoe then arrives at g1's seat: two ghosts are
    left there, so everyone goes back to the table the rotation sends her and the notes go."""
    from bunco_pi.rules.night import Player, StartRound, TableEntry
    from bunco_pi.rules.table_round import Bell, Roll

    players = [Player(f"p{i}", f"P{i}") for i in range(1, 6)] + \
        [Player(f"g{i}", f"G{i}", True) for i in range(1, 4)]
    night = Night.start(ROTATE, players, [("p1", "g3", "p3", "p4"), ("g1", "p5", "p2", "g2")])
    log = [StartRound(), TableEntry(1, Roll((2, 3, 4))), *[TableEntry(1, Roll((1, 1, 1)))] * 7,
           TableEntry(2, Roll((2, 3, 4))), TableEntry(2, Roll((1, 3, 4))), TableEntry(2, Bell()),
           CloseRound()]
    for event in log:
        night = night.apply(event)
    text_tables = [{"p1", "p3", "p5", "g2"}, {"g1", "p2", "g3", "p4"}]
    assert [set(s) for s in night.next_seats] == text_tables
    left = night.apply(Leave("p2"))
    assert [set(s) for s in left.next_seats] != text_tables
    assert any("so that no two ghosts are partners" in n for n in left.history[-1].seating_notes)
    arrived = left.apply(Arrive("g1", "Zoe"))
    assert [set(s) for s in arrived.next_seats] == text_tables
    assert arrived.history[-1].seating_notes == ()
    assert ghost_pairs(arrived.next_seats, arrived.ghosts) == []
    log += [Leave("p2"), Arrive("g1", "Zoe"), NextRound()]
    assert audit_record(build_record(arrived.apply(NextRound()), log), ROTATE) == []
