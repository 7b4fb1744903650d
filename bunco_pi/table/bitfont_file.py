"""Writes ``font.bin``, the Pico table box's font (read by ``bitfont.py``), from the Pi box's
own glyphs (``boxfont``), so the two boxes draw the same pixels.

Latin-1 in Pillow's 6x11 font, as the Pi box draws it; and GNU Unifont's glyphs for the
``TALL_RANGES`` (a word with any letter beyond Latin-1 is drawn all in Unifont, so its ASCII
too). About 20 KB on the Pico's flash; only the Latin-1 part is kept in RAM. Without Unifont on
this machine the file has Latin-1 only, and the Pico draws every other letter as a hollow box
(as a Pi box without Unifont does).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from bunco_pi.table import bitfont, boxfont

# The scripts a group's names are written in, as far as a Pico's font goes: ASCII and Latin-1
# (in Unifont, for words with a letter beyond them), Latin Extended-A and B (Polish, Czech,
# Turkish, Romanian...), IPA-free Greek and Cyrillic, Latin Extended Additional (Vietnamese),
# the typographic quotes and dashes a phone types (O’Brien), the euro sign.
TALL_RANGES = ((0x20, 0x7E), (0xA0, 0xFF), (0x100, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF),
               (0x1E00, 0x1EFF), (0x2010, 0x2027), (0x20AC, 0x20AC))


def _pack(image: Image.Image, width: int) -> bytes:
    per_row = (width + 7) // 8
    out = bytearray()
    px = image.load()
    for y in range(image.height):
        row = bytearray(per_row)
        for x in range(width):
            if px[x, y]:
                row[x // 8] |= 0x80 >> (x % 8)
        out += row
    return bytes(out)


@cache
def _pillow_font() -> tuple[bytes, Image.Image]:
    """Pillow's built-in font as it loads it: each letter's metrics and the glyph sheet.

    Pillow pastes each letter's box over what the letter before it drew (a space's box is one
    pixel), so a letter's pixels alone are not enough to draw a line as the Pi box does: the
    Pico gets each box too. Pillow keeps neither where Python can read it; they are taken as
    its loader hands them over."""
    got: dict[str, Any] = {}
    load = ImageFont.ImageFont._load_pilfont_data

    def keep(self: ImageFont.ImageFont, file: Any, image: Image.Image) -> None:
        at = file.tell()
        data = file.read()
        file.seek(at)
        got["metrics"] = data[data.index(b"DATA\n") + 5:][:256 * 20]
        got["image"] = image.convert("1")
        load(self, file, image)

    ImageFont.ImageFont._load_pilfont_data = keep  # type: ignore[method-assign]
    try:
        loader = getattr(ImageFont, "load_default_imagefont", None)
        _ = loader() if loader else ImageFont.load_default()
    finally:
        ImageFont.ImageFont._load_pilfont_data = load  # type: ignore[method-assign]
    return got["metrics"], got["image"]


def _small(cp: int) -> bytes:
    """Pillow's 6x11 letter: its pixels in a 16-pixel cell (what reaches past the 6-pixel
    advance too), then its box in the cell: left, right (exclusive), top, bottom (exclusive)."""
    metrics, sheet = _pillow_font()
    _dx, _dy, x0, y0, x1, y1, s0, t0, _s1, _t1 = struct.unpack(">10h",
                                                               metrics[cp * 20:cp * 20 + 20])
    left, top = bitfont.SMALL_LEFT + x0, bitfont.BASELINE_SMALL + y0
    cell = Image.new("1", (bitfont.SMALL_CELL, bitfont.SMALL_HEIGHT), 0)
    cell.paste(sheet.crop((s0, t0, s0 + x1 - x0, t0 + y1 - y0)), (left, top))
    box = bytes((left, bitfont.SMALL_LEFT + x1, top, bitfont.BASELINE_SMALL + y1))
    return _pack(cell, bitfont.SMALL_CELL) + box


def _tall(cp: int) -> tuple[int, bytes] | None:
    font = boxfont._unifont("bmp")
    if font is None:
        return None
    ch = chr(cp)
    if not boxfont._has_glyph("bmp", ch) or not ch.isprintable() and ch != "\xa0":
        return None
    width = int(font.getlength(ch))
    if width not in (8, 16):
        return None
    strip = Image.new("1", (width, bitfont.TALL_HEIGHT), 0)
    ImageDraw.Draw(strip).text((0, 0), ch, font=font, fill=1)
    return width, _pack(strip, width)


@cache
def build() -> bytes:
    """The whole file."""
    ranges: list[tuple[int, int, int, int, list[bytes]]] = []  # first, kind, width, glyphs
    small = [cp for cp in range(0x20, 0x100) if bitfont.is_small(cp)]
    for cp in small:
        _add(ranges, cp, bitfont.SMALL, bitfont.SMALL_CELL, _small(cp))
    for first, last in TALL_RANGES:
        for cp in range(first, last + 1):
            got = _tall(cp)
            if got is not None:
                _add(ranges, cp, bitfont.TALL, got[0], got[1])
    wide, invisible = _spans(_is_wide), _spans(_is_invisible)
    header = bitfont.MAGIC + bytes([bitfont.VERSION]) + struct.pack(
        "<HHH", len(ranges), len(wide), len(invisible))
    spans = b"".join(struct.pack(bitfont.SPAN, a, b) for a, b in (*wide, *invisible))
    offset = len(header) + len(ranges) * bitfont.RANGE_SIZE + len(spans)
    table, data = b"", b""
    for first, _last, kind, width, glyphs in ranges:
        table += struct.pack(bitfont.RANGE, first, len(glyphs), kind, width, offset + len(data))
        data += b"".join(glyphs)
    return header + table + spans + data


def _is_wide(cp: int) -> bool:
    """A hollow box twice as wide stands for it (``boxfont._box_width``)."""
    return boxfont._box_width(chr(cp)) == 12


def _is_invisible(cp: int) -> bool:
    return boxfont._invisible(chr(cp))


def _spans(test: Callable[[int], bool]) -> list[tuple[int, int]]:
    """The code points ``test`` holds for, as (first, last) spans; surrogates skipped."""
    out: list[tuple[int, int]] = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or not test(cp):
            continue
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def _add(ranges: list[tuple[int, int, int, int, list[bytes]]], cp: int, kind: int, width: int,
         glyph: bytes) -> None:
    if ranges:
        first, last, k, w, glyphs = ranges[-1]
        if last == cp - 1 and k == kind and w == width:
            glyphs.append(glyph)
            ranges[-1] = (first, cp, k, w, glyphs)
            return
    ranges.append((cp, cp, kind, width, [glyph]))
