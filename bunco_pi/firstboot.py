"""What a freshly flashed Raspberry Pi OS card's boot partition needs so the box sets itself up.

Pure: the partition's file names and texts in, the files to write (path -> bytes) out; the
``bunco-pi sdcard`` command (``bunco_pi.commands.sdcard``) reads and writes the card, makes the
passwords and copies the offline packages.

Two first-boot mechanisms, told apart by the partition's files:

- ``firstrun`` (Bookworm): ``cmdline.txt`` runs ``firstrun.sh`` once in early boot
  (``systemd.run=``, as Raspberry Pi Imager does); ``userconf.txt`` makes the user, an empty
  ``ssh`` turns on the ssh server.
- ``cloud-init`` (the releases after Bookworm): ``user-data``, ``network-config`` and
  ``meta-data`` beside ``cmdline.txt``, read by cloud-init on first boot.

Both then install the same ``bunco-pi-firstboot.service``, which runs ``bunco-pi/firstboot.sh``
from the card once the network is up (or at once from the card's own copies): it runs
install/install.sh for the box's role, with the night's credentials from the card, and
starts the box.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from bunco_pi.errors import UserError
from bunco_pi.rules.limits import MAX_TABLES

FIRSTRUN, CLOUD_INIT = "firstrun", "cloud-init"
BOOT_MOUNT = "/boot/firmware"
CARD_DIR = "bunco-pi"  # our folder on the boot partition
CLOUD_INIT_FILES = ("user-data", "meta-data", "network-config")
HEAD_HOSTNAME = "bunco-head"
# Python on the card's release: what the offline wheels are downloaded for.
PYTHON_OF = {FIRSTRUN: "3.11", CLOUD_INIT: "3.13"}
_RUN_ARGS = ("systemd.run=", "systemd.run_success_action=", "systemd.unit=kernel-command-line")
_USER = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")


@dataclass(frozen=True)
class Wifi:
    ssid: str
    password: str | None  # None: an open network
    country: str


@dataclass(frozen=True)
class Box:
    """One card: which box it becomes and how it finds the night."""

    role: str  # "head" or "table"
    table: int  # the head is table 1
    tables: int  # the night's tables (the head's credentials hold one password each)
    night: str  # "" on a table's card: learnt from the head's zeroconf announcement
    user: str
    user_hash: str  # crypt(3) hash of the user's password (userconf.txt, cloud-init passwd)
    ssh: bool
    wifi: Wifi | None
    credentials: Mapping[str, str]  # broker user -> password: all (head) or its own (table)
    console_hash: str = ""  # the head: the web console's host password, hashed
    head_host: str = HEAD_HOSTNAME + ".local"
    preset: str = "classic"
    instance: str = "1"  # cloud-init's instance-id: a new one makes it run again

    @property
    def hostname(self) -> str:
        return hostname_for(self.role, self.table)


def hostname_for(role: str, table: int) -> str:
    return HEAD_HOSTNAME if role == "head" else f"bunco-table-{table}"


def check_box(role: str, table: int | None, tables: int) -> int:
    """The table number this card's box plays as, or a one-line UserError."""
    if role not in ("head", "table"):
        raise UserError(f"--role {role!r}: head or table")
    if not 1 <= tables <= MAX_TABLES:
        raise UserError(f"--tables {tables}: a night has 1..{MAX_TABLES} tables")
    if role == "head":
        if table not in (None, 1):
            raise UserError(f"--table {table}: the head is table 1")
        return 1
    if table is None:
        raise UserError("--role table needs --table N (2 or more; the head is table 1)")
    if table > MAX_TABLES:
        raise UserError(f"--table {table}: over the limit of {MAX_TABLES} tables a night")
    if table < 2:
        raise UserError(f"--table {table}: the head is table 1; other tables are 2 or more")
    if table > tables:
        raise UserError(f"--table {table}: the night has {tables} tables (the head's card "
                        f"holds their passwords); make the head's card again with --tables "
                        f"{table} or more")
    return table


def check_user(user: str) -> str:
    if not _USER.match(user) or user in ("root", "bunco"):
        raise UserError(f"--user {user!r}: a Linux user name (lowercase letters, digits, - and "
                        "_), not root or bunco")
    return user


def check_wifi(ssid: str, password: str | None, country: str | None, open_network: bool) -> Wifi:
    if not ssid or len(ssid.encode()) > 32 or any(c in ssid for c in "\n\r\0"):
        raise UserError(f"--wifi {ssid!r}: a network name of 1 to 32 bytes on one line")
    if country is None or not _COUNTRY.match(country.upper()):
        raise UserError("--country XX is needed with --wifi: the Wi-Fi regulatory country "
                        "(two letters: GB, US, DE, ...)")
    if open_network:
        return Wifi(ssid, None, country.upper())
    if not password:
        raise UserError(f"--wifi {ssid}: missing Wi-Fi password (--wifi-password-file FILE, "
                        "typed when asked, or --wifi-open for a network without one)")
    if not 8 <= len(password) <= 63 or any(c in password for c in "\n\r\0"):
        raise UserError(f"--wifi {ssid}: a WPA password is 8 to 63 characters on one line")
    return Wifi(ssid, password, country.upper())


# --- the partition ----------------------------------------------------------------------------

def detect(names: set[str], where: str) -> str:
    """FIRSTRUN or CLOUD_INIT from the partition's top-level file names (lowercase)."""
    missing = [n for n in ("cmdline.txt", "config.txt") if n not in names]
    firmware = any(n.startswith(("start", "kernel")) or n.endswith(".dtb") for n in names)
    if missing or not firmware:
        what = ", ".join(missing) if missing else "no start*.elf, kernel*.img or *.dtb"
        raise UserError(f"{where}: not a Raspberry Pi OS boot partition ({what}): flash "
                        "Raspberry Pi OS (Lite, 64-bit) onto the card first and give its "
                        "first (FAT) partition")
    return CLOUD_INIT if any(n in names for n in CLOUD_INIT_FILES) else FIRSTRUN


def firstrun_cmdline(cmdline: str) -> str:
    """cmdline.txt with firstrun.sh run once at the next boot (ours replacing any earlier)."""
    words = [w for w in cmdline.split() if not w.startswith(_RUN_ARGS)]
    words += [f"systemd.run={BOOT_MOUNT}/firstrun.sh", "systemd.run_success_action=reboot",
              "systemd.unit=kernel-command-line.target"]
    return " ".join(words) + "\n"


# --- the files --------------------------------------------------------------------------------

def card_files(box: Box, mechanism: str, cmdline: str) -> dict[str, bytes]:
    """Every file this card gets (but the copies of packages): path on the partition -> bytes."""
    files = {
        f"{CARD_DIR}/box.env": box_env(box, mechanism).encode(),
        f"{CARD_DIR}/firstboot.sh": FIRSTBOOT_SH.encode(),
        f"{CARD_DIR}/bunco-pi-firstboot.service": FIRSTBOOT_UNIT.encode(),
        f"{CARD_DIR}/credentials.json": credentials_json(box.credentials).encode(),
    }
    if box.console_hash:
        files[f"{CARD_DIR}/console-password"] = (box.console_hash + "\n").encode()
    if mechanism == FIRSTRUN:
        files["firstrun.sh"] = firstrun_sh(box).encode()
        files["userconf.txt"] = f"{box.user}:{box.user_hash}\n".encode()
        files["cmdline.txt"] = firstrun_cmdline(cmdline).encode()
        if box.wifi is not None:
            files[f"{CARD_DIR}/wifi.nmconnection"] = nmconnection(box.wifi).encode()
        if box.ssh:
            files["ssh"] = b""
    else:
        files["user-data"] = user_data(box).encode()
        files["network-config"] = network_config(box.wifi).encode()
        files["meta-data"] = meta_data(box).encode()
    return files


def credentials_json(passwords: Mapping[str, str]) -> str:
    # net.broker's credentials file format
    return json.dumps({"users": dict(passwords)}, indent=2, sort_keys=True) + "\n"


def box_env(box: Box, mechanism: str) -> str:
    values = {"ROLE": box.role, "TABLE": str(box.table), "TABLES": str(box.tables),
              "NIGHT": box.night, "HEAD_HOST": box.head_host, "PRESET": box.preset,
              "HOSTNAME": box.hostname, "MECHANISM": mechanism}
    return ("# Written by `bunco-pi sdcard`: read by firstboot.sh beside it.\n"
            + "".join(f"{k}={shlex.quote(v)}\n" for k, v in values.items()))


def _keyfile(value: str) -> str:
    # NetworkManager keyfiles are GLib key files: backslash escapes, a value on one line
    return value.replace("\\", "\\\\").replace(";", "\\;")


def nmconnection(wifi: Wifi) -> str:
    lines = ["[connection]", "id=bunco-wifi", "uuid=8f6b2d3e-4c1a-4d0e-9b7a-2f5c6e1d0a93",
             "type=wifi", "autoconnect=true", "", "[wifi]", "mode=infrastructure",
             f"ssid={_keyfile(wifi.ssid)}", ""]
    if wifi.password is not None:
        lines += ["[wifi-security]", "key-mgmt=wpa-psk", f"psk={_keyfile(wifi.password)}", ""]
    lines += ["[ipv4]", "method=auto", "", "[ipv6]", "addr-gen-mode=default", "method=auto", ""]
    return "\n".join(lines)


def firstrun_sh(box: Box) -> str:
    """Bookworm's firstrun.sh: hostname, Wi-Fi, and the install step for the next boot."""
    wifi = ""
    if box.wifi is not None:
        wifi = f"""
# Wi-Fi: NetworkManager's connection from the card (the password never in this script).
install -m 600 "$CARD/wifi.nmconnection" /etc/NetworkManager/system-connections/bunco-wifi.nmconnection
rm -f "$CARD/wifi.nmconnection"
if command -v raspi-config >/dev/null 2>&1; then
    raspi-config nonint do_wifi_country {shlex.quote(box.wifi.country)}
fi
rfkill unblock wifi 2>/dev/null || true
for state in /var/lib/systemd/rfkill/*:wlan; do [ -e "$state" ] && echo 0 >"$state"; done
"""
    return f"""#!/bin/bash
# Written by `bunco-pi sdcard` (Bookworm's first-boot mechanism): run once by cmdline.txt's
# systemd.run= before the first real boot. Makes this Pi {box.hostname} and sets up the install
# step (bunco-pi-firstboot.service) that runs when the network is up.
set +e
CARD={BOOT_MOUNT}/{CARD_DIR}
NAME={shlex.quote(box.hostname)}
OLD="$(tr -d ' \\t\\n\\r' </etc/hostname)"
echo "$NAME" >/etc/hostname
sed -i "s/127.0.1.1.*$OLD/127.0.1.1\\t$NAME/g" /etc/hosts
grep -q "127.0.1.1" /etc/hosts || printf '127.0.1.1\\t%s\\n' "$NAME" >>/etc/hosts
{wifi}
install -m 644 "$CARD/bunco-pi-firstboot.service" /etc/systemd/system/bunco-pi-firstboot.service
ln -sf /etc/systemd/system/bunco-pi-firstboot.service \\
    /etc/systemd/system/multi-user.target.wants/bunco-pi-firstboot.service
rm -f {BOOT_MOUNT}/firstrun.sh
sed -i -e 's| systemd.run=[^ ]*||g' -e 's| systemd.run_success_action=[^ ]*||g' \\
    -e 's| systemd.unit=kernel-command-line.target||g' {BOOT_MOUNT}/cmdline.txt
exit 0
"""


def _yaml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a YAML double-quoted scalar


def user_data(box: Box) -> str:
    ssh = ["enable_ssh: true", "ssh_pwauth: true"] if box.ssh else ["ssh_pwauth: false"]
    runcmd = ["  - [systemctl, enable, --now, ssh]"] if box.ssh else []
    return "\n".join([
        "#cloud-config",
        "# Written by `bunco-pi sdcard`: this Pi's first boot (cloud-init).",
        f"hostname: {box.hostname}",
        "manage_etc_hosts: true",
        "users:",
        f"  - name: {box.user}",
        "    groups: users,adm,dialout,audio,netdev,video,plugdev,input,gpio,spi,i2c,sudo",
        "    shell: /bin/bash",
        "    lock_passwd: false",
        f"    passwd: {_yaml(box.user_hash)}",
        *ssh,
        "runcmd:",
        *runcmd,
        f"  - [install, -m, '644', {BOOT_MOUNT}/{CARD_DIR}/bunco-pi-firstboot.service, "
        "/etc/systemd/system/bunco-pi-firstboot.service]",
        "  - [systemctl, daemon-reload]",
        "  - [systemctl, enable, --no-block, --now, bunco-pi-firstboot.service]",
        "",
    ])


def network_config(wifi: Wifi | None) -> str:
    if wifi is None:
        return "# Written by `bunco-pi sdcard`: wired network only.\nnetwork:\n  version: 2\n"
    point = {"password": wifi.password} if wifi.password is not None else {}
    return "\n".join([
        "# Written by `bunco-pi sdcard`: the venue's Wi-Fi (netplan, rendered by NetworkManager).",
        "network:",
        "  version: 2",
        "  wifis:",
        "    renderer: NetworkManager",
        "    wlan0:",
        "      dhcp4: true",
        f"      regulatory-domain: {_yaml(wifi.country)}",
        "      optional: true",
        "      access-points:",
        f"        {_yaml(wifi.ssid)}:" + ("" if point else " {}"),
        *([f"          password: {_yaml(wifi.password)}"] if point else []),
        "",
    ])


def meta_data(box: Box) -> str:
    return f"instance-id: {box.hostname}-{box.instance}\nlocal-hostname: {box.hostname}\n"


FIRSTBOOT_UNIT = f"""# Written by `bunco-pi sdcard`: installs bunco-pi once, from the card's copies
# where it has them (else from the internet), then starts the box; disabled once it worked.
[Unit]
Description=bunco-pi first boot: install this box
Wants=network-online.target
After=network-online.target time-sync.target
ConditionPathExists={BOOT_MOUNT}/{CARD_DIR}/firstboot.sh

[Service]
Type=oneshot
ExecStart=/bin/bash {BOOT_MOUNT}/{CARD_DIR}/firstboot.sh
TimeoutStartSec=3600

[Install]
WantedBy=multi-user.target
"""

FIRSTBOOT_SH = r"""#!/bin/bash
# Written by `bunco-pi sdcard`: install bunco-pi for this box's role (box.env beside this
# file), from the card's own copies where it has them (wheels/, debs/), with the night's
# broker credentials from the card; then the secrets leave the card and this never runs
# again. A run that fails is tried again at the next boot. Log: /var/log/bunco-pi-firstboot.log
set -euo pipefail
CARD="${BUNCO_CARD:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
SRC="${BUNCO_SRC:-/opt/bunco-pi-src}"
exec >>"${BUNCO_LOG:-/var/log/bunco-pi-firstboot.log}" 2>&1
echo "bunco-pi first boot: $(date -u '+%Y-%m-%d %H:%M:%S') UTC"
# shellcheck source=/dev/null
. "$CARD/box.env"
rm -rf "$SRC"
mkdir -p "$SRC"
tar -xzf "$CARD/source.tar.gz" -C "$SRC"
offline=()
[ -d "$CARD/debs" ] && offline+=(--debs "$CARD/debs")
[ -d "$CARD/wheels" ] && offline+=(--wheels "$CARD/wheels")
install -d -m 755 /etc/bunco-pi
install -d -m 750 /etc/bunco-pi/secrets
if [ "$ROLE" = head ]; then
    # The night's passwords for every table, made with the cards: kept if already there.
    [ -s /etc/bunco-pi/secrets/credentials.json ] \
        || install -m 600 "$CARD/credentials.json" /etc/bunco-pi/secrets/credentials.json
    if [ -s "$CARD/console-password" ] && [ ! -s /etc/bunco-pi/secrets/console-password ]; then
        install -m 600 "$CARD/console-password" /etc/bunco-pi/secrets/console-password
    fi
    bash "$SRC/install/install.sh" head --night "$NIGHT" --tables "$TABLES" \
        --preset "$PRESET" "${offline[@]}" </dev/null
else
    python3 -S -c 'import json, sys; print(json.load(open(sys.argv[1]))["users"][sys.argv[2]])' \
        "$CARD/credentials.json" "table-$TABLE" \
        | bash "$SRC/install/install.sh" table --table "$TABLE" --head-host "$HEAD_HOST" \
            ${NIGHT:+--night "$NIGHT"} --password-file - "${offline[@]}"
fi
# Installed: the passwords leave the card (a FAT card has no permissions to keep them).
rm -f "$CARD/credentials.json" "$CARD/console-password"
if command -v systemctl >/dev/null 2>&1; then
    systemctl disable bunco-pi-firstboot.service 2>/dev/null || true
fi
rm -f "$CARD/firstboot.sh"
echo "bunco-pi first boot: done, $ROLE installed"
"""
