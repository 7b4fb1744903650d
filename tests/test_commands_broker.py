import argparse
import json
import stat

import pytest

from bunco_pi.commands import broker as command
from bunco_pi.errors import UserError


def parse(argv):
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    return parser.parse_args(["broker", *argv])


def test_writes_credentials_and_broker_files_and_keeps_passwords(tmp_path, capsys):
    args = parse(["--dir", str(tmp_path), "--tables", "2", "--port", "1884"])
    assert args.func(args) == 0
    creds = json.loads((tmp_path / "credentials.json").read_text())["users"]
    assert sorted(creds) == ["head", "table-1", "table-2"]
    assert stat.S_IMODE((tmp_path / "credentials.json").stat().st_mode) == 0o600
    conf = (tmp_path / "broker" / "mosquitto.conf").read_text()
    assert "listener 1884 0.0.0.0" in conf.splitlines()
    assert "user table-2" in (tmp_path / "broker" / "acl").read_text()
    assert "mosquitto -c" in capsys.readouterr().out
    args = parse(["--dir", str(tmp_path), "--tables", "3"])
    args.func(args)
    again = json.loads((tmp_path / "credentials.json").read_text())["users"]
    assert {k: again[k] for k in creds} == creds and "table-3" in again


@pytest.mark.parametrize("argv, problem", [
    (["--tables", "0"], "--tables 0"),
    (["--tables", "2", "--port", "70000"], "--port 70000"),
    (["--tables", "2", "--autosave", "30"], "--autosave 30"),
    (["--tables", "2", "--owner", "no-such-user-here"], "--owner no-such-user-here"),
])
def test_bad_options_are_one_line_user_errors(tmp_path, argv, problem):
    args = parse(["--dir", str(tmp_path), *argv])
    with pytest.raises(UserError, match=problem):
        args.func(args)
