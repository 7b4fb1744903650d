"""head.toml's [console] section: its defaults, its keys, and one-line mistakes."""

from pathlib import Path

import pytest

from bunco_pi.errors import UserError
from bunco_pi.head.config import DEFAULT_CONSOLE_PASSWORD, DEFAULT_CONSOLE_PORT, load_head_config


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "head.toml"
    path.write_text('[night]\nname = "n"\n' + text)
    return path


def test_the_console_is_on_by_default(tmp_path):
    cfg = load_head_config(_write(tmp_path, ""))
    assert cfg.console_enabled and cfg.console_port == DEFAULT_CONSOLE_PORT == 8080
    assert cfg.console_password == Path(DEFAULT_CONSOLE_PASSWORD)


def test_every_console_key(tmp_path):
    cfg = load_head_config(_write(tmp_path, '[console]\nenabled = false\nport = 8123\n'
                                            'password = "secrets/host"\n'))
    assert (cfg.console_enabled, cfg.console_port) == (False, 8123)
    assert cfg.console_password == tmp_path / "secrets" / "host"


@pytest.mark.parametrize("text, expect", [
    ("[console]\nport = 0\n", "head.toml:4 [console] port"),
    ("[console]\nport = \"8080\"\n", "head.toml:4 [console] port"),
    ("[console]\nenabled = 1\n", "head.toml:4 [console] enabled"),
    ("[console]\nhost = \"x\"\n", "head.toml:4 [console] host"),
])
def test_console_mistakes_are_one_line(tmp_path, text, expect):
    with pytest.raises(UserError) as err:
        load_head_config(_write(tmp_path, text))
    assert expect in str(err.value) and "\n" not in str(err.value)


def test_https_and_the_limits_are_off_and_default_unless_set(tmp_path):
    cfg = load_head_config(_write(tmp_path, ""))
    assert cfg.console_https_port is None
    assert cfg.console_limits == (512, 24, 200, 8)


def test_https_and_limit_keys(tmp_path):
    cfg = load_head_config(_write(tmp_path, '[console]\nhttps = true\nhttps_port = 9443\n'
                                            'certificate = "tls/c.crt"\nkey = "tls/c.key"\n'
                                            'connections = 300\nconnections_per_address = 10\n'
                                            'streams = 100\nstreams_per_address = 4\n'))
    assert cfg.console_https_port == 9443
    assert (cfg.console_certificate, cfg.console_key) == (tmp_path / "tls/c.crt",
                                                          tmp_path / "tls/c.key")
    assert cfg.console_limits == (300, 10, 100, 4)


@pytest.mark.parametrize("text, expect", [
    ("[console]\nhttps = true\nhttps_port = 8080\n", "head.toml:5 [console] https_port"),
    ("[console]\nhttps = \"yes\"\n", "head.toml:4 [console] https"),
    ("[console]\nconnections = 5\n", "head.toml:4 [console] connections"),
    ("[console]\nconnections = 100\nconnections_per_address = 200\n",
     "head.toml:5 [console] connections_per_address"),
    ("[console]\nstreams = 0\n", "head.toml:4 [console] streams"),
    ("[console]\nstreams = 10\nstreams_per_address = 11\n",
     "head.toml:5 [console] streams_per_address"),
])
def test_https_and_limit_mistakes_are_one_line(tmp_path, text, expect):
    with pytest.raises(UserError) as err:
        load_head_config(_write(tmp_path, text))
    assert expect in str(err.value) and "\n" not in str(err.value)
