"""The Pico table box draws the Pi box's screens: the same layout (``layout.py``) drawn with
MicroPython's ``framebuf`` and the font file ``bunco-pi pico flash`` writes (``bitfont``), pixel
for pixel against the Pi box's golden screens (``screens.render``, Pillow and ``boxfont``)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from bunco_pi.table import bitfont, bitfont_file, boxfont, gallery, layout, screens
from tests.pico_boxes import micropython

ROOT = Path(__file__).resolve().parent.parent
DRAW = ROOT / "tests" / "micropython" / "draw_screens.py"
# The scripts the Pico's font file carries (bitfont_file.TALL_RANGES): drawn exactly as on a Pi.
COVERED = ("apostrophe", "cyrillic", "greek", "polish", "czech", "vietnamese")
# Beyond it: hollow boxes, exactly as on a Pi box without Unifont.
BOXED = ("cjk", "emoji", "arabic-hebrew")
TIMED = {
    "timer": screens.PlayingView(table=3, target=21, score_a=12, score_b=7, roller="Ann",
                                 roller_team="A", set_number=2, timer="4:59"),
    "timer-warn": screens.PlayingView(table=3, target=21, score_a=12, score_b=7,
                                      roller="Ann", roller_team="A", timer="0:09!"),
    "timer-bell": screens.PlayingView(table=3, target=21, score_a=21, score_b=7,
                                      roller="Ann", roller_team="A", bell=True, timer="0:00"),
    "round-over": screens.PlayingView(table=3, target=21, score_a=21, score_b=7,
                                      roller="Ann", roller_team="A", flash="round over here"),
    "offline": screens.PlayingView(table=3, target=21, score_a=4, score_b=7, roller="Ann",
                                   roller_team="A", warning="offline, 2 waiting"),
    "next-seat": screens.ResultsView(table=3, won=True, score_a=21, score_b=7,
                                     moves=("Ann -> T2 S1", "Cat -> T2 S3"),
                                     hint="next: T2 seat 1"),
    "refused": screens.WaitingView(table=3, players=("Ann", "Bea", "Cat", "Dot"),
                                   message="no round on: wait"),
    "error": screens.ErrorView("box.json", layout.wrap("box.json: missing key 'password'")),
}


def views(scripts: tuple[str, ...]) -> dict[str, screens.View]:
    out: dict[str, screens.View] = {}
    for script in scripts:
        for name, view in gallery.name_views(gallery.NAME_SCRIPTS[script]).items():
            out[f"{script}/{name}"] = view
    return out


@pytest.fixture(scope="module")
def font_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not boxfont.has_unifont():
        pytest.skip("GNU Unifont is not installed (fonts-unifont): the golden screens need it")
    path = tmp_path_factory.mktemp("pico") / "font.bin"
    path.write_bytes(bitfont_file.build())
    return path


@pytest.fixture
def no_unifont(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The Pi box as it draws without Unifont installed."""
    def clear() -> None:
        for cached in (boxfont.runs, boxfont.line_image, boxfont.fit, boxfont._has_glyph):
            cached.cache_clear()

    monkeypatch.setattr(boxfont, "_unifont", lambda which: None)
    clear()
    yield
    monkeypatch.undo()
    clear()


def pico_frames(font: Path, shown: dict[str, screens.View], tmp_path: Path) -> dict[str, bytes]:
    """Each view drawn by the Pico's code under MicroPython's unix port: framebuf's bytes."""
    exe = micropython()
    (tmp_path / "views.json").write_text("".join(json.dumps(screens.as_layout(v)) + "\n"
                                                 for v in shown.values()))
    for name in ("layout.py", "bitfont.py"):
        (tmp_path / name).write_bytes((ROOT / "bunco_pi" / "table" / name).read_bytes())
    done = subprocess.run([exe, "-X", "heapsize=128k", str(DRAW), str(font),
                           str(tmp_path / "views.json")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"MICROPYPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr + done.stdout
    lines = done.stdout.split()
    assert len(lines) == len(shown)
    return {name: bytes.fromhex(line) for name, line in zip(shown, lines, strict=True)}


def as_image(vlsb: bytes) -> Image.Image:
    """framebuf's MONO_VLSB (a byte is 8 pixels down a column; the OLED's own order)."""
    image = Image.new("1", (128, 64), 0)
    px = image.load()
    for page in range(8):
        for x in range(128):
            byte = vlsb[page * 128 + x]
            for bit in range(8):
                if byte >> bit & 1:
                    px[x, page * 8 + bit] = 1
    return image


def differing(a: Image.Image, b: Image.Image) -> int:
    pa, pb = a.load(), b.load()
    return sum(1 for y in range(64) for x in range(128) if bool(pa[x, y]) != bool(pb[x, y]))


def test_the_pico_draws_every_pi_box_screen_pixel_for_pixel(font_file: Path,
                                                             tmp_path: Path) -> None:
    shown = {**gallery.SAMPLES, **TIMED, **views(COVERED)}
    frames = pico_frames(font_file, shown, tmp_path)
    wrong = {name: differing(as_image(frames[name]), screens.render(view))
             for name, view in shown.items()}
    assert {k: v for k, v in wrong.items() if v} == {}
    # and the frames are screens, not blanks that happen to agree
    assert all(sum(frames[name]) > 0 for name in shown)


def test_beyond_its_font_the_pico_draws_what_a_pi_box_without_unifont_does(
        font_file: Path, tmp_path: Path, no_unifont: None) -> None:
    shown = views(BOXED)
    frames = pico_frames(font_file, shown, tmp_path)
    wrong = {name: differing(as_image(frames[name]), screens.render(view))
             for name, view in shown.items()}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_a_difference_that_is_documented_combining_marks_are_boxes_on_the_pico(
        font_file: Path) -> None:
    # docs/table-box.md: the Pico has no unicodedata to compose "o" + U+0323 into "ọ" (the Pi
    # box does, NFC), so each mark is a hollow box after its letter; typed precomposed, the
    # name draws as on the Pi box.
    font = bitfont.BitFont(font_file)
    decomposed, composed = "Fo\u0323la\u0301", "F\u1ecdl\u00e1"
    assert font.runs(decomposed) == [("small", "Fo"), ("missing", "\u0323"),
                                     ("small", "la"), ("missing", "\u0301")]
    assert font.width(decomposed) == 6 * 6
    assert font.width(composed) == boxfont.width(composed) == 4 * 8
    assert font.line_height(composed) == boxfont.line_height(composed) == 16


@pytest.mark.parametrize("text", ["Ann", "Ann Lee", "O\u2019Brien", "Наташа Ольга", "Łucja Ż",
                                  "Nguyễn Thị Hương", "+1 Ann", "\u00e9t\u00e9 \u00a0x",
                                  "soft\u00adhyphen", "x" * 40, "Наташа" * 5])
def test_the_font_file_measures_text_as_the_pi_box(font_file: Path, text: str) -> None:
    font = bitfont.BitFont(font_file)
    assert font.width(text) == boxfont.width(text)
    assert font.line_height(text) == boxfont.line_height(text)
    for pixels in (30, 60, 126):
        assert font.fit(text, pixels) == boxfont.fit(text, pixels)


@pytest.mark.parametrize("text", ["王秀英", "Ann 🎲", "Bea 👩\u200d👧", "Dot ✨", "שרה", "김민지" * 4])
def test_beyond_the_file_text_measures_as_a_pi_box_without_unifont(
        font_file: Path, no_unifont: None, text: str) -> None:
    font = bitfont.BitFont(font_file)
    assert font.width(text) == boxfont.width(text)
    assert font.line_height(text) == boxfont.line_height(text)
    for pixels in (30, 60, 126):
        assert font.fit(text, pixels) == boxfont.fit(text, pixels)


def test_a_file_that_is_not_a_font_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "font.bin"
    path.write_bytes(b"not a font")
    with pytest.raises(bitfont.FontError, match="not a bunco-pi font file"):
        bitfont.BitFont(str(path))


class _Ops:
    """framebuf's methods, recorded: what paint asks of the OLED."""

    def __init__(self) -> None:
        self.image = Image.new("1", (128, 64), 0)
        self.calls: list[tuple[Any, ...]] = []

    def pixel(self, x: int, y: int, c: int) -> None:
        if 0 <= x < 128 and 0 <= y < 64:
            self.image.putpixel((x, y), c)

    def fill_rect(self, x: int, y: int, w: int, h: int, c: int) -> None:
        self.calls.append(("fill_rect", x, y, w, h, c))
        ImageDraw.Draw(self.image).rectangle((x, y, x + w - 1, y + h - 1), fill=c)

    def rect(self, x: int, y: int, w: int, h: int, c: int) -> None:
        ImageDraw.Draw(self.image).rectangle((x, y, x + w - 1, y + h - 1), outline=c)

    def line(self, x0: int, y0: int, x1: int, y1: int, c: int) -> None:
        ImageDraw.Draw(self.image).line((x0, y0, x1, y1), fill=c)


def test_the_timer_has_its_place_in_the_shared_layout(font_file: Path) -> None:
    font = bitfont.BitFont(font_file)
    view = screens.as_layout(TIMED["timer"])
    texts = [op for op in layout.ops(view, font) if op[0] == "text"]
    corner = [op for op in texts if op[3] == "to 21 4:59"]
    assert corner, texts
    # right-aligned in the header, drawn inverse, as the target is without a timer
    assert corner[0][1] + font.width("to 21 4:59") == 126 and corner[0][2] == 1
    assert corner[0][5] == 0
    untimed = screens.as_layout(screens.PlayingView(table=3, target=21, score_a=12, score_b=7,
                                                    roller="Ann", roller_team="A"))
    assert "target 21" in [op[3] for op in layout.ops(untimed, font) if op[0] == "text"]
    # Pillow and a framebuf carry out the same operations the same way
    fb = _Ops()
    bitfont.paint(fb, layout.ops(view, font), font)
    assert differing(fb.image, screens.render(TIMED["timer"])) == 0


@pytest.mark.parametrize(("timer", "elapsed", "shown"), [
    ({"phase": "round", "left": 299.0, "total": 900.0}, 0.0, "4:59"),
    ({"phase": "round", "left": 299.0, "total": 900.0}, 60.5, "3:59"),
    ({"phase": "round", "left": 5.0, "total": 900.0}, 4.8, "0:01"),
    ({"phase": "warn", "left": 9.2, "total": 60.0}, 0.0, "0:10!"),
    ({"phase": "warn", "left": 9.2, "total": 60.0}, 30.0, "0:00!"),
    ({"phase": "pause", "left": 125.0, "total": 900.0}, 500.0, "paused 2:05"),
    ({"phase": "move", "left": 45.0, "total": 60.0}, 15.0, "move 0:30"),
    ({"phase": "round", "left": 3725.0, "total": 4000.0}, 0.0, "62:05"),
    (None, 0.0, ""),
    ({"phase": "later", "left": 5.0}, 0.0, ""),
    ({"phase": "round", "left": "soon"}, 0.0, ""),
])
def test_the_clock_counts_down_from_what_the_head_said(timer: Any, elapsed: float,
                                                       shown: str) -> None:
    assert layout.timer_text(timer, elapsed) == shown


def test_a_long_problem_wraps_onto_the_error_screen() -> None:
    lines = layout.wrap("broker refused: not authorised (check the password)")
    assert lines == ("broker refused: not", "authorised (check", "the password)")
    assert all(len(line) <= layout.MAX_CHARS - 1 for line in lines)
    assert layout.wrap("x" * 45) == ("x" * 20, "x" * 20, "x" * 5)


def test_without_its_font_file_the_box_still_draws_its_screens_and_says_so(tmp_path: Path,
                                                                           font_file: Path
                                                                           ) -> None:
    from bunco_pi.pico import lay_out

    exe = micropython()
    flash = lay_out(tmp_path / "flash")
    script = tmp_path / "no_font.py"
    script.write_text(
        "import framebuf\n"
        "from bunco_box import screen\n"
        "buf = bytearray(1024)\n"
        "fb = framebuf.FrameBuffer(buf, 128, 64, framebuf.MONO_VLSB)\n"
        "for path in ('missing.bin', 'box.json'):\n"
        "    s = screen.Screen(fb, path)\n"
        "    print(s.problem)\n"
        "    s.draw({'screen': 'playing', 'table': 3, 'target': 4, 'score_a': 3,\n"
        "            'score_b': 5, 'roller': 'Ann', 'roller_team': 'A'})\n"
        "    print(sum(bin(b).count('1') for b in buf))\n")
    (flash / "box.json").write_text("{}")
    done = subprocess.run([exe, "-X", "heapsize=160k", str(script)], cwd=flash,
                          capture_output=True, text=True, timeout=60,
                          env={"MICROPYPATH": f"{flash}:{flash / 'lib'}"})
    assert done.returncode == 0, done.stdout + done.stderr
    missing, lit, corrupt, lit_again = done.stdout.splitlines()
    assert missing.startswith("missing.bin: cannot open it (") and missing.endswith(
        "bunco-pi pico flash copies it; drawing with framebuf's letters")
    assert corrupt == ("box.json: not a bunco-pi font file (bunco-pi pico flash writes one); "
                       "drawing with framebuf's letters")
    assert int(lit) > 200 and int(lit_again) == int(lit)  # the screen, in framebuf's letters
