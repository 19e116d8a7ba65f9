#!/bin/bash
# make bench: the seeds' measurements, plain v7.3 (the pinned base) vs the
# series, same config, same NVDIMMs, one run. Writes build/bench/*.txt and,
# through bench-report.sh, Documentation/results.md and its plots.
# Absolute times are QEMU/TCG figures, not hardware numbers.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$("$TOP/scripts/apply-series.sh")
base=$("$TOP/scripts/get-base.sh")
"$TOP/scripts/build-kernel.sh" "$base" "$BUILD/obj-default-base" default
"$TOP/scripts/build-kernel.sh" "$src" "$BUILD/obj-default" default

out=$BUILD/bench
rm -rf "$out"
mkdir -p "$out"
start=$SECONDS
for k in base series; do
	obj=$BUILD/obj-default
	[ "$k" = base ] && obj=$BUILD/obj-default-base
	for fs in ext4 xfs; do
		log "bench: $k on $fs"
		rc=0
		"$TOP/qemu-run.sh" --kernel "$obj/arch/x86/boot/bzImage" --fs "$fs" \
			--timeout 1800 -- "/harness/bench-guest.sh $fs" \
			>"$out/$k-$fs.log" 2>&1 || rc=$?
		[ "$rc" = 0 ] || log "warning: $k on $fs: exit $rc, see $out/$k-$fs.log"
		grep '^BENCH ' "$out/$k-$fs.log" | cut -d' ' -f2- >>"$out/$k.txt" || true
	done
done
log "guest runs took $((SECONDS - start))s"
"$TOP/scripts/bench-report.sh" "$out/base.txt" "$out/series.txt" "$TOP/Documentation"
