#!/bin/bash
# Usage: bench-icount-report.sh DIR REPS DOCDIR
# Turn the BENCH lines of make bench's instruction pass (DIR/{base,series}.txt:
# the read cases of guest/bench-guest.sh in its "reads" mode, DAX and page
# cache, with ICOUNT=1: QEMU -icount shift=0,sleep=off, where the guest's
# clock counts executed instructions, one per nanosecond) into
# DOCDIR/results-icount.md: instructions per page, median (min-max) over
# the REPS boots per kernel and filesystem. It cannot see cache misses,
# memory bandwidth or real parallelism (the two vCPUs run one at a time).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: bench-icount-report.sh DIR REPS DOCDIR"
out=$1 reps=$2 doc=$3
if [ ! -s "$out/base.txt" ] || [ ! -s "$out/series.txt" ]; then
	die "no icount results in $out/{base,series}.txt"
fi

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

md=$doc/results-icount.md
{
	cat <<HEAD
# Instructions per page: v7.3 vs the series

\`make bench\` (\`scripts/bench.sh\`, \`bench-icount-report.sh\`) on $(date -u +%Y-%m-%d): the read
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
