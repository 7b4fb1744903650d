"""Where everything on the table's 128x64 OLED goes: one layout for both table boxes.

The Pi box (``screens.py``, drawn with Pillow) and the Pico table box (``firmware/bunco_box/
screen.py``, drawn with MicroPython's ``framebuf``) both turn a view into the same list of draw
operations here, so the two boxes show the same screens, pixel for pixel where their fonts
have the same glyphs. MicroPython runs this file unchanged (it is copied onto the Pico beside
the firmware): no imports, no typing, no dataclasses.

A view is a dict: ``{"screen": "playing", ...}`` with the fields of ``screens.py``'s view of
that name (``WaitingView`` is "waiting", ``PlayingView`` "playing", ``ResultsView`` "results",
``BreakView`` "break", ``EndView`` "end", ``ErrorView`` "error").

``font`` is what measures text: ``width(text)``, ``line_height(text)`` and ``fit(text,
pixels)``, in pixels of the small 6x11 font or the 16-pixel tall one (the Pi box's
``boxfont``, the Pico's ``bitfont``).

The operations, coordinates inclusive as Pillow's:

- ``("fill", x0, y0, x1, y1, colour)``: a filled rectangle;
- ``("frame", x0, y0, x1, y1, colour)``: a rectangle's outline;
- ``("line", x0, y0, x1, y1, colour)``: a horizontal or vertical line;
- ``("text", x, y, text, scale, colour)``: text with its top-left at x, y, each font pixel
  ``scale`` screen pixels square (only the pixels of the letters are drawn).
"""

WIDTH, HEIGHT = 128, 64
LINE = 11  # the small font's line height in pixels
TALL = 16  # a line with a glyph of the tall font
ADVANCE = 6  # the small font's letters are this wide
MAX_CHARS = 21  # characters of small text across the screen


def ops(view, font):
    """The draw operations of ``view`` (a dict, see above), in the order they are drawn."""
    out = _Canvas(font)
    _SCREENS[view["screen"]](out, view)
    return out.ops


def timer_text(timer, elapsed):
    """The scoring screen's clock for the head's ``timer`` (``{"phase", "left", "total"}``, as
    received ``elapsed`` seconds ago): "4:59" counting down, "paused 4:59" while the head
    holds it, "move 0:45" in the move break, "0:09!" in the warning; "" for no timer."""
    if not isinstance(timer, dict):
        return ""
    phase = timer.get("phase")
    left = timer.get("left")
    if not isinstance(left, (int, float)) or phase not in ("round", "warn", "pause", "move"):
        return ""
    if phase != "pause":
        left = left - elapsed
    seconds = int(left + 0.999) if left > 0 else 0  # 0.2 s left still reads 0:01
    clock = "%d:%02d" % (seconds // 60, seconds % 60)
    if phase == "pause":
        return "paused " + clock
    if phase == "move":
        return "move " + clock
    return clock + "!" if phase == "warn" else clock


class _Canvas:
    def __init__(self, font):
        self.font = font
        self.ops = []

    def fit(self, text, chars=MAX_CHARS):
        """``text`` cut to the width of ``chars`` small letters (a wide letter counts two)."""
        return self.font.fit(text, chars * ADVANCE)

    def tall(self, texts):
        return any(self.font.line_height(text) > LINE for text in texts)

    def width(self, text, scale=1):
        return self.font.width(text) * scale

    def text(self, x, y, text, scale=1, colour=1):
        self.ops.append(("text", x, y, text, scale, colour))

    def fill(self, x0, y0, x1, y1, colour=1):
        self.ops.append(("fill", x0, y0, x1, y1, colour))

    def frame(self, x0, y0, x1, y1, colour=1):
        self.ops.append(("frame", x0, y0, x1, y1, colour))

    def line(self, x0, y0, x1, y1, colour=1):
        self.ops.append(("line", x0, y0, x1, y1, colour))

    def centered(self, y, text, scale=1, colour=1):
        self.text((WIDTH - self.width(text, scale)) // 2, y, text, scale, colour)

    def header(self, left, right=""):
        self.fill(0, 0, WIDTH - 1, LINE)
        self.text(2, 1, self.fit(left, 14), colour=0)
        if right:
            self.text(WIDTH - 2 - self.width(right), 1, right, colour=0)

    def footer_top(self, text):
        """Where the footer starts: a line with a tall glyph takes 16 pixels, not 11."""
        return HEIGHT - self.font.line_height(self.fit(text))

    def footer(self, text, inverse=False):
        text = self.fit(text)
        top = self.footer_top(text)
        if inverse:
            self.fill(0, top - 1, WIDTH - 1, HEIGHT - 1)
        self.text(2, top, text, colour=0 if inverse else 1)

    def rows(self, top, bottom, lines, x=2, pitch=10, chars=MAX_CHARS):
        """Lines from ``top`` down, each ``pitch`` pixels apart or its own height if taller,
        as many as end above ``bottom``."""
        y = top
        for line in lines:
            text = self.fit(line, chars)
            height = self.font.line_height(text)
            if y + height > bottom:
                break
            self.text(x, y, text)
            y += pitch if height <= LINE else height


def _waiting(c, view):
    c.header("TABLE %d" % view["table"], "seats")
    players = view["players"]
    rows = []
    for seat in range(1, len(players) + 1):
        rows.append(c.fit("%d %s %s" % (seat, "A" if seat % 2 else "B", players[seat - 1])))
    if not c.tall(rows):
        for seat in range(1, len(rows) + 1):
            c.text(2, LINE + 2 + (seat - 1) * 10, rows[seat - 1])
    else:
        # Four 16-pixel rows do not fit under the header: two seats a row, each half the width.
        for seat in range(1, len(players) + 1):
            x = 2 if seat % 2 else WIDTH // 2 + 1
            y = LINE + 2 + (seat - 1) // 2 * TALL
            c.text(x, y, c.fit("%d %s" % (seat, players[seat - 1]), 10))
    c.footer(view.get("message", "waiting for round"))


def _playing(c, view):
    bell = view.get("bell", False)
    timer = view.get("timer", "")
    c.header("SET %d T%d" % (view.get("set_number", 1), view["table"]),
             _playing_corner(view["target"], bell, timer))
    seat_scores = view.get("seat_scores")
    roller_seat = view.get("roller_seat", 1)
    if view.get("warning"):
        footer, inverse = view["warning"], True
    elif view.get("flash"):
        footer, inverse = view["flash"], True
    else:
        rolls = "finishes" if bell else "rolls"
        who = roller_seat if seat_scores is not None else view["roller_team"]
        footer, inverse = "{}> {} {}".format(who, view["roller"], rolls), False
    bottom = min(48, c.footer_top(footer) - 2)
    if seat_scores is not None:
        _seat_scores(c, seat_scores, roller_seat, bottom)
    else:
        # Both team scores, three pixels per font pixel: about 10 mm tall on a 0.96" screen.
        for x0, label, score in ((0, "A", view["score_a"]), (64, "B", view["score_b"])):
            digits = str(score)
            scale = 3 if len(digits) <= 2 else 2
            c.text(x0 + 2, 16, label)
            width = c.width(digits, scale)
            c.text(x0 + 10 + (54 - width) // 2, 15, digits, scale)
        c.line(63, 14, 63, bottom)
    c.footer(footer, inverse)


def _playing_corner(target, bell, timer):
    """The scoring screen's top right: the bell, else the target, and the round's clock
    beside it when the head runs timed rounds."""
    if bell:
        return "BELL!" if not timer else "BELL! " + timer
    if timer:
        return f"to {target} {timer}"
    return f"target {target}"


def _seat_scores(c, scores, roller_seat, bottom=48):
    """Four columns, one per seat, twice-size digits; the roller's column drawn inverse."""
    for seat in range(1, len(scores) + 1):
        score = scores[seat - 1]
        x0 = (seat - 1) * 32
        inverse = seat == roller_seat
        if inverse:
            c.fill(x0 + 1, 14, x0 + 30, bottom)
        colour = 0 if inverse else 1
        c.text(x0 + 12, 15, str(seat), colour=colour)
        digits = str(score)
        scale = 2 if len(digits) <= 2 else 1
        c.text(x0 + (32 - c.width(digits, scale)) // 2, 27, digits, scale, colour)


def _results(c, view):
    headline = view.get("headline") or ("A WON" if view["won"] else "B WON")
    moves = tuple(view.get("moves", ())[:2])
    hint = view.get("hint", "")
    score = "{}-{}".format(view["score_a"], view["score_b"])
    bottom = c.footer_top(hint) - 1 if hint else HEIGHT
    if not c.tall([c.fit(headline, 10)] + [c.fit(m) for m in moves]):
        c.header("TABLE %d" % view["table"], score)
        c.centered(LINE + 1, c.fit(headline, 10), scale=2)
        y = LINE + 1 + 2 * LINE
        for line in moves:
            c.text(2, y, c.fit(line))
            y += 9
    elif view.get("headline"):
        # A name in a tall script: the headline at its own height, then the moves that fit.
        c.header("TABLE %d" % view["table"], score)
        c.rows(LINE + 2, bottom, (view["headline"],) + moves)
    else:
        c.header("T%d %s" % (view["table"], headline), score)
        c.rows(LINE + 2, bottom, moves)
    if hint:
        c.footer(hint, inverse=True)


def _break(c, view):
    c.header("BUNCO")
    message = c.fit(view.get("message", "break").upper(), 10)
    c.centered(LINE + 6, message, scale=2 if not c.tall([message]) else 1)
    if view.get("detail"):
        c.footer(view["detail"])


def _end(c, view):
    lines = tuple(c.fit(f"{prize}: {winner}") for prize, winner in
                  view.get("prizes", ())[:4])
    height = 0
    for line in lines:
        height += c.font.line_height(line)
    if height <= HEIGHT - LINE - 2:
        c.header("THE END", "prizes")
        c.rows(LINE + 2, HEIGHT, lines)
    else:
        # Four prizes won by names in a tall script: the prizes say it is the end.
        c.rows(0, HEIGHT, lines)


def _error(c, view):
    c.frame(0, 0, WIDTH - 1, HEIGHT - 1)
    c.centered(2, c.fit(view["title"].upper(), MAX_CHARS - 1))
    c.line(2, LINE + 3, WIDTH - 3, LINE + 3)
    c.rows(LINE + 5, HEIGHT - 1, tuple(view.get("lines", ())[:4]), x=3, chars=MAX_CHARS - 1)


def wrap(text, chars=MAX_CHARS - 1, lines=4):
    """``text`` in lines of at most ``chars`` characters, broken at spaces where it can (an
    error screen's problem, which the box knows as one line)."""
    out = []
    words = str(text).split(" ")
    line = ""
    for word in words:
        while len(word) > chars:
            if line:
                out.append(line)
                line = ""
            out.append(word[:chars])
            word = word[chars:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= chars:
            line = line + " " + word
        else:
            out.append(line)
            line = word
    if line:
        out.append(line)
    return tuple(out[:lines])


_SCREENS = {
    "waiting": _waiting,
    "playing": _playing,
    "results": _results,
    "break": _break,
    "end": _end,
    "error": _error,
}
