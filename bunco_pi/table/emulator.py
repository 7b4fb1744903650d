"""``bunco-pi table --emulate``: a table box in a terminal, for people without the hardware.

Underneath it is the real box: gpiozero buttons on MockFactory pins and a luma ``dummy``
display. A key press drives the mock pin low and high again, exactly what a finger does to a
real button, so the same debounce, gestures, node and screens run. The OLED frame is drawn
with quadrant block characters, pixel for pixel.

With a terminal, curses draws the screen live. With stdin not a terminal (a pipe, a script),
every character read is a key press and each new frame is printed as text: handy to script
a demo or a test.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from bunco_pi.table.blocks import to_blocks
from bunco_pi.table.events import DiceRoll

# key -> (button, gesture); "roll" throws three virtual dice into the dice-sensor path.
KEYS: dict[str, tuple[str, str]] = {
    "p": ("point", "tap"),
    "1": ("point", "tap"),
    "t": ("three", "tap"),
    "3": ("three", "tap"),
    "T": ("three", "hold"),
    "b": ("bunco", "tap"),
    " ": ("pass", "tap"),
    "n": ("pass", "tap"),
    "w": ("pass", "hold"),
    "u": ("undo", "tap"),
    "U": ("undo", "hold"),
    "r": ("dice", "roll"),
}
# Two lines, each within an 80-column terminal (curses leaves the last column alone).
HELP = (
    "p point  t three  T hold three (three 2s)  b BUNCO  space pass",
    "w hold pass (wipeout)  u undo  U hold undo (turn)  r roll dice  q quit",
)
TAP_SECONDS = 0.06  # longer than the debounce window, shorter than a hold


class KeyPad:
    """Keys to mock-pin presses (and virtual dice), the way fingers press the real buttons."""

    def __init__(
        self,
        factory: Any,
        pins: dict[str, int],
        hold_time: float,
        post: Callable[[object], None],
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.factory = factory
        self.pins = pins
        self.hold_time = hold_time
        self.post = post
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.seq = self.rng.randrange(65536)

    def press(self, key: str) -> str | None:
        """Act out ``key``; return what it did, or None for a key with no meaning."""
        action = KEYS.get(key)
        if action is None:
            return None
        role, gesture = action
        if role == "dice":
            dice = tuple(self.rng.randint(1, 6) for _ in range(3))
            self.seq = (self.seq + 1) % 65536
            self.post(DiceRoll(self.seq, dice))  # type: ignore[arg-type]
            return f"roll {dice}"
        pin = self.factory.pin(self.pins[role])
        pin.drive_low()
        self.sleep(self.hold_time + 0.15 if gesture == "hold" else TAP_SECONDS)
        pin.drive_high()
        return f"{gesture} {role}"


def run(box: Any, keypad: KeyPad, stdin: TextIO | None = None, out: TextIO | None = None,
        stop: threading.Event | None = None) -> None:
    """Drive ``box`` from the keyboard until 'q', end of input, or ``stop`` is set."""
    stdin = stdin if stdin is not None else sys.stdin
    out = out if out is not None else sys.stdout
    stop = stop or threading.Event()
    if stdin.isatty() and out.isatty():
        import curses

        curses.wrapper(_curses_loop, box, keypad, stop)
    else:
        _plain_loop(box, keypad, stdin, out, stop)


def _frame_lines(box: Any) -> list[str]:
    image = box.sink.device.image if box.sink.device is not None else None
    if image is None:
        return ["(no frame yet)"]
    return to_blocks(image)


def _plain_loop(box: Any, keypad: KeyPad, stdin: TextIO, out: TextIO,
                stop: threading.Event) -> None:
    last: list[str] = []
    print("keys: " + "\n      ".join(HELP), file=sys.stderr, flush=True)

    def show() -> None:
        nonlocal last
        box.node.sync()
        lines = _frame_lines(box)
        if lines != last:
            last = lines
            out.write("+" + "-" * 64 + "+\n")
            out.writelines(f"|{line}|\n" for line in lines)
            out.write("+" + "-" * 64 + "+\n")
            out.flush()

    show()
    while not stop.is_set():
        key = stdin.read(1)
        if key == "" or key == "q":
            break
        if keypad.press(key) is not None:
            show()


def screen_lines(frame: list[str], status: str, height: int, width: int) -> list[str]:
    """What the curses view draws in a ``height`` x ``width`` terminal: the OLED frame in a
    border, then the key legend and the last action. The legend always shows: in a short
    terminal the frame loses its bottom rows instead."""
    legend = [*HELP, status]
    boxed = ["┌" + "─" * 64 + "┐", *(f"│{x}│" for x in frame), "└" + "─" * 64 + "┘"]
    room = max(0, height - 1 - len(legend))  # curses cannot write the bottom-right cell
    return [line[: max(0, width - 1)] for line in boxed[:room] + legend][: max(0, height - 1)]


def _curses_loop(stdscr: Any, box: Any, keypad: KeyPad, stop: threading.Event) -> None:
    import curses

    curses.curs_set(0)
    stdscr.nodelay(True)
    last: list[str] = []
    status = ""
    while not stop.is_set():
        key = stdscr.getch()
        if key == ord("q"):
            break
        if key != -1 and 0 <= key < 256:
            status = keypad.press(chr(key)) or status
        lines = _frame_lines(box)
        if lines != last or key != -1:
            last = lines
            stdscr.erase()
            height, width = stdscr.getmaxyx()
            for row, line in enumerate(screen_lines(lines, status, height, width)):
                stdscr.addstr(row, 0, line)
            stdscr.refresh()
        if key == -1:
            time.sleep(0.02)
