#!/usr/bin/env bash
# Runs a GraphDef across three `distflow server` processes (one parameter
# server, two workers) started on free loopback ports. Extra arguments go to
# `distflow run`. Assumes the project is built (scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/tools/distflow
tmp=$(mktemp -d)
# start() runs in a command substitution (a subshell), so the server pids
# are collected in a file, not a shell variable the subshell cannot update.
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if [ -f "$tmp/pids" ]; then
    while read -r p; do kill "$p" 2>/dev/null || true; done <"$tmp/pids"
    # The servers are not this shell's children (their subshells exited), so
    # `wait` cannot reap them: poll until they are gone.
    for _ in $(seq 50); do
      alive=0
      while read -r p; do kill -0 "$p" 2>/dev/null && alive=1; done <"$tmp/pids"
      [ "$alive" = 0 ] && break
      sleep 0.1
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start NAME CLUSTER JOB TASK: starts a server on a free port, prints its port.
start() {
  "$bin" server --cluster "$2" --job "$3" --task "$4" >"$tmp/$1.out" 2>"$tmp/$1.err" &
  echo $! >>"$tmp/pids"
  for _ in $(seq 100); do
    if grep -q '^listening on' "$tmp/$1.out" 2>/dev/null; then
      sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/$1.out"
      return
    fi
    sleep 0.1
  done
  echo "server $1 did not start:" >&2
  cat "$tmp/$1.err" >&2
  exit 1
}

ps=$(start ps "ps=127.0.0.1:0" ps 0)
w0=$(start w0 "worker=127.0.0.1:0,127.0.0.1:0" worker 0)
w1=$(start w1 "worker=127.0.0.1:0,127.0.0.1:0" worker 1)
cluster="ps=127.0.0.1:$ps;worker=127.0.0.1:$w0,127.0.0.1:$w1"
echo "cluster: $cluster"
"$bin" run examples/graphs/linear_model.pbtxt --master "grpc://127.0.0.1:$w0" \
  --cluster "$cluster" --feed 'x=[[1,2],[3,4],[5,6]]' --fetch y --fetch xw "$@"
