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
    ghosts = {pid for pid, p in players.items() if p["ghost"]}
    rounds = record["rounds"]
    counts: dict[str, Counter[str]] = {pid: Counter() for pid in players if pid not in ghosts}
    travel_rolls: list[tuple[int, str | None]] = []

    for r_index, rnd in enumerate(rounds):
        where = f"set {rnd['set']} round {rnd['round']}"
        expected_target = rules.night.targets[r_index % len(rules.night.targets)]
        if rnd["target"] != expected_target:
            problems.append(f"{where}: target {rnd['target']}, rules say {expected_target}")
        seen = [p for t in rnd["tables"] for p in t["seats"]]
        if sorted(seen) != sorted(players):
            problems.append(f"{where}: not every player sits exactly once")
        for t in rnd["tables"]:
            problems += _audit_table(t, rnd["target"], rules, ghosts, f"{where} table {t['table']}",
                                     counts, travel_rolls)
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
        played = sum(1 for rnd in rounds for t in rnd["tables"] if pid in t["seats"])
        if card["wins"] + card["losses"] != played:
            problems.append(f"{pid}: {card['wins']} wins + {card['losses']} losses, "
                            f"but {played} rounds played")
    missing = set(counts) - set(record["cards"])
    if missing:
        problems.append(f"no card for {', '.join(sorted(missing))}")

    # the traveler is whoever triggered it last, in the order of the log
    if rules.traveler.enabled and travel_rolls:
        holder = max(travel_rolls, key=lambda item: item[0])[1]
        if record["traveler"] != holder:
            problems.append(f"traveler is {record['traveler']}, the last trigger was by {holder}")
    elif record["traveler"] is not None:
        problems.append(f"traveler is {record['traveler']}, but nobody triggered it")

    if record.get("complete"):
        problems += _audit_prizes(record, rules, len(counts))
    return problems


def _credited(t: dict[str, Any], roll: dict[str, Any], rules: HouseRules, ghosts: set[str]) -> str | None:
    if roll["player"] not in ghosts:
        return roll["player"]
    if rules.ghost.bunco_credit != "teammate" or not rules.team_play:
        return None
    seats = t["seats"]
    mate = seats[(seats.index(roll["player"]) + 2) % 4]
    return None if mate in ghosts else mate


def _audit_table(t: dict[str, Any], target: int, rules: HouseRules, ghosts: set[str], where: str,
                 counts: dict[str, Counter[str]], travel_rolls: list) -> list[str]:
    problems = []
    seats = t["seats"]
    seat_points = [0, 0, 0, 0]
    rolloff_points = [0, 0, 0, 0]
    ended_at: int | None = None
    for i, roll in enumerate(t["rolls"]):
        player = roll["player"]
        seat = seats.index(player)
        ghost = player in ghosts
        if roll["dice"] is not None:
            outcome = score_roll(tuple(roll["dice"]), target, rules)
        else:
            outcome = score_tally(roll["tally"], target, rules)
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
            if who in counts:
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
    if rules.team_play:
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
        if pid in counts:
            counts[pid]["wins"] += 1
    for pid in t["losers"]:
        if pid in counts:
            counts[pid]["losses"] += 1
    return problems


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
    turns: list[tuple[str, int]] = []
    for roll in t["rolls"]:
        if roll["rolloff"]:
            if turns and turns[-1][0] == roll["player"]:
                turns[-1] = (roll["player"], turns[-1][1] + roll["points"])
            else:
                turns.append((roll["player"], roll["points"]))
    totals = dict.fromkeys(group, 0)
    while len(group) > 1 and turns:
        for player in group:
            if not turns or turns[0][0] != player:
                return set()  # a turn out of order: no one is the expected mover
            totals[player] += turns.pop(0)[1]
        low = min(totals[p] for p in group)
        group = [p for p in group if totals[p] == low]
    return set(group) if len(group) == 1 else set()


def _audit_moves(rnds: list[dict[str, Any]], index: int, rules: HouseRules, where: str) -> list[str]:
    if index + 1 >= len(rnds):
        return []
    rnd, nxt = rnds[index], rnds[index + 1]
    outcomes = [TableOutcome(tuple(t["seats"]), tuple(t["winners"]), tuple(t["losers"]))
                for t in rnd["tables"]]
    expected, _ = next_seating(rules, outcomes)
    actual = [tuple(t["seats"]) for t in nxt["tables"]]
    problems = []
    if actual != list(expected):
        problems.append(f"{where}: next seating {actual} is not the rotation's {list(expected)}")
    if rules.team_play and rules.rotation.split_partners:
        partners = {frozenset((t["seats"][i], t["seats"][i + 2])) for t in rnd["tables"]
                    for i in (0, 1)}
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
