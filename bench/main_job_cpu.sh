#!/usr/bin/env bash
# Where the main job computes: starts 1 ps and 2 workers as `distflow server`
# processes on loopback, trains the MLP through the coordinator against them
# (`distflow train --cluster ...`, no worker killed), and prints the CPU
# seconds (user + system) each server process used, with the run's summary.
#
#   bash bench/main_job_cpu.sh [DISTFLOW_BINARY] [extra train flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build/release/tools/distflow}"
shift || true
dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# Starts a task on a free port; sets `addr` once it listens.
start() {
  local cluster="$1" job="$2" task="$3" out="$dir/$2$3"
  "$bin" server --cluster "$cluster" --job "$job" --task "$task" >"$out.out" 2>"$out.err" &
  pids+=("$!")
  for _ in $(seq 300); do
    if grep -q "^listening on " "$out.out"; then
      addr=$(sed -n 's/^listening on //p' "$out.out" | head -1)
      return
    fi
    sleep 0.1
  done
  echo "$job $task did not start: $(cat "$out.err")" >&2
  exit 1
}

start "ps=127.0.0.1:0" ps 0
ps=$addr
start "worker=127.0.0.1:0,127.0.0.1:0" worker 0
w0=$addr
start "worker=127.0.0.1:0,127.0.0.1:0" worker 1
w1=$addr

cpu() {  # utime + stime of a pid, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); print ($12 + $13) / hz}' "/proc/$1/stat"
}

"$bin" train --cluster "ps=$ps;worker=$w0,$w1" --model mlp --epochs 1 --output json "$@" \
  2>/dev/null
echo "CPU seconds: ps $(cpu "${pids[0]}"), worker 0 $(cpu "${pids[1]}"), worker 1 $(cpu "${pids[2]}")"
