#!/bin/bash
# Usage: mkrootfs.sh OUT.img FSTESTS_BUILD_DIR|- [NDCTL_BUILD_DIR]
# The root filesystem of the fstests guests: Debian 12 (bookworm, the
# host's mirror) made by debootstrap with what fstests runs, the built
# fstests tree in /opt/xfstests, the harness's fsdax setup and the guest
# script (guest/fstests-guest.sh) as /sbin/harness-init. With
# NDCTL_BUILD_DIR (from get-ndctl.sh), also the built ndctl tree in
# /opt/ndctl and its guest runner (guest/ndctl-guest.sh, which
# fstests-guest.sh runs when HARNESS_SUITE=ndctl); "-" instead of the
# fstests tree leaves fstests out. An ext4 image
# made with mkfs.ext4 -d (no loop device, no mount); the debootstrap tree
# is cached in $BUILD/rootfs-debian and the image rebuilt only when its
# parts change. Needs root (debootstrap).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || [ $# -eq 3 ] ||
	die "usage: mkrootfs.sh OUT.img FSTESTS_BUILD_DIR|- [NDCTL_BUILD_DIR]"
out=$1 fst=$2 ndctl=${3:-}
if [ "$fst" != - ] && { [ ! -x "$fst/check" ] || [ ! -x "$fst/ltp/fsx" ]; }; then
	die "$fst is not a built fstests tree"
fi
if [ -n "$ndctl" ] && [ ! -x "$ndctl/build/ndctl/ndctl" ]; then
	die "$ndctl is not a built ndctl tree"
fi
need_tools debootstrap mkfs.ext4
[ "$(id -u)" = 0 ] || die "debootstrap needs root"

# What fstests calls (its README's Debian list, less the build tools):
# the filesystem tools, xfs_io, fio, dmsetup, quota, acl/attr, and the
# shared libraries its binaries link.
pkgs=(bash coreutils util-linux procps psmisc kmod file bc gawk sed grep
	findutils diffutils e2fsprogs xfsprogs xfsdump attr acl quota
	dmsetup fio libcap2-bin keyutils perl-base
	libaio1 liburing2 libgdbm6 libgdbm-compat4 libinih1 libicu72 libssl3
	libuuid1
	# ndctl's tests (make ndctl): what they call, what ndctl links
	jq trace-cmd libkmod2 libudev1 libjson-c5 libkeyutils1 libiniparser1
	libtracefs1 libtraceevent1)
debian=$BUILD/rootfs-debian
want=$(printf '%s\n' "${pkgs[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$debian.stamp" 2>/dev/null)" != "$want" ]; then
	rm -rf "$debian" "$debian.stamp"
	mirror=$(debian_mirror)
	log "debootstrap bookworm from $mirror into $debian (a few minutes)"
	run_logged "$BUILD/logs/debootstrap.log" debootstrap --variant=minbase \
		--include="$(IFS=,; echo "${pkgs[*]}")" bookworm "$debian" "$mirror" ||
		die "debootstrap failed"
	rm -rf "$debian"/var/cache/apt/archives/*.deb
	echo "$want" >"$debian.stamp"
fi

stamp=$({ cat "$debian.stamp" "$0" "$TOP/guest/fstests-guest.sh" "$TOP/guest/fsdax-setup.sh" \
		"$TOP/guest/su-nopam.sh"
	if [ "$fst" != - ]; then cat "$fst/.harness-build-stamp"; fi
	if [ -n "$ndctl" ]; then cat "$ndctl/.harness-build-stamp" "$TOP/guest/ndctl-guest.sh"; fi
	} | sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
rm -f "$out" "$out.stamp"
root=$(mktemp -d "$BUILD/rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
cp -a "$debian/." "$root/"
mkdir -p "$root/opt" "$root/mnt/test" "$root/mnt/scratch" "$root/harness"
[ "$fst" = - ] || cp -a "$fst" "$root/opt/xfstests"
if [ -n "$ndctl" ]; then
	cp -a "$ndctl" "$root/opt/ndctl"
	install -m 755 "$TOP/guest/ndctl-guest.sh" "$root/harness/ndctl-guest.sh"
fi
install -m 755 "$TOP/guest/fsdax-setup.sh" "$root/harness/fsdax-setup.sh"
install -m 755 "$TOP/guest/fstests-guest.sh" "$root/sbin/harness-init"
# Debian's su fails under a kernel without networking (see the script).
install -m 755 "$TOP/guest/su-nopam.sh" "$root/usr/local/sbin/su"
# The users and groups some tests switch to (fstests README).
chroot "$root" /bin/sh -c 'useradd -m fsgqa && groupadd fsgqa2 &&
	useradd -m -g fsgqa2 fsgqa2 && useradd 123456-fsgqa' >/dev/null
echo fstests-guest >"$root/etc/hostname"
printf '127.0.0.1 localhost fstests-guest\n' >"$root/etc/hosts"
# Room for the results and the tests' own files beside the system.
mkfs.ext4 -q -F -L fstests-root -d "$root" "$out.tmp" 3G
mv "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
