"""Dice tray firmware for a Raspberry Pi Pico (MicroPython): the hardware half.

Wiring (firmware/README.md has the full table):
    ROLL button: GP15 to GND (internal pull-up); a tilt switch wires the same way
    SSD1306 128x64 OLED, I2C0: SDA GP4, SCL GP5, VCC 3V3(OUT), GND
Everything else (what to send, when, which seq) is in bunco_dice/logic.py.

Random dice come from ``os.urandom``: on the rp2 port it is built on the RP2040's ring
oscillator random bit (ROSC RANDOMBIT), a hardware source, not a seeded PRNG.
"""

import os
import sys
import time

import machine
from bunco_dice import logic

BUTTON_PIN = 15
I2C_ID, SDA_PIN, SCL_PIN = 0, 4, 5
OLED_ADDRESS = 0x3C
SEQ_FILE = "seq.txt"
POLL_MS = 5


def open_screen():
    """(show, problem): a function drawing on the OLED, or None and a one-line reason."""
    try:
        import ssd1306
    except ImportError:
        return None, "ssd1306 driver missing: mpremote mip install ssd1306"
    i2c = machine.I2C(I2C_ID, sda=machine.Pin(SDA_PIN), scl=machine.Pin(SCL_PIN), freq=400000)
    if OLED_ADDRESS not in i2c.scan():
        return None, f"no display at I2C 0x3C on GP{SDA_PIN}/GP{SCL_PIN}"
    oled = ssd1306.SSD1306_I2C(128, 64, i2c, addr=OLED_ADDRESS)

    def show(dice, caption):
        logic.draw(oled, dice, caption)
        oled.show()

    return show, None


def send(text):
    # USB CDC: MicroPython turns "\n" into "\r\n", which readers accept.
    sys.stdout.write(text)


def main(loops=None):
    """Poll the button forever (or ``loops`` times, for tests)."""
    button = machine.Pin(BUTTON_PIN, machine.Pin.IN, machine.Pin.PULL_UP)
    show, problem = open_screen()
    seqs = logic.SeqStore(SEQ_FILE, os)
    tray = logic.Tray(send, os.urandom, seqs, show=show, ticks_diff=time.ticks_diff)
    tray.boot(time.ticks_ms())
    if problem:
        tray.report(problem)
    count = 0
    try:
        while loops is None or count < loops:
            tray.tick(time.ticks_ms(), button.value() == 0)
            time.sleep_ms(POLL_MS)
            count += 1
    except Exception as exc:  # Ctrl-C (KeyboardInterrupt) still reaches the REPL
        tray.report(f"crashed: {exc}")
        time.sleep_ms(1000)
        machine.reset()


if __name__ == "__main__":
    main()
