"""One table's round, sentence by sentence from the rule texts, plus fold properties."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bunco_pi.rules.house import parse_rules, preset, preset_text
from bunco_pi.rules.table_round import (
    DONE,
    EXTRA,
    FINISHING,
    PLAYING,
    ROLLOFF,
    Bell,
    Pass,
    Roll,
    RuleViolation,
    TableRound,
    TableSetup,
    Tally,
    Undo,
)

CLASSIC = preset("classic")
CORE = preset("core")
ROTATE = preset("rotate")
INDIVIDUAL = preset("individual")
SEATS = ("ann", "bea", "cat", "dot")  # ann & cat are team A, bea & dot team B


def core_with_wipeout(ends_turn: bool = False):
    text = preset_text("core")
    text = text.replace("[wipeout]\nenabled = false", "[wipeout]\nenabled = true")
    text = text.replace('targets = [1, 2, 3, 4, 5, 6]       # "There are six rounds in each set"',
                        "targets = [2, 3, 4, 5, 6]")
    if ends_turn:
        text = text.replace("ends_turn = false", "ends_turn = true")
    rules = parse_rules(text, "core+wipeout")
    assert rules.wipeout.enabled and rules.wipeout.ends_turn == ends_turn
    return rules


def table(rules=CLASSIC, target=1, head=True, seats=SEATS, ghosts=frozenset(), number=None) -> TableRound:
    return TableRound.begin(TableSetup(table=number or (1 if head else 2), seats=seats, target=target,
                                       rules=rules, can_end_round=head, ghosts=frozenset(ghosts)))


def play(state: TableRound, *entries) -> TableRound:
    for e in entries:
        state = state.apply(e if not isinstance(e, tuple) else Roll(e))
    return state


def miss(target: int) -> tuple[int, int, int]:
    """Three different faces, none of them the target: scores nothing anywhere."""
    a, b, c = [f for f in range(1, 7) if f != target][:3]
    return (a, b, c)


M1 = miss(1)


# --- 000 classic -------------------------------------------------------------------------------


def test_classic_one_player_starts_and_the_person_to_your_left_takes_the_next_turn() -> None:
    t = table()
    assert t.roller_seat == 1 and t.roller == "ann" and t.phase == PLAYING
    t = play(t, (1, 2, 3), (1, 1, 5))
    assert t.roller_seat == 1 and t.team_scores == (3, 0)
    t = play(t, M1)
    assert t.roller_seat == 2 and t.roller == "bea"
    t = play(t, M1, M1, M1)
    assert t.roller_seat == 1


def test_classic_three_of_a_kind_of_another_number_5_points_and_keep_rolling() -> None:
    t = play(table(), (4, 4, 4))
    assert t.team_scores == (5, 0) and t.roller_seat == 1


def test_classic_when_the_head_table_reaches_21_points_they_ring_the_bell() -> None:
    t = table()
    # team A: ann 5+5+5 = 15, then cat 2+2+1 = 5: 20, one point short
    t = play(t, (4, 4, 4), (5, 5, 5), (6, 6, 6), M1, M1, (1, 1, 3), (1, 1, 4), (1, 2, 3))
    assert t.team_scores == (20, 0) and not t.ended_round and t.phase == PLAYING
    assert t.roller == "cat"
    t = play(t, M1, M1, (1, 5, 6))
    assert t.team_scores == (21, 0)
    assert t.ended_round and t.bell and t.done
    assert t.result.winners == ("ann", "cat") and t.result.losers == ("bea", "dot")
    with pytest.raises(RuleViolation):
        t.apply(Roll((1, 1, 1)))  # the round stops exactly there


def test_classic_a_bunco_at_the_head_table_rings_the_bell_and_the_round_stops() -> None:
    t = play(table(target=3), miss(3), (3, 3, 3))
    assert t.team_scores == (0, 21) and t.ended_round and t.done
    assert t.result.winners == ("bea", "dot")


def test_classic_a_bunco_at_another_table_does_not_end_the_round() -> None:
    t = play(table(target=3, head=False), (3, 3, 3), (3, 3, 3), (3, 3, 3))
    assert t.team_scores == (63, 0) and not t.ended_round and t.phase == PLAYING


def test_classic_the_other_players_currently_rolling_finish_their_turn() -> None:
    t = play(table(head=False), M1, (1, 1, 2))  # bea is mid-turn
    t = t.apply(Bell())
    assert t.phase == FINISHING and t.roller == "bea"
    t = play(t, (1, 4, 4), (2, 2, 2))  # "continue collecting points"
    assert t.team_scores == (0, 8) and t.phase == FINISHING
    t = play(t, M1)
    assert t.done and t.result.winners == ("bea", "dot")


def test_classic_a_player_who_has_not_started_rolling_does_not_roll_after_the_bell() -> None:
    t = play(table(head=False), (1, 2, 3), M1)  # ann's turn over, bea has not rolled yet
    t = t.apply(Bell())
    assert t.done and t.result.winners == ("ann", "cat")


def test_classic_if_the_teams_have_a_tie_score_there_will_be_a_roll_off() -> None:
    t = play(table(head=False), (1, 2, 3), M1, (1, 2, 3), M1)
    assert t.team_scores == (1, 1)
    t = t.apply(Bell())
    assert t.phase == ROLLOFF and t.roller_seat == 1 and t.rolloff_sessions == 1
    # "one complete turn around the table ... collecting points"
    t = play(t, (1, 1, 2), M1, M1, (1, 5, 5), M1, M1)
    assert t.done and t.result.winners == ("ann", "cat") and t.result.rolloff_sessions == 1
    assert t.team_scores == (1, 1)  # roll-off points are kept apart from the round's score
    assert [r.rolloff for r in t.rolls] == [False] * 4 + [True] * 6


def test_ghost_if_the_ghost_rolls_a_bunco_her_team_gets_the_21_points() -> None:
    t = play(table(target=2, seats=("ann", "ghost1", "cat", "dot"), ghosts={"ghost1"}), miss(2), (2, 2, 2))
    assert t.team_scores == (0, 21) and t.ended_round and t.result.winners == ("ghost1", "dot")
    assert t.rolls[-1].ghost and t.rolls[-1].points == 21


# --- 002 core ----------------------------------------------------------------------------------


def test_core_the_scorekeeper_at_each_table_is_the_first_to_roll() -> None:
    assert table(CORE).roller_seat == 1


def test_core_only_21_points_at_the_high_table_end_the_round() -> None:
    t = play(table(CORE, target=4), (4, 4, 4))  # a bunco is 21 points, so it reaches 21
    assert t.ended_round
    assert CORE.round.bunco_ends_round is False
    low = play(table(CORE, target=4, head=False), (4, 4, 4), (4, 4, 4))
    assert low.team_scores == (42, 0) and low.phase == PLAYING


def test_core_every_player_gets_at_least_one_roll_per_round() -> None:
    m = miss(2)
    t = play(table(CORE, target=2, head=False), (2, 2, 5), (2, 2, 6))  # ann mid-turn
    t = t.apply(Bell())
    t = play(t, m)  # ann finishes her turn
    assert t.phase == EXTRA and t.roller == "bea"
    t = play(t, (2, 5, 6))  # one roll each, even a scoring one
    assert t.roller == "cat"
    t = play(t, (6, 6, 6), (1, 1, 1))
    assert t.done
    assert {r.player for r in t.rolls} == set(SEATS)
    assert t.team_scores == (9, 6)


def test_core_every_player_rolls_at_the_high_table_too() -> None:
    t = play(table(CORE, target=6), (6, 6, 6))
    assert t.roller == "bea" and t.phase == EXTRA
    t = play(t, (6, 6, 1), (6, 1, 1), (6, 6, 6))
    assert t.done and t.team_scores == (22, 23) and t.result.winners == ("bea", "dot")


def test_core_player_1_starts_and_roll_off_sessions_are_repeated_until_the_tie_is_broken() -> None:
    m = miss(2)
    t = play(table(CORE, target=2, head=False), (2, 3, 4), m, (2, 3, 4), m, m, m)
    assert t.team_scores == (1, 1) and t.roller_seat == 1
    t = t.apply(Bell())
    assert t.phase == ROLLOFF and t.roller_seat == 1 and t.rolloff_sessions == 1
    t = play(t, m, m, m, m)  # nobody scores: "additional roll-off sessions are repeated"
    assert t.phase == ROLLOFF and t.rolloff_sessions == 2 and t.roller_seat == 1
    # "Player #1 rolls and accumulates 1 point. Player #1 rolls again but does not roll any dice.
    #  The dice are passed to Players #2 - #4"
    t = play(t, (2, 5, 6), m)
    assert t.roller_seat == 2
    t = play(t, (2, 2, 5), m, m, m)
    assert t.done and t.result.winners == ("bea", "dot") and t.result.rolloff_sessions == 2


def test_wipeout_loses_all_their_points_for_the_round_and_starts_over() -> None:
    rules = core_with_wipeout()
    t = play(table(rules, target=3, head=False), (3, 3, 5), miss(3), (3, 4, 5), miss(3))
    assert t.seat_points == (2, 1, 0, 0)
    t = play(t, miss(3), miss(3))  # cat, dot
    t = play(t, (3, 5, 6), (1, 1, 1))  # ann: 3 points, then the wipeout
    assert t.seat_points == (0, 1, 0, 0) and t.rolls[-1].points == -3 and t.rolls[-1].outcome.wipeout
    assert t.roller == "ann"  # the turn goes on: "must start over"
    t = play(t, (3, 3, 3))
    assert t.seat_points == (21, 1, 0, 0)


def test_wipeout_optionally_ends_the_turn() -> None:
    t = play(table(core_with_wipeout(ends_turn=True), target=3, head=False), (3, 3, 5), (1, 1, 1))
    assert t.seat_points == (0, 0, 0, 0) and t.roller == "bea"


def test_wipeout_only_takes_the_rollers_points_not_her_partners() -> None:
    rules = core_with_wipeout()
    t = play(table(rules, target=5, head=False), (5, 6, 6), miss(5), miss(5), (5, 5, 2), miss(5), miss(5))
    assert t.team_scores == (3, 0)
    t = play(t, (1, 1, 1))
    assert t.seat_points == (0, 0, 2, 0) and t.team_scores == (2, 0)


# --- 003 rotate --------------------------------------------------------------------------------


def test_rotate_the_first_team_at_the_head_table_to_reach_21_wins_the_round() -> None:
    t = table(ROTATE, target=5)
    for _ in range(7):
        t = play(t, (5, 5, 5))  # 3 points each, no bell for a bunco in the basic game
    assert t.team_scores == (21, 0) and t.ended_round and t.result.winners == ("ann", "cat")


def test_rotate_when_the_bell_rings_all_play_stops() -> None:
    t = play(table(ROTATE, target=2, head=False), (2, 2, 1))  # ann is mid-turn
    t = t.apply(Bell())
    assert t.done and t.team_scores == (2, 0)  # no finishing the turn


def test_rotate_a_baby_bunco_passes_the_dice() -> None:
    t = play(table(ROTATE, target=2, head=False), (4, 4, 4))
    assert t.roller == "bea" and t.team_scores == (0, 0) and t.rolls[0].outcome.baby_bunco


def test_rotate_the_ghost_collects_points_for_her_team() -> None:
    t = play(table(ROTATE, target=2, head=False, seats=("ann", "g", "cat", "dot"), ghosts={"g"}),
             miss(2), (2, 2, 1), (2, 2, 2))
    assert t.team_scores == (0, 5) and t.player_score("g") == 5


# --- 004 individual ----------------------------------------------------------------------------


def test_individual_a_player_adds_points_to_her_own_score() -> None:
    t = play(table(INDIVIDUAL, target=3, head=False), (3, 1, 2), (6, 6, 6), miss(3), (3, 3, 1), miss(3))
    assert t.seat_points == (6, 2, 0, 0)


@pytest.mark.parametrize("number", [1, 3])
def test_individual_the_round_ends_when_someone_rolls_a_bunko_at_any_table(number: int) -> None:
    t = play(table(INDIVIDUAL, target=4, number=number), miss(4), (4, 4, 4))
    assert t.ended_round and t.bell and t.seat_points == (0, 21, 0, 0)
    # play for the round is over: the three players on 0 roll off for who moves
    assert t.phase == ROLLOFF and t.rolloff_group == (0, 2, 3)


def test_individual_the_round_ends_when_someone_reaches_21_points() -> None:
    t = table(INDIVIDUAL, target=4)
    t = play(t, (1, 1, 1), (2, 2, 2), (3, 3, 3), (5, 5, 5))
    assert t.seat_points == (20, 0, 0, 0) and not t.ended_round
    t = play(t, (4, 1, 2))
    assert t.ended_round and t.seat_points == (21, 0, 0, 0)


def test_individual_team_points_do_not_end_the_round() -> None:
    t = play(table(INDIVIDUAL, target=1), (2, 2, 2), (3, 3, 3), miss(1), miss(1), (2, 2, 2), (3, 3, 3))
    assert t.seat_points == (10, 0, 10, 0) and not t.ended_round


def test_individual_stop_rolling_unless_a_player_has_just_rolled_the_current_number() -> None:
    t = play(table(INDIVIDUAL, target=1, head=False), (1, 2, 3))
    t = t.apply(Bell())
    assert t.phase == FINISHING
    t = play(t, (1, 1, 4), miss(1))
    assert t.seat_points == (3, 0, 0, 0)
    assert t.phase == ROLLOFF and t.rolloff_group == (1, 2, 3)  # nobody else rolled: who is lowest?


def test_individual_all_players_stop_if_the_roller_has_not_just_rolled_the_current_number() -> None:
    # her last roll was three of a kind of another number: 5 points, but not the number at play
    t = play(table(INDIVIDUAL, target=1, head=False), (1, 2, 3), (4, 4, 4))
    assert t.roller == "ann" and t.seat_points == (6, 0, 0, 0)
    t = t.apply(Bell())
    assert t.phase != FINISHING and t.bell
    with_tally = play(table(INDIVIDUAL, target=1, head=False), Tally("three", 4)).apply(Bell())
    assert with_tally.phase != FINISHING
    # classic lets whoever is rolling finish her turn, whatever she rolled last
    classic = play(table(CLASSIC, target=1, head=False), (1, 2, 3), (4, 4, 4)).apply(Bell())
    assert classic.phase == FINISHING


def test_individual_the_player_with_the_lowest_total_moves() -> None:
    t = play(table(INDIVIDUAL, target=1, head=False), (1, 2, 3), miss(1), (1, 1, 3), miss(1),
             miss(1), (1, 4, 5), miss(1))
    t = t.apply(Bell())
    assert t.done and t.result.losers == ("cat",) and len(t.result.winners) == 3


def test_individual_a_tie_for_lowest_is_settled_by_a_roll_off_among_the_lowest() -> None:
    t = play(table(INDIVIDUAL, target=1, head=False), (1, 2, 3), miss(1), miss(1), miss(1), miss(1))
    t = t.apply(Bell())
    assert t.phase == ROLLOFF and t.rolloff_group == (1, 2, 3) and t.roller == "bea"
    t = play(t, (1, 2, 3), miss(1), miss(1), (1, 1, 5), miss(1))
    assert t.done and t.result.losers == ("cat",)


def test_individual_any_bunkoes_rolled_for_the_ghost_do_not_count() -> None:
    t = play(table(INDIVIDUAL, target=2, seats=("ann", "g", "cat", "dot"), ghosts={"g"}),
             miss(2), (2, 2, 2), (2, 1, 1))
    assert not t.ended_round and t.player_score("g") == 0 and t.phase == PLAYING


def test_individual_the_ghost_moves_rather_than_the_lowest_scorer() -> None:
    t = play(table(INDIVIDUAL, target=2, seats=("ann", "g", "cat", "dot"), ghosts={"g"}, head=False),
             (2, 5, 6), miss(2))
    t = t.apply(Bell())
    assert t.done and t.result.losers == ("g",)


# --- entries that cannot happen ----------------------------------------------------------------


def test_bad_entries_are_refused_and_leave_the_state_alone() -> None:
    t = table()
    with pytest.raises(RuleViolation):
        t.apply(Roll((0, 1, 2)))
    with pytest.raises(RuleViolation):
        t.apply(Tally("wipeout"))
    with pytest.raises(RuleViolation):
        t.apply(Undo())
    with pytest.raises(RuleViolation):
        TableSetup(1, ("a", "a", "b", "c"), 1, CLASSIC, True)
    with pytest.raises(RuleViolation):
        TableSetup(1, SEATS, 7, CLASSIC, True)
    assert t == table()


def test_button_entries_score_and_the_pass_button_ends_the_turn() -> None:
    t = play(table(target=5, head=False), Tally("point"), Tally("point"), Tally("three", 2), Tally("bunco"))
    assert t.team_scores == (28, 0) and t.roller == "ann"
    t = t.apply(Pass())
    assert t.roller == "bea"


def test_roll_given_as_a_list_is_the_same_roll() -> None:
    assert table().apply(Roll([1, 2, 3])) == table().apply(Roll((1, 2, 3)))


# --- properties --------------------------------------------------------------------------------

RULES = [CLASSIC, CORE, ROTATE, INDIVIDUAL, core_with_wipeout(), core_with_wipeout(True)]
dice = st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6))
entry = st.one_of(
    dice.map(Roll), dice.map(Roll), dice.map(Roll), st.just(Pass()), st.just(Bell()), st.just(Undo()),
    st.sampled_from([Tally("point"), Tally("bunco"), Tally("three", 6), Tally("wipeout")]),
)


def apply_all(state: TableRound, entries) -> tuple[TableRound, list]:
    """Apply what can be applied, skipping entries the state refuses."""
    accepted = []
    for e in entries:
        try:
            state = state.apply(e)
        except RuleViolation:
            continue
        accepted.append(e)
    return state, accepted


round_setup = st.builds(
    lambda rules, target, head, ghost: table(
        rules, target if target in rules.night.targets else rules.night.targets[0], head,
        seats=("ann", "g", "cat", "dot") if ghost else SEATS, ghosts={"g"} if ghost else set()),
    st.sampled_from(RULES), st.integers(1, 6), st.booleans(), st.booleans())


@settings(max_examples=60, deadline=None)
@given(round_setup, st.lists(entry, max_size=80))
def test_team_scores_are_the_sums_of_the_non_roll_off_roll_points(start: TableRound, entries) -> None:
    state, _ = apply_all(start, entries)
    per_seat = [0, 0, 0, 0]
    for r in state.rolls:
        if not r.rolloff:
            per_seat[r.seat - 1] += r.points
    assert list(state.seat_points) == per_seat
    assert state.team_scores == (per_seat[0] + per_seat[2], per_seat[1] + per_seat[3])
    assert all(p >= 0 for p in per_seat)  # a wipeout takes back no more than the roller had


@settings(max_examples=60, deadline=None)
@given(round_setup, st.lists(entry, max_size=60), st.one_of(dice.map(Roll), st.just(Pass()),
                                                             st.just(Tally("point"))))
def test_undo_after_any_entry_returns_the_state_before_it(start: TableRound, entries, last) -> None:
    before, _ = apply_all(start, entries)
    try:
        after = before.apply(last)
    except RuleViolation:
        return
    assert after != before
    assert after.apply(Undo()) == before


@settings(max_examples=60, deadline=None)
@given(round_setup, st.lists(entry, max_size=80))
def test_replaying_the_same_entries_gives_an_equal_state(start: TableRound, entries) -> None:
    state, accepted = apply_all(start, entries)
    assert TableRound.replay(start.setup, accepted) == state
    assert TableRound.replay(start.setup, state.entries) == state


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RULES), st.integers(0, 2**32 - 1), st.booleans())
def test_a_round_played_with_rolls_always_finishes_with_a_result(rules, seed, head) -> None:
    import random
    rng = random.Random(seed)
    t = table(rules, rules.night.targets[seed % len(rules.night.targets)], head)
    for _ in range(3000):
        if t.done:
            break
        if not head and rng.random() < 0.02:
            t = t.apply(Bell())
            continue
        t = t.apply(Roll((rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))))
    assert t.done and t.phase == DONE
    assert sorted(t.result.winners + t.result.losers) == sorted(SEATS)
