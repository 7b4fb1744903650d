"""The dice tray firmware under CPython: its logic, its main.py on stand-in hardware, and
its own code writing into a pty while the table's reader reads the other end."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
import tty
import types
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bunco_pi.hardware import dice_wire
from bunco_pi.hardware.dice_sensor import DiceSensor, LinkUp
from bunco_pi.hardware.dice_wire import Hello, Roll, Rolling, SensorError, parse_line
from firmware import host_emulator
from firmware.bunco_dice import logic

FIRMWARE_DIR = Path(__file__).resolve().parent.parent / "firmware"
WAIT_S = 10.0
FIRMWARE_HELLO = Hello(logic.VERSION, (("proto", "2"),))  # it speaks protocol 2 and says so


def parsed(lines: list[str]) -> list:
    return [parse_line(text.rstrip("\n")) for text in lines]


# --- the wire ----------------------------------------------------------------------------------


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
def test_firmware_checksum_agrees_with_the_reader(body):
    assert logic.checksum(body) == dice_wire.checksum(body, protocol=2)


def test_firmware_crc_is_crc16_ccitt_false():
    assert logic.crc16(b"123456789") == 0x29B1


def test_firmware_lines_parse_as_the_reader_expects():
    assert parsed(
        [
            logic.hello_line("2.0.0"),
            logic.rolling_line(),
            logic.roll_line(17, (3, 3, 5)),
            logic.err_line("no display"),
        ]
    ) == [Hello("2.0.0", (("proto", "2"),)), Rolling(), Roll(17, (3, 3, 5)),
          SensorError("no display")]
    assert logic.roll_line(17, (3, 3, 5)) == "ROLL 17 3 3 5*F8D0\n"
    assert logic.hello_line("2.0.0") == "HELLO 2.0.0 proto=2*83B3\n"


def test_err_line_is_always_a_valid_line():
    nasty = "bad * star\tand é and a very long tail " + "x" * 200
    result = parse_line(logic.err_line(nasty).rstrip("\n"))
    assert isinstance(result, SensorError)
    assert "*" not in result.text
    assert len(logic.err_line(nasty)) - 1 <= dice_wire.MAX_LINE_BYTES
    assert parse_line(logic.err_line("   ").rstrip("\n")) == SensorError("unknown error")


# --- dice ------------------------------------------------------------------------------------


def test_every_byte_below_252_maps_to_a_face_exactly_42_times_each():
    faces = Counter(logic.die(lambda _n, b=b: bytes([b])) for b in range(252))
    assert faces == {face: 42 for face in range(1, 7)}


def test_bytes_252_to_255_are_thrown_away():
    source = iter([255, 254, 253, 252, 9])
    assert logic.die(lambda _n: bytes([next(source)])) == 9 % 6 + 1


def test_a_broken_random_source_still_ends():
    assert logic.die(lambda _n: b"\xff") in range(1, 7)


# --- seqs that survive a reset ---------------------------------------------------------------


def store(tmp_path, **kwargs) -> logic.SeqStore:
    return logic.SeqStore(str(tmp_path / "seq.txt"), os, **kwargs)


def test_first_boot_counts_from_zero_and_leases_a_block(tmp_path):
    seqs = store(tmp_path, block=4)
    assert [seqs.take() for _ in range(6)] == [0, 1, 2, 3, 4, 5]
    assert (tmp_path / "seq.txt").read_text() == "8\n"
    assert seqs.writes == 2
    assert not (tmp_path / "seq.txt.new").exists()


def test_a_reset_never_reuses_a_seq(tmp_path):
    sent = []
    for _boot in range(5):
        seqs = store(tmp_path, block=4)
        sent += [seqs.take() for _ in range(3)]  # power cut after three rolls
    assert len(set(sent)) == len(sent)
    assert sent == sorted(sent)
    assert sent[:6] == [0, 1, 2, 4, 5, 6]  # skips at most block - 1 per reset


def test_a_boot_without_a_roll_writes_nothing(tmp_path):
    for _boot in range(10):
        assert store(tmp_path).writes == 0
    assert not (tmp_path / "seq.txt").exists()


def test_flash_writes_are_one_per_block(tmp_path):
    seqs = store(tmp_path)
    for _ in range(1000):
        seqs.take()
    assert seqs.writes == -(-1000 // logic.SEQ_BLOCK)


def test_seqs_wrap_at_65536(tmp_path):
    (tmp_path / "seq.txt").write_text("65534\n")
    seqs = store(tmp_path, block=4)
    assert [seqs.take() for _ in range(4)] == [65534, 65535, 0, 1]
    assert (tmp_path / "seq.txt").read_text() == "2\n"


@pytest.mark.parametrize("content", ["", "abc", "70000", "-3", "1 2"])
def test_an_unreadable_seq_file_is_reported_and_counting_starts_at_zero(tmp_path, content):
    (tmp_path / "seq.txt").write_text(content)
    seqs = store(tmp_path)
    assert seqs.problem == "seq file unreadable, counting from 0"
    assert seqs.take() == 0


class CrashingFs:
    """An os stand-in whose rename fails, as a power cut between write and rename would."""

    @staticmethod
    def rename(_src, _dst):
        raise OSError(5, "EIO")


def test_a_failed_save_keeps_the_old_value_and_is_reported(tmp_path):
    (tmp_path / "seq.txt").write_text("100\n")
    seqs = logic.SeqStore(str(tmp_path / "seq.txt"), CrashingFs, block=4)
    assert seqs.take() == 100  # the roll still goes out
    assert seqs.problem.startswith("seq save failed")
    assert (tmp_path / "seq.txt").read_text() == "100\n"
    # The half-done write is ignored at the next boot: the old lease still holds.
    assert store(tmp_path).peek() == 100


# --- the tray --------------------------------------------------------------------------------


class Bench:
    """A tray on a bench: a fake clock, a finger on the button, and the lines it sent."""

    def __init__(self, tmp_path, ticks_period=None, start=0, seq_block=logic.SEQ_BLOCK):
        self.sent: list[str] = []
        self.shown: list[tuple] = []
        self.now = start
        self.period = ticks_period
        rng = iter(range(10**6))
        diff = self._wrapping_diff if ticks_period else (lambda a, b: a - b)
        self.tray = logic.Tray(
            self.sent.append,
            lambda n: bytes([next(rng) % 252 for _ in range(n)]),
            logic.SeqStore(str(tmp_path / "seq.txt"), os, block=seq_block),
            show=lambda dice, caption: self.shown.append((dice, caption)),
            ticks_diff=diff,
        )

    def _wrapping_diff(self, a, b):
        half = self.period // 2
        return (a - b + half) % self.period - half

    def run(self, ms: int, pressed: bool = False, step: int = 5) -> None:
        for _ in range(ms // step):
            self.tray.tick(self.now, pressed)
            self.now += step
            if self.period:
                self.now %= self.period

    def press(self, hold_ms: int = 60) -> None:
        self.run(hold_ms, pressed=True)
        self.run(logic.TUMBLE_MS + 50)

    def messages(self) -> list:
        return parsed(self.sent)


def test_boot_says_hello_and_shows_the_prompt(tmp_path):
    bench = Bench(tmp_path)
    bench.tray.boot(0)
    assert bench.messages() == [FIRMWARE_HELLO]
    assert bench.shown == [((1, 1, 1), "press to roll")]


def test_a_press_sends_rolling_then_one_roll(tmp_path):
    bench = Bench(tmp_path)
    bench.tray.boot(0)
    bench.run(100)
    bench.run(60, pressed=True)
    assert bench.messages()[-1] == Rolling()
    assert bench.tray.state == logic.TUMBLING
    bench.run(logic.TUMBLE_MS + 50)
    roll = bench.messages()[-1]
    assert isinstance(roll, Roll) and roll.seq == 0
    assert roll.dice == bench.tray.dice
    assert bench.shown[-1] == (roll.dice, "roll #0")
    # Tumbling showed faces about every FRAME_MS.
    frames = [s for s in bench.shown if s[1] == "rolling..."]
    assert logic.TUMBLE_MS // logic.FRAME_MS - 1 <= len(frames) <= logic.TUMBLE_MS // 50


def test_a_glitch_shorter_than_the_debounce_does_not_roll(tmp_path):
    bench = Bench(tmp_path)
    bench.tray.boot(0)
    for _ in range(20):
        bench.run(logic.DEBOUNCE_MS - 10, pressed=True)
        bench.run(50)
    assert bench.messages() == [FIRMWARE_HELLO]


def test_holding_the_button_rolls_once_and_presses_while_tumbling_are_ignored(tmp_path):
    bench = Bench(tmp_path)
    bench.tray.boot(0)
    bench.run(3000, pressed=True)  # held through the tumble and beyond
    bench.run(100)
    bench.run(60, pressed=True)
    bench.run(100)
    bench.run(60, pressed=True)  # during the second tumble
    bench.run(logic.TUMBLE_MS)
    kinds = [type(m).__name__ for m in bench.messages()]
    assert kinds == ["Hello", "Rolling", "Roll", "Rolling", "Roll"]
    assert [m.seq for m in bench.messages() if isinstance(m, Roll)] == [0, 1]


def test_hello_repeats_until_the_first_roll_only(tmp_path):
    bench = Bench(tmp_path)
    bench.tray.boot(0)
    bench.run(logic.HELLO_EVERY_MS * 3 + 100)
    assert bench.messages().count(FIRMWARE_HELLO) == 4
    bench.press()
    bench.run(logic.HELLO_EVERY_MS * 3)
    assert bench.messages().count(FIRMWARE_HELLO) == 4


def test_the_tray_works_across_a_ticks_wrap_around(tmp_path):
    period = 1 << 30  # MicroPython's ticks_ms period on the rp2
    bench = Bench(tmp_path, ticks_period=period, start=period - 500)
    bench.tray.boot(bench.now)
    for _ in range(3):
        bench.run(100)
        bench.press()
    assert [type(m).__name__ for m in bench.messages()] == ["Hello"] + ["Rolling", "Roll"] * 3


def test_many_rolls_are_fair_and_numbered(tmp_path):
    bench = Bench(tmp_path, seq_block=8)
    bench.tray.boot(0)
    for _ in range(60):
        bench.run(40)
        bench.press()
    rolls = [m for m in bench.messages() if isinstance(m, Roll)]
    assert [r.seq for r in rolls] == list(range(60))
    assert bench.tray.rolls == 60


def test_a_failed_flash_write_is_reported_before_the_roll(tmp_path):
    sent: list[str] = []
    seqs = logic.SeqStore(str(tmp_path / "seq.txt"), CrashingFs)
    tray = logic.Tray(sent.append, lambda n: bytes(n), seqs, tumble_ms=100)
    tray.boot(0)
    now = 0
    for pressed, ms in ((True, 60), (False, 200)):
        for _ in range(ms // 5):
            tray.tick(now, pressed)
            now += 5
    messages = parsed(sent)
    assert isinstance(messages[-2], SensorError) and "seq save failed" in messages[-2].text
    assert messages[-1] == Roll(0, (1, 1, 1))


# --- the screen ------------------------------------------------------------------------------


class Canvas:
    """A stand-in for MicroPython's framebuf: records lit pixels and text."""

    def __init__(self, width=128, height=64):
        self.width, self.height = width, height
        self.lit: set[tuple[int, int]] = set()
        self.texts: list[tuple[str, int, int]] = []
        self.shows = 0

    def fill(self, c):
        self.lit.clear()
        self.texts.clear()

    def fill_rect(self, x, y, w, h, c):
        for i in range(x, x + w):
            for j in range(y, y + h):
                self._set(i, j)

    def rect(self, x, y, w, h, c):
        for i in range(x, x + w):
            self._set(i, y)
            self._set(i, y + h - 1)
        for j in range(y, y + h):
            self._set(x, j)
            self._set(x + w - 1, j)

    def text(self, s, x, y, c=1):
        self.texts.append((s, x, y))

    def show(self):
        self.shows += 1

    def _set(self, x, y):
        assert 0 <= x < self.width and 0 <= y < self.height, (x, y)
        self.lit.add((x, y))


@pytest.mark.parametrize("dice", [(1, 2, 3), (4, 5, 6), (6, 6, 6), (1, 1, 1)])
def test_draw_shows_as_many_pips_as_each_face(dice):
    canvas = Canvas()
    logic.draw(canvas, dice, "roll #3")
    assert canvas.texts == [("roll #3", 0, 4)]
    for left, face in zip(logic.DIE_LEFTS, dice, strict=True):
        inside = {
            (x, y)
            for (x, y) in canvas.lit
            if left < x < left + logic.DIE_SIZE - 1 and logic.DIE_TOP < y < logic.DIE_TOP + logic.DIE_SIZE - 1
        }
        assert len(inside) == face * logic.PIP_SIZE**2  # pips do not overlap or touch the edge


# --- main.py on stand-in hardware ----------------------------------------------------------


class FakeBoard:
    """Stand-ins for ``machine``, ``ssd1306`` and MicroPython's ``time`` functions."""

    def __init__(self, presses_at_ms: list[int], display: bool = True):
        self.now = 0
        self.presses = presses_at_ms
        self.resets = 0
        self.oled: Canvas | None = None
        board = self

        class Pin:
            IN, PULL_UP = 0, 1

            def __init__(self, number, mode=None, pull=None):
                self.number = number

            def value(self):
                pressed = any(t <= board.now < t + 80 for t in board.presses)
                return 0 if pressed else 1  # pull-up: pressed reads low

        class I2C:
            def __init__(self, bus, sda, scl, freq):
                self.bus = bus

            def scan(self):
                return [0x3C] if display else []

        class SSD1306_I2C(Canvas):
            def __init__(self, width, height, i2c, addr=0x3C):
                super().__init__(width, height)
                board.oled = self

        self.machine = types.ModuleType("machine")
        self.machine.Pin = Pin
        self.machine.I2C = I2C
        self.machine.reset = self._reset
        self.ssd1306 = types.ModuleType("ssd1306")
        self.ssd1306.SSD1306_I2C = SSD1306_I2C

    def _reset(self):
        self.resets += 1

    def ticks_ms(self):
        return self.now

    def sleep_ms(self, ms):
        self.now += ms


@pytest.fixture
def load_main(monkeypatch, tmp_path):
    def load(board: FakeBoard):
        monkeypatch.chdir(tmp_path)
        monkeypatch.syspath_prepend(str(FIRMWARE_DIR))
        monkeypatch.setitem(sys.modules, "machine", board.machine)
        monkeypatch.setitem(sys.modules, "ssd1306", board.ssd1306)
        monkeypatch.setattr(time, "ticks_ms", board.ticks_ms, raising=False)
        monkeypatch.setattr(time, "sleep_ms", board.sleep_ms, raising=False)
        monkeypatch.setattr(time, "ticks_diff", lambda a, b: a - b, raising=False)
        spec = importlib.util.spec_from_file_location("dice_tray_main", FIRMWARE_DIR / "main.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


def test_main_rolls_on_button_presses_and_draws_on_the_oled(load_main, capsys, tmp_path):
    board = FakeBoard(presses_at_ms=[500, 2500])
    load_main(board).main(loops=1000)  # 5 s of polling at 5 ms
    messages = parsed(capsys.readouterr().out.splitlines())
    kinds = [type(m).__name__ for m in messages]
    assert kinds == ["Hello", "Rolling", "Roll", "Rolling", "Roll"]
    assert [m.seq for m in messages if isinstance(m, Roll)] == [0, 1]
    assert (tmp_path / "seq.txt").read_text() == f"{logic.SEQ_BLOCK}\n"
    assert board.oled.shows > 10
    assert board.oled.texts == [("roll #1", 0, 4)]
    assert board.resets == 0


def test_main_without_a_display_says_so_and_still_rolls(load_main, capsys):
    board = FakeBoard(presses_at_ms=[100], display=False)
    load_main(board).main(loops=400)
    messages = parsed(capsys.readouterr().out.splitlines())
    assert messages[1] == SensorError("no display at I2C 0x3C on GP4/GP5")
    assert isinstance(messages[-1], Roll)


def test_main_reports_a_crash_then_resets(load_main, capsys):
    board = FakeBoard(presses_at_ms=[])
    module = load_main(board)

    def broken_pin(*_args, **_kwargs):
        raise OSError("pin stuck")

    board.machine.Pin.value = broken_pin
    module.main(loops=10)
    last = parsed(capsys.readouterr().out.splitlines())[-1]
    assert last == SensorError("crashed: pin stuck")
    assert board.resets == 1


# --- end to end: the firmware's own code into a pty, the table's reader on the other end -------


@pytest.fixture
def pty_pair():
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    os.close(slave)
    os.close(master)


def collect_until(events: queue.Queue, predicate) -> list:
    seen: list = []
    deadline = time.monotonic() + WAIT_S
    while not predicate(seen):
        assert time.monotonic() < deadline, f"timed out: {seen[-5:]!r}"
        with contextlib.suppress(queue.Empty):
            seen.append(events.get(timeout=0.1))
    return seen


def test_firmware_into_a_pty_read_by_the_dice_sensor(pty_pair, tmp_path):
    master, path = pty_pair
    events: queue.Queue = queue.Queue()
    state = tmp_path / "state"
    with DiceSensor(path, events):
        collect_until(events, lambda s: LinkUp(path) in s)
        sent: list[tuple[int, int, int]] = []

        def show(dice, caption):
            if caption.startswith("roll #"):
                sent.append(dice)

        def write(data: bytes) -> None:
            os.write(master, data)

        tray = host_emulator.run_tray(write, 4, state, every_s=0.02, tumble_ms=60, show=show)
        first = collect_until(events, lambda s: sum(isinstance(e, Roll) for e in s) == 4)
        # A reset: the same state directory, a new tray. It says HELLO and its seqs jump to
        # the end of the block it had leased; the reader takes them as new.
        host_emulator.run_tray(write, 3, state, every_s=0.02, tumble_ms=60, show=show)
        second = collect_until(events, lambda s: sum(isinstance(e, Roll) for e in s) == 3)
    rolls = [e for e in first + second if isinstance(e, Roll)]
    assert [r.dice for r in rolls] == sent
    assert [r.seq for r in rolls] == [0, 1, 2, 3, 64, 65, 66]
    assert tray.rolls == 4
    assert first[0] == FIRMWARE_HELLO
    assert second[0] == FIRMWARE_HELLO
    assert sum(isinstance(e, Rolling) for e in first + second) == 7


def test_host_emulator_command_writes_to_a_serial_path(pty_pair, tmp_path, capsys):
    master, path = pty_pair
    os.set_blocking(master, False)
    # The emulator writes to the slave path; its bytes come out of the master end.
    argv = f"--port {path} --rolls 2 --every 0.02 --wait 0 --tumble-ms 50 --state {tmp_path}"
    result: list[int] = []
    runner = threading.Thread(target=lambda: result.append(host_emulator.main(argv.split())))
    runner.start()
    runner.join(WAIT_S)
    assert result == [0]
    data = b""
    while True:
        try:
            data += os.read(master, 4096)
        except BlockingIOError:
            break
    kinds = [type(parse_line(x)).__name__ for x in data.splitlines()]
    assert kinds == ["Hello", "Rolling", "Roll", "Rolling", "Roll"]
    assert capsys.readouterr().err.count("roll #") == 2


def test_host_emulator_command_names_a_missing_port(tmp_path, capsys):
    missing = tmp_path / "ttyACM7"
    assert host_emulator.main(["--port", str(missing), "--wait", "0"]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and err.count("\n") == 1


# --- the same code under the real MicroPython -------------------------------------------------


def micropython_wasm() -> Path | None:
    """MicroPython's WebAssembly port, if npm installed it (globally or in this checkout)."""
    if shutil.which("node") is None:
        return None
    roots = [Path(__file__).resolve().parent.parent / "node_modules"]
    if shutil.which("npm"):
        found = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, timeout=60)
        roots.append(Path(found.stdout.strip()))
    for root in roots:
        mjs = root / "@micropython" / "micropython-webassembly-pyscript" / "micropython.mjs"
        if mjs.is_file():
            return mjs
    return None


def test_main_and_logic_run_under_real_micropython():
    mjs = micropython_wasm()
    if mjs is None:
        pytest.skip("needs node and: npm install -g @micropython/micropython-webassembly-pyscript")
    here = Path(__file__).resolve().parent / "micropython"
    result = subprocess.run(
        ["node", str(here / "run.mjs"), str(mjs), str(FIRMWARE_DIR), str(here / "run_main.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == f"SEQFILE {logic.SEQ_BLOCK}"
    messages = parsed(lines[:-1])
    assert [type(m).__name__ for m in messages] == ["Hello", "Rolling", "Roll", "Rolling", "Roll"]
    assert [m.seq for m in messages if isinstance(m, Roll)] == [0, 1]
    # MicroPython computed the CRC itself (it has no binascii.crc_hqx): protocol 2 lines only.
    assert messages[0] == FIRMWARE_HELLO
    assert all(line[-5] == "*" for line in lines[:-1]), lines
    link = dice_wire.LineParser()
    assert [link.parse(line) for line in lines[:-1]] == messages and link.protocol == 2


def test_host_emulator_pty_mode_as_a_process(tmp_path):
    """What a person runs to try a table without a Pico: the path it prints is readable."""
    command = [sys.executable, "-m", "firmware.host_emulator", "--pty", "--rolls", "3"]
    command += ["--every", "0.05", "--wait", "1", "--tumble-ms", "50", "--state", str(tmp_path)]
    repo = FIRMWARE_DIR.parent
    env = {**os.environ, "PYTHONPATH": str(repo)}
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.PIPE, text=True)
    try:
        path = process.stdout.readline().strip()
        events: queue.Queue = queue.Queue()
        with DiceSensor(path, events):
            seen = collect_until(events, lambda s: sum(isinstance(e, Roll) for e in s) == 3)
        assert process.wait(timeout=WAIT_S) == 0
    finally:
        process.kill()
        process.stdout.close()
    assert [e.seq for e in seen if isinstance(e, Roll)] == [0, 1, 2]
    assert FIRMWARE_HELLO in seen
    assert (tmp_path / "seq.txt").read_text() == f"{logic.SEQ_BLOCK}\n"
