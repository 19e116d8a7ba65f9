#!/bin/bash
# make fails-on-base: show that each dax kselftest fails on the bug it is
# written for. Boots plain v7.3 (the pinned base, built like make bench
# does) and the series, once per filesystem and program of
# tests/fails-on-base-cases, and checks that every listed case fails on
# v7.3 and passes with the series. Prints a table; exit 0 only if every
# listed case does. Guest logs go to build/fails-on-base/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

list=$TOP/tests/fails-on-base-cases
declare -A image=()
ab_kernels image default base series || exit "$EX_SETUP"
out=$BUILD/fails-on-base
rm -rf "$out"
mkdir -p "$out"

# Boot KERNEL once, run PROGRAM on FS, keep qemu-run's output (with the
# verdict's per-case lines, "  FS PROGRAM CASE: RESULT") in LOG. 600 s
# is twice the kselftest timeout of a program (settings): enough for any
# program on the series, and the end of a v7.3 guest whose truncate
# never returns (dax_pin_test). DAX_FAULT_AROUND=1 makes the fault-around
# cases run on v7.3, which they otherwise skip for want of the feature.
run_prog() {
	local kernel=$1 fs=$2 prog=$3 log=$4
	"$TOP/qemu-run.sh" --kernel "$kernel" --fs "$fs" --tests "$prog" \
		--env DAX_FAULT_AROUND=1 --timeout 600 >"$log" 2>&1
	return 0
}

# failed LOG FS PROGRAM GLOB: does a case matching GLOB fail in LOG? A
# case with no result (MISSING: the program hung until the guest's time
# limit, as v7.3's truncate does in dax_pin_test) did not pass either.
failed() {
	local c
	while read -r c; do
		# shellcheck disable=SC2254
		case $c in $4) return 0 ;; esac
	done < <(sed -n "s/^  $2 $3 \\([^ ]*\\): \\(FAIL\\|MISSING\\).*/\\1/p" "$1")
	return 1
}

caught=0 bad=0
printf '%-5s %-22s %-40s %-9s %-9s %s\n' FS PROGRAM CASES v7.3 series WHY
while read -r fs prog glob why; do
	case $fs in ''|'#'*) continue ;; esac
	for k in base series; do
		log=$out/$k-$fs-$prog.log
		[ -f "$log" ] || run_prog "${image[$k]}" "$fs" "$prog" "$log"
	done
	b=passes s=FAILS
	failed "$out/base-$fs-$prog.log" "$fs" "$prog" "$glob" && b=FAILS
	# With the series the whole run must pass, the listed cases with it.
	grep -q '^VERDICT.*: PASS' "$out/series-$fs-$prog.log" && s=passes
	if [ "$b" = FAILS ] && [ "$s" = passes ]; then
		caught=$((caught + 1))
	else
		bad=$((bad + 1))
	fi
	printf '%-5s %-22s %-40s %-9s %-9s %s\n' "$fs" "$prog" "$glob" "$b" "$s" "$why"
done <"$list"
echo "$caught of $((caught + bad)) listed cases fail on v7.3 and pass with the series"
[ "$bad" = 0 ]
