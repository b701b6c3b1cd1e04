#!/usr/bin/env bash
# How long the main job takes to get over a fault, on four test hosts
# (scripts/netns_cluster.sh: chief, ps, two workers, each its own network
# namespace), with the flags' defaults unless given after the build dir:
#
#   - ps kill -> training resumed: the ps task is killed (SIGKILL) and started
#     again at its address 1 s later, empty; from the kill to the chief's
#     "training resumes at step" line (detection + the wait + the restore).
#   - worker partition -> its closures rerun: worker 1 is cut off from every
#     host; from the cut to the coordinator's "worker task 1 ... failed" line,
#     when its closure goes back to the queue to run on worker 0.
#   - the checkpoint pause of the MLP: the longest time a save held back
#     scheduling (checkpoint_pause_max_ms of the summary).
#
#   sudo bash bench/fault_recovery.sh [BUILD_DIR] [EXTRA TRAIN FLAGS...]
#
# Needs root, iproute2 and nftables. Every run is bounded (timeout 600 s).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
shift || true
bin="$PWD/$build/tools/distflow"
net="dfbench$$"
dir="$(mktemp -d)"
cleanup() {
  bash scripts/netns_cluster.sh down "$net" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
bash scripts/netns_cluster.sh up "$net" 4
cluster="ps=192.0.2.2:2222;worker=192.0.2.3:2222,192.0.2.4:2222"
host() { bash scripts/netns_cluster.sh exec "$net" "$@"; }
now() { date +%s.%N; }
start_server() {  # HOST JOB TASK; its pid in pid_JOBTASK
  (exec bash scripts/netns_cluster.sh exec "$net" "$1" "$bin" server --cluster "$cluster" \
    --job "$2" --task "$3" >"$dir/$2$3.out" 2>&1) &
  eval "pid_$2$3=$!"
  disown
  for _ in $(seq 100); do grep -q listening "$dir/$2$3.out" && return 0; sleep 0.1; done
  echo "fault_recovery: $2 $3 did not start" >&2
  exit 1
}
# The chief's stderr, each line stamped with the time it was read.
stamp() { while IFS= read -r line; do echo "$(now) $line"; done; }
# The stamp of the first line of FILE holding TEXT, waiting up to 300 s.
wait_line() {
  for _ in $(seq 3000); do
    local t
    t=$(grep -m1 -F "$2" "$1" | cut -d' ' -f1 || true)
    [ -n "$t" ] && { echo "$t"; return 0; }
    sleep 0.1
  done
  echo "fault_recovery: no '$2' in $1" >&2
  exit 1
}
start_all() {
  start_server 1 ps 0
  start_server 2 worker 0
  start_server 3 worker 1
}

echo "== ps kill -> training resumed"
start_all
(host 0 timeout 600 "$bin" train --cluster "$cluster" --epochs 3 --checkpoint-dir "$dir/ckpt" \
  --checkpoint-every-steps 100 --output json "$@" 2>&1 | stamp >"$dir/chief1.log") &
chief=$!
wait_line "$dir/chief1.log" "epoch 1/3 step 2" >/dev/null
killed=$(now)
kill -KILL "$pid_ps0"
sleep 1
start_server 1 ps 0
resumed=$(wait_line "$dir/chief1.log" "training resumes at step")
wait "$chief" || true
echo "ps kill to training resumed: $(awk "BEGIN{print $resumed - $killed}") s"
grep -o '"steps_lost":[0-9]*\|"checkpoint_pause_max_ms":[0-9.]*\|"test_accuracy":[0-9.]*' \
  "$dir/chief1.log" | tr '\n' ' '
echo
bash scripts/netns_cluster.sh down "$net" >/dev/null
bash scripts/netns_cluster.sh up "$net" 4

echo "== worker partition -> its closures rerun"
start_all
(host 0 timeout 600 "$bin" train --cluster "$cluster" --epochs 3 --output json "$@" 2>&1 |
  stamp >"$dir/chief2.log") &
chief=$!
wait_line "$dir/chief2.log" "epoch 1/3 step 2" >/dev/null
cut=$(now)
for h in 0 1 2; do bash scripts/netns_cluster.sh partition "$net" 3 "$h"; done
rerun=$(wait_line "$dir/chief2.log" "coordinator: worker task 1 at")
bash scripts/netns_cluster.sh heal "$net"
wait "$chief" || true
echo "worker partition to its closure rerun: $(awk "BEGIN{print $rerun - $cut}") s"
