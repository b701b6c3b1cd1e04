#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: Fashion-MNIST
# trained through the cluster coordinator on a local parameter-server cluster
# (1 ps + 2 worker `distflow server` processes on loopback), evaluated every
# epoch. With no arguments it trains 2 epochs while a random worker is killed
# and restarted every 5 seconds; arguments go to `distflow train --ps 1
# --workers 2` instead (e.g. --epochs 5 --checkpoint-dir /tmp/fm --output json).
#
# Only the `distflow` program and the libraries it links are built here (the
# tests and benchmarks are scripts/test.sh's), with ninja's progress shown.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x build/release/tools/distflow ]; then
  echo "train: building distflow (a first build takes under 13 minutes on 2 cores;" \
    "later ones only rebuild what changed)" >&2
fi
bash scripts/build.sh --target distflow >&2
if [ "$#" -eq 0 ]; then set -- --epochs 2 --kill-worker-every 5; fi
exec build/release/tools/distflow train --ps 1 --workers 2 "$@"
