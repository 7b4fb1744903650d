"""``bunco-pi rules``: list, show, and check with one clear line for every broken file."""

import subprocess
import sys
from pathlib import Path

import pytest

from bunco_pi.cli import main
from bunco_pi.rules.house import PRESET_NAMES, preset_text

ROOT = Path(__file__).resolve().parents[1]

# (name, file text, the line the error must name or None, the key or word it must name)
BROKEN = [
    ("unknown-key", 'name = "x"\n[scoring]\nbunco_pointz = 21\n', 3, "scoring.bunco_pointz"),
    ("unknown-top-key", 'name = "x"\nplayers = 12\n', 2, "players"),
    ("unknown-section", 'name = "x"\n[bell]\nloud = true\n', 2, "bell"),
    ("wrong-type", 'name = "x"\n[night]\nsets = "four"\n', 3, "night.sets"),
    ("wrong-type-bool", 'name = "x"\n\n[traveler]\nenabled = "yes"\n', 4, "traveler.enabled"),
    ("target-0", 'name = "x"\n[night]\ntargets = [0, 1, 2]\n', 3, "night.targets"),
    ("target-7", 'name = "x"\n[night]\ntargets = [1, 2, 7]\n', 3, "night.targets"),
    ("seats-3", 'name = "x"\n[night]\nsets = 4\nseats_per_table = 3\n', 4, "night.seats_per_table"),
    ("negative-prize", 'name = "x"\n[[prizes.prize]]\nname = "a"\naward = "most-wins"\namount = 5\n'
                       '[[prizes.prize]]\nname = "b"\naward = "most-losses"\namount = -2\n', 9,
     "prizes.prize.amount"),
    ("negative-bunco", 'name = "x"\n[scoring]\nbunco_points = -21\n', 3, "scoring.bunco_points"),
    ("bad-toml", 'name = "x"\n[night]\nsets = \n', 3, "not valid TOML"),
    ("bad-toml-header", 'name = "x"\n[night\nsets = 4\n', 2, "not valid TOML"),
    ("unknown-award", 'name = "x"\n[[prizes.prize]]\nname = "a"\naward = "most-pie"\n', 4,
     "prizes.prize.award"),
    ("unknown-tie-break", 'name = "x"\n[[prizes.prize]]\nname = "a"\naward = "most-wins"\n'
                          'tie_break = "arm-wrestle"\n', 5, "prizes.prize.tie_break"),
    ("prize-without-name", 'name = "x"\n[[prizes.prize]]\naward = "most-wins"\n', 2, "name"),
    ("wipeout-with-ones", 'name = "x"\n[wipeout]\nenabled = true\n[night]\ntargets = [1, 2, 3]\n', 5,
     "night.targets"),
    ("lowest-moves-team", 'name = "x"\nplay = "team"\n[rotation]\nscheme = "lowest-moves"\n', 4,
     "scheme"),
    ("traveler-prize-without-traveler",
     'name = "x"\n[traveler]\nenabled = false\n[[prizes.prize]]\nname = "a"\naward = "most-wins"\n'
     '[[prizes.prize]]\nname = "Fuzzy"\naward = "traveler"\n', 9, "traveler"),
    ("break-after-last-set", 'name = "x"\n[night]\nsets = 2\nbreak_after_sets = [3]\n', 4,
     "night.break_after_sets"),
    ("section-not-a-table", 'name = "x"\nscoring = 5\n', 2, "scoring"),
    ("empty-name", 'name = "  "\n', 1, "name"),
]


def one_error_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(("name", "text", "line", "key"), BROKEN, ids=[b[0] for b in BROKEN])
def test_rules_check_names_the_file_line_and_key_of_a_broken_file(tmp_path, capsys, name, text, line,
                                                                  key) -> None:
    path = tmp_path / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["rules", "check", str(path)]) == 2
    message = one_error_line(capsys)
    assert message.startswith("bunco-pi: ")
    assert str(path) in message
    if "TOML" in key:
        assert f"line {line}" in message
    else:
        assert f"{path}:{line}:" in message
    assert key in message


def test_rules_check_of_a_missing_file(tmp_path, capsys) -> None:
    path = tmp_path / "nope.toml"
    assert main(["rules", "check", str(path)]) == 2
    message = one_error_line(capsys)
    assert str(path) in message and "no such" in message


def test_rules_check_of_a_directory_or_binary_file(tmp_path, capsys) -> None:
    assert main(["rules", "check", str(tmp_path)]) == 2
    assert str(tmp_path) in one_error_line(capsys)
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe\x00name")
    assert main(["rules", "check", str(binary)]) == 2
    assert str(binary) in one_error_line(capsys)


def test_sim_with_an_unknown_preset_is_one_line(capsys) -> None:
    assert main(["sim", "--rules", "parlour"]) == 2
    message = one_error_line(capsys)
    assert "'parlour'" in message and "classic" in message


def test_rules_check_accepts_every_preset_as_a_file(tmp_path, capsys) -> None:
    for name in PRESET_NAMES:
        path = tmp_path / f"{name}.toml"
        path.write_text(preset_text(name), encoding="utf-8")
        assert main(["rules", "check", str(path)]) == 0
        out, err = capsys.readouterr()
        assert err == "" and f"'{name}'" in out and "ok" in out


def test_rules_check_reports_the_shape_of_the_night(tmp_path, capsys) -> None:
    path = tmp_path / "short.toml"
    path.write_text('name = "short"\n[night]\nsets = 2\ntargets = [1, 2, 3]\nbreak_after_sets = []\n')
    assert main(["rules", "check", str(path)]) == 0
    assert "2 sets of 3 rounds" in capsys.readouterr().out


def test_rules_list_and_show(capsys) -> None:
    assert main(["rules", "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == list(PRESET_NAMES)
    assert main(["rules", "show", "rotate"]) == 0
    assert capsys.readouterr().out == preset_text("rotate")


def test_rules_check_through_a_real_process(tmp_path) -> None:
    path = tmp_path / "seats.toml"
    path.write_text('name = "x"\n[night]\nseats_per_table = 3\n', encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "bunco_pi.cli", "rules", "check", str(path)],
                          capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"bunco-pi: {path}:3: 'night.seats_per_table' must be 4 (Bunco is played four to a table: "
        "two teams of two), got 3"]
    missing = subprocess.run([sys.executable, "-m", "bunco_pi.cli", "rules", "check", "gone.toml"],
                             capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    assert "gone.toml" in missing.stderr and "Traceback" not in missing.stderr
