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

from dataclasses import dataclass, field
from typing import Union

from PIL import Image, ImageDraw, ImageFont

from bunco_pi.table import boxfont

WIDTH, HEIGHT = 128, 64
LINE = 11  # bitmap font line height in pixels
MAX_CHARS = 21  # characters of small text across the screen


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
    draw = ImageDraw.Draw(image)
    drawer = _DRAWERS[type(view)]
    drawer(image, draw, view)
    return image


def _font() -> ImageFont.ImageFont:
    """Pillow's small bitmap font, for text known to be ASCII (the QR screen's address)."""
    return boxfont.small_font()


def _fit(text: str, chars: int = MAX_CHARS) -> str:
    """``text`` cut to the width of ``chars`` small letters (a wide letter counts for two)."""
    return boxfont.fit(text, chars * boxfont.SMALL_ADVANCE)


def _tall(*texts: str) -> bool:
    return any(boxfont.line_height(t) > LINE for t in texts)


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


def _width(text: str, scale: int = 1) -> int:
    return boxfont.width(text) * scale


def _centered(image: Image.Image, y: int, text: str, scale: int = 1, fill: int = 1) -> None:
    _text(image, ((WIDTH - _width(text, scale)) // 2, y), text, scale, fill)


def _header(image: Image.Image, draw: ImageDraw.ImageDraw, left: str, right: str = "") -> None:
    draw.rectangle((0, 0, WIDTH - 1, LINE), fill=1)
    _text(image, (2, 1), _fit(left, 14), fill=0)
    if right:
        _text(image, (WIDTH - 2 - _width(right), 1), right, fill=0)


def _footer_top(text: str) -> int:
    """Where the footer starts: a line with a Unifont glyph (a name in Cyrillic, Chinese...)
    takes 16 pixels instead of 11."""
    return HEIGHT - boxfont.line_height(_fit(text))


def _footer(image: Image.Image, text: str, inverse: bool = False) -> None:
    text = _fit(text)
    top = _footer_top(text)
    if inverse:
        ImageDraw.Draw(image).rectangle((0, top - 1, WIDTH - 1, HEIGHT - 1), fill=1)
    _text(image, (2, top), text, fill=0 if inverse else 1)


def _rows(image: Image.Image, top: int, bottom: int, lines: tuple[str, ...], x: int = 2,
          pitch: int = 10, chars: int = MAX_CHARS) -> None:
    """Lines from ``top`` down, each ``pitch`` pixels apart or its own height if taller, as many
    as end above ``bottom``."""
    y = top
    for line in lines:
        text = _fit(line, chars)
        height = boxfont.line_height(text)
        if y + height > bottom:
            break
        _text(image, (x, y), text)
        y += pitch if height <= LINE else height


def _waiting(image: Image.Image, draw: ImageDraw.ImageDraw, view: WaitingView) -> None:
    _header(image, draw, f"TABLE {view.table}", "seats")
    rows = [f"{seat} {'A' if seat % 2 else 'B'} {name}"
            for seat, name in enumerate(view.players, start=1)]
    if not _tall(*(_fit(r) for r in rows)):
        for seat, row in enumerate(rows, start=1):
            _text(image, (2, LINE + 2 + (seat - 1) * 10), _fit(row))
    else:
        # Four 16-pixel rows do not fit under the header: two seats a row, each half the width.
        for seat, name in enumerate(view.players, start=1):
            x = 2 if seat % 2 else WIDTH // 2 + 1
            y = LINE + 2 + (seat - 1) // 2 * boxfont.TALL
            _text(image, (x, y), _fit(f"{seat} {name}", 10))
    _footer(image, view.message, inverse=False)


def _playing(image: Image.Image, draw: ImageDraw.ImageDraw, view: PlayingView) -> None:
    left = f"SET {view.set_number} T{view.table}"
    _header(image, draw, left, "BELL!" if view.bell else f"target {view.target}")
    if view.warning:
        footer, inverse = view.warning, True
    elif view.flash:
        footer, inverse = view.flash, True
    else:
        rolls = "finishes" if view.bell else "rolls"
        who = view.roller_seat if view.seat_scores is not None else view.roller_team
        footer, inverse = f"{who}> {view.roller} {rolls}", False
    bottom = min(48, _footer_top(footer) - 2)
    if view.seat_scores is not None:
        _seat_scores(image, draw, view.seat_scores, view.roller_seat, bottom)
    else:
        # Both team scores, three pixels per font pixel: about 10 mm tall on a 0.96" screen.
        for x0, label, score in ((0, "A", view.score_a), (64, "B", view.score_b)):
            digits = str(score)
            scale = 3 if len(digits) <= 2 else 2
            _text(image, (x0 + 2, 16), label)
            width = _width(digits, scale)
            _text(image, (x0 + 10 + (54 - width) // 2, 15), digits, scale)
        draw.line((63, 14, 63, bottom), fill=1)
    _footer(image, footer, inverse)


def _seat_scores(image: Image.Image, draw: ImageDraw.ImageDraw,
                 scores: tuple[int, int, int, int], roller_seat: int, bottom: int = 48) -> None:
    """Four columns, one per seat, twice-size digits; the roller's column drawn inverse."""
    for seat, score in enumerate(scores, start=1):
        x0 = (seat - 1) * 32
        inverse = seat == roller_seat
        if inverse:
            draw.rectangle((x0 + 1, 14, x0 + 30, bottom), fill=1)
        fill = 0 if inverse else 1
        _text(image, (x0 + 12, 15), str(seat), fill=fill)
        digits = str(score)
        scale = 2 if len(digits) <= 2 else 1
        _text(image, (x0 + (32 - _width(digits, scale)) // 2, 27), digits, scale, fill=fill)


def _results(image: Image.Image, draw: ImageDraw.ImageDraw, view: ResultsView) -> None:
    headline = view.headline or ("A WON" if view.won else "B WON")
    moves = tuple(view.moves[:2])
    bottom = _footer_top(view.hint) - 1 if view.hint else HEIGHT
    if not _tall(_fit(headline, 10), *(_fit(m) for m in moves)):
        _header(image, draw, f"TABLE {view.table}", f"{view.score_a}-{view.score_b}")
        _centered(image, LINE + 1, _fit(headline, 10), scale=2)
        y = LINE + 1 + 2 * LINE
        for line in moves:
            _text(image, (2, y), _fit(line))
            y += 9
    elif view.headline:
        # A name in a tall script: the headline at its own height, then the moves that fit.
        _header(image, draw, f"TABLE {view.table}", f"{view.score_a}-{view.score_b}")
        _rows(image, LINE + 2, bottom, (view.headline, *moves))
    else:
        _header(image, draw, f"T{view.table} {headline}", f"{view.score_a}-{view.score_b}")
        _rows(image, LINE + 2, bottom, moves)
    if view.hint:
        _footer(image, view.hint, inverse=True)


def _break(image: Image.Image, draw: ImageDraw.ImageDraw, view: BreakView) -> None:
    _header(image, draw, "BUNCO")
    message = _fit(view.message.upper(), 10)
    _centered(image, LINE + 6, message, scale=2 if not _tall(message) else 1)
    if view.detail:
        _footer(image, view.detail)


def _end(image: Image.Image, draw: ImageDraw.ImageDraw, view: EndView) -> None:
    lines = tuple(_fit(f"{prize}: {winner}") for prize, winner in view.prizes[:4])
    if sum(boxfont.line_height(line) for line in lines) <= HEIGHT - LINE - 2:
        _header(image, draw, "THE END", "prizes")
        _rows(image, LINE + 2, HEIGHT, lines)
    else:
        # Four prizes won by names in a tall script: the prizes say it is the end.
        _rows(image, 0, HEIGHT, lines)


def _error(image: Image.Image, draw: ImageDraw.ImageDraw, view: ErrorView) -> None:
    draw.rectangle((0, 0, WIDTH - 1, HEIGHT - 1), outline=1)
    _centered(image, 2, _fit(view.title.upper(), MAX_CHARS - 1))
    draw.line((2, LINE + 3, WIDTH - 3, LINE + 3), fill=1)
    _rows(image, LINE + 5, HEIGHT - 1, tuple(view.lines[:4]), x=3, chars=MAX_CHARS - 1)


def _qr(image: Image.Image, draw: ImageDraw.ImageDraw, view: QrView) -> None:
    from bunco_pi.table.qr import draw_qr  # segno: only the head's box has the console extra

    draw_qr(image, view.url)


_DRAWERS = {
    QrView: _qr,
    WaitingView: _waiting,
    PlayingView: _playing,
    ResultsView: _results,
    BreakView: _break,
    EndView: _end,
    ErrorView: _error,
}


# --- a timed round's minutes left: drawn over any screen, apart from the views ----------------


def draw_countdown(image: Image.Image, label: str, *, left: bool = False) -> None:
    """``label`` (``table/countdown.py``) in a box at the bottom-right corner (``left``: the
    bottom-left, beside the QR code, which must stay whole), over whatever screen is there:
    inverse, with a dark margin, so it reads on a plain or an inverse footer."""
    width = _width(label) + 4
    top = HEIGHT - LINE - 1
    x0 = 0 if left else WIDTH - width - 1
    draw = ImageDraw.Draw(image)
    draw.rectangle((max(0, x0 - 1), top - 1, min(WIDTH - 1, x0 + width), HEIGHT - 1), fill=0)
    draw.rectangle((x0, top, x0 + width - 1, HEIGHT - 1), fill=1)
    _text(image, (x0 + 2, top + 1), label, fill=0)
