"""Writing a night record to disk so a power cut never leaves half a file."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import GeneratorType
from typing import Any

from bunco_pi.atomic_file import write_atomically
from bunco_pi.errors import UserError
from bunco_pi.rules.record import FORMAT, VERSION

# Small items of a list (the log's events, the players) written in one piece: enough that the
# C encoder does the work, few enough that no more than a few hundred KB of JSON text stands in
# memory at once. A dict (a round of the night) is written on its own.
CHUNK_ITEMS = 200


def record_chunks(record: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Iterator[str]:
    """The record's JSON text in pieces; joined, exactly ``json.dumps(record,
    separators=(",", ":"))``. A list or a generator (``rules.record.record_items`` gives the
    rounds and the log as generators) is written a few items at a time, so the text of a
    500-table night (tens of MB) never stands whole in memory, nor, from the generators,
    its dicts."""
    items = record.items() if isinstance(record, Mapping) else record
    yield "{"
    for n, (key, value) in enumerate(items):
        yield ("," if n else "") + json.dumps(key) + ":"
        if isinstance(value, list | GeneratorType):
            yield "["
            chunk: list[Any] = []
            first = True
            for item in value:
                chunk.append(item)
                # A round (a dict) goes alone: 200 rounds were a whole night's rolls as
                # dicts at once, some 100 MB at 500 tables; one round is a few MB.
                if len(chunk) == CHUNK_ITEMS or isinstance(item, Mapping):
                    yield ("" if first else ",") + _dumps(chunk)[1:-1]
                    chunk, first = [], False
            if chunk:
                yield ("" if first else ",") + _dumps(chunk)[1:-1]
            yield "]"
        else:
            yield _dumps(value)
    yield "}"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def write_record(path: str | Path,
                 record: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
    """Write ``record`` (a dict, or its items as ``rules.record.record_items`` gives them) as
    JSON atomically: a temp file, fsync, then rename over ``path``."""
    path = Path(path)
    try:
        # dumps of a few items at a time, not dump: only the one-shot encoder is C; dump's
        # chunks are pure Python, 7x slower for a 100-table night's 12 MB record
        write_atomically(path, itertools.chain(record_chunks(record), ["\n"]))
    except OSError as exc:
        raise UserError(f"{path}: cannot write the night record: {exc.strerror}") from None


def read_record(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such night record") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not a JSON night record: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not a bunco-pi night record")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise UserError(f"{path}: night record version {data.get('version')!r} is newer than "
                        f"this bunco-pi reads ({VERSION}): upgrade bunco-pi")
    return data
