"""What the head tells everyone (the night state) and each table (its view), as JSON-ready dicts.

Pure functions of the night: the same night always gives the same views, so a table that joins
late or reboots gets exactly what the others saw (the views are retained on the broker).
"""

from __future__ import annotations

from typing import Any

from bunco_pi.protocol import PROTOCOL_VERSION
from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.night import RESULTS, Night


def timer_of(night: Night, now: float) -> dict[str, Any] | None:
    """The clock running now as the state carries it: its phase ("round", "warn" in the
    warning's last seconds, "pause", "move"), the seconds left when the head said it, and the
    phase's length. A box counts down from when it received it, by its own clock."""
    clock = night.clock
    if clock is None:
        return None
    left = clock.left(now)
    if clock.paused_at is not None:
        phase = "pause"
    elif clock.phase == "move":
        phase = "move"
    elif left <= night.rules.round.warn_seconds:
        phase = "warn"
    else:
        phase = "round"
    return {"phase": phase, "left": round(left, 2), "total": round(clock.total, 2)}


def night_state(night: Night | None, *, name: str, rules_toml: str, table_count: int,
                lobby_tables: list[int] | None = None, now: float | None = None
                ) -> dict[str, Any]:
    """The retained night state every node reads first (``now``: the head's wall clock, for a
    timed round's ``timer``)."""
    state: dict[str, Any] = {"v": PROTOCOL_VERSION, "night": name, "tables": table_count,
                             "rules_toml": rules_toml}
    if night is None:
        state.update(phase="lobby", online=sorted(lobby_tables or []))
        return state
    state.update(
        phase=night.phase,
        round_index=night.round_index,
        set=night.set_number,
        round=night.round_number,
        target=night.target,
        bell=night.bell_rung,
        players=[{"id": p.id, "name": p.name, "ghost": p.ghost} for p in night.players],
        seating=[list(s) for s in night.seating],
        traveler=night.traveler,
        fold=fold_rules(night.rules),
    )
    timer = timer_of(night, now) if now is not None else None
    if timer is not None:
        state["timer"] = timer
    return state


def fold_rules(rules: HouseRules) -> dict[str, Any]:
    """The house rules a box that carries no rules engine (the Pico table box,
    ``table/tally.py``) needs to fold its round's play offline: the points per press, the
    goal, what a BUNCO and the bell do. Optional in the state: an older head leaves it out."""
    return {"die": rules.scoring.points_per_target_die,
            "three": rules.scoring.three_of_a_kind_points,
            "bunco": rules.scoring.bunco_points,
            "any_points": rules.scoring.turn_continues == "any-points",
            "wipeout": rules.wipeout.enabled, "wipeout_ends": rules.wipeout.ends_turn,
            "goal": rules.round.target_score, "bunco_ends": rules.round.bunco_ends_round,
            "after_bell": rules.round.after_bell, "team": rules.team_play,
            "ends_at": rules.round.ends_at, "ghost_points": rules.ghost.points}


def player_names(night: Night) -> dict[str, str]:
    """Each player's name by id: what a view shows for the ids it holds."""
    return {p.id: p.name for p in night.players}


def moves_by_table(night: Night) -> dict[int, list[dict[str, Any]]]:
    """The last round's moves, each under the table it leaves (empty before any round)."""
    out: dict[int, list[dict[str, Any]]] = {}
    if night.phase == RESULTS and night.history:
        names = player_names(night)
        for m in night.history[-1].moves:
            out.setdefault(m.from_table, []).append(
                {"name": names[m.player], "to_table": m.to_table, "to_seat": m.to_seat})
    return out


def table_views(night: Night | None, tables: range) -> list[dict[str, Any]]:
    """Every table's view at once: the names and the moves are worked out once for all of
    them, not once per table (at 500 tables, 2,000 names and 1,000 moves a table apiece
    made each round's announcement grow with the square of the tables)."""
    if night is None:
        return [table_view(None, t) for t in tables]
    names, moves = player_names(night), moves_by_table(night)
    return [table_view(night, t, names=names, moves=moves.get(t, [])) for t in tables]


def table_view(night: Night | None, table: int, *, names: dict[str, str] | None = None,
               moves: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What table ``table`` must show, by the head's own fold of every table's entries.

    The night's phase and bell are the state's, not repeated here: a view changes only when
    something of this table's does, so the bell (which changes none) is the state alone.
    ``names`` (``player_names``) and ``moves`` (this table's of ``moves_by_table``) may be
    given when they are already known: the view is then worked out without a look at
    every player of the night."""
    view: dict[str, Any] = {"v": PROTOCOL_VERSION, "table": table}
    if night is None:
        return view
    if names is None:
        names = player_names(night)
    view.update(round_index=night.round_index, set=night.set_number,
                round=night.round_number, target=night.target,
                traveler=names.get(night.traveler))
    if night.tables and table <= len(night.tables):
        t = night.tables[table - 1]
        view.update(
            seats=[names[p] for p in t.setup.seats],
            seat_ids=list(t.setup.seats),
            score=list(t.team_scores),
            seat_scores=list(t.seat_points),
            roller_seat=t.roller_seat,
            table_phase=t.phase,
            done=t.done,
            # For a box that does not fold the house rules itself (the Pico table box): a held
            # "three" is three 2s, which take the traveler, in this round.
            twos_travel=(night.rules.traveler.enabled
                         and night.rules.traveler.trigger == "all-twos" and night.target != 2),
            # and the seats a ghost sits in, for its fold of the play (a ghost may score none)
            ghost_seats=[s + 1 for s, p in enumerate(t.setup.seats) if p in t.setup.ghosts],
        )
    elif table <= len(night.seating):
        view.update(seats=[names[p] for p in night.seating[table - 1]],
                    seat_ids=list(night.seating[table - 1]))
    if night.phase == RESULTS and night.history:
        last = night.history[-1].tables[table - 1]
        view["result"] = {"winners": [names[p] for p in last.winners],
                          "losers": [names[p] for p in last.losers],
                          "score": list(last.team_scores)}
        if last.held:  # the host closed the round while this table had not finished
            view["result"]["held"] = last.held
        view["moves"] = moves if moves is not None else [
            {"name": names[m.player], "to_table": m.to_table, "to_seat": m.to_seat}
            for m in night.history[-1].moves if m.from_table == table
        ]
    if night.prizes:
        view["prizes"] = [{"name": a.name, "winner": names.get(a.player, "-"),
                           "amount": a.amount_cents / 100, "cash": a.cash}
                          for a in night.prizes]
    return view

