"""The Pico table box's font: the Pi box's glyphs, in a small file the Pico reads.

``bunco-pi pico flash`` writes ``font.bin`` from the very glyphs the Pi box draws with
(``boxfont``: Pillow's 6x11 font for Latin-1, GNU Unifont's 8x16 and 16x16 glyphs for the
letters of the scripts in ``bitfont_file.TALL_RANGES``: Latin Extended, Greek, Cyrillic,
Vietnamese, typographic punctuation such as the U+2019 apostrophe). This module reads it, measures
text as ``boxfont`` does (``width``, ``line_height``, ``fit``, for ``layout.py``) and draws it
on anything with MicroPython's ``framebuf`` methods (``pixel``, ``fill_rect``): the same pixels
as the Pi box's screens for every letter in the file.

What the Pico does not do that the Pi box does (documented in docs/table-box.md): letters
outside the file (Chinese, Arabic, Hebrew, emoji...) are hollow boxes, as on a Pi box without
Unifont; no NFC, Arabic joining or right-to-left reordering (MicroPython has no unicodedata).

MicroPython runs this file unchanged: ``struct`` is its only import.

The file (little-endian): ``b"BFNT"``, a version byte, three 16-bit counts (glyph ranges, wide
spans, invisible spans); per glyph range ``<IHBBI``: first code point, count, kind (0 small:
11 rows of two bytes, the 6-pixel cell ``SMALL_LEFT`` in, then the letter's box; 1 tall: 16
rows of ``(width + 7) // 8`` bytes), width in pixels, offset of its first glyph in the file;
per span ``<II``, its first and last code point; then the glyphs, rows top down, the leftmost
pixel in a byte's top bit.
"""

import struct

MAGIC = b"BFNT"
VERSION = 1
RANGE = "<IHBBI"
RANGE_SIZE = 12
SMALL, TALL = 0, 1
SMALL_HEIGHT = 11
TALL_HEIGHT = 16
SMALL_ADVANCE = 6
# Pillow's small letters reach past their 6-pixel cell (the feet of "A" into the next one): a
# small glyph is kept 16 pixels wide, its cell starting SMALL_LEFT pixels in, and drawn
# clipped to the line, as the Pi box's strip of the line clips it.
SMALL_CELL = 16
SMALL_LEFT = 4
SMALL_BYTES = SMALL_HEIGHT * 2 + 4  # and its box: Pillow pastes a letter's box over the last
BASELINE_SMALL = 9
BASELINE_TALL = 14
CACHE = 48  # tall glyphs kept in RAM (a screen's names); the rest are read from flash

HEADER = 11  # magic, version, three counts
SPAN = "<II"  # a first and last code point


def _within(cp, spans):
    """``cp`` is in one of ``spans`` (the file's packed, sorted spans): a binary search, with
    the spans left as bytes (a few KB as tuples would be a Pico W's RAM)."""
    lo, hi = 0, len(spans) // 8
    while lo < hi:
        mid = (lo + hi) // 2
        first, last = struct.unpack_from(SPAN, spans, mid * 8)
        if cp < first:
            hi = mid
        elif cp > last:
            lo = mid + 1
        else:
            return True
    return False


def is_small(cp):
    """Pillow's built-in font draws it: printable Latin-1 (``boxfont._font_of``)."""
    return 0x20 <= cp <= 0x7E or (0xA1 <= cp <= 0xFF and cp != 0xAD)


def joined(text):
    """``text`` with each UTF-16 surrogate pair made the one letter it stands for: JSON's
    ``\\ud83c\\udfb2`` escapes (how the head's messages write an emoji) reach MicroPython's
    ``json`` as two halves."""
    text = str(text)
    if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return text
    out = []
    i = 0
    while i < len(text):
        high = ord(text[i])
        low = ord(text[i + 1]) if i + 1 < len(text) else 0
        if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
            out.append(chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)))
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


class FontError(Exception):
    pass


class BitFont:
    """``font.bin``, opened: measures and draws text. ``source`` is a path or the bytes."""

    def __init__(self, source, opener=open):
        if isinstance(source, (bytes, bytearray)):
            self._data, self._file = source, None
            head = bytes(source[:HEADER])
        else:
            self._data = None
            self._file = opener(source, "rb")
            head = self._file.read(HEADER)
        if len(head) < HEADER or head[:4] != MAGIC or head[4] != VERSION:
            raise FontError("%s: not a bunco-pi font file (bunco-pi pico flash writes one)"
                            % ("font" if self._file is None else source))
        count, wide, invisible = struct.unpack("<HHH", head[5:HEADER])
        table = self._read(HEADER, count * RANGE_SIZE)
        self.ranges = [struct.unpack(RANGE, table[i * RANGE_SIZE:(i + 1) * RANGE_SIZE])
                       for i in range(count)]
        at = HEADER + count * RANGE_SIZE
        # Which letters are wide and which draw nothing: Unicode's tables, as the Pi box
        # reads them from unicodedata (which MicroPython lacks), written into the file.
        # The wide spans (3 KB) matter only for a letter drawn as a box: left in the file.
        self._wide = (at, wide)
        self.invisible = self._spans(at + wide * 8, invisible)
        # Latin-1 is on every screen: its 2 KB of glyphs are kept in RAM, the rest read.
        self._small = [(first, n, self._read(offset, n * SMALL_BYTES))
                       for first, n, kind, _width, offset in self.ranges if kind == SMALL]
        self._tall = {}

    def is_wide(self, cp):
        """A hollow box twice as wide stands for ``cp`` (an East Asian wide letter, emoji)."""
        at, count = self._wide
        lo, hi = 0, count
        while lo < hi:
            mid = (lo + hi) // 2
            first, last = struct.unpack(SPAN, self._read(at + mid * 8, 8))
            if cp < first:
                hi = mid
            elif cp > last:
                lo = mid + 1
            else:
                return True
        return False

    def _spans(self, at, count):
        return self._read(at, count * 8)

    def _read(self, offset, size):
        if self._file is None:
            return bytes(self._data[offset:offset + size])
        self._file.seek(offset)
        return self._file.read(size)

    def close(self):
        if self._file is not None:
            self._file.close()

    def small_glyph(self, cp):
        """The 11 rows (two bytes each) of ``cp``'s small glyph, then its box in the cell (left,
        right, top, bottom; the right and bottom exclusive), or None."""
        for first, n, block in self._small:
            if first <= cp < first + n:
                at = (cp - first) * SMALL_BYTES
                return block[at:at + SMALL_BYTES]
        return None

    def tall_glyph(self, cp):
        """``(width, rows)`` of ``cp``'s tall glyph, or None when the file has none."""
        got = self._tall.get(cp)
        if got is not None:
            return got
        for first, n, kind, width, offset in self.ranges:
            if kind == TALL and first <= cp < first + n:
                size = (width + 7) // 8 * TALL_HEIGHT
                got = (width, self._read(offset + (cp - first) * size, size))
                if len(self._tall) >= CACHE:
                    self._tall = {}
                self._tall[cp] = got
                return got
        return None

    def _has_tall(self, cp):
        for first, n, kind, _width, _offset in self.ranges:
            if kind == TALL and first <= cp < first + n:
                return True
        return False

    # --- runs: which font draws which letter, as boxfont.runs --------------------------------

    def _kind(self, cp):
        if is_small(cp) and self.small_glyph(cp) is not None:
            return "small"
        if self._has_tall(cp):
            return "tall"
        return "missing"

    def runs(self, text):
        """``[(kind, text)]``: "small", "tall" or "missing". A word with any tall letter is
        drawn all in the tall font, as on the Pi box."""
        out = []
        word = []
        for ch in joined(text):
            if _within(ord(ch), self.invisible):
                continue
            if word and (ch == " ") != (word[-1] == " "):
                self._word(word, out)
                word = []
            word.append(ch)
        if word:
            self._word(word, out)
        return out

    def _word(self, word, out):
        kinds = [self._kind(ord(ch)) for ch in word]
        tall = "tall" in kinds
        for i in range(len(word)):
            ch, kind = word[i], kinds[i]
            if tall and kind == "small" and self._has_tall(ord(ch)):
                kind = "tall"
            if out and out[-1][0] == kind:
                out[-1] = (kind, out[-1][1] + ch)
            else:
                out.append((kind, ch))

    def _advance(self, kind, ch):
        cp = ord(ch)
        if kind == "small":
            return SMALL_ADVANCE
        if kind == "tall":
            return self.tall_glyph(cp)[0]
        return 12 if self.is_wide(cp) else 6

    # --- measuring, for the layout ------------------------------------------------------------

    def width(self, text):
        total = 0
        for kind, run in self.runs(text):
            for ch in run:
                total += self._advance(kind, ch)
        return total

    def line_height(self, text):
        for kind, _run in self.runs(text):
            if kind != "small":
                return TALL_HEIGHT
        return SMALL_HEIGHT

    def fit(self, text, pixels):
        """``text`` cut to draw within ``pixels`` across, "~" where it was cut (``boxfont.fit``)."""
        text = joined(text)
        if self.width(text) <= pixels:
            return text
        allowed = pixels - SMALL_ADVANCE
        cut = ""
        for i in range(1, len(text) + 1):
            if self.width(text[:i]) > allowed:
                break
            cut = text[:i]
        return cut + "~"

    # --- drawing ------------------------------------------------------------------------------

    def draw(self, fb, x, y, text, scale=1, colour=1):
        """Draw ``text`` with its top-left at ``x, y`` on ``fb`` (a framebuf), only the pixels of
        its letters, each ``scale`` pixels square: ``boxfont.line_image`` pasted as screens.py
        does."""
        parts = self.runs(text)
        tall = False
        total = 0
        for kind, run in parts:
            if kind != "small":
                tall = True
            for ch in run:
                total += self._advance(kind, ch)
        clip = (max(1, total), TALL_HEIGHT if tall else SMALL_HEIGHT)
        baseline = BASELINE_TALL if tall else BASELINE_SMALL
        at = 0
        for kind, run in parts:
            if kind == "small":
                self._small_run(fb, x, y, at, baseline - BASELINE_SMALL, run, scale, colour)
                at += SMALL_ADVANCE * len(run)
                continue
            for ch in run:
                cp = ord(ch)
                if kind == "tall":
                    width, rows = self.tall_glyph(cp)
                    self._glyph(fb, x, y, at, baseline - BASELINE_TALL, width, rows, scale,
                                colour, clip)
                    at += width
                else:
                    w = 12 if self.is_wide(cp) else 6
                    self._box(fb, x, y, at + 1, baseline - 8, at + w - 2, baseline - 1, scale,
                              colour)
                    at += w
        return at * scale

    def _small_run(self, fb, x, y, start, top, run, scale, colour):
        """A run of small letters as Pillow draws it: each letter's box pasted over the one
        before (a pixel reaching into the next letter's box is gone), the run's own width
        clipping the rest."""
        glyphs = [self.small_glyph(ord(ch)) for ch in run]
        clip = len(run) * SMALL_ADVANCE
        for i in range(len(glyphs)):
            g = glyphs[i]
            covers = []
            for j in (i + 1, i + 2):
                if j < len(glyphs):
                    b = glyphs[j]
                    shift = (j - i) * SMALL_ADVANCE
                    covers.append((b[22] + shift, b[23] + shift, b[24], b[25]))
            for r in range(SMALL_HEIGHT):
                for half in (0, 1):
                    bits = g[r * 2 + half]
                    if not bits:
                        continue
                    for c in range(8):
                        if not bits & (0x80 >> c):
                            continue
                        cx = half * 8 + c
                        px = i * SMALL_ADVANCE + cx - SMALL_LEFT
                        if not 0 <= px < clip:
                            continue
                        hidden = False
                        for left, right, upper, lower in covers:
                            if left <= cx < right and upper <= r < lower:
                                hidden = True
                        if hidden:
                            continue
                        px += start
                        py = top + r
                        if scale == 1:
                            fb.pixel(x + px, y + py, colour)
                        else:
                            fb.fill_rect(x + px * scale, y + py * scale, scale, scale, colour)

    @staticmethod
    def _glyph(fb, x, y, left, top, width, rows, scale, colour, clip):
        per_row = (width + 7) // 8
        height = len(rows) // per_row
        for r in range(height):
            py = top + r
            if not 0 <= py < clip[1]:
                continue
            for b in range(per_row):
                bits = rows[r * per_row + b]
                if not bits:
                    continue
                for c in range(8):
                    if bits & (0x80 >> c):
                        px = left + b * 8 + c
                        if not 0 <= px < clip[0]:
                            continue
                        if scale == 1:
                            fb.pixel(x + px, y + py, colour)
                        else:
                            fb.fill_rect(x + px * scale, y + py * scale, scale, scale, colour)

    @staticmethod
    def _box(fb, x, y, x0, y0, x1, y1, scale, colour):
        s = scale
        fb.fill_rect(x + x0 * s, y + y0 * s, (x1 - x0 + 1) * s, s, colour)
        fb.fill_rect(x + x0 * s, y + y1 * s, (x1 - x0 + 1) * s, s, colour)
        fb.fill_rect(x + x0 * s, y + y0 * s, s, (y1 - y0 + 1) * s, colour)
        fb.fill_rect(x + x1 * s, y + y0 * s, s, (y1 - y0 + 1) * s, colour)


def paint(fb, operations, font):
    """Carry out ``layout.ops``'s draw operations on ``fb`` (a framebuf, or an OLED driver,
    which is one), as ``screens.paint`` does on a Pillow image."""
    for op in operations:
        kind = op[0]
        if kind == "text":
            font.draw(fb, op[1], op[2], op[3], op[4], op[5])
        elif kind == "fill":
            fb.fill_rect(op[1], op[2], op[3] - op[1] + 1, op[4] - op[2] + 1, op[5])
        elif kind == "frame":
            fb.rect(op[1], op[2], op[3] - op[1] + 1, op[4] - op[2] + 1, op[5])
        elif kind == "line":
            fb.line(op[1], op[2], op[3], op[4], op[5])
        else:
            raise ValueError("unknown draw operation %r" % (kind,))
