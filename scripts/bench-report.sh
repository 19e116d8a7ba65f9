#!/bin/bash
# Usage: bench-report.sh BASE.txt SERIES.txt DOCDIR
# Turn the BENCH lines of a make bench run (plain v7.3 and the series, one
# line per case and boot) into DOCDIR/results.md and PNG plots next to
# it, drawn with gnuplot. Every figure is the median over the boots with
# its min-max range; a ratio is called a gain or a regression only where
# the two ranges do not overlap, "noise" otherwise. Also prints the
# tables.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: bench-report.sh BASE.txt SERIES.txt DOCDIR"
basef=$1 seriesf=$2 doc=$3
need_tools gnuplot awk sort
if [ ! -s "$basef" ] || [ ! -s "$seriesf" ]; then
	die "no bench results in $basef / $seriesf"
fi

# stat FILE CASE KEY: "median min max n" of KEY over the lines of CASE,
# or "- - - 0".
stat() {
	awk -v c="$2" -v k="$3" '$1 == c { for (i = 2; i <= NF; i++) {
		split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$1" |
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "- - - 0"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.10g %.10g %.10g %d\n", m, v[1], v[NR], NR }'
}

# cell FILE CASE KEY [DIV]: "median (min–max)", divided by DIV (1e6: ns
# to ms, one decimal); just the value where all runs agree; "-" if none.
cell() {
	local m lo hi n
	read -r m lo hi n < <(stat "$1" "$2" "$3")
	awk -v m="$m" -v lo="$lo" -v hi="$hi" -v d="${4:-1}" '
		function f(x) { return d == 1 ? sprintf("%.10g", x) : sprintf("%.1f", x / d) }
		BEGIN { if (m == "-") print "-"; else if (f(lo) == f(hi)) print f(m);
			else printf "%s (%s–%s)\n", f(m), f(lo), f(hi) }'
}

# compare CASE KEY lower|higher: the ratio of the medians, oriented so that
# above 1 is better for the series (v7.3 / series where lower is better,
# series / v7.3 where higher is), and "gain" or "regression" where the
# ranges do not overlap, "noise" where they do.
compare() {
	local bm bl bh sm sl sh
	read -r bm bl bh _ < <(stat "$basef" "$1" "$2")
	read -r sm sl sh _ < <(stat "$seriesf" "$1" "$2")
	awk -v bm="$bm" -v bl="$bl" -v bh="$bh" -v sm="$sm" -v sl="$sl" \
		-v sh="$sh" -v dir="$3" 'BEGIN {
		if (bm == "-" || sm == "-" || bm == 0 || sm == 0) { print "- | -"; exit }
		r = dir == "lower" ? bm / sm : sm / bm
		if (sh + 0 < bl + 0) v = dir == "lower" ? "gain" : "regression"
		else if (sl + 0 > bh + 0) v = dir == "lower" ? "regression" : "gain"
		else v = "noise"
		printf "%.2f | %s\n", r, v }'
}

# row FS LABEL CASE KEY lower|higher [DIV]: one table row, v7.3 and series
# as median (min–max), the ratio and the verdict; nothing if neither
# kernel has the case. Rows whose verdict is not noise also go to the
# summary.
row() {
	local fs=$1 label=$2 n=$3 k=$4 dir=$5 div=${6:-1} b s c
	b=$(cell "$basef" "$n" "$k" "$div") s=$(cell "$seriesf" "$n" "$k" "$div")
	[ "$b" != - ] || [ "$s" != - ] || return 0
	c=$(compare "$n" "$k" "$dir")
	echo "| $fs | $label | $b | $s | $c |"
	case $c in
	*gain | *regression) echo "| $fs | $label | $b | $s | $c |" >>"$tmp/summary" ;;
	*noise) echo "$fs $label" >>"$tmp/noise" ;;
	esac
}

header() {
	echo "| fs | case | v7.3 | series | ratio | verdict |"
	echo "|---|---|---|---|---|---|"
}

# plot_row NAME CASE KEY DIV: "NAME b_med b_min b_max s_med s_min s_max",
# tab-separated (DIV divides; a kernel without the case gets 0).
plot_row() {
	local b s
	b=$(stat "$basef" "$2" "$3") s=$(stat "$seriesf" "$2" "$3")
	echo "$1 $b $s" | awk -v d="$4" '{ printf "%s", $1
		for (i = 2; i <= 8; i++) if (i != 5) printf "\t%.6g", ($i == "-" ? 0 : $i / d)
		printf "\n" }'
}

runs() {
	awk '{ n[$1]++ } END { for (c in n) if (n[c] > m) m = n[c]; print m + 0 }' "$1"
}

md=$doc/results.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/summary"
: >"$tmp/noise"
read_cases="pte-seq-128m pte-rand-128m pte-seq-64k pmd-seq-128m populate-seq-128m"
pc_cases="pte-seq-128m pte-rand-128m pte-seq-64k"

{
cat <<HEAD
# Benchmarks: v7.3 vs the series

\`make bench\` on $(date -u +%Y-%m-%d): plain v7.3 (Debian linux-source-7.3
$BASE_VERSION) and v7.3 + the series, same \`default\` config (lockdep
on), same QEMU guest (TCG, 2 vCPUs, 2 GiB, two 1 GiB fsdax NVDIMMs), a
fresh filesystem per boot. $(runs "$basef") boots per kernel and
filesystem, alternating kernels boot by boot (v7.3, series, v7.3, ...).
Every figure is the **median (min–max)** over the boots. The ratio is
oriented so that above 1 is better for the series (v7.3 / series for
faults and times, series / v7.3 for throughputs); the verdict calls it a
gain or a regression only where the two ranges do not overlap, noise
otherwise. **Times and throughputs are QEMU/TCG figures, not hardware
numbers.** Produced by \`scripts/bench.sh\` and
\`scripts/bench-report.sh\` from \`build/bench/{base,series}.txt\`.
The second measure, instructions instead of time: after these boots,
\`make bench\` boots both kernels again under QEMU \`-icount\`
([results-icount.md](results-icount.md), and without lockdep
[results-icount-nodebug.md](results-icount-nodebug.md)); each file gives
the date of its run.

HEAD

echo "## 1. Fault-around: mmap read and re-read, 64 KiB and 128 MiB"
cat <<HEAD

PTE-only shared mappings (placed so no PMD can be used); "first" is the
first read of a freshly written file, "re-read" a second mapping of it.
The page cache rows are the same filesystem mounted \`dax=never\` (the
same code on both kernels); the PMD and MAP_POPULATE rows are the
limits.

### Faults

HEAD
header
for fs in ext4 xfs erofs; do
	for c in $read_cases; do
		row "$fs" "dax $c first" "$fs-dax-$c" faults1 lower
		row "$fs" "dax $c re-read" "$fs-dax-$c" faults2 lower
	done
done
printf '\n### Read time (ms)\n\n'
header
for fs in ext4 xfs erofs; do
	for c in $read_cases; do
		row "$fs" "dax $c first" "$fs-dax-$c" ns1 lower 1e6
		row "$fs" "dax $c re-read" "$fs-dax-$c" ns2 lower 1e6
	done
	for c in $pc_cases; do
		row "$fs" "page cache $c first" "$fs-pagecache-$c" ns1 lower 1e6
		row "$fs" "page cache $c re-read" "$fs-pagecache-$c" ns2 lower 1e6
	done
done
printf '\n### Per-VMA lock retries during the first read\n\n'
header
for fs in ext4 xfs erofs; do
	for c in pte-seq-128m pte-rand-128m; do
		row "$fs" "dax $c vma_lock_retry" "$fs-dax-$c" vma_retry1 lower
	done
done

cat <<HEAD

## 2. Random mmap I/O through a mapping that can use PMDs (fio)

fio \`ioengine=mmap rw=randrw bs=4k size=256M\` for 20 s on the DAX
filesystem (the mapping can use PMDs), in KiB/s.

HEAD
header
for fs in ext4 xfs; do
	for k in read_kibs write_kibs; do
		row "$fs" "fio mmap randrw $k" "$fs-fio-mmap-randrw" "$k" higher
	done
done

cat <<HEAD

## 3. MAP_SYNC write fault latency

512 write faults on a fresh file, in microseconds: the average and the
maximum of each boot. "prealloc" = written blocks, "empty" = holes;
"load" = a background thread rewriting and fsyncing another file.

HEAD
header
for fs in ext4 xfs; do
	for a in prealloc empty; do
		for s in nosync sync; do
			for l in idle load; do
				row "$fs" "$a $s $l avg" "$fs-syncfault-$a-$s-$l" avg lower
				row "$fs" "$a $s $l max" "$fs-syncfault-$a-$s-$l" max lower
			done
		done
	done
done

cat <<HEAD

## 4. Direct I/O reads (fio)

fio \`direct=1 ioengine=libaio bs=4k iodepth=64 rw=read size=256M\`, KiB/s.

HEAD
header
for fs in ext4 xfs; do
	row "$fs" "O_DIRECT read" "$fs-fio-dio-read" read_kibs higher
done

cat <<HEAD

## 5. Scalability: readers of one file

Threads read-fault their own part of one 32 MiB PTE-only shared mapping
of one file (MADV_DONTNEED after each pass) for 5 s, pages per second:
"readers" alone, "scale" while another thread mmaps and munmaps in a
loop (an mmap_lock writer).

HEAD
header
for fs in ext4 xfs; do
	for t in 1 2 4; do
		row "$fs" "readers, $t threads" "$fs-readers-$t" pages_per_s higher
	done
	for t in 1 2; do
		row "$fs" "scale, $t threads" "$fs-scale-$t" pages_per_s higher
	done
done

cat <<HEAD

## 6. write(2) to a file nobody maps

64 MiB in 4 KiB writes: into holes (allocating, IOMAP_F_NEW, which is
where the entry-race fix sits) and over written data, MiB/s.

HEAD
header
for fs in ext4 xfs; do
	for k in allocate_mibs overwrite_mibs; do
		row "$fs" "${k%_mibs}" "$fs-write-unmapped" "$k" higher
	done
done

cat <<HEAD

## 7. write(2) over a file's data: copy on write, mapped files

4 MiB in 4 KiB writes over a new file's data (\`dax-bench cowwrite\`):
on xfs after FICLONE of the file (every write copies on write), the file
not mapped, mapped by the writer, or mapped by another process; "write
mapped" without a clone, mapped by the writer. Milliseconds for the 4 MiB.

HEAD
header
for fs in ext4 xfs; do
	for c in cowwrite-unmapped cowwrite-mapped cowwrite-other write-mapped; do
		row "$fs" "${c//-/ } (ms)" "$fs-$c" ns1 lower 1e6
	done
done

cat <<HEAD

## 8. PMD mappings left possible

A 32 MiB file (16 PMD ranges) read first through a mapping that no PMD
can map (none of it, its first 64 KiB, its first 16 MiB), then all of it
through a PMD-aligned one (\`dax-bench pmdmix\`): PMD faults of the
second read that mapped a PMD, and that fell back to PTEs
(\`fs_dax:dax_pmd_fault_done\`).

HEAD
header
for fs in ext4 xfs; do
	for first in 0 64 16384; do
		row "$fs" "first $first KiB: PMDs" "$fs-pmdmix-first$first" pmd_nopage higher
		row "$fs" "first $first KiB: fallbacks" "$fs-pmdmix-first$first" pmd_fallback lower
	done
done

quote_base_warnings "$(dirname "$basef")/base-warnings.txt"

cat <<HEAD

## Summary: outside the noise

Every row above whose ranges do not overlap:

HEAD
header
cat "$tmp/summary"
echo
echo "Inside the noise (ranges overlap, no direction claimed): $(wc -l <"$tmp/noise") rows:"
echo
paste -sd, "$tmp/noise" | sed 's/,/, /g'
cat <<HEAD

## Plots

Medians, with the min–max range of the boots as error bars. MAP_POPULATE
rows count the faults of the reads only (none: mmap() faulted the pages
in), so they have no bar on the log scale.

![faults per MiB read](results-faults.png)
![first read time](results-time.png)
![throughputs](results-throughput.png)
HEAD
} >"$md"

for fs in ext4 xfs erofs; do
	for c in $read_cases; do
		mib=128
		[ "$c" = pte-seq-64k ] && mib=0.0625
		plot_row "$fs-$c" "$fs-dax-$c" faults1 "$mib" >>"$tmp/faults.dat"
		plot_row "$fs-$c" "$fs-dax-$c" ns1 1e6 >>"$tmp/time.dat"
	done
done
for fs in ext4 xfs; do
	plot_row "$fs-dio-read" "$fs-fio-dio-read" read_kibs 1024
	plot_row "$fs-mmap-randrw-read" "$fs-fio-mmap-randrw" read_kibs 1024
	plot_row "$fs-write-allocate" "$fs-write-unmapped" allocate_mibs 1
	plot_row "$fs-write-overwrite" "$fs-write-unmapped" overwrite_mibs 1
done >"$tmp/tput.dat"
gnuplot <<PLOT
set terminal pngcairo size 1100,500 noenhanced
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid border -1
set xtics rotate by -35
set key outside top center horizontal
set rmargin 10
set datafile separator "\t"
set output "$doc/results-faults.png"
set title "Faults per MiB, first read (log scale; median, min-max; QEMU/TCG)"
set logscale y
set ylabel "faults / MiB"
plot "$tmp/faults.dat" using 2:3:4:xtic(1) title "v7.3", "" using 5:6:7 title "series"
unset logscale y
set output "$doc/results-time.png"
set title "First read time in ms (median, min-max; QEMU/TCG figures, not hardware)"
set ylabel "ms"
plot "$tmp/time.dat" using 2:3:4:xtic(1) title "v7.3", "" using 5:6:7 title "series"
set output "$doc/results-throughput.png"
set title "Throughput in MiB/s (median, min-max; QEMU/TCG figures, not hardware)"
set ylabel "MiB/s"
plot "$tmp/tput.dat" using 2:3:4:xtic(1) title "v7.3", "" using 5:6:7 title "series"
PLOT
cat "$md"
