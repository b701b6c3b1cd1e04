#!/usr/bin/env bash
# What the status page costs the job: the main job (1 ps + 2 workers, one
# epoch of the MLP, no worker killed) run alternately without a status port
# and with --status-port polled every 100 ms (/api/status and /metrics, as a
# page and Prometheus would), RUNS times each; prints every run's
# examples/s and the medians side by side.
#
#   bash bench/status_overhead.sh [RUNS] [DISTFLOW_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
bin="${2:-build/release/tools/distflow}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

eps() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])["examples_per_second"])'; }

off=()
on=()
for i in $(seq "$runs"); do
  off+=("$("$bin" train --ps 1 --workers 2 --epochs 1 --output json 2>/dev/null | eps)")
  "$bin" train --ps 1 --workers 2 --epochs 1 --output json --status-port 0 \
    >"$dir/out" 2>"$dir/err" &
  job=$!
  port=""
  while kill -0 "$job" 2>/dev/null; do
    [ -z "$port" ] && port=$(sed -n 's|.*status page on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$dir/err")
    if [ -n "$port" ]; then
      curl -s -o /dev/null "http://127.0.0.1:$port/api/status" || true
      curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true
    fi
    sleep 0.1
  done
  wait "$job"
  on+=("$(eps <"$dir/out")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "status off, examples/s: ${off[*]}"
echo "status on, polled every 100 ms, examples/s: ${on[*]}"
m_off=$(median "${off[@]}")
m_on=$(median "${on[@]}")
python3 -c "print(f'median off {float($m_off):.0f}, on {float($m_on):.0f}: on/off = {float($m_on)/float($m_off):.3f}')"
