#!/usr/bin/env bash
# Try the README's two commands as a newcomer would, on a fresh Debian bookworm minimal system
# holding only python3, git and sudo (what Raspberry Pi OS Lite is built on), as root and as a
# user with sudo. Not run by CI: it needs root, debootstrap and the Debian mirror, and takes a
# while (the test suite runs twice).
#
#   sudo bash scripts/fresh-debian-check.sh [--base DIR] [--keep] [--only demo|test]
#                                           [--as root|newcomer]
#
# --base DIR keeps the bootstrapped system there and reuses it next time (default: a fresh
# one in a temporary folder). Each run starts from an untouched copy of it, with a clone of
# this repository's committed HEAD in the home folder. Prints each command's time and last
# lines; the full logs stay in the work folder it names.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"

BASE="" KEEP=0 ONLY="" WHO="root newcomer"
while [ $# -gt 0 ]; do
    case "$1" in
        --base) BASE="${2:?--base needs a directory}"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --only) ONLY="${2:?--only needs demo or test}"; shift 2 ;;
        --as) WHO="${2:?--as needs root or newcomer}"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "fresh-debian-check.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "fresh-debian-check.sh: run as root (it uses debootstrap and chroot)" >&2; exit 2; }

# shellcheck source=scripts/debian-mirror.sh
source scripts/debian-mirror.sh  # from the repository root (cd above)

command -v debootstrap >/dev/null 2>&1 || {
    echo "installing debootstrap" >&2
    apt-get install -y -qq debootstrap >/dev/null
}

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

WORK="$(mktemp -d /tmp/bunco-fresh-debian.XXXXXX)"
[ -n "$BASE" ] || BASE="$WORK/base"
if [ ! -x "$BASE/usr/bin/python3" ]; then
    MIRROR="$(mirror)"
    echo "bootstrapping Debian bookworm (minbase + python3, git, sudo) into $BASE from $MIRROR"
    debootstrap --variant=minbase --include=python3,git,sudo bookworm "$BASE" "$MIRROR" \
        >"$WORK/debootstrap.log" 2>&1 || { tail -n 5 "$WORK/debootstrap.log"; exit 1; }
fi

MOUNTED=()
unmount_all() {
    local i
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" 2>/dev/null || true
    done
    MOUNTED=()
}
cleanup() {
    unmount_all
    if [ "$KEEP" = 0 ]; then rm -rf "$WORK/root" "$WORK/user" "$WORK/base"; fi
}
trap cleanup EXIT

mount_into() {
    local root=$1
    mount -t proc proc "$root/proc"; MOUNTED+=("$root/proc")
    mount -t sysfs sysfs "$root/sys"; MOUNTED+=("$root/sys")
    mount --bind /dev "$root/dev"; MOUNTED+=("$root/dev")
    mount --bind /dev/pts "$root/dev/pts"; MOUNTED+=("$root/dev/pts")
    mount -t tmpfs tmpfs "$root/dev/shm"; MOUNTED+=("$root/dev/shm")
}

# A pristine copy of the base system with a clone of this repository in HOME.
prepare() {
    local root=$1 home=$2 owner=$3
    rm -rf "$root"
    cp -a "$BASE" "$root"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # sudo looks its host up; the chroot shares this machine's name.
    printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname)" >"$root/etc/hosts"
    trust_host_cas "$root"
    if [ "$owner" != root ]; then
        chroot "$root" useradd --create-home --shell /bin/bash --groups sudo "$owner"
        # Raspberry Pi OS's first user has sudo without a password; so does this one.
        echo "$owner ALL=(ALL) NOPASSWD: ALL" >"$root/etc/sudoers.d/010_$owner-nopasswd"
        chmod 0440 "$root/etc/sudoers.d/010_$owner-nopasswd"
    fi
    git clone --quiet "$REPO" "$root$home/bunco-pi"
    chroot "$root" chown -R "$owner:" "$home/bunco-pi"
}

# run ROOT WHO HOME NAME COMMAND: one command in a login shell of WHO, timed, logged.
run() {
    local root=$1 who=$2 home=$3 name=$4 command=$5 start rc
    local log="$WORK/$name.log"
    start=$(date +%s)
    set +e
    chroot "$root" /usr/bin/env -i TERM=dumb LANG=C.UTF-8 \
        /usr/sbin/runuser -l "$who" -c "cd $home/bunco-pi && $command" </dev/null >"$log" 2>&1
    rc=$?
    set -e
    RESULTS+=("== $name: '$command' as $who: exit $rc in $(( $(date +%s) - start )) s")
    RESULTS+=("$(tail -n 8 "$log" | sed 's/^/    /')")
    printf '%s\n' "${RESULTS[@]: -2}"
}

RESULTS=()
for who in $WHO; do
    if [ "$who" = root ]; then home=/root; else home=/home/$who; fi
    root="$WORK/$( [ "$who" = root ] && echo root || echo user )"
    echo "preparing a fresh system for $who in $root"
    prepare "$root" "$home" "$who"
    mount_into "$root"
    [ "$ONLY" = test ] || run "$root" "$who" "$home" "demo-as-$who" "bash scripts/demo.sh"
    # The README's tour, pasted into a new login shell after the demo set things up.
    [ "$ONLY" = test ] || run "$root" "$who" "$home" "tour-as-$who" \
        "bunco-pi rules list && bunco-pi rules show classic > house.toml && bunco-pi rules check house.toml"
    [ "$ONLY" = demo ] || run "$root" "$who" "$home" "test-as-$who" "bash scripts/test.sh -q"
    unmount_all
done

echo
echo "Fresh Debian bookworm minimal ($(cat "$BASE/etc/debian_version")), logs in $WORK:"
printf '%s\n' "${RESULTS[@]}"
