"""The JSON bodies the console takes, read under a time limit and checked field by field.

Nothing the host or a stranger sends reaches the night before it has the exact shape its action
expects: an object with exactly the known keys, each of its own JSON type (``"here": "false"``
is a string, so it is refused, never taken as true), nested no deeper than the shape needs. A
body nested thousands deep is a clean 400, not a 500 with the parser's RecursionError.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from bunco_pi.rules.limits import MAX_TABLES

# Deeper than any body we take (the roster: object > list > object), shallow enough that the
# parser never recurses far.
MAX_DEPTH = 4
MAX_PASSWORD = 1024
MAX_ROSTER = 4 * MAX_TABLES  # four seats at each table a night may have
MAX_TEXT = 200  # a player's id or name here; the name rule itself is the night's business


class BadBody(Exception):
    """A request body refused; ``status`` is the HTTP status to answer with."""

    def __init__(self, text: str, status: int = 400) -> None:
        super().__init__(text)
        self.status = status


def depth(raw: bytes) -> int:
    """How deeply the JSON text ``raw`` nests arrays and objects (brackets in strings do not
    count), without parsing it."""
    deepest = level = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            level += 1
            deepest = max(deepest, level)
        elif byte in (0x5D, 0x7D):  # ] }
            level -= 1
    return deepest


async def read_json(request: web.Request, timeout: float) -> Any:
    """The request's JSON body (None if it has none), or BadBody."""
    if not request.can_read_body:
        return None
    try:
        raw = await asyncio.wait_for(request.read(), timeout)
    except TimeoutError:
        raise BadBody(f"the request body did not arrive within {timeout:g} s", 408) from None
    if not raw.strip():
        return None
    if depth(raw) > MAX_DEPTH:
        raise BadBody(f"the request body nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise BadBody("the request body is not JSON") from None


def _object(body: Any, keys: dict[str, type | tuple[type, ...]], required: tuple[str, ...],
            what: str) -> dict[str, Any]:
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise BadBody(f"{what}: send a JSON object")
    unknown = sorted(set(body) - set(keys))
    if unknown:
        raise BadBody(f"{what}: unknown field {unknown[0]!r} (known: {', '.join(keys) or 'none'})")
    for key in required:
        if key not in body:
            raise BadBody(f"{what}: missing field {key!r}")
    for key, value in body.items():
        kinds = keys[key] if isinstance(keys[key], tuple) else (keys[key],)
        # JSON true/false are Python bools, which are ints too: an int field takes no bool
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join(_JSON_NAMES[k] for k in kinds)
            raise BadBody(f"{what}: field {key!r} must be {names}, not {_json_name(value)}")
    return body


_JSON_NAMES = {str: "a string", bool: "true or false", int: "a whole number", list: "a list",
               dict: "an object"}


def _json_name(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in ((bool, "true or false"), (str, "a string"), (int, "a whole number"),
                       (float, "a number"), (list, "a list"), (dict, "an object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _text(body: dict[str, Any], key: str, what: str, most: int) -> None:
    if key in body and len(body[key]) > most:
        raise BadBody(f"{what}: field {key!r} is longer than {most} characters")


def login_body(body: Any) -> str:
    """The password of ``{"password": "..."}``."""
    fields = _object(body, {"password": str}, ("password",), "log-in")
    _text(fields, "password", "log-in", MAX_PASSWORD)
    return fields["password"]


# What each host action takes; an action missing here takes nothing (an empty object or no body).
HOST_FIELDS: dict[str, tuple[dict[str, type | tuple[type, ...]], tuple[str, ...]]] = {
    "roster": ({"roster": list}, ("roster",)),
    "arrive": ({"player": str, "name": str}, ("player", "name")),
    "leave": ({"player": str}, ("player",)),
    "undo": ({"table": int}, ("table",)),
}


def host_body(action: str, body: Any) -> dict[str, Any]:
    """``body`` checked for the host action ``action`` (whose name is known to exist)."""
    keys, required = HOST_FIELDS.get(action, ({}, ()))
    what = f"host action '{action}'"
    fields = _object(body, keys, required, what)
    for key in ("player", "name"):
        _text(fields, key, what, MAX_TEXT)
    if action == "roster":
        entries = fields["roster"]
        if len(entries) > MAX_ROSTER:
            raise BadBody(f"{what}: at most {MAX_ROSTER} names")
        fields["roster"] = [_object(entry, {"name": str, "here": bool}, ("name",),
                                    f"{what}, line {n}")
                            for n, entry in enumerate(entries, start=1)]
        for n, entry in enumerate(fields["roster"], start=1):
            _text(entry, "name", f"{what}, line {n}", MAX_TEXT)
    return fields
