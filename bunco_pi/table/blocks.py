"""Draw a 1-bit OLED frame in a terminal with Unicode quadrant blocks.

Each character cell carries 2x2 pixels, so a 128x64 frame takes 64 columns x 32 rows: it fits
an ordinary terminal and keeps every pixel of the real screen.
"""

from __future__ import annotations

from PIL import Image

# Index = top-left | top-right << 1 | bottom-left << 2 | bottom-right << 3.
QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"


def to_blocks(image: Image.Image) -> list[str]:
    """The frame as text lines, one per two pixel rows."""
    frame = image.convert("1")
    width, height = frame.size
    pixels = frame.load()

    def lit(x: int, y: int) -> int:
        return 1 if x < width and y < height and pixels[x, y] else 0

    lines = []
    for y in range(0, height, 2):
        row = []
        for x in range(0, width, 2):
            index = lit(x, y) | lit(x + 1, y) << 1 | lit(x, y + 1) << 2 | lit(x + 1, y + 1) << 3
            row.append(QUADRANTS[index])
        lines.append("".join(row))
    return lines
