#!/usr/bin/env bash
# A card written by `bunco-pi sdcard --wheels ... --debs ...` sets a box up with the network cut.
#
#   sudo bash scripts/firstboot-check.sh [--base DIR] [--keep]
#
# A fresh Debian bookworm root (debootstrap: minbase with systemd, python3, sudo: what
# Raspberry Pi OS Lite is built on) stands in for the card's root file system, and a FAT image
# shaped like Bookworm's boot partition for its boot partition. At "home", with the network:
# the Debian packages the install needs are gathered (apt-get --download-only in a copy of the
# root) and the Python wheels for this machine (pip). `bunco-pi sdcard --role head` writes
# the card. Then, in a network namespace with only loopback (no way out), the card's files go
# to /boot/firmware, its firstrun.sh runs, then its firstboot.sh (install/install.sh head from
# the card's copies alone), and the installed broker, head and table box start as their units
# say: the box must join the head. Not run by CI (root, debootstrap, the Debian mirror; a few
# minutes). --base DIR keeps the bootstrapped root there and reuses it.
#
# The chroot has no I2C or GPIO and no systemd running: the box's [display] is set to "dummy",
# gpiozero uses its mock pins (GPIOZERO_PIN_FACTORY=mock), systemctl works offline
# (SYSTEMD_OFFLINE=1) and the three services are started by hand with their units' ExecStart
# and User: the only changes to what the card installed.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
BASE="" KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --base) BASE="${2:?--base needs a directory}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "firstboot-check.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "firstboot-check.sh: run as root (debootstrap, chroot, unshare)" >&2; exit 2; }
for tool in debootstrap mkfs.vfat mcopy unshare ip; do
    command -v "$tool" >/dev/null 2>&1 || { echo "firstboot-check.sh: needs $tool" >&2; exit 2; }
done
# shellcheck source=scripts/debian-mirror.sh
source scripts/debian-mirror.sh
PY="${PYTHON:-$REPO/.venv/bin/python}"
[ -x "$PY" ] || PY=python3

WORK="$(mktemp -d /tmp/bunco-firstboot.XXXXXX)"
[ -n "$BASE" ] || BASE="$WORK/base"
cleanup() { if [ "$KEEP" = 0 ]; then rm -rf "$WORK"; fi; }
trap cleanup EXIT
say() { echo "== $*"; }

if [ ! -x "$BASE/bin/systemctl" ]; then
    say "bootstrapping Debian bookworm into $BASE"
    debootstrap --variant=minbase --include=systemd,python3,sudo,ca-certificates,iproute2 \
        bookworm "$BASE" "$(mirror)" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -n 5 "$WORK/debootstrap.log"; exit 1; }
fi

# --- at home, with the network: what the card carries -------------------------------------
say "gathering the Debian packages (apt-get --download-only in a copy of the root)"
cp -a "$BASE" "$WORK/dl"
cp /etc/resolv.conf "$WORK/dl/etc/resolv.conf"
mount --bind /dev "$WORK/dl/dev"
mount -t proc proc "$WORK/dl/proc"
set +e
chroot "$WORK/dl" sh -c 'apt-get update -qq && apt-get install -y -qq --download-only \
    --no-install-recommends python3-venv python3-pip python3-gpiozero i2c-tools procps mosquitto' \
    >"$WORK/download.log" 2>&1
rc=$?
set -e
umount "$WORK/dl/proc" "$WORK/dl/dev"
[ "$rc" = 0 ] || { tail -n 5 "$WORK/download.log"; exit 1; }
mkdir -p "$WORK/debs"
cp "$WORK/dl/var/cache/apt/archives/"*.deb "$WORK/debs/"
rm -rf "$WORK/dl"
echo "$(ls "$WORK/debs" | wc -l) .deb files, $(du -sh "$WORK/debs" | cut -f1)"

say "gathering the wheels (the project's, and its Python packages for this machine)"
mkdir -p "$WORK/wheels"
"$PY" -m pip wheel --quiet --no-deps --wheel-dir "$WORK/wheels" "$REPO"
mapfile -t REQS < <("$PY" -c 'from bunco_pi.commands.sdcard import python_requirements
print("\n".join(python_requirements("head")))')
"$PY" -m pip download --quiet --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 --platform linux_x86_64 \
    --dest "$WORK/wheels" "${REQS[@]}"
echo "$(ls "$WORK/wheels" | wc -l) wheels, $(du -sh "$WORK/wheels" | cut -f1)"

say "writing the head's card (a Bookworm boot partition, FAT, 256 MB)"
IMG="$WORK/boot.img"
mkfs.vfat -C -n bootfs "$IMG" 262144 >/dev/null
mkdir "$WORK/shape"
printf 'console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 fsck.repair=yes rootwait quiet\n' \
    >"$WORK/shape/cmdline.txt"
printf 'dtparam=audio=on\n' >"$WORK/shape/config.txt"
head -c 4096 /dev/zero >"$WORK/shape/start4.elf"
head -c 4096 /dev/zero >"$WORK/shape/kernel8.img"
head -c 256 /dev/zero >"$WORK/shape/bcm2710-rpi-zero-2-w.dtb"
MTOOLS_SKIP_CHECK=1 mcopy -i "$IMG" "$WORK/shape/"* ::/
PYTHONPATH="$REPO" "$PY" -m bunco_pi.cli sdcard "$IMG" --role head --night check --tables 2 \
    --secrets "$WORK/secrets" --wheels "$WORK/wheels" --debs "$WORK/debs"

# --- the box's first boot, the network cut ------------------------------------------------------
say "the card in a fresh root: firstrun.sh, then firstboot.sh, with only loopback"
ROOT="$WORK/root"
cp -a "$BASE" "$ROOT"
rm -f "$ROOT/etc/resolv.conf"
printf '127.0.0.1 localhost\n127.0.1.1 raspberrypi\n' >"$ROOT/etc/hosts"
echo raspberrypi >"$ROOT/etc/hostname"
mkdir -p "$ROOT/boot/firmware"
MTOOLS_SKIP_CHECK=1 mcopy -s -n -i "$IMG" "::/*" "$ROOT/boot/firmware/"

cat >"$WORK/inside.sh" <<'EOF'
set -euo pipefail
ROOT=$1
ip link set lo up
mount --make-rprivate /
mount -t proc proc "$ROOT/proc"
mount --bind /dev "$ROOT/dev"
mount -t tmpfs tmpfs "$ROOT/run"
echo "network: $(ip -o link | awk -F': ' '{print $2}' | tr '\n' ' ')(no route out: $(ip route | wc -l) routes)"
chroot "$ROOT" bash /boot/firmware/firstrun.sh
echo "hostname after firstrun.sh: $(cat "$ROOT/etc/hostname")"
ls "$ROOT/etc/systemd/system/multi-user.target.wants/" | grep -q bunco-pi-firstboot \
    && echo "bunco-pi-firstboot.service enabled"
grep -q systemd.run "$ROOT/boot/firmware/cmdline.txt" || echo "cmdline.txt: systemd.run= gone"
set +e
# SYSTEMD_OFFLINE: systemctl enables units by their files and starts nothing, as in any chroot
# (on the Pi systemd runs them); the services are started by hand below.
chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 SYSTEMD_OFFLINE=1 \
    bash /boot/firmware/bunco-pi/firstboot.sh
rc=$?
echo "firstboot.sh: exit $rc"
set -e
tail -n 6 "$ROOT/var/log/bunco-pi-firstboot.log"
[ "$rc" = 0 ] || { umount "$ROOT/run" "$ROOT/dev" "$ROOT/proc"; exit 1; }
[ -e "$ROOT/boot/firmware/bunco-pi/credentials.json" ] || echo "card credentials removed"
cmp -s "$ROOT/etc/bunco-pi/secrets/credentials.json" "$SECRETS/credentials.json" \
    && echo "the head holds the night's credentials from the card"
sed -i 's/^type = "ssd1306".*/type = "dummy"/' "$ROOT/etc/bunco-pi/table.toml"
export GPIOZERO_PIN_FACTORY=mock GPIOZERO_MOCK_PIN_CLASS=mockpwmpin PYTHONUNBUFFERED=1
unit() { sed -n 's/^ExecStart=//p' "$ROOT/etc/systemd/system/$1.service"; }
# what systemd makes for the units (StateDirectory=) before it starts them
chroot "$ROOT" install -d -m 750 -o mosquitto -g mosquitto /var/lib/bunco-pi-broker
chroot "$ROOT" runuser -u mosquitto -- $(unit bunco-pi-broker) >"$ROOT/tmp/broker.log" 2>&1 &
sleep 2
chroot "$ROOT" runuser -u bunco -- $(unit bunco-pi-head) >"$ROOT/tmp/head.log" 2>&1 &
sleep 3
chroot "$ROOT" runuser -u bunco -- $(unit bunco-pi-table) >"$ROOT/tmp/table.log" 2>&1 &
joined=""
for _ in $(seq 60); do
    if joined="$(chroot "$ROOT" python3 -c 'import json, urllib.request
snap = json.load(urllib.request.urlopen("http://127.0.0.1:8080/api/snapshot", timeout=2))
print(snap["online"])' 2>/dev/null)" && [ "$joined" = "[1]" ]; then break; fi
    sleep 2
done
echo "tables online at the head: ${joined:-none}"
chroot "$ROOT" runuser -u bunco -- /opt/bunco-pi/bin/bunco-pi doctor --broker-timeout 5 \
    2>&1 | grep -E '^(OK|FAIL|WARN) +broker' || true
kill $(jobs -p) 2>/dev/null || true
wait 2>/dev/null || true
tail -n 3 "$ROOT/tmp/head.log" "$ROOT/tmp/table.log"
umount "$ROOT/run" "$ROOT/dev" "$ROOT/proc"
[ "$joined" = "[1]" ]
EOF
set +e
SECRETS="$WORK/secrets" unshare --net --mount --fork bash "$WORK/inside.sh" "$ROOT"
rc=$?
set -e
if [ "$rc" = 0 ]; then
    echo "RESULT: the card installed the head and its table box offline; the box joined the head"
else
    echo "RESULT: failed (exit $rc); logs in $WORK (kept)"
    KEEP=1
fi
exit "$rc"
