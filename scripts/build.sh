#!/usr/bin/env bash
# Configures and builds distflow (Release) into build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_BASEDIR="$PWD"
cmake --preset release >/dev/null
cmake --build --preset release "$@"
