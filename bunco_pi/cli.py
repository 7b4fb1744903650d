"""The ``bunco-pi`` command: each subcommand lives in ``bunco_pi.commands.<name>``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from bunco_pi import __version__
from bunco_pi.errors import UserError

# Each module exposes ``register(subparsers)``, which adds its parser and sets ``func``.
COMMANDS = ("rules", "sim", "dice", "doctor", "table", "broker", "head", "demo", "season")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bunco-pi", description="Keep score for a Bunco night on real tables."
    )
    parser.add_argument("--version", action="version", version=f"bunco-pi {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"bunco_pi.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"bunco-pi: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
