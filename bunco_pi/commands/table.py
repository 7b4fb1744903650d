"""``bunco-pi table``: run a table's scoreboard box (buttons, OLED, dice sensor).

``--standalone`` plays rounds at this one table, which is its own head table; ``--broker``
joins a night run by ``bunco-pi head``; ``--emulate`` runs the box in the terminal with mock
pins and a drawn OLED; ``--simulate`` lets a virtual scorekeeper press the (mock) buttons.
See docs/table-box.md.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import random
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NamedTuple

from bunco_pi.errors import UserError

DEFAULT_JOURNAL = Path("~/.local/state/bunco-pi/table-journal.db")
DEFAULT_DATA_DIR = Path("~/.local/state/bunco-pi")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "table",
        help="run a table's scoreboard box",
        description="Run a table's scoreboard box: tally buttons, OLED and dice sensor.",
    )
    parser.add_argument("--config", type=Path, help="table config TOML (default: built-in)")
    parser.add_argument("--standalone", action="store_true",
                        help="play at this one table, which is its own head table")
    parser.add_argument("--emulate", action="store_true",
                        help="no hardware: keys for buttons, the OLED drawn in the terminal")
    parser.add_argument("--rules", default="classic", metavar="PRESET|FILE",
                        help="house rules: a preset name or a TOML file (default: classic; "
                             "with --broker the table plays the rules the head publishes)")
    parser.add_argument("--dice-port", metavar="URL",
                        help="dice sensor serial port or pyserial URL (overrides [dice] port; "
                             "\"\" for none)")
    parser.add_argument("--camera", metavar="SOURCE",
                        help="read the dice with a camera: picamera, opencv:INDEX or folder:DIR "
                             "(overrides [camera] source; \"\" for none)")
    parser.add_argument("--camera-calibration", type=Path, metavar="FILE",
                        help="the tray's settings from `bunco-pi dice calibrate` (overrides "
                             "[camera] calibration)")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="keep FILE updated with the night record after every round")
    parser.add_argument("--journal", type=Path, metavar="FILE",
                        help="SQLite journal of every entry, for resuming after a power cut "
                             f"(default: {DEFAULT_JOURNAL}; in-memory with --emulate)")
    parser.add_argument("--new-night", action="store_true",
                        help="set the journal of the last night aside and start a new night")
    net = parser.add_argument_group("a table of a night run by `bunco-pi head`")
    net.add_argument("--broker", metavar="HOST:PORT",
                     help="the head's MQTT broker; joins the night instead of --standalone")
    net.add_argument("--table", type=int, metavar="N",
                     help="this table's number (overrides [table] number of the config)")
    net.add_argument("--credentials", type=Path, metavar="FILE",
                     help='broker credentials JSON ({"users": {"table-N": password}})')
    net.add_argument("--night", metavar="NAME", help="the night's name, as the head runs it")
    net.add_argument("--data-dir", type=Path, metavar="DIR",
                     help=f"where the night's outbox is kept (default: {DEFAULT_DATA_DIR})")
    net.add_argument("--frame-file", type=Path, metavar="PATH",
                     help="after each new OLED frame, write its block-character drawing to PATH")
    net.add_argument("--console-url", metavar="URL",
                     help="the head table: show the head's web console as a QR code between "
                          "rounds (e.g. http://bunco-head.local:8080/; default: [table] "
                          "console_url of the config)")
    sim = parser.add_argument_group("a virtual scorekeeper (demos)")
    sim.add_argument("--simulate", action="store_true",
                     help="seeded virtual dice, and a virtual scorekeeper pressing mock buttons")
    sim.add_argument("--seed", type=int, help="seed of the virtual dice (default: random)")
    sim.add_argument("--pace", choices=("fast", "brisk", "human"), default="human",
                     help="human: a roll every 0.6-1.2 s; brisk: 0.3-0.6 s; fast: as fast as the box "
                          "takes presses")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bunco_pi.hardware.oled import DisplayConfig, open_device
    from bunco_pi.rules.limits import MAX_TABLES
    from bunco_pi.table.config import load_config

    if args.standalone and args.broker:
        raise UserError("--standalone and --broker: a table is its own head or joins one, "
                        "not both")
    if args.emulate and not args.standalone and not args.broker and args.config is None:
        # An emulated box with no head to join can only play alone: do that, and say so.
        print("bunco-pi table: no --broker or --config, so the emulated box plays alone "
              "(as with --standalone)", file=sys.stderr)
        args.standalone = True
    if not args.standalone and not args.broker and args.config is None:
        raise UserError("give --broker HOST:PORT (with --night and --credentials) to join a "
                        "night run by `bunco-pi head`, or --config FILE with a [broker] "
                        "section, or --standalone to play alone")
    networked = not args.standalone
    if networked:
        for flag, given in (("--record", args.record), ("--journal", args.journal),
                            ("--new-night", args.new_night)):
            if given:
                raise UserError(f"{flag} is for --standalone; at a night run by a head, the "
                                "head keeps the record and the table its outbox (--data-dir)")
    config = load_config(args.config)
    if args.table is not None:
        if not 1 <= args.table <= MAX_TABLES:
            raise UserError(f"--table {args.table}: a table number is 1 to {MAX_TABLES}")
        config = config.with_overrides(number=args.table)
    _one_dice_reader(args, config)
    plan = _find_head_offline(args, config) if networked else None
    pin_factory = reopen = None
    if args.emulate or args.simulate:
        from gpiozero.pins.mock import MockFactory

        pin_factory = MockFactory()
        device = open_device(DisplayConfig(kind="dummy"))
    else:
        device = open_device(config.display)
        reopen = functools.partial(open_device, config.display)  # when it drops off the bus
    on_frame = None
    if args.frame_file is not None:
        from bunco_pi.table.frame_file import FrameFile

        on_frame = FrameFile(args.frame_file)
    _show_starting(config, device, on_frame)
    # The screen says the box is starting: now the game and its links, the larger imports.
    from bunco_pi.rules.house import resolve_rules
    from bunco_pi.table.box import TableBox

    write = None
    if networked:
        rules = resolve_rules("classic")  # until the head's rules arrive with the first round
        link: Any = _net_link(args, config, plan)
        journal = ":memory:"  # the outbox is this table's durable store
    else:
        rules = resolve_rules(args.rules)
        journal = _journal_path(args)
        # The seed settles prize tie-breaks at the end of the night; the rules take it as
        # given, and the journal keeps it so a restart settles them the same way.
        seed = random.SystemRandom().randrange(2**31)
        if journal != ":memory:":
            from bunco_pi.table.journal import Journal

            stored = Journal(journal)
            seed = stored.night_seed(seed)
            stored.close()
        from bunco_pi.table.standalone_link import StandaloneLink

        link = StandaloneLink(rules, config.players, table=config.number, seed=seed)
        if args.record:
            from bunco_pi.table.recorder import record_writer

            write = record_writer(args.record, link)
    box = TableBox(config, rules, link, journal, device=device, reopen=reopen,
                   pin_factory=pin_factory,
                   dice_port=args.dice_port, on_round_over=write, on_frame=on_frame,
                   camera=args.camera, camera_calibration=args.camera_calibration)
    if args.console_url or config.console_url:
        box.node.console_url = args.console_url or config.console_url
    keeper = None
    if args.simulate:
        from bunco_pi.table.simulated_scorekeeper import SimulatedScorekeeper

        keeper = SimulatedScorekeeper(pin_factory, config.buttons.pins,
                                      debounce=config.buttons.debounce,
                                      hold_time=config.buttons.hold_time, seed=args.seed,
                                      pace=args.pace)
        box.node.watchers.append(keeper.observe)
    stop = threading.Event()
    _on_signals(stop)
    box.start()
    if keeper is not None:
        keeper.start()
    try:
        if args.emulate:
            from bunco_pi.table import emulator

            keypad = emulator.KeyPad(pin_factory, config.buttons.pins,
                                     config.buttons.hold_time, box.node.post)
            emulator.run(box, keypad, stop=stop)
        else:
            how = f"in night {link.topics.night} via {link.where}" if networked else "standalone"
            print(f"bunco-pi table {config.number}: running {how}; Ctrl-C to stop",
                  file=sys.stderr, flush=True)
            from bunco_pi.hardware.sdnotify import SystemdNotifier

            notifier = SystemdNotifier()
            notifier.ready(f"table {config.number}: {how}")
            while not stop.wait(1.0):
                # a hung node thread stops the pings, and systemd restarts the box
                if box.node.alive and box.node.sync(timeout=2.0):
                    notifier.watchdog()
            notifier.stopping()
    except KeyboardInterrupt:
        pass
    finally:
        if keeper is not None:
            keeper.stop()
        box.stop()
        if write is not None:
            write(box.node)
    return 0


def _show_starting(config: Any, device: Any | None, on_frame: Any | None) -> None:
    """The box's first screen, drawn from its config alone before the game is loaded: its
    seats, and "starting..." where the game's screen will say what to do."""
    from bunco_pi.table import screens

    frame = screens.render(screens.WaitingView(config.number, config.players, "starting..."))
    if device is not None:
        # a display that does not take it is reported once the game draws
        with contextlib.suppress(OSError):
            device.display(frame)
    if on_frame is not None:
        try:
            on_frame(frame)
        except OSError as exc:
            raise UserError(f"--frame-file {on_frame.path}: cannot write it ({exc})") from None


def _one_dice_reader(args: argparse.Namespace, config: Any) -> None:
    """A table reads its dice with a serial sensor or a camera: both is a one-line error
    naming where each came from (a flag, or the config)."""
    port, port_from = ((args.dice_port, "--dice-port") if args.dice_port is not None
                       else (config.dice_port, f"{args.config} [dice] port"))
    camera, camera_from = ((args.camera, "--camera") if args.camera is not None
                           else (config.camera.source, f"{args.config} [camera] source"))
    if port and camera:
        raise UserError(f"{port_from} {port!r} and {camera_from} {camera!r}: a table reads its "
                        "dice with a serial sensor or a camera, not both (give --dice-port \"\" "
                        "or --camera \"\" to leave one out)")


class NetPlan(NamedTuple):
    """Where a networked box finds its head, and what it needs to join the night."""

    host: str
    port: int
    night: str
    topics: Any
    password: str


def _find_head_offline(args: argparse.Namespace, config: Any) -> NetPlan | None:
    """The head's broker and night where finding them needs no network (--broker, or a
    config that does not discover), with the flags and the credentials checked: done before the
    display is touched, so a mistake in them is the one line the user sees. None: zeroconf
    must look."""
    if args.credentials is None and args.config is None:
        raise UserError("--broker needs --credentials FILE (this table's broker password)")
    if args.broker:
        if not args.night:
            raise UserError("--broker needs --night NAME (the night the head runs)")
        (host, port), night = parse_broker(args.broker), args.night
    elif not config.broker.discover:
        host, port = config.broker.host, config.broker.port
        night = args.night or config.night or _night_beside(args.config)
        if not night:
            raise UserError(f"no head advertises its night on this network, and none is given: "
                            f"add --night NAME (the broker is {host}:{port}, from the config)")
    else:
        return None
    return _plan(args, config, host, port, night)


def _night_beside(config_path: Path | None) -> str | None:
    """On the head's Pi its own table box (which does not discover: the head is beside it)
    runs the night that head.toml beside its table.toml names, as its unit gives no --night."""
    if config_path is None:
        return None
    head = Path(config_path).with_name("head.toml")
    if not head.is_file():
        return None
    import tomllib

    try:  # only the name: the rest of head.toml is the head's to check
        night = tomllib.loads(head.read_text(encoding="utf-8")).get("night", {}).get("name")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return None
    return night if isinstance(night, str) and night else None


def _plan(args: argparse.Namespace, config: Any, host: str, port: int, night: str) -> NetPlan:
    return NetPlan(host, port, night, _topics(night), _password(args, config))


def _topics(night: str) -> Any:
    from bunco_pi.net.topics import TopicError, Topics

    try:
        return Topics(night)
    except TopicError as exc:
        raise UserError(f"--night: {exc}") from None


def _password(args: argparse.Namespace, config: Any) -> str:
    from bunco_pi.net.credentials import load_credentials

    credentials = args.credentials if args.credentials is not None else config.broker.credentials
    return load_credentials(Path(credentials)).password(config.node_name)


def _check_outbox(args: argparse.Namespace, config: Any, night: str) -> Path:
    """The table's outbox for ``night``: a data directory that cannot hold it fails here, in
    one line."""
    from bunco_pi.table.outbox import Outbox

    if args.data_dir is not None:
        data_dir = args.data_dir.expanduser()
    else:
        data_dir = config.data_dir if args.config is not None else DEFAULT_DATA_DIR.expanduser()
    outbox = data_dir / f"outbox-{night}-table-{config.number}.sqlite"
    Outbox(outbox).close()
    return outbox


def _net_link(args: argparse.Namespace, config: Any, plan: NetPlan | None) -> Any:
    """The link to the head: --broker, --night, --credentials, --data-dir, or else the config's
    [broker] and [data] (the head found by zeroconf when ``discover`` is on and ``plan``, what
    was found without the network, is None)."""
    from bunco_pi.table.net_link import NetTableLink

    if plan is None:
        from bunco_pi.net.discovery import find_head

        found = find_head(config.broker.host, config.broker.port,
                          discover=config.broker.discover, night=args.night or config.night or None)
        if not found.night:
            raise UserError(f"no head advertises its night on this network, and none is given: "
                            f"add --night NAME (the broker is {found.host}:{found.port}, from "
                            "the config)")
        plan = _plan(args, config, found.host, found.port, found.night)
    name, host, port, topics, password = (config.node_name, plan.host, plan.port, plan.topics,
                                          plan.password)

    def connect(sink: Any) -> Any:
        # On the node's thread, once the box shows what it holds: the MQTT client (paho and
        # ssl) is the largest import of a box, and the screen need not wait for it.
        from bunco_pi.net.mqtt import MqttLink

        return MqttLink(name, host, port, username=name, password=password,
                        status_topic=topics.status(name), sink=sink)

    outbox = _check_outbox(args, config, plan.night)
    link = NetTableLink(connect, topics, config.number, outbox)
    link.where = f"{host}:{port}"
    return link


def parse_broker(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``HOST``, port 1883) -> (host, port); a one-line UserError otherwise."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = text, "1883"
    if not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise UserError(f"--broker {text!r}: give HOST:PORT, e.g. 192.168.1.10:1883")
    return host, int(port_text)


def _journal_path(args: argparse.Namespace) -> str:
    if args.journal is not None:
        path = args.journal
    elif args.emulate:
        return ":memory:"
    else:
        path = DEFAULT_JOURNAL.expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--journal {path}: cannot create {path.parent} ({exc.strerror})") from None
    if args.new_night and path.exists():
        _set_aside(path)
    return os.fspath(path)


def _set_aside(path: Path) -> Path:
    """Rename the journal (and its WAL files) to the first free ``<name>.<n>.old``."""
    for n in range(1, 10_000):
        target = path.with_name(f"{path.name}.{n}.old")
        if not target.exists():
            break
    else:
        raise UserError(f"{path}: too many old journals beside it; delete some")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    path.rename(target)
    return target


def _on_signals(stop: threading.Event) -> None:
    """SIGTERM (systemd stop) ends the table like Ctrl-C: record written, journal closed."""
    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: object) -> None:
        # Once is enough: a second signal must not cut the final record write short.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
