"""Check every part a bunco-pi box needs, and say in one line what is wrong and how to fix it.

Each check takes the paths, devices and clocks it looks at as arguments, so a test can point
it at a temporary directory, gpiozero's MockFactory, a pty or a loopback broker. The
``bunco-pi doctor`` command (``bunco_pi.commands.doctor``) runs them in order and prints one
line per check.
"""

from __future__ import annotations

import errno
import importlib
import os
import shutil
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from bunco_pi.hardware import pinmap

OK, WARN, FAIL = "OK", "WARN", "FAIL"
MIN_FREE_BYTES = 100 * 1024 * 1024
I2C_SLAVE = 0x0703  # linux/i2c-dev.h: select the device address for plain read()/write()
WIRING = "hardware/wiring.md"


@dataclass(frozen=True)
class CheckResult:
    """One line of the report: what was checked, how it went, and what to do about it."""

    part: str
    status: str  # OK, WARN (optional part missing) or FAIL (the box cannot work)
    message: str

    @property
    def failed(self) -> bool:
        return self.status == FAIL

    def line(self) -> str:
        return f"{self.status:<4} {self.part}: {' '.join(self.message.split())}"


# --- the config -----------------------------------------------------------------------------

@dataclass(frozen=True)
class BoxConfig:
    """What the doctor needs from /etc/bunco-pi/table.toml (and head.toml on the head), as
    the boxes' own loaders (``bunco_pi.table.config``, ``bunco_pi.head.config``) read them."""

    i2c_bus: int = 1
    i2c_address: int = pinmap.DEFAULT_I2C_ADDRESS
    display: bool = True  # False: [display] type = "none"
    pins: Mapping[str, int] = field(default_factory=pinmap.default_button_pins)
    dice_sensor: str = "off"  # "on" when [dice] port names a sensor, "off" when it is empty
    dice_port: str = ""
    camera_source: str = ""  # [camera] source: "picamera", "opencv:...", "folder:..."; "" none
    camera_calibration: Path | None = None
    broker_host: str = "127.0.0.1"
    broker_port: int = 1883
    discover: bool = False
    username: str | None = None  # table-<number>, as net.broker names the broker users
    credentials: Path | None = None  # a credentials file in net.broker's format
    data_dir: str = "/var/lib/bunco-pi"
    night: str | None = None  # set on the head only
    rules_file: str | None = None
    rules_preset: str | None = None
    head_username: str | None = None
    head_credentials: Path | None = None
    head_host: str = "127.0.0.1"
    head_port: int = 1883
    display_kind: str = "ssd1306"  # [display] type, for `doctor --interactive` to draw on it
    display_rotation: int = 0
    buzzer_kind: str = pinmap.BUZZER_KIND  # "TonalBuzzer" or "Buzzer" (head.toml [buzzer] kind)


def load_config(table_path: Path, head_path: Path | None = None
                ) -> tuple[BoxConfig, CheckResult]:
    """The box's config (defaults where a file is missing) and a report line about it."""
    from bunco_pi.errors import UserError
    from bunco_pi.head.config import load_head_config
    from bunco_pi.table.config import load_config as load_table_config

    if not table_path.is_file():
        return BoxConfig(), CheckResult(
            "config", FAIL,
            f"{table_path} missing: install the box with `sudo bash install/install.sh table "
            "--table N` (or the head), or point at one with --config; checking the default "
            "wiring")
    head_path = head_path if head_path is not None and head_path.is_file() else None
    try:
        table = load_table_config(table_path)
        head = load_head_config(head_path) if head_path is not None else None
    except PermissionError as exc:
        return BoxConfig(), CheckResult("config", FAIL, f"cannot read {exc.filename}: run the "
                                        "doctor as the service user (`sudo -u bunco bunco-pi "
                                        "doctor`)")
    except UserError as exc:
        return BoxConfig(), CheckResult("config", FAIL, str(exc))
    pins = dict(table.buttons.pins)
    if head is not None:
        pins.update(bell=head.bell_pin, buzzer=head.buzzer_pin)
    cfg = BoxConfig(
        i2c_bus=table.display.port,
        i2c_address=table.display.address,
        display=table.display.kind != "none",
        pins=pins,
        dice_sensor="on" if table.dice_port else "off",
        dice_port=table.dice_port,
        camera_source=table.camera.source,
        camera_calibration=table.camera.calibration,
        broker_host=table.broker.host,
        broker_port=table.broker.port,
        discover=table.broker.discover,
        username=table.node_name,
        credentials=table.broker.credentials,
        data_dir=str(table.data_dir),
        night=head.night if head else None,
        rules_file=str(head.rules_file) if head and head.rules_file else None,
        rules_preset=head.rules_preset if head else None,
        head_username=head.username if head else None,
        head_credentials=head.broker.credentials if head else None,
        head_host=head.broker.host if head else "127.0.0.1",
        head_port=head.broker.port if head else 1883,
        display_kind=table.display.kind,
        display_rotation=table.display.rotation,
        buzzer_kind=head.buzzer_kind if head else pinmap.BUZZER_KIND,
    )
    where = f"{table_path}" + (f" and {head_path}" if head else "")
    return cfg, CheckResult("config", OK, f"read {where}")


# --- the house rules (head only) -------------------------------------------------------------

def check_rules(path: Path) -> CheckResult:
    """The head's house rules file loads: a typo found now, not when the first round starts."""
    from bunco_pi.errors import UserError
    from bunco_pi.rules.house import load_rules

    try:
        rules = load_rules(path)
    except UserError as exc:
        return CheckResult("rules", FAIL, f"{exc}; `bunco-pi rules check {path}` after fixing")
    return CheckResult("rules", OK, f"{path}: {rules.name} ({rules.play} play)")


# --- the display ----------------------------------------------------------------------------

def probe_i2c(device: Path, address: int) -> bool:
    """True if a device ACKs ``address`` on the bus: one read byte, as ``i2cdetect -r`` does.

    Raises OSError when the bus itself cannot be used (permissions, not an adapter, busy).
    """
    import fcntl

    fd = os.open(device, os.O_RDWR)
    try:
        fcntl.ioctl(fd, I2C_SLAVE, address)
        try:
            os.read(fd, 1)
        except OSError as exc:
            if exc.errno in (errno.ENXIO, errno.EREMOTEIO, errno.EIO, errno.ETIMEDOUT):
                return False
            raise
        return True
    finally:
        os.close(fd)


def check_display(bus: int = 1, address: int = pinmap.DEFAULT_I2C_ADDRESS,
                  dev_dir: Path = Path("/dev"),
                  probe: Callable[[Path, int], bool] = probe_i2c) -> CheckResult:
    device = dev_dir / f"i2c-{bus}"
    wires = (f"VCC->pin {pinmap.OLED_POWER_PIN}, GND->pin {pinmap.OLED_GROUND_PIN}, "
             + ", ".join(f"{p.part.split()[-1]}->pin {p.header_pin}" for p in pinmap.I2C_PINS))
    if not device.exists():
        return CheckResult("display", FAIL,
                           f"{device} missing: I2C is off or this is not a Pi; enable it with "
                           "`sudo raspi-config nonint do_i2c 0` and reboot")
    try:
        answered = probe(device, address)
    except PermissionError:
        return CheckResult("display", FAIL, f"not allowed to open {device}: add the user to "
                           "the i2c group (`sudo usermod -aG i2c $USER`, log in again)")
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return CheckResult("display", FAIL, f"0x{address:02x} on {device} is held by a "
                               "kernel driver: remove the OLED's dtoverlay line from "
                               "/boot/firmware/config.txt")
        return CheckResult("display", FAIL, f"{device} is not a usable I2C bus "
                           f"({exc.strerror or exc})")
    if not answered:
        return CheckResult("display", FAIL,
                           f"nothing answers at 0x{address:02x} on {device}: check {wires} "
                           f"({WIRING}); `i2cdetect -y {bus}` lists what is there (0x3d is the "
                           "other usual address: set [display] address)")
    return CheckResult("display", OK, f"OLED answers at 0x{address:02x} on {device}")


# --- the buttons and buzzer ---------------------------------------------------------------------

def box_service_running() -> bool:
    """True if this box's own bunco-pi service runs (it holds the pins and the dice port)."""
    if shutil.which("systemctl") is None:
        return False
    try:
        out = subprocess.run(["systemctl", "is-active", "--quiet", "bunco-pi-table.service"],
                             capture_output=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


def check_gpio(pins: Mapping[str, int], dev_dir: Path = Path("/dev"),
               pin_factory=None, service_running: bool = False) -> CheckResult:
    """The GPIO chip is there and no other program holds any of the box's pins.

    While the box's own service runs it holds every pin: that is a WARN (the pins could not
    be tested), not a fault.
    """
    if not sorted(dev_dir.glob("gpiochip*")):
        return CheckResult("gpio", FAIL, f"no {dev_dir}/gpiochip*: not a Raspberry Pi, so no "
                           "buttons (`bunco-pi demo` runs a whole night without hardware)")
    clashes = _duplicate_pins(pins)
    if clashes:
        return CheckResult("gpio", FAIL, f"{clashes} in the config ([buttons] of table.toml, "
                           f"[bell] and [buzzer] of head.toml): give each role its own GPIO "
                           f"({WIRING})")
    from gpiozero import DigitalOutputDevice, InputDevice

    held = []
    for role, gpio in pins.items():
        device_type = DigitalOutputDevice if role == "buzzer" else InputDevice
        try:
            device = device_type(gpio, pin_factory=pin_factory)
        except Exception as exc:  # gpiozero raises many types: each is a reason to report
            held.append(f"GPIO{gpio} ({role}, pin {_header_pin(gpio)}): {exc}")
        else:
            device.close()
    if held and service_running:
        return CheckResult("gpio", WARN, f"{len(held)} pin(s) held by the running "
                           "bunco-pi-table service, as they should be; to test the wiring: "
                           "`sudo systemctl stop bunco-pi-table bunco-pi-head`, run the doctor, "
                           "start them again")
    if held:
        return CheckResult("gpio", FAIL, "cannot claim " + "; ".join(held)
                           + ": stop the other program (`systemctl status bunco-pi-table`) or "
                           "fix the pins in the config")
    roles = ", ".join(f"{r}=GPIO{g}" for r, g in pins.items())
    return CheckResult("gpio", OK, f"pins free: {roles}")


def _duplicate_pins(pins: Mapping[str, int]) -> str:
    by_gpio: dict[int, list[str]] = {}
    for role, gpio in pins.items():
        by_gpio.setdefault(gpio, []).append(role)
    return "; ".join(f"{' and '.join(r)} share GPIO{g}" for g, r in by_gpio.items() if len(r) > 1)


def _header_pin(gpio: int) -> str:
    for a in pinmap.TABLE_BUTTONS + pinmap.HEAD_EXTRAS + pinmap.I2C_PINS:
        if a.gpio == gpio:
            return str(a.header_pin)
    return "?"


# --- the dice sensor ----------------------------------------------------------------------------

def check_dice(port: str, mode: str = "auto", hello_timeout: float = 3.0,
               open_serial: Callable | None = None, service_running: bool = False
               ) -> CheckResult:
    """The sensor's port exists and it speaks the protocol within ``hello_timeout`` seconds.

    Not read while the box's service runs: a line the doctor read would be a roll the table
    never saw.
    """
    if mode == "off":
        return CheckResult("dice", OK, "no sensor in the config ([dice] port is empty): tables "
                           "score with the buttons")
    missing = WARN if mode == "auto" else FAIL
    if not os.path.exists(port):
        return CheckResult("dice", missing, f"no sensor at {port}: tables score with the buttons; "
                           "plug the Pico in by USB to roll into the tray")
    if service_running:
        return CheckResult("dice", OK, f"sensor port {port} present; not read while "
                           "bunco-pi-table runs (it would take the table's rolls)")
    from bunco_pi.hardware import dice_wire

    if open_serial is None:
        from bunco_pi.hardware.dice_sensor import open_serial
    try:
        link = open_serial(port)
    except Exception as exc:  # pyserial's SerialException, PermissionError, ...
        text = str(exc)
        hint = (": add the user to the dialout group" if "ermission" in text else
                ": another program has it open (is bunco-pi-table running?)" if "lock" in text
                else "")
        return CheckResult("dice", missing, f"cannot open {port} ({' '.join(text.split())})"
                           f"{hint}")
    deadline = time.monotonic() + hello_timeout
    rejected = 0
    try:
        while time.monotonic() < deadline:
            raw = link.readline()
            if not raw:
                continue
            message = dice_wire.parse_line(raw.rstrip(b"\n"))
            if isinstance(message, dice_wire.Rejected):
                rejected += 1
            elif isinstance(message, dice_wire.Hello):
                return CheckResult("dice", OK, f"sensor on {port} says HELLO, firmware "
                                   f"{message.version}, protocol {message.protocol}")
            elif isinstance(message, dice_wire.SensorError):
                return CheckResult("dice", missing, f"sensor on {port} reports a problem: "
                                   f"{message.text} (see firmware/README.md)")
            else:
                return CheckResult("dice", OK, f"sensor on {port} is talking "
                                   f"({type(message).__name__.upper()})")
    finally:
        link.close()
    if rejected:
        return CheckResult("dice", missing, f"{port} sent {rejected} line(s) that break the "
                           "protocol (docs/dice-sensor-protocol.md): is it the bunco-pi "
                           "firmware? (firmware/README.md)")
    return CheckResult("dice", missing, f"{port} said nothing in {hello_timeout:g} s: a tray "
                       "that has rolled since it started speaks only on a roll, so press its "
                       "ROLL button during the check; or replug it, or flash the firmware "
                       "(firmware/README.md)")


# --- the dice camera ----------------------------------------------------------------------------

CAMERA_STACK_FIX = {
    "numpy": "sudo apt install python3-numpy (the venv sees Debian's packages), or "
             "pip install 'bunco-pi[camera]'",
    "cv2": "sudo apt install python3-opencv (the venv sees Debian's packages), or "
           "pip install 'bunco-pi[camera]'",
    "picamera2": "on Raspberry Pi OS: sudo apt install python3-picamera2, then make the venv "
                 "with --system-site-packages (install/install.sh --camera does both)",
}


def check_camera_stack(source: str,
                       importer: Callable[[str], ModuleType] = importlib.import_module
                       ) -> CheckResult:
    """The libraries the dice camera needs import, with their versions: numpy and OpenCV,
    and picamera2 for a Pi camera (imported only then: it exists only on Raspberry Pi OS)."""
    needed = ["numpy", "cv2"] + (["picamera2"] if source == "picamera" else [])
    found = []
    for name in needed:
        try:
            module = importer(name)
        except Exception as exc:  # ImportError, or a broken native library underneath
            why = "not installed" if isinstance(exc, ModuleNotFoundError) else _first_line(exc)
            return CheckResult("camera stack", FAIL, f"cannot import {name} ({why}): "
                               f"{CAMERA_STACK_FIX[name]}")
        found.append(f"{name} {_module_version(name, module)}")
    return CheckResult("camera stack", OK, ", ".join(found))


def _module_version(name: str, module: ModuleType) -> str:
    version = getattr(module, "__version__", None)
    if version is None:  # picamera2 has no __version__; its package metadata has
        from importlib import metadata

        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "(version unknown)"
    return str(version)


def check_dice_net(path: Path | None = None) -> CheckResult:
    """The dice network loads and runs once on a blank picture (onnxruntime)."""
    from bunco_pi.errors import UserError

    try:
        import numpy as np

        from bunco_pi.vision import net
    except ImportError as exc:
        return CheckResult("dice network", FAIL, f"cannot import the camera stack ({exc}): "
                           "see the camera stack line")
    path = path or net.MODEL_PATH
    try:
        model = net.load_net(path)
        out = model.forward(np.zeros((net.CHANNELS, 64, 64), np.float32))
    except UserError as exc:
        return CheckResult("dice network", FAIL, f"{exc}: reinstall bunco-pi (the file ships "
                           "with it)")
    except Exception as exc:  # onnxruntime's error for a file it parses but cannot run
        return CheckResult("dice network", FAIL, f"{path}: loads but does not run "
                           f"({_first_line(exc)}): reinstall bunco-pi")
    size = path.stat().st_size // 1024
    return CheckResult("dice network", OK, f"{path.name} ({size} KB) loads and runs "
                       f"({out.shape[0]} outputs a cell)")


def check_face_reader(finder: Path | None = None, faces: Path | None = None) -> CheckResult:
    """The finder network and the face reader (which look again at dice left unscored) load and run once."""
    from bunco_pi.errors import UserError

    try:
        import numpy as np

        from bunco_pi.vision import face_reader, net
    except ImportError as exc:
        return CheckResult("dice face reader", FAIL, f"cannot import the camera stack ({exc}): "
                           "see the camera stack line")
    finder = finder or net.FINDER_PATH
    faces = faces or face_reader.MODEL_PATH
    try:
        net.load_net(finder).forward(np.zeros((net.CHANNELS, 64, 64), np.float32))
        answers = face_reader.FaceReader(faces).beliefs([np.zeros((face_reader.SEEN,) * 2 + (3,), np.uint8)])
    except UserError as exc:
        return CheckResult("dice face reader", FAIL, f"{exc}: reinstall bunco-pi (the file ships with it)")
    except Exception as exc:  # onnxruntime's error for a file it parses but cannot run
        return CheckResult("dice face reader", FAIL, f"{finder.name} or {faces.name}: loads but does not "
                           f"run ({_first_line(exc)}): reinstall bunco-pi")
    sizes = [p.stat().st_size // 1024 for p in (finder, faces)]
    return CheckResult("dice face reader", OK, f"{finder.name} ({sizes[0]} KB) and {faces.name} "
                       f"({sizes[1]} KB, {answers.shape[1]} answers a die) load and run")


def check_camera_frame(source: str, calibration: Path | None = None, timeout: float = 10.0,
                       opener: Callable[[str, Any], Any] | None = None,
                       service_running: bool = False) -> CheckResult:
    """One frame from the configured camera, within ``timeout`` seconds.

    A camera device is not opened while the box's service runs: it holds the camera.
    """
    from bunco_pi.errors import UserError

    if service_running and source.partition(":")[0] in ("picamera", "opencv"):
        return CheckResult("camera", OK, f"{source} not opened while bunco-pi-table runs (it "
                           "holds the camera)")
    if opener is None:
        from bunco_pi.table.camera_feed import open_frames as opener
    settings = None
    if calibration is not None and calibration.is_file():
        from bunco_pi.vision.calibration import load_calibration

        try:
            settings = load_calibration(calibration)
        except UserError as exc:
            return CheckResult("camera", FAIL, f"{exc}: run `bunco-pi dice calibrate` again")
    outcome: list[Any] = []

    def grab() -> None:
        try:
            frames = opener(source, settings)
            try:
                outcome.append(frames.read())
            finally:
                frames.close()
        except Exception as exc:  # any camera library's error, reported as one line below
            outcome.append(exc)

    started = time.monotonic()
    worker = threading.Thread(target=grab, name="doctor camera", daemon=True)
    worker.start()
    worker.join(timeout)
    took = time.monotonic() - started
    if not outcome:
        return CheckResult("camera", FAIL, f"{source} gave no frame in {timeout:g} s: check "
                           "its cable (a Pi camera: `rpicam-hello --list-cameras`)")
    frame = outcome[0]
    if isinstance(frame, UserError):
        return CheckResult("camera", FAIL, f"{source}: {frame}")
    if isinstance(frame, Exception):
        return CheckResult("camera", FAIL, f"{source} failed: {_first_line(frame)} (a Pi "
                           "camera: `rpicam-hello --list-cameras` lists what the Pi sees)")
    if frame is None or getattr(frame, "ndim", 0) < 2:
        return CheckResult("camera", FAIL, f"{source} opened but gave no picture")
    height, width = frame.shape[:2]
    return CheckResult("camera", OK, f"one {width}x{height} frame from {source} in {took:.1f} s")


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


# --- the broker -----------------------------------------------------------------------------------

def check_broker(host: str, port: int, username: str | None, password: str | None,
                 timeout: float = 5.0, found_by: str = "", echoes: int = 3) -> CheckResult:
    """A TCP connection, an MQTT CONNECT, then ``echoes`` messages there and back.

    ``username`` is the doctor's own broker user (``doctor-table-3``, with the box's password:
    ``net.broker.doctor_user``), never the box's: the broker names a session after its user,
    so logging in as the box would knock the running box off. The round trip is a QoS 1
    publish to the doctor's own echo topic, outside every night, until it comes back: the
    broker runs on the head, so it is the time to the head and back.
    """
    where = f"{host}:{port}" + (f" ({found_by})" if found_by else "")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        return CheckResult("broker", FAIL, f"cannot reach {where}: {exc.strerror or exc}; on "
                           "the head check `systemctl status bunco-pi-broker`, on a table the "
                           "[broker] host in the config")
    import queue

    import paho.mqtt.client as mqtt

    replies: queue.Queue = queue.Queue()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                         client_id=f"bunco-pi-doctor-{os.getpid()}", protocol=mqtt.MQTTv5)
    if username:
        client.username_pw_set(username, password)
    # paho calls these on its loop thread: only hand the result over.
    client.on_connect = lambda c, u, flags, reason, props: replies.put(("connect", reason))
    client.on_disconnect = lambda c, u, flags, reason, props: replies.put(("connect", reason))
    client.on_subscribe = lambda c, u, mid, reasons, props: replies.put(("subscribed", reasons))
    client.on_message = lambda c, u, msg: replies.put(("echo", msg.payload))
    trips: list[float] = []
    try:
        client.connect(host, port, keepalive=10)
        client.loop_start()
        try:
            kind, reason = replies.get(timeout=timeout)
            if kind == "connect" and not reason.is_failure and username:
                trips = _echoes(client, replies, username, echoes, timeout)
        except queue.Empty:
            return CheckResult("broker", FAIL, f"{where} accepts TCP but gave no MQTT answer in "
                               f"{timeout:g} s: is it mosquitto?")
        finally:
            client.disconnect()
            client.loop_stop()
    except OSError as exc:
        return CheckResult("broker", FAIL, f"{where}: {exc}")
    who = username or "anonymous"
    if reason.is_failure:
        from bunco_pi.net.broker import DOCTOR_PREFIX

        if username and username.startswith(DOCTOR_PREFIX):
            return CheckResult("broker", FAIL, f"{where} refused {who}: {reason}; copy this "
                               "box's password from the head again (docs/install.md), or, if "
                               "the head was installed before the doctor had its own user, run "
                               "`sudo bash install/install.sh head` on the head again")
        return CheckResult("broker", FAIL, f"{where} refused {who}: {reason}; copy this table's "
                           "password from the head again (docs/install.md)")
    if username and not trips:
        return CheckResult("broker", FAIL, f"{where} accepts {who} but sent nothing back in "
                           f"{timeout:g} s: is the head's ACL (/etc/bunco-pi/mosquitto/acl) "
                           "the installer's?")
    trip = f"; round trip {statistics.median(trips) * 1000:.0f} ms" if trips else ""
    return CheckResult("broker", OK, f"{where} accepts {who}{trip}")


def _echoes(client: Any, replies: Any, username: str, count: int, timeout: float
            ) -> list[float]:
    """Round trips in seconds of ``count`` QoS 1 messages to ``username``'s own echo topic."""
    import queue

    from bunco_pi.net.topics import doctor_echo

    topic = doctor_echo(username)
    client.subscribe(topic, qos=1)
    trips: list[float] = []
    deadline = time.monotonic() + timeout
    try:
        kind, _ = replies.get(timeout=timeout)
        if kind != "subscribed":
            return trips
        for n in range(count):
            token = f"echo {os.getpid()} {n}".encode()
            sent = time.monotonic()
            client.publish(topic, token, qos=1)
            while True:
                kind, payload = replies.get(timeout=max(0.0, deadline - time.monotonic()))
                if kind == "echo" and payload == token:
                    trips.append(time.monotonic() - sent)
                    break
                if kind == "connect":
                    return trips
    except queue.Empty:
        pass
    return trips


def read_password(path: Path | None, user: str | None
                  ) -> tuple[str | None, CheckResult | None]:
    """``user``'s password from the credentials file at ``path`` (``bunco_pi.net.broker``'s
    format), or a FAIL line saying why it cannot be had."""
    from bunco_pi.errors import UserError
    from bunco_pi.net.credentials import load_credentials

    if path is None or user is None:
        return None, None
    path = Path(path)
    try:
        path.open("rb").close()
    except FileNotFoundError:
        return None, CheckResult("broker", FAIL, f"credentials file {path} missing: re-run "
                                 "install/install.sh (a table: with --password-file)")
    except PermissionError:
        return None, CheckResult("broker", FAIL, f"not allowed to read {path}: run as the "
                                 "service user (`sudo -u bunco bunco-pi doctor`) or with sudo")
    except OSError as exc:
        return None, CheckResult("broker", FAIL, f"cannot read {path}: {exc.strerror or exc}")
    try:
        return load_credentials(path).password(user), None
    except UserError as exc:
        return None, CheckResult("broker", FAIL, f"{path}: {exc}; re-run install/install.sh "
                                 "(a table: with its password from the head)")


# --- the clock and the disk ---------------------------------------------------------------------

def timedatectl_synced() -> bool | None:
    """systemd's view of NTP sync, or None where timedatectl cannot tell."""
    if shutil.which("timedatectl") is None:
        return None
    try:
        out = subprocess.run(["timedatectl", "show", "-p", "NTPSynchronized", "--value"],
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = out.stdout.strip()
    return {"yes": True, "no": False}.get(value) if out.returncode == 0 else None


def check_clock(now: datetime | None = None,
                synced: Callable[[], bool | None] = timedatectl_synced) -> CheckResult:
    """Scores are ordered by sequence numbers, not time; the clock only dates the night."""
    now = now or datetime.now(UTC)
    state = synced()
    if state:
        return CheckResult("clock", OK, f"synchronised by NTP ({now:%Y-%m-%d %H:%M} UTC)")
    if now.year < 2024:
        return CheckResult("clock", WARN, f"the clock says {now:%Y-%m-%d}: connect the Pi to a "
                           "network with internet once so NTP sets it (scores are unaffected)")
    if state is False:
        return CheckResult("clock", WARN, f"not synchronised yet ({now:%Y-%m-%d %H:%M} UTC); "
                           "fine offline: scores are ordered by sequence, not time")
    return CheckResult("clock", OK, f"{now:%Y-%m-%d %H:%M} UTC (NTP state unknown)")


def check_disk(data_dir: Path, min_free: int = MIN_FREE_BYTES) -> CheckResult:
    if not data_dir.is_dir():
        return CheckResult("disk", FAIL, f"data directory {data_dir} missing: install the box "
                           "with install/install.sh, or set [data] dir")
    if not os.access(data_dir, os.W_OK):
        return CheckResult("disk", FAIL, f"cannot write {data_dir}: run as the service user "
                           "(`sudo -u bunco bunco-pi doctor`)")
    free = shutil.disk_usage(data_dir).free
    mb = free // (1024 * 1024)
    if free < min_free:
        return CheckResult("disk", FAIL, f"only {mb} MB free on {data_dir} (need "
                           f"{min_free // (1024 * 1024)} MB): `sudo apt-get clean`, remove old "
                           "files, or use a bigger SD card")
    return CheckResult("disk", OK, f"{mb} MB free on {data_dir}")


def any_failed(results: Iterable[CheckResult]) -> bool:
    return any(r.failed for r in results)
