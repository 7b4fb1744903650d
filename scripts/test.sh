#!/usr/bin/env bash
# The test command from README.md: installs system and Python dependencies, then runs the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# System packages the tests use: the broker, systemd-analyze for the unit files, openscad for
# the enclosure. Each test skips cleanly where its tool is missing.
need=()
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
command -v openscad >/dev/null 2>&1 || need+=(openscad)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    else
        echo "not root: missing ${need[*]}; their tests will skip (sudo apt-get install ${need[*]})" >&2
    fi
fi
# Real MicroPython (its WebAssembly build) runs the dice firmware in one test; it skips without it.
if command -v npm >/dev/null 2>&1 && ! npm ls -g @micropython/micropython-webassembly-pyscript >/dev/null 2>&1; then
    npm install -g -s @micropython/micropython-webassembly-pyscript >/dev/null 2>&1 \
        || echo "could not install MicroPython's WebAssembly build: its firmware test will skip" >&2
fi
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e '.[test]'
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
