"""Every preset, played for many virtual nights, agrees with the independent audit; and the
networked demo's scorekeepers enter every baby bunco the rotate rules count."""

import json

import pytest

from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import PRESET_NAMES, parse_rules, preset, preset_text
from bunco_pi.rules.record import build_record
from bunco_pi.sim.players import simulate_night

NIGHTS = 40


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESET_NAMES)
def test_forty_nights_of_8_to_16_players_the_audit_finds_nothing(name) -> None:
    rules = preset(name)
    for seed in range(NIGHTS):
        players = 8 + seed % 9  # 8..16: no ghosts, one, two and three ghosts
        sim = simulate_night(rules, players, seed)
        record = build_record(sim.night, sim.log, seed=seed)
        assert record["complete"] and len(record["rounds"]) == rules.rounds_per_night
        assert audit_record(record, rules) == [], (name, players, seed)


@pytest.mark.slow
def test_the_demo_under_rotate_puts_baby_buncos_on_the_cards_and_pays_a_player_who_rolled_one(
        tmp_path, monkeypatch, capsys) -> None:
    """003: "Los Baby BUNCOs no valen puntos pero son premiados al final." The demo's
    scorekeepers press three for a 0-point baby bunco, so the cards carry them and Most baby
    buncos goes to a player who rolled one. (`bunco-pi demo --fast --full --rules rotate` in
    one process, one set, to keep the test short.)"""
    import bunco_pi.net.broker as broker
    from bunco_pi.cli import main
    from bunco_pi.errors import UserError

    def missing() -> str:
        raise UserError("mosquitto (the MQTT broker) is not installed")

    monkeypatch.setattr(broker, "find_mosquitto", missing)
    rules_file = tmp_path / "rotate-one-set.toml"
    rules_file.write_text(preset_text("rotate").replace("\nsets = 4", "\nsets = 1", 1))
    rules = parse_rules(rules_file.read_text())
    assert rules.night.sets == 1
    record_file = tmp_path / "night.json"
    # --full: the rules file's own night (one set), not the demo's default short night
    code = main(["demo", "--fast", "--full", "--rules", str(rules_file), "--record",
                 str(record_file), "--workdir", str(tmp_path / "work")])
    assert code == 0, capsys.readouterr().err[-2000:]
    record = json.loads(record_file.read_text())
    assert record["complete"] and audit_record(record, rules) == []
    cards = record["cards"]
    assert sum(c["baby_buncos"] for c in cards.values()) > 0
    rolled = sum(bool(r.get("baby_bunco")) for rnd in record["rounds"] for t in rnd["tables"]
                 for r in t["rolls"] if not r["player"].startswith("ghost"))
    assert sum(c["baby_buncos"] for c in cards.values()) == rolled
    prize = next(p for p in record["prizes"] if p["name"] == "Most baby buncos")
    assert cards[prize["player"]]["baby_buncos"] > 0
