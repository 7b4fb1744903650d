"""What the boxes' TOML config files share: reading one, naming a key's line, the [broker].

``/etc/bunco-pi/table.toml`` (``bunco_pi.table.config``) and ``head.toml``
(``bunco_pi.head.config``) are both written by the installer (``bunco_pi.provision``) and read
here; a mistake is one line naming the file, the line and the key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bunco_pi.errors import UserError

DEFAULT_PORT = 1883
DEFAULT_CREDENTIALS = Path("/etc/bunco-pi/secrets/credentials.json")
DEFAULT_DATA_DIR = Path("/var/lib/bunco-pi")


def read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """The parsed file and its text; a missing or broken file is a one-line UserError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the config ({exc})") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None


def find_line(text: str, section: str, key: str | None = None) -> int:
    """The 1-based line of ``key`` in ``[section]`` (of the section header without a key), or 0."""
    current = None
    header = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            current = line.strip("[]").strip()
            if current == section and not header:
                header = number
            continue
        if (key is not None and current == section and "=" in line
                and line.split("=", 1)[0].strip().strip('"') == key):
            return number
    return header


def place(source: str, text: str, section: str, key: str | None = None) -> str:
    """``file:line [section] key``: where a message points the reader."""
    line = find_line(text, section, key)
    return (f"{source}:{line}" if line else source) + f" [{section}]" + (f" {key}" if key else "")


@dataclass(frozen=True)
class BrokerSettings:
    """Where a node finds the broker and its password (a credentials file as written by
    ``bunco_pi.net.broker``: ``{"users": {name: password}}``, mode 0600 or 0640)."""

    host: str
    port: int = DEFAULT_PORT
    credentials: Path = DEFAULT_CREDENTIALS
    discover: bool = False  # tables: look for the head by zeroconf first


class Section:
    """One ``[section]`` of a config, checked key by key with one-line errors."""

    def __init__(self, data: dict[str, Any], name: str, source: str, text: str,
                 known: tuple[str, ...] | None = None) -> None:
        value = data.get(name, {})
        self.name, self.source, self.text = name, source, text
        if not isinstance(value, dict):
            raise UserError(f"{self.where()}: must be a section [{name}], not a value")
        self.values: dict[str, Any] = value
        if known is not None:
            for key in value:
                if key not in known:
                    raise UserError(f"{self.where(key)}: unknown key (known: {', '.join(known)})")

    def where(self, key: str | None = None) -> str:
        return place(self.source, self.text, self.name, key)

    def fail(self, key: str, message: str) -> UserError:
        return UserError(f"{self.where(key)} = {self.values.get(key)!r}: {message}")

    def string(self, key: str, default: str, *, empty: bool = False) -> str:
        value = self.values.get(key, default)
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise self.fail(key, "must be a non-empty string" if not empty else "must be a string")
        return value

    def integer(self, key: str, default: int, low: int, high: int, what: str) -> int:
        value = self.values.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(key, f"{what} must be a whole number {low}..{high}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.values.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "must be true or false")
        return value

    def path(self, key: str, default: Path, base: Path) -> Path:
        """A path; a relative one is taken from the config file's own directory."""
        value = Path(self.string(key, str(default)))
        return value if value.is_absolute() else base / value


def broker_settings(section: Section, default_host: str, base: Path,
                    discover: bool | None) -> BrokerSettings:
    """The [broker] section; ``discover=None`` means the node has no such key (the head)."""
    host = section.string("host", default_host)
    if any(c.isspace() for c in host) or "/" in host:
        raise section.fail("host", "not a host name or IP address")
    return BrokerSettings(
        host=host,
        port=section.integer("port", DEFAULT_PORT, 1, 65535, "a TCP port"),
        credentials=section.path("credentials", DEFAULT_CREDENTIALS, base),
        discover=False if discover is None else section.boolean("discover", discover),
    )
