from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bunco_pi.errors import UserError
from bunco_pi.hardware.pinmap import default_head_pins
from bunco_pi.head.config import load_head_config, read_roster
from bunco_pi.net.broker import Credentials, credentials_text
from bunco_pi.rules.house import preset


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "head.toml"
    path.write_text(text)
    return path


def test_a_name_is_all_it_needs(tmp_path):
    cfg = load_head_config(_write(tmp_path, '[night]\nname = "n1"\n'))
    pins = default_head_pins()
    assert (cfg.night, cfg.tables, cfg.players, cfg.roster) == ("n1", 1, 4, None)
    assert (cfg.rules_preset, cfg.rules_file) == ("classic", None)
    assert cfg.house_rules() == preset("classic")
    assert (cfg.bell_pin, cfg.buzzer_pin, cfg.buzzer_kind) == (
        pins["bell"], pins["buzzer"], "TonalBuzzer")
    assert cfg.buzzer_mode == "tonal"
    assert (cfg.broker.host, cfg.broker.port, cfg.advertise) == ("127.0.0.1", 1883, True)
    assert cfg.username == "head"
    assert cfg.event_log == Path("/var/lib/bunco-pi/night-n1.sqlite")
    assert cfg.record == Path("/var/lib/bunco-pi/n1.record.json")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.night = "other"  # type: ignore[misc]


def test_every_key(tmp_path):
    (tmp_path / "house.toml").write_text(
        (Path(__file__).parents[1] / "bunco_pi/rules/presets/rotate.toml").read_text())
    (tmp_path / "roster.txt").write_text("Ann\nBea\n")
    (tmp_path / "c.json").write_text(credentials_text(Credentials({"head": "pw-h"})))
    cfg = load_head_config(_write(tmp_path, """
[night]
name = "fri-2026"
tables = 3
rules = "house.toml"
roster = "roster.txt"
record = "out/record.json"

[broker]
host = "10.0.0.1"
port = 1884
credentials = "c.json"

[discovery]
advertise = false

[bell]
pin = 20

[buzzer]
pin = 21
kind = "Buzzer"

[data]
dir = "data"
"""))
    assert (cfg.night, cfg.tables, cfg.players) == ("fri-2026", 3, None)
    assert cfg.rules_file == tmp_path / "house.toml" and cfg.house_rules() == preset("rotate")
    assert cfg.roster == tmp_path / "roster.txt"
    assert cfg.record == tmp_path / "out/record.json"
    assert (cfg.broker.host, cfg.broker.port, cfg.advertise) == ("10.0.0.1", 1884, False)
    assert cfg.password() == "pw-h"
    assert (cfg.bell_pin, cfg.buzzer_pin, cfg.buzzer_kind, cfg.buzzer_mode) == (
        20, 21, "Buzzer", "plain")
    assert cfg.event_log == tmp_path / "data/night-fri-2026.sqlite"


def test_a_preset_by_name(tmp_path):
    cfg = load_head_config(_write(tmp_path, '[night]\nname = "n"\nrules = "individual"\n'))
    assert cfg.house_rules() == preset("individual")


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("[night]\ntables = 2\n", ":1 [night]: missing key name"),
        ('[night]\nname = "Friday night"\n', ":2 [night] name = 'Friday night': use 1-40"),
        ('[night]\nname = "n"\ntables = 0\n', ":3 [night] tables = 0: the number of tables"),
        ('[night]\nname = "n"\ntables = 501\n', ":3 [night] tables = 501: the number of tables "
         "must be a whole number 1..500"),
        ('[night]\nname = "n"\ntables = 2\nplayers = 9\n',
         ":4 [night] players = 9: players for 2 table(s) must be a whole number 1..8"),
        ('[night]\nname = "n"\nplayers = 4\nroster = "r.txt"\n',
         "[night] roster = 'r.txt': give either players or roster, not both"),
        ('[night]\nname = "n"\nroster = "r.txt"\n', ":3 [night] roster = 'r.txt': no such"),
        ('[night]\nname = "n"\nrules = "house"\n', ":3 [night] rules = 'house': not a preset"),
        ('[night]\nname = "n"\nrules = "nope.toml"\n', ":3 [night] rules = 'nope.toml': no such"),
        ('[night]\nname = "n"\nrounds = 6\n', ":3 [night] rounds: unknown key"),
        ('[night]\nname = "n"\n[bell]\npin = 28\n', ":4 [bell] pin = 28: a BCM GPIO number"),
        ('[night]\nname = "n"\n[buzzer]\npin = 16\n', ":4 [buzzer] pin = 16: GPIO16 is the bell"),
        ('[night]\nname = "n"\n[buzzer]\nkind = "Piezo"\n',
         ":4 [buzzer] kind = 'Piezo': use 'TonalBuzzer' or 'Buzzer'"),
        ('[night]\nname = "n"\n[broker]\nport = 99999\n', ":4 [broker] port = 99999"),
        ('[night]\nname = "n"\n[broker]\ndiscover = true\n', ":4 [broker] discover: unknown"),
        ('[night]\nname = "n"\n[discovery]\nadvertise = "yes"\n',
         ":4 [discovery] advertise = 'yes': must be true or false"),
        ('[night]\nname = "n"\n\n[pins]\nbell = 16\n', ":4 [pins]: unknown section"),
        ("[night\n", "not valid TOML"),
    ],
)
def test_mistakes_are_one_line_naming_file_line_and_key(tmp_path, text, expect):
    path = _write(tmp_path, text)
    with pytest.raises(UserError) as err:
        load_head_config(path)
    message = str(err.value)
    assert message.startswith(str(path)) and expect in message, message
    assert "\n" not in message


def test_missing_file_and_missing_password(tmp_path):
    with pytest.raises(UserError, match="config file not found"):
        load_head_config(tmp_path / "nope.toml")
    (tmp_path / "c.json").write_text(credentials_text(Credentials({"table-1": "x"})))
    cfg = load_head_config(_write(tmp_path, '[night]\nname = "n"\n[broker]\n'
                                            'credentials = "c.json"\n'))
    with pytest.raises(UserError, match="no broker password for user 'head'"):
        cfg.password()


def test_a_roster_name_against_the_rule_is_one_line_naming_its_line(tmp_path):
    """The roster is read when the config is: "Ghost 1" or a right-to-left override in it is
    said at once, with the roster file's line."""
    (tmp_path / "roster.txt").write_text("Ann\n# seat 2\nGh0st 1\n", encoding="utf-8")
    path = tmp_path / "head.toml"
    path.write_text('[night]\nname = "n"\nroster = "roster.txt"\n')
    with pytest.raises(UserError, match=r"roster.txt line 3: 'Gh0st 1' reads as a ghost's"):
        load_head_config(path)
    (tmp_path / "roster.txt").write_text("Ann\nO\u2019Brien\n\u202eaeB\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"roster.txt line 3: U\+202E") as err:
        load_head_config(path)
    assert "\n" not in str(err.value)
    (tmp_path / "roster.txt").write_text("Ann\nO\u2019Brien\n  Zoe\u0308  \n", encoding="utf-8")
    assert read_roster(tmp_path / "roster.txt") == ["Ann", "O\u2019Brien", "Zo\u00eb"]
