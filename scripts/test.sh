#!/usr/bin/env bash
# The test command from README.md: installs system and Python dependencies, then runs the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v apt-get >/dev/null 2>&1 && ! command -v mosquitto >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto >/dev/null
    else
        echo "mosquitto is not installed: the broker tests will skip (sudo apt-get install mosquitto)" >&2
    fi
fi
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e '.[test]'
.venv/bin/ruff check .
exec .venv/bin/python -m pytest "$@"
