"""``bunco-pi broker --dir DIR --tables N``: write the head's mosquitto setup.

Run once at install on the head table's Pi (again to add tables: existing passwords are
kept). It writes, in DIR: ``credentials.json`` (every node's password, mode 0600),
``broker/mosquitto.conf``, ``broker/passwd`` (hashes only), ``broker/acl`` and the
``broker/data`` directory for mosquitto's persistence.
"""

from __future__ import annotations

import argparse
import os
import pwd
import shlex
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.net.broker import (
    DEFAULT_EXE,
    ensure_credentials,
    find_mosquitto,
    node_users,
    write_broker_files,
)
from bunco_pi.net.topics import MAX_TABLE

DAEMON_USER = "mosquitto"  # Debian's mosquitto package creates it


def _mosquitto_exe() -> str:
    # The full path: /usr/sbin is not on an ordinary user's PATH.
    try:
        return find_mosquitto()
    except UserError:
        return DEFAULT_EXE


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "broker", help="write the mosquitto config, passwords and ACL for a night's tables",
        description="Generate (or extend) the broker setup: a random password per node, "
                    "mosquitto's password file and ACL, and its config.",
    )
    parser.add_argument("--dir", required=True, type=Path, help="where to write the files")
    parser.add_argument("--tables", required=True, type=int,
                        help=f"number of tables, 1..{MAX_TABLE}")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all)")
    parser.add_argument("--port", default=1883, type=int, help="TCP port (default 1883)")
    parser.add_argument("--autosave", default=2, type=int,
                        help="seconds between saves of the broker's state, 1..5 (default 2)")
    parser.add_argument("--owner", help="user that runs mosquitto and must read the files "
                                        f"(needs root; as root the default is {DAEMON_USER})")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.tables <= MAX_TABLE:
        raise UserError(f"--tables {args.tables}: must be 1..{MAX_TABLE}")
    if not 1 <= args.port <= 65535:
        raise UserError(f"--port {args.port}: must be 1..65535")
    if not 1 <= args.autosave <= 5:
        raise UserError(f"--autosave {args.autosave}: must be 1..5 seconds")
    # mosquitto started as root drops to a user ("mosquitto" unless the config names one),
    # who must be able to read the 0600 files: so as root they always get an owner, named in
    # the config too, and the printed command works as printed.
    owner_name = args.owner or (DAEMON_USER if os.geteuid() == 0 else None)
    owner = None
    if owner_name:
        try:
            owner = pwd.getpwnam(owner_name)
        except KeyError:
            flag = "--owner" if args.owner else f"--owner (default {DAEMON_USER} as root)"
            raise UserError(f"{flag} {owner_name}: no such user on this machine") from None
    try:
        credentials = ensure_credentials(args.dir / "credentials.json", node_users(args.tables))
        files = write_broker_files(args.dir / "broker", credentials, host=args.host,
                                   port=args.port, autosave_interval=args.autosave,
                                   run_as=owner_name)
        if owner is not None:
            for path in (files.conf, files.password_file, files.acl_file, files.data_dir):
                os.chown(path, owner.pw_uid, owner.pw_gid)
    except PermissionError as exc:
        raise UserError(f"{exc.filename}: permission denied (run as root?)") from None
    print(f"credentials: {args.dir / 'credentials.json'} ({len(credentials.passwords)} nodes, "
          f"mode 0600)")
    print(f"broker config: {files.conf}")
    print(f"start it with: {shlex.join([_mosquitto_exe(), '-c', str(files.conf)])}")
    return 0
