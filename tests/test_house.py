"""House rules: the four presets say what their texts say, and bad files fail clearly."""

import dataclasses

import pytest

from bunco_pi.errors import UserError
from bunco_pi.rules.house import (
    PRESET_NAMES,
    HouseRules,
    load_rules,
    parse_rules,
    preset,
    preset_text,
    resolve_rules,
    schema,
)


def test_every_preset_loads_and_is_named_after_itself() -> None:
    for name in PRESET_NAMES:
        rules = preset(name)
        assert rules.name == name and rules.description
        assert rules.night.seats_per_table == 4


def test_classic_preset_follows_the_classic_text() -> None:
    r = preset("classic")
    # "The game is divided into 4 sets. 1 Set equals 6 rounds."
    assert r.night.sets == 4 and r.night.targets == (1, 2, 3, 4, 5, 6) and r.rounds_per_night == 24
    # "Play continues for two complete sets. At this point, take a break"
    assert r.night.break_after_sets == (2,)
    # "When the Head table reaches 21 points or rolls a BUNCO they ring the bell"
    assert r.round.target_score == 21 and r.round.ends_at == "head" and r.round.bunco_ends_round
    assert r.round.after_bell == "finish-turn"
    assert r.traveler.enabled and r.traveler.trigger == "bunco"
    assert r.rotation.scheme == "head-stays" and r.rotation.split_partners
    assert (r.ghost.points, r.ghost.bunco_credit) == ("team", "teammate")
    # "$20 ... $15 ... $10 ... $8 ... $5 ... $2" and "the suggested $5 contribution"
    assert [(p.award, p.amount) for p in r.prizes.prize] == [
        ("most-buncos", 20), ("most-wins", 15), ("traveler", 10), ("fifty-fifty", 8),
        ("most-losses", 5), ("draw-without-prize", 2)]
    assert r.prizes.pot_per_player == 5
    assert sum(p.amount for p in r.prizes.prize) == 12 * 5  # "12 fun-loving people"


def test_core_preset_follows_the_core_text() -> None:
    r = preset("core")
    assert r.rotation.scheme == "head-losers-to-low"
    assert r.round.every_player_rolls  # "Every player gets at least one roll per round."
    assert r.score_card.weighted_head and r.score_card.head_weight == 2  # "Red W would count as 2"
    assert not r.wipeout.enabled  # optional
    assert r.prizes.prize[0].tie_break == "roll-off"


def test_rotate_preset_follows_the_spanish_text() -> None:
    r = preset("rotate")
    assert r.rotation.scheme == "winners-rotate"
    assert r.scoring.baby_bunco and r.scoring.three_of_a_kind_points == 0
    assert r.round.after_bell == "stop"  # "Cuando suena la campana, todo el juego cesa"
    assert (r.ghost.points, r.ghost.bunco_credit) == ("team", "none")  # "SOLO puntos"
    assert r.prizes.one_cash_prize_per_player
    assert [(p.award, p.amount, p.tie_break) for p in r.prizes.prize if p.cash] == [
        ("most-wins", 30, "draw-highest"), ("most-buncos", 15, "draw-highest"),
        ("most-baby-buncos", 10, "draw-highest"), ("most-losses", 5, "draw-lowest")]
    traveler = r.prizes.prize[-1]
    assert traveler.award == "traveler" and not traveler.cash  # a gift certificate from the host


def test_individual_preset_follows_the_individual_text() -> None:
    r = preset("individual")
    assert not r.team_play and r.rotation.scheme == "lowest-moves"
    assert r.night.sets == 1 and r.night.targets == (1, 2, 3, 4, 5, 6)  # "6 rounds ... numbers 1-6"
    assert r.round.ends_at == "any-table" and r.round.bunco_ends_round
    # "all players stop rolling ... unless a player has just rolled the current number at play"
    assert r.round.after_bell == "finish-if-target"
    assert r.traveler.trigger == "all-twos"
    assert (r.ghost.points, r.ghost.bunco_credit, r.ghost.moves_instead) == ("none", "none", True)
    assert all(p.tie_break == "bunco-off" for p in r.prizes.prize if p.award != "traveler")


def test_an_empty_file_is_the_defaults() -> None:
    assert parse_rules("") == HouseRules()


def test_numbers_are_accepted_where_a_number_is_due() -> None:
    r = parse_rules('[prizes]\npot_per_player = 4\n[[prizes.prize]]\nname = "a"\naward = "most-wins"\n'
                    'amount = 2.5\n')
    assert r.prizes.pot_per_player == 4.0 and r.prizes.prize[0].amount == 2.5


@pytest.mark.parametrize(("text", "expected"), [
    ("[scoring]\nbunco_points = true\n", "<t>:2: 'scoring.bunco_points' must be a whole number, got True"),
    ("[night]\nsets = 0\n", "<t>:2: 'night.sets' must be a whole number from 1 to 20, got 0"),
    ("[night]\ntargets = []\n", "<t>:2: 'night.targets' must be a non-empty list of numbers from 1 to 6"),
    ("[round]\nafter_bell = \"run\"\n",
     "<t>:2: 'round.after_bell' must be one of \"finish-turn\", \"finish-if-target\", \"stop\""),
    ("[prizes]\nprize = 3\n", "<t>:2: prizes must be written as [[prizes.prize]] tables"),
    ("play = \"individual\"\n", "<t>: individual play needs 'rotation.scheme' = \"lowest-moves\""),
    ("[ghost]\nmoves_instead = true\n", "<t>:2: 'ghost.moves_instead' only applies to individual play"),
    ("[wipeout]\ntraveler = true\n", "<t>:2: 'wipeout.traveler' needs 'wipeout.enabled = true'"),
    ('[[prizes.prize]]\nname = "b"\naward = "most-baby-buncos"\n',
     "<t>:3: prize 'b' needs 'scoring.baby_bunco = true'"),
])
def test_errors_name_the_line_and_the_key(text: str, expected: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_rules(text, "<t>")
    message = str(caught.value)
    assert message.startswith(expected)
    assert "\n" not in message


def test_comments_and_quoted_keys_do_not_confuse_the_line_numbers() -> None:
    text = '# sets = 9\nname = "x"\n[night]\n# bad below\n"sets" = 99 # too many\n'
    with pytest.raises(UserError, match=r"^<t>:5: 'night.sets'"):
        parse_rules(text, "<t>")


def test_the_error_points_at_the_right_prize() -> None:
    text = ('[traveler]\nenabled = false\n[[prizes.prize]]\nname = "a"\naward = "most-wins"\n'
            '[[prizes.prize]]\nname = "b"\naward = "most-wins"\ntie_break = "coin"\n')
    with pytest.raises(UserError, match=r"^<t>:9: 'prizes.prize.tie_break'"):
        parse_rules(text, "<t>")


def test_load_rules_and_resolve_rules(tmp_path) -> None:
    path = tmp_path / "house.toml"
    path.write_text(preset_text("core").replace('name = "core"', 'name = "ours"'), encoding="utf-8")
    assert load_rules(path) == dataclasses.replace(preset("core"), name="ours")
    assert resolve_rules(str(path)).name == "ours"
    assert resolve_rules("rotate") is preset("rotate")
    with pytest.raises(UserError, match="neither a preset"):
        resolve_rules(str(tmp_path / "missing.toml"))
    with pytest.raises(UserError, match="no such house rules file"):
        load_rules(tmp_path / "missing.toml")
    with pytest.raises(UserError, match="unknown preset 'parlour'"):
        preset_text("parlour")


def test_the_schema_describes_every_field_of_the_rules() -> None:
    tree = schema()
    assert set(tree[""]) == {"name", "description", "play"}
    sections = {f.name: f.type for f in dataclasses.fields(HouseRules)}
    for section, keys in tree.items():
        if section in ("", "prizes.prize"):
            continue
        assert section in sections
        cls = type(getattr(HouseRules(), section))
        names = {f.name for f in dataclasses.fields(cls)} - {"prize"}
        assert names == set(keys), section
    for keys in tree.values():
        for kind, _check, description in keys.values():
            assert kind in (int, float, bool, str, list) and description
