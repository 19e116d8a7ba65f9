#!/bin/bash
# Usage: detect-accel.sh KERNEL INITRAMFS
# Print kvm if a Linux guest boots under KVM here, else tcg. On some
# hosts /dev/kvm exists but a guest never prints a line, so this boots
# the real kernel once with a short timeout; the answer is cached in
# $BUILD/accel (delete it to probe again).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cache=$BUILD/accel
if [ -f "$cache" ]; then
	cat "$cache"
	exit 0
fi
accel=tcg
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	probe=$(mktemp -d)
	if ACCEL=kvm QEMU_TIMEOUT=${KVM_PROBE_TIMEOUT:-30} NVDIMM_DIR=$probe \
		HARNESS_CMD=true "$TOP/scripts/boot-guest.sh" "$1" "$2" "$probe/log" cmd \
		>/dev/null 2>&1 && grep -q '^HARNESS: DONE 0' "$probe/log/results.log"; then
		accel=kvm
	fi
	rm -rf "$probe"
fi
mkdir -p "$BUILD"
echo "$accel" >"$cache"
echo "$accel"
