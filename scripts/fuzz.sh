#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan + UBSan, in
# build/fuzz) and runs each for SECONDS (default 20) on its seed corpus in
# fuzz/corpus/NAME/ (read only; new inputs go to a scratch directory).
# Fails, printing the report and keeping the input in
# build/fuzz/artifacts/NAME/, on the first crash, hang, leak or sanitizer
# report. Usage: scripts/fuzz.sh [SECONDS [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_BASEDIR="$PWD"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

seconds=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in fuzz/corpus/*/; do targets+=("$(basename "$d")_fuzzer"); done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for target in "${targets[@]}"; do
  name=${target%_fuzzer}
  artifacts=build/fuzz/artifacts/$name
  mkdir -p "$work/$name" "$artifacts"
  echo "fuzz: $target for ${seconds}s"
  if ! "build/fuzz/fuzz/$target" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$work/$name" "fuzz/corpus/$name" \
      >"$work/$name.log" 2>&1; then
    tail -n 80 "$work/$name.log"
    echo "fuzz: $target failed; the input is in $artifacts/" >&2
    exit 1
  fi
  grep -E '^stat::number_of_executed_units|^Done' "$work/$name.log" | tr '\n' ' '
  echo
done
