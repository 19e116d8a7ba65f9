#!/bin/bash
# Usage: crash-cycles.sh BZIMAGE FS N
# The MAP_SYNC crash test, N times: boot 1 writes through a MAP_SYNC
# mapping into holes of a fresh file and resets the guest without any
# sync (sysrq b); boot 2, on the same NVDIMM backing files, mounts the
# filesystem and checks the data and the file size (dax_crash verify).
# A control file written through a plain MAP_SHARED mapping beside it
# must lose data in at least one cycle: otherwise the resets came too late
# to test anything (the journal had committed), and the run fails as
# inconclusive.
# Exit 0 if every cycle verified, the control lost data at least once and
# both boots' kernel logs are clean.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: crash-cycles.sh BZIMAGE FS N"
kernel=$1 fs=$2 n=$3
case $fs in ext4|xfs) ;; *) die "unsupported filesystem '$fs'" ;; esac
case $n in ''|*[!0-9]*|0*) die "N must be a positive number of cycles, not '$n'" ;; esac
[ -f "$BUILD/initramfs.cpio" ] || die "no initramfs: run ./qemu-run.sh or make check first"

nvdir=$BUILD/nvdimm-crash-$fs
logs=$BUILD/logs/crash-$fs-$(date +%Y%m%d-%H%M%S)
rc=0 lost=0
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
		[ "$phase" = crash-verify ] || continue
		# The control: what plain MAP_SHARED writes left after the reset.
		control=$(grep -h 'crashfile-nosync' "$logs/$i-$phase/results.log" | tr -d '\r')
		echo "cycle $i: ${control:-no control line}"
		if [[ $control =~ ([0-9]+)\ of\ ([0-9]+)\ intact ]]; then
			[ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] && lost=$((lost + 1))
		else
			echo "cycle $i: the verify boot did not report the control file"
			rc=1
			break
		fi
	done
done
rm -rf "$nvdir"
if [ "$rc" = 0 ] && [ "$lost" = 0 ]; then
	echo "inconclusive: the control file kept all its data in all $n cycles, so no reset came before the filesystem made it durable"
	rc=1
fi
[ "$rc" = 0 ] && echo "$n crash cycles on $fs: MAP_SYNC data survived every reset; the control lost data in $lost"
exit "$rc"
