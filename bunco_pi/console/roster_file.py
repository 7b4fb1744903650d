"""The roster the host types into the console before the night, kept on disk.

Until the first round the roster lives only on the console (the night's event log starts with
the seating draw), so a head restarted before then would forget who checked in. The file is
written whole beside the night's event log (a temporary file fsynced and renamed over it), so
a power cut leaves the old roster or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("bunco_pi.console")


def roster_path(data_dir: str | Path, night: str) -> Path:
    return Path(data_dir) / f"night-{night}.roster.json"


def save_roster(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Write ``rows`` ({"name", "here"} each) to ``path``, whole or not at all."""
    text = json.dumps({"roster": [{"name": r["name"], "here": bool(r["here"])} for r in rows]},
                      indent=1, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def load_roster(path: Path) -> list[dict[str, Any]] | None:
    """The kept roster, or None when there is none; a damaged file is logged and ignored (the
    host types the roster again), never a reason for the head not to start."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("%s: cannot read the kept roster (%s); the host types it again", path, exc)
        return None
    rows = doc.get("roster") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(
            isinstance(r, dict) and isinstance(r.get("name"), str) and r["name"].strip()
            for r in rows):
        log.warning("%s: not a roster file; the host types the roster again", path)
        return None
    return [{"name": r["name"].strip(), "here": bool(r.get("here", True))} for r in rows]
