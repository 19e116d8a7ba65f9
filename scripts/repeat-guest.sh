#!/bin/bash
# Usage: repeat-guest.sh N FS KERNEL -- CMD
# Boot N guests in a row on FS with KERNEL, each running CMD (see
# qemu-run.sh --), and print one verdict per boot and the tally. Used to
# measure how often a reproducer fails (a kernel without a fix) or passes
# (with it), and the boot reliability of the harness (CMD true).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if [ $# -lt 5 ] || [ "$4" != -- ]; then
	die "usage: repeat-guest.sh N FS KERNEL -- CMD"
fi
n=$1 fs=$2 kernel=$3
shift 4
pass=0 fail=0
complaints=$(kernel_complaints)
for i in $(seq 1 "$n"); do
	rc=0
	"$TOP/qemu-run.sh" --fs "$fs" --kernel "$kernel" --timeout 600 -- "$*" \
		>"$BUILD/repeat.log" 2>&1 || rc=$?
	echo "run $i: exit $rc: $(grep '^VERDICT' "$BUILD/repeat.log")"
	grep -m1 -E "$complaints" "$BUILD/repeat.log" | sed 's/^/    /'
	if [ "$rc" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed"
