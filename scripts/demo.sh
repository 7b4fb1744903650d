#!/usr/bin/env bash
# The main job from README.md: install bunco-pi into .venv and play a whole networked Bunco
# night on this machine (a private broker, the head and every table; no hardware).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ] \
        && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto >/dev/null
fi
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e .
exec .venv/bin/bunco-pi demo "$@"
