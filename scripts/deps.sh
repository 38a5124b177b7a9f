#!/usr/bin/env bash
# Install what the build (deps.sh build) or the whole test suite (deps.sh, deps.sh test)
# needs, on Debian 12, as root. Installs only what is missing, so it is quick on a
# machine that has it all.
set -euo pipefail
pkgs=(build-essential cmake pkg-config)
if [ "${1:-test}" != build ]; then
  pkgs+=(libcmocka-dev clang libclang-rt-14-dev llvm
         iproute2 tcpdump tshark gnuplot-nox valgrind gdb
         qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross
         gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
         qemu-system-x86 busybox-static cpio
         abigail-tools python3 babeltrace2
         debhelper lintian mmdebstrap systemd)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
