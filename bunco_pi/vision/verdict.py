"""Whether a reading is a roll the table may score, or why not (a short line for the OLED)."""

from __future__ import annotations

from dataclasses import dataclass

from bunco_pi.vision.reading import FrameReading


@dataclass(frozen=True)
class SettledRoll:
    faces: tuple[int, ...]  # one per die, 1..6, in reading order (top of the tray first)
    confidence: float
    seq: int = 0  # numbered by the camera source, like the serial sensor's ROLL seq


@dataclass(frozen=True)
class Unsure:
    reason: str  # at most 21 characters: one line of a 128x64 OLED in the default font


def judge(
    reading: FrameReading, dice: int = 3, min_confidence: float = 0.5
) -> SettledRoll | Unsure:
    """A roll only if exactly ``dice`` dice are read, each sure enough; never a best guess."""
    seen = len(reading.dice)
    if seen == 0:
        return Unsure("no dice seen")
    if seen != dice:
        return Unsure(f"saw {seen} {'die' if seen == 1 else 'dice'}, not {dice}")
    for die in reading.dice:
        if die.face is None:
            return Unsure(_short(die.problem or "unreadable die"))
        if die.confidence < min_confidence:
            return Unsure(_short(f"unsure: {die.problem or 'low confidence'}"))
    return SettledRoll(tuple(d.face for d in reading.dice if d.face), reading.confidence)


def _short(text: str) -> str:
    return text if len(text) <= 21 else text[:20] + "~"
