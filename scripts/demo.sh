#!/usr/bin/env bash
# The main job from README.md: install bunco-pi into .venv and play a networked Bunco night on
# this machine (a private broker, the head and every table as processes; no hardware).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
# The networked night needs Debian's mosquitto (the demo starts a private copy of it).
if ! command -v mosquitto >/dev/null 2>&1 && [ ! -x /usr/sbin/mosquitto ]; then
    apt_install mosquitto \
        || echo "mosquitto (the MQTT broker) is missing and could not be installed (that needs" \
                "root or sudo): the night will run in one process instead of as separate boxes" >&2
fi
make_venv console   # the head serves the web console the demo prints the address of
install_launcher
exec .venv/bin/bunco-pi demo "$@"
