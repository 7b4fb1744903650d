"""Under MicroPython: main.py on stand-in hardware, two presses, 5 s of fake time.

Run by tests/test_firmware.py through run.mjs; prints the lines the firmware sent.
"""

import os
import sys

sys.path.insert(0, "/fw")


class Clock:
    now = 0

    def ticks_ms(self):
        return self.now

    def sleep_ms(self, ms):
        self.now += ms

    def ticks_diff(self, a, b):
        return a - b


clock = Clock()


class Pin:
    IN = 0
    PULL_UP = 1

    def __init__(self, number, mode=None, pull=None):
        pass

    def value(self):
        for t in (500, 2500):
            if t <= clock.now < t + 80:
                return 0
        return 1


class I2C:
    def __init__(self, bus, sda=None, scl=None, freq=None):
        pass

    def scan(self):
        return [0x3C]


class Machine:
    Pin = Pin
    I2C = I2C

    def reset(self):
        print("RESET")


class Oled:
    def __init__(self, w, h, i2c, addr=0x3C):
        self.shows = 0

    def fill(self, c):
        pass

    def rect(self, x, y, w, h, c):
        pass

    def fill_rect(self, x, y, w, h, c):
        pass

    def text(self, s, x, y, c=1):
        pass

    def show(self):
        self.shows += 1


class Ssd1306:
    SSD1306_I2C = Oled


class Os:
    _n = 0

    def urandom(self, n):
        out = []
        for _ in range(n):
            self._n = (self._n * 73 + 41) % 256
            out.append(self._n)
        return bytes(out)

    def rename(self, a, b):
        os.rename(a, b)


# MicroPython looks in sys.modules first, so these stand in for the built-in modules.
sys.modules["machine"] = Machine()
sys.modules["ssd1306"] = Ssd1306()
sys.modules["time"] = clock
sys.modules["os"] = Os()
os.chdir("/state")
import main  # noqa: E402

main.main(loops=1000)
with open("seq.txt") as f:
    print("SEQFILE", f.read().strip())
