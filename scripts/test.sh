#!/usr/bin/env bash
# The test command from README.md: installs system and Python dependencies, then runs the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
# System packages the tests use: the broker, systemd-analyze for the unit files, openscad for
# the enclosure, dosfstools and mtools for the SD card, Chromium for the console, node with
# npm for the firmware (below). Each test skips cleanly where its tool is missing.
need=()
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
# The units run /bin/kill, and `systemd-analyze verify` checks that it is there (procps).
[ -x /bin/kill ] || need+=(procps)
command -v openscad >/dev/null 2>&1 || need+=(openscad)
# `bunco-pi sdcard` is tested on FAT images made by mkfs.vfat and read with mtools; openssl
# hashes the box's login password.
command -v mkfs.vfat >/dev/null 2>&1 || [ -x /usr/sbin/mkfs.vfat ] || need+=(dosfstools)
command -v mcopy >/dev/null 2>&1 || need+=(mtools)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
# The console's browser tests drive Debian's Chromium through its chromedriver (Selenium).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# GNU Unifont: the table screens draw names beyond Latin-1 with it (the golden images need it).
[ -f /usr/share/fonts/opentype/unifont/unifont.otf ] || need+=(fonts-unifont)
if [ ${#need[@]} -gt 0 ]; then
    apt_install "${need[@]}" \
        || echo "could not install ${need[*]} (needs root or sudo): their tests will skip" >&2
fi
# Real MicroPython (its WebAssembly build, from the npm registry) runs the dice firmware in one
# test; it needs node and npm (Debian's nodejs and npm where missing), and skips without them.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm \
        || echo "could not install nodejs and npm (needs root or sudo): the MicroPython firmware test will skip" >&2
fi
if command -v npm >/dev/null 2>&1 && ! npm ls -g @micropython/micropython-webassembly-pyscript >/dev/null 2>&1; then
    echo "installing MicroPython's WebAssembly build with npm (for the firmware test)" >&2
    as_root npm install -g -s @micropython/micropython-webassembly-pyscript >/dev/null 2>&1 \
        || echo "could not install MicroPython's WebAssembly build: its firmware test will skip" >&2
fi
# MicroPython's unix port runs the Pico table box's firmware in its tests (the same files that
# go onto a Pico, with only the board layer swapped). Its source sits beside the checkout, in
# ../shared/vendor/micropython, where there is one; it is built once into a cache (about a
# minute) and the tests find it through BUNCO_MICROPYTHON. Without it they skip.
mpy_src=../shared/vendor/micropython
if [ -x "$mpy_src/build-unix.sh" ] || [ -f "$mpy_src/build-unix.sh" ]; then
    if ! command -v gcc >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
        apt_install build-essential \
            || echo "could not install build-essential: the Pico table box tests will skip" >&2
    fi
    if mpy=$(bash "$mpy_src/build-unix.sh" "${XDG_CACHE_HOME:-$HOME/.cache}/bunco-pi/micropython-unix"); then
        export BUNCO_MICROPYTHON="$mpy"
    else
        echo "could not build MicroPython's unix port: the Pico table box tests will skip" >&2
    fi
else
    echo "no MicroPython source in $mpy_src: the Pico table box tests will skip" >&2
fi
make_venv test
.venv/bin/ruff check .
# Two workers: the nights whose faults are timed one after another on one of them, the rest
# spread over both (tests/conftest.py); `bash scripts/test.sh -n 0 ...` runs in one process.
exec .venv/bin/python -m pytest -n 2 --dist loadgroup "$@"
