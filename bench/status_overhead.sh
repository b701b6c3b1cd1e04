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
  # One poller on one kept-alive connection, as a page or Prometheus polls
  # (a curl process per request would cost the 2-core machine more than
  # the pages do).
  python3 - "$dir/err" "$job" <<'PY'
import http.client, os, re, sys, time
err, job = sys.argv[1], int(sys.argv[2])
def alive():
    try:
        os.kill(job, 0)
        return True
    except OSError:
        return False
port, conn = None, None
while alive():
    if port is None:
        m = re.search(r"status page on http://127\.0\.0\.1:(\d+)/", open(err).read())
        port = int(m.group(1)) if m else None
    if port is not None:
        try:
            conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            for path in ("/api/status", "/metrics"):
                conn.request("GET", path)
                conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            conn = None
    time.sleep(0.1)
PY
  wait "$job"
  on+=("$(eps <"$dir/out")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "status off, examples/s: ${off[*]}"
echo "status on, polled every 100 ms, examples/s: ${on[*]}"
m_off=$(median "${off[@]}")
m_on=$(median "${on[@]}")
python3 -c "print(f'median off {float($m_off):.0f}, on {float($m_on):.0f}: on/off = {float($m_on)/float($m_off):.3f}')"
