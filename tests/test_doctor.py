"""bunco-pi doctor: each check on its own against fakes of its paths, then the whole command."""

import argparse
import os
import shutil
import socket
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import serial
from gpiozero import Button
from gpiozero.pins.mock import MockFactory

from bunco_pi import doctor, provision
from bunco_pi.commands import doctor as doctor_command
from bunco_pi.doctor import FAIL, OK, WARN
from bunco_pi.hardware import pinmap
from bunco_pi.net.broker import (
    Credentials,
    acl_text,
    broker_logins,
    credentials_text,
    doctor_user,
    password_file_text,
)


def _one_line(result):
    assert "\n" not in result.line()
    return result


# --- config ----------------------------------------------------------------------------------

def test_missing_config_falls_back_to_the_default_wiring(tmp_path):
    cfg, result = doctor.load_config(tmp_path / "table.toml")
    assert result.status == FAIL and "install.sh table" in result.message
    assert cfg.pins == pinmap.default_button_pins()


def test_installed_configs_are_read(tmp_path):
    etc = str(tmp_path)
    presets = Path(provision.__file__).parent / "rules" / "presets"
    (tmp_path / "rules.toml").write_text(provision.rules_config(presets, "core"))
    (tmp_path / "table.toml").write_text(provision.table_config(4, "10.1.1.1", 1999, etc))
    (tmp_path / "head.toml").write_text(provision.head_config("Friday", 4, 1998, etc))
    cfg, result = doctor.load_config(tmp_path / "table.toml", tmp_path / "head.toml")
    assert result.status == OK
    assert (cfg.broker_host, cfg.broker_port, cfg.username) == ("10.1.1.1", 1999, "table-4")
    assert cfg.credentials == cfg.head_credentials == tmp_path / "secrets/credentials.json"
    assert cfg.pins == {**pinmap.default_button_pins(), **pinmap.default_head_pins()}
    assert (cfg.night, cfg.head_username, cfg.head_port) == ("Friday", "head", 1998)
    assert cfg.rules_file == str(tmp_path / "rules.toml") and cfg.dice_sensor == "off"


def test_a_bad_value_names_file_line_and_key(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(provision.table_config(2, "h").replace("port = 1883", "port = 0"))
    _, result = doctor.load_config(path)
    _one_line(result)
    line = path.read_text().splitlines().index("port = 0") + 1
    assert result.status == FAIL and f"{path}:{line} [broker] port = 0" in result.message


def test_broken_config_names_file_and_line(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text("[table]\nnumber = = 3\n")
    _, result = doctor.load_config(path)
    assert result.status == FAIL and str(path) in result.message and "line 2" in result.message
    _one_line(result)


# --- house rules --------------------------------------------------------------------------

def test_rules_that_load(tmp_path):
    presets = Path(provision.__file__).parent / "rules" / "presets"
    path = tmp_path / "rules.toml"
    path.write_text(provision.rules_config(presets, "core"))
    result = doctor.check_rules(path)
    assert result.status == OK and "core (team play)" in result.message


def test_rules_with_a_mistake_name_the_line(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text('name = "ours"\n[round]\ntarget_score = 0\n')
    result = _one_line(doctor.check_rules(path))
    assert result.status == FAIL and str(path) in result.message and "target_score" in result.message
    assert doctor.check_rules(tmp_path / "none.toml").status == FAIL


# --- display ---------------------------------------------------------------------------------

def test_display_without_i2c_says_how_to_enable_it(tmp_path):
    result = _one_line(doctor.check_display(1, 0x3C, dev_dir=tmp_path))
    assert result.status == FAIL and "raspi-config nonint do_i2c 0" in result.message


def test_display_answering(tmp_path):
    (tmp_path / "i2c-1").touch()
    seen = []
    result = doctor.check_display(1, 0x3C, dev_dir=tmp_path,
                                  probe=lambda dev, addr: seen.append((dev, addr)) or True)
    assert result.status == OK and seen == [(tmp_path / "i2c-1", 0x3C)]


def test_display_silent_lists_the_wires(tmp_path):
    (tmp_path / "i2c-1").touch()
    result = _one_line(doctor.check_display(1, 0x3C, dev_dir=tmp_path, probe=lambda d, a: False))
    assert result.status == FAIL
    for wire in ("VCC->pin 1", "GND->pin 9", "SDA->pin 3", "SCL->pin 5", "i2cdetect -y 1"):
        assert wire in result.message


def test_display_permission_points_at_the_i2c_group(tmp_path):
    (tmp_path / "i2c-1").touch()

    def denied(dev, addr):
        raise PermissionError(13, "Permission denied")

    result = doctor.check_display(1, 0x3C, dev_dir=tmp_path, probe=denied)
    assert result.status == FAIL and "i2c group" in result.message


def test_real_probe_on_a_file_that_is_no_bus(tmp_path):
    (tmp_path / "i2c-1").write_bytes(b"")
    result = doctor.check_display(1, 0x3C, dev_dir=tmp_path)  # the real ioctl: ENOTTY
    assert result.status == FAIL and "not a usable I2C bus" in result.message


# --- gpio ----------------------------------------------------------------------------------

def test_gpio_without_a_chip(tmp_path):
    result = _one_line(doctor.check_gpio(pinmap.default_button_pins(), dev_dir=tmp_path))
    assert result.status == FAIL and "not a Raspberry Pi" in result.message


def test_gpio_pins_free(tmp_path):
    (tmp_path / "gpiochip0").touch()
    factory = MockFactory()
    result = doctor.check_gpio({**pinmap.default_button_pins(), **pinmap.default_head_pins()},
                               dev_dir=tmp_path, pin_factory=factory)
    assert result.status == OK
    assert "bunco=GPIO13" in result.message and "buzzer=GPIO12" in result.message
    # The check let go of every pin it tried.
    Button(13, pin_factory=factory).close()


def test_gpio_pin_held_elsewhere_is_named(tmp_path):
    (tmp_path / "gpiochip0").touch()
    factory = MockFactory()
    holder = Button(13, pin_factory=factory)
    try:
        result = doctor.check_gpio(pinmap.default_button_pins(), dev_dir=tmp_path,
                                   pin_factory=factory)
    finally:
        holder.close()
    assert result.status == FAIL
    assert "GPIO13 (bunco, pin 33)" in result.message and "GPIO5" not in result.message
    _one_line(result)


def test_gpio_held_by_the_boxs_own_service_is_only_a_warning(tmp_path):
    (tmp_path / "gpiochip0").touch()
    factory = MockFactory()
    holders = [Button(g, pin_factory=factory) for g in pinmap.default_button_pins().values()]
    try:
        result = doctor.check_gpio(pinmap.default_button_pins(), dev_dir=tmp_path,
                                   pin_factory=factory, service_running=True)
    finally:
        for holder in holders:
            holder.close()
    assert result.status == WARN and "systemctl stop bunco-pi-table" in result.message


def test_gpio_two_roles_on_one_pin(tmp_path):
    (tmp_path / "gpiochip0").touch()
    result = doctor.check_gpio({"point": 5, "undo": 5}, dev_dir=tmp_path,
                               pin_factory=MockFactory())
    assert result.status == FAIL and "point and undo share GPIO5" in result.message


# --- dice sensor -------------------------------------------------------------------------------

def _checksummed(text: str) -> bytes:
    value = 0
    for b in text.encode():
        value ^= b
    return f"{text}*{value:02X}\r\n".encode()


@pytest.fixture
def pty_sensor():
    """A pty pair: the doctor opens the slave with pyserial; the test speaks on the master."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    yield master, path
    os.close(master)
    os.close(slave)


def _opener(master, *lines):
    def open_then_speak(path):
        port = serial.Serial(path, 115200, timeout=0.1)  # opening flushes old input
        for line in lines:
            os.write(master, line)
        return port
    return open_then_speak


def test_dice_absent_is_a_warning_unless_required(tmp_path):
    port = str(tmp_path / "ttyACM0")
    assert doctor.check_dice(port, "auto").status == WARN
    assert doctor.check_dice(port, "on").status == FAIL
    assert doctor.check_dice(port, "off").status == OK


def test_dice_sensor_says_hello(pty_sensor):
    master, path = pty_sensor
    result = doctor.check_dice(path, "on", hello_timeout=3,
                               open_serial=_opener(master, _checksummed("HELLO 1.2")))
    assert result.status == OK and "says HELLO, firmware 1.2, protocol 1" in result.message


def test_dice_sensor_says_hello_in_protocol_2(pty_sensor):
    from bunco_pi.hardware.dice_wire import Hello, format_message

    master, path = pty_sensor
    hello = format_message(Hello("2.0.0", (("proto", "2"),)))
    result = doctor.check_dice(path, "on", hello_timeout=3, open_serial=_opener(master, hello))
    assert result.status == OK and "firmware 2.0.0, protocol 2" in result.message


def test_dice_sensor_with_a_bad_checksum_is_not_trusted(pty_sensor):
    master, path = pty_sensor
    result = doctor.check_dice(path, "on", hello_timeout=0.5,
                               open_serial=_opener(master, b"HELLO 1.2*00\r\n", b"garbage\n"))
    assert result.status == FAIL and "2 line(s) that break the protocol" in result.message


def test_dice_sensor_reporting_an_error(pty_sensor):
    master, path = pty_sensor
    result = doctor.check_dice(path, "auto", hello_timeout=3,
                               open_serial=_opener(master, _checksummed("ERR no display")))
    assert result.status == WARN and "reports a problem: no display" in result.message


def test_dice_sensor_rolling_counts_as_talking(pty_sensor):
    master, path = pty_sensor
    result = doctor.check_dice(path, "on", hello_timeout=3,
                               open_serial=_opener(master, _checksummed("ROLL 17 3 3 5")))
    assert result.status == OK and "talking (ROLL)" in result.message


def test_dice_sensor_silent(pty_sensor):
    master, path = pty_sensor
    start = time.monotonic()
    result = doctor.check_dice(path, "auto", hello_timeout=0.5, open_serial=_opener(master))
    assert result.status == WARN and "said nothing in 0.5 s" in result.message
    assert time.monotonic() - start < 3


def test_dice_port_is_not_read_while_the_table_runs(pty_sensor):
    _, path = pty_sensor

    def must_not_open(path):
        raise AssertionError("the doctor read the sensor the table is reading")

    result = doctor.check_dice(path, "on", open_serial=must_not_open, service_running=True)
    assert result.status == OK and "not read while" in result.message


def test_dice_port_that_will_not_open(tmp_path):
    port = tmp_path / "ttyACM0"
    port.touch()  # exists, but is no serial port: the real pyserial open fails
    result = _one_line(doctor.check_dice(str(port), "on", hello_timeout=0.2))
    assert result.status == FAIL and f"cannot open {port}" in result.message


# --- broker ---------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_broker_not_listening():
    port = _free_port()
    result = _one_line(doctor.check_broker("127.0.0.1", port, "table-2", "pw", timeout=1))
    assert result.status == FAIL and f"cannot reach 127.0.0.1:{port}" in result.message


def test_broker_that_is_not_mqtt():
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    accepted = []
    thread = threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    try:
        result = doctor.check_broker("127.0.0.1", port, "table-2", "pw", timeout=1)
    finally:
        thread.join(5)
        for conn, _ in accepted:
            conn.close()
        listener.close()
    assert result.status == FAIL and "gave no MQTT answer in 1 s" in result.message


@pytest.fixture
def mosquitto(tmp_path):
    binary = shutil.which("mosquitto") or shutil.which("/usr/sbin/mosquitto")
    if binary is None:
        pytest.skip("mosquitto is not installed (Debian package: mosquitto)")
    port = _free_port()
    credentials = provision.head_credentials(2)
    password = credentials.password("table-2")
    (tmp_path / "mosquitto").mkdir()
    (tmp_path / "mosquitto" / "passwd").write_text(password_file_text(broker_logins(credentials)))
    (tmp_path / "mosquitto" / "acl").write_text(acl_text(broker_logins(credentials).passwords))
    conf = provision.mosquitto_conf(port, etc=str(tmp_path), data_dir=str(tmp_path))
    conf = conf.replace(f"listener {port}\n", f"listener {port} 127.0.0.1\n")
    if os.geteuid() == 0:
        conf += "user root\n"
    (tmp_path / "m.conf").write_text(conf)
    proc = subprocess.Popen([binary, "-c", str(tmp_path / "m.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield port, password
    proc.terminate()
    proc.wait(timeout=10)


def test_broker_accepts_the_box(mosquitto):
    port, password = mosquitto
    result = doctor.check_broker("127.0.0.1", port, "doctor-table-2", password, timeout=5)
    assert result.status == OK and "accepts doctor-table-2; round trip" in result.message


def test_broker_refuses_a_wrong_password(mosquitto):
    port, _ = mosquitto
    result = _one_line(doctor.check_broker("127.0.0.1", port, "table-2", "wrong", timeout=5))
    assert result.status == FAIL and "refused table-2" in result.message


def test_credentials_file_problems(tmp_path):
    _, problem = doctor.read_password(tmp_path / "nope", "table-2")
    assert problem.status == FAIL and "missing" in problem.message
    path = tmp_path / "credentials.json"
    path.write_text(credentials_text(Credentials({"table-2": "s3cret"})))
    assert doctor.read_password(path, "table-2") == ("s3cret", None)
    _, problem = doctor.read_password(path, "table-3")
    assert problem.status == FAIL and "'table-3'" in _one_line(problem).message
    path.write_text("s3cret\n")  # a bare password is not a credentials file
    _, problem = doctor.read_password(path, "table-2")
    assert problem.status == FAIL and "unreadable credentials file" in _one_line(problem).message


# --- clock and disk ----------------------------------------------------------------------------

NOW = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "synced", "status", "words"),
    [
        (NOW, lambda: True, OK, "synchronised by NTP"),
        (NOW, lambda: False, WARN, "not synchronised yet"),
        (NOW, lambda: None, OK, "NTP state unknown"),
        (datetime(1970, 1, 1, tzinfo=UTC), lambda: None, WARN, "the clock says 1970-01-01"),
    ],
)
def test_clock(now, synced, status, words):
    result = doctor.check_clock(now, synced)
    assert result.status == status and words in result.message


def test_disk(tmp_path):
    assert doctor.check_disk(tmp_path / "missing").status == FAIL
    ok = doctor.check_disk(tmp_path)
    assert ok.status == OK and "MB free" in ok.message
    full = doctor.check_disk(tmp_path, min_free=2**62)
    assert full.status == FAIL and "need" in full.message


# --- the whole command --------------------------------------------------------------------------

def _parse(*argv):
    parser = argparse.ArgumentParser()
    doctor_command.register(parser.add_subparsers())
    return parser.parse_args(["doctor", *argv])


@pytest.mark.skipif(any(Path("/dev").glob("gpiochip*")) or Path("/dev/i2c-1").exists(),
                    reason="this machine has Pi-like hardware")
def test_on_a_machine_without_pi_hardware(tmp_path, capsys):
    args = _parse("--config", str(tmp_path / "table.toml"), "--head-config",
                  str(tmp_path / "head.toml"), "--hello-timeout", "0.2",
                  "--broker-timeout", "1")
    assert args.func(args) == 1
    lines = capsys.readouterr().out.splitlines()
    parts = [line.split()[1].rstrip(":") for line in lines]
    assert parts == ["config", "display", "gpio", "dice", "broker", "clock", "disk"]
    assert all(line.split()[0] in (OK, WARN, FAIL) for line in lines)
    status = {line.split()[1].rstrip(":"): line.split()[0] for line in lines}
    assert status["display"] == FAIL and status["gpio"] == FAIL and status["config"] == FAIL


def test_a_healthy_box_exits_zero(tmp_path, mosquitto, capsys):
    port, password = mosquitto
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "gpiochip0").touch()
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "credentials.json").write_text(
        credentials_text(Credentials({"table-2": password})))
    table = provision.table_config(2, "127.0.0.1", port=port, etc=str(tmp_path))
    table = table.replace("discover = true", "discover = false")
    table = table.replace('dir = "/var/lib/bunco-pi"', f'dir = "{tmp_path}"')
    (tmp_path / "table.toml").write_text(table)
    (dev / "i2c-1").touch()
    args = _parse("--config", str(tmp_path / "table.toml"), "--head-config",
                  str(tmp_path / "none.toml"), "--dev", str(dev))
    probed = []
    code = doctor_command.run(args, pin_factory=MockFactory(),
                              i2c_probe=lambda dev, addr: probed.append(addr) or True,
                              service_running=lambda: False)
    lines = capsys.readouterr().out.splitlines()
    assert code == 0, lines
    assert probed == [0x3C]
    assert [line.split()[0] for line in lines if "clock" not in line] == [OK] * 6


def test_dice_with_the_real_opener(pty_sensor):
    master, path = pty_sensor
    # The sensor repeats HELLO; speak a little after the doctor has opened (and flushed) it.
    speaker = threading.Timer(0.5, lambda: os.write(master, _checksummed("HELLO 1.0.0")))
    speaker.start()
    try:
        result = doctor.check_dice(path, "on", hello_timeout=3)
    finally:
        speaker.cancel()
    assert result.status == OK and "firmware 1.0.0" in result.message


def test_dice_port_locked_by_the_table(pty_sensor):
    _, path = pty_sensor
    table = serial.Serial(path, 115200, exclusive=True)  # as bunco-pi-table opens it
    try:
        result = _one_line(doctor.check_dice(path, "on", hello_timeout=0.5))
    finally:
        table.close()
    assert result.status == FAIL and "another program has it open" in result.message


# --- the dice camera ---------------------------------------------------------------------------

def _import_without(missing: str, error: Exception):
    import importlib

    def importer(name):
        if name == missing:
            raise error
        return importlib.import_module(name)
    return importer


def test_camera_stack_names_what_it_imported_and_its_version():
    import cv2
    import numpy as np

    result = _one_line(doctor.check_camera_stack("folder:/photos"))
    assert result.status == OK
    assert result.message == f"numpy {np.__version__}, cv2 {cv2.__version__}"


def test_a_pi_camera_without_picamera2_says_how_to_get_it():
    try:
        import picamera2  # noqa: F401  (only on Raspberry Pi OS)
    except ImportError:
        pass
    else:
        pytest.skip("picamera2 is installed here")
    result = _one_line(doctor.check_camera_stack("picamera"))
    assert result.status == FAIL
    assert result.message.startswith("cannot import picamera2 (not installed): ")
    assert "sudo apt install python3-picamera2" in result.message


def test_opencv_missing_is_one_line_naming_the_package():
    importer = _import_without("cv2", ModuleNotFoundError("No module named 'cv2'"))
    result = _one_line(doctor.check_camera_stack("opencv:0", importer))
    assert result.status == FAIL
    assert result.message.startswith("cannot import cv2 (not installed): ")
    assert "python3-opencv" in result.message and "bunco-pi[camera]" in result.message


def test_a_broken_native_library_is_named_by_its_first_line():
    error = ImportError("libGL.so.1: cannot open shared object file\n  more detail")
    result = _one_line(doctor.check_camera_stack("opencv:0", _import_without("cv2", error)))
    assert result.status == FAIL
    assert "cannot import cv2 (libGL.so.1: cannot open shared object file)" in result.message


def test_the_shipped_dice_network_loads_and_runs():
    result = _one_line(doctor.check_dice_net())
    assert result.status == OK
    assert result.message.startswith("dice_net.onnx (") and "loads and runs (9 outputs" in \
        result.message


def test_a_missing_or_corrupt_dice_network_is_one_line(tmp_path):
    missing = _one_line(doctor.check_dice_net(tmp_path / "gone.onnx"))
    assert missing.status == FAIL and "no such dice network file" in missing.message
    corrupt = tmp_path / "dice_net.onnx"
    corrupt.write_bytes(b"not a network at all" * 10)
    result = _one_line(doctor.check_dice_net(corrupt))
    assert result.status == FAIL and str(corrupt) in result.message
    assert "reinstall bunco-pi" in result.message


def test_the_shipped_finder_and_face_reader_load_and_run():
    result = _one_line(doctor.check_face_reader())
    assert result.status == OK
    assert result.message.startswith("dice_finder.onnx (") and "die_faces.onnx (" in result.message
    assert "7 answers a die) load and run" in result.message


def test_a_missing_or_corrupt_finder_or_face_reader_file_is_one_line(tmp_path):
    missing = _one_line(doctor.check_face_reader(faces=tmp_path / "gone.onnx"))
    assert missing.status == FAIL and "no such dice face reader file" in missing.message
    corrupt = tmp_path / "dice_finder.onnx"
    corrupt.write_bytes(b"not a network at all" * 10)
    result = _one_line(doctor.check_face_reader(finder=corrupt))
    assert result.status == FAIL and str(corrupt) in result.message
    assert "reinstall bunco-pi" in result.message


def _photo(folder: Path, name: str = "tray.png") -> Path:
    import cv2
    import numpy as np

    folder.mkdir(exist_ok=True)
    path = folder / name
    assert cv2.imwrite(str(path), np.full((48, 64, 3), 200, np.uint8))
    return path


def test_one_frame_from_a_folder_of_photos(tmp_path):
    _photo(tmp_path / "photos")
    result = _one_line(doctor.check_camera_frame(f"folder:{tmp_path / 'photos'}"))
    assert result.status == OK
    assert result.message.startswith(f"one 64x48 frame from folder:{tmp_path / 'photos'} in ")


def test_camera_sources_that_give_no_frame(tmp_path):
    (tmp_path / "empty").mkdir()
    empty = _one_line(doctor.check_camera_frame(f"folder:{tmp_path / 'empty'}"))
    assert empty.status == FAIL and "no .jpg/.png images in it" in empty.message
    video = _one_line(doctor.check_camera_frame(f"opencv:{tmp_path / 'none.mp4'}"))
    assert video.status == FAIL and "OpenCV cannot open" in video.message
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "tray.jpg").write_bytes(b"not a jpeg")
    unreadable = _one_line(doctor.check_camera_frame(f"folder:{tmp_path / 'bad'}"))
    assert unreadable.status == FAIL and "tray.jpg" in unreadable.message


def test_a_camera_that_raises_or_hangs():
    def raising(source, calibration):
        raise RuntimeError("Camera __init__ sequence did not complete.\nmore")

    failed = _one_line(doctor.check_camera_frame("picamera", opener=raising))
    assert failed.status == FAIL
    assert "picamera failed: Camera __init__ sequence did not complete." in failed.message
    assert "rpicam-hello --list-cameras" in failed.message

    released = threading.Event()

    class Hung:
        def read(self):
            released.wait(5)

        def close(self):
            pass

    try:
        hung = _one_line(doctor.check_camera_frame("picamera", timeout=0.2,
                                                   opener=lambda source, calibration: Hung()))
    finally:
        released.set()
    assert hung.status == FAIL and hung.message.startswith("picamera gave no frame in 0.2 s")


def test_a_camera_held_by_the_running_table_is_not_opened():
    opened = []
    result = doctor.check_camera_frame("picamera", service_running=True,
                                       opener=lambda *args: opened.append(args))
    assert result.status == OK and "not opened while bunco-pi-table runs" in result.message
    assert opened == []


def test_doctor_checks_the_camera_the_config_names(tmp_path, capsys):
    _photo(tmp_path / "photos")
    (tmp_path / "table.toml").write_text(
        '[display]\ntype = "none"\n[camera]\nsource = "folder:photos"\n'
        f'[data]\ndir = "{tmp_path}"\n[broker]\ndiscover = false\nport = 1\n')
    args = _parse("--config", str(tmp_path / "table.toml"), "--head-config",
                  str(tmp_path / "none.toml"), "--dev", str(tmp_path), "--broker-timeout", "0.5")
    doctor_command.run(args, service_running=lambda: False)
    lines = capsys.readouterr().out.splitlines()
    camera = [line for line in lines if line.split(":")[0].split(maxsplit=1)[1].startswith(
        ("camera", "dice network", "dice face reader"))]
    assert [line.split(":")[0] for line in camera] == [
        "OK   camera stack", "OK   dice network", "OK   dice face reader", "OK   camera"], lines
    assert f"frame from folder:{tmp_path / 'photos'}" in camera[3]


def _dropped(link, seconds: float) -> list:
    from conftest import collect

    from bunco_pi.net.link import Disconnected

    return [e for e in collect(link.inbox, seconds) if isinstance(e, Disconnected)]


@pytest.mark.slow
def test_the_doctors_login_leaves_the_running_box_connected(broker, make_link):
    """The doctor on a live box logs in as doctor-table-2 with table-2's own password: the
    box's session (the broker names sessions after users) is not taken, the box stays on."""
    box = make_link("table-2")
    _dropped(box, 0.3)  # whatever the connect itself put there
    result = doctor.check_broker(broker.host, broker.port, doctor_user("table-2"),
                                 broker.credentials.password("table-2"), timeout=5)
    assert result.status == OK, result.line()
    assert "accepts doctor-table-2; round trip" in result.message
    assert _dropped(box, 1.0) == []
    assert box.connected


@pytest.mark.slow
def test_logging_in_as_the_box_itself_would_knock_it_off(broker, make_link):
    """What the doctor did before it had its own user, to show the test above can fail."""
    box = make_link("table-3")
    _dropped(box, 0.3)
    doctor.check_broker(broker.host, broker.port, "table-3",
                        broker.credentials.password("table-3"), timeout=5)
    assert _dropped(box, 2.0)


def test_the_doctors_users_can_only_read_the_night():
    creds = broker_logins(Credentials({"head": "h", "table-2": "t2"}))
    assert creds.passwords["doctor-head"] == "h" and creds.passwords["doctor-table-2"] == "t2"
    acl = acl_text(creds.passwords).split("\n\n")
    (doctor_block,) = [b for b in acl if b.startswith("user doctor-table-2")]
    # it reads the night and writes only its echo, outside every night: nothing a head reads
    assert doctor_block.splitlines()[1:] == ["topic read bunco/#",
                                             "topic readwrite bunco-doctor/doctor-table-2/echo"]
    assert broker_logins(creds) == creds  # no doctor of a doctor
