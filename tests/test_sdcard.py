"""``bunco-pi sdcard`` on FAT images shaped like each supported Raspberry Pi OS boot partition
(made with mkfs.vfat and read back with mtools, nothing mounted): every file it writes, and its
one-line refusals."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bunco_pi import firstboot
from bunco_pi.console.auth import check_password

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    not (shutil.which("mkfs.vfat") and shutil.which("mcopy") and shutil.which("openssl")),
    reason="needs dosfstools, mtools and openssl (Debian packages of those names)")

CMDLINE = ("console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 "
           "fsck.repair=yes rootwait quiet init=/usr/lib/raspberrypi-sys-mods/firstboot\n")
# What a freshly flashed card's boot partition holds (the firmware files as small stand-ins).
BOOKWORM = {"bootcode.bin": b"\0" * 512, "start4.elf": b"\0" * 2048, "fixup4.dat": b"\0" * 64,
            "kernel8.img": b"\0" * 4096, "bcm2710-rpi-zero-2-w.dtb": b"\0" * 256,
            "config.txt": b"dtparam=audio=on\ncamera_auto_detect=1\n",
            "cmdline.txt": CMDLINE.encode(), "issue.txt": b"Raspberry Pi reference 2024-11-19\n"}
# The releases after Bookworm add cloud-init's three files, commented out.
TRIXIE = {**BOOKWORM, "issue.txt": b"Raspberry Pi reference 2025-10-01\n",
          "user-data": b"#cloud-config\n# hostname: raspberrypi\n",
          "meta-data": b"# instance-id: rpios-image\n",
          "network-config": b"# network:\n#   version: 2\n"}
SHAPES = {"bookworm": BOOKWORM, "trixie": TRIXIE}


def mtools(*args: str, data: bytes | None = None) -> bytes:
    env = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}
    out = subprocess.run(list(args), input=data, capture_output=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout


def fat_image(path: Path, files: dict[str, bytes], size_kb: int = 16384) -> Path:
    subprocess.run(["mkfs.vfat", "-C", "-n", "bootfs", str(path), str(size_kb)],
                   check=True, capture_output=True)
    for name, data in files.items():
        local = path.parent / f".{name}"
        local.write_bytes(data)
        mtools("mcopy", "-i", str(path), str(local), f"::/{name}")
        local.unlink()
    return path


def card_tree(image: Path) -> dict[str, bytes]:
    """Every file on the image, path -> bytes."""
    listing = mtools("mdir", "-i", str(image), "-/", "-b", "::/").decode()
    files = {}
    for line in listing.splitlines():
        name = line.strip().removeprefix("::/")
        if not name or name.endswith("/"):
            continue
        try:
            files[name] = mtools("mtype", "-i", str(image), f"::/{name}")
        except AssertionError:
            continue  # a folder
    return files


def sdcard(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MTOOLS_SKIP_CHECK": "1"}
    return subprocess.run([sys.executable, "-m", "bunco_pi.cli", "sdcard", *args],
                          capture_output=True, text=True, input=stdin, env=env, timeout=300)


@pytest.fixture
def wifi_password(tmp_path) -> Path:
    path = tmp_path / "wifi.txt"
    path.write_text("corn-hall-2026\n")
    return path


def crypt_matches(password: str, hashed: str) -> bool:
    salt = hashed.split("$")[2]
    out = subprocess.run(["openssl", "passwd", "-6", "-salt", salt, "-stdin"],
                         input=password + "\n", capture_output=True, text=True, check=True)
    return out.stdout.strip() == hashed


def login_of(secrets: Path, hostname: str) -> tuple[str, str]:
    user, password = (secrets / f"{hostname}.login").read_text().split()
    return user, password


@pytest.mark.parametrize("shape", ["bookworm", "trixie"])
def test_a_table_card_has_everything_its_first_boot_needs(tmp_path, wifi_password, shape):
    image = fat_image(tmp_path / "boot.img", SHAPES[shape])
    secrets = tmp_path / "secrets"
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "bunco_pi-0.1.0-py3-none-any.whl").write_bytes(b"PK wheel" * 100)
    (wheels / "paho_mqtt-2.1.0-py3-none-any.whl").write_bytes(b"PK paho" * 100)
    debs = tmp_path / "debs"
    debs.mkdir()
    (debs / "mosquitto_2.0.11-1.2_arm64.deb").write_bytes(b"!<arch>\n" * 100)
    result = sdcard(str(image), "--role", "table", "--table", "3", "--tables", "4",
                    "--wifi", "Village Hall", "--wifi-password-file", str(wifi_password),
                    "--country", "gb", "--secrets", str(secrets), "--wheels", str(wheels),
                    "--debs", str(debs))
    assert result.returncode == 0, result.stderr
    mechanism = firstboot.FIRSTRUN if shape == "bookworm" else firstboot.CLOUD_INIT
    said = {firstboot.FIRSTRUN: "Bookworm's firstrun.sh", firstboot.CLOUD_INIT: "cloud-init"}
    assert f"bunco-table-3 (table 3 of 4), first boot by {said[mechanism]}" in result.stdout

    tree = card_tree(image)
    written = {k: v for k, v in tree.items() if SHAPES[shape].get(k) != v}
    expected = {"bunco-pi/box.env", "bunco-pi/firstboot.sh", "bunco-pi/bunco-pi-firstboot.service",
                "bunco-pi/credentials.json", "bunco-pi/source.tar.gz",
                "bunco-pi/wheels/bunco_pi-0.1.0-py3-none-any.whl",
                "bunco-pi/wheels/paho_mqtt-2.1.0-py3-none-any.whl",
                "bunco-pi/debs/mosquitto_2.0.11-1.2_arm64.deb"}
    if mechanism == firstboot.FIRSTRUN:
        expected |= {"firstrun.sh", "userconf.txt", "cmdline.txt", "bunco-pi/wifi.nmconnection"}
    else:
        expected |= {"user-data", "network-config", "meta-data"}
    assert set(written) == expected
    # The firmware is untouched; ssh was not asked for.
    for name in ("start4.elf", "kernel8.img", "config.txt"):
        assert tree[name] == SHAPES[shape][name]
    assert "ssh" not in tree

    # The table's own broker password, the one the head's card will hold too.
    night = json.loads((secrets / "credentials.json").read_text())["users"]
    assert sorted(night) == ["head", "table-1", "table-2", "table-3", "table-4"]
    assert json.loads(tree["bunco-pi/credentials.json"]) == {"users": {"table-3": night["table-3"]}}
    assert oct((secrets / "credentials.json").stat().st_mode & 0o777) == "0o600"
    env = tree["bunco-pi/box.env"].decode()
    for line in ("ROLE=table", "TABLE=3", "TABLES=4", "HOSTNAME=bunco-table-3",
                 f"MECHANISM={mechanism}", "HEAD_HOST=bunco-head.local", "NIGHT=''"):
        assert line in env.splitlines()  # no head's card yet: the night comes by zeroconf
    assert tree["bunco-pi/wheels/bunco_pi-0.1.0-py3-none-any.whl"] == b"PK wheel" * 100
    assert tree["bunco-pi/debs/mosquitto_2.0.11-1.2_arm64.deb"] == b"!<arch>\n" * 100
    with tarfile.open(fileobj=io.BytesIO(tree["bunco-pi/source.tar.gz"])) as tar:
        names = set(tar.getnames())
    assert {"install/install.sh", "systemd/bunco-pi-table.service", "bunco_pi/firstboot.py",
            "pyproject.toml", "LICENSE"} <= names
    assert not any("__pycache__" in n for n in names)
    for script in ("bunco-pi/firstboot.sh", *(["firstrun.sh"] if "firstrun.sh" in tree else [])):
        check = subprocess.run(["bash", "-n"], input=tree[script], capture_output=True)
        assert check.returncode == 0, (script, check.stderr)
    unit = tree["bunco-pi/bunco-pi-firstboot.service"].decode()
    assert "After=network-online.target" in unit and "ExecStart=/bin/bash /boot/firmware/" \
        "bunco-pi/firstboot.sh" in unit

    user, login = login_of(secrets, "bunco-table-3")
    assert user == "bunco-admin" and login in result.stdout
    if mechanism == firstboot.FIRSTRUN:
        cmdline = tree["cmdline.txt"].decode()
        assert cmdline.count("\n") == 1 and cmdline.startswith(CMDLINE.strip() + " ")
        assert cmdline.split()[-3:] == ["systemd.run=/boot/firmware/firstrun.sh",
                                        "systemd.run_success_action=reboot",
                                        "systemd.unit=kernel-command-line.target"]
        name, hashed = tree["userconf.txt"].decode().strip().split(":", 1)
        assert name == "bunco-admin" and crypt_matches(login, hashed)
        firstrun = tree["firstrun.sh"].decode()
        assert "NAME=bunco-table-3" in firstrun and "corn-hall" not in firstrun
        assert "raspi-config nonint do_wifi_country GB" in firstrun
        wifi = tree["bunco-pi/wifi.nmconnection"].decode()
        assert "ssid=Village Hall\n" in wifi and "psk=corn-hall-2026\n" in wifi
    else:
        yaml = pytest.importorskip("yaml")
        config = yaml.safe_load(tree["user-data"])
        assert tree["user-data"].startswith(b"#cloud-config\n")
        assert config["hostname"] == "bunco-table-3" and config["ssh_pwauth"] is False
        (account,) = config["users"]
        assert account["name"] == "bunco-admin" and crypt_matches(login, account["passwd"])
        assert "i2c" in account["groups"].split(",") and "gpio" in account["groups"].split(",")
        assert ["systemctl", "enable", "--no-block", "--now",
                "bunco-pi-firstboot.service"] in config["runcmd"]
        network = yaml.safe_load(tree["network-config"])["network"]
        wlan = network["wifis"]["wlan0"]
        assert wlan["access-points"] == {"Village Hall": {"password": "corn-hall-2026"}}
        assert wlan["regulatory-domain"] == "GB"
        meta = yaml.safe_load(tree["meta-data"])
        assert meta["local-hostname"] == "bunco-table-3" and meta["instance-id"].startswith(
            "bunco-table-3-")


@pytest.mark.parametrize("shape", ["bookworm", "trixie"])
def test_the_head_card_holds_every_tables_password_and_ssh_when_asked(tmp_path, wifi_password,
                                                                      shape):
    secrets = tmp_path / "secrets"
    table = fat_image(tmp_path / "table.img", SHAPES[shape])
    assert sdcard(str(table), "--role", "table", "--table", "2", "--tables", "3",
                  "--secrets", str(secrets)).returncode == 0
    image = fat_image(tmp_path / "head.img", SHAPES[shape])
    result = sdcard(str(image), "--role", "head", "--night", "friday", "--wifi", "Hall",
                    "--wifi-password-file", str(wifi_password), "--country", "US", "--ssh",
                    "--secrets", str(secrets), "--user", "host")
    assert result.returncode == 0, result.stderr
    assert "bunco-head (head of 3)" in result.stdout
    tree = card_tree(image)
    night = json.loads((secrets / "credentials.json").read_text())
    assert json.loads(tree["bunco-pi/credentials.json"]) == night
    assert sorted(night["users"]) == ["head", "table-1", "table-2", "table-3"]
    # the table card made first has the same password as the head's card
    assert json.loads(card_tree(table)["bunco-pi/credentials.json"])["users"]["table-2"] == \
        night["users"]["table-2"]
    console = (secrets / "console-password.txt").read_text().strip()
    assert console in result.stdout
    assert check_password(console, tree["bunco-pi/console-password"].decode().strip())
    env = tree["bunco-pi/box.env"].decode().splitlines()
    assert "ROLE=head" in env and "NIGHT=friday" in env and "HOSTNAME=bunco-head" in env
    # A table's card written after the head's knows the night without zeroconf.
    later = fat_image(tmp_path / "table3.img", SHAPES[shape])
    assert sdcard(str(later), "--role", "table", "--table", "3", "--secrets",
                  str(secrets)).returncode == 0
    assert "NIGHT=friday" in card_tree(later)["bunco-pi/box.env"].decode().splitlines()
    if shape == "bookworm":
        assert tree["ssh"] == b""
    else:
        import yaml

        config = yaml.safe_load(tree["user-data"])
        assert config["ssh_pwauth"] is True and config["enable_ssh"] is True
        assert ["systemctl", "enable", "--now", "ssh"] in config["runcmd"]


def test_writing_a_card_again_replaces_its_first_boot_and_keeps_the_nights_passwords(
        tmp_path, wifi_password):
    secrets = tmp_path / "secrets"
    image = fat_image(tmp_path / "boot.img", BOOKWORM)
    for _ in range(2):
        result = sdcard(str(image), "--role", "table", "--table", "2", "--secrets", str(secrets))
        assert result.returncode == 0, result.stderr
    cmdline = card_tree(image)["cmdline.txt"].decode()
    assert cmdline.count("systemd.run=") == 1
    assert "TABLES=8" in card_tree(image)["bunco-pi/box.env"].decode()


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


def test_not_a_raspberry_pi_os_boot_partition(tmp_path):
    plain = fat_image(tmp_path / "usb.img", {"notes.txt": b"shopping\n"})
    one_line_error(sdcard(str(plain), "--role", "table", "--table", "2",
                          "--secrets", str(tmp_path / "s")),
                   "usb.img", "not a Raspberry Pi OS boot partition", "cmdline.txt")
    ext = tmp_path / "root.img"
    ext.write_bytes(b"\0" * 65536)
    one_line_error(sdcard(str(ext), "--role", "table", "--table", "2",
                          "--secrets", str(tmp_path / "s")),
                   "root.img", "not a Raspberry Pi OS boot partition")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "cmdline.txt").write_text(CMDLINE)
    one_line_error(sdcard(str(folder), "--role", "table", "--table", "2",
                          "--secrets", str(tmp_path / "s")),
                   "not a Raspberry Pi OS boot partition", "config.txt")


def test_too_little_room_for_the_offline_copies(tmp_path):
    image = fat_image(tmp_path / "small.img", BOOKWORM, size_kb=2048)
    before = card_tree(image)
    debs = tmp_path / "debs"
    debs.mkdir()
    (debs / "python3-opencv_4.6.0_arm64.deb").write_bytes(os.urandom(3 * 1024 * 1024))
    err = one_line_error(sdcard(str(image), "--role", "table", "--table", "2", "--debs",
                                str(debs), "--secrets", str(tmp_path / "s")),
                         "small.img", "too little room", "MB")
    need = re.search(r"need (\d+\.\d) MB, its boot partition has (\d+\.\d) MB free", err)
    assert need and float(need[1]) > 3.0 > float(need[2])  # the .deb alone is 3 MB; the project's copy too
    assert card_tree(image) == before  # nothing written


def test_a_missing_wifi_password(tmp_path):
    image = fat_image(tmp_path / "boot.img", BOOKWORM)
    one_line_error(sdcard(str(image), "--role", "table", "--table", "2", "--wifi", "Hall",
                          "--country", "GB", "--secrets", str(tmp_path / "s")),
                   "--wifi Hall", "missing Wi-Fi password")
    one_line_error(sdcard(str(image), "--role", "table", "--table", "2", "--wifi", "Hall",
                          "--wifi-password-file", str(tmp_path / "none.txt"), "--country", "GB",
                          "--secrets", str(tmp_path / "s")),
                   "--wifi-password-file", "no such file")
    one_line_error(sdcard(str(image), "--role", "table", "--table", "2", "--wifi", "Hall",
                          "--wifi-open", "--secrets", str(tmp_path / "s")), "--country")
    assert "firstrun.sh" not in card_tree(image)


def test_a_table_number_over_the_limit(tmp_path):
    image = fat_image(tmp_path / "boot.img", BOOKWORM)
    one_line_error(sdcard(str(image), "--role", "table", "--table",
                          str(firstboot.MAX_TABLES + 1), "--secrets", str(tmp_path / "s")),
                   f"--table {firstboot.MAX_TABLES + 1}", "over the limit")
    one_line_error(sdcard(str(image), "--role", "table", "--table", "9", "--tables", "8",
                          "--secrets", str(tmp_path / "s")),
                   "--table 9", "the night has 8 tables")
    one_line_error(sdcard(str(image), "--role", "table", "--table", "1",
                          "--secrets", str(tmp_path / "s")), "the head is table 1")
    assert "firstrun.sh" not in card_tree(image)
