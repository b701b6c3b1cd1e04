#!/usr/bin/env bash
# `distflow serve` under load: requests/s and p50/p99 latency from wrk at 1, 8
# and 64 connections, for TF Serving's half_plus_two (predict of [1, 2, 5]) and
# the Keras MNIST CNN (predict of one 28x28x1 image), each without and with
# --enable_batching, next to the floor: the same HTTP server (bench/http_floor,
# serving/rest_server.h) answering "{}" to the same POSTs, in the same run.
# Ends with each server process's peak RSS (VmHWM).
#
#   bash bench/serve_bench.sh [SECONDS_PER_RUN] [BUILD_DIR]
#
# Needs wrk (Debian package wrk). Every server gets 64 threads, so that 64
# keep-alive connections are each served at once; wrk runs on the same
# machine and takes its share of the CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
build="${2:-build/release}"
bin="$build/tools/distflow"
floor="$build/bench/http_floor"
models="$(cd .. && pwd)/shared/saved_models"
command -v wrk >/dev/null || { echo "serve_bench: needs wrk (apt-get install wrk)" >&2; exit 1; }
dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

mkdir -p "$dir/cnn"
ln -s "$models/keras_mnist_cnn_bn" "$dir/cnn/1"
echo '{"instances": [1.0, 2.0, 5.0]}' >"$dir/half_plus_two.json"
/usr/bin/python3 -c '
import json
image = [[[((y * 28 + x) % 255) / 255.0] for x in range(28)] for y in range(28)]
print(json.dumps({"instances": [image]}))' >"$dir/cnn.json"
cat >"$dir/batching.config" <<'CONFIG'
max_batch_size { value: 64 }
batch_timeout_micros { value: 500 }
num_batch_threads { value: 2 }
max_enqueued_batches { value: 100 }
CONFIG
cat >"$dir/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("BODY"), "r"))
wrk.body = f:read("*a")
f:close()
LUA

# start NAME COMMAND...: starts a server, waits for its "listening on" line,
# sets $port and $pid.
start() {
  local name=$1
  shift
  "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  pid=$!
  pids+=("$pid")
  port=""
  for _ in $(seq 600); do
    port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$dir/$name.out")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$dir/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$port" ] || { echo "serve_bench: $name did not start" >&2; exit 1; }
}

printf '%-26s %5s %10s %10s %10s %8s\n' "server" "conns" "req/s" "p50" "p99" "non-2xx"
# load NAME URL BODY: wrk at 1, 8 and 64 connections, one line each.
load() {
  local name=$1 url=$2 body=$3
  for c in 1 8 64; do
    local threads=$((c < 2 ? c : 2))
    BODY="$body" wrk -t "$threads" -c "$c" -d "${seconds}s" --latency -s "$dir/post.lua" "$url" \
      >"$dir/wrk.txt"
    local rps p50 p99 bad
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$dir/wrk.txt")
    p50=$(awk '$1 == "50%" {print $2}' "$dir/wrk.txt")
    p99=$(awk '$1 == "99%" {print $2}' "$dir/wrk.txt")
    bad=$(awk '/Non-2xx/ {print $NF}' "$dir/wrk.txt")
    printf '%-26s %5s %10s %10s %10s %8s\n' "$name" "$c" "$rps" "$p50" "$p99" "${bad:-0}"
  done
}

rss=()
# bench NAME URL_PATH BODY COMMAND...: one server, its three loads, its RSS.
bench() {
  local name=$1 path=$2 body=$3
  shift 3
  start "$name" "$@"
  load "$name" "http://127.0.0.1:$port$path" "$body"
  rss+=("$name: $(awk '/VmHWM/ {print $2, $3}' "/proc/$pid/status")")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

serve=("$bin" serve --rest_api_port 0 --rest_api_num_threads 64)
batching=(--enable_batching --batching_parameters_file "$dir/batching.config")
hp=(--model_name half_plus_two --model_base_path "$models/serving_half_plus_two_cpu")
cnn=(--model_name cnn --model_base_path "$dir/cnn")

bench "floor (http_floor)" /v1/models/half_plus_two:predict "$dir/half_plus_two.json" \
  "$floor" 0 64
bench "half_plus_two" /v1/models/half_plus_two:predict "$dir/half_plus_two.json" \
  "${serve[@]}" "${hp[@]}"
bench "half_plus_two batching" /v1/models/half_plus_two:predict "$dir/half_plus_two.json" \
  "${serve[@]}" "${hp[@]}" "${batching[@]}"
bench "floor, CNN body" /v1/models/cnn:predict "$dir/cnn.json" "$floor" 0 64
bench "keras_mnist_cnn_bn" /v1/models/cnn:predict "$dir/cnn.json" "${serve[@]}" "${cnn[@]}"
bench "keras_mnist_cnn_bn batching" /v1/models/cnn:predict "$dir/cnn.json" \
  "${serve[@]}" "${cnn[@]}" "${batching[@]}"

echo
echo "peak RSS (VmHWM) per server process:"
printf '  %s\n' "${rss[@]}"
