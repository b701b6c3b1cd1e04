#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: the parameter-server
# training of y = 2x + 10 on a local cluster (1 ps + 2 worker processes on
# loopback), async by default. Extra arguments go to `distflow demo`
# (e.g. --mode sync --steps 500 --checkpoint-dir /tmp/ckpt --output json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
exec build/release/tools/distflow demo "$@"
