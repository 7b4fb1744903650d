"""The table box's board under MicroPython's unix port: the test's hands and eyes.

Everything but the hardware is the box's own code. The test writes commands on the process's
stdin, one a line: ``tap ROLE``, ``hold ROLE`` (the button held 1.2 s), ``stop``. The screen
is drawn into a framebuf by the box's own screen code (``bunco_box/screen.py``) and printed as
one line ``OLED|text|text|...|status`` (each text drawn, in order, then the box's status line)
and one ``VIEW {json}``; the log as ``LOG text``. Sockets are real.
"""

import gc
import json
import os
import select
import socket
import sys
import time

import framebuf


class SimBoard:
    def __init__(self):
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)
        self._plan = []  # (role, ms held) waiting their turn
        self._pressing = None  # (role, release at, next press allowed at)
        self._stop = False
        self.wifi = True
        self._screen = None
        self._loops = 0
        self.heap_peak = 0  # the most the box held after a collection, sampled

    # the clock
    def ticks_ms(self):
        return time.ticks_ms()

    def ticks_diff(self, a, b):
        return time.ticks_diff(a, b)

    def ticks_add(self, a, b):
        return time.ticks_add(a, b)

    def sleep_ms(self, ms):
        self._loops += 1
        if self._loops % 25 == 0:  # what the box holds, now and then (for the benchmark)
            gc.collect()
            self.heap_peak = max(self.heap_peak, gc.mem_alloc())
        time.sleep_ms(ms)

    # the test's commands
    def _commands(self):
        while self._poll.poll(0):
            line = sys.stdin.readline()
            if not line:
                self._stop = True
                return
            words = line.split()
            if not words:
                continue
            if words[0] == "stop":
                self._stop = True
            elif words[0] == "heap":
                gc.collect()
                print("HEAP live %d peak %d heap %d" % (gc.mem_alloc(), self.heap_peak,
                                                        gc.mem_alloc() + gc.mem_free()))
            elif words[0] == "tap":
                self._plan.append((words[1], 80))
            elif words[0] == "hold":
                self._plan.append((words[1], 1200))
            elif words[0] == "wifi":
                self.wifi = words[1] == "on"

    def reset(self):
        sys.exit(3)  # the test sees the box die, as a Pico would reset

    def should_stop(self):
        self._commands()
        return self._stop

    def buttons(self):
        self._commands()
        now = time.ticks_ms()
        if self._pressing is not None:
            role, release, free = self._pressing
            if time.ticks_diff(now, release) < 0:
                return {role: True}
            if time.ticks_diff(now, free) < 0:
                return {}
            self._pressing = None
        if self._plan:
            role, ms = self._plan.pop(0)
            self._pressing = (role, time.ticks_add(now, ms), time.ticks_add(now, ms + 80))
            return {role: True}
        return {}

    # the screen and the log
    def show(self, view, status):
        from bunco_box import screen

        if self._screen is None:
            fb = framebuf.FrameBuffer(bytearray(128 * 64 // 8), 128, 64, framebuf.MONO_VLSB)
            self._screen = screen.Screen(fb)
            if self._screen.problem:
                self.log(self._screen.problem)
        self._screen.draw(view)  # the Pico's drawing, every frame, as on the OLED
        print("OLED|" + "|".join(screen.texts(view, self._screen.font) + [str(status)]))
        print("VIEW " + json.dumps(view))

    def log(self, text):
        print("LOG " + text)

    # the network
    def start_wifi(self, ssid, password):
        pass

    def wifi_up(self):
        return self.wifi

    def open_socket(self, host, port, timeout_s):
        sock = socket.socket()
        sock.settimeout(timeout_s)
        try:
            sock.connect(socket.getaddrinfo(host, port)[0][-1])
        except OSError:
            sock.close()
            raise
        return sock

    def random_bytes(self, n):
        return os.urandom(n)
