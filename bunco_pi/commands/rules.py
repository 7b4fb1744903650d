"""``bunco-pi rules list | show PRESET | check FILE``."""

from __future__ import annotations

import argparse

from bunco_pi.rules.house import PRESET_NAMES, load_rules, preset, preset_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rules", help="house rules: list the presets, show one, check a file",
        description="House rules are one TOML file. Start from a preset: "
                    "bunco-pi rules show classic > house.toml",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="the built-in presets").set_defaults(func=_list)
    show = actions.add_parser("show", help="print a preset as TOML, to copy and edit")
    show.add_argument("preset", choices=PRESET_NAMES)
    show.set_defaults(func=_show)
    check = actions.add_parser("check", help="check a house rules file")
    check.add_argument("file")
    check.set_defaults(func=_check)


def _list(args: argparse.Namespace) -> int:
    for name in PRESET_NAMES:
        print(f"{name:<11} {preset(name).description}")
    return 0


def _show(args: argparse.Namespace) -> int:
    print(preset_text(args.preset), end="")
    return 0


def _check(args: argparse.Namespace) -> int:
    rules = load_rules(args.file)
    play = "team play" if rules.team_play else "individual play"
    print(f"{args.file}: ok: '{rules.name}', {play}, {rules.night.sets} sets of "
          f"{len(rules.night.targets)} rounds, {len(rules.prizes.prize)} prizes")
    return 0
