#!/usr/bin/env bash
# Test hosts on one machine: one Linux network namespace per task, joined by
# a bridge that lives in a namespace of its own, so nothing is routed outside
# them. Partitions and lossy links are nftables rules inside each host.
#
#   netns_cluster.sh up NAME N          make hosts NAME-0 .. NAME-(N-1)
#   netns_cluster.sh addr NAME I        print host I's address (192.0.2.(I+1))
#   netns_cluster.sh exec NAME I CMD... run CMD on host I
#   netns_cluster.sh partition NAME I J drop all traffic between hosts I and J
#   netns_cluster.sh loss NAME PCT      drop PCT % of the packets every host receives
#   netns_cluster.sh heal NAME          remove every partition and loss
#   netns_cluster.sh pids NAME          print the processes running on the hosts
#   netns_cluster.sh down NAME          kill what runs on the hosts, remove them
#
# Addresses come from 192.0.2.0/24 (RFC 5737, documentation only): they are
# nobody's real address, and no route leads out of the namespaces anyway.
# Needs root, iproute2 and nftables (scripts/setup.sh installs them). `up`
# removes a previous NAME first; `down` is idempotent and runs even when
# `up` failed halfway. Example, the main job on four hosts:
#
#   scripts/netns_cluster.sh up demo 4
#   C="ps=192.0.2.2:2222;worker=192.0.2.3:2222,192.0.2.4:2222"
#   scripts/netns_cluster.sh exec demo 1 build/release/tools/distflow server --cluster "$C" --job ps --task 0 &
#   scripts/netns_cluster.sh exec demo 2 build/release/tools/distflow server --cluster "$C" --job worker --task 0 &
#   scripts/netns_cluster.sh exec demo 3 build/release/tools/distflow server --cluster "$C" --job worker --task 1 &
#   scripts/netns_cluster.sh exec demo 0 build/release/tools/distflow train --cluster "$C" --epochs 1
#   scripts/netns_cluster.sh down demo
set -euo pipefail

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

need_name() {
  [[ "${1:-}" =~ ^[A-Za-z0-9_.-]{1,40}$ ]] || {
    echo "netns_cluster: NAME must be 1-40 letters, digits, '_', '.' or '-', got '${1:-}'" >&2
    exit 2
  }
}

need_index() {
  [[ "${1:-}" =~ ^[0-9]{1,3}$ ]] && [ "$1" -lt 250 ] || {
    echo "netns_cluster: a host index must be in [0, 250), got '${1:-}'" >&2
    exit 2
  }
}

switch_ns() { echo "$1-sw"; }
host_ns() { echo "$1-$2"; }
addr() { echo "192.0.2.$(($1 + 1))"; }

# The hosts of NAME, by index, as they exist now. `ip netns list` looks up
# each namespace's peer id and says "Peer netns reference is invalid" on
# stderr when another cluster's namespace goes away meanwhile: not ours.
hosts() {
  ip netns list 2>/dev/null | awk '{print $1}' | sed -n "s/^$1-\([0-9]\{1,3\}\)\$/\1/p" | sort -n
}

# Rewrites every host's table "distflow" from the rule files in the state
# directory: partitions (pairs of indices) and loss (a percentage).
apply_rules() {
  local name=$1 state="/run/netns-cluster/$1"
  local loss=0
  [ -f "$state/loss" ] && loss=$(cat "$state/loss")
  for i in $(hosts "$name"); do
    {
      echo "table inet distflow"
      echo "delete table inet distflow"
      echo "table inet distflow {"
      echo "  chain input { type filter hook input priority 0; policy accept;"
      if [ -f "$state/partitions" ]; then
        while read -r a b; do
          [ "$a" = "$i" ] && echo "    ip saddr $(addr "$b") drop"
          [ "$b" = "$i" ] && echo "    ip saddr $(addr "$a") drop"
        done <"$state/partitions"
      fi
      [ "$loss" -gt 0 ] && echo "    iifname \"eth0\" numgen random mod 100 < $loss drop"
      echo "  }"
      echo "  chain output { type filter hook output priority 0; policy accept;"
      if [ -f "$state/partitions" ]; then
        while read -r a b; do
          [ "$a" = "$i" ] && echo "    ip daddr $(addr "$b") drop"
          [ "$b" = "$i" ] && echo "    ip daddr $(addr "$a") drop"
        done <"$state/partitions"
      fi
      echo "  }"
      echo "}"
    } | ip netns exec "$(host_ns "$name" "$i")" nft -f -
  done
}

cmd_down() {
  local name=$1
  for ns in $(switch_ns "$name") $(for i in $(hosts "$name"); do host_ns "$name" "$i"; done); do
    ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$ns" || continue
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "/run/netns-cluster/$name"
}

cmd_up() {
  local name=$1 n=$2
  [[ "$n" =~ ^[0-9]{1,3}$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 250 ] || {
    echo "netns_cluster: N must be in [1, 250], got '$n'" >&2
    exit 2
  }
  command -v nft >/dev/null || {
    echo "netns_cluster: nft is not installed (Debian package nftables; scripts/setup.sh)" >&2
    exit 3
  }
  cmd_down "$name"
  local sw
  sw=$(switch_ns "$name")
  ip netns add "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  for ((i = 0; i < n; i++)); do
    local h
    h=$(host_ns "$name" "$i")
    ip netns add "$h"
    ip -n "$sw" link add "h$i" type veth peer name eth0 netns "$h"
    ip -n "$sw" link set "h$i" master br0 up
    ip -n "$h" link set lo up
    ip -n "$h" addr add "$(addr "$i")/24" dev eth0
    ip -n "$h" link set eth0 up
  done
  mkdir -p "/run/netns-cluster/$name"
  apply_rules "$name"
}

[ $# -ge 2 ] || usage
verb=$1
name=$2
need_name "$name"
shift 2
case "$verb" in
  up)
    [ $# -eq 1 ] || usage
    cmd_up "$name" "$1" || {
      status=$?
      cmd_down "$name"
      exit "$status"
    }
    ;;
  addr)
    [ $# -eq 1 ] || usage
    need_index "$1"
    addr "$1"
    ;;
  exec)
    [ $# -ge 2 ] || usage
    need_index "$1"
    ns=$(host_ns "$name" "$1")
    shift
    exec ip netns exec "$ns" "$@"
    ;;
  partition)
    [ $# -eq 2 ] || usage
    need_index "$1"
    need_index "$2"
    echo "$1 $2" >>"/run/netns-cluster/$name/partitions"
    apply_rules "$name"
    ;;
  loss)
    [ $# -eq 1 ] || usage
    [[ "$1" =~ ^[0-9]{1,2}$ ]] || {
      echo "netns_cluster: PCT must be in [0, 99], got '$1'" >&2
      exit 2
    }
    echo "$1" >"/run/netns-cluster/$name/loss"
    apply_rules "$name"
    ;;
  heal)
    [ $# -eq 0 ] || usage
    rm -f "/run/netns-cluster/$name/partitions" "/run/netns-cluster/$name/loss"
    apply_rules "$name"
    ;;
  pids)
    [ $# -eq 0 ] || usage
    for i in $(hosts "$name"); do ip netns pids "$(host_ns "$name" "$i")"; done
    ;;
  down)
    [ $# -eq 0 ] || usage
    cmd_down "$name"
    ;;
  *) usage ;;
esac
