"""``bunco-pi sim``: a whole night with virtual players and seeded dice, no hardware."""

from __future__ import annotations

import argparse
import sys

from bunco_pi.errors import UserError
from bunco_pi.recordfile import write_record
from bunco_pi.rules.audit import audit_record
from bunco_pi.rules.house import resolve_rules, with_timed_rounds
from bunco_pi.rules.limits import MAX_TABLES
from bunco_pi.rules.record import build_record
from bunco_pi.sim.players import DEFAULT_PLAYERS, simulate_night
from bunco_pi.sim.report import render_report


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sim", help="simulate a whole night with virtual players (no hardware)",
        description="Play an entire night with seeded virtual dice through the rules engine, "
                    "then print the standings and the prizes.",
    )
    parser.add_argument("--rules", default="classic", metavar="PRESET|FILE",
                        help="a preset (classic, core, rotate, individual) or a TOML file")
    parser.add_argument("--players", type=int, default=DEFAULT_PLAYERS,
                        help=f"players (ghosts fill the last table; default {DEFAULT_PLAYERS})")
    parser.add_argument("--seed", type=int, default=1, help="seed for the virtual dice")
    parser.add_argument("--record", metavar="FILE", help="write the night record (JSON) here")
    parser.add_argument("--check", action="store_true",
                        help="audit the night against the rules and fail on any disagreement")
    timed = parser.add_argument_group(
        "timed rounds", "play the rules with a charity night's timed rounds (a preset plays its "
        "text exactly, so its rounds are untimed unless you time them here or in a file)")
    timed.add_argument("--minutes", type=float, metavar="M",
                       help="each round lasts M minutes (round.minutes)")
    timed.add_argument("--ends-by", choices=("time", "time-or-goal"), default="time",
                       help="the time alone ends a round, or the head table's goal if it comes "
                            "first (default: time)")
    timed.add_argument("--at-horn", choices=("finish-roll", "stop"), default="finish-roll",
                       help="at the horn the roll in hand finishes, or play stops at once")
    timed.add_argument("--move-seconds", type=int, default=120, metavar="S",
                       help="the move break between rounds (default 120)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = resolve_rules(args.rules)
    if args.minutes is not None:
        rules = with_timed_rounds(rules, args.minutes, ends_by=args.ends_by,
                                  at_horn=args.at_horn,
                                  warn_seconds=min(30, max(0, int(args.minutes * 60) - 1)),
                                  move_seconds=args.move_seconds)
    if not 1 <= args.players <= MAX_TABLES * 4:
        raise UserError(f"--players must be 1 to {MAX_TABLES * 4} ({MAX_TABLES} tables of 4), "
                        f"got {args.players}")
    result = simulate_night(rules, args.players, args.seed)
    print(render_report(result.night))
    record = build_record(result.night, result.log, seed=args.seed, source="sim")
    if args.record:
        write_record(args.record, record)
        print(f"\nNight record written to {args.record}")
    if args.check:
        problems = audit_record(record, rules)
        for problem in problems:
            print(f"audit: {problem}", file=sys.stderr)
        if problems:
            return 1
        print("Audit: the record agrees with the rules.")
    return 0
