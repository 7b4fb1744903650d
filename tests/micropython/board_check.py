"""Under MicroPython's unix port: the Pico board layer (firmware/bunco_box/pico.py) and the
SH1106 driver on stand-ins for the Pico's machine and network modules. Prints what the
hardware was asked to do, one fact a line, for tests/test_pico_box.py to check."""

import sys


class Pin:
    IN = 0
    PULL_UP = 1
    levels = {}

    def __init__(self, gp, mode=None, pull=None):
        self.gp = gp
        if mode is not None:
            print("PIN", gp, "in" if mode == Pin.IN else mode, "pull-up" if pull == 1 else pull)

    def value(self):
        return Pin.levels.get(self.gp, 1)


class I2C:
    def __init__(self, bus, sda=None, scl=None, freq=None):
        print("I2C", bus, sda.gp, scl.gp, freq)
        self.writes = []

    def scan(self):
        return [0x3C]

    def writeto(self, addr, data):
        self.writes.append(bytes(data))


class Machine:
    Pin = Pin
    I2C = I2C


class WLAN:
    def __init__(self, mode):
        self.up = False

    def active(self, on):
        print("WLAN active", on)

    def connect(self, ssid, password):
        print("WLAN connect", ssid, password)
        self.up = True

    def isconnected(self):
        return self.up


class Network:
    STA_IF = 0
    WLAN = WLAN


sys.modules["machine"] = Machine()
sys.modules["network"] = Network()

from bunco_box import pico  # noqa: E402

board = pico.PicoBoard("sh1106")
Pin.levels = {10: 0, 15: 0}  # point and roll held down (buttons pull to ground)
print("PRESSED", sorted(r for r, down in board.buttons().items() if down))
print("WIFI", board.wifi_up())
board.start_wifi("Hall", "secret")
print("WIFI", board.wifi_up())
i2c = board.oled.i2c
i2c.writes = []
board.show({"screen": "playing", "table": 3, "target": 4, "score_a": 3, "score_b": 5,
            "roller": "Ann", "roller_team": "A", "flash": "+1 Ann"}, "+1 Ann")
pages = [w for w in i2c.writes if w[0] == 0x40]
print("PAGES", len(pages), "BYTES", len(pages[0]) - 1)
print("FRAME " + "".join("".join("%02x" % b for b in page[1:]) for page in pages))
commands = [w[1] for w in i2c.writes if w[0] == 0x80]
print("COMMANDS", " ".join("%02x" % c for c in commands[:3]))
lit = sum(bin(b).count("1") for page in pages for b in page[1:])
print("LIT", lit > 100)
