#!/bin/bash
# Usage: boot-guest.sh KERNEL INITRAMFS|ROOT.img LOGDIR MODE
# Boot one guest in QEMU with two NVDIMMs (TEST and SCRATCH) backed by
# files in $NVDIMM_DIR (created empty unless KEEP_NVDIMM=1, which the crash
# tests use to boot again on what the last guest left); by default in
# LOGDIR/nvdimm, removed when the guest ends, so that guests running at
# once never share an NVDIMM.
# MODE and the HARNESS_* variables go to the guest's init (guest/init).
# The kernel log goes to LOGDIR/console.log, the guest's results to
# LOGDIR/results.log (also streamed to stdout unless MODE is shell), the
# guest's instructions to LOGDIR/harness.env (verdict.sh reads them).
# With ROOT.img (an ext4 image from mkrootfs.sh) instead of an initramfs,
# the guest boots a copy of it as its virtio root disk, with
# /sbin/harness-init as init and FSTESTS_ENV (a file) as its
# /harness/fstests.env; the copy is left as LOGDIR/root.img. A second,
# empty virtio disk (/dev/vdb) is there for dm-log-writes' log.
# Environment: ACCEL (kvm|tcg, default: detect), QEMU_TIMEOUT (s),
# APPEND (extra kernel arguments), GUEST_MEM and GUEST_MAXMEM (QEMU -m
# size and maxmem, default 2G and 4G: RAM plus both NVDIMMs must fit in
# maxmem), NVDIMM_LABEL_SIZE (a label area per NVDIMM, default none),
# ICOUNT=1 (TCG only: the guest's clock counts executed instructions,
# one per nanosecond, so that a time measured in the guest is the
# instruction count of what ran, the same on every run and host),
# QEMU_PLUGIN (a TCG plugin and its arguments, QEMU's -plugin syntax).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 4 ] || die "usage: boot-guest.sh KERNEL INITRAMFS LOGDIR MODE"
kernel=$1 initramfs=$2 logdir=$3 mode=$4
need_tools qemu-system-x86_64 cpio timeout
nvsize=${NVDIMM_SIZE:-1G}
mkdir -p "$logdir"
logdir=$(cd "$logdir" && pwd)
# Backing files of the guest's own unless the caller names a directory:
# guests that run at once must not share NVDIMMs.
nvdir=${NVDIMM_DIR:-$logdir/nvdimm}
mkdir -p "$nvdir"
owned=
[ -n "${NVDIMM_DIR:-}" ] || owned=$nvdir

for nv in test scratch; do
	if [ "${KEEP_NVDIMM:-0}" != 1 ] || [ ! -f "$nvdir/$nv.img" ]; then
		rm -f "$nvdir/$nv.img"
		truncate -s "$nvsize" "$nvdir/$nv.img"
	fi
done

# The guest's instructions: a second cpio appended to the initramfs.
envdir=$(mktemp -d)
trap 'rm -rf "$envdir" ${owned:+"$owned"}' EXIT
{
	printf 'HARNESS_MODE=%q\n' "$mode"
	printf 'HARNESS_FS=%q\n' "${HARNESS_FS:-ext4}"
	printf 'HARNESS_TESTS=%q\n' "${HARNESS_TESTS:-}"
	printf 'HARNESS_CMD=%q\n' "${HARNESS_CMD:-}"
	printf 'HARNESS_ENV=%q\n' "${HARNESS_ENV:-}"
} >"$envdir/harness.env"
cp "$envdir/harness.env" "$logdir/harness.env"
case $initramfs in
*.img)
	need_tools debugfs
	[ -f "${FSTESTS_ENV:-}" ] || die "booting $initramfs needs FSTESTS_ENV"
	cp --sparse=always "$initramfs" "$logdir/root.img"
	debugfs -w -R "write $FSTESTS_ENV /harness/fstests.env" "$logdir/root.img" \
		>/dev/null 2>&1 || die "cannot write fstests.env into $logdir/root.img"
	# A second disk, empty, for dm-log-writes' log (fstests'
	# LOGWRITES_DEV: generic/470), removed with the NVDIMMs' files.
	rm -f "$nvdir/logwrites.img"
	truncate -s 2G "$nvdir/logwrites.img"
	bootopt=(-drive "file=$logdir/root.img,if=virtio,format=raw"
		-drive "file=$nvdir/logwrites.img,if=virtio,format=raw")
	rootargs="root=/dev/vda rw rootfstype=ext4 init=/sbin/harness-init"
	;;
*)
	# The copy is as large as the initramfs, and every boot makes one:
	# it goes with envdir, not into LOGDIR, which make check keeps.
	(cd "$envdir" && echo harness.env | cpio -o -H newc --quiet) >"$envdir/env.cpio"
	cat "$initramfs" "$envdir/env.cpio" >"$envdir/initramfs.cpio"
	bootopt=(-initrd "$envdir/initramfs.cpio")
	rootargs=
	;;
esac

accel=${ACCEL:-$("$TOP/scripts/detect-accel.sh" "$kernel" "$initramfs")}
case $accel in
kvm) accelopt=kvm; cpu=(-cpu "host,-arch-capabilities") ;;
# One TCG thread: multi-threaded TCG occasionally mishandles the int3
# of x86 live code patching at boot (Documentation/results-harness.md).
tcg) accelopt=tcg,thread=single; cpu=() ;;
*) die "ACCEL must be kvm or tcg, not '$accel'" ;;
esac
icount=()
case ${ICOUNT:-0} in
0) ;;
1) [ "$accel" = tcg ] || die "ICOUNT=1 needs TCG (ACCEL=tcg), not $accel"
	icount=(-icount "shift=0,sleep=off") ;;
*) die "ICOUNT must be 0 or 1, not '$ICOUNT'" ;;
esac
plugin=()
if [ -n "${QEMU_PLUGIN:-}" ]; then
	[ "$accel" = tcg ] || die "QEMU_PLUGIN needs TCG (ACCEL=tcg), not $accel"
	plugin=(-plugin "$QEMU_PLUGIN")
fi

cmd=(qemu-system-x86_64 -accel "$accelopt" "${cpu[@]}" "${icount[@]}" "${plugin[@]}" -smp 2
	-machine "pc,nvdimm=on" -m "${GUEST_MEM:-2G},slots=2,maxmem=${GUEST_MAXMEM:-4G}"
	-object "memory-backend-file,id=mem0,share=on,mem-path=$nvdir/test.img,size=$nvsize,align=2M"
	-device "nvdimm,id=nv0,memdev=mem0${NVDIMM_LABEL_SIZE:+,label-size=$NVDIMM_LABEL_SIZE}"
	-object "memory-backend-file,id=mem1,share=on,mem-path=$nvdir/scratch.img,size=$nvsize,align=2M"
	-device "nvdimm,id=nv1,memdev=mem1${NVDIMM_LABEL_SIZE:+,label-size=$NVDIMM_LABEL_SIZE}"
	-kernel "$kernel" "${bootopt[@]}"
	-append "console=ttyS0 panic=-1 oops=panic softlockup_panic=1 $rootargs ${APPEND:-}"
	-display none -no-reboot -monitor none)
if [ "$mode" = shell ]; then
	cmd+=(-serial stdio -serial "file:$logdir/results.log")
else
	cmd+=(-serial "file:$logdir/console.log" -serial "file:$logdir/results.log")
fi
: >"$logdir/console.log"
: >"$logdir/results.log"
printf '%q ' "${cmd[@]}" >"$logdir/qemu-cmdline"
echo >>"$logdir/qemu-cmdline"
log "qemu: $(cat "$logdir/qemu-cmdline")"

if [ "$mode" = shell ]; then
	"${cmd[@]}"
	exit 0
fi
rc=0
timeout "${QEMU_TIMEOUT:-1800}" "${cmd[@]}" </dev/null &
qpid=$!
tail -n +1 -F --pid="$qpid" "$logdir/results.log" 2>/dev/null | grep -v '^HARNESS: DONE' || true &
tpid=$!
wait "$qpid" || rc=$?
wait "$tpid" 2>/dev/null || true
[ "$rc" -ne 124 ] || echo "HARNESS: TIMEOUT after ${QEMU_TIMEOUT:-1800}s" >>"$logdir/results.log"
exit 0
