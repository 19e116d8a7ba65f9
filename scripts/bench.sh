#!/bin/bash
# make bench: fault-around reads, mmap I/O, MAP_SYNC fault latency, direct
# I/O, readers of one file and write(2), plain v7.3 (the pinned base) vs
# the series, same config, same NVDIMMs. Each filesystem is measured
# BENCH_REPS times (default 5) per kernel, the kernels alternating boot by
# boot (v7.3, series, v7.3, series, ...), so that a drift of the machine
# shows in both. Writes build/bench/{base,series}.txt (one BENCH line per
# case and boot) and, through bench-report.sh, Documentation/results.md
# and its plots (medians with min-max). Absolute times are QEMU/TCG
# figures, not hardware numbers. Then the read, CoW write and PMD cases again on an
# instruction clock (ICOUNT=1), BENCH_ICOUNT_REPS times (default 2):
# build/bench-icount/ and, through bench-icount-report.sh,
# Documentation/results-icount.md. Then the same instruction count with
# the nodebug config (no lockdep), BENCH_NODEBUG_REPS times (default 2):
# build/bench-nodebug/ and Documentation/results-icount-nodebug.md. Any
# count may be 0 to skip its pass.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

reps=${BENCH_REPS:-5} icount_reps=${BENCH_ICOUNT_REPS:-2}
nodebug_reps=${BENCH_NODEBUG_REPS:-2}
for v in "BENCH_REPS=$reps" "BENCH_ICOUNT_REPS=$icount_reps" \
	"BENCH_NODEBUG_REPS=$nodebug_reps"; do
	case ${v#*=} in
	'' | *[!0-9]*) die "$v: want a number (0 skips the pass)" ;;
	esac
done
# The kernels of each profile, base and series (obj-PROFILE-base and
# obj-PROFILE): the arrays default_images and nodebug_images.
# shellcheck disable=SC2034 # read through boots()'s nameref
declare -A default_images=() nodebug_images=()

# base_warned OUT KERNEL FS RUN: whether the boot failed only because
# v7.3's kernel log reports a problem (base_only_warned); its numbers
# stand, and the warning goes to OUT/base-warnings.txt, which the reports
# quote.
base_warned() {
	local log=$1/$2-$3-$4.log
	base_only_warned "$2" "$log" || return 1
	echo "$3 run $4: $(grep -m1 -E "$(kernel_complaints)" "$log" | sed 's/^\[ *[0-9.]*\] //')" \
		>>"$1/base-warnings.txt"
}

# boots OUT REPS MODE ICOUNT PROFILE: REPS boots per kernel (of PROFILE)
# and filesystem, kernels alternating, each running bench-guest.sh in MODE
# (all or reads) with ICOUNT (0 or 1); BENCH lines to OUT/{base,series}.txt.
boots() {
	local out=$1 reps=$2 mode=$3 icount=$4 profile=$5 r fs k rc start=$SECONDS
	local -n images=${5}_images
	# An instruction clock needs TCG (boot-guest.sh refuses ICOUNT=1 on KVM).
	local accel=${ACCEL:-}
	[ "$icount" = 0 ] || accel=tcg
	rm -rf "$out"
	mkdir -p "$out"
	for r in $(seq "$reps"); do
		for fs in ext4 xfs; do
			for k in base series; do
				log "bench: run $r of $reps ($mode, icount $icount, $profile), $k on $fs ($((SECONDS - start))s)"
				rc=0
				ICOUNT=$icount ACCEL=$accel "$TOP/qemu-run.sh" --kernel "${images[$k]}" \
					--fs "$fs" --timeout 1800 -- "/harness/bench-guest.sh $fs $mode" \
					>"$out/$k-$fs-$r.log" 2>&1 || rc=$?
				[ "$rc" = 0 ] || base_warned "$out" "$k" "$fs" "$r" ||
					die "$k on $fs, run $r: exit $rc, see $out/$k-$fs-$r.log"
				grep '^BENCH ' "$out/$k-$fs-$r.log" | cut -d' ' -f2- >>"$out/$k.txt" ||
					die "$k on $fs, run $r: no BENCH lines in $out/$k-$fs-$r.log"
			done
		done
	done
	log "guest runs took $((SECONDS - start))s ($reps runs per kernel and filesystem)"
}

if [ "$reps" -gt 0 ] || [ "$icount_reps" -gt 0 ]; then
	ab_kernels default_images default base series
fi
[ "$nodebug_reps" -eq 0 ] || ab_kernels nodebug_images nodebug base series
if [ "$reps" -gt 0 ]; then
	boots "$BUILD/bench" "$reps" all 0 default
	"$TOP/scripts/bench-report.sh" "$BUILD/bench/base.txt" "$BUILD/bench/series.txt" \
		"$TOP/Documentation"
fi
if [ "$icount_reps" -gt 0 ]; then
	boots "$BUILD/bench-icount" "$icount_reps" reads 1 default
	"$TOP/scripts/bench-icount-report.sh" "$BUILD/bench-icount" "$icount_reps" \
		"$TOP/Documentation"
fi
if [ "$nodebug_reps" -gt 0 ]; then
	boots "$BUILD/bench-nodebug" "$nodebug_reps" reads 1 nodebug
	"$TOP/scripts/bench-icount-report.sh" "$BUILD/bench-nodebug" "$nodebug_reps" \
		"$TOP/Documentation" nodebug
fi
