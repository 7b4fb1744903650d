"""The Pico 2 W's side of the table box: pins, I2C and the OLED, Wi-Fi, sockets, the clock.

The one layer the tests replace (tests/micropython/sim_board.py): everything above it is the
same code under the unix port as on the Pico.
"""

import os
import socket
import sys
import time

import machine
import network
from bunco_box import pins

WIFI_RETRY_MS = 15000


class PicoBoard:
    def __init__(self, display="ssd1306"):
        self._pins = {role: machine.Pin(gp, machine.Pin.IN, machine.Pin.PULL_UP)
                      for role, gp in pins.BUTTONS.items()}
        self._wlan = network.WLAN(network.STA_IF)
        self._wifi = ("", "")
        self._asked = 0
        self.oled, self.screen_problem = self._open_oled(display)
        self.screen = None
        if self.oled is not None:
            from bunco_box.screen import Screen

            self.screen = Screen(self.oled)
            self.screen_problem = self.screen.problem

    def _open_oled(self, display):
        i2c = machine.I2C(pins.I2C_ID, sda=machine.Pin(pins.SDA), scl=machine.Pin(pins.SCL),
                          freq=400000)
        if pins.OLED_ADDRESS not in i2c.scan():
            return None, "no OLED at I2C 0x3C on GP%d/GP%d" % (pins.SDA, pins.SCL)
        try:
            if display == "sh1106":
                import sh1106

                return sh1106.SH1106_I2C(128, 64, i2c, addr=pins.OLED_ADDRESS), None
            import ssd1306

            return ssd1306.SSD1306_I2C(128, 64, i2c, addr=pins.OLED_ADDRESS), None
        except ImportError:
            return None, "OLED driver missing: bunco-pi pico flash copies it"

    # the clock
    def ticks_ms(self):
        return time.ticks_ms()

    def ticks_diff(self, a, b):
        return time.ticks_diff(a, b)

    def ticks_add(self, a, b):
        return time.ticks_add(a, b)

    def sleep_ms(self, ms):
        time.sleep_ms(ms)

    def should_stop(self):
        return False  # a box runs until its power goes; Ctrl-C reaches the REPL

    def reset(self):
        time.sleep_ms(1000)  # the message stays readable a moment
        machine.reset()

    # buttons, screen, log
    def buttons(self):
        return {role: pin.value() == 0 for role, pin in self._pins.items()}

    def show(self, view, status):
        """Draw ``view`` (a ``layout`` screen); ``status`` is the box's line for the log."""
        if self.screen is None:
            return
        self.screen.draw(view)
        self.oled.show()

    def log(self, text):
        # USB serial: what `mpremote repl` or Thonny's shell shows
        sys.stdout.write(text + "\n")

    # the network
    def start_wifi(self, ssid, password):
        self._wifi = (ssid, password)
        self._wlan.active(True)
        if ssid:
            self._wlan.connect(ssid, password)
        self._asked = time.ticks_ms()

    def wifi_up(self):
        if self._wlan.isconnected():
            return True
        # Gone (the router restarted, the box was carried out of reach): ask again now and
        # then, without waiting; the box meanwhile counts offline.
        ssid, password = self._wifi
        if ssid and time.ticks_diff(time.ticks_ms(), self._asked) > WIFI_RETRY_MS:
            self._asked = time.ticks_ms()
            try:
                self._wlan.connect(ssid, password)
            except OSError:
                pass
        return False

    def open_socket(self, host, port, timeout_s):
        address = socket.getaddrinfo(host, port)[0][-1]
        sock = socket.socket()
        sock.settimeout(timeout_s)
        try:
            sock.connect(address)
        except OSError:
            sock.close()
            raise
        return sock

    def random_bytes(self, n):
        # On the rp2 port os.urandom is the chip's hardware random source, not a seeded PRNG.
        return os.urandom(n)
