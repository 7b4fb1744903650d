"""A file written whole or not at all: a power cut, a full card or a crash mid-write leaves the
old file or the new one, never half of one. The night record and the camera's learned set-up
are written this way."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomically(path: Path, pieces: Iterable[str]) -> None:
    """Write ``pieces`` to a temporary file beside ``path``, fsync it, rename it over ``path``
    and fsync the folder (so the rename itself survives a power cut). On any failure the
    temporary file is removed and the error raised; ``path`` is as it was."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for piece in pieces:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
