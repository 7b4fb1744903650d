"""The messages between table boxes and the head table: their JSON form and validation.

Transport-neutral: the same payloads travel over MQTT or the in-process link. A reader
ignores keys it does not know, so a newer sender can add keys without breaking an older one.

- a table event (table -> head, QoS 1): one entry made at a table, in the envelope of
  ``bunco_pi.net.envelope`` with the table's own ``seq`` (1, 2, 3 ... kept across reboots in
  its outbox); its payload is ``{"round": round_index, "entry": encode_entry(entry)}``, tagged
  with the round it belongs to, so an entry replayed late never lands in the wrong round.
  ``TableEvent`` is the decoded event the head's coordinator takes.
- the night state and each table's view (head -> tables, retained): ``bunco_pi.head.views``
  (a view's ``twos_travel``, added for boxes that fold no house rules, such as the Pico table
  box: a held "three" is three 2s that take the traveler in this round; its ``ghost_seats``
  and the state's ``fold``, the house rules such a box folds its round's play with while the
  head cannot hear it, ``head.views.fold_rules``; older boxes ignore them);
  the seating (in pages of ``SEATING_PAGE_TABLES`` tables, each with the players seated there)
  and the rules travel on their own retained topics and change only when they change, so the
  state (which carries the bell) stays small; their layout is ``PARTS_VERSION``. Each carries the head's
  ``NightPosition``: a box applies only what is not older than what it holds.
- a command (head -> one table, QoS 1, not retained): ``UndoCommand``.
- acks (head -> one table, retained): ``bunco_pi.net.delivery``; an ack may carry the latest
  of the table's entries the head refused (optional ``refused``).
- a heartbeat (table -> head, QoS 0, not retained, on the box's own ``node/<name>/status``
  every ``HEARTBEAT_S``): what the box's outbox holds. ``Heartbeat``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bunco_pi.rules import entries
from bunco_pi.rules.table_round import Entry

PROTOCOL_VERSION = 1


class ProtocolError(ValueError):
    """A payload that is not a valid message; the text says what is wrong."""


# --- table entries: the one codec is the rules' own (bunco_pi.rules.entries) ------------------


def encode_entry(entry: Entry) -> list[Any]:
    try:
        return entries.encode_entry(entry)
    except entries.EntryFormatError as exc:
        raise ProtocolError(str(exc)) from None


def decode_entry(item: Any) -> Entry:
    try:
        return entries.decode_entry(item)
    except entries.EntryFormatError as exc:
        raise ProtocolError(str(exc)) from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- messages --------------------------------------------------------------------------------


def check_version(payload: dict[str, Any]) -> None:
    """A head message carries ``"v"``; a version this box does not speak is refused."""
    v = payload.get("v", PROTOCOL_VERSION)
    if v != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol version {v!r}, this box speaks {PROTOCOL_VERSION}")


@dataclass(frozen=True, slots=True)
class TableEvent:
    """One entry made at a table (table -> head, on ``table/<n>/events``)."""

    table: int
    seq: int
    round_index: int
    entry: Entry


def table_event_payload(round_index: int, entry: Entry, **extra: Any) -> dict[str, Any]:
    """The payload a table sends for one entry; ``extra`` keys (``sensor_seq``, ``command``)
    are the table's own bookkeeping, ignored by the head."""
    return {"round": round_index, "entry": encode_entry(entry), **extra}


def read_table_event(table: int, seq: int, payload: dict[str, Any]) -> TableEvent:
    """A table event's payload, checked and decoded once; ProtocolError says what is wrong."""
    round_index = payload.get("round")
    if not _is_int(round_index) or round_index < 0:
        raise ProtocolError(f"'round' must be a whole number >= 0, got {round_index!r}")
    if "entry" not in payload:
        raise ProtocolError("no 'entry'")
    return TableEvent(table, seq, round_index, decode_entry(payload["entry"]))


@dataclass(frozen=True, slots=True)
class UndoCommand:
    """The host asks a table box to enter an Undo, as its own undo button does (head -> table
    n, on ``table/<n>/command``, QoS 1). ``id`` grows through the night (the head's log
    position of the request): the box keeps the id with the Undo it enters, so a redelivered
    command is applied once. ``round_index`` is the round it is meant for: in another round
    it does nothing."""

    id: int
    round_index: int


def command_payload(command: UndoCommand) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "command": "undo", "id": command.id,
            "round": command.round_index}


def read_command(payload: dict[str, Any]) -> UndoCommand:
    check_version(payload)
    kind, cid, round_index = payload.get("command"), payload.get("id"), payload.get("round")
    if kind != "undo":
        raise ProtocolError(f"unknown command {kind!r}")
    if not _is_int(cid) or cid < 1:
        raise ProtocolError(f"a command's 'id' is a whole number >= 1, got {cid!r}")
    if not _is_int(round_index) or round_index < 0:
        raise ProtocolError(f"'round' must be a whole number >= 0, got {round_index!r}")
    return UndoCommand(cid, round_index)


# --- a table box's heartbeat ---------------------------------------------------------------

HEARTBEAT_VERSION = 1
HEARTBEAT_S = 2.0  # how often a connected box says it


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A table box's word, every ``HEARTBEAT_S`` while it is connected: what its outbox holds.

    It travels on the box's own status topic, QoS 0 and not retained (the retained birth and
    will stay as they are), so it reaches the head even when the head's QoS 1 intake is stuck:
    the head then sees entries waiting that it never got, and connects again
    (``bunco_pi.head.intake_watch``). ``{"status": "online", "heartbeat": 1}`` is a heartbeat;
    every other field is optional (a box that cannot say it leaves it out, and a reader takes a
    malformed one as absent), and a reader ignores fields it does not know, so a newer box may
    add some under the same version.
    """

    version: int
    holds: int | None = None  # the highest seq in the outbox
    acked: int | None = None  # the highest seq the head has acknowledged
    waiting: float | None = None  # seconds its unacknowledged entries have waited for an ack

    @property
    def unacknowledged(self) -> int:
        if self.holds is None or self.acked is None:
            return 0
        return max(0, self.holds - self.acked)


def heartbeat_payload(holds: int, acked: int, waiting: float) -> dict[str, Any]:
    return {"status": "online", "heartbeat": HEARTBEAT_VERSION, "holds": holds,
            "acked": acked, "waiting": round(waiting, 1)}


def read_heartbeat(payload: dict[str, Any]) -> Heartbeat | None:
    """The heartbeat in a status payload, or None if it is a plain status (birth or will)."""
    version = payload.get("heartbeat")
    if not _is_int(version) or version < 1:
        return None
    holds, acked, waiting = payload.get("holds"), payload.get("acked"), payload.get("waiting")
    return Heartbeat(
        version,
        holds if _is_int(holds) and holds >= 0 else None,
        acked if _is_int(acked) and acked >= 0 else None,
        float(waiting) if isinstance(waiting, int | float) and not isinstance(waiting, bool)
        and 0 <= waiting < 1e9 else None,
    )


# --- the night state and its parts --------------------------------------------------------

# The parts of the night state that change only now and then travel on retained topics of
# their own, so the state, which carries the bell, stays a few hundred bytes however many
# tables play: the rules (``rules``, the TOML text) and the seating, in pages of
# ``SEATING_PAGE_TABLES`` tables (``seating/<page>``), each with the players seated there.
# A box subscribes to its own table's page only: at 500 tables the whole roster (2,000 names)
# would not fit in one message, and every box would take every name at every round.
PARTS_VERSION = 2  # 1: one ``roster`` (every player) and one ``seating`` (every table)
SEATING_PAGE_TABLES = 25
# What each part puts back into the whole state (``merge_state``).
STATE_PARTS: dict[str, tuple[str, ...]] = {
    "seating": ("seating", "players", "seating_first"),
    "rules": ("rules_toml",),
}


def seating_page(table: int) -> int:
    """The page of the seating that holds table ``table``: 1 for tables 1 to 25, and so on."""
    return (table - 1) // SEATING_PAGE_TABLES + 1


def _seating_pages(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    seating, players = state.pop("seating"), state.pop("players")
    by_id = {p["id"]: p for p in players}
    pages: dict[str, dict[str, Any]] = {}
    for start in range(0, max(len(seating), 1), SEATING_PAGE_TABLES):
        chunk = seating[start:start + SEATING_PAGE_TABLES]
        seated = [by_id[pid] for seats in chunk for pid in seats if pid in by_id]
        page = start // SEATING_PAGE_TABLES + 1
        pages[f"seating/{page}"] = {"v": state.get("v", PROTOCOL_VERSION), "page": page,
                                    "seating_first": start + 1, "seating": chunk,
                                    "players": seated}
    return pages


def split_state(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The small state and its parts, each a message of its own, keyed by the topic it goes
    on under the night (``rules``, ``seating/1``, ``seating/2`` ...). A table's box holds
    the rules and its own seating page, and ``merge_state`` puts its whole state together."""
    core = dict(state)
    parts: dict[str, dict[str, Any]] = {}
    if "seating" in core and "players" in core:
        parts.update(_seating_pages(core))
    if "rules_toml" in core:
        parts["rules"] = {"v": state.get("v", PROTOCOL_VERSION),
                          "rules_toml": core.pop("rules_toml")}
    if parts:
        core["parts_v"] = PARTS_VERSION
    return core, parts


def part_kind(name: str) -> str:
    """``seating`` for ``seating/3``: the part a topic's page belongs to."""
    return name.split("/", 1)[0]


def merge_state(core: dict[str, Any], parts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The whole state again, from the small one and the parts a box holds (``parts`` keyed
    by kind: ``{"rules": ..., "seating": its own page}``). The seating then covers the tables
    of that page, from ``seating_first``: ``seats_at`` reads a table's seats from it."""
    merged = dict(core)
    for part, keys in STATE_PARTS.items():
        for key in keys:
            if key not in merged and key in parts.get(part, {}):
                merged[key] = parts[part][key]
    return merged


def seats_at(state: dict[str, Any], table: int) -> list[str] | None:
    """Table ``table``'s seats in a whole state (its page's, or all of a version 1 state's),
    or None when the state does not hold them."""
    seating = state.get("seating")
    first = state.get("seating_first", 1)
    if not isinstance(seating, list) or not _is_int(first):
        return None
    at = table - first
    if not 0 <= at < len(seating) or not isinstance(seating[at], list):
        return None
    return seating[at]


def parts_named(state: dict[str, Any]) -> dict[str, int]:
    """The log position of each part a small state goes with (``{}`` for a whole state)."""
    refs = state.get("parts")
    if not isinstance(refs, dict):
        return {}
    return {p: pos for p, pos in refs.items() if p in STATE_PARTS and _is_int(pos)}


def parts_version_problem(state: dict[str, Any]) -> str | None:
    """A one-line reason when a small state's parts are not the ones this box reads."""
    if not isinstance(state.get("parts"), dict):
        return None
    version = state.get("parts_v", 1)
    if version != PARTS_VERSION:
        return (f"the head's state comes in parts version {version!r}, this box reads "
                f"{PARTS_VERSION}: update the head and the boxes to the same bunco-pi")
    return None


# --- the night's position: nothing moves a box backwards -------------------------------------


@dataclass(frozen=True, slots=True)
class NightPosition:
    """Where in the night a head-to-table message was said: the head's event log (``epoch``,
    a name made when the log was created) and the log position then (``pos``, which only
    grows, across head restarts too). Everything the head publishes is a function of its log
    up to ``pos``, so a message with a lower ``pos`` is older, whatever the broker retained,
    restored from its last autosave or redelivered from a session queue."""

    epoch: str
    pos: int

    def stamp(self, message: dict[str, Any]) -> dict[str, Any]:
        return {**message, "epoch": self.epoch, "pos": self.pos}


def position_of(message: dict[str, Any]) -> NightPosition | None:
    """The position a head message carries, or None if it carries none (or a malformed one)."""
    epoch, pos = message.get("epoch"), message.get("pos")
    if isinstance(epoch, str) and _is_int(pos) and pos >= 0:
        return NightPosition(epoch, pos)
    return None


def is_older(held: NightPosition | None, incoming: NightPosition | None) -> bool:
    """Whether a message at ``incoming`` is older than what a box holds at ``held``: it must
    then be ignored. The same position is not older (the head says it again on reconnect). A
    new epoch is the head's log started afresh, so it is followed; a message without a
    position is only taken by a box that holds none."""
    if held is None:
        return False
    if incoming is None:
        return True
    return incoming.epoch == held.epoch and incoming.pos < held.pos
