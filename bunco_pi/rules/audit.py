"""Check a night record against its house rules, independently of how it was made.

The audit re-derives what it can from the rolls alone (scores, W/L, cards, the traveler, the
moves, the prizes) and lists every disagreement. An empty list means the record is consistent.
It is how the tests hold the engine to the rule texts, and how a group can check a record
that a box wrote.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bunco_pi.rules.house import HouseRules
from bunco_pi.rules.prizes import pot_cents
from bunco_pi.rules.rotation import TableOutcome, next_seating
from bunco_pi.rules.scoring import score_roll, score_tally


def audit_record(record: dict[str, Any], rules: HouseRules) -> list[str]:
    problems: list[str] = []
    players = {p["id"]: p for p in record["players"]}
    rounds = record["rounds"]
    log = record.get("log", [])
    ghosts_in = _ghosts_by_round(players, log, len(rounds))
    ever_played = {pid for pid in players if any(pid not in g for g in ghosts_in)} \
        if rounds else {pid for pid, p in players.items() if not p["ghost"]}
    counts: dict[str, Counter[str]] = {pid: Counter() for pid in players if pid in ever_played}
    travel_rolls: list[tuple[int, str | None]] = []

    rung = _rounds_rung_without_a_table(log, rules)
    for r_index, rnd in enumerate(rounds):
        where = f"set {rnd['set']} round {rnd['round']}"
        if not any(t["ended_round"] for t in rnd["tables"]) and r_index not in rung:
            # a round ends when a table that can end it does, or when the host rings the bell
            problems.append(f"{where}: no table ended the round and the host did not ring the bell")
        expected_target = rules.night.targets[r_index % len(rules.night.targets)]
        if rnd["target"] != expected_target:
            problems.append(f"{where}: target {rnd['target']}, rules say {expected_target}")
        seen = [p for t in rnd["tables"] for p in t["seats"]]
        if sorted(seen) != sorted(players):
            problems.append(f"{where}: not every player sits exactly once")
        for t in rnd["tables"]:
            problems += _audit_table(t, rnd["target"], rules, ghosts_in[r_index],
                                     f"{where} table {t['table']}",
                                     counts, travel_rolls, log)
        problems += _audit_moves(rnds=rounds, index=r_index, rules=rules, where=where)

    # cards agree with the rolls and results
    for pid, card in record["cards"].items():
        if pid not in counts:
            problems.append(f"card for {pid}, who is a ghost or unknown")
            continue
        for stat in ("wins", "losses", "buncos", "baby_buncos", "wipeouts"):
            if card.get(stat, 0) != counts[pid][stat]:
                problems.append(f"{pid}: card says {stat} {card.get(stat)}, rolls say "
                                f"{counts[pid][stat]}")
        played = sum(1 for r, rnd in enumerate(rounds) for t in rnd["tables"]
                     if pid in t["seats"] and pid not in ghosts_in[r] and _has_result(t))
        if card["wins"] + card["losses"] != played:
            problems.append(f"{pid}: {card['wins']} wins + {card['losses']} losses, "
                            f"but {played} rounds played")
    missing = set(counts) - set(record["cards"])
    if missing:
        problems.append(f"no card for {', '.join(sorted(missing))}")

    # the traveler is whoever triggered it last, in the order of the log; a round still in play
    # is not in the record yet, so its triggers cannot be checked
    in_play = sum(1 for e in log if isinstance(e, list) and e[:1] == ["start"]) > len(rounds)
    if not in_play and rules.traveler.enabled and travel_rolls:
        holder = max(travel_rolls, key=lambda item: item[0])[1]
        if record["traveler"] != holder:
            problems.append(f"traveler is {record['traveler']}, the last trigger was by {holder}")
    elif not in_play and record["traveler"] is not None:
        problems.append(f"traveler is {record['traveler']}, but nobody triggered it")

    if record.get("complete"):
        problems += _audit_prizes(record, rules, len(counts))
    return problems


def _has_result(t: dict[str, Any]) -> bool:
    """A table the host closed (``held``) has a result only if its scores as they stood gave
    winners; every other table always has one."""
    return not t.get("held") or bool(t["winners"])


def _ghosts_by_round(players: dict[str, Any], log: list[Any], count: int) -> list[set[str]]:
    """Who sat as a ghost in each round: a late arrival's seat was a ghost's until she came,
    and someone who left was a player until then (the seat changes happen between rounds)."""
    arrivals = [e for e in log if isinstance(e, list) and e[:1] == ["arrive"]]
    leavings = [e for e in log if isinstance(e, list) and e[:1] == ["leave"]]
    ghosts = {pid for pid, p in players.items() if p["ghost"]}
    ghosts = (ghosts | {e[1] for e in arrivals}) - {e[1] for e in leavings}
    by_round: list[set[str]] = []
    closed = 0
    for event in log:
        if not isinstance(event, list) or not event:
            continue
        if event[0] in ("close", "close-held"):  # either ends a round
            closed += 1
        elif event[0] in ("arrive", "leave"):
            while len(by_round) < min(closed, count):
                by_round.append(set(ghosts))
            ghosts = ghosts - {event[1]} if event[0] == "arrive" else ghosts | {event[1]}
    while len(by_round) < count:
        by_round.append(set(ghosts))
    return by_round


def _rounds_rung_without_a_table(log: list[Any], rules: HouseRules) -> set[int]:
    """The round indexes (0-based) whose bell may have rung with no table ending the round: the
    host rang it, or a table that can end the round took back an entry (the bell had rung for a
    roll that was then undone)."""
    rounds: set[int] = set()
    index = -1
    any_table = rules.round.ends_at == "any-table"
    for event in log:
        if not isinstance(event, list) or not event:
            continue
        if event[0] == "start":
            index += 1
        elif event[0] in ("ring", "close-held") or (
                event[0] == "undo" and (any_table or event[1:2] == [1])):
            rounds.add(index)
    return rounds


def _tally_face(roll: dict[str, Any], log: list[Any]) -> int | None:
    """The face a "three" button entry was made with: it is in the log, not in the roll."""
    at = roll.get("at")
    if isinstance(at, int) and 0 <= at < len(log):
        event = log[at]
        if isinstance(event, list) and len(event) == 4 and event[0] == "tally":
            return event[3]
    return None


def _credited(t: dict[str, Any], roll: dict[str, Any], rules: HouseRules, ghosts: set[str]) -> str | None:
    if roll["player"] not in ghosts:
        return roll["player"]
    if rules.ghost.bunco_credit != "teammate" or not rules.team_play:
        return None
    seats = t["seats"]
    mate = seats[(seats.index(roll["player"]) + 2) % 4]
    return None if mate in ghosts else mate


def _audit_table(t: dict[str, Any], target: int, rules: HouseRules, ghosts: set[str], where: str,
                 counts: dict[str, Counter[str]], travel_rolls: list, log: list[Any]) -> list[str]:
    problems = []
    seats = t["seats"]
    held = t.get("held", "")
    if held not in ("", "as-it-stands", "no-result"):
        problems.append(f"{where}: held {held!r} is not a round.held_table rule")
    if held and held != rules.round.held_table:
        problems.append(f"{where}: closed by the host as {held!r}, rules say "
                        f"{rules.round.held_table!r}")
    if held == "no-result":
        counts = {}  # the round counts for nothing on its players' cards
    seat_points = [0, 0, 0, 0]
    rolloff_points = [0, 0, 0, 0]
    ended_at: int | None = None
    for i, roll in enumerate(t["rolls"]):
        player = roll["player"]
        if player not in seats:
            problems.append(f"{where}: roll {i + 1} is by {player}, who does not sit at this table")
            continue
        seat = seats.index(player)
        ghost = player in ghosts
        try:
            if roll["dice"] is not None:
                outcome = score_roll(tuple(roll["dice"]), target, rules)
            else:
                outcome = score_tally(roll["tally"], target, rules, _tally_face(roll, log))
        except ValueError as exc:
            problems.append(f"{where}: roll {i + 1} by {player} cannot be: {exc}")
            continue
        pool = rolloff_points if roll["rolloff"] else seat_points
        if outcome.wipeout:
            expected = -pool[seat]
        elif ghost and rules.ghost.points == "none":
            expected = 0
        else:
            expected = outcome.points
        if roll["points"] != expected:
            problems.append(f"{where}: roll {i + 1} {roll['dice']} by {player} scored "
                            f"{roll['points']}, rules say {expected}")
        pool[seat] += roll["points"]
        if outcome.bunco:
            who = _credited(t, roll, rules, ghosts)
            if who in counts and who not in ghosts:
                counts[who]["buncos"] += 1
        if not ghost and player in counts:
            counts[player]["baby_buncos"] += outcome.baby_bunco
            counts[player]["wipeouts"] += outcome.wipeout
        if outcome.travels and _credited(t, roll, rules, ghosts) is not None:
            travel_rolls.append((roll.get("at", 0), _credited(t, roll, rules, ghosts)))
        if t["ended_round"] and ended_at is None and not roll["rolloff"]:
            team = (seat_points[0] + seat_points[2], seat_points[1] + seat_points[3])
            reached = max(team) if rules.team_play else max(seat_points)
            counted = not ghost or rules.ghost.points == "team"
            if reached >= rules.round.target_score or (
                    outcome.bunco and rules.round.bunco_ends_round and counted):
                ended_at = i
    score = [seat_points[0] + seat_points[2], seat_points[1] + seat_points[3]]
    if list(t["score"]) != score:
        problems.append(f"{where}: score {t['score']}, its rolls add up to {score}")
    if list(t["seat_scores"]) != seat_points:
        problems.append(f"{where}: seat scores {t['seat_scores']}, rolls add up to {seat_points}")
    if t["ended_round"]:
        if ended_at is None:
            problems.append(f"{where}: said to end the round but never reached "
                            f"{rules.round.target_score} or a bunco")
        else:
            later = [r for r in t["rolls"][ended_at + 1 :] if not r["rolloff"]]
            if later and not rules.round.every_player_rolls:
                problems.append(f"{where}: {len(later)} rolls after the round was won")
    # who won
    if held:
        problems += _audit_held(t, score, seat_points, rules, ghosts, where)
    elif rules.team_play:
        a, b = score
        if a == b:
            a, b = rolloff_points[0] + rolloff_points[2], rolloff_points[1] + rolloff_points[3]
            if t["rolloffs"] == 0:
                problems.append(f"{where}: tied {score} but no roll-off")
        team_a, team_b = {seats[0], seats[2]}, {seats[1], seats[3]}
        winners = team_a if a > b else team_b
        if set(t["winners"]) != winners or set(t["losers"]) != (team_a | team_b) - winners:
            problems.append(f"{where}: winners {t['winners']} do not match the scores")
    else:
        problems += _audit_individual(t, seat_points, rolloff_points, rules, ghosts, where)
    for pid in t["winners"]:
        if pid in counts and pid not in ghosts:
            counts[pid]["wins"] += 1
    for pid in t["losers"]:
        if pid in counts and pid not in ghosts:
            counts[pid]["losses"] += 1
    return problems


def _audit_held(t: dict[str, Any], score: list[int], seat_points: list[int], rules: HouseRules,
                ghosts: set[str], where: str) -> list[str]:
    """A table the host closed: no result, or the result of its scores as they stood (a tie,
    which needs a roll-off nobody rolled, is no result)."""
    seats = t["seats"]
    winners: set[str] = set()
    if t["held"] == "as-it-stands":
        if rules.team_play:
            a, b = score
            if a != b:
                winners = {seats[0], seats[2]} if a > b else {seats[1], seats[3]}
        else:
            table_ghosts = [p for p in seats if p in ghosts]
            lowest = [seats[s] for s in range(4) if seat_points[s] == min(seat_points)]
            if table_ghosts and rules.ghost.moves_instead:
                winners = set(seats) - {table_ghosts[0]}
            elif len(lowest) == 1:
                winners = set(seats) - set(lowest)
    losers = (set(seats) - winners) if winners else set()
    if set(t["winners"]) != winners or set(t["losers"]) != losers:
        return [f"{where}: closed by the host ({t['held']}), winners {t['winners']} do not "
                "match the scores as they stood"]
    return []


def _audit_individual(t: dict[str, Any], seat_points: list[int], rolloff_points: list[int],
                      rules: HouseRules, ghosts: set[str], where: str) -> list[str]:
    seats = t["seats"]
    table_ghosts = [p for p in seats if p in ghosts]
    if table_ghosts and rules.ghost.moves_instead:
        expected = {table_ghosts[0]}
    else:
        expected = _lowest_after_rolloffs(t, seat_points)
    if set(t["losers"]) != expected or len(t["losers"]) != 1:
        return [f"{where}: the lowest scorer {sorted(expected)} should move, "
                f"record says {t['losers']}"]
    return []


def _lowest_after_rolloffs(t: dict[str, Any], seat_points: list[int]) -> set[str]:
    """Who is lowest, playing the roll-off sessions out: each session every tied player takes
    one turn (a run of her rolls) and the lowest of that session's totals are still tied."""
    seats = t["seats"]
    low = min(seat_points)
    group = [seats[s] for s in range(4) if seat_points[s] == low]
    rolloff_rolls = [r for r in t["rolls"] if r["rolloff"]]
    if all("session" in r for r in rolloff_rolls):
        # a turn passed on the button without scoring leaves no roll, so sessions, not runs of
        # rolls, tell the turns apart
        totals = dict.fromkeys(group, 0)
        for session in range(1, t["rolloffs"] + 1):
            if len(group) < 2:
                return set()  # a session after the tie was broken
            for roll in rolloff_rolls:
                if roll["session"] == session:
                    if roll["player"] not in group:
                        return set()  # a roll by someone not (or no longer) in the roll-off
                    totals[roll["player"]] += roll["points"]
            low = min(totals[p] for p in group)
            group = [p for p in group if totals[p] == low]
        return set(group) if len(group) == 1 else set()
    # records without sessions: each tied player's turn is a run of her rolls
    turns: list[tuple[str, int]] = []
    for roll in t["rolls"]:
        if roll["rolloff"]:
            if turns and turns[-1][0] == roll["player"]:
                turns[-1] = (roll["player"], turns[-1][1] + roll["points"])
            else:
                turns.append((roll["player"], roll["points"]))
    totals = dict.fromkeys(group, 0)
    while len(group) > 1 and turns:
        taken = 0
        for player in group:
            # a turn passed on the button without scoring leaves no roll: she scored 0
            if turns and turns[0][0] == player:
                totals[player] += turns.pop(0)[1]
                taken += 1
        if not taken:
            return set()  # a roll-off turn by someone not in the roll-off: no one is the mover
        low = min(totals[p] for p in group)
        group = [p for p in group if totals[p] == low]
    return set(group) if len(group) == 1 else set()


def _audit_moves(rnds: list[dict[str, Any]], index: int, rules: HouseRules, where: str) -> list[str]:
    if index + 1 >= len(rnds):
        return []
    rnd, nxt = rnds[index], rnds[index + 1]
    outcomes = [TableOutcome(tuple(t["seats"]), tuple(t["winners"]), tuple(t["losers"]))
                for t in rnd["tables"]]
    sitting_out = frozenset(i for i, t in enumerate(rnd["tables"]) if not _has_result(t))
    try:
        expected, _ = next_seating(rules, outcomes, sitting_out=sitting_out)
    except (ValueError, IndexError, KeyError):
        # seats that do not match the winners and losers (reported with the table)
        return [f"{where}: the seats and results do not give a next seating to check against"]
    actual = [tuple(t["seats"]) for t in nxt["tables"]]
    problems = []
    if actual != list(expected):
        problems.append(f"{where}: next seating {actual} is not the rotation's {list(expected)}")
    if rules.team_play and rules.rotation.split_partners:
        # a table that sat out the rotation (no result) keeps its partners, rightly
        partners = {frozenset((t["seats"][i], t["seats"][i + 2])) for t in rnd["tables"]
                    for i in (0, 1) if _has_result(t)}
        for t in nxt["tables"]:
            for i in (0, 1):
                if frozenset((t["seats"][i], t["seats"][i + 2])) in partners:
                    problems.append(f"{where}: partners {t['seats'][i]} and {t['seats'][i + 2]} "
                                    "were not split")
    return problems


def _audit_prizes(record: dict[str, Any], rules: HouseRules, paying: int) -> list[str]:
    problems = []
    prizes = record["prizes"]
    if len(prizes) != len(rules.prizes.prize):
        return [f"{len(prizes)} prizes given, rules list {len(rules.prizes.prize)}"]
    cash_total = round(sum(p["amount"] for p in prizes if p["cash"] and p["player"]) * 100)
    pot = pot_cents(rules, paying)
    if rules.prizes.scale_to_pot and cash_total != pot:
        problems.append(f"cash prizes pay {cash_total / 100:.2f}, the pot is {pot / 100:.2f}")
    cards = record["cards"]
    weighted = rules.score_card.weighted_head
    metric = {
        "most-buncos": lambda c: c["buncos"],
        "most-wins": lambda c: c["weighted_wins"] if weighted else c["wins"],
        "most-losses": lambda c: c["weighted_losses"] if weighted else c["losses"],
        "most-baby-buncos": lambda c: c["baby_buncos"],
        "most-wipeouts": lambda c: c["wipeouts"],
        "fifty-fifty": lambda c: -abs(c["wins"] - c["losses"]),
    }
    cash_winners: set[str] = set()
    for rule, prize in zip(rules.prizes.prize, prizes, strict=True):
        winner = prize["player"]
        eligible = [p for p in cards if not (rules.prizes.one_cash_prize_per_player and rule.cash
                                             and p in cash_winners)]
        if rule.award == "traveler" and winner != record["traveler"] and record["traveler"] in eligible:
            problems.append(f"prize '{rule.name}' went to {winner}, the traveler is "
                            f"{record['traveler']}")
        if winner is not None and winner not in cards:
            problems.append(f"prize '{rule.name}' went to {winner}, who has no score card")
            continue
        if rule.award in metric and winner is not None and eligible:
            best = max(metric[rule.award](cards[p]) for p in eligible)
            if metric[rule.award](cards[winner]) != best:
                problems.append(f"prize '{rule.name}' went to {winner}, who is not the best")
        if winner is not None and rule.cash:
            if (winner in cash_winners and rules.prizes.one_cash_prize_per_player
                    and len(cash_winners) < len(cards)):
                problems.append(f"{winner} won a second cash prize '{rule.name}'")
            cash_winners.add(winner)
    return problems
