"""The head's config: ``/etc/bunco-pi/head.toml``, as ``install/install.sh head`` writes it.

How to use::

    from bunco_pi.head.config import load_head_config

    cfg = load_head_config("/etc/bunco-pi/head.toml")   # UserError (one line) on a mistake
    cfg.night, cfg.tables                 # "bunco-night", 4: the topic level and table count
    rules = cfg.house_rules()             # the preset or rules file, loaded and checked
    cfg.roster or cfg.players             # a roster file, or how many players to seat
    password = cfg.password()             # the "head" user's password from the credentials
    cfg.broker.host, cfg.broker.port      # where the broker listens
    cfg.event_log, cfg.record             # the night's SQLite log, the night record (JSON)
    cfg.bell_pin, cfg.buzzer_pin, cfg.buzzer_kind   # BCM GPIOs; "Buzzer" or "TonalBuzzer"
    BellBuzzer(cfg.buzzer_pin, cfg.buzzer_mode)     # buzzer_kind as "plain" or "tonal"

The file (every key shown; all but ``[night] name`` have the default shown)::

    [night]
    name = "bunco-night"     # a topic level: letters, digits, '-', '_'
    tables = 4               # tables of the night (1..500), the head's own (table 1) included
    rules = "/etc/bunco-pi/rules.toml"   # a house rules file, or a preset: classic, core, ...
    players = 16             # how many players (default 4 per table), or instead:
    # roster = "roster.txt"  # the players, one a line (UTF-8, names as rules/names.py says);
    #                        # mutually exclusive with players
    record = "/var/lib/bunco-pi/<name>.record.json"   # where the night record goes

    [broker]
    host = "127.0.0.1"       # the broker runs on the head itself
    port = 1883
    credentials = "/etc/bunco-pi/secrets/credentials.json"   # bunco_pi.net.broker's format

    [discovery]
    advertise = true         # announce the broker as _bunco-pi._tcp so tables need no address

    [bell]
    pin = 16                 # BCM GPIO of the bell button (to ground, internal pull-up)

    [buzzer]
    pin = 12                 # BCM GPIO of the buzzer
    kind = "TonalBuzzer"     # gpiozero class: "TonalBuzzer" (passive, PWM) or "Buzzer" (active)

    [data]
    dir = "/var/lib/bunco-pi"   # the night's event log lives here; finished nights in nights/

    [console]
    enabled = true           # the web console on the LAN (docs/console.md)
    port = 8080              # http://<the head's mDNS name>.local:8080/
    password = "/etc/bunco-pi/secrets/console-password"   # the host password's scrypt hash
    https = false            # the host's desk over HTTPS only (the board stays on port)
    https_port = 8443        # https://<the head's mDNS name>.local:8443/#host
    certificate = "/etc/bunco-pi/secrets/console-tls.crt"   # made at install (self-signed)
    key = "/etc/bunco-pi/secrets/console-tls.key"
    connections = 512        # open connections from everyone (cut to fit the open-file limit)
    connections_per_address = 24
    streams = 200            # live pages (event streams) from everyone
    streams_per_address = 8

    [hall]
    # Which tables sit on which Wi-Fi access point (or room): when every table of a group
    # drops off at once, the head's log and the console say "tables 41-80 offline: B?".
    # groups = { "access point A" = "1-40", "access point B" = "41-80" }

A relative path is taken from the config file's directory. Every mistake is one line that
names the file, the line and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bunco_pi.configfile import (
    DEFAULT_DATA_DIR,
    BrokerSettings,
    Section,
    broker_settings,
    place,
    read_toml,
)
from bunco_pi.errors import UserError
from bunco_pi.hardware import pinmap
from bunco_pi.head.groups import GroupError, TableGroup, parse_groups
from bunco_pi.net.topics import TopicError, check_night
from bunco_pi.rules.limits import MAX_TABLES
from bunco_pi.rules.names import BadName, clean_name, name_key

if TYPE_CHECKING:
    from bunco_pi.rules.house import HouseRules

HEAD_USER = "head"
BUZZER_KINDS = ("TonalBuzzer", "Buzzer")
DEFAULT_RULES = "classic"
SECTIONS: dict[str, tuple[str, ...]] = {
    "night": ("name", "tables", "rules", "players", "roster", "record"),
    "broker": ("host", "port", "credentials"),
    "discovery": ("advertise",),
    "bell": ("pin",),
    "buzzer": ("pin", "kind"),
    "data": ("dir",),
    "console": ("enabled", "port", "password", "https", "https_port", "certificate", "key",
                "connections", "connections_per_address", "streams", "streams_per_address"),
    "hall": ("groups",),
}
DEFAULT_CONSOLE_PORT = 8080
DEFAULT_CONSOLE_PASSWORD = "/etc/bunco-pi/secrets/console-password"
DEFAULT_CONSOLE_HTTPS_PORT = 8443
DEFAULT_CONSOLE_CERTIFICATE = "/etc/bunco-pi/secrets/console-tls.crt"
DEFAULT_CONSOLE_KEY = "/etc/bunco-pi/secrets/console-tls.key"
_MAX_GPIO = 27


@dataclass(frozen=True)
class HeadConfig:
    """Everything the head service needs to run a night; see the module docstring."""

    path: Path
    night: str
    tables: int
    rules_preset: str | None  # exactly one of rules_preset and rules_file is set
    rules_file: Path | None
    players: int | None  # exactly one of players and roster is set
    roster: Path | None
    record: Path
    broker: BrokerSettings
    advertise: bool
    bell_pin: int
    buzzer_pin: int
    buzzer_kind: Literal["TonalBuzzer", "Buzzer"]
    data_dir: Path
    console_enabled: bool = True
    console_port: int = DEFAULT_CONSOLE_PORT
    console_password: Path = Path(DEFAULT_CONSOLE_PASSWORD)
    # the HTTPS port for the host's desk, or None for plain HTTP only
    console_https_port: int | None = None
    console_certificate: Path = Path(DEFAULT_CONSOLE_CERTIFICATE)
    console_key: Path = Path(DEFAULT_CONSOLE_KEY)
    # connections, connections_per_address, streams, streams_per_address
    console_limits: tuple[int, int, int, int] = (512, 24, 200, 8)
    # [hall] groups: which tables sit on which access point, in the config's order
    groups: tuple[TableGroup, ...] = ()

    @property
    def username(self) -> str:
        """The head's node and broker user name."""
        return HEAD_USER

    @property
    def buzzer_mode(self) -> Literal["tonal", "plain"]:
        """``buzzer_kind`` as ``bunco_pi.hardware.bell.BellBuzzer`` takes it."""
        return "tonal" if self.buzzer_kind == "TonalBuzzer" else "plain"

    @property
    def event_log(self) -> Path:
        """The night's durable event log (SQLite): one file per night name."""
        return self.data_dir / f"night-{self.night}.sqlite"

    def password(self) -> str:
        """The head's broker password, from the credentials file (a one-line UserError)."""
        from bunco_pi.net.broker import load_credentials

        return load_credentials(self.broker.credentials).password(HEAD_USER)

    def house_rules(self) -> HouseRules:
        """The night's house rules: the preset, or the file loaded and checked."""
        from bunco_pi.rules.house import load_rules, preset

        if self.rules_file is not None:
            return load_rules(self.rules_file)
        assert self.rules_preset is not None
        return preset(self.rules_preset)


def load_head_config(path: str | Path) -> HeadConfig:
    """Read and check head.toml; every mistake is a one-line UserError naming file:line key."""
    path = Path(path)
    data, text = read_toml(path)
    return parse_head_config(data, text, str(path), base=path.parent)


def parse_head_config(data: dict, text: str, source: str, base: Path) -> HeadConfig:
    for name in data:
        if name not in SECTIONS:
            raise UserError(f"{place(source, text, name)}: unknown section (known: "
                            f"{', '.join(f'[{s}]' for s in SECTIONS)})")
    sec = {name: Section(data, name, source, text, keys) for name, keys in SECTIONS.items()}
    night_sec = sec["night"]
    if "name" not in night_sec.values:
        raise UserError(f"{night_sec.where()}: missing key name (the night's name)")
    night = night_sec.string("name", "")
    try:
        check_night(night)
    except TopicError as exc:
        raise night_sec.fail("name", str(exc).split(": ", 1)[1]) from None
    tables = night_sec.integer("tables", 1, 1, MAX_TABLES, "the number of tables")
    rules_preset, rules_file = _rules(night_sec, base)
    players, roster = _players(night_sec, tables, base)
    data_dir = sec["data"].path("dir", DEFAULT_DATA_DIR, base)
    record = night_sec.path("record", data_dir / f"{night}.record.json", base)
    defaults = pinmap.default_head_pins()
    bell = sec["bell"].integer("pin", defaults["bell"], 0, _MAX_GPIO, "a BCM GPIO number")
    buzzer_pin = sec["buzzer"].integer("pin", defaults["buzzer"], 0, _MAX_GPIO,
                                       "a BCM GPIO number")
    if buzzer_pin == bell:
        raise sec["buzzer"].fail("pin", f"GPIO{bell} is the bell's pin too; give each its own")
    kind = sec["buzzer"].string("kind", pinmap.BUZZER_KIND)
    if kind not in BUZZER_KINDS:
        raise sec["buzzer"].fail("kind", f"use {' or '.join(repr(k) for k in BUZZER_KINDS)} "
                                 "(gpiozero's class for a passive or an active buzzer)")
    return HeadConfig(
        path=Path(source),
        night=night,
        tables=tables,
        rules_preset=rules_preset,
        rules_file=rules_file,
        players=players,
        roster=roster,
        record=record,
        broker=broker_settings(sec["broker"], "127.0.0.1", base, discover=None),
        advertise=sec["discovery"].boolean("advertise", True),
        bell_pin=bell,
        buzzer_pin=buzzer_pin,
        buzzer_kind=kind,  # type: ignore[arg-type]
        data_dir=data_dir,
        console_enabled=sec["console"].boolean("enabled", True),
        console_port=sec["console"].integer("port", DEFAULT_CONSOLE_PORT, 1, 65535, "a TCP port"),
        console_password=sec["console"].path("password", Path(DEFAULT_CONSOLE_PASSWORD), base),
        **_console(sec["console"], base),
        groups=_groups(sec["hall"], tables),
    )


def _groups(hall: Section, tables: int) -> tuple[TableGroup, ...]:
    if "groups" not in hall.values:
        return ()
    try:
        return parse_groups(hall.values["groups"], tables)
    except GroupError as exc:
        raise UserError(f"{hall.where('groups')}: {exc}") from None


def _console(console: Section, base: Path) -> dict:
    port = console.integer("port", DEFAULT_CONSOLE_PORT, 1, 65535, "a TCP port")
    https_port = console.integer("https_port", DEFAULT_CONSOLE_HTTPS_PORT, 1, 65535, "a TCP port")
    https = console.boolean("https", False)
    if https and https_port == port:
        raise console.fail("https_port", f"port {port} is the console's plain HTTP port too")
    connections = console.integer("connections", 512, 16, 65536, "connections")
    per_address = console.integer("connections_per_address", 24, 4, connections,
                                  "connections from one address")
    streams = console.integer("streams", 200, 1, connections, "event streams")
    streams_per_address = console.integer("streams_per_address", 8, 1, min(streams, per_address),
                                          "event streams from one address")
    return {
        "console_https_port": https_port if https else None,
        "console_certificate": console.path("certificate", Path(DEFAULT_CONSOLE_CERTIFICATE),
                                            base),
        "console_key": console.path("key", Path(DEFAULT_CONSOLE_KEY), base),
        "console_limits": (connections, per_address, streams, streams_per_address),
    }


def _rules(night: Section, base: Path) -> tuple[str | None, Path | None]:
    from bunco_pi.rules.house import PRESET_NAMES

    value = night.string("rules", DEFAULT_RULES)
    if value in PRESET_NAMES:
        return value, None
    if "/" not in value and not value.endswith(".toml"):
        raise night.fail("rules", f"not a preset ({', '.join(PRESET_NAMES)}) nor a .toml file")
    path = night.path("rules", Path(DEFAULT_RULES), base)
    if not path.is_file():
        raise night.fail("rules", f"no such house rules file ({path})")
    return None, path


def _players(night: Section, tables: int, base: Path) -> tuple[int | None, Path | None]:
    if "players" in night.values and "roster" in night.values:
        raise night.fail("roster", "give either players or roster, not both")
    if "roster" in night.values:
        roster = night.path("roster", Path(), base)
        if not roster.is_file():
            raise night.fail("roster", f"no such roster file ({roster})")
        read_roster(roster)  # a bad name is said now, with its line, not at the night's start
        return None, roster
    most = 4 * tables
    return night.integer("players", most, 1, most, f"players for {tables} table(s)"), None


def read_roster(path: str | Path) -> list[str]:
    """The names of a roster file, one a line ('#' starts a comment), each by the rule of
    ``bunco_pi.rules.names``; a mistake is a one-line UserError naming the file and line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the roster: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: the roster is not UTF-8 text; save it as UTF-8") from None
    names: list[str] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0]
        if not text.strip():
            continue
        try:
            name = clean_name(text)
        except BadName as exc:
            raise UserError(f"{path} line {number}: {exc}") from None
        key = name_key(name)
        if key in first_line:
            raise UserError(f"{path} line {number}: '{name}' is on the roster twice "
                            f"(line {first_line[key]} too)")
        first_line[key] = number
        names.append(name)
    return names
