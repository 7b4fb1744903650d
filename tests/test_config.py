from __future__ import annotations

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
