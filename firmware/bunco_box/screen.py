"""The table box's OLED: the Pi box's screens (``layout``) drawn with ``framebuf`` in the Pi
box's own glyphs (``font.bin``, read by ``bitfont``). The SSD1306 and SH1106 drivers are
framebufs, so they are drawn on directly; the tests draw on a framebuf of their own."""

import bitfont
import layout


class BuiltinFont:
    """framebuf's own 8x8 letters: the screens still show (cruder) when font.bin is missing."""

    def width(self, text):
        return 8 * len(str(text))

    def line_height(self, text):
        return 11

    def fit(self, text, pixels):
        text = str(text)
        if len(text) * 8 <= pixels:
            return text
        return text[:max(0, pixels // 8 - 1)] + "~"

    def draw(self, fb, x, y, text, scale=1, colour=1):
        fb.text(str(text), x, y + 1, colour)  # scaled text: drawn small, in its place
        return 8 * len(str(text)) * scale


class Screen:
    def __init__(self, fb, font_path="font.bin", opener=open):
        self.fb = fb
        self.problem = None
        try:
            self.font = bitfont.BitFont(font_path, opener)
        except OSError as exc:
            self.font = BuiltinFont()
            self.problem = ("%s: cannot open it (%s): bunco-pi pico flash copies it; drawing "
                            "with framebuf's letters" % (font_path, exc))
        except bitfont.FontError as exc:
            self.font = BuiltinFont()
            self.problem = "%s; drawing with framebuf's letters" % exc

    def draw(self, view):
        self.fb.fill(0)
        bitfont.paint(self.fb, layout.ops(view, self.font), self.font)


def texts(view, font):
    """The text of each thing drawn, in order (the tests' and the log's reading of a frame)."""
    return [op[3] for op in layout.ops(view, font) if op[0] == "text"]
