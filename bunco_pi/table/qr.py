"""The web console's address as a QR code on the head table's 128x64 OLED (segno draws it).

``qr_screen(url, lines)`` is pure: a 1-bit image with the code on the right, white modules on
a black screen inverted so phones read it (dark modules must be dark: the code is drawn as
black on a lit square), and a few words on the left. Shown while waiting, between rounds and at
the break, when nobody needs the scores on the screen.
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from bunco_pi.table.screens import HEIGHT, WIDTH, _font  # one font on every screen

QUIET = 2  # modules of quiet zone: 4 is the standard, 2 reads fine off a lit OLED


def qr_matrix(url: str) -> list[list[bool]]:
    """The code's modules (True = dark), smallest version that holds ``url``."""
    import segno

    code = segno.make_qr(url, error="l", boost_error=True)
    return [[bool(m) for m in row] for row in code.matrix]


CAPTION = ("Scores on", "your phone:", "scan me")


def qr_screen(url: str, lines: Sequence[str] = CAPTION) -> Image.Image:
    image = Image.new("1", (WIDTH, HEIGHT), 0)
    draw_qr(image, url, lines)
    return image


def draw_qr(image: Image.Image, url: str, lines: Sequence[str] = CAPTION) -> None:
    """Draw the code and ``lines`` onto a blank 128x64 1-bit ``image``."""
    matrix = qr_matrix(url)
    modules = len(matrix) + 2 * QUIET
    scale = HEIGHT // modules
    if scale < 1:
        raise ValueError(f"{url!r} is too long for a QR code on a {WIDTH}x{HEIGHT} screen")
    side = modules * scale
    left = WIDTH - side
    top = (HEIGHT - side) // 2
    draw = ImageDraw.Draw(image)
    draw.rectangle((left, top, left + side - 1, top + side - 1), fill=1)  # lit = light module
    for y, row in enumerate(matrix):
        for x, dark in enumerate(row):
            if dark:
                x0, y0 = left + (x + QUIET) * scale, top + (y + QUIET) * scale
                draw.rectangle((x0, y0, x0 + scale - 1, y0 + scale - 1), fill=0)
    font = _font()
    for i, text in enumerate(lines[:5]):
        draw.text((0, 4 + 12 * i), text[: max(1, left // 6)], font=font, fill=1)
