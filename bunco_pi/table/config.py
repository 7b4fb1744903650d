"""A table box's config: one TOML file, every key optional.

Example (every value shown is the default)::

    [buttons]            # BCM GPIO numbers, from bunco_pi.hardware.pinmap
    point = 5
    three = 6
    bunco = 13
    pass = 19
    undo = 26
    hold_time = 0.8      # seconds held that make a hold (pass: wipeout, undo: whole turn)
    debounce = 0.03      # seconds of contact bounce ignored after each accepted edge

    [display]
    type = "ssd1306"     # ssd1306, sh1106, or "none" for a box without a screen
    address = 0x3C       # I2C address (i2cdetect -y 1 shows it)
    port = 1             # I2C bus
    rotation = 0         # 0..3, quarter turns

    [dice]
    port = ""            # serial port or pyserial URL of a dice sensor; "" = buttons only

    [camera]             # a camera over the dice tray instead of a sensor (docs/dice-camera.md)
    source = ""          # "picamera", "opencv:0" (a webcam), "folder:DIR" (photos); "" = none
    calibration = "dice-tray.json"   # from `bunco-pi dice calibrate`; "" = built-in settings
                         # (left out: this file beside the config if it is there, else built-in)
    frame_timeout = 5.0  # seconds without a frame that make the camera failed (then reopened)
    learned = "dice-learned.json"    # what the first sure rolls taught (dice colours, tray),
                         # beside the config; "" = learn anew at every start

    [table]
    number = 1
    players = ["Seat 1", "Seat 2", "Seat 3", "Seat 4"]
    night = ""           # the night's name, when the head cannot be found by zeroconf
                         # ("": learnt from the head's zeroconf announcement)
    console_url = ""     # the head table: the web console's address, shown as a QR code
                         # between rounds (install.sh writes http://<hostname>.local:8080/)

    [broker]             # where the head's broker is; the user name is table-<number>
    discover = true      # look for the head by zeroconf first (_bunco-pi._tcp)
    host = "bunco-head.local"   # used when nothing answers
    port = 1883
    credentials = "/etc/bunco-pi/secrets/credentials.json"  # {"users": {"table-N": "..."}}

    [data]
    dir = "/var/lib/bunco-pi"   # the table's journal and outbox

``install/install.sh`` writes this file (``bunco_pi.provision.table_config``); a relative path
is taken from the config file's directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bunco_pi.configfile import (
    DEFAULT_DATA_DIR,
    BrokerSettings,
    Section,
    broker_settings,
    place,
    read_toml,
)
from bunco_pi.errors import UserError
from bunco_pi.hardware.buttons import DEFAULT_DEBOUNCE, DEFAULT_HOLD_TIME
from bunco_pi.hardware.oled import DISPLAY_TYPES, DisplayConfig
from bunco_pi.hardware.pinmap import DEFAULT_I2C_ADDRESS, default_button_pins

BUTTON_ROLES = tuple(default_button_pins())
DEFAULT_HEAD_HOST = "bunco-head.local"
BROKER_KEYS = ("discover", "host", "port", "credentials")
DATA_KEYS = ("dir",)
CAMERA_KEYS = ("source", "calibration", "frame_timeout", "learned")
CAMERA_KINDS = ("picamera", "opencv", "folder")
DEFAULT_CALIBRATION = "dice-tray.json"
DEFAULT_LEARNED = "dice-learned.json"  # the same name as hardware.camera.LEARNED_FILE
DEFAULT_FRAME_TIMEOUT = 5.0
# A QR code of this many characters still fits the 64-pixel-high OLED with a module per pixel.
MAX_CONSOLE_URL = 120

# The dice camera sources a table can name (--camera, [camera] source): checked here, at
# start-up, so a typo fails before anything is opened.
SPECS = "picamera, opencv:INDEX (or opencv:VIDEO) or folder:DIR"


@dataclass(frozen=True)
class ButtonConfig:
    pins: dict[str, int] = field(default_factory=default_button_pins)
    hold_time: float = DEFAULT_HOLD_TIME
    debounce: float = DEFAULT_DEBOUNCE


@dataclass(frozen=True)
class CameraConfig:
    """The dice camera: ``source`` "" for none; ``calibration`` None for built-in settings;
    ``learned`` where what the first sure rolls taught is kept (None: not kept)."""

    source: str = ""
    calibration: Path | None = None
    frame_timeout: float = DEFAULT_FRAME_TIMEOUT
    learned: Path | None = None


@dataclass(frozen=True)
class TableConfig:
    buttons: ButtonConfig = field(default_factory=ButtonConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    dice_port: str = ""
    camera: CameraConfig = field(default_factory=CameraConfig)
    number: int = 1
    players: tuple[str, ...] = ("Seat 1", "Seat 2", "Seat 3", "Seat 4")
    broker: BrokerSettings = field(
        default_factory=lambda: BrokerSettings(host=DEFAULT_HEAD_HOST, discover=True))
    data_dir: Path = DEFAULT_DATA_DIR
    console_url: str = ""
    night: str = ""

    @property
    def node_name(self) -> str:
        """This table's node and broker user name: ``table-<number>``."""
        from bunco_pi.net.topics import table_node

        return table_node(self.number)

    def with_overrides(self, **changes: Any) -> TableConfig:
        return replace(self, **changes)


def load_config(path: str | Path | None) -> TableConfig:
    """Read a config file (None: all defaults); a mistake raises a one-line UserError."""
    if path is None:
        return TableConfig()
    path = Path(path)
    data, text = read_toml(path)
    return parse_config(data, str(path), text=text, base=path.parent)


def parse_config(data: dict[str, Any], where: str = "config", *, text: str = "",
                 base: Path | None = None) -> TableConfig:
    """Check parsed TOML; ``text`` (the file's text) lets errors name a line."""
    known = {"buttons", "display", "dice", "camera", "table", "broker", "data"}
    for key in data:
        if key not in known:
            raise UserError(f"{where}: unknown section [{key}] (known: {', '.join(sorted(known))})")
    from_file = base is not None
    base = Path.cwd() if base is None else base
    broker = Section(data, "broker", where, text, BROKER_KEYS)
    data_section = Section(data, "data", where, text, DATA_KEYS)
    dice_port = _str(data.get("dice", {}), "port", "", f"{where} [dice]")
    camera = _camera(Section(data, "camera", where, text, CAMERA_KEYS), base, from_file)
    if dice_port and camera.source:
        raise UserError(f"{place(where, text, 'camera', 'source')}: a table reads its dice with "
                        f"a serial sensor ([dice] port = {dice_port!r}) or a camera, not both; "
                        "set one of them to \"\"")
    return TableConfig(
        buttons=_buttons(data.get("buttons", {}), where),
        display=_display(data.get("display", {}), where),
        dice_port=dice_port,
        camera=camera,
        broker=broker_settings(broker, DEFAULT_HEAD_HOST, base, discover=True),
        data_dir=data_section.path("dir", DEFAULT_DATA_DIR, base),
        **_table(data.get("table", {}), where),
    )


def _camera(section: Section, base: Path, from_file: bool = True) -> CameraConfig:
    source = section.string("source", "", empty=True).strip()
    if source:
        check_camera_source(source, f"{section.where('source')} = {source!r}")
        kind, _, folder = source.partition(":")
        if kind == "folder" and not Path(folder).is_absolute():
            source = f"folder:{base / folder}"
    calibration: Path | None = None
    if "calibration" in section.values:
        if section.string("calibration", "", empty=True).strip():
            calibration = section.path("calibration", Path(DEFAULT_CALIBRATION), base)
    else:
        # The file `bunco-pi dice calibrate` writes, beside the config, if it is there.
        beside = base / DEFAULT_CALIBRATION
        calibration = beside if beside.is_file() else None
    timeout = section.values.get("frame_timeout", DEFAULT_FRAME_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0.5 <= timeout <= 60:
        raise section.fail("frame_timeout", "must be a number of seconds 0.5..60")
    # Kept beside the config file; settings read from no file keep it in memory only.
    learned: Path | None = base / DEFAULT_LEARNED if from_file else None
    if "learned" in section.values and not section.string("learned", "", empty=True).strip():
        learned = None
    elif "learned" in section.values:
        learned = section.path("learned", Path(DEFAULT_LEARNED), base)
    return CameraConfig(source=source, calibration=calibration, frame_timeout=float(timeout),
                        learned=learned)


def check_camera_source(source: str, where: str) -> None:
    """A one-line UserError at ``where`` unless ``source`` names a kind of camera."""
    kind, sep, rest = source.partition(":")
    if kind == "picamera" and not sep or kind in ("opencv", "folder") and rest:
        return
    raise UserError(f"{where}: expected {SPECS}")


def _buttons(section: dict[str, Any], where: str) -> ButtonConfig:
    place = f"{where} [buttons]"
    pins = default_button_pins()
    for key, value in section.items():
        if key in ("hold_time", "debounce"):
            continue
        if key not in pins:
            raise UserError(
                f"{place}: unknown button {key!r} (buttons: {', '.join(BUTTON_ROLES)})"
            )
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 27:
            raise UserError(f"{place}: {key} = {value!r} is not a BCM GPIO number 0..27")
        pins[key] = value
    seen: dict[int, str] = {}
    for role, pin in pins.items():
        if pin in seen:
            raise UserError(
                f"{place}: GPIO{pin} is used by both {seen[pin]!r} and {role!r}; "
                "give each button its own pin"
            )
        seen[pin] = role
    hold = _number(section, "hold_time", DEFAULT_HOLD_TIME, place, low=0.2, high=5.0)
    debounce = _number(section, "debounce", DEFAULT_DEBOUNCE, place, low=0.0, high=0.2)
    return ButtonConfig(pins=pins, hold_time=hold, debounce=debounce)


def _display(section: dict[str, Any], where: str) -> DisplayConfig:
    place = f"{where} [display]"
    kind = _str(section, "type", "ssd1306", place).lower()
    if kind not in DISPLAY_TYPES:
        raise UserError(
            f"{place}: unknown display type {kind!r}; use one of {', '.join(DISPLAY_TYPES)}"
        )
    address = section.get("address", DEFAULT_I2C_ADDRESS)
    if isinstance(address, str):
        try:
            address = int(address, 0)
        except ValueError:
            raise UserError(f"{place}: address {address!r} is not a number like 0x3C") from None
    if not isinstance(address, int) or not 0x03 <= address <= 0x77:
        raise UserError(f"{place}: address {address!r} is not an I2C address 0x03..0x77")
    rotation = section.get("rotation", 0)
    if rotation not in (0, 1, 2, 3):
        raise UserError(f"{place}: rotation {rotation!r} must be 0, 1, 2 or 3 (quarter turns)")
    port = section.get("port", 1)
    if not isinstance(port, int) or port < 0:
        raise UserError(f"{place}: port {port!r} must be an I2C bus number such as 1")
    return DisplayConfig(kind=kind, address=address, rotation=rotation, port=port)


def _table(section: dict[str, Any], where: str) -> dict[str, Any]:
    place = f"{where} [table]"
    out: dict[str, Any] = {}
    if "number" in section:
        number = section["number"]
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 999:
            raise UserError(f"{place}: number {number!r} must be 1 (head) to 999")
        out["number"] = number
    if "players" in section:
        players = section["players"]
        if (
            not isinstance(players, list)
            or not 1 <= len(players) <= 4
            or not all(isinstance(p, str) and p.strip() for p in players)
        ):
            raise UserError(f"{place}: players must be a list of 1 to 4 names, seat 1 first "
                            "(a standalone table fills empty seats with ghosts)")
        from bunco_pi.rules.names import BadName, check_names

        try:
            names = tuple(check_names(players))
        except BadName as exc:
            raise UserError(f"{place}: players {exc}") from None
        out["players"] = names
    if "night" in section:
        from bunco_pi.net.topics import TopicError, check_night

        night = section["night"]
        try:
            out["night"] = check_night(night) if night != "" else ""
        except (TopicError, TypeError):
            raise UserError(f"{place}: night {night!r} is not a night's name (letters, digits, "
                            "- and _, as the head's --night)") from None
    if "console_url" in section:
        url = section["console_url"]
        if not isinstance(url, str) or url and (
                not url.startswith(("http://", "https://")) or len(url) > MAX_CONSOLE_URL
                or any(c.isspace() for c in url)):
            raise UserError(f"{place}: console_url {url!r} must be a web address like "
                            f"http://bunco-head.local:8080/ (at most {MAX_CONSOLE_URL} "
                            "characters: it is drawn as a QR code), or \"\" for none")
        out["console_url"] = url
    return out


def _str(section: dict[str, Any], key: str, default: str, place: str) -> str:
    value = section.get(key, default)
    if not isinstance(value, str):
        raise UserError(f"{place}: {key} must be a string")
    return value


def _number(
    section: dict[str, Any], key: str, default: float, place: str, low: float, high: float
) -> float:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise UserError(f"{place}: {key} = {value!r} must be a number of seconds {low}..{high}")
    return float(value)
