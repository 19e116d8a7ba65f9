#!/bin/bash
# Usage: bench-icount-report.sh DIR REPS DOCDIR [PROFILE]
# Turn the BENCH lines of make bench's instruction pass (DIR/{base,series}.txt:
# the read, CoW write, PMD and store+fsync cases of guest/bench-guest.sh in
# its "reads"
# mode, with ICOUNT=1: QEMU -icount shift=0,sleep=off, where the guest's
# clock counts executed instructions, one per nanosecond) into
# DOCDIR/results-icount.md: instructions per page, median (min-max) over
# the REPS boots per kernel and filesystem. It cannot see cache misses,
# memory bandwidth or real parallelism (the two vCPUs run one at a time).
# PROFILE (default: default) names the kernel config of the boots; for
# another, the report is DOCDIR/results-icount-PROFILE.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || [ $# -eq 4 ] || die "usage: bench-icount-report.sh DIR REPS DOCDIR [PROFILE]"
out=$1 reps=$2 doc=$3 profile=${4:-default}
md=$doc/results-icount.md
[ "$profile" = default ] || md=$doc/results-icount-$profile.md
case $profile in
default) config="\`default\` config (lockdep on)" ;;
nodebug) config="\`nodebug\` config (\`default\` without lockdep, the VM, list
and atomic-sleep checks and KFENCE: what users run)" ;;
*) config="\`$profile\` config" ;;
esac
if [ ! -s "$out/base.txt" ] || [ ! -s "$out/series.txt" ]; then
	die "no icount results in $out/{base,series}.txt"
fi

# values FILE CASE KEY [pages]: KEY of each boot of CASE, divided by its
# pages with "pages".
values() {
	awk -v c="$2" -v k="$3" -v per="${4:-}" '$1 == c { p = 1; v = ""
		for (i = 2; i <= NF; i++) { split($i, kv, "=")
			if (per && kv[1] == "pages") p = kv[2]; if (kv[1] == k) v = kv[2] }
		if (p && v != "") print v / p }' "$1"
}

# summary: "median (min–max)" of the numbers on stdin, rounded; just the
# median where min and max round alike; "-" without any.
summary() {
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "-"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		if (sprintf("%.0f", v[1]) == sprintf("%.0f", v[NR])) printf "%.0f\n", m
		else printf "%.0f (%.0f–%.0f)\n", m, v[1], v[NR] }'
}

# per_page FILE CASE KEY: instructions per page over the boots; raw FILE
# CASE KEY: KEY itself (a count).
per_page() { values "$@" pages | summary; }
raw() { values "$@" | summary; }
median() { per_page "$@" | cut -d' ' -f1; }

# cells CELL CASE KEY1 KEY2: "| v7.3 KEY1 | series KEY1 | v7.3 KEY2 |
# series KEY2 |", each by CELL (per_page or raw).
cells() {
	echo "| $($1 "$out/base.txt" "$2" "$3") | $($1 "$out/series.txt" "$2" "$3") |" \
		"$($1 "$out/base.txt" "$2" "$4") | $($1 "$out/series.txt" "$2" "$4") |"
}

# fs_label FS: the filesystem column; xfsdefault is xfs made by mkfs
# without options.
fs_label() {
	case $1 in
	xfsdefault) echo "xfs (mkfs defaults)" ;;
	*) echo "$1" ;;
	esac
}

# share FILE CASE: the percentage of the pages fault-around mapped that
# were of large folios (fa_large / fa_mapped), over the boots; "-" where
# the kernel does not say.
share() {
	awk -v c="$2" '$1 == c { m = ""; l = ""
		for (i = 2; i <= NF; i++) { split($i, kv, "=")
			if (kv[1] == "fa_mapped") m = kv[2]; if (kv[1] == "fa_large") l = kv[2] }
		if (m != "" && l != "" && m > 0) print 100 * l / m }' "$1" | summary
}

# ratio CASE KEY: series / v7.3 of the per-page medians.
ratio() {
	awk -v b="$(median "$out/base.txt" "$1" "$2")" \
		-v s="$(median "$out/series.txt" "$1" "$2")" \
		'BEGIN { if (b == "-" || s == "-" || !b) print "-"; else printf "%.3f\n", s / b }'
}

{
	cat <<HEAD
# Instructions per page: v7.3 vs the series

\`make bench\` (\`scripts/bench.sh\`, \`bench-icount-report.sh\`) on $(date -u +%Y-%m-%d): the read,
write, PMD and store+fsync cases of \`guest/bench-guest.sh\` under QEMU \`-icount shift=0,sleep=off\`,
where the guest's clock counts executed instructions, so a time the
guest measures is the instruction count of what ran: mapping the file,
reading one word per page, the faults, and unmapping. Plain v7.3 and the
series, same $config, $reps boots per kernel and
filesystem, alternating; median (min–max) over the boots, divided by
the pages read (32768 for 128 MiB, 16 for 64 KiB). It cannot see cache
misses, memory bandwidth or real parallelism. "first" is the first read
of a freshly written file, "re-read" a second mapping of it (for "dax
pteonpmd", the first and second PTE-mapped reads after an untimed read
through a PMD-aligned mapping, which leaves PMD entries; "dax ptefalloc"
reads a file allocated in one piece through PTE mappings only); the page
cache rows are the filesystem mounted \`dax=never\`. "xfs (mkfs defaults)"
is xfs made without options, whose extents are not 2 MiB aligned as a
rule (no stripe unit): two DAX cases only.

| fs | case | v7.3 first | series first | v7.3 re-read | series re-read |
|---|---|---|---|---|---|
HEAD
	for fs in ext4 xfs xfsdefault; do
		for c in dax-pte-seq-128m dax-pte-rand-128m dax-pte-seq-64k dax-pmd-seq-128m \
			dax-pteonpmd-seq-128m dax-ptefalloc-seq-128m dax-ptefalloc-rand-128m \
			pagecache-pte-seq-128m pagecache-pte-rand-128m pagecache-pte-seq-64k; do
			n=$fs-$c
			grep -q "^$n " "$out/base.txt" "$out/series.txt" || continue
			echo "| $(fs_label "$fs") | ${c//-/ } $(cells per_page "$n" ns1 ns2)"
		done
	done
	cat <<HEAD

Where a page's instructions go, sequential 128 MiB: "map+read" is what
the table above counts (mmap(), the faults and the reads), "munmap" the
unmap of the 128 MiB afterwards (its own clock reading), both per page;
"third" is a third mapping, read and unmapped like the second.

| fs | case | v7.3 map+read | series map+read | v7.3 munmap | series munmap |
|---|---|---|---|---|---|
HEAD
	for fs in ext4 xfs xfsdefault; do
		for c in dax-pte-seq-128m dax-pteonpmd-seq-128m dax-ptefalloc-seq-128m \
			pagecache-pte-seq-128m; do
			for pass in 1 2 3; do
				n=$fs-$c
				grep -q "^$n .*unmap_ns$pass=" "$out/series.txt" || continue
				label="${c//-/ } $(echo first re-read third | cut -d' ' -f"$pass")"
				echo "| $(fs_label "$fs") | $label $(cells per_page "$n" "ns$pass" "unmap_ns$pass")"
			done
		done
	done
	cat <<HEAD

Of the pages that fault-around mapped in an untimed re-read of a file
made and first read as in the case (\`dax-bench share\`, after every
timed case of the boot), the percentage that were of large folios,
mapped in runs (the \`fs_dax:dax_map_pages\` and
\`fs_dax:dax_fault_around\` events, fields \`large\` and \`mapped\`):
the share of the file that has PMD entries. v7.3 has no fault-around.

| fs | case | series: pages of large folios |
|---|---|---|
HEAD
	for fs in ext4 xfs xfsdefault; do
		for c in dax-pte-seq-128m dax-pte-rand-128m dax-pteonpmd-seq-128m \
			dax-ptefalloc-seq-128m dax-ptefalloc-rand-128m; do
			n=$fs-$c-share
			grep -q "^$n .*fa_large=" "$out/series.txt" || continue
			echo "| $(fs_label "$fs") | ${c//-/ } | $(share "$out/series.txt" "$n")% |"
		done
	done
	cat <<HEAD

## write(2) over a file's data, per 4 KiB write

\`dax-bench cowwrite\`: 4 MiB written in 4 KiB pwrite() calls over a
new file's data. xfs (reflink) after FICLONE of the file, so that every
write copies on write: the file not mapped ("unmapped"), mapped and read
by the writer ("mapped"), or by another process that keeps the mapping
while the writes run ("other"). "write mapped": no clone, the file
mapped and read by the writer. Instructions per write, of all tasks
while the writes ran ("all") and of the writer alone ("writer": its CPU
time, without kernel workers such as XFS's log and inode GC or the
random pool's, which other cases queued and which run when they run);
the ratios are series / v7.3 (above 1: the series is slower).

| fs | case | v7.3 all | series all | ratio | v7.3 writer | series writer | ratio |
|---|---|---|---|---|---|---|---|
HEAD
	for fs in ext4 xfs; do
		for c in cowwrite-unmapped cowwrite-mapped cowwrite-other write-mapped; do
			n=$fs-$c
			grep -q "^$n " "$out/base.txt" "$out/series.txt" || continue
			echo "| $fs | ${c//-/ } | $(per_page "$out/base.txt" "$n" ns1) |" \
				"$(per_page "$out/series.txt" "$n" ns1) | $(ratio "$n" ns1) |" \
				"$(per_page "$out/base.txt" "$n" cpu1) |" \
				"$(per_page "$out/series.txt" "$n" cpu1) | $(ratio "$n" cpu1) |"
		done
	done
	cat <<HEAD

## PMD mappings left possible

\`dax-bench pmdmix\`: a 32 MiB file (16 PMD ranges, allocated in one
piece) read first through a mapping that no PMD can map (none of it, its
first 64 KiB, or its first 16 MiB), then all of it through a PMD-aligned
mapping: the PMD faults of that second read that mapped a PMD and that
fell back to PTEs (\`fs_dax:dax_pmd_fault_done\`). Counts, not
instructions.

| fs | first read (KiB) | v7.3 PMDs | series PMDs | v7.3 fallbacks | series fallbacks |
|---|---|---|---|---|---|
HEAD
	for fs in ext4 xfs; do
		for first in 0 64 16384; do
			n=$fs-pmdmix-first$first
			grep -q "^$n " "$out/base.txt" "$out/series.txt" || continue
			echo "| $fs | $first $(cells raw "$n" pmd_nopage pmd_fallback)"
		done
	done
	cat <<HEAD

## Pages written back after a 4 KiB store

\`dax-bench storefsync\`: an 8 MiB file read through a shared, writable
mapping that no PMD can map, fsync(), then one byte stored into one page
and fsync() again: the pages that fsync() wrote back
(\`fs_dax:dax_writeback_one\`). "pte": a file of order-0 entries; "pte on
pmd": a file that a PMD-aligned mapping read first, so that the store goes
into a PMD entry, whose dirty mark covers 2 MiB; "ptefalloc": a file
allocated in one piece and read through PTE mappings only. Counts, not
instructions.

| fs | file | v7.3 | series |
|---|---|---|---|
HEAD
	for fs in ext4 xfs; do
		for how in pte pteonpmd ptefalloc; do
			n=$fs-storefsync-$how
			grep -q "^$n " "$out/base.txt" "$out/series.txt" || continue
			echo "| $fs | ${how/on/ on } | $(raw "$out/base.txt" "$n" flushed_pages) |" \
				"$(raw "$out/series.txt" "$n" flushed_pages) |"
		done
	done
	quote_base_warnings "$out/base-warnings.txt"
	cat <<HEAD

How close a DAX read comes to the page cache's, and a first read to a
re-read, from the medians above (sequential 128 MiB, PTE-only; "pte":
the file written in 1 MiB pieces, "ptefalloc": allocated in one piece):

| fs | file | DAX re-read / page cache re-read | DAX first / page cache first | DAX first / DAX re-read |
|---|---|---|---|---|
HEAD
	for fs in ext4 xfs xfsdefault; do
		# xfs without options has no page cache rows: xfs's are those.
		pc=${fs%default}
		for how in pte ptefalloc; do
			grep -q "^$fs-dax-$how-seq-128m " "$out/series.txt" || continue
			awk -v d1="$(median "$out/series.txt" "$fs-dax-$how-seq-128m" ns1)" \
				-v d2="$(median "$out/series.txt" "$fs-dax-$how-seq-128m" ns2)" \
				-v p1="$(median "$out/series.txt" "$pc-pagecache-pte-seq-128m" ns1)" \
				-v p2="$(median "$out/series.txt" "$pc-pagecache-pte-seq-128m" ns2)" \
				-v fs="$(fs_label "$fs")" -v how="$how" 'BEGIN { printf "| %s | %s | %.2f | %.2f | %.2f |\n",
					fs, how, d2 / p2, d1 / p1, d1 / d2 }'
		done
	done
} >"$md"
cat "$md"
