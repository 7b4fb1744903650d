"""Keeping the night record file of a standalone table up to date.

The record is the rules engine's (``bunco_pi.rules.record``), built by the standalone link
from its night fold, and written atomically by ``bunco_pi.recordfile``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bunco_pi.recordfile import write_record
from bunco_pi.table.standalone_link import StandaloneLink

if TYPE_CHECKING:
    from bunco_pi.table.node import TableNode


def record_writer(path: str | Path, link: StandaloneLink) -> Callable[[TableNode], None]:
    """A callable that rewrites ``path`` from the node's table: after a round, and at exit."""

    def write(node: TableNode) -> None:
        open_entries = node.book.state.entries if node.mode == "playing" and node.book else ()
        write_record(path, link.record(open_entries))

    return write
