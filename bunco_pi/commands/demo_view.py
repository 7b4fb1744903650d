"""What ``bunco-pi demo`` draws in the terminal: pure text from the night's state and views.

Two layouts. Where the terminal holds them, every table's OLED picture (64x32 characters of
block graphics, as the box shows it). Otherwise, as in an ordinary 80x24 terminal, a compact
view: one line per table with its players, scores and roller, so every table of a night stays
on screen. No terminal, clock or broker here: the caller gives the size and the data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

OLED_COLUMNS, OLED_ROWS = 64, 32
OLED_CELL = OLED_COLUMNS + 2  # a picture and the gap after it
_OLED_BLOCK = OLED_ROWS + 1  # the table's name, then its picture


def fits_oled(tables: int, width: int, height: int, reserved: int = 2) -> bool:
    """Whether every table's OLED picture fits a ``width`` x ``height`` terminal, with
    ``reserved`` lines kept for the headline and notes."""
    per_row = max(1, width // OLED_CELL)
    if width < OLED_COLUMNS:
        return False
    rows = -(-tables // per_row)
    return reserved + rows * _OLED_BLOCK <= height


def oled_screen(headline: str, frames: Sequence[Sequence[str]], width: int,
                notes: Sequence[str] = ()) -> list[str]:
    """Every table's OLED picture, as many side by side as ``width`` holds."""
    per_row = max(1, width // OLED_CELL)
    out = [_fit(headline, width), *(_fit(note, width) for note in notes)]
    for start in range(0, len(frames), per_row):
        group = frames[start : start + per_row]
        out.append(_fit("".join(f"table {start + i + 1}".ljust(OLED_CELL)
                                for i in range(len(group))), width))
        for row in range(OLED_ROWS):
            out.append(_fit("".join((t[row] if row < len(t) else "").ljust(OLED_COLUMNS) + "  "
                                    for t in group), width))
    return out


def compact_screen(headline: str, views: Mapping[int, Mapping[str, Any]], tables: int,
                   width: int, height: int, notes: Sequence[str] = (),
                   team_play: bool = True) -> list[str]:
    """One line per table; at most ``height`` lines of at most ``width`` characters. If even
    that is too many tables, the last line says how many are left out."""
    out = [_fit(headline, width), *(_fit(note, width) for note in notes)]
    room = max(0, height - len(out))
    shown = tables if tables <= room else max(0, room - 1)
    for n in range(1, shown + 1):
        out.append(_fit(table_line(n, views.get(n, {}), team_play), width))
    if shown < tables:
        out.append(_fit(f"(+{tables - shown} more tables: enlarge the terminal)", width))
    return out[:height]


def table_line(table: int, view: Mapping[str, Any], team_play: bool = True) -> str:
    """``T1  Ann & Cat  12 : 7  Bob & Dee   rolls: Ann`` for one table's view from the head."""
    seats = list(view.get("seats") or [])
    if len(seats) != 4:
        phase = view.get("phase", "starting")
        return f"T{table:<2} {'waiting for players' if phase == 'lobby' else phase}"
    short = [_name(s) for s in seats]
    if "result" in view:
        score = view["result"].get("score", view.get("score", [0, 0]))
    else:
        score = view.get("score", [0, 0])
    a, b = (list(score) + [0, 0])[:2]
    roller_seat = view.get("roller_seat")
    if not team_play and view.get("seat_scores"):
        points = view["seat_scores"]
        line = "  ".join(f"{n} {p}" for n, p in zip(short, points, strict=False))
    else:
        line = f"{short[0]:>8} & {short[2]:<8} {a:>3} : {b:<3} {short[1]:>8} & {short[3]:<8}"
    tail = ""
    if view.get("done"):
        tail = "done"
    elif view.get("phase") in ("playing", "finishing") and roller_seat:
        tail = f"rolls: {short[roller_seat - 1]}"
    if "result" in view:
        winners = view["result"].get("winners", [])
        tail = "won: " + " & ".join(_name(w) for w in winners) if winners else "results"
    return f"T{table:<2} {line}" + (f"  {tail}" if tail else "")


def _name(name: str, limit: int = 8) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "."


def _fit(text: str, width: int) -> str:
    return text.ljust(width)[:width]
