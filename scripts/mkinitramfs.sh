#!/bin/bash
# Usage: mkinitramfs.sh OUT.cpio KSELFTEST_INSTALL_DIR
# The guest's root: static busybox, the mkfs tools with their libraries,
# coreutils timeout (the kselftest runner needs --foreground), bash for
# the shell tests, the harness's guest scripts and the installed kselftests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: mkinitramfs.sh OUT.cpio KSELFTEST_INSTALL_DIR"
out=$1 kst=$2
[ -x "$kst/run_kselftest.sh" ] || die "$kst has no installed kselftests"
need_tools cpio gcc ldd busybox mkfs.ext4 mkfs.xfs mkfs.erofs xfs_io xfs_db timeout bash fio

# Rebuilt only when the guest side or the installed kselftests change.
stamp=$(cat "$TOP/guest/init" "$TOP/guest"/*.sh "$TOP/guest"/*.c "$TOP/guest"/fuzz/* \
	"$kst.stamp" "$0" 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
rm -f "$out.stamp"
root=$(mktemp -d "$BUILD/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,harness,selftests,etc}

install -m 755 "$(command -v busybox)" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
case $(ldd "$root/bin/busybox" 2>&1) in
*"not a dynamic"*) ;;
*) die "busybox is not static (install busybox-static)" ;;
esac

# Dynamically linked tools, with their libraries at the same paths.
copy_with_libs() {
	local bin lib
	for bin in "$@"; do
		bin=$(readlink -f "$(command -v "$bin")")
		install -D -m 755 "$bin" "$root/usr/bin/${bin##*/}"
		for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
			[ -e "$root$lib" ] || install -D -m 755 "$(readlink -f "$lib")" "$root$lib"
		done
	done
}
# coreutils timeout: the kselftest runner needs --foreground, which the
# busybox one lacks (busybox --install does not replace existing files).
copy_with_libs mke2fs mkfs.xfs mkfs.erofs xfs_io xfs_db timeout bash fio
ln -s mke2fs "$root/usr/bin/mkfs.ext4"
ln -s /usr/bin/bash "$root/bin/bash"
printf 'root:x:0:0:root:/:/bin/sh\n' >"$root/etc/passwd"

install -m 755 "$TOP/guest/init" "$root/init"
install -m 755 "$TOP/guest/fsdax-setup.sh" "$root/harness/fsdax-setup.sh"
install -m 755 "$TOP/guest/bench-guest.sh" "$root/harness/bench-guest.sh"
gcc -static -O2 -Wall -o "$root/harness/dax-check" "$TOP/guest/dax-check.c"
gcc -static -O2 -Wall -pthread -o "$root/harness/dax-bench" "$TOP/guest/dax-bench.c"
gcc -static -O2 -Wall -pthread -o "$root/harness/dax-fuzz" "$TOP"/guest/fuzz/*.c
install -m 755 "$TOP/guest/fuzz-guest.sh" "$root/harness/fuzz-guest.sh"
cp -a "$kst"/. "$root/selftests/"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
