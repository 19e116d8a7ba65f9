#!/bin/bash
# Tests of scripts/verdict.sh against prepared guest logs: every way a run
# can go wrong must fail the verdict with the documented exit code, and a
# clean run must pass. Uses a small list of expected cases of its own.
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

cat >"$tmp/expected" <<'LIST'
# FS PROGRAM CASE STATUS [REASON]
ext4 prog_a a.one pass
ext4 prog_a a.two pass
ext4 prog_b b.reflink skip no reflink
ext4 script.sh - skip opt in
LIST
export EXPECTED_CASES=$tmp/expected

clean_console='[    0.000000] Linux version 7.3.4
[    3.100000] Run /init as init process
[    9.000000] reboot: Power down'

# The KTAP of a clean run on ext4, as run_kselftest.sh prints it.
clean_results='HARNESS: BEGIN fs=ext4
TAP version 13
1..3
# timeout set to 300
# selftests: dax: prog_a
# 1..2
# ok 1 a.one
# ok 2 a.two
# # PASSED: 2 / 2 tests passed.
ok 1 selftests: dax: prog_a
# selftests: dax: prog_b
# ok 1 b.reflink # SKIP no reflink on this filesystem
ok 2 selftests: dax: prog_b
# 1..0 # SKIP opt in with a variable
ok 3 selftests: dax: script.sh # SKIP
HARNESS: END fs=ext4 rc=0
HARNESS: DONE 0'

# case NAME WANT-EXIT WANT-PATTERN: judge LOGDIR $tmp/NAME, prepared from
# $console and $results (CRLF line ends, as the serial port writes them).
console='' results='' mode=test tests=''
judge() {
	local name=$1 want=$2 pattern=$3 d=$tmp/$1 rc=0
	mkdir -p "$d"
	printf '%s\n' "$console" | sed 's/$/\r/' >"$d/console.log"
	printf '%s\n' "$results" | sed 's/$/\r/' >"$d/results.log"
	printf 'HARNESS_MODE=%s\nHARNESS_FS=ext4\nHARNESS_TESTS=%s\n' "$mode" "$tests" >"$d/harness.env"
	"$TOP/scripts/verdict.sh" "$d" ext4 >"$d/out" 2>&1 || rc=$?
	tap_check "$name" "$rc" "$want" "$pattern" "$d/out"
}

console=$clean_console results=$clean_results
judge clean-pass 0 'VERDICT ext4: PASS \[pass 2, skip 2, bad 0\]'

console="$clean_console
[    5.000000] WARNING: fs/dax.c:452 at dax_folio_put+0x62/0x80"
judge warning-beside-passing-tests 1 'kernel log reports a problem'

console="$clean_console
[   30.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"
judge rcu-stall 1 'kernel log reports a problem'

console="$clean_console
[   30.000000] BUG: workqueue lockup - pool cpus=0"
judge workqueue-lockup 1 'kernel log reports a problem'

console=$clean_console
results=${clean_results//'# ok 1 a.one'/'# ok 1 a.one # SKIP no DAX here'}
results=${results//'# ok 2 a.two'/'# ok 2 a.two # SKIP no DAX here'}
judge all-skipped 1 'a.one: UNEXPECTED SKIP: no DAX here'

results='HARNESS: BEGIN fs=ext4
HARNESS: END fs=ext4 rc=0
HARNESS: DONE 0'
judge zero-results 1 'no test results at all'

results=${clean_results//'# ok 2 a.two'/}
judge missing-case 1 'a.two: MISSING (expected pass)'

results=${clean_results//'# ok 2 a.two'/'# ok 2 a.two
# ok 3 a.three'}
judge unlisted-case 1 'a.three: UNEXPECTED: not in the list'

results=${clean_results//'# ok 2 a.two'/'# not ok 2 a.two'}
judge failed-case 1 'a.two: FAIL'

results=${clean_results//'# ok 1 b.reflink # SKIP no reflink on this filesystem'/'# ok 1 b.reflink # SKIP DAX_TEST_DIR not set'}
judge skip-for-another-reason 1 'SKIP for another reason'

results=${clean_results//'ok 1 selftests: dax: prog_a'/'not ok 1 selftests: dax: prog_a # TIMEOUT 300 seconds'}
results=${results//'# ok 2 a.two'/}
judge program-timeout 1 'prog_a -: FAIL (TIMEOUT 300 seconds)'

results=${clean_results//'HARNESS: DONE 0'/}
judge no-done-line 1 'guest did not finish'

results="HARNESS: SETUP-FAILED fs=xfs
${clean_results//'# ok 2 a.two'/'# not ok 2 a.two'}"
judge setup-failed-with-failures 1 'FAIL (.*guest setup failed)'

results='HARNESS: SETUP-FAILED fsdax
HARNESS: DONE 2'
judge setup-failed 2 'ERROR (guest setup failed)'

results='HARNESS: BEGIN fs=ext4
# ok 1 b.reflink # SKIP no reflink on this filesystem
ok 1 selftests: dax: prog_b
HARNESS: END fs=ext4 rc=0
HARNESS: DONE 0'
tests=prog_b
judge only-expected-skips 4 'SKIP (every case ran was an expected skip)'

mode=cmd tests=''
results='HARNESS: DONE 0'
judge command-passes 0 'VERDICT ext4: PASS'
results='HARNESS: DONE 3'
judge command-fails 1 'guest exited 3'

echo "# verdict tests: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
