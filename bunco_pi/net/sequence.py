"""One source's numbered items, released once and in order: de-duplication and gap-holding.

A table numbers its events 1, 2, 3 ... and resends until acknowledged, so the head sees
repeats and, after a reconnect, later seqs before earlier ones. ``place`` says where a seq
stands against the highest one already taken; ``SeqWindow`` holds what came early until the
gap fills, within bounds (count, bytes, and how far ahead), so no sender can make the head
hold more than that: what does not fit is refused, and the sender's next resend brings it back.
Pure: no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

Place = Literal["duplicate", "next", "ahead"]


def place(top: int, seq: int) -> Place:
    """``seq`` against ``top``, the highest seq taken so far (every seq up to it is taken)."""
    if seq <= top:
        return "duplicate"
    return "next" if seq == top + 1 else "ahead"


@dataclass(frozen=True, slots=True)
class Limits:
    count: int = 1000  # items held while waiting for a gap
    bytes: int = 256 * 1024  # their total size
    ahead: int = 1000  # how far past the next seq an item may be and still be held


Verdict = Literal["duplicate", "released", "held", "refused"]


@dataclass
class SeqWindow(Generic[T]):
    """The items of one source that came before an earlier seq, held until the gap fills."""

    limits: Limits = field(default_factory=Limits)
    _held: dict[int, tuple[T, int]] = field(default_factory=dict)
    _bytes: int = 0

    @property
    def held(self) -> int:
        return len(self._held)

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def offer(self, top: int, seq: int, item: T, size: int) -> tuple[Verdict, list[T]]:
        """Take ``item`` numbered ``seq`` when ``top`` is the highest seq taken so far.

        Returns the verdict and the items now next in line, in seq order (``item`` first, then
        what was held behind it): the caller takes them, so its ``top`` becomes the last one's
        seq. A refused item (too far ahead, or no room) is for the sender to send again."""
        where = place(top, seq)
        if where == "duplicate" or seq in self._held:
            self._forget_up_to(top)
            return "duplicate", []
        if where == "ahead":
            lim = self.limits
            if seq - top > lim.ahead or len(self._held) >= lim.count \
                    or self._bytes + size > lim.bytes:
                return "refused", []
            self._held[seq] = (item, size)
            self._bytes += size
            return "held", []
        released = [item]
        top = seq
        while top + 1 in self._held:
            top += 1
            released.append(self._pop(top))
        self._forget_up_to(top)
        return "released", released

    def _pop(self, seq: int) -> T:
        item, size = self._held.pop(seq)
        self._bytes -= size
        return item

    def _forget_up_to(self, top: int) -> None:
        for seq in [s for s in self._held if s <= top]:
            self._pop(seq)
