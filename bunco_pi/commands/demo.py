"""``bunco-pi demo``: a whole networked Bunco night on this machine, no hardware.

A private mosquitto on a free loopback port, the head and every table as separate processes
(the very ``bunco-pi head`` and ``bunco-pi table`` a real night runs, on gpiozero's mock pins),
virtual scorekeepers pressing the tables' virtual buttons, and every table's OLED drawn live
in this terminal. Without mosquitto it plays the same night in this process over an
in-process link, and says so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bunco_pi.commands.demo_view import compact_screen, fits_oled, oled_screen
from bunco_pi.errors import UserError
from bunco_pi.rules.house import resolve_rules
from bunco_pi.rules.limits import MAX_TABLES
from bunco_pi.sim.short_night import SHORT_ROUNDS

HIDE, SHOW, HOME, CLEAR = "\x1b[?25l", "\x1b[?25h", "\x1b[H", "\x1b[2J"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="a whole networked night on this machine: broker, head, tables, screens",
        description="Play a whole Bunco night with a real broker, the head and every table as "
                    "separate processes, virtual scorekeepers pressing virtual buttons, and the "
                    "tables' screens drawn live.",
    )
    p.add_argument("--tables", type=int, default=3, help=f"tables (1 to {MAX_TABLES}; default 3)")
    p.add_argument("--rules", default="classic", metavar="PRESET|FILE")
    p.add_argument("--players", type=int, help="real players (default: 4 a table)")
    p.add_argument("--fast", action="store_true", help="full speed: no pauses for people")
    p.add_argument("--full", action="store_true",
                   help=f"the whole night (20+ minutes at human pace); by default a short night "
                        f"of {SHORT_ROUNDS} rounds, 2-3 minutes")
    p.add_argument("--record", metavar="FILE", help="write the night record here")
    p.add_argument("--seed", type=int, default=1, help="seed of the virtual dice")
    p.add_argument("--console-port", type=int, default=8080,
                   help="serve the head's web console here (default 8080; 0: none)")
    p.add_argument("--workdir", metavar="DIR", help="keep the broker, logs and outboxes here")
    p.add_argument("--no-screens", action="store_true",
                   help="print the night's progress as lines instead of drawing the screens")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.tables <= MAX_TABLES:
        raise UserError(f"--tables must be 1 to {MAX_TABLES}, got {args.tables}")
    players = args.players if args.players is not None else args.tables * 4
    if not 1 <= players <= args.tables * 4:
        raise UserError(f"--players must be 1 to {args.tables * 4} for {args.tables} tables")
    rules = resolve_rules(args.rules)  # fail here, once, rather than in every process
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="bunco-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if not args.full:
        args.rules, rules = _short_night(args.rules, workdir)
    record = Path(args.record) if args.record else workdir / "night.json"
    from bunco_pi.net.broker import Broker

    try:
        broker = Broker(workdir / "broker", tables=args.tables, readers=["viewer"])
        broker.start()
    except UserError as exc:
        print(f"bunco-pi demo: {exc}; playing the night inside this one process over an "
              "in-process link instead", file=sys.stderr)
        from bunco_pi.sim.inprocess_night import play_inprocess

        return play_inprocess(args, rules, record, players, workdir, _pace(args))
    try:
        return _play(args, broker, workdir, record, players, rules)
    finally:
        broker.stop()


def _pace(args: argparse.Namespace) -> str:
    """The virtual scorekeepers' pace: the short night's are brisk, to end in 2-3 minutes."""
    if args.fast:
        return "fast"
    return "human" if args.full else "brisk"


def _short_night(rules_name: str, workdir: Path) -> tuple[str, Any]:
    """The rules file of the short night the demo plays by default, and its rules."""
    from bunco_pi.rules.house import PRESET_NAMES, parse_rules, preset_text
    from bunco_pi.sim.short_night import short_night_rules

    text = preset_text(rules_name) if rules_name in PRESET_NAMES else \
        Path(rules_name).read_text(encoding="utf-8")
    short = workdir / "short-night.toml"
    short.write_text(short_night_rules(text, source=rules_name), encoding="utf-8")
    print(f"A short night: {SHORT_ROUNDS} rounds of {rules_name} rules "
          "(bunco-pi demo --full plays the whole night)", file=sys.stderr)
    return str(short), parse_rules(short.read_text(encoding="utf-8"), str(short))


def _play(args: argparse.Namespace, broker: Any, workdir: Path, record: Path, players: int,
          rules: Any) -> int:
    night = "demo"
    # gpiozero's mock pins, PWM-capable so the head's tonal buzzer plays as on a Pi
    env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock", GPIOZERO_MOCK_PIN_CLASS="mockpwmpin",
               PYTHONUNBUFFERED="1")
    common = ["--broker", f"{broker.host}:{broker.port}",
              "--credentials", str(broker.workdir / "credentials.json")]
    pause = "0" if args.fast else "2.5"
    logs = workdir / "logs"
    logs.mkdir(exist_ok=True)
    procs: list[subprocess.Popen] = []
    names: dict[int, str] = {}

    def spawn(name: str, argv: list[str]) -> subprocess.Popen:
        out = (logs / f"{name}.log").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "bunco_pi.cli", *argv], env=env,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        procs.append(proc)
        names[proc.pid] = name
        return proc

    from bunco_pi.sim.players import make_players

    roster = workdir / "roster.txt"
    roster.write_text("".join(f"{p.name}\n" for p in make_players(players) if not p.ghost))
    head = spawn("head", ["head", "--night", night, "--tables", str(args.tables),
                          "--rules", args.rules, "--roster", str(roster), *common,
                          "--data-dir", str(workdir), "--record", str(record),
                          "--auto-host", pause, "--exit-after-end", "2", "--seed",
                          str(args.seed),
                          *(["--console-port", str(args.console_port), "--console-bind",
                             "127.0.0.1", "--console-password", str(workdir / "no-host-password")]
                            if args.console_port else ["--no-console"])])
    console_url = f"http://127.0.0.1:{args.console_port}/" if args.console_port else None
    if console_url:
        print(f"Watch the night in a browser: {console_url}", flush=True)
    frames = [workdir / f"table-{n}.frame" for n in range(1, args.tables + 1)]
    for n in range(1, args.tables + 1):
        spawn(f"table-{n}", ["table", "--table", str(n), "--night", night, *common,
                             "--data-dir", str(workdir / f"table-{n}"), "--simulate",
                             "--seed", str(args.seed * 1000 + n),
                             "--pace", _pace(args),
                             "--frame-file", str(frames[n - 1])])
    viewer = Viewer(broker, night, frames, screens=not args.no_screens and sys.stdout.isatty(),
                    team_play=rules.team_play, console_url=console_url)
    interrupted = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    viewer.start()
    try:
        while head.poll() is None and not interrupted:
            viewer.refresh()
            dead = [p for p in procs if p.poll() not in (None, 0)]
            if dead:
                name = names[dead[0].pid]
                print(f"\nbunco-pi demo: {name} stopped with code {dead[0].returncode}; "
                      f"see {logs / (name + '.log')}", file=sys.stderr)
                return 1
            time.sleep(0.2 if viewer.screens else 0.5)
    finally:
        viewer.stop()
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    if interrupted:
        print(f"Stopped. The night so far is in {record}; logs in {logs}")
        return 130
    if head.returncode:
        tail = (logs / "head.log").read_text(errors="replace").strip().splitlines()[-1:]
        print(f"bunco-pi demo: the head stopped with code {head.returncode}: "
              f"{tail[0] if tail else ''} (log: {logs / 'head.log'})", file=sys.stderr)
        return 1
    from bunco_pi.sim.report import final_report

    return final_report(record, rules, logs)


class Viewer:
    """Follows the night's state on the broker and draws every table's screen."""

    def __init__(self, broker: Any, night: str, frames: list[Path], screens: bool,
                 team_play: bool = True, console_url: str | None = None) -> None:
        from bunco_pi.net.mqtt import MqttLink
        from bunco_pi.net.topics import Topics

        self.topics = Topics(night)
        self.frames = frames
        self.screens = screens
        self.team_play = team_play
        self.console_url = console_url  # kept on screen: the first print scrolls away
        self.layout: tuple[bool, int, int] | None = None
        self.state: dict[str, Any] = {}
        self.views: dict[int, dict[str, Any]] = {}
        self.offline: set[str] = set()
        self.last_line = ""
        self.link = MqttLink("viewer", broker.host, broker.port, username="viewer",
                             password=broker.credentials.password("viewer"),
                             client_id=f"demo-viewer-{os.getpid()}", session_expiry=0)
        self.link.subscribe(self.topics.everything())

    def start(self) -> None:
        self.link.start()
        if self.screens:
            print(HIDE + CLEAR, end="", flush=True)

    def stop(self) -> None:
        self.link.stop()
        if self.screens:
            print(SHOW, end="", flush=True)

    def _drain(self) -> None:
        import queue

        from bunco_pi.net import envelope
        from bunco_pi.net.link import Message
        from bunco_pi.net.topics import TopicError, parse_topic

        while True:
            try:
                item = self.link.inbox.get_nowait()
            except queue.Empty:
                return
            if not isinstance(item, Message):
                continue
            try:
                ref = parse_topic(item.topic)
            except TopicError:
                continue
            env = envelope.try_decode(item.topic, item.payload)
            if env is None:
                continue
            if ref.kind == "state":
                self.state = env.payload
            elif ref.kind == "view" and ref.table:
                self.views[ref.table] = env.payload
            elif ref.kind == "status" and ref.node:
                if env.payload.get("status") == "online":
                    self.offline.discard(ref.node)
                else:
                    self.offline.add(ref.node)

    def headline(self) -> str:
        s = self.state
        phase = s.get("phase", "starting")
        if phase in ("lobby", "starting"):
            return f"Lobby: {len(s.get('online', []))} of {s.get('tables', '?')} tables online"
        bell = "  *** BELL: the round is over, rollers finish their turns ***" if s.get("bell") \
            and phase in ("playing", "finishing") else ""
        where = f"Set {s.get('set')} round {s.get('round')}, target {s.get('target')}"
        return f"{where}: {phase}{bell}"

    def notes(self) -> list[str]:
        """Lines under the headline: how to watch in a browser, who is offline."""
        notes = []
        if self.console_url:
            notes.append(f"Watch it in a browser: {self.console_url}")
        if self.offline:
            notes.append(f"offline: {', '.join(sorted(self.offline))}")
        return notes

    def refresh(self) -> None:
        self._drain()
        line = self.headline()
        if not self.screens:
            if line != self.last_line:
                print(line, flush=True)
                self.last_line = line
            return
        width, height = shutil.get_terminal_size((80, 24))
        headline, notes = f"bunco-pi demo  {line}", self.notes()
        layout = fits_oled(len(self.frames), width, height, reserved=1 + len(notes))
        clear = CLEAR if (layout, width, height) != self.layout else ""
        self.layout = (layout, width, height)
        if layout:
            out = oled_screen(headline, [_read_frame(path) for path in self.frames], width,
                              notes)
        else:
            # a view holds the table's own part; the night's phase is the state's
            phase = self.state.get("phase", "starting")
            views = {n: {"phase": phase, **view} for n, view in self.views.items()}
            out = compact_screen(headline, views, len(self.frames), width, height, notes,
                                 team_play=self.team_play)
        # Every line padded to the width and no newline after the last: nothing scrolls.
        print(clear + HOME + "\n".join(out), end="", flush=True)


def _read_frame(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ["(starting...)"]
