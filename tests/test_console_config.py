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
