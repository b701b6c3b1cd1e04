#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --preset release -j "$(nproc)" --timeout 600
# Every fuzz target, briefly, on its seed corpus (scripts/fuzz.sh).
bash scripts/fuzz.sh 20
