"""The electronic dice tray: what it sends, when, and with which seq.

Plain Python that runs on MicroPython (on the Pico, beside main.py) and on CPython (in tests
and in host_emulator.py).  Everything that touches hardware comes in as an argument: the
clock readings, the button state, a function that returns random bytes, a function that
sends a line, the file system calls and an optional screen.  So: no ``machine``, no
``time``, no dataclasses or typing (MicroPython has neither).

The protocol is docs/dice-sensor-protocol.md, version 2: ``HELLO``, ``ROLLING``, ``ROLL``,
``ERR``, each line ending in ``*HHHH`` (the CRC-16/CCITT-FALSE of the bytes before ``*``)
and ``\\n``; ``HELLO`` announces ``proto=2``.
"""

VERSION = "2.0.0"
PROTOCOL = 2
SEQ_MODULUS = 65536
MAX_LINE = 80  # bytes before the newline, checksum included

# Seqs are leased from flash in blocks: one flash write per SEQ_BLOCK rolls.
SEQ_BLOCK = 64

TUMBLE_MS = 900  # how long the dice "tumble" on screen before they settle
FRAME_MS = 90  # a new random face this often while tumbling
DEBOUNCE_MS = 30  # a button level must hold this long to count
HELLO_EVERY_MS = 5000  # repeat HELLO until the first roll, for a host that opens late


# --- the wire ---------------------------------------------------------------------------------


def crc16(data):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), bit by bit.

    MicroPython's binascii has no crc_hqx, and a 256-entry table costs RAM for lines of
    twenty-odd bytes: eight shifts a byte is quick enough between two rolls.
    """
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def checksum(body):
    return f"{crc16(body.encode()):04X}"


def line(body):
    return body + "*" + checksum(body) + "\n"


def hello_line(version=VERSION):
    return line("HELLO " + version + " proto=" + str(PROTOCOL))


def rolling_line():
    return line("ROLLING")


def roll_line(seq, dice):
    return line(f"ROLL {seq} {dice[0]} {dice[1]} {dice[2]}")


def err_line(text):
    # Printable ASCII only, no '*' (readers split the checksum at the last '*'), and short
    # enough for a reader's 80-byte limit.
    clean = "".join(c if " " <= c <= "~" and c != "*" else "?" for c in str(text)).strip()
    room = MAX_LINE - len("ERR ") - len("*HHHH")
    return line("ERR " + (clean[:room] or "unknown error"))


# --- dice --------------------------------------------------------------------------------------


def die(random_bytes):
    """One fair face 1..6 from a source of random bytes (``os.urandom`` on the Pico).

    252 = 42 * 6 is the largest multiple of 6 that fits in a byte: bytes 252..255 are
    thrown away so every face has exactly 42 chances in 252.
    """
    for _ in range(64):  # P(64 rejections in a row) = (4/256)**64: never, but bounded
        byte = random_bytes(1)[0]
        if byte < 252:
            return byte % 6 + 1
    return byte % 6 + 1


def three_dice(random_bytes):
    return (die(random_bytes), die(random_bytes), die(random_bytes))


# --- seqs that survive a reset --------------------------------------------------------------


class SeqStore:
    """Hands out seqs 0..65535 (wrapping) that are never reused, even across a power cut.

    Flash holds one number: the first seq NOT yet leased.  Before the tray uses a new block
    of SEQ_BLOCK seqs it writes the end of that block, so after a reset it starts there:
    at most SEQ_BLOCK - 1 seqs are skipped (readers accept gaps), none is ever sent twice.

    Writes: one per SEQ_BLOCK rolls, and one for the first roll after each boot (a boot
    with no roll writes nothing, so a boot loop cannot wear the flash).  Each write goes to
    ``<path>.new`` first and is renamed over ``<path>`` (atomic on LittleFS and POSIX), so a
    power cut leaves either the old number or the new one, never half a file.
    """

    def __init__(self, path, fs, opener=open, block=SEQ_BLOCK):
        self.path = path
        self._fs = fs  # os module (or stand-in): rename, and sync if it has one
        self._open = opener
        self._block = block
        self.problem = None  # one line for an ERR message, then cleared by the caller
        self.writes = 0
        self._next = self._load()
        self._leased = 0  # seqs left in the current block

    def _load(self):
        try:
            with self._open(self.path) as f:
                text = f.read().strip()
        except OSError:
            return 0  # first boot: nothing saved yet
        if text.isdigit() and int(text) < SEQ_MODULUS:
            return int(text)
        self.problem = "seq file unreadable, counting from 0"
        return 0

    def peek(self):
        """The seq the next roll will get (without leasing it)."""
        return self._next

    def take(self):
        """The next seq; leases a new block in flash first when the current one is used up."""
        if self._leased == 0:
            self._save((self._next + self._block) % SEQ_MODULUS)
            self._leased = self._block
        seq = self._next
        self._next = (self._next + 1) % SEQ_MODULUS
        self._leased -= 1
        return seq

    def _save(self, value):
        tmp = self.path + ".new"
        try:
            with self._open(tmp, "w") as f:
                f.write(f"{value}\n")
            self._fs.rename(tmp, self.path)
            if hasattr(self._fs, "sync"):
                self._fs.sync()
            self.writes += 1
        except OSError as exc:
            # Keep rolling: a lost lease only risks reusing seqs after the next reset.
            self.problem = f"seq save failed: {exc}"


# --- the screen ---------------------------------------------------------------------------------

# Pip positions on a 3x3 grid (column, row) for each face.
PIPS = {
    1: ((1, 1),),
    2: ((0, 0), (2, 2)),
    3: ((0, 0), (1, 1), (2, 2)),
    4: ((0, 0), (2, 0), (0, 2), (2, 2)),
    5: ((0, 0), (2, 0), (1, 1), (0, 2), (2, 2)),
    6: ((0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)),
}

DIE_SIZE = 36
DIE_TOP = 22
DIE_LEFTS = (4, 46, 88)
PIP_SIZE = 6


def draw(fb, dice, caption):
    """Draw a caption and three dice on a 128x64 monochrome frame buffer.

    ``fb`` is anything with MicroPython framebuf's ``fill``, ``rect``, ``fill_rect`` and
    ``text`` (an SSD1306 driver object is one).  The caller calls ``show()``.
    """
    fb.fill(0)
    fb.text(caption[:16], 0, 4, 1)
    for i in range(3):  # no zip(strict=) on MicroPython
        left, face = DIE_LEFTS[i], dice[i]
        fb.rect(left, DIE_TOP, DIE_SIZE, DIE_SIZE, 1)
        for col, row in PIPS[face]:
            x = left + 9 * (col + 1) - PIP_SIZE // 2
            y = DIE_TOP + 9 * (row + 1) - PIP_SIZE // 2
            fb.fill_rect(x, y, PIP_SIZE, PIP_SIZE, 1)


# --- the tray ---------------------------------------------------------------------------------

IDLE = "idle"
TUMBLING = "tumbling"


def _plain_diff(a, b):
    return a - b


class Tray:
    """The dice tray's behaviour, driven by ``tick(now_ms, pressed)`` from a polling loop.

    A press (held DEBOUNCE_MS) while idle starts a roll: ``ROLLING`` is sent and the screen
    shows random faces for TUMBLE_MS; then three dice are drawn, a seq is taken, ``ROLL`` is
    sent and the dice stay on screen.  Presses while tumbling are ignored; the button must
    be released before it can roll again (holding it down rolls once).
    """

    def __init__(
        self,
        send,
        random_bytes,
        seqs,
        show=None,
        ticks_diff=_plain_diff,
        tumble_ms=TUMBLE_MS,
        version=VERSION,
    ):
        self._send = send  # send(str): one whole line, newline included
        self._random = random_bytes
        self._seqs = seqs
        self._show = show  # show(dice, caption) or None
        self._diff = ticks_diff  # time.ticks_diff on MicroPython: ticks wrap around
        self._tumble_ms = tumble_ms
        self.version = version
        self.state = IDLE
        self.dice = (1, 1, 1)
        self.rolls = 0
        self._raw = False
        self._raw_since = 0
        self._pressed = False
        self._armed = True  # released since the last roll
        self._started = 0
        self._first_frame = True
        self._last_frame = 0
        self._last_hello = 0

    def boot(self, now):
        self._last_hello = now
        self._send(hello_line(self.version))
        self._report_store_problem()
        self._display(self.dice, "press to roll")

    def report(self, text):
        """Tell the host about a problem (no display, a failed flash write...)."""
        self._send(err_line(text))

    def tick(self, now, pressed):
        if self._debounced(now, pressed):
            if self._pressed and self._armed and self.state == IDLE:
                self._armed = False
                self._start_roll(now)
            elif not self._pressed:
                self._armed = True
        if self.state == TUMBLING:
            self._tumble(now)
        elif self.rolls == 0 and self._diff(now, self._last_hello) >= HELLO_EVERY_MS:
            self._last_hello = now
            self._send(hello_line(self.version))

    def _debounced(self, now, pressed):
        """True when the debounced button level has just changed."""
        if pressed != self._raw:
            self._raw = pressed
            self._raw_since = now
        if self._raw != self._pressed and self._diff(now, self._raw_since) >= DEBOUNCE_MS:
            self._pressed = self._raw
            return True
        return False

    def _start_roll(self, now):
        self.state = TUMBLING
        self._started = now
        self._first_frame = True
        self._send(rolling_line())

    def _tumble(self, now):
        if self._diff(now, self._started) >= self._tumble_ms:
            self._settle()
        elif self._first_frame or self._diff(now, self._last_frame) >= FRAME_MS:
            self._first_frame = False
            self._last_frame = now
            self._display(three_dice(self._random), "rolling...")

    def _settle(self):
        self.dice = three_dice(self._random)
        seq = self._seqs.take()
        self._report_store_problem()
        self._send(roll_line(seq, self.dice))
        self.rolls += 1
        self.state = IDLE
        self._display(self.dice, f"roll #{seq}")

    def _report_store_problem(self):
        if self._seqs.problem:
            self.report(self._seqs.problem)
            self._seqs.problem = None

    def _display(self, dice, caption):
        if self._show is not None:
            self._show(dice, caption)
