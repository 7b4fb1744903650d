"""Writing the night record file safely: never a half-written file, even on power loss.

The text goes to a temporary file in the same directory, is fsynced, and replaces the old
file in one ``os.replace``; the directory is fsynced too so the rename itself survives.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from bunco_pi.errors import UserError


def write_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the record here ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    with contextlib.suppress(OSError):  # some filesystems cannot open a directory
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
