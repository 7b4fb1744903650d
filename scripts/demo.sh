#!/usr/bin/env bash
# The main job from README.md: install bunco-pi into .venv and play a simulated Bunco night.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e .
exec .venv/bin/bunco-pi sim "$@"
