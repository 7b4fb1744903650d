"""The MQTT topic map of one night: every topic lives under ``bunco/<night>/``.

========================  ===============  ===  ========  ===============================
topic                     direction        QoS  retained  what
========================  ===============  ===  ========  ===============================
``state``                 head -> all      1    yes       phase, set, round, target, bell
``seating/<page>``        head -> all      1    yes       who sits where, 25 tables a page,
                                                          with their players' names
``rules``                 head -> all      1    yes       the house rules (TOML text)
``control``               head -> tables   1    no        reserved
``standings``             head -> all      1    yes       score cards so far
``table/<n>/events``      table n -> head  1    no        the table's events, (n, seq)
``table/<n>/ack``         head -> table n  1    yes       highest committed seq of n
``table/<n>/view``        head -> table n  1    yes       what table n must show
``table/<n>/command``     head -> table n  1    no        the host's commands (undo)
``node/<name>/status``    node -> all      1    yes       birth online / will offline
========================  ===============  ===  ========  ===============================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ROOT = "bunco"
MAX_TABLE = 999

TopicKind = Literal["state", "seating", "rules", "control", "standings", "events",
                    "ack", "view", "command", "status"]
NIGHT_KINDS: tuple[TopicKind, ...] = ("state", "rules", "control", "standings")
MAX_PAGE = 99  # pages of the seating (``protocol.SEATING_PAGE_TABLES`` tables each)
TABLE_KINDS: tuple[TopicKind, ...] = ("events", "ack", "view", "command")

# ``bunco-pi doctor`` times the broker's round trip on a topic of its own, outside ROOT: no
# night can be named into it, so no head ever listens there, and the doctor's user may write
# it without being able to put a byte in a head's way.
DOCTOR_ECHO_ROOT = "bunco-doctor"


def doctor_echo(user: str) -> str:
    """The one topic a doctor user ``user`` writes (and reads back): its echo."""
    return f"{DOCTOR_ECHO_ROOT}/{check_node(user)}/echo"


# A night name is one topic level a person can type: no wildcards, no separators, no spaces.
_NIGHT_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
# Node names double as broker user names ("head", "table-3"): the ACL substitutes them.
_NODE_RE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_TABLE_RE = re.compile(r"^[1-9][0-9]{0,2}$")
_PAGE_RE = re.compile(r"^[1-9][0-9]?$")


class TopicError(ValueError):
    """A topic that is not part of the map; the message is one line naming the topic."""


def check_night(night: str) -> str:
    if not _NIGHT_RE.match(night):
        raise TopicError(
            f"night name {night!r}: use 1-40 letters, digits, '-' or '_' (it is a topic level)"
        )
    return night


def check_node(name: str) -> str:
    if not _NODE_RE.match(name):
        raise TopicError(
            f"node name {name!r}: use a lowercase letter then up to 31 of a-z, 0-9, '-'"
        )
    return name


def check_table(table: int) -> int:
    if isinstance(table, bool) or not isinstance(table, int) or not 1 <= table <= MAX_TABLE:
        raise TopicError(f"table number {table!r}: must be an integer 1..{MAX_TABLE}")
    return table


def table_node(table: int) -> str:
    """The node (and broker user) name of a table: ``table-3``."""
    return f"table-{check_table(table)}"


@dataclass(frozen=True)
class TopicRef:
    """A parsed topic: which night, what kind, and for whom."""

    night: str
    kind: TopicKind
    table: int | None = None
    node: str | None = None
    page: int | None = None


@dataclass(frozen=True)
class Topics:
    """Builds the topics of one night; ``Topics("2026-11-28").events(3)``."""

    night: str

    def __post_init__(self) -> None:
        check_night(self.night)

    @property
    def prefix(self) -> str:
        return f"{ROOT}/{self.night}"

    def state(self) -> str:
        return f"{self.prefix}/state"

    def seating(self, page: int) -> str:
        """One page of the seating (``protocol.seating_page`` says which holds a table)."""
        if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= MAX_PAGE:
            raise TopicError(f"seating page {page!r}: must be an integer 1..{MAX_PAGE}")
        return f"{self.prefix}/seating/{page}"

    def part(self, name: str) -> str:
        """The topic of a part of the state, by its name in ``protocol.split_state``:
        ``rules`` or ``seating/<page>``."""
        kind, _, page = name.partition("/")
        if kind == "seating" and page.isdigit():
            return self.seating(int(page))
        if kind == "rules" and not page:
            return self.rules()
        raise TopicError(f"no part of the state is called {name!r}")

    def rules(self) -> str:
        return f"{self.prefix}/rules"

    def control(self) -> str:
        return f"{self.prefix}/control"

    def standings(self) -> str:
        return f"{self.prefix}/standings"

    def events(self, table: int) -> str:
        return f"{self.prefix}/table/{check_table(table)}/events"

    def ack(self, table: int) -> str:
        return f"{self.prefix}/table/{check_table(table)}/ack"

    def view(self, table: int) -> str:
        return f"{self.prefix}/table/{check_table(table)}/view"

    def command(self, table: int) -> str:
        return f"{self.prefix}/table/{check_table(table)}/command"

    def status(self, node: str) -> str:
        return f"{self.prefix}/node/{check_node(node)}/status"

    # Subscription patterns (MQTT wildcards).
    def all_events(self) -> str:
        return f"{self.prefix}/table/+/events"

    def all_status(self) -> str:
        return f"{self.prefix}/node/+/status"

    def everything(self) -> str:
        return f"{self.prefix}/#"


def parse_topic(topic: str) -> TopicRef:
    """Map a topic back to what it is; raise :class:`TopicError` (one line) if it is not ours."""
    parts = topic.split("/")
    if len(parts) < 3 or parts[0] != ROOT:
        raise TopicError(f"topic {topic!r}: not under {ROOT}/<night>/")
    night = parts[1]
    if not _NIGHT_RE.match(night):
        raise TopicError(f"topic {topic!r}: bad night name {night!r}")
    rest = parts[2:]
    if len(rest) == 1 and rest[0] in NIGHT_KINDS:
        return TopicRef(night, rest[0])  # type: ignore[arg-type]
    if len(rest) == 2 and rest[0] == "seating":
        if not _PAGE_RE.match(rest[1]):
            raise TopicError(f"topic {topic!r}: bad seating page {rest[1]!r}")
        return TopicRef(night, "seating", page=int(rest[1]))
    if len(rest) == 3 and rest[0] == "table" and rest[2] in TABLE_KINDS:
        if not _TABLE_RE.match(rest[1]):
            raise TopicError(f"topic {topic!r}: bad table number {rest[1]!r}")
        return TopicRef(night, rest[2], table=int(rest[1]))  # type: ignore[arg-type]
    if len(rest) == 3 and rest[0] == "node" and rest[2] == "status":
        if not _NODE_RE.match(rest[1]):
            raise TopicError(f"topic {topic!r}: bad node name {rest[1]!r}")
        return TopicRef(night, "status", node=rest[1])
    raise TopicError(f"topic {topic!r}: unknown topic under {ROOT}/{night}/")
