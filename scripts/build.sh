#!/usr/bin/env bash
# Configures and builds distflow (Release) into build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_BASEDIR="$PWD"
# ccache caches compiles that use precompiled headers only with these.
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
cmake --preset release >/dev/null
cmake --build --preset release "$@"
