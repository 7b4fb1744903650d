"""`bunco-pi head`'s settings: the command line over the config file over the defaults."""

import argparse

import pytest

from bunco_pi.cli import main
from bunco_pi.commands import head as head_command
from bunco_pi.errors import UserError
from bunco_pi.provision import head_config


def parse(*argv):
    parser = argparse.ArgumentParser()
    head_command.register(parser.add_subparsers())
    return parser.parse_args(["head", *argv])


def test_defaults_without_a_config():
    s = head_command._settings(parse())
    assert (s.night, s.tables, s.rules, s.broker) == ("bunco", 3, "classic", "127.0.0.1:1883")
    assert (s.bell_pin, s.buzzer_pin, s.buzzer) == (16, 12, "tonal")


def test_the_installed_config_is_read_and_the_command_line_wins(tmp_path):
    from bunco_pi.rules.house import preset_text

    (tmp_path / "rules.toml").write_text(preset_text("core"))
    path = tmp_path / "head.toml"
    path.write_text(head_config("friday-night", 5, port=1999, etc=str(tmp_path)))
    s = head_command._settings(parse("--config", str(path)))
    assert (s.night, s.tables, s.broker) == ("friday-night", 5, "127.0.0.1:1999")
    assert s.credentials.endswith("credentials.json")
    assert s.rules == str(tmp_path / "rules.toml")
    s = head_command._settings(parse("--config", str(path), "--tables", "2", "--players", "7"))
    assert (s.tables, s.players, s.roster) == (2, 7, None)


def test_a_broken_config_is_one_line(tmp_path, capsys):
    path = tmp_path / "head.toml"
    path.write_text('[night]\nname = "x"\ntables = 0\n')
    assert main(["head", "--config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "head.toml:3" in err[0] and "tables" in err[0]


@pytest.mark.parametrize("text, problem", [
    ("Ann\nBea\nAnn\n", "line 3: 'Ann' is on the roster twice"),
    ("Ann\n\n# late ones\nANN  # again\n", "line 4: 'ANN' is on the roster twice \\(line 1"),
    ("Ann\nGhost 1\n", "line 2: 'Ghost 1' reads as a ghost's name"),
    ("Ann\nＧｈｏｓｔ ３\n", "line 2: .* reads as a ghost's name"),
    ("Ann\n\u202eeB\n", "line 2: U\\+202E \\(RIGHT-TO-LEFT OVERRIDE\\)"),
    ("Ann\nBea\x07\n", "line 2: U\\+0007 .* is a control character"),
    ("Ann\n" + "x" * 40 + "\n", "line 2: a name of at most 32 characters"),
    ("", None)])
def test_roster(tmp_path, text, problem):
    path = tmp_path / "roster.txt"
    path.write_text(text)
    if problem:
        with pytest.raises(UserError, match=f"roster.txt {problem}") as err:
            head_command._roster(str(path))
        assert "\n" not in str(err.value)
    else:
        assert head_command._roster(str(path)) == []


def test_a_missing_credentials_file_is_one_line(tmp_path, capsys):
    assert main(["head", "--credentials", str(tmp_path / "nope.json"), "--data-dir",
                 str(tmp_path), "--no-gpio"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope.json" in err[0]


@pytest.mark.parametrize("argv, problem", [
    (["--night", "a b"], "--night 'a b'"),
    (["--record", "/nonexistent/dir/night.json"], "cannot write there"),
])
def test_mistakes_found_before_the_night_starts_are_one_line(argv, problem, capsys, tmp_path):
    assert main(["head", *argv, "--credentials", str(tmp_path / "c.json"), "--no-gpio"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0]
