#!/usr/bin/env bash
# Run bunco-pi on arm64 (a Raspberry Pi's architecture) on any Linux PC: an arm64 Debian
# bookworm root run under qemu-user through binfmt_misc. Inside it: install the package with
# its extras (camera, discovery) from PyPI's aarch64 wheels, then `bunco-pi doctor`, a
# standalone table on mock pins with a dummy display fed by the dice firmware on a pty
# (scripts/pty_table_check.py), and `bunco-pi dice read` on a photo. Prints each step's time.
#
#   sudo bash scripts/arm64-check.sh [--base DIR] [--photo FILE] [--keep]
#
# --base DIR keeps the bootstrapped arm64 system there and reuses it (default: a temporary
# one); --photo is the picture for `dice read` (default: one of the labelled dice photos if
# they are at ../shared/datasets/dice-photos or $BUNCO_DICE_PHOTOS, else a drawn tray).
# Needs root, debootstrap, qemu-user-static and binfmt-support (installed with apt if
# missing). Everything runs several times slower than on a real Pi: the times show emulation.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"

BASE="" PHOTO="" KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --base) BASE="${2:?--base needs a directory}"; shift 2 ;;
        --photo) PHOTO="${2:?--photo needs a file}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "arm64-check.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "arm64-check.sh: run as root (debootstrap, chroot)" >&2; exit 2; }

need=()
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v update-binfmts >/dev/null 2>&1 || need+=(binfmt-support)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]}"
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The kernel runs arm64 programs through qemu once binfmt_misc knows it.
if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc \
        || { echo "arm64-check.sh: binfmt_misc cannot be mounted here (a container?)" >&2; exit 3; }
fi
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 || true
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] \
    || { echo "arm64-check.sh: qemu-aarch64 is not registered with binfmt_misc" >&2; exit 3; }

# shellcheck source=scripts/debian-mirror.sh
source scripts/debian-mirror.sh  # from the repository root (cd above)

# pip and npm inside trust the certificate authorities this machine trusts (a network that
# inspects TLS has its own), from a file of their own: Debian's ca-certificates, once apt
# installs it inside, rewrites the usual bundle.
trust_host_cas() {
    local root=$1
    [ -f /etc/ssl/certs/ca-certificates.crt ] || return 0
    mkdir -p "$root/etc/ssl"
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/host-ca-bundle.crt"
    printf '[global]\ncert = /etc/ssl/host-ca-bundle.crt\n' >"$root/etc/pip.conf"
    mkdir -p "$root/usr/etc"
    printf 'cafile=/etc/ssl/host-ca-bundle.crt\n' | tee "$root/etc/npmrc" >"$root/usr/etc/npmrc"
}

WORK="$(mktemp -d /tmp/bunco-arm64.XXXXXX)"
LOG="$WORK/arm64-check.log"
[ -n "$BASE" ] || BASE="$WORK/base"
SUMMARY=() FAILED=0
step() {  # step NAME COMMAND...: run, time, keep the output; doctor may fail (no box here)
    local name=$1 start rc
    shift
    start=$(date +%s)
    echo "== $name" | tee -a "$LOG"
    set +e
    "$@" 2>&1 | tee -a "$LOG"
    rc=${PIPESTATUS[0]}
    set -e
    SUMMARY+=("$name: exit $rc, $(( $(date +%s) - start )) s")
    [ "$rc" = 0 ] || [[ "$name" == "bunco-pi doctor"* ]] || FAILED=1
    echo "-- ${SUMMARY[-1]}" | tee -a "$LOG"
    return 0
}

if [ ! -x "$BASE/usr/bin/python3" ]; then
    MIRROR="$(mirror)"
    step "debootstrap arm64 bookworm (minbase, python3, python3-venv)" \
        debootstrap --arch=arm64 --variant=minbase --include=python3,python3-venv,ca-certificates \
        bookworm "$BASE" "$MIRROR"
fi
ROOT="$BASE"
MOUNTED=()
cleanup() {
    local i
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" 2>/dev/null || true
    done
    [ "$KEEP" = 1 ] || [ "$BASE" != "$WORK/base" ] || rm -rf "$WORK/base"
}
trap cleanup EXIT
mount -t proc proc "$ROOT/proc"; MOUNTED+=("$ROOT/proc")
mount -t sysfs sysfs "$ROOT/sys"; MOUNTED+=("$ROOT/sys")
mount --bind /dev "$ROOT/dev"; MOUNTED+=("$ROOT/dev")
mount --bind /dev/pts "$ROOT/dev/pts"; MOUNTED+=("$ROOT/dev/pts")
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
trust_host_cas "$ROOT"
rm -rf "$ROOT/root/bunco-pi"
git clone --quiet "$REPO" "$ROOT/root/bunco-pi"

if [ -z "$PHOTO" ]; then
    photos="${BUNCO_DICE_PHOTOS:-$REPO/../shared/datasets/dice-photos}"
    [ -f "$photos/images/five_21.jpg" ] && PHOTO="$photos/images/five_21.jpg"
fi
if [ -n "$PHOTO" ]; then
    cp "$PHOTO" "$ROOT/root/photo.jpg"
    PHOTO_NOTE="$(basename "$PHOTO")"
else
    PHOTO_NOTE="a drawn tray"
fi

inside() {  # a login-like shell in the arm64 root
    chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
        PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -c "cd /root/bunco-pi && $1"
}
step "uname -m; python3 -V (inside)" inside 'uname -m; python3 -V'
step "pip install '.[camera,discovery]' (aarch64 wheels)" inside \
    'rm -rf /root/venv && python3 -m venv /root/venv && pip install -q --upgrade pip && pip install -q ".[camera,discovery]" && pip list 2>/dev/null | grep -iE "^(numpy|opencv|pillow|gpiozero|luma|paho|pyserial|zeroconf)"'
step "bunco-pi doctor (an uninstalled box: it names what is missing)" inside 'bunco-pi doctor'
step "standalone table, mock pins, dummy display, dice firmware on a pty" inside \
    'python scripts/pty_table_check.py --rolls 12'
if [ -n "$PHOTO" ]; then
    step "bunco-pi dice read ($PHOTO_NOTE)" inside 'bunco-pi dice read --dice 3 /root/photo.jpg'
else
    step "bunco-pi dice read ($PHOTO_NOTE)" inside \
        'python -c "import sys; sys.path.insert(0, \".\"); from tests.drawn_dice import draw_tray; import cv2; cv2.imwrite(\"/root/photo.png\", draw_tray([(2, 200, 240, 10), (5, 320, 240, 30), (6, 440, 240, 60)]))" && bunco-pi dice read /root/photo.png'
fi

echo
echo "arm64 check ($(inside 'uname -m' 2>/dev/null), Debian $(cat "$ROOT/etc/debian_version") under qemu-user); full log $LOG:"
printf '  %s\n' "${SUMMARY[@]}"
exit "$FAILED"
