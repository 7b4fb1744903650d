"""``bunco-pi sim``: whole nights for every preset finish and agree with the rules texts."""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bunco_pi.cli import main
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import PRESET_NAMES, preset
from bunco_pi.rules.record import build_record, replay
from bunco_pi.sim.players import make_players, simulate_night

ROOT = Path(__file__).resolve().parents[1]
SEEDS = range(1, 21)


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> dict[tuple[str, int], dict]:
    """The issue's must-show: `bunco-pi sim --rules P --seed S --record F` for 4 presets x 20 seeds."""
    folder = tmp_path_factory.mktemp("nights")
    records = {}
    for name in PRESET_NAMES:
        for seed in SEEDS:
            path = folder / f"{name}-{seed}.json"
            assert main(["sim", "--rules", name, "--seed", str(seed), "--record", str(path)]) == 0
            records[name, seed] = json.loads(path.read_text(encoding="utf-8"))
    return records


def test_every_preset_and_seed_finishes_with_a_consistent_record(nights, capsys) -> None:
    capsys.readouterr()
    assert len(nights) == 80
    for (name, seed), record in nights.items():
        assert record["complete"] and record["seed"] == seed and record["rules"] == name
        assert audit_record(record, preset(name)) == [], (name, seed)


def classic_records(nights):
    return [r for (name, _), r in nights.items() if name == "classic"]


def test_classic_every_roll_is_scored_as_the_text_says(nights) -> None:
    checked = 0
    for record in classic_records(nights):
        for rnd in record["rounds"]:
            target = rnd["target"]
            for t in rnd["tables"]:
                for roll in t["rolls"]:
                    dice = roll["dice"]
                    if dice.count(target) == 3:
                        expected = 21  # "this is a BUNCO!!!(21 points)"
                    elif len(set(dice)) == 1:
                        expected = 5  # "three of a kind--of another number--give your team 5 points"
                    else:
                        expected = dice.count(target)  # "If 1 of the die shows ... tally 1 point"
                    assert roll["points"] == expected
                    checked += 1
    assert checked > 20 * 24 * 3 * 10


def test_classic_the_head_table_stops_exactly_at_21_or_a_bunco(nights) -> None:
    for record in classic_records(nights):
        for rnd in record["rounds"]:
            head = rnd["tables"][0]
            assert head["ended_round"]
            rolls = [r for r in head["rolls"] if not r["rolloff"]]
            seats = head["seats"]
            score = [0, 0]
            for i, roll in enumerate(rolls):
                before = max(score)
                score[seats.index(roll["player"]) % 2] += roll["points"]
                last = i == len(rolls) - 1
                ends = max(score) >= 21 or bool(roll.get("bunco"))
                assert ends == last, (rnd["set"], rnd["round"], i)
                if last:
                    assert before < 21
            assert head["score"] == score and not any(r["rolloff"] for r in head["rolls"])
            # the other tables never end the round
            assert not any(t["ended_round"] for t in rnd["tables"][1:])


def test_classic_ties_are_settled_by_roll_offs(nights) -> None:
    ties = 0
    for record in classic_records(nights):
        for rnd in record["rounds"]:
            for t in rnd["tables"]:
                a, b = t["score"]
                if a != b:
                    assert t["rolloffs"] == 0
                    continue
                ties += 1
                assert t["rolloffs"] >= 1
                extra = [0, 0]
                for roll in t["rolls"]:
                    if roll["rolloff"]:
                        extra[t["seats"].index(roll["player"]) % 2] += roll["points"]
                assert extra[0] != extra[1]
                team = (0, 2) if extra[0] > extra[1] else (1, 3)
                assert set(t["winners"]) == {t["seats"][i] for i in team}
    assert ties > 0  # twenty nights always hold some ties


def test_classic_the_traveler_is_whoever_rolled_the_last_bunco(nights) -> None:
    for record in classic_records(nights):
        ghosts = {p["id"] for p in record["players"] if p["ghost"]}
        last = None
        for rnd in record["rounds"]:
            for t in rnd["tables"]:
                for roll in t["rolls"]:
                    if roll.get("bunco") and (last is None or roll["at"] > last[0]):
                        player = roll["player"]
                        if player in ghosts:  # "her teammate gets the Bunco point"
                            player = t["seats"][(t["seats"].index(player) + 2) % 4]
                        last = (roll["at"], player)
        assert last is not None and record["traveler"] == last[1]
        assert next(p for p in record["prizes"] if p["name"] == "Traveling")["player"] == last[1]


def test_classic_partners_who_stay_are_split(nights) -> None:
    for record in classic_records(nights):
        rounds = record["rounds"]
        for rnd, nxt in zip(rounds, rounds[1:], strict=False):
            head, low = rnd["tables"][0], rnd["tables"][-1]
            new_head, new_low = nxt["tables"][0]["seats"], nxt["tables"][-1]["seats"]
            # "The winning team stays at the Head table. Have one teammate move over a chair"
            assert set(head["winners"]) <= set(new_head)
            w1, w2 = head["winners"]
            assert (new_head.index(w1) - new_head.index(w2)) % 2 == 1
            # "the losing team at the Losing table stays at the table but one player moves over"
            assert set(low["losers"]) <= set(new_low)
            l1, l2 = low["losers"]
            assert (new_low.index(l1) - new_low.index(l2)) % 2 == 1


def test_classic_prizes_pay_out_exactly_the_pot_of_5_dollars_a_player(nights) -> None:
    for record in classic_records(nights):
        paying = sum(not p["ghost"] for p in record["players"])
        assert paying == 12
        assert round(sum(p["amount"] for p in record["prizes"] if p["cash"]) * 100) == paying * 500
        assert [p["amount"] for p in record["prizes"]] == [20, 15, 10, 8, 5, 2]


def test_core_every_player_gets_at_least_one_roll_per_round(nights) -> None:
    for (name, _), record in nights.items():
        if name != "core":
            continue
        for rnd in record["rounds"]:
            for t in rnd["tables"]:
                assert {r["player"] for r in t["rolls"] if not r["rolloff"]} == set(t["seats"])


def test_rotate_when_the_bell_rings_all_play_stops(nights) -> None:
    for (name, _), record in nights.items():
        if name != "rotate":
            continue
        cash = [p["player"] for p in record["prizes"] if p["cash"]]
        assert len(cash) == len(set(cash))  # "solo pueden ganar en una categoria"
        for rnd in record["rounds"]:
            head = rnd["tables"][0]
            assert head["ended_round"] and max(head["score"]) >= 21


def test_individual_the_lowest_scorer_of_each_group_moves(nights) -> None:
    for (name, _), record in nights.items():
        if name != "individual":
            continue
        assert len(record["rounds"]) == 6
        for rnd in record["rounds"]:
            assert sum(t["ended_round"] for t in rnd["tables"]) >= 1
            for t in rnd["tables"]:
                (mover,) = t["losers"]
                low = min(t["seat_scores"])
                if t["rolloffs"] == 0:
                    assert t["seat_scores"][t["seats"].index(mover)] == low
                    assert t["seat_scores"].count(low) == 1


def test_sim_through_a_real_process(tmp_path) -> None:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    path = tmp_path / "night.json"
    done = subprocess.run([sys.executable, "-m", "bunco_pi.cli", "sim", "--rules", "core", "--seed", "11",
                           "--players", "14", "--record", str(path), "--check"],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "Audit: the record agrees with the rules." in done.stdout
    assert "Cash paid out: $70.00" in done.stdout  # 14 players x $5
    record = json.loads(path.read_text(encoding="utf-8"))
    assert audit_record(record, preset("core")) == []
    assert sum(p["ghost"] for p in record["players"]) == 2


def test_sim_with_a_rules_file_and_check(tmp_path, capsys) -> None:
    path = tmp_path / "house.toml"
    assert main(["rules", "show", "rotate"]) == 0
    path.write_text(capsys.readouterr().out.replace("sets = 4", "sets = 1"), encoding="utf-8")
    assert main(["sim", "--rules", str(path), "--players", "9", "--seed", "3", "--check"]) == 0
    out = capsys.readouterr().out
    assert "Standings (rotate, 6 rounds, 3 tables)" in out and "Audit: the record agrees" in out


@pytest.mark.parametrize("players", ["0", "801", "-4"])
def test_sim_refuses_impossible_player_counts_in_one_line(players, capsys) -> None:
    assert main(["sim", "--players", players]) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and "--players" in err and out == ""


@pytest.mark.slow
def test_a_100_table_charity_night_plays_and_audits(capsys) -> None:
    assert main(["sim", "--players", "400", "--check"]) == 0
    out = capsys.readouterr().out
    assert "Standings (classic, 24 rounds, 100 tables)" in out
    assert "Audit: the record agrees" in out


def test_a_night_has_up_to_200_tables() -> None:
    from bunco_pi.rules.night import Night, Player
    from bunco_pi.rules.table_round import RuleViolation

    for tables, fits in ((500, True), (501, False)):
        players = [Player(f"p{i}", f"P{i}") for i in range(tables * 4)]
        seating = [tuple(f"p{i}" for i in range(t * 4, t * 4 + 4)) for t in range(tables)]
        if fits:
            assert len(Night.start(preset("classic"), players, seating).seating) == 500
        else:
            with pytest.raises(RuleViolation, match="1 to 500 tables, got 501"):
                Night.start(preset("classic"), players, seating)


def test_make_players_fills_the_last_table_with_ghosts() -> None:
    roster = make_players(10)
    assert len(roster) == 12 and [p.ghost for p in roster].count(True) == 2
    assert len({p.id for p in roster}) == 12
    assert len(make_players(30)) == 32 and make_players(30)[27].name == "Bea 2"
    with pytest.raises(ValueError):
        make_players(0)


def test_the_same_seed_plays_the_same_night() -> None:
    a = simulate_night(preset("classic"), 8, 42)
    b = simulate_night(preset("classic"), 8, 42)
    assert a.log == b.log and a.night == b.night
    assert simulate_night(preset("classic"), 8, 43).log != a.log


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PRESET_NAMES), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_any_night_passes_the_audit(name, players, seed) -> None:
    rules = preset(name)
    sim = simulate_night(rules, players, seed)
    record = build_record(sim.night, sim.log, seed=seed)
    assert audit_record(record, rules) == []
    assert replay(record, rules) == sim.night
    cards = Counter(p["ghost"] for p in record["players"])
    assert cards[False] == players and (players + cards[True]) % 4 == 0


def core_with_wipeout():
    from bunco_pi.rules.house import parse_rules, preset_text

    text = preset_text("core").replace("[wipeout]\nenabled = false", "[wipeout]\nenabled = true")
    text = text.replace('traveler = false                   # "Traveling Wipeout',
                        'traveler = true # "Traveling Wipeout')
    text = text.replace('targets = [1, 2, 3, 4, 5, 6]       # "There are six rounds in each set"',
                        "targets = [2, 3, 4, 5, 6]")
    text += '\n[[prizes.prize]]\nname = "Wipeout fuzzy"\naward = "wipeout-traveler"\namount = 5\n'
    return parse_rules(text, "core+wipeout")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_core_with_wipeout_skips_the_ones_round_and_audits_clean(seed: int) -> None:
    rules = core_with_wipeout()
    sim = simulate_night(rules, 12, seed)
    record = build_record(sim.night, sim.log, seed=seed)
    assert [r["target"] for r in record["rounds"]] == [2, 3, 4, 5, 6] * 4
    assert audit_record(record, rules) == []
    wipeouts = [r for rnd in record["rounds"] for t in rnd["tables"] for r in t["rolls"] if r.get("wipeout")]
    assert wipeouts and all(r["dice"] == [1, 1, 1] and r["points"] <= 0 for r in wipeouts)
    assert sum(c["wipeouts"] for c in record["cards"].values()) == sum(
        1 for r in wipeouts if not r["player"].startswith("ghost"))
    last = max(wipeouts, key=lambda r: r["at"])
    fuzzy = next(p for p in record["prizes"] if p["name"] == "Wipeout fuzzy")
    assert record["wipeout_traveler"] == last["player"] == fuzzy["player"]
