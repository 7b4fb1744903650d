"""The ``bunco-pi`` command: each subcommand lives in ``bunco_pi.commands.<name>``."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from bunco_pi import __version__
from bunco_pi.errors import UserError

# Each module exposes ``register(subparsers)``, which adds its parser and sets ``func``.
COMMANDS = ("rules", "sim", "dice", "doctor", "table", "broker", "head", "demo", "season",
            "audit", "pico", "sdcard")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of ``only`` that one.

    A box starts ``bunco-pi table`` at every boot: importing the other subcommands (paho, the
    head, the camera) only to build parsers it never uses was a third of its start-up.
    """
    parser = argparse.ArgumentParser(
        prog="bunco-pi", description="Keep score for a Bunco night on real tables."
    )
    parser.add_argument("--version", action="version", version=f"bunco-pi {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"bunco_pi.commands.{name}").register(subparsers)
    return parser


def parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for this command line: top-level options come before the subcommand, so
    its name is the first word when one is given; help and mistakes get every subcommand."""
    return build_parser(argv[0] if argv and argv[0] in COMMANDS else None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = parser_for(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except UserError as exc:
        print(f"bunco-pi: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `bunco-pi ... | head`: the reader has gone, which is no error of ours. Point stdout
        # at /dev/null so the interpreter's last flush does not fail a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # what a shell reports for a process ended by SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
