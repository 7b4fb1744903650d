"""The box's font: every name a group types, drawn in 1-bit pixels on a 128x64 OLED.

Two bitmap fonts, each drawn pixel for pixel (no anti-aliasing, the same on every machine):

- Pillow's built-in 6x11 font for what it has (Latin-1: English, Spanish, French, German...):
  the small font the screens were laid out for, 21 characters across;
- GNU Unifont (Debian's and Raspberry Pi OS's ``fonts-unifont``, licence GPL-2+ with the font
  embedding exception, or SIL OFL 1.1) for everything else: 8x16 and 16x16 glyphs for every
  character of Unicode's first plane (Cyrillic, Greek, Polish, Czech, Vietnamese, Arabic,
  Hebrew, CJK...) and, from ``unifont_upper.otf``, emoji.

A line with any Unifont glyph is 16 pixels tall (``TALL``), else 11 (``SMALL``): the screens lay
out their rows with ``line_height``. A character neither font has, or every character beyond
Latin-1 on a box without Unifont installed, is drawn as a hollow box: a name is never a reason
for a frame to fail.

Right-to-left runs (Arabic, Hebrew) are put in the order they are read and Arabic letters take
their joined forms (Unifont has the presentation forms), so "دانا" reads as it is written.
Invisible format characters and variation selectors draw nothing.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

SMALL = 11  # line height of the built-in font
TALL = 16  # line height of a line with a Unifont glyph
BASELINE_SMALL = 9  # first row under the built-in font's letters
BASELINE_TALL = 14  # Unifont's ascent
SMALL_ADVANCE = 6
UNIFONT_DIRS = ("/usr/share/fonts/opentype/unifont", "/usr/local/share/fonts/unifont")
FONT_DIR_ENV = "BUNCO_PI_FONT_DIR"  # a folder holding unifont.otf (and unifont_upper.otf)


@dataclass(frozen=True)
class Run:
    """Consecutive characters drawn with one font: "small", "bmp", "upper" or "missing"."""

    font: str
    text: str


@cache
def small_font() -> ImageFont.ImageFont:
    loader = getattr(ImageFont, "load_default_imagefont", None)
    return loader() if loader else ImageFont.load_default()


def unifont_path(name: str = "unifont.otf") -> Path | None:
    """Where Unifont's ``name`` is on this machine, or None."""
    dirs = [os.environ[FONT_DIR_ENV]] if os.environ.get(FONT_DIR_ENV) else []
    for folder in (*dirs, *UNIFONT_DIRS):
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


@cache
def _unifont(which: str) -> ImageFont.FreeTypeFont | None:
    path = unifont_path("unifont.otf" if which == "bmp" else "unifont_upper.otf")
    if path is None:
        return None
    try:
        # BASIC layout: the same glyphs and places whether or not Pillow has libraqm.
        return ImageFont.truetype(str(path), TALL, layout_engine=ImageFont.Layout.BASIC)
    except OSError:
        return None


def has_unifont() -> bool:
    return _unifont("bmp") is not None


# --- text as it is drawn ---------------------------------------------------------------------


def visual(text: str) -> str:
    """``text`` in the order and forms it is drawn: NFC, no invisible characters, Arabic
    joined, right-to-left runs turned."""
    text = unicodedata.normalize("NFC", text)
    text = "".join(ch for ch in text if not _invisible(ch))
    return _reorder(_shape_arabic(text))


def _invisible(ch: str) -> bool:
    category = unicodedata.category(ch)
    if category in ("Cf", "Cc"):
        return True
    return "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


def _rtl(ch: str) -> bool:
    return unicodedata.bidirectional(ch) in ("R", "AL")


def _reorder(text: str) -> str:
    """Each right-to-left run turned around: enough for a name in a left-to-right line (the
    spaces and marks inside a run go with it; digits in it keep their own order)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if not _rtl(text[i]):
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < len(text) and (_rtl(text[j]) or unicodedata.combining(text[j])
                                 or (text[j] in " -'" and j + 1 < len(text)
                                     and _rtl(text[j + 1]))
                                 or unicodedata.bidirectional(text[j]) in ("NSM", "AN")):
            j += 1
        out.append(_turn(text[i:j]))
        i = j
    return "".join(out)


def _turn(run: str) -> str:
    """Reverse a right-to-left run, keeping each letter's marks after it and digits in order."""
    clusters: list[str] = []
    for ch in run:
        if clusters and (unicodedata.combining(ch)
                         or (ch.isdigit() and clusters[-1][-1:].isdigit())):
            clusters[-1] += ch
        else:
            clusters.append(ch)
    return "".join(reversed(clusters))


_FORMS = ("ISOLATED", "FINAL", "INITIAL", "MEDIAL")


@lru_cache(maxsize=512)
def _arabic_form(ch: str, form: str) -> str | None:
    name = unicodedata.name(ch, "")
    if not name.startswith("ARABIC LETTER "):
        return None
    try:
        return unicodedata.lookup(f"{name} {form} FORM")
    except KeyError:
        return None


def _joins_next(ch: str) -> bool:
    return _arabic_form(ch, "INITIAL") is not None


def _joins_prev(ch: str) -> bool:
    return _arabic_form(ch, "FINAL") is not None or ch == "\u0640"


def _shape_arabic(text: str) -> str:
    """Each Arabic letter in its isolated, initial, medial or final form, as its neighbours
    join (marks between letters are skipped)."""
    if not any("\u0600" <= ch <= "\u06ff" for ch in text):
        return text
    letters = [i for i, ch in enumerate(text) if not unicodedata.combining(ch)]
    out = list(text)
    for k, i in enumerate(letters):
        ch = text[i]
        if _arabic_form(ch, "ISOLATED") is None and _arabic_form(ch, "FINAL") is None:
            continue
        before = text[letters[k - 1]] if k > 0 else ""
        after = text[letters[k + 1]] if k + 1 < len(letters) else ""
        joined_before = bool(before) and _joins_next(before) and _joins_prev(ch)
        joined_after = bool(after) and _joins_next(ch) and _joins_prev(after)
        form = ("MEDIAL" if joined_before and joined_after else "FINAL" if joined_before
                else "INITIAL" if joined_after else "ISOLATED")
        out[i] = _arabic_form(ch, form) or _arabic_form(ch, "ISOLATED") or ch
    return "".join(out)


# --- runs, sizes and drawing -------------------------------------------------------------------


def _font_of(ch: str) -> str:
    if ord(ch) < 256 and ch.isprintable() and not unicodedata.combining(ch):
        return "small"
    if unicodedata.combining(ch):
        return "bmp" if _unifont("bmp") is not None else "missing"
    which = "bmp" if ord(ch) < 0x10000 else "upper"
    font = _unifont(which)
    if font is None or not _has_glyph(which, ch):
        return "missing"
    return which


@lru_cache(maxsize=4096)
def _has_glyph(which: str, ch: str) -> bool:
    """Unifont draws its .notdef box for what it lacks; that counts as missing."""
    font = _unifont(which)
    if font is None:
        return False
    if unicodedata.combining(ch):
        return True
    return bytes(font.getmask(ch, mode="1")) != _notdef(which)


@cache
def _notdef(which: str) -> bytes:
    font = _unifont(which)
    assert font is not None
    return bytes(font.getmask("\U0010fffd" if which == "upper" else "\uffff", mode="1"))


@lru_cache(maxsize=1024)
def runs(text: str) -> tuple[Run, ...]:
    """``visual(text)`` cut into runs of one font each. A word with any letter the small font
    lacks is drawn all in Unifont ("Fọlásadé", not three letters small and five large), and a
    combining mark goes with the letter before it."""
    out: list[Run] = []
    for word in _words(visual(text)):
        fonts = [_font_of(ch) for ch in word]
        if any(f not in ("small", "missing") for f in fonts):
            fonts = ["bmp" if f == "small" else f for f in fonts]
        for ch, font in zip(word, fonts, strict=True):
            if unicodedata.combining(ch) and out:
                font = out[-1].font
            if out and out[-1].font == font:
                out[-1] = Run(font, out[-1].text + ch)
            else:
                out.append(Run(font, ch))
    return tuple(out)


def _words(text: str) -> list[str]:
    """Words and the spaces between them, in order: "Ann Lee" -> ["Ann", " ", "Lee"]."""
    parts: list[str] = []
    for ch in text:
        if parts and (ch == " ") == (parts[-1][-1] == " "):
            parts[-1] += ch
        else:
            parts.append(ch)
    return parts


def line_height(text: str) -> int:
    return TALL if any(r.font != "small" for r in runs(text)) else SMALL


def _run_width(run: Run) -> int:
    if run.font == "small":
        return len(run.text) * SMALL_ADVANCE
    if run.font == "missing":
        return sum(0 if unicodedata.combining(ch) else _box_width(ch) for ch in run.text)
    font = _unifont(run.font)
    assert font is not None
    return int(font.getlength(run.text))


def _box_width(ch: str) -> int:
    return 12 if unicodedata.east_asian_width(ch) in ("W", "F") or ord(ch) > 0xFFFF else 6


def width(text: str) -> int:
    """Pixels across when drawn."""
    return sum(_run_width(r) for r in runs(text))


@lru_cache(maxsize=256)
def line_image(text: str, height: int | None = None) -> Image.Image:
    """``text`` as a 1-bit strip ``height`` pixels tall (its own line height by default),
    letters on one baseline whatever font draws them. Cached (a box draws the same names
    after every press): the strip is shared, so callers paste or copy it, never draw on it."""
    parts = runs(text)
    tall = any(r.font != "small" for r in parts)
    height = height or (TALL if tall else SMALL)
    baseline = BASELINE_TALL if height >= TALL else BASELINE_SMALL
    strip = Image.new("1", (max(1, sum(_run_width(r) for r in parts)), height), 0)
    draw = ImageDraw.Draw(strip)
    x = 0
    for run in parts:
        w = _run_width(run)
        if run.font == "small":
            draw.text((x, baseline - BASELINE_SMALL), run.text, font=small_font(), fill=1)
        elif run.font == "missing":
            _boxes(draw, x, baseline, run.text)
        else:
            font = _unifont(run.font)
            draw.text((x, baseline - BASELINE_TALL), run.text, font=font, fill=1)
        x += w
    return strip


def _boxes(draw: ImageDraw.ImageDraw, x: int, baseline: int, text: str) -> None:
    """A hollow box per character nothing here can draw: seen, and not taken for a letter."""
    for ch in text:
        if unicodedata.combining(ch):
            continue
        w = _box_width(ch)
        draw.rectangle((x + 1, baseline - 8, x + w - 2, baseline - 1), outline=1)
        x += w


@lru_cache(maxsize=1024)
def fit(text: str, pixels: int) -> str:
    """``text`` cut to draw within ``pixels`` across, a "~" where it was cut (whole letters with
    their marks; the cut is at the end of the name as it is written)."""
    if width(text) <= pixels:
        return text
    text = unicodedata.normalize("NFC", text)
    allowed = pixels - SMALL_ADVANCE
    cut = ""
    for i in range(1, len(text) + 1):
        if i < len(text) and unicodedata.combining(text[i]):
            continue
        if width(text[:i]) > allowed:
            break
        cut = text[:i]
    return cut + "~"
