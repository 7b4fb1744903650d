"""``bunco-pi pico flash`` and ``bunco-pi pico config``: the config the firmware reads, and
one-line errors for no Pico, a Pico without MicroPython and a full flash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bunco_pi.commands import pico as command
from bunco_pi.errors import UserError
from bunco_pi.net.broker import ensure_credentials, node_users
from bunco_pi.pico import firmware_files

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "firmware"))

from bunco_box import box  # noqa: E402


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bunco_pi.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture
def credentials(tmp_path):
    path = tmp_path / "credentials.json"
    return path, ensure_credentials(path, node_users(4))


def test_config_writes_what_the_firmware_reads(tmp_path, credentials):
    path, creds = credentials
    out = tmp_path / "box.json"
    result = cli("pico", "config", "--table", "3", "--night", "fall", "--broker",
                 "192.168.4.1:1883", "--credentials", str(path), "--wifi-ssid", "Hall",
                 "--out", str(out), stdin="hall-password\n")
    assert result.returncode == 0, result.stderr
    assert out.stat().st_mode & 0o777 == 0o600  # it holds two passwords
    config = box.read_config(out.read_text())
    assert config["table"] == 3 and config["user"] == "table-3"
    assert config["password"] == creds.password("table-3")
    assert config["wifi_password"] == "hall-password"
    assert (config["broker_host"], config["broker_port"]) == ("192.168.4.1", 1883)


def test_a_config_missing_a_key_is_named_in_one_line():
    good = {"table": 2, "night": "n", "broker_host": "h", "broker_port": 1883,
            "user": "table-2", "password": "p"}
    for key in good:
        broken = {k: v for k, v in good.items() if k != key}
        with pytest.raises(box.ConfigError) as err:
            box.read_config(json.dumps(broken))
        assert str(err.value) == f"box.json: missing key '{key}'"
    with pytest.raises(box.ConfigError, match="'user' must be 'table-2'"):
        box.read_config(json.dumps({**good, "user": "table-3"}))


def test_flash_with_no_pico_says_so_in_one_line(credentials):
    path, _ = credentials
    result = cli("pico", "flash", "--table", "1", "--broker", "10.0.0.2", "--credentials",
                 str(path))
    if "mpremote is not installed" in result.stderr:
        pytest.skip("mpremote is not installed here")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bunco-pi: no Pico found on USB"), lines


def fake_usb(tmp_path: Path, pid: str) -> Path:
    device = tmp_path / "sys" / "1-1"
    device.mkdir(parents=True)
    (device / "idVendor").write_text("2e8a\n")
    (device / "idProduct").write_text(pid + "\n")
    return tmp_path / "sys"


@pytest.mark.parametrize(("pid", "chip"), [("000f", "RP2350"), ("0003", "RP2040")])
def test_a_pico_in_bootsel_mode_has_no_micropython_and_says_where_to_get_it(tmp_path, pid,
                                                                            chip):
    sysfs = fake_usb(tmp_path, pid)
    with pytest.raises(UserError) as err:
        command.find_pico(lambda: [], lambda: command.usb_devices(sysfs))
    assert f"the Pico on USB ({chip}) has no MicroPython" in str(err.value)
    assert "micropython.org/download/RPI_PICO2_W" in str(err.value)


def test_one_pico_is_found_and_two_need_a_port():
    assert command.find_pico(lambda: ["/dev/ttyACM0"], list) == "/dev/ttyACM0"
    with pytest.raises(UserError, match="2 Picos on USB"):
        command.find_pico(lambda: ["/dev/ttyACM0", "/dev/ttyACM1"], list)


class Mpremote:
    """What mpremote answers, for the command's side of the conversation."""

    def __init__(self, free: int, copy_error: str = "") -> None:
        self.free, self.copy_error, self.calls = free, copy_error, []

    def __call__(self, argv):
        self.calls.append(list(argv))
        if "exec" in argv and "statvfs" in argv[-1]:
            return subprocess.CompletedProcess(argv, 0, f"FREE {self.free}\n", "")
        if self.copy_error:
            return subprocess.CompletedProcess(argv, 1, "", self.copy_error)
        return subprocess.CompletedProcess(argv, 0, "", "")


CONFIG = {"table": 1, "night": "n", "broker_host": "h", "broker_port": 1883,
          "user": "table-1", "password": "p"}


def test_flash_copies_every_firmware_file_then_the_config_then_resets():
    mp = Mpremote(free=800_000)
    command.flash("/dev/ttyACM0", CONFIG, mp)
    copy = mp.calls[-1]
    sources = [copy[i + 1] for i, word in enumerate(copy) if word == "cp"]
    targets = [copy[i + 2] for i, word in enumerate(copy) if word == "cp"]
    # every module compiled to MicroPython bytecode (mpy-cross) but main.py, which the Pico
    # runs as source; the font file; the config last, then the reset
    wanted = {f":{dest}" for _, dest in firmware_files()}
    assert {t[:-4] + ".py" if t.endswith(".mpy") else t for t in targets} \
        == wanted | {":font.bin", ":box.json"}
    assert ":main.py" in targets and ":presses.mpy" in targets and ":bunco_box/box.mpy" \
        in targets and ":layout.mpy" in targets and ":tally.mpy" in targets
    assert ":lib/ssd1306.mpy" in targets and ":lib/sh1106.mpy" in targets
    assert not [t for t in targets if t.endswith(".py") and t != ":main.py"]
    compiled = Path(sources[targets.index(":bunco_box/box.mpy")])
    assert targets[-1] == ":box.json" and copy[-2:] == ["+", "reset"]
    # an older flash's sources are removed first: the Pico would import them before the .mpy
    removal = [word for word in copy[:copy.index("fs")] if "os.remove" in word]
    assert len(removal) == 1 and "'bunco_box/box.py'" in removal[0]
    assert not compiled.exists()  # built in a temporary folder, gone after


def test_flash_refuses_a_pico_whose_micropython_reads_other_bytecode():
    def older(argv):
        if "exec" in argv and "statvfs" in argv[-1]:
            # MicroPython 1.19's .mpy v6.0 (sub-version 0), as sys.implementation._mpy says it
            return subprocess.CompletedProcess(argv, 0, "FREE 800000 MPY 6\n", "")
        raise AssertionError("nothing is copied")

    with pytest.raises(UserError, match=r"runs \.mpy v6\.0 and mpy-cross here writes v6\.3"):
        command.flash("/dev/ttyACM0", CONFIG, older)


def test_the_compiled_firmware_runs_under_micropython(tmp_path):
    """What flash copies is what the tests run: lay_out then compile_tree."""
    from bunco_pi.pico import built_files, compile_tree, lay_out
    from tests.pico_boxes import micropython, mpy_cross_command

    exe = micropython()
    lay_out(tmp_path)
    compile_tree(tmp_path, mpy_cross_command())
    names = [dest for _, dest in built_files(tmp_path)]
    assert "bunco_box/box.mpy" in names and "bunco_box/box.py" not in names
    done = subprocess.run([exe, "-X", "heapsize=128k", "-c",
                           "import gc; from bunco_box import box, screen; import tally; "
                           "gc.collect(); print('OK', box.PROTOCOL_VERSION)"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"MICROPYPATH": f"{tmp_path}:{tmp_path / 'lib'}"})
    assert done.stdout.split() == ["OK", "1"], done.stdout + done.stderr


def test_a_full_flash_is_said_before_anything_is_copied():
    mp = Mpremote(free=20_000)
    with pytest.raises(UserError, match=r"^the Pico's flash is full: 19 KB free"):
        command.flash("/dev/ttyACM0", CONFIG, mp)
    assert len(mp.calls) == 1  # only the question
    mp = Mpremote(free=800_000, copy_error="OSError: [Errno 28] ENOSPC\n")
    with pytest.raises(UserError, match="flash at /dev/ttyACM0 is full"):
        command.flash("/dev/ttyACM0", CONFIG, mp)


def test_a_device_that_is_not_micropython_is_said_in_one_line():
    def not_micropython(argv):
        return subprocess.CompletedProcess(argv, 1, "", "mpremote: could not enter raw repl\n")

    with pytest.raises(UserError, match="does not answer as MicroPython: install MicroPython"):
        command.flash("/dev/ttyACM0", CONFIG, not_micropython)


def test_flash_without_the_firmware_folder_says_where_to_point_it(tmp_path, credentials):
    path, _ = credentials
    result = cli("pico", "flash", "--table", "1", "--broker", "10.0.0.2", "--credentials",
                 str(path), "--firmware", str(tmp_path / "nowhere"))
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1
    assert "the table box's firmware is not there: give --firmware DIR" in lines[0]
