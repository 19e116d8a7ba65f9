#!/bin/bash
# Usage: boot-guest.sh KERNEL INITRAMFS LOGDIR MODE
# Boot one guest in QEMU with two NVDIMMs (TEST and SCRATCH) backed by
# files in $NVDIMM_DIR (default LOGDIR/..: created empty unless KEEP_NVDIMM=1,
# which the crash tests use to boot again on what the last guest left).
# MODE and the HARNESS_* variables go to the guest's init (guest/init).
# The kernel log goes to LOGDIR/console.log, the guest's results to
# LOGDIR/results.log (also streamed to stdout unless MODE is shell), the
# guest's instructions to LOGDIR/harness.env (verdict.sh reads them).
# Environment: ACCEL (kvm|tcg, default: detect), QEMU_TIMEOUT (s),
# APPEND (extra kernel arguments).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 4 ] || die "usage: boot-guest.sh KERNEL INITRAMFS LOGDIR MODE"
kernel=$1 initramfs=$2 logdir=$3 mode=$4
need_tools qemu-system-x86_64 cpio timeout
nvdir=${NVDIMM_DIR:-$BUILD/nvdimm}
nvsize=${NVDIMM_SIZE:-1G}
mkdir -p "$logdir" "$nvdir"
logdir=$(cd "$logdir" && pwd)

for nv in test scratch; do
	if [ "${KEEP_NVDIMM:-0}" != 1 ] || [ ! -f "$nvdir/$nv.img" ]; then
		rm -f "$nvdir/$nv.img"
		truncate -s "$nvsize" "$nvdir/$nv.img"
	fi
done

# The guest's instructions: a second cpio appended to the initramfs.
envdir=$(mktemp -d)
trap 'rm -rf "$envdir"' EXIT
{
	printf 'HARNESS_MODE=%q\n' "$mode"
	printf 'HARNESS_FS=%q\n' "${HARNESS_FS:-ext4}"
	printf 'HARNESS_TESTS=%q\n' "${HARNESS_TESTS:-}"
	printf 'HARNESS_CMD=%q\n' "${HARNESS_CMD:-}"
} >"$envdir/harness.env"
cp "$envdir/harness.env" "$logdir/harness.env"
(cd "$envdir" && echo harness.env | cpio -o -H newc --quiet) >"$envdir/env.cpio"
cat "$initramfs" "$envdir/env.cpio" >"$logdir/initramfs.cpio"

accel=${ACCEL:-$("$TOP/scripts/detect-accel.sh" "$kernel" "$initramfs")}
case $accel in
kvm) accelopt=kvm; cpu=(-cpu "host,-arch-capabilities") ;;
# One TCG thread: multi-threaded TCG occasionally mishandles the int3
# of x86 live code patching at boot (README, boot reliability).
tcg) accelopt=tcg,thread=single; cpu=() ;;
*) die "ACCEL must be kvm or tcg, not '$accel'" ;;
esac

cmd=(qemu-system-x86_64 -accel "$accelopt" "${cpu[@]}" -smp 2
	-machine "pc,nvdimm=on" -m "2G,slots=2,maxmem=4G"
	-object "memory-backend-file,id=mem0,share=on,mem-path=$nvdir/test.img,size=$nvsize,align=2M"
	-device "nvdimm,id=nv0,memdev=mem0"
	-object "memory-backend-file,id=mem1,share=on,mem-path=$nvdir/scratch.img,size=$nvsize,align=2M"
	-device "nvdimm,id=nv1,memdev=mem1"
	-kernel "$kernel" -initrd "$logdir/initramfs.cpio"
	-append "console=ttyS0 panic=-1 oops=panic softlockup_panic=1 ${APPEND:-}"
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
