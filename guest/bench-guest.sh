#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of make bench: run in the guest by qemu-run.sh -- with the
# filesystem FS (ext4 or xfs) mounted -o dax=always on DAX_TEST_DIR.
# Prints "BENCH <fs>-<case> key=value..." lines (guest/dax-bench.c).
# Usage: bench-guest.sh FS [all|reads]: reads runs the read, CoW write,
# PMD and store+fsync cases alone (DAX and page cache), for the
# instruction measure (ICOUNT=1).
set -eu
fs=$1
mode=${2:-all}
case $mode in
all | reads) ;;
*) echo "bench-guest.sh: mode must be all or reads, not $mode" >&2; exit 2 ;;
esac
b=/harness/dax-bench
d=$DAX_TEST_DIR
big=131072	# KiB: 128 MiB
small=64

for order in seq rand; do
	$b read "$d/bench" "$big" pte "$order" "$fs-dax-pte-$order-128m"
done
$b read "$d/bench" "$small" pte seq "$fs-dax-pte-seq-64k"
$b read "$d/bench" "$big" pmd seq "$fs-dax-pmd-seq-128m"
# PTE mappings of a file that a PMD mapping read first: PMD entries.
$b read "$d/bench" "$big" pteonpmd seq "$fs-dax-pteonpmd-seq-128m"
# A file allocated in one piece (2 MiB-aligned blocks where the filesystem
# gives them), read through PTE mappings only.
for order in seq rand; do
	$b read "$d/bench" "$big" ptefalloc "$order" "$fs-dax-ptefalloc-$order-128m"
done
$b read "$d/bench" "$big" populate seq "$fs-dax-populate-seq-128m"

# write(2) of 4 KiB blocks over a file's data: copy on write after FICLONE
# (xfs), the file not mapped, mapped by the writer, or mapped by another
# process; and without reflink, mapped by the writer.
cow=4096	# KiB
if [ "$fs" = xfs ]; then
	for how in unmapped mapped other; do
		$b cowwrite "$d/bench" "$cow" "$how" "$fs-cowwrite-$how"
	done
fi
$b cowwrite "$d/bench" "$cow" plain "$fs-write-mapped"

# PMD mappings left possible: a 32 MiB file read first (none of it, its
# first 64 KiB, its first half) through a mapping no PMD can map, then all
# of it through a PMD-aligned one.
for first in 0 64 16384; do
	$b pmdmix "$d/bench" 32768 "$first" "$fs-pmdmix-first$first"
done

# A 4 KiB store and fsync() through a PTE mapping: the pages written back,
# for a file of order-0 entries, one of PMD entries made by a PMD mapping,
# and one allocated in one piece that only PTE mappings read.
for how in pte pteonpmd ptefalloc; do
	$b storefsync "$d/bench" 8192 "$how" "$fs-storefsync-$how"
done

if [ "$mode" = all ]; then
	# fio mmap randrw on the DAX filesystem (a mapping that can use PMDs).
	fio --name=randrw --thread --directory="$d" --ioengine=mmap --rw=randrw --bs=4k \
		--size=256M --runtime=20 --time_based --minimal --output-format=terse |
		awk -F';' -v n="$fs-fio-mmap-randrw" \
		'{ printf "BENCH %s read_kibs=%s write_kibs=%s\n", n, $7, $48 }'
	rm -f "$d"/randrw*
	# Direct I/O reads (DAX serves O_DIRECT like any read).
	fio --name=dio --thread --directory="$d" --direct=1 --ioengine=libaio --bs=4k \
		--iodepth=64 --rw=read --size=256M --minimal --output-format=terse |
		awk -F';' -v n="$fs-fio-dio-read" '{ printf "BENCH %s read_kibs=%s\n", n, $7 }'
	rm -f "$d"/dio*

	# MAP_SYNC write fault latency.
	for alloc in prealloc empty; do
		for sync in nosync sync; do
			for load in idle load; do
				$b syncfault "$d" "$alloc" "$sync" "$load" \
					"$fs-syncfault-$alloc-$sync-$load"
			done
		done
	done

	# write(2) on a file nobody maps (the entry-race fix must cost nothing).
	$b write "$d/bench" 64 "$fs-write-unmapped"

	# Read faults against an mmap/munmap loop, with the per-VMA lock counters.
	for t in 1 2; do
		$b scale "$d/bench" 32 "$t" "$fs-scale-$t"
	done
	# Readers that share one file and one mapping, nothing else running.
	for t in 1 2 4; do
		$b readers "$d/bench" 32 "$t" "$fs-readers-$t"
	done
fi

# The page cache as the reference: the same filesystem without DAX.
umount "$d"
mount -t "$fs" -o dax=never "$DAX_TEST_DEV" "$d"
for order in seq rand; do
	$b read "$d/bench" "$big" pte "$order" "$fs-pagecache-pte-$order-128m"
done
$b read "$d/bench" "$small" pte seq "$fs-pagecache-pte-seq-64k"
umount "$d"

if [ "$fs" = xfs ]; then
	# xfs as mkfs makes it without options: no stripe unit, so extents
	# are not 2 MiB aligned as a rule (the guard of the PMD-entry cases).
	# On the scratch NVDIMM, which the xfs boots do not use otherwise.
	mkfs.xfs -q -f "$DAX_SCRATCH_DEV"
	mount -t xfs -o dax=always "$DAX_SCRATCH_DEV" "$d"
	for how in pte ptefalloc; do
		$b read "$d/bench" "$big" "$how" seq "xfsdefault-dax-$how-seq-128m"
	done
	umount "$d"
fi

# erofs (read-only, DAX) from the ext4 run only, and not in reads mode:
# its 128 MiB of random data take minutes to make on an instruction clock.
if [ "$fs" = ext4 ] && [ "$mode" = all ]; then
	mkdir -p /tmp/erofs-src "$d"
	dd if=/dev/urandom of=/tmp/erofs-src/bench bs=1M count=128 2>/dev/null
	dd if=/dev/urandom of=/tmp/erofs-src/small bs=1K count=64 2>/dev/null
	mkfs.erofs "$DAX_SCRATCH_DEV" /tmp/erofs-src >/dev/null
	rm -rf /tmp/erofs-src
	mount -t erofs -o dax=always "$DAX_SCRATCH_DEV" "$d"
	for order in seq rand; do
		$b read "$d/bench" 0 pte "$order" "erofs-dax-pte-$order-128m"
	done
	$b read "$d/small" 0 pte seq "erofs-dax-pte-seq-64k"
	umount "$d"
fi

# Last, untimed, after every measured case, as only kernels with the
# fault-around events trace anything here: the share of the pages that
# fault-around maps from large folios, for files made as the read cases
# make theirs (dax-bench share).
mount -t "$fs" -o dax=always "$DAX_TEST_DEV" "$d"
for order in seq rand; do
	for how in pte ptefalloc; do
		$b share "$d/bench" "$big" "$how" "$order" "$fs-dax-$how-$order-128m-share"
	done
done
$b share "$d/bench" "$big" pteonpmd seq "$fs-dax-pteonpmd-seq-128m-share"
umount "$d"
if [ "$fs" = xfs ]; then
	mount -t xfs -o dax=always "$DAX_SCRATCH_DEV" "$d"
	for how in pte ptefalloc; do
		$b share "$d/bench" "$big" "$how" seq "xfsdefault-dax-$how-seq-128m-share"
	done
	umount "$d"
fi
