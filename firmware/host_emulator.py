"""Run the dice tray firmware's own logic on a PC, pressing its button on a schedule.

    python3 -m firmware.host_emulator --pty                 # makes a pty, prints its path
    python3 -m firmware.host_emulator --port /dev/pts/7     # writes to a serial path or URL

With ``--pty`` the emulator owns the pty pair and prints the path a reader should open
(``bunco-pi table --dice PATH``, or :class:`bunco_pi.hardware.dice_sensor.DiceSensor`).
``--port`` suits a linked pair from ``socat -d -d pty,raw,echo=0 pty,raw,echo=0``: write to
one end, read the other.  The seq survives between runs in ``--state`` exactly as it
survives a reset on the Pico.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from firmware.bunco_dice import logic

POLL_S = 0.005
PRESS_S = 0.06
SLOW_MACHINE_S = 5.0  # how long past its time a press or a tumble may take on a busy machine
DEFAULT_STATE = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state"))


def run_tray(
    write: Callable[[bytes], object],
    presses: int | None,
    state_dir: Path,
    *,
    every_s: float = 2.0,
    tumble_ms: int = logic.TUMBLE_MS,
    show: Callable[[tuple[int, int, int], str], None] | None = None,
    random_bytes: Callable[[int], bytes] = os.urandom,
) -> logic.Tray:
    """Boot a tray writing its lines through ``write`` and press its button ``presses`` times
    (None: forever).

    Real time, real polling, the firmware's own debounce and tumble: only the button finger
    and the USB cable are simulated.  Returns the tray (``tray.rolls``, ``tray.dice``).
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    seqs = logic.SeqStore(str(state_dir / "seq.txt"), os)
    tray = logic.Tray(
        lambda text: write(text.encode("ascii")),
        random_bytes,
        seqs,
        show=show,
        tumble_ms=tumble_ms,
    )
    start = time.monotonic()

    def now_ms() -> int:
        return int((time.monotonic() - start) * 1000)

    def hold(pressed: bool, seconds: float, until: Callable[[], bool] = lambda: True) -> None:
        """Keep the button so for ``seconds``, then until the tray shows ``until``: on a
        busy machine the polls come late, and the firmware counts time between polls."""
        end = time.monotonic() + seconds
        give_up = end + SLOW_MACHINE_S
        while True:
            tray.tick(now_ms(), pressed)
            now = time.monotonic()
            if now >= end and until() or now >= give_up:
                return
            time.sleep(POLL_S)

    tray.boot(now_ms())
    for _ in itertools.count() if presses is None else range(presses):
        hold(False, every_s)
        rolled = tray.rolls
        hold(True, PRESS_S, until=lambda before=rolled: tray.state != logic.IDLE or tray.rolls > before)
        # Released: the dice tumble then settle.
        hold(False, tumble_ms / 1000 + 0.05, until=lambda: tray.state == logic.IDLE)
        if tray.state != logic.IDLE or tray.rolls == rolled:
            raise RuntimeError(f"the tray did not roll within {SLOW_MACHINE_S:g} s of a press")
    return tray


def _print_roll(dice: tuple[int, int, int], caption: str) -> None:
    if not caption.startswith("rolling"):
        print(f"{caption}: {dice[0]} {dice[1]} {dice[2]}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m firmware.host_emulator",
        description="Run the dice tray firmware on this computer against a serial port.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", help="serial path or pyserial URL to write the lines to")
    where.add_argument("--pty", action="store_true", help="make a pty and print its path")
    parser.add_argument("--rolls", type=int, default=20, help="button presses (default 20; 0: until Ctrl-C)")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between presses")
    parser.add_argument("--wait", type=float, default=3.0, help="seconds before booting")
    parser.add_argument("--tumble-ms", type=int, default=logic.TUMBLE_MS, help="how long the dice tumble")
    parser.add_argument(
        "--state",
        type=Path,
        default=DEFAULT_STATE / "bunco-pi-dice-emulator",
        help="directory keeping the seq between runs",
    )
    args = parser.parse_args(argv)
    presses = None if args.rolls == 0 else args.rolls

    if args.pty:
        return _run_on_own_pty(args, presses)
    import serial

    try:
        port = serial.serial_for_url(args.port, baudrate=115200)
    except (serial.SerialException, ValueError) as exc:
        print(f"host_emulator: cannot open {args.port}: {exc}", file=sys.stderr)
        return 2
    with port:
        code = _run(args, presses, port.write)
        port.flush()
    return code


def _run(args: argparse.Namespace, presses: int | None, write: Callable[[bytes], object]) -> int:
    # A reader flushes its input when it opens the port: give it time to open first.
    time.sleep(args.wait)
    try:
        run_tray(
            write,
            presses,
            args.state,
            every_s=args.every,
            tumble_ms=args.tumble_ms,
            show=_print_roll,
        )
    except KeyboardInterrupt:
        return 130
    return 0


def _run_on_own_pty(args: argparse.Namespace, presses: int | None) -> int:
    import fcntl
    import termios
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    print(os.ttyname(slave), flush=True)

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(master, view) :]

    try:
        code = _run(args, presses, write)
        # Closing the pty hangs the reader up: first let it read what is left (bounded).
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            waiting = fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0")
            if int.from_bytes(waiting, "little") == 0:
                break
            time.sleep(0.02)
        return code
    finally:
        os.close(slave)
        os.close(master)


if __name__ == "__main__":
    sys.exit(main())
