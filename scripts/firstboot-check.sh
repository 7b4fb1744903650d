#!/usr/bin/env bash
# A card written by `bunco-pi sdcard --wheels ... --debs ...` sets a box up with the network cut.
#
#   sudo bash scripts/firstboot-check.sh [--base DIR] [--keep]
#
# A fresh Debian bookworm root (debootstrap: minbase with systemd, python3, sudo: what
# Raspberry Pi OS Lite is built on) stands in for the card's root file system, and a FAT image
# shaped like Bookworm's boot partition for its boot partition. At "home", with the network:
# the Debian packages the install needs are gathered (apt-get --download-only in a copy of the
# root) and the Python wheels for this machine (pip). `bunco-pi sdcard` writes the head's card
# and table 2's. Then, in a network namespace with only loopback (no way out), each card's files
# go to /boot/firmware of a root of its own, its firstrun.sh runs, then its firstboot.sh
# (install/install.sh from the card's copies alone), and the installed broker, head and table
# boxes start as their units say: both table boxes (the head's own, table 2) must join the head. Not run by CI (root, debootstrap, the Debian mirror; a few
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

say "writing the head's card and table 2's (Bookworm boot partitions, FAT, 256 MB)"
mkdir "$WORK/shape"
printf 'console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 fsck.repair=yes rootwait quiet\n' \
    >"$WORK/shape/cmdline.txt"
printf 'dtparam=audio=on\n' >"$WORK/shape/config.txt"
head -c 4096 /dev/zero >"$WORK/shape/start4.elf"
head -c 4096 /dev/zero >"$WORK/shape/kernel8.img"
head -c 256 /dev/zero >"$WORK/shape/bcm2710-rpi-zero-2-w.dtb"
for card in head table-2; do
    mkfs.vfat -C -n BOOTFS "$WORK/$card.img" 262144 >/dev/null
    MTOOLS_SKIP_CHECK=1 mcopy -i "$WORK/$card.img" "$WORK/shape/"* ::/
done
PYTHONPATH="$REPO" "$PY" -m bunco_pi.cli sdcard "$WORK/head.img" --role head --night check \
    --tables 2 --secrets "$WORK/secrets" --wheels "$WORK/wheels" --debs "$WORK/debs"
# Table 2 finds the head at 127.0.0.1: both roots share the one loopback below.
PYTHONPATH="$REPO" "$PY" -m bunco_pi.cli sdcard "$WORK/table-2.img" --role table --table 2 \
    --head-host 127.0.0.1 --secrets "$WORK/secrets" --wheels "$WORK/wheels" --debs "$WORK/debs"

# --- the boxes' first boot, the network cut ------------------------------------------------------
say "each card in a fresh root: firstrun.sh, then firstboot.sh, with only loopback"
for card in head table-2; do
    root="$WORK/$card"
    cp -a "$BASE" "$root"
    rm -f "$root/etc/resolv.conf"
    printf '127.0.0.1 localhost\n127.0.1.1 raspberrypi\n' >"$root/etc/hosts"
    echo raspberrypi >"$root/etc/hostname"
    mkdir -p "$root/boot/firmware"
    MTOOLS_SKIP_CHECK=1 mcopy -s -n -i "$WORK/$card.img" "::/*" "$root/boot/firmware/"
done

cat >"$WORK/inside.sh" <<'INSIDE'
set -euo pipefail
HEAD=$1 TABLE=$2
ip link set lo up
mount --make-rprivate /
echo "network: $(ip -o link | awk -F': ' '{print $2}' | tr '\n' ' ')(no route out: $(ip route | wc -l) routes)"
mounted=()
for root in "$HEAD" "$TABLE"; do
    mount -t proc proc "$root/proc"
    mount --bind /dev "$root/dev"
    mount -t tmpfs tmpfs "$root/run"
    mounted+=("$root/run" "$root/dev" "$root/proc")
done
unmount() { umount "${mounted[@]}" 2>/dev/null || true; }
for root in "$HEAD" "$TABLE"; do
    card="$(basename "$root")"
    chroot "$root" bash /boot/firmware/firstrun.sh
    echo "$card: hostname after firstrun.sh: $(cat "$root/etc/hostname")"
    ls "$root/etc/systemd/system/multi-user.target.wants/" | grep -q bunco-pi-firstboot \
        && echo "$card: bunco-pi-firstboot.service enabled"
    grep -q systemd.run "$root/boot/firmware/cmdline.txt" || echo "$card: cmdline.txt: systemd.run= gone"
    set +e
    # SYSTEMD_OFFLINE: systemctl enables units by their files and starts nothing, as in any
    # chroot (on the Pi systemd runs them); the services are started by hand below.
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
        SYSTEMD_OFFLINE=1 bash /boot/firmware/bunco-pi/firstboot.sh
    rc=$?
    set -e
    echo "$card: firstboot.sh: exit $rc"
    tail -n 6 "$root/var/log/bunco-pi-firstboot.log"
    [ "$rc" = 0 ] || { unmount; exit 1; }
    [ -e "$root/boot/firmware/bunco-pi/credentials.json" ] || echo "$card: card credentials removed"
    sed -i 's/^type = "ssd1306".*/type = "dummy"/' "$root/etc/bunco-pi/table.toml"
done
cmp -s "$HEAD/etc/bunco-pi/secrets/credentials.json" "$SECRETS/credentials.json" \
    && echo "the head holds the night's credentials from the card"
python3 - "$TABLE/etc/bunco-pi/secrets/credentials.json" "$SECRETS/credentials.json" <<'PY' \
    && echo "table 2 holds its own password from the card, the head's for it"
import json, sys
own, night = (json.load(open(p))["users"] for p in sys.argv[1:])
sys.exit(0 if own == {"table-2": night["table-2"]} else 1)
PY
export GPIOZERO_PIN_FACTORY=mock GPIOZERO_MOCK_PIN_CLASS=mockpwmpin PYTHONUNBUFFERED=1
unit() { sed -n 's/^ExecStart=//p' "$1/etc/systemd/system/$2.service"; }
# what systemd makes for the units (StateDirectory=) before it starts them
chroot "$HEAD" install -d -m 750 -o mosquitto -g mosquitto /var/lib/bunco-pi-broker
chroot "$HEAD" runuser -u mosquitto -- $(unit "$HEAD" bunco-pi-broker) >"$HEAD/tmp/broker.log" 2>&1 &
sleep 2
chroot "$HEAD" runuser -u bunco -- $(unit "$HEAD" bunco-pi-head) >"$HEAD/tmp/head.log" 2>&1 &
sleep 3
chroot "$HEAD" runuser -u bunco -- $(unit "$HEAD" bunco-pi-table) >"$HEAD/tmp/table.log" 2>&1 &
chroot "$TABLE" runuser -u bunco -- $(unit "$TABLE" bunco-pi-table) >"$TABLE/tmp/table.log" 2>&1 &
joined=""
for _ in $(seq 60); do
    if joined="$(chroot "$HEAD" python3 -c 'import json, urllib.request
snap = json.load(urllib.request.urlopen("http://127.0.0.1:8080/api/snapshot", timeout=2))
print(snap["online"])' 2>/dev/null)" && [ "$joined" = "[1, 2]" ]; then break; fi
    sleep 2
done
echo "tables online at the head: ${joined:-none}"
for root in "$HEAD" "$TABLE"; do
    chroot "$root" runuser -u bunco -- /opt/bunco-pi/bin/bunco-pi doctor --broker-timeout 5 \
        2>&1 | grep -E '^(OK|FAIL|WARN) +broker' || true
done
kill $(jobs -p) 2>/dev/null || true
wait 2>/dev/null || true
tail -n 3 "$HEAD/tmp/head.log" "$HEAD/tmp/table.log" "$TABLE/tmp/table.log"
unmount
[ "$joined" = "[1, 2]" ]
INSIDE
set +e
SECRETS="$WORK/secrets" unshare --net --mount --fork bash "$WORK/inside.sh" "$WORK/head" \
    "$WORK/table-2"
rc=$?
set -e
if [ "$rc" = 0 ]; then
    echo "RESULT: the cards installed the head and table 2 offline; both table boxes joined the head"
else
    echo "RESULT: failed (exit $rc); logs in $WORK (kept)"
    KEEP=1
fi
exit "$rc"
