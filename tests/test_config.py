from __future__ import annotations

from pathlib import Path

import pytest

from bunco_pi.errors import UserError
from bunco_pi.hardware.pinmap import default_button_pins
from bunco_pi.table.config import load_config, parse_config


def test_defaults_come_from_the_pin_map():
    config = parse_config({})
    assert config.buttons.pins == default_button_pins()
    assert config.display.kind == "ssd1306" and config.display.address == 0x3C


def test_file_overrides(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(
        '[buttons]\npoint = 17\nhold_time = 1.5\n[display]\ntype = "SH1106"\n'
        'address = "0x3d"\nrotation = 2\n[dice]\nport = "loop://"\n'
        '[table]\nnumber = 3\nplayers = ["A1", "B1", "A2", "B2"]\n'
    )
    config = load_config(path)
    assert config.buttons.pins["point"] == 17 and config.buttons.hold_time == 1.5
    assert (config.display.kind, config.display.address, config.display.rotation) == (
        "sh1106", 0x3D, 2)
    assert config.dice_port == "loop://" and config.number == 3
    assert config.players == ("A1", "B1", "A2", "B2")


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("[buttons]\npoint = 6\n", "GPIO6 is used by both 'point' and 'three'"),
        ("[buttons]\nbell = 4\n", "unknown button 'bell'"),
        ("[buttons]\npoint = 40\n", "not a BCM GPIO number"),
        ('[display]\ntype = "lcd"\n', "unknown display type 'lcd'"),
        ("[display]\naddress = 300\n", "not an I2C address"),
        ("[display]\nrotation = 90\n", "rotation 90"),
        ("[screen]\n", "unknown section [screen]"),
        ("[buttons\n", "not valid TOML"),
        ('[table]\nplayers = ["a"]\n', "players must be a list of 4"),
        ('[table]\nplayers = ["a", "b", "a", "c"]\n', "4 different names"),
    ],
)
def test_mistakes_are_one_line_naming_file_and_fix(tmp_path, text, expect):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_config(path)
    assert expect in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="config file not found"):
        load_config(tmp_path / "nope.toml")


def test_broker_and_data_defaults_and_file_values(tmp_path):
    config = parse_config({})
    assert (config.broker.host, config.broker.port, config.broker.discover) == (
        "bunco-head.local", 1883, True)
    assert config.broker.credentials == Path("/etc/bunco-pi/secrets/credentials.json")
    assert config.data_dir == Path("/var/lib/bunco-pi") and config.node_name == "table-1"
    path = tmp_path / "table.toml"
    path.write_text('[table]\nnumber = 4\n[broker]\ndiscover = false\nhost = "10.0.0.2"\n'
                    'port = 1884\ncredentials = "secrets/c.json"\n[data]\ndir = "/srv/b"\n')
    config = load_config(path)
    assert (config.broker.host, config.broker.port, config.broker.discover) == (
        "10.0.0.2", 1884, False)
    assert config.broker.credentials == tmp_path / "secrets/c.json"  # relative to the file
    assert config.data_dir == Path("/srv/b") and config.node_name == "table-4"


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("[broker]\nport = 0\n", ":2 [broker] port = 0: a TCP port must be"),
        ('[broker]\nport = "1883"\n', ":2 [broker] port = '1883'"),
        ("[broker]\n\ndiscover = 1\n", ":3 [broker] discover = 1: must be true or false"),
        ('[broker]\nhost = "bad host"\n', ":2 [broker] host = 'bad host': not a host name"),
        ('[broker]\nhost = ""\n', ":2 [broker] host = '': must be a non-empty string"),
        ('[broker]\nusername = "table-2"\n', ":2 [broker] username: unknown key"),
        ("[broker]\ncredentials = 5\n", ":2 [broker] credentials = 5"),
        ("broker = 5\n", "[broker]: must be a section"),
        ("[data]\ndir = 3\n", ":2 [data] dir = 3: must be a non-empty string"),
        ('[data]\npath = "/x"\n', ":2 [data] path: unknown key (known: dir)"),
        ("[table]\nnumber = 1000\n", "number 1000 must be 1 (head) to 999"),
    ],
)
def test_broker_and_data_mistakes_name_file_line_and_key(tmp_path, text, expect):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_config(path)
    assert str(path) in str(err.value) and expect in str(err.value), str(err.value)
    assert "\n" not in str(err.value)
