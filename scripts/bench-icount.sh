#!/bin/bash
# Usage: bench-icount.sh
# The instruction measure of make bench: the read cases of
# guest/bench-guest.sh (its "reads" mode: DAX and page cache) on plain
# v7.3 and on the series, with ICOUNT=1 (QEMU -icount shift=0,sleep=off:
# the guest's clock counts executed instructions, one per nanosecond), so
# that each time the guest measures is an instruction count, the same on
# any host. BENCH_ICOUNT_REPS (default 2) boots per kernel and
# filesystem, alternating kernels. Writes build/bench-icount/{base,series}.txt
# and Documentation/results-icount.md: instructions per page, median
# (min-max) over the boots. It cannot see cache misses, memory bandwidth
# or real parallelism (the two vCPUs run one at a time).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

reps=${BENCH_ICOUNT_REPS:-2}
case $reps in
'' | *[!0-9]* | 0) die "BENCH_ICOUNT_REPS=$reps: want a positive number" ;;
esac
src=$("$TOP/scripts/apply-series.sh")
base=$("$TOP/scripts/get-base.sh")
"$TOP/scripts/build-kernel.sh" "$base" "$BUILD/obj-default-base" default
"$TOP/scripts/build-kernel.sh" "$src" "$BUILD/obj-default" default

out=$BUILD/bench-icount
rm -rf "$out"
mkdir -p "$out"
start=$SECONDS
for r in $(seq "$reps"); do
	for fs in ext4 xfs; do
		for k in base series; do
			obj=$BUILD/obj-default
			[ "$k" = base ] && obj=$BUILD/obj-default-base
			log "bench-icount: run $r of $reps, $k on $fs ($((SECONDS - start))s)"
			rc=0
			ICOUNT=1 ACCEL=tcg "$TOP/qemu-run.sh" --kernel "$obj/arch/x86/boot/bzImage" \
				--fs "$fs" --timeout 1800 -- "/harness/bench-guest.sh $fs reads" \
				>"$out/$k-$fs-$r.log" 2>&1 || rc=$?
			[ "$rc" = 0 ] || die "$k on $fs, run $r: exit $rc, see $out/$k-$fs-$r.log"
			grep '^BENCH ' "$out/$k-$fs-$r.log" | cut -d' ' -f2- >>"$out/$k.txt" ||
				die "$k on $fs, run $r: no BENCH lines in $out/$k-$fs-$r.log"
		done
	done
done
log "icount runs took $((SECONDS - start))s ($reps per kernel and filesystem)"

# per_page FILE CASE KEY: "median (min–max)" of KEY / pages over the
# boots, in instructions per page; "-" without the case.
per_page() {
	awk -v c="$2" -v k="$3" '$1 == c { p = 0; v = ""
		for (i = 2; i <= NF; i++) { split($i, kv, "=")
			if (kv[1] == "pages") p = kv[2]; if (kv[1] == k) v = kv[2] }
		if (p && v != "") print v / p }' "$1" | sort -g |
	awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		if (sprintf("%.0f", v[1]) == sprintf("%.0f", v[NR])) printf "%.0f\n", m
		else printf "%.0f (%.0f–%.0f)\n", m, v[1], v[NR] }'
}

median() { per_page "$@" | cut -d' ' -f1; }

md=$TOP/Documentation/results-icount.md
{
	cat <<HEAD
# Instructions per page: v7.3 vs the series

\`scripts/bench-icount.sh\` (run by \`make bench\`) on $(date -u +%Y-%m-%d): the read
cases of \`guest/bench-guest.sh\` under QEMU \`-icount shift=0,sleep=off\`,
where the guest's clock counts executed instructions, so a time the
guest measures is the instruction count of what ran: mapping the file,
reading one word per page, the faults, and unmapping. Plain v7.3 and the
series, same \`default\` config (lockdep on), $reps boots per kernel and
filesystem, alternating; median (min–max) over the boots, divided by
the pages read (32768 for 128 MiB, 16 for 64 KiB). It cannot see cache
misses, memory bandwidth or real parallelism. "first" is the first read
of a freshly written file, "re-read" a second mapping of it; the page
cache rows are the filesystem mounted \`dax=never\`.

| fs | case | v7.3 first | series first | v7.3 re-read | series re-read |
|---|---|---|---|---|---|
HEAD
	for fs in ext4 xfs; do
		for c in dax-pte-seq-128m dax-pte-rand-128m dax-pte-seq-64k dax-pmd-seq-128m \
			pagecache-pte-seq-128m pagecache-pte-rand-128m pagecache-pte-seq-64k; do
			n=$fs-$c
			grep -q "^$n " "$out/base.txt" "$out/series.txt" || continue
			echo "| $fs | ${c//-/ } | $(per_page "$out/base.txt" "$n" ns1) |" \
				"$(per_page "$out/series.txt" "$n" ns1) |" \
				"$(per_page "$out/base.txt" "$n" ns2) |" \
				"$(per_page "$out/series.txt" "$n" ns2) |"
		done
	done
	cat <<HEAD

The series' targets of issue #23, from the medians above (sequential
128 MiB, PTE-only):

| fs | DAX re-read / page cache re-read | DAX first / DAX re-read |
|---|---|---|
HEAD
	for fs in ext4 xfs; do
		awk -v d1="$(median "$out/series.txt" "$fs-dax-pte-seq-128m" ns1)" \
			-v d2="$(median "$out/series.txt" "$fs-dax-pte-seq-128m" ns2)" \
			-v p2="$(median "$out/series.txt" "$fs-pagecache-pte-seq-128m" ns2)" \
			-v fs="$fs" 'BEGIN { printf "| %s | %.2f | %.2f |\n", fs, d2 / p2, d1 / d2 }'
	done
} >"$md"
cat "$md"
