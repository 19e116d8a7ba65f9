#!/bin/bash
# make bench: the seeds' measurements, plain v7.3 (the pinned base) vs the
# series, same config, same NVDIMMs. Each filesystem is measured
# BENCH_REPS times (default 5) per kernel, the kernels alternating boot by
# boot (v7.3, series, v7.3, series, ...), so that a drift of the machine
# shows in both. Writes build/bench/{base,series}.txt (one BENCH line per
# case and boot) and, through bench-report.sh, Documentation/results.md
# and its plots (medians with min-max). Absolute times are QEMU/TCG
# figures, not hardware numbers. Then bench-icount.sh measures the read
# cases again in instructions (Documentation/results-icount.md).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

reps=${BENCH_REPS:-5}
case $reps in
'' | *[!0-9]* | 0) die "BENCH_REPS=$reps: want a positive number" ;;
esac
src=$("$TOP/scripts/apply-series.sh")
base=$("$TOP/scripts/get-base.sh")
"$TOP/scripts/build-kernel.sh" "$base" "$BUILD/obj-default-base" default
"$TOP/scripts/build-kernel.sh" "$src" "$BUILD/obj-default" default

out=$BUILD/bench
rm -rf "$out"
mkdir -p "$out"
start=$SECONDS
for r in $(seq "$reps"); do
	for fs in ext4 xfs; do
		for k in base series; do
			obj=$BUILD/obj-default
			[ "$k" = base ] && obj=$BUILD/obj-default-base
			log "bench: run $r of $reps, $k on $fs ($((SECONDS - start))s)"
			rc=0
			"$TOP/qemu-run.sh" --kernel "$obj/arch/x86/boot/bzImage" --fs "$fs" \
				--timeout 1800 -- "/harness/bench-guest.sh $fs" \
				>"$out/$k-$fs-$r.log" 2>&1 || rc=$?
			[ "$rc" = 0 ] || die "$k on $fs, run $r: exit $rc, see $out/$k-$fs-$r.log"
			grep '^BENCH ' "$out/$k-$fs-$r.log" | cut -d' ' -f2- >>"$out/$k.txt" ||
				die "$k on $fs, run $r: no BENCH lines in $out/$k-$fs-$r.log"
		done
	done
done
log "guest runs took $((SECONDS - start))s ($reps runs per kernel and filesystem)"
"$TOP/scripts/bench-report.sh" "$out/base.txt" "$out/series.txt" "$TOP/Documentation"
# The same read cases on an instruction clock: Documentation/results-icount.md.
"$TOP/scripts/bench-icount.sh"
