#!/bin/bash
# Usage: verdict.sh LOGDIR [LABEL]
# Judge one guest run from LOGDIR/console.log (kernel log) and
# LOGDIR/results.log (KTAP from the guest). Exit: 0 pass, 1 a test failed
# or the kernel complained (lockdep, WARNING, BUG, Oops, KASAN, hung
# task, panic) or the guest never finished, 2 setup error in the guest,
# 4 everything skipped. Prints one verdict line, and the offending log
# excerpt on failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: verdict.sh LOGDIR [LABEL]"
logdir=$1 label=${2:-guest}
console=$logdir/console.log results=$logdir/results.log
if [ ! -f "$console" ] || [ ! -f "$results" ]; then
	die "$logdir has no guest logs"
fi

# What the kernel must never print during a run.
kernel_bad='possible circular locking dependency|inconsistent lock state|suspicious RCU usage|held lock freed|possible recursive locking|lock held when returning|BUG: |WARNING: |Oops|Kernel panic|general protection fault|KASAN: |UBSAN: |blocked for more than|INFO: task .* blocked|soft lockup|hard LOCKUP|list_add corruption|list_del corruption|page dumped because|VM_BUG_ON'

verdict() {
	printf 'VERDICT %s: %s\n' "$label" "$*"
}

fail=0 why=
if grep -Eq "$kernel_bad" "$console"; then
	fail=1 why="kernel log reports a problem"
	line=$(grep -En "$kernel_bad" "$console" | head -n 1 | cut -d: -f1)
	echo "--- $console, from line $line:"
	sed -n "$((line > 5 ? line - 5 : 1)),$((line + 40))p" "$console"
	echo "---"
fi
done_rc=$(sed -n 's/^HARNESS: DONE \([0-9]*\).*/\1/p' "$results" | tail -n 1)
# A crash-write guest ends by resetting itself without syncing.
grep -q '^HARNESS: RESETTING' "$results" && done_rc=${done_rc:-0}
if [ -z "$done_rc" ]; then
	fail=1 why="${why:+$why; }guest did not finish ($(grep -o 'TIMEOUT after [0-9]*s' "$results" || echo 'no DONE line: crash, reset or panic'))"
	echo "--- last lines of $console:"
	tail -n 30 "$console"
	echo "---"
fi
if grep -q '^HARNESS: SETUP-FAILED' "$results"; then
	grep '^HARNESS: SETUP-FAILED' "$results"
	verdict "ERROR (guest setup failed)${why:+; $why}"
	exit "$EX_SETUP"
fi

# KTAP: count the results of the test programs (the top level; subtest
# lines carry a "# " prefix and show in the log).
pass=$(grep -Ec '^ *ok [0-9]+ ' "$results")
skip=$(grep -Ec '^ *ok [0-9]+ .*# *SKIP' "$results")
failed=$(grep -Ec '^ *not ok [0-9]+ ' "$results")
pass=$((pass - skip))
if [ "$failed" -gt 0 ]; then
	fail=1 why="${why:+$why; }$failed test result(s) not ok"
	grep -E '^ *not ok [0-9]+ ' "$results"
fi
if [ "$fail" -ne 0 ]; then
	verdict "FAIL ($why) [ok $pass, not ok $failed, skip $skip]"
	exit "$EX_FAIL"
fi
if [ "$done_rc" = 4 ] || { [ "$pass" -eq 0 ] && [ "$skip" -gt 0 ]; }; then
	verdict "SKIP (everything skipped) [skip $skip]"
	exit "$EX_SKIP"
fi
if [ "$done_rc" != 0 ]; then
	verdict "FAIL (guest command exited $done_rc)"
	exit "$EX_FAIL"
fi
verdict "PASS [ok $pass, not ok 0, skip $skip]"
exit "$EX_PASS"
