#!/bin/bash
# Usage: crash-cycles.sh BZIMAGE FS N
# The MAP_SYNC crash test, N times: boot 1 writes through a MAP_SYNC
# mapping into holes of a fresh file and resets the guest without any
# sync (sysrq b); boot 2, on the same NVDIMM backing files, mounts the
# filesystem and checks the data and the file size (dax_crash verify).
# Exit 0 if every cycle verified and both boots' kernel logs are clean.
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

[ $# -eq 3 ] || die "usage: crash-cycles.sh BZIMAGE FS N"
kernel=$1 fs=$2 n=$3
case $fs in ext4|xfs) ;; *) die "unsupported filesystem '$fs'" ;; esac
[ -f "$BUILD/initramfs.cpio" ] || die "no initramfs: run ./qemu-run.sh or make check first"

nvdir=$BUILD/nvdimm-crash-$fs
logs=$BUILD/logs/crash-$fs-$(date +%Y%m%d-%H%M%S)
rc=0
for i in $(seq 1 "$n"); do
	for phase in crash-write crash-verify; do
		keep=1
		[ "$phase" = crash-write ] && keep=0
		KEEP_NVDIMM=$keep NVDIMM_DIR=$nvdir HARNESS_FS=$fs QEMU_TIMEOUT=300 \
			"$TOP/scripts/boot-guest.sh" "$kernel" "$BUILD/initramfs.cpio" \
			"$logs/$i-$phase" "$phase" >/dev/null
		if ! "$TOP/scripts/verdict.sh" "$logs/$i-$phase" "$fs cycle $i $phase"; then
			cat "$logs/$i-$phase/results.log"
			rc=1
			break 2
		fi
		# Not asserted: what plain MAP_SHARED writes left after the reset.
		grep -h 'nosync' "$logs/$i-$phase/results.log" || true
	done
done
rm -rf "$nvdir"
[ "$rc" = 0 ] && echo "$n crash cycles on $fs: MAP_SYNC data survived every reset"
exit "$rc"
