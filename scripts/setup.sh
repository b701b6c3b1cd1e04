#!/usr/bin/env bash
# Installs the Debian packages distflow builds with, when any is missing.
# Idempotent; prints nothing when everything is already present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev
  libabsl-dev libeigen3-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev openssl
  zlib1g-dev dataset-fashion-mnist libleveldb-dev libsnappy-dev
  clang libfuzzer-14-dev
  libibverbs-dev
  libcpp-httplib-dev prometheus wrk
  chromium chromium-driver python3-selenium
  pybind11-dev python3-numpy python3-pytest python3-dev
  iproute2 nftables
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
