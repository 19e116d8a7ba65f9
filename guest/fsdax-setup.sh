#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side: turn every label-less raw pmem namespace into an fsdax one
# (what `ndctl create-namespace -m fsdax -f -e namespaceX.0` does, through
# sysfs), then check that each /dev/pmemN supports DAX. Namespaces that
# are already fsdax (a reboot on the same NVDIMM backing file) are kept.
set -eu

nd=/sys/bus/nd/devices

setup_region() {
	region=$1
	ns=$(basename "$region"/namespace*.0)
	[ -e "$nd/$ns" ] || { echo "fsdax-setup: no namespace in $region" >&2; return 1; }
	# Already claimed by a pfn device (fsdax info block found at probe).
	for pfn in "$region"/pfn*.*; do
		[ -e "$pfn/namespace" ] || continue
		[ "$(cat "$pfn/namespace")" = "$ns" ] && return 0
	done
	pfn=$(cat "$region/pfn_seed")
	echo "$ns" >/sys/bus/nd/drivers/nd_pmem/unbind
	cat /proc/sys/kernel/random/uuid >"$nd/$pfn/uuid"
	echo "$ns" >"$nd/$pfn/namespace"
	echo pmem >"$nd/$pfn/mode"
	echo 2097152 >"$nd/$pfn/align"
	echo "$pfn" >/sys/bus/nd/drivers/nd_pmem/bind
}

n=0
for region in "$nd"/region*; do
	[ -e "$region/pfn_seed" ] || continue
	setup_region "$region"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "fsdax-setup: no NVDIMM regions" >&2; exit 1; }

for dev in /sys/block/pmem*; do
	[ "$(cat "$dev/queue/dax")" = 1 ] ||
		{ echo "fsdax-setup: ${dev##*/} does not support DAX" >&2; exit 1; }
	echo "fsdax-setup: /dev/${dev##*/} fsdax, $(($(cat "$dev/size") * 512 / 1048576)) MiB"
done
