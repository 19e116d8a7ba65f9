#!/bin/bash
# Usage: install-deps.sh [fstests|ndctl]
# Install what the harness needs from Debian (12, bookworm) with apt-get;
# with "fstests", also what make fstests needs to build fstests and the
# guest's Debian root; with "ndctl", that and what make ndctl needs to
# build ndctl's tests (scripts/get-ndctl.sh). The one list of the harness's packages. Needs root.
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
case ${1:-} in
'') ;;
fstests|ndctl)
	pkgs+=(
		# fstests' build dependencies (its README, Debian names)
		autoconf automake libtool pkg-config make gcc uuid-dev libaio-dev
		libattr1-dev libacl1-dev xfslibs-dev libgdbm-dev
		libgdbm-compat-dev liburing-dev libcap-dev libssl-dev
		libinih-dev libicu-dev
		# the guest's Debian root
		debootstrap
	)
	if [ "$1" = ndctl ]; then
		# ndctl's build dependencies (its meson.build, without
		# systemd and the docs; its cxl code needs libtracefs)
		pkgs+=(meson ninja-build libkmod-dev libudev-dev libjson-c-dev
			libkeyutils-dev libiniparser-dev libtracefs-dev
			libtraceevent-dev)
	fi ;;
*) echo "install-deps.sh: unknown group '$1' (fstests, ndctl)" >&2; exit 2 ;;
esac
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
