#!/bin/bash
# Usage: bench-report.sh BASE.txt SERIES.txt DOCDIR
# Turn the BENCH lines of one make bench run (plain v7.3 and the series)
# into DOCDIR/results.md (tables: v7.3, series, ratio) and PNG plots next
# to it, drawn with gnuplot. Also prints the tables.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: bench-report.sh BASE.txt SERIES.txt DOCDIR"
basef=$1 seriesf=$2 doc=$3
need_tools gnuplot awk
if [ ! -s "$basef" ] || [ ! -s "$seriesf" ]; then
	die "no bench results in $basef / $seriesf"
fi

# val FILE CASE KEY: the value of KEY on the line of CASE, or "-".
val() {
	awk -v c="$2" -v k="$3" '$1 == c { for (i = 2; i <= NF; i++) {
		split($i, kv, "="); if (kv[1] == k) { print kv[2]; exit } } }
		END { }' "$1" | grep . || echo -
}
# ratio A B: A/B with two decimals, or "-".
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-";
		else printf "%.2f\n", a / b }'
}
ms() { awk -v n="$1" 'BEGIN { if (n == "-") print "-"; else printf "%.1f\n", n / 1e6 }'; }

# read_row LABEL CASE PLOTNAME RATIOS: the table 1 row of BENCH case CASE
# (skipped when v7.3 has no such case), and its first-read faults and time
# for the plots. RATIOS=no prints "-" for the ratios: the page cache rows
# run the same code on both kernels.
read_row() {
	local n=$2 bf1 bf2 sf1 sf2 bt1 bt2 st1 st2 fr=- tr=-
	bf1=$(val "$basef" "$n" faults1) bf2=$(val "$basef" "$n" faults2)
	[ "$bf1" != - ] || return 0
	sf1=$(val "$seriesf" "$n" faults1) sf2=$(val "$seriesf" "$n" faults2)
	bt1=$(val "$basef" "$n" ns1) bt2=$(val "$basef" "$n" ns2)
	st1=$(val "$seriesf" "$n" ns1) st2=$(val "$seriesf" "$n" ns2)
	if [ "$4" = yes ]; then
		fr="$(ratio "$bf1" "$sf1") / $(ratio "$bf2" "$sf2")"
		tr="$(ratio "$bt1" "$st1") / $(ratio "$bt2" "$st2")"
	fi
	echo "| ${n%%-*} | $1 | $bf1 / $bf2 | $sf1 / $sf2 | $fr | $(ms "$bt1") / $(ms "$bt2") | $(ms "$st1") / $(ms "$st2") | $tr |"
	printf '%s\t%s\t%s\t%s\t%s\n' "$3" "$bf1" "$sf1" "$(ms "$bt1")" "$(ms "$st1")" >>"$tmp/faults.dat"
}

md=$doc/results.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One row per bucket either kernel hit: "lo-hi<TAB>v7.3<TAB>series".
awk -v c=ext4-syncfault-empty-sync-idle '$1 == c {
	for (i = 2; i <= NF; i++) if ($i ~ /^us/) {
		split(substr($i, 3), kv, "="); split(kv[1], r, "-");
		lo[kv[1]] = r[1]; n[kv[1], FILENAME == ARGV[1]] = kv[2] } }
	END { for (k in lo) printf "%s\t%s\t%d\t%d\n", lo[k], k, n[k, 1], n[k, 0] }' \
	"$basef" "$seriesf" | sort -n | cut -f2- >"$tmp/hist.dat"

{
cat <<HEAD
# Benchmarks: v7.3 vs the series

One \`make bench\` run on $(date -u +%Y-%m-%d): plain v7.3 (Debian
linux-source-7.3 $BASE_VERSION) and v7.3 + the series, same \`default\`
config (lockdep on), same QEMU guest (TCG, 2 vCPUs, 2 GiB, two 1 GiB
fsdax NVDIMMs). **Times and throughputs are QEMU/TCG figures, not
hardware numbers**; fault counts are exact. Ratios are v7.3 / series
for faults and times (higher is better for the series) and series / v7.3
for throughputs. Produced by \`scripts/bench.sh\` and
\`scripts/bench-report.sh\` from \`build/bench/{base,series}.txt\`.

## 1. Fault-around (seed 000: mmap read / re-read, 64 KiB and 128 MB)

PTE-only shared mappings (placed so no PMD can be used); "first" is the
first read of a freshly written file, "re-read" a second mapping of it.
The page cache rows are the same filesystem mounted \`dax=never\`; the
PMD and MAP_POPULATE rows are the limits.

| fs | case | v7.3 faults first / re-read | series faults first / re-read | faults ratio | v7.3 ms first / re-read | series ms first / re-read | speed-up first / re-read |
|---|---|---|---|---|---|---|---|
HEAD
for fs in ext4 xfs erofs; do
	for c in pte-seq-128m pte-rand-128m pte-seq-64k pmd-seq-128m populate-seq-128m; do
		read_row "dax $c" "$fs-dax-$c" "$fs-$c" yes
	done
	for c in pte-seq-128m pte-rand-128m pte-seq-64k; do
		read_row "page cache $c" "$fs-pagecache-$c" "$fs-pagecache-$c" no
	done
done

cat <<HEAD

### Per-VMA lock: vma_lock_success / vma_lock_retry during the reads

| fs | case | v7.3 success / retry (first) | series success / retry (first) |
|---|---|---|---|
HEAD
for fs in ext4 xfs erofs; do
	for c in pte-seq-128m pte-rand-128m; do
		n=$fs-dax-$c
		[ "$(val "$basef" "$n" faults1)" != - ] || continue
		echo "| $fs | $c | $(val "$basef" "$n" vma_success1) / $(val "$basef" "$n" vma_retry1) | $(val "$seriesf" "$n" vma_success1) / $(val "$seriesf" "$n" vma_retry1) |"
	done
done

cat <<HEAD

## 2. PMD vs PTE (seed 001)

fio \`ioengine=mmap rw=randrw bs=4k size=256M\` for 20 s on the DAX
filesystem (the mapping can use PMDs), and the sequential 128 MB read of
table 1 with a PMD-aligned and a PTE-only mapping.

| fs | case | v7.3 | series | series / v7.3 |
|---|---|---|---|---|
HEAD
for fs in ext4 xfs; do
	n=$fs-fio-mmap-randrw
	for k in read_kibs write_kibs; do
		b=$(val "$basef" "$n" "$k") s=$(val "$seriesf" "$n" "$k")
		echo "| $fs | fio mmap randrw $k (KiB/s) | $b | $s | $(ratio "$s" "$b") |"
	done
	for c in pmd-seq-128m pte-seq-128m; do
		b=$(val "$basef" "$fs-dax-$c" ns1) s=$(val "$seriesf" "$fs-dax-$c" ns1)
		echo "| $fs | $c first read (ms) | $(ms "$b") | $(ms "$s") | $(ratio "$b" "$s") (speed-up) |"
	done
done

cat <<HEAD

## 3. MAP_SYNC write fault latency (seed 002)

512 write faults on a fresh file, in microseconds: min / avg / max.
"prealloc" = written blocks, "empty" = holes; "load" = a background
thread rewriting and fsyncing another file.

| fs | file | mapping | load | v7.3 min / avg / max | series min / avg / max |
|---|---|---|---|---|---|
HEAD
for fs in ext4 xfs; do
	for a in prealloc empty; do
		for s in nosync sync; do
			for l in idle load; do
				n=$fs-syncfault-$a-$s-$l
				echo "| $fs | $a | $s | $l | $(val "$basef" "$n" min) / $(val "$basef" "$n" avg) / $(val "$basef" "$n" max) | $(val "$seriesf" "$n" min) / $(val "$seriesf" "$n" avg) / $(val "$seriesf" "$n" max) |"
			done
		done
	done
done
echo
echo "Histogram (ext4, MAP_SYNC, empty file, idle), bucket: v7.3 / series faults:"
echo
awk -F'\t' '{ printf "- %s us: %s / %s\n", $1, $2, $3 }' "$tmp/hist.dat"
cat <<HEAD

## 4. Direct I/O (seed 003)

fio \`direct=1 ioengine=libaio bs=4k iodepth=64 rw=read size=256M\`.

| fs | v7.3 KiB/s | series KiB/s | series / v7.3 |
|---|---|---|---|
HEAD
for fs in ext4 xfs; do
	b=$(val "$basef" "$fs-fio-dio-read" read_kibs) s=$(val "$seriesf" "$fs-fio-dio-read" read_kibs)
	echo "| $fs | $b | $s | $(ratio "$s" "$b") |"
done

cat <<HEAD

## 5. Scalability: read faults against an mmap/munmap loop

Threads read-fault (and MADV_DONTNEED) a 32 MiB PTE-only shared mapping
for 5 s while another thread mmaps and munmaps in a loop (an mmap_lock
writer). Pages per second and the per-VMA lock counters.

| fs | threads | v7.3 pages/s | series pages/s | series / v7.3 | v7.3 vma_lock success / retry | series vma_lock success / retry |
|---|---|---|---|---|---|---|
HEAD
for fs in ext4 xfs; do
	for t in 1 2; do
		n=$fs-scale-$t
		b=$(val "$basef" "$n" pages_per_s) s=$(val "$seriesf" "$n" pages_per_s)
		echo "| $fs | $t | $b | $s | $(ratio "$s" "$b") | $(val "$basef" "$n" vma_lock_success) / $(val "$basef" "$n" vma_lock_retry) | $(val "$seriesf" "$n" vma_lock_success) / $(val "$seriesf" "$n" vma_lock_retry) |"
	done
done

cat <<HEAD

## 6. write(2) to a file nobody maps

64 MiB in 4 KiB writes: into holes (allocating, IOMAP_F_NEW, which is
where the entry-race fix sits) and over written data.

| fs | case | v7.3 MiB/s | series MiB/s | series / v7.3 |
|---|---|---|---|---|
HEAD
for fs in ext4 xfs; do
	for k in allocate_mibs overwrite_mibs; do
		b=$(val "$basef" "$fs-write-unmapped" "$k") s=$(val "$seriesf" "$fs-write-unmapped" "$k")
		echo "| $fs | ${k%_mibs} | $b | $s | $(ratio "$s" "$b") |"
	done
done

cat <<HEAD

## Plots

MAP_POPULATE rows count the faults of the reads only (none: mmap() faulted
the pages in, and its time is in the read time), so they have no bar on
the log scale.

![faults per MiB read](results-faults.png)
![first read time](results-time.png)
![MAP_SYNC latency histogram](results-mapsync.png)
HEAD
} >"$md"

# Faults per MiB read (log scale) and read time, v7.3 vs series.
awk -F'\t' '{ mib = ($1 ~ /64k/) ? 0.0625 : 128;
	printf "%s\t%s\t%s\t%s\t%s\n", $1, ($2 == "-" ? 0 : $2 / mib), ($3 == "-" ? 0 : $3 / mib), $4, $5 }' \
	"$tmp/faults.dat" >"$tmp/perm.dat"
gnuplot <<PLOT
set terminal pngcairo size 1100,500 noenhanced
set style data histograms
set style histogram clustered gap 1
set style fill solid border -1
set xtics rotate by -35
set key outside top center horizontal
set rmargin 10
set datafile separator "\t"
set output "$doc/results-faults.png"
set title "Faults per MiB read, first read (log scale; QEMU/TCG guest)"
set logscale y
set ylabel "faults / MiB"
plot "$tmp/perm.dat" using 2:xtic(1) title "v7.3", "" using 3 title "series"
unset logscale y
set output "$doc/results-time.png"
set title "First read time in ms (QEMU/TCG figures, not hardware)"
set ylabel "ms"
plot "$tmp/perm.dat" using 4:xtic(1) title "v7.3", "" using 5 title "series"
set output "$doc/results-mapsync.png"
set title "ext4 MAP_SYNC write fault latency, empty file, idle (QEMU/TCG)"
set ylabel "faults"
set xlabel "microseconds"
plot "$tmp/hist.dat" using 2:xtic(1) title "v7.3", "" using 3 title "series"
PLOT
cat "$md"
