"""Every unit in systemd/ passes `systemd-analyze verify` and keeps its promises.

verify refuses a unit whose ExecStart binary is missing, and /opt/bunco-pi does not exist
off a Pi, so each unit is verified as a copy whose ExecStart program is this Python: the
rest of the unit, arguments included, is checked as written.
"""

import configparser
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT_DIR = Path(__file__).resolve().parents[1] / "systemd"
UNITS = sorted(UNIT_DIR.glob("*.service"))
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd = pytest.mark.skipif(
    SYSTEMD_ANALYZE is None, reason="systemd-analyze absent (Debian package: systemd)"
)


def _with_existing_program(text: str) -> str:
    return re.sub(r"(?m)^(ExecStart=)\S+", lambda m: m.group(1) + sys.executable, text)


def _verify(tmp_path: Path, units: dict[str, str]) -> subprocess.CompletedProcess:
    for name, text in units.items():
        (tmp_path / name).write_text(text)
    return subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--man=no", *(str(tmp_path / n) for n in units)],
        capture_output=True, text=True, timeout=60,
    )


def _parse(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string(path.read_text())
    return parser


def test_the_three_units_exist():
    assert [u.name for u in UNITS] == [
        "bunco-pi-broker.service", "bunco-pi-head.service", "bunco-pi-table.service"]


@needs_systemd
def test_every_unit_verifies_cleanly(tmp_path):
    result = _verify(tmp_path, {u.name: _with_existing_program(u.read_text()) for u in UNITS})
    # verify exits 0 on an unknown key or a bad value and only warns: any output is a failure.
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "" and result.stdout.strip() == "", result.stderr


@needs_systemd
def test_verify_catches_a_typo(tmp_path):
    # Guards the test above: a misspelt key must produce output for it to fail on.
    text = _with_existing_program((UNIT_DIR / "bunco-pi-table.service").read_text())
    result = _verify(tmp_path, {"typo.service": text.replace("WatchdogSec=", "WatchdogSecs=")})
    assert "Unknown key" in result.stderr


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_unit_waits_for_the_network_and_restarts(unit):
    cfg = _parse(unit)
    assert "network-online.target" in cfg["Unit"]["After"]
    assert "network-online.target" in cfg["Unit"]["Wants"]
    service = cfg["Service"]
    assert service["Restart"] == "on-failure"
    assert service["Type"] == "notify"
    for key, value in {"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
                       "NoNewPrivileges": "yes"}.items():
        assert service[key] == value, f"{unit.name}: {key}"
    assert service["User"] not in ("root", "0")
    assert cfg["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.parametrize("name", ["bunco-pi-head.service", "bunco-pi-table.service"])
def test_boxes_have_a_watchdog_and_run_the_venv(name):
    service = _parse(UNIT_DIR / name)["Service"]
    assert int(service["WatchdogSec"]) >= 10
    role = name.split("-")[2].split(".")[0]
    assert service["ExecStart"] == (
        f"/opt/bunco-pi/bin/bunco-pi {role} --config /etc/bunco-pi/{role}.toml")
    assert service["User"] == "bunco"
    assert "/var/lib/bunco-pi" in service["ReadWritePaths"]
    # lgpio creates FIFOs in the working directory; / is read-only under ProtectSystem.
    assert service["WorkingDirectory"] == "/var/lib/bunco-pi"
    # Hiding /dev would hide the GPIO chip, the I2C bus and the dice sensor; ProtectClock
    # does it too, by implying DeviceAllow=char-rtc (a device allow-list of one).
    for key in ("PrivateDevices", "DevicePolicy", "DeviceAllow", "ProtectClock"):
        assert key not in service, f"{name}: {key} would lock the box out of its devices"
    assert service["CapabilityBoundingSet"] == ""


def test_broker_runs_the_generated_config():
    cfg = _parse(UNIT_DIR / "bunco-pi-broker.service")
    assert cfg["Service"]["ExecStart"] == (
        "/usr/sbin/mosquitto -c /etc/bunco-pi/mosquitto/mosquitto.conf")
    assert "mosquitto.service" in cfg["Unit"]["Conflicts"]
    # mosquitto sends READY=1 but never WATCHDOG=1: a watchdog would kill a healthy broker.
    assert "WatchdogSec" not in cfg["Service"]


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_every_unit_sets_its_open_file_limit(unit):
    assert int(_parse(unit)["Service"]["LimitNOFILE"]) >= 1024


def test_the_heads_console_leaves_files_for_the_night_under_its_units_limit():
    """The review's guest used up the head's 1,024 files with idle connections and the night
    record could not be written: the console's cap must leave the night its reserve."""
    from bunco_pi.console.limits import Limits

    files = int(_parse(UNIT_DIR / "bunco-pi-head.service")["Service"]["LimitNOFILE"])
    limits = Limits().for_open_files(files)
    assert limits.connections + limits.fd_reserve <= files
    assert limits.connections == Limits().connections  # the default cap fits as it is
