#!/usr/bin/env bash
# Remove what install/install.sh put on this Pi:
#
#   sudo bash install/uninstall.sh [--purge] [--root DIR]
#
# Stops and removes the bunco-pi services, the program in /opt/bunco-pi and /etc/bunco-pi
# (configs and passwords). The nights' logs in /var/lib/bunco-pi stay unless --purge, which
# also removes the broker's queue and the `bunco` user. Debian's mosquitto service is
# switched back on if it was on before the head was installed. --root DIR as in install.sh.
set -euo pipefail

ROOT="" PURGE=0
while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT="${2:?--root needs a directory}"; shift 2 ;;
        --purge) PURGE=1; shift ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "uninstall.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ -n "$ROOT" ]; then
    [ -d "$ROOT" ] || { echo "uninstall.sh: --root $ROOT: no such directory" >&2; exit 2; }
    ROOT="$(cd "$ROOT" && pwd)"
elif [ "$(id -u)" != 0 ]; then
    echo "uninstall.sh: run as root (sudo bash install/uninstall.sh)" >&2; exit 2
fi

run() {
    if [ -n "$ROOT" ]; then echo "would run: $*"; else "$@"; fi
}
remove() {
    if [ -e "$1" ] || [ -L "$1" ]; then
        rm -rf -- "$1"
        echo "removed ${1#"$ROOT"}"
    fi
}

ETC="$ROOT/etc/bunco-pi"
UNITS="$ROOT/etc/systemd/system"
SERVICES=(bunco-pi-table.service bunco-pi-head.service bunco-pi-broker.service)

present=()
for unit in "${SERVICES[@]}"; do
    [ -f "$UNITS/$unit" ] && present+=("$unit")
done
if [ ${#present[@]} -gt 0 ]; then
    run systemctl disable --now "${present[@]}"
fi
for unit in "${SERVICES[@]}"; do
    remove "$UNITS/$unit"
done
run systemctl daemon-reload

if [ -f "$ETC/.mosquitto-was-enabled" ]; then
    run systemctl enable --now mosquitto.service
fi
remove "$ETC"
remove "$ROOT/opt/bunco-pi"

if [ "$PURGE" = 1 ]; then
    remove "$ROOT/var/lib/bunco-pi"
    remove "$ROOT/var/lib/bunco-pi-broker"
    if [ -n "$ROOT" ] || id bunco >/dev/null 2>&1; then
        run userdel bunco
    fi
else
    if [ -d "$ROOT/var/lib/bunco-pi" ]; then
        echo "kept /var/lib/bunco-pi (the nights' logs); --purge removes it"
    fi
fi
echo "bunco-pi removed${ROOT:+ from $ROOT}."
