#!/bin/bash
# Install what the harness needs from Debian (12, bookworm) with apt-get.
# The one list of the harness's packages. Needs root.
set -euo pipefail

pkgs=(
	# kernel build
	build-essential flex bison bc libelf-dev libssl-dev cpio dwarves
	python3 git xz-utils rsync ccache
	# guest: QEMU, the initramfs and its tools
	qemu-system-x86 busybox-static e2fsprogs xfsprogs erofs-utils
	# checks
	sparse shellcheck b4
	# benchmarks: in-guest I/O load and the plots
	fio gnuplot-nox
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: need root to install: ${missing[*]}" >&2
	exit 2
fi
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
