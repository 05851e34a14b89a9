#!/usr/bin/env bash
# Installs tessel's Debian build dependencies when any is missing (needs root or sudo).
set -euo pipefail
pkgs=(cmake ninja-build g++ llvm-19-dev libfmt-dev doctest-dev libcli11-dev nlohmann-json3-dev
      libxxhash-dev libzstd-dev zlib1g-dev libdlpack-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ! -f /usr/local/cuda/include/cuda.h ]; then
  echo "note: the CUDA toolkit (for cuda.h and ptxas) is expected in /usr/local/cuda" >&2
fi
