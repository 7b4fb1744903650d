"""``bunco-pi head``: run the night for every table from the head table's Pi."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import time
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.head.coordinator import Coordinator
from bunco_pi.head.eventlog import EventLog
from bunco_pi.head.service import HEAD_NAME, HeadService, HostAutomation, default_entropy, make_players
from bunco_pi.net.broker import HEAD_NEWS_USER, load_credentials
from bunco_pi.net.envelope import MAX_EVENT_BYTES
from bunco_pi.net.mqtt import MqttLink
from bunco_pi.net.topics import TopicError, Topics
from bunco_pi.rules.house import PRESET_NAMES, preset_text, resolve_rules
from bunco_pi.rules.limits import MAX_TABLES

log = logging.getLogger("bunco_pi.head")


# The head hears only table events and node statuses, none bigger than an event's envelope:
# anything bigger is dropped as paho reads it, never queued. The head declares no Maximum
# Packet Size to the broker: mosquitto 2.0.11 keeps an in-flight slot for every message it
# drops for that, and twenty of them stopped the head (docs/network.md, "Limits").
HEAD_MAX_MESSAGE = MAX_EVENT_BYTES


def _ignore(event: object) -> None:
    """The news connection's events: nothing waits for them."""


def _host_automation(args: argparse.Namespace) -> HostAutomation | None:
    if args.auto_hold is not None and not args.auto_hold > 0:
        raise UserError(f"--auto-hold {args.auto_hold:g}: must be a number of seconds above 0")
    if args.auto_host is None and args.auto_hold is None:
        return None
    return HostAutomation(float("inf") if args.auto_host is None else args.auto_host,
                          hold_after=args.auto_hold)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "head", help="coordinate the night for every table (runs on the head table's Pi)",
        description="Run the night: tables come online, players are seated, the bell starts "
                    "and ends rounds, and the prizes are settled at the end.",
    )
    p.add_argument("--config", metavar="FILE", help="the head's config (/etc/bunco-pi/head.toml); "
                   "options given here override it")
    p.add_argument("--night", help="the night's name (topic prefix; default bunco)")
    p.add_argument("--tables", type=int, help=f"how many tables (1 to {MAX_TABLES}; default 3)")
    p.add_argument("--rules", metavar="PRESET|FILE", help="house rules (default classic)")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--players", type=int, help="anonymous players (ghosts fill the rest)")
    who.add_argument("--roster", metavar="FILE", help="player names, one a line")
    p.add_argument("--broker", metavar="HOST:PORT", help="default 127.0.0.1:1883")
    p.add_argument("--credentials", metavar="FILE",
                   help="the broker passwords written at install (default "
                        "/etc/bunco-pi/secrets/credentials.json)")
    p.add_argument("--data-dir", metavar="DIR",
                   help="where the night's event log lives (default /var/lib/bunco-pi)")
    p.add_argument("--record", metavar="FILE", help="keep the night record (JSON) here")
    p.add_argument("--bell-pin", type=int, help="GPIO of the bell button (default 16)")
    p.add_argument("--buzzer-pin", type=int, help="GPIO of the buzzer (default 12)")
    p.add_argument("--buzzer", choices=("plain", "tonal"),
                   help=f"plain (active) or tonal (passive); default {_default_buzzer()}")
    p.add_argument("--no-gpio", action="store_true", help="no bell button or buzzer")
    p.add_argument("--auto-host", type=float, metavar="SECONDS",
                   help="demo: press the bell by itself after each pause of SECONDS")
    p.add_argument("--auto-hold", type=float, metavar="SECONDS",
                   help="demo: hold the bell by itself once a round has waited SECONDS for "
                        "tables that are all offline (see round.held_table)")
    p.add_argument("--exit-after-end", type=float, metavar="SECONDS",
                   help="exit SECONDS after the prizes are settled (default: keep serving)")
    p.add_argument("--advertise", action="store_true",
                   help="announce the broker by mDNS so tables find it without an address")
    p.add_argument("--console-port", type=int, metavar="PORT",
                   help="the web console's port (default 8080; head.toml [console] port)")
    p.add_argument("--console-password", metavar="FILE",
                   help="the host password's hash (default /etc/bunco-pi/secrets/console-password)")
    p.add_argument("--console-bind", metavar="ADDRESS", default="0.0.0.0",
                   help="where the console listens (default 0.0.0.0: the whole LAN)")
    p.add_argument("--no-console", action="store_true", help="do not serve the web console")
    p.add_argument("--set-host-password", metavar="FILE",
                   help="read the host password from standard input, store its hash in FILE, exit")
    p.add_argument("--seed", type=int, help="seed the seating draw and prize tie-breaks (tests)")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=run)


def _broker_address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UserError(f"--broker must be HOST:PORT, got {text!r}")
    return host, int(port)


def _check_writable(record: Path) -> None:
    """Fail now, in one line, rather than at the end of the first round."""
    folder = record.parent if str(record.parent) else Path(".")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise UserError(f"--record {record}: cannot write there ({folder} is missing or not "
                        "writable)")


def _roster(path: str) -> list[str]:
    from bunco_pi.head.config import read_roster

    return read_roster(path)


def _default_buzzer() -> str:
    """The default wiring's buzzer, as BellBuzzer names it."""
    from bunco_pi.hardware.pinmap import BUZZER_KIND

    return "tonal" if BUZZER_KIND == "TonalBuzzer" else "plain"


def _settings(args: argparse.Namespace) -> argparse.Namespace:
    """The command line over the config file over the defaults."""
    from bunco_pi.hardware.pinmap import default_head_pins

    pins = default_head_pins()
    values = {"night": "bunco", "tables": 3, "rules": "classic", "broker": "127.0.0.1:1883",
              "credentials": "/etc/bunco-pi/secrets/credentials.json",
              "data_dir": "/var/lib/bunco-pi", "bell_pin": pins["bell"],
              "buzzer_pin": pins["buzzer"], "buzzer": _default_buzzer(), "roster": None,
              "players": None, "record": None, "advertise": False,
              "console_port": 8080, "console_password": "/etc/bunco-pi/secrets/console-password",
              "no_console": False, "console_https_port": None, "console_certificate": None,
              "console_key": None, "console_limits": None, "groups": ()}
    if args.config:
        from bunco_pi.head.config import load_head_config

        cfg = load_head_config(args.config)
        values.update(
            night=cfg.night, tables=cfg.tables,
            rules=cfg.rules_preset or str(cfg.rules_file),
            broker=f"{cfg.broker.host}:{cfg.broker.port}",
            credentials=str(cfg.broker.credentials), data_dir=str(cfg.data_dir),
            bell_pin=cfg.bell_pin, buzzer_pin=cfg.buzzer_pin, buzzer=cfg.buzzer_mode,
            roster=str(cfg.roster) if cfg.roster else None, players=cfg.players,
            record=str(cfg.record), advertise=cfg.advertise,
            console_port=cfg.console_port, console_password=str(cfg.console_password),
            no_console=not cfg.console_enabled,
            console_https_port=cfg.console_https_port,
            console_certificate=str(cfg.console_certificate), console_key=str(cfg.console_key),
            console_limits=cfg.console_limits, groups=cfg.groups,
        )
    for key, value in vars(args).items():
        if key in values and value not in (None, False):
            values[key] = value
    if args.players is not None:
        values["roster"] = None
    elif args.roster is not None:
        values["players"] = None
    return argparse.Namespace(**{**vars(args), **values})


def _set_host_password(path: str) -> int:
    import getpass
    import sys

    from bunco_pi.console.auth import write_password_file

    password = getpass.getpass("Host password: ") if sys.stdin.isatty() \
        else sys.stdin.readline().rstrip("\n")
    write_password_file(path, password)
    print(f"host password hash written to {path}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.set_host_password:
        return _set_host_password(args.set_host_password)
    args = _settings(args)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s head %(levelname)s %(message)s")
    if not 1 <= args.tables <= MAX_TABLES:
        raise UserError(f"--tables must be 1 to {MAX_TABLES}, got {args.tables}")
    rules = resolve_rules(args.rules)
    rules_toml = preset_text(args.rules) if args.rules in PRESET_NAMES else \
        Path(args.rules).read_text(encoding="utf-8")
    host, port = _broker_address(args.broker)
    try:
        topics = Topics(args.night)
    except TopicError as exc:
        raise UserError(f"--night {args.night!r}: {exc}") from None
    if args.record:
        _check_writable(Path(args.record))
    names = _roster(args.roster) if args.roster else None
    try:
        players = make_players(names, args.players if args.players is not None
                               else args.tables * 4, args.tables)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    password = load_credentials(Path(args.credentials)).password(HEAD_NAME)
    data_dir = Path(args.data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{data_dir}: cannot create the data directory: {exc.strerror}") from None

    import random

    entropy = random.Random(args.seed) if args.seed is not None else default_entropy()
    coordinator = Coordinator(rules, rules_toml, args.night, args.tables, entropy=entropy)
    link = MqttLink(HEAD_NAME, host, port, username=HEAD_NAME, password=password,
                    status_topic=topics.status(HEAD_NAME), drop_larger_than=HEAD_MAX_MESSAGE)
    # The bell's connection: it publishes the state and reads nothing, so nothing the
    # tables send is read before the bell goes out (HeadService.news). It logs in as a user
    # of its own with the head's password (broker.broker_logins). What paho tells it of its
    # own messages (their PUBACKs) is not needed: dropped, not queued.
    news = MqttLink(HEAD_NEWS_USER, host, port, username=HEAD_NEWS_USER, password=password,
                    sink=_ignore)
    bell = buzzer = advertiser = None
    with EventLog(data_dir / f"night-{args.night}.sqlite") as eventlog:
        service = HeadService(coordinator, link, eventlog, topics, players,
                              record_path=args.record, news=news,
                              host=_host_automation(args), groups=tuple(args.groups))
        if not args.no_gpio:
            from bunco_pi.hardware.bell import BellButton, BellBuzzer

            bell = BellButton(args.bell_pin, link.inbox)
            buzzer = BellBuzzer(args.buzzer_pin, args.buzzer)
            service.buzz = buzzer.play
        console = None
        if not args.no_console:
            from bunco_pi.console.roster_file import roster_path
            from bunco_pi.console.run import serve_console

            console = serve_console(service, port=args.console_port,
                                    password_file=args.console_password,
                                    season_dir=data_dir / "nights", bind=args.console_bind,
                                    https_port=args.console_https_port,
                                    certificate=args.console_certificate, key=args.console_key,
                                    limits=args.console_limits,
                                    roster_file=roster_path(data_dir, args.night))
        if args.advertise:
            from bunco_pi.net.discovery import Advertiser

            advertiser = Advertiser(args.night, port).start()
        from bunco_pi.hardware.sdnotify import SystemdNotifier

        notifier = SystemdNotifier()
        stopping = False

        def on_signal(signum: int, frame: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        service.start()
        notifier.ready(f"night {args.night}: {args.tables} tables")
        log.info("head: night '%s', %d tables, rules '%s', broker %s:%d, log %s (pid %d)",
                 args.night, args.tables, rules.name, host, port, eventlog.path, os.getpid())
        if console is not None:
            console.serve()  # after the tables have their head: the web server takes a while
        ended_at: float | None = None
        last_dog = 0.0

        def stop() -> bool:
            nonlocal ended_at, last_dog
            now = time.monotonic()
            if now - last_dog > 1.0:
                notifier.watchdog()
                last_dog = now
            if coordinator.ended and args.exit_after_end is not None:
                ended_at = ended_at or now
                return now - ended_at >= args.exit_after_end
            return stopping

        try:
            service.run(stop)
        finally:
            notifier.stopping()
            service.write_record()
            news.stop()
            link.stop()
            if console is not None:
                console.stop()
            for device in (bell, buzzer, advertiser):
                if device is not None:
                    device.close()
    return 0
