#!/usr/bin/env bash
# A soak of the main job under --chaos (not part of CI): `distflow train` on a
# local cluster of 1 ps and 2 workers for about MINUTES minutes while chaos
# kills and cuts off random tasks, the ps included. Prints the faults, the
# recoveries, the steps lost, the final accuracy, and each task's resident
# memory early in the run and at its end, with its peak (VmHWM), to show
# that nothing grows.
#
#   bash scripts/soak.sh [MINUTES] [BUILD_DIR] [CHAOS_SPEC]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-10}"
build="${2:-build/release}"
spec="${3:-kill-worker:20s,kill-ps:60s/2s,partition-worker:45s/5s}"
bin="$PWD/$build/tools/distflow"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# One epoch of the MLP takes about 5 s here, about 10 s under the default
# chaos; the run ends after its epochs.
epochs=$((minutes * 60 / 10))
"$bin" train --ps 1 --workers 2 --epochs "$epochs" --checkpoint-dir "$dir/ckpt" \
  --checkpoint-every-steps 200 --call-timeout 5 --chaos "$spec" --output json \
  --progress-every 1000 >"$dir/out.json" 2>"$dir/err.log" &
train=$!
rss() {  # pid -> "VmRSS VmHWM" in kB
  awk '/VmHWM/{hwm=$2} /VmRSS/{rss=$2} END{printf "%s %s", rss, hwm}' "/proc/$1/status" \
    2>/dev/null || true
}
tasks() { pgrep -P "$train" || true; }
sleep 30
echo "after 30 s (pid: VmRSS VmHWM kB): chief $(rss "$train")"
for p in $(tasks); do echo "  $(tr '\0' ' ' <"/proc/$p/cmdline" | grep -o -- '--job [a-z]* --task [0-9]*'): $(rss "$p")"; done
while kill -0 "$train" 2>/dev/null; do
  sleep 10
  if [ -n "$(tasks)" ]; then
    { echo "chief $(rss "$train")"
      for p in $(tasks); do echo "  $(tr '\0' ' ' <"/proc/$p/cmdline" | grep -o -- '--job [a-z]* --task [0-9]*'): $(rss "$p")"; done
    } >"$dir/last_rss"
  fi
done
wait "$train" && status=0 || status=$?
echo "at the end (VmRSS VmHWM kB; tasks restarted by chaos count from their restart):"
cat "$dir/last_rss" 2>/dev/null || true
echo "exit status $status"
echo "faults: $(grep -c '^W chaos: ' "$dir/err.log" || true) ($(grep -c 'chaos: killed /job:ps' "$dir/err.log" || true) ps kills)"
tail -1 "$dir/out.json"
grep -m3 '^error' "$dir/err.log" || true
