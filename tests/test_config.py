from __future__ import annotations

from pathlib import Path

import pytest

from bunco_pi.errors import UserError
from bunco_pi.hardware.pinmap import default_button_pins
from bunco_pi.table.config import CameraConfig, load_config, parse_config


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
        ('[table]\nplayers = ["a", "b", "c", "d", "e"]\n', "players must be a list of 1 to 4"),
        ('[table]\nplayers = ["a", "b", "A ", "c"]\n', "players entry 3: 'A' is entry 1 already"),
        ('[table]\nplayers = ["Ann", "Ghost 2"]\n', "entry 2: 'Ghost 2' reads as a ghost's name"),
        ('[table]\nplayers = ["Ann", "Bea\\u202e"]\n', "entry 2: U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ('[table]\nconsole_url = "bunco-head.local:8080"\n', "console_url"),
        ('[table]\nconsole_url = 8080\n', "must be a web address"),
        ('[table]\nnight = "friday night"\n', "is not a night's name"),
        (f'[table]\nconsole_url = "http://{"x" * 120}/"\n', "at most 120 characters"),
    ],
)
def test_mistakes_are_one_line_naming_file_and_fix(tmp_path, text, expect):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_config(path)
    assert expect in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_console_url(tmp_path):
    path = tmp_path / "table.toml"
    assert load_config(None).console_url == ""
    path.write_text('[table]\nconsole_url = "http://bunco-head.local:8080/"\n')
    assert load_config(path).console_url == "http://bunco-head.local:8080/"


def test_night(tmp_path):
    path = tmp_path / "table.toml"
    assert load_config(None).night == ""
    path.write_text('[table]\nnight = "friday-night"\n')
    assert load_config(path).night == "friday-night"


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
    assert_one_line_error(tmp_path, text, expect)


def test_camera_defaults_and_file_values(tmp_path):
    assert parse_config({}).camera == CameraConfig()
    assert CameraConfig() == CameraConfig(source="", calibration=None, frame_timeout=5.0)
    path = tmp_path / "table.toml"
    path.write_text('[camera]\nsource = "opencv:0"\ncalibration = "trays/one.json"\n'
                    "frame_timeout = 2\n")
    config = load_config(path)
    beside = tmp_path / "dice-learned.json"
    assert config.camera == CameraConfig("opencv:0", tmp_path / "trays/one.json", 2.0, beside)
    assert config.dice_port == ""
    # A folder and the calibration are taken from the config file's directory.
    path.write_text('[camera]\nsource = "folder:throws"\ncalibration = "/etc/tray.json"\n')
    assert load_config(path).camera == CameraConfig(f"folder:{tmp_path / 'throws'}",
                                                    Path("/etc/tray.json"), learned=beside)
    # Left out: dice-tray.json beside the config if it is there; "" is the built-in settings.
    path.write_text('[camera]\nsource = "picamera"\n')
    assert load_config(path).camera.calibration is None
    (tmp_path / "dice-tray.json").write_text("{}")
    assert load_config(path).camera.calibration == tmp_path / "dice-tray.json"
    path.write_text('[camera]\nsource = "picamera"\ncalibration = ""\n')
    assert load_config(path).camera.calibration is None


def test_what_rolling_taught_is_kept_beside_the_config_unless_told_otherwise(tmp_path):
    # "kept in a small learned-settings file beside the table's config so a reboot keeps them"
    path = tmp_path / "table.toml"
    path.write_text('[camera]\nsource = "picamera"\n')
    assert load_config(path).camera.learned == tmp_path / "dice-learned.json"
    path.write_text('[camera]\nsource = "picamera"\nlearned = "trays/learned.json"\n')
    assert load_config(path).camera.learned == tmp_path / "trays/learned.json"
    path.write_text('[camera]\nsource = "picamera"\nlearned = ""\n')
    assert load_config(path).camera.learned is None  # learned anew at every start
    assert parse_config({"camera": {"source": "picamera"}}).camera.learned is None
    path.write_text('[camera]\nlearned = 3\n')
    with pytest.raises(UserError, match=r":2 \[camera\] learned = 3: must be a string"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ('[camera]\nsource = "webcam"\n', ":2 [camera] source = 'webcam': expected picamera"),
        ('[camera]\n\nsource = "opencv:"\n', ":3 [camera] source = 'opencv:': expected"),
        ('[camera]\nsource = "picamera:1"\n', ":2 [camera] source = 'picamera:1': expected"),
        ("[camera]\nsource = 0\n", ":2 [camera] source = 0: must be a string"),
        ("[camera]\ncalibration = 3\n", ":2 [camera] calibration = 3: must be a string"),
        ("[camera]\nframe_timeout = 0\n", ":2 [camera] frame_timeout = 0: must be a number of"),
        ('[camera]\nframe_timeout = "5"\n', ":2 [camera] frame_timeout = '5': must be"),
        ("[camera]\nframe_timeout = true\n", ":2 [camera] frame_timeout = True: must be"),
        ('[camera]\ndevice = "/dev/video0"\n', ":2 [camera] device: unknown key (known: source"),
        ("camera = 1\n", "[camera]: must be a section"),
        ('[dice]\nport = "/dev/ttyACM0"\n\n[camera]\nsource = "picamera"\n',
         ":5 [camera] source: a table reads its dice with a serial sensor "
         "([dice] port = '/dev/ttyACM0') or a camera, not both"),
    ],
)
def test_camera_mistakes_name_file_line_and_key(tmp_path, text, expect):
    assert_one_line_error(tmp_path, text, expect)


def assert_one_line_error(tmp_path, text: str, expect: str) -> None:
    """The config ``text`` is refused with one line naming the file and saying ``expect``."""
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_config(path)
    assert str(path) in str(err.value) and expect in str(err.value), str(err.value)
    assert "\n" not in str(err.value)
