"""The command itself: each run imports only its own subcommand; a closed pipe is no error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bunco_pi.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parent.parent


def imported_after(argv: list[str]) -> set[str]:
    """The bunco_pi.commands.* modules a fresh interpreter holds after parsing ``argv``."""
    code = ("import sys\nfrom bunco_pi.cli import parser_for\n"
            f"parser_for({argv!r}).parse_args({argv!r})\n"
            "print(' '.join(m for m in sys.modules if m.startswith('bunco_pi.commands.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout
    return set(out.split())


def test_a_subcommand_imports_only_itself() -> None:
    assert imported_after(["table", "--standalone"]) == {"bunco_pi.commands.table"}
    assert imported_after(["rules", "list"]) == {"bunco_pi.commands.rules"}
    # the box's start-up path must not drag in the network client or the head
    code = ("import sys\nfrom bunco_pi.cli import parser_for\n"
            "parser_for(['table']).parse_args(['table', '--standalone'])\n"
            "print('paho' in sys.modules, 'bunco_pi.head.service' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout.split()
    assert out == ["False", "False"]


def test_the_full_parser_still_lists_every_subcommand(capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    for name in COMMANDS:
        assert name in text


def test_an_unknown_subcommand_is_one_argparse_error(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["nosuch"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nosuch'" in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["rules", "show", "classic"], ["sim", "--players", "8"]])
def test_a_reader_that_went_away_is_no_traceback(argv: list[str]) -> None:
    # `bunco-pi ... | head`: the pipe closes before the command writes
    proc = subprocess.Popen([sys.executable, "-m", "bunco_pi.cli", *argv], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code == 141
