"""What the table's OLED shows: one view-model dataclass per moment, one pure render each.

``render(view)`` returns a 128x64 1-bit PIL image and touches no device, so screens are
tested pixel-exact against ``tests/golden/*.png`` and drawn into ``docs/screens/``.
Text uses Pillow's built-in bitmap font, scaled up by whole pixels for the big numbers, and
GNU Unifont for every letter the built-in font lacks (``boxfont``): the result is the same on
every machine (bitmap glyphs, no anti-aliasing) and reads across a table. A row with a Unifont
glyph is 16 pixels tall instead of 11; the screens with rows of names then lay them out anew
(``_waiting``, ``_results``, ``_end``), so every name shows on every screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Union

from PIL import Image, ImageDraw, ImageFont

from bunco_pi.table import boxfont, layout

WIDTH, HEIGHT = layout.WIDTH, layout.HEIGHT
LINE = layout.LINE  # bitmap font line height in pixels
MAX_CHARS = layout.MAX_CHARS  # characters of small text across the screen


@dataclass(frozen=True)
class WaitingView:
    """Before a round: who sits where."""

    table: int
    players: tuple[str, str, str, str]
    message: str = "waiting for round"


@dataclass(frozen=True)
class PlayingView:
    """During a round: target, both team scores large, who rolls, the latest feedback."""

    table: int
    target: int
    score_a: int
    score_b: int
    roller: str
    roller_team: str  # "A" or "B"
    set_number: int = 1
    bell: bool = False  # the bell rang: the current roller finishes
    flash: str = ""  # feedback for the latest press or roll, e.g. "+1 Ann"
    warning: str = ""  # e.g. "dice sensor unplugged"
    # Individual play: each seat's own score (seat 1 first) instead of the two team scores.
    seat_scores: tuple[int, int, int, int] | None = None
    roller_seat: int = 1
    # Timed rounds: the clock as the shared layout draws it beside the target ("4:59", from
    # layout.timer_text); "" when the night has no timer.
    timer: str = ""


@dataclass(frozen=True)
class ResultsView:
    """After a round: won or lost, and where each player goes next."""

    table: int
    won: bool  # from the scorekeeper's seat (team A)
    score_a: int
    score_b: int
    moves: tuple[str, ...] = ()  # one short line per player, e.g. "Ann -> T1 S2"
    hint: str = ""
    headline: str = ""  # instead of "A WON" / "B WON", e.g. "Cat moves" in individual play


@dataclass(frozen=True)
class BreakView:
    message: str = "break"
    detail: str = ""


@dataclass(frozen=True)
class EndView:
    """The night is over: the prizes."""

    prizes: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (prize, winner)


@dataclass(frozen=True)
class ErrorView:
    title: str
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class QrView:
    """The head's web console as a QR code (the head table, while nobody needs the scores)."""

    url: str


View = Union[WaitingView, PlayingView, ResultsView, BreakView, EndView, ErrorView, QrView]  # noqa: UP007


def render(view: View) -> Image.Image:
    """Draw ``view`` as a 128x64 1-bit image."""
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    if isinstance(view, QrView):
        from bunco_pi.table.qr import draw_qr  # segno: only the head's box has the console extra

        draw_qr(image, view.url)
        return image
    paint(image, layout.ops(as_layout(view), boxfont))
    return image


def as_layout(view: View) -> dict[str, Any]:
    """``view`` as the shared layout's dict (``layout.py``: the Pico table box draws the same)."""
    return {"screen": _NAMES[type(view)],
            **{f.name: getattr(view, f.name) for f in fields(view)}}  # type: ignore[arg-type]


def paint(image: Image.Image, operations: list[tuple[Any, ...]]) -> None:
    """Carry out the layout's draw operations on a 1-bit Pillow image."""
    draw = ImageDraw.Draw(image)
    for op in operations:
        kind = op[0]
        if kind == "text":
            _, x, y, text, scale, colour = op
            _text(image, (x, y), text, scale, colour)
        elif kind == "fill":
            draw.rectangle(op[1:5], fill=op[5])
        elif kind == "frame":
            draw.rectangle(op[1:5], outline=op[5])
        elif kind == "line":
            draw.line(op[1:5], fill=op[5])
        else:
            raise ValueError(f"unknown draw operation {kind!r}")


def _font() -> ImageFont.ImageFont:
    """Pillow's small bitmap font, for text known to be ASCII (the QR screen's address)."""
    return boxfont.small_font()


def _text(
    image: Image.Image, xy: tuple[int, int], text: str, scale: int = 1, fill: int = 1
) -> int:
    """Draw text with its top-left at ``xy``; return its width in pixels."""
    strip = boxfont.line_image(text)
    if scale != 1:
        strip = strip.resize((strip.width * scale, strip.height * scale),
                             Image.Resampling.NEAREST)
    image.paste(1 if fill else 0, xy, strip)
    return strip.width


_NAMES = {
    WaitingView: "waiting",
    PlayingView: "playing",
    ResultsView: "results",
    BreakView: "break",
    EndView: "end",
    ErrorView: "error",
}


# --- a timed round's minutes left: drawn over any screen, apart from the views ----------------


def draw_countdown(image: Image.Image, label: str, *, left: bool = False) -> None:
    """``label`` (``table/countdown.py``) in a box at the bottom-right corner (``left``: the
    bottom-left, beside the QR code, which must stay whole), over whatever screen is there:
    inverse, with a dark margin, so it reads on a plain or an inverse footer."""
    width = boxfont.width(label) + 4
    top = HEIGHT - LINE - 1
    x0 = 0 if left else WIDTH - width - 1
    draw = ImageDraw.Draw(image)
    draw.rectangle((max(0, x0 - 1), top - 1, min(WIDTH - 1, x0 + width), HEIGHT - 1), fill=0)
    draw.rectangle((x0, top, x0 + width - 1, HEIGHT - 1), fill=1)
    _text(image, (x0 + 2, top + 1), label, fill=0)
