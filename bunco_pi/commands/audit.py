"""``bunco-pi audit RECORD.json``: check any night record against its house rules."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError
from bunco_pi.recordfile import read_record
from bunco_pi.rules.audit import Verdict, audit_record
from bunco_pi.rules.house import PRESET_NAMES, HouseRules, preset, resolve_rules


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit", help="check a night record against its house rules",
        description="Check a night record (from the head, a standalone table, sim or demo) "
                    "against its house rules, independently of the engine that wrote it. "
                    "Prints each problem on one line; exits 0 when the record is clean, 1 "
                    "with problems, 2 when the file cannot be read.",
    )
    parser.add_argument("record", metavar="RECORD.json", help="the night record")
    parser.add_argument("--rules", metavar="PRESET|FILE",
                        help="check against these house rules instead of the record's own")
    parser.add_argument("--json", action="store_true",
                        help="print the verdict as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        record = _read(args.record)
        rules = resolve_rules(args.rules) if args.rules else rules_of(record, args.record)
    except UserError as exc:
        if args.json:
            print(json.dumps({"record": args.record, "error": str(exc)}))
        raise
    verdict = Verdict(args.record, rules.name, tuple(audit_record(record, rules)))
    if args.json:
        print(json.dumps(verdict.as_json()))
    else:
        sys.stdout.write(verdict.text())
    return 0 if verdict.clean else 1


_PARTS = (("players", list), ("first_seating", list), ("rounds", list), ("log", list),
          ("cards", dict))


def _read(path: str) -> dict[str, Any]:
    try:
        record = read_record(path)
    except IsADirectoryError:
        raise UserError(f"{path}: is a folder, not a night record") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a JSON night record (not UTF-8 text)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the night record: {exc.strerror}") from None
    for key, kind in _PARTS:
        if not isinstance(record.get(key), kind):
            raise UserError(f"{path}: not a whole night record: '{key}' is missing or not a "
                            f"{'list' if kind is list else 'table'}")
    return record


def rules_of(record: dict[str, Any], path: str) -> HouseRules:
    """The house rules a record names: a preset by its name. A night played under a house
    rules file names only the file's rules, so that file must be given with --rules."""
    name = record.get("rules")
    if name in PRESET_NAMES:
        return preset(name)
    raise UserError(f"{Path(path).name}: played under house rules '{name}', which are not a "
                    "preset: give their file with --rules FILE")
