"""Keep a text file showing the table's OLED, for a parent process that shows many tables.

After each new frame the file is rewritten with the frame's block-character drawing
(``blocks.to_blocks``: 64 columns x 32 lines). It is written beside its place and renamed over
it, so a reader never sees half a frame. An unchanged frame is not written again.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from bunco_pi.table.blocks import to_blocks


class FrameFile:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.writes = 0
        self._last: bytes | None = None

    def __call__(self, image: Any) -> None:
        data = image.tobytes()
        if data == self._last:
            return
        text = "\n".join(to_blocks(image)) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._last = data
        self.writes += 1
