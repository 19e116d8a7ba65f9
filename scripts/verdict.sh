#!/bin/bash
# Usage: verdict.sh LOGDIR [LABEL]
# Judge one guest run from LOGDIR/console.log (kernel log),
# LOGDIR/results.log (KTAP from the guest) and LOGDIR/harness.env (what
# the guest was asked to do). Prints every test case with its result,
# one verdict line, and the offending log excerpt on failure.
#
# A kselftest run (HARNESS_MODE=test) is compared with the expected
# cases of tests/expected-cases (EXPECTED_CASES overrides the path)
# for the filesystems and tests it ran: a failed, missing, unexpected or
# unexpectedly skipped case fails the run, and so does a run with no
# results at all.
#
# Exit: 0 pass; 1 a test failed, a case is missing or skipped against
# the list, the kernel complained (a line of scripts/kernel-complaints.txt:
# lockdep, WARNING, BUG, Oops, KASAN, RCU stall, hung task...) or the
# guest never finished; 2 guest setup error and nothing worse; 4 every
# case ran was an expected skip.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: verdict.sh LOGDIR [LABEL]"
logdir=$1 label=${2:-guest}
console=$logdir/console.log results=$logdir/results.log
if [ ! -f "$console" ] || [ ! -f "$results" ] || [ ! -f "$logdir/harness.env" ]; then
	die "$logdir has no guest logs"
fi
HARNESS_MODE='' HARNESS_FS='' HARNESS_TESTS=''
# shellcheck disable=SC1091
. "$logdir/harness.env"
expected=${EXPECTED_CASES:-$TOP/tests/expected-cases}

# What the kernel must never print during a run.
kernel_bad=$(kernel_complaints)
[ -n "$kernel_bad" ] || die "no patterns in scripts/kernel-complaints.txt"

verdict() {
	printf 'VERDICT %s: %s\n' "$label" "$*"
}

# The KTAP of run_kselftest.sh, one result per line, tab-separated:
# FS PROGRAM CASE STATUS REASON, STATUS pass, fail or skip. The cases
# of a program (its "# ok N name" lines) come before its own result
# ("ok N selftests: dax: PROGRAM"), which is listed with CASE "-".
parse_results() {
	awk -v OFS='\t' '
	function result(line, out,   st, reason, name, i) {
		st = "pass"
		if (line ~ /^not ok /) { st = "fail"; sub(/^not ok [0-9]+ /, "", line) }
		else sub(/^ok [0-9]+ /, "", line)
		reason = ""
		i = index(line, " # ")
		if (i) {
			reason = substr(line, i + 3)
			line = substr(line, 1, i - 1)
			if (reason ~ /^SKIP/) {
				if (st == "pass") st = "skip"
				sub(/^SKIP */, "", reason)
			}
		}
		out["name"] = line; out["st"] = st; out["reason"] = reason
	}
	{ sub(/\r$/, "") }
	/^HARNESS: BEGIN fs=/ { fs = substr($0, index($0, "fs=") + 3); n = 0; plan = ""; next }
	/^HARNESS: END / { fs = "-"; next }
	/^# (not )?ok [0-9]+ / { pending[++n] = substr($0, 3); next }
	/^# 1\.\.0 # SKIP/ { plan = $0; sub(/^# 1\.\.0 # SKIP */, "", plan); next }
	/^(not )?ok [0-9]+ selftests: / {
		result($0, r)
		prog = r["name"]; sub(/^selftests: [^:]*: /, "", prog)
		for (i = 1; i <= n; i++) {
			result(pending[i], c)
			print (fs == "" ? "-" : fs), prog, c["name"], c["st"], c["reason"]
		}
		if (r["st"] == "skip" && r["reason"] == "") r["reason"] = plan
		print (fs == "" ? "-" : fs), prog, "-", r["st"], r["reason"]
		n = 0; plan = ""
	}
	' "$1"
}

# The expected cases for the filesystems and tests of this run:
# FS PROGRAM CASE STATUS [REASON], as in the list.
expected_cases() {
	local fs prog case st reason
	while read -r fs prog case st reason; do
		case $fs in ''|'#'*) continue ;; esac
		case " $HARNESS_FS " in *" $fs "*) ;; *) continue ;; esac
		if [ -n "$HARNESS_TESTS" ]; then
			# shellcheck disable=SC2254
			case $prog in $HARNESS_TESTS) ;; *) continue ;; esac
		fi
		printf '%s\t%s\t%s\t%s\t%s\n' "$fs" "$prog" "$case" "$st" "$reason"
	done <"$expected"
}

# Compare what ran with what the list expects. Prints one line per case
# and a last line "SUMMARY pass skip bad"; bad counts failed, missing,
# unexpected and unexpectedly skipped cases.
compare_cases() {
	awk -F '\t' '
	NR == FNR {
		key = $1 SUBSEP $2 SUBSEP $3
		want[key] = $4; why[key] = $5; order[++n] = key
		if ($3 != "-") hascases[$1 SUBSEP $2] = 1
		next
	}
	{
		key = $1 SUBSEP $2 SUBSEP $3
		# A program result counts when the list has no cases for it,
		# or when it failed (timeout, crash).
		if ($3 == "-" && (($1 SUBSEP $2) in hascases) && $4 != "fail")
			next
		seen[key] = 1
		name = $1 " " $2 " " $3
		if ($4 == "fail") { msg = "FAIL" ($5 != "" ? " (" $5 ")" : ""); bad++ }
		else if (!(key in want)) { msg = "UNEXPECTED: not in the list (" $4 ")"; bad++ }
		else if ($4 == "skip" && want[key] != "skip") { msg = "UNEXPECTED SKIP: " $5; bad++ }
		else if ($4 == "skip" && index($5, why[key]) != 1) {
			msg = "SKIP for another reason: " $5 " (expected: " why[key] ")"; bad++
		}
		else if ($4 == "pass" && want[key] == "skip") {
			msg = "PASSED, but the list expects a skip (" why[key] "): update the list"; bad++
		}
		else if ($4 == "skip") { msg = "skip (expected): " $5; skip++ }
		else { msg = "pass"; pass++ }
		print "  " name ": " msg
	}
	END {
		for (i = 1; i <= n; i++)
			if (!(order[i] in seen)) {
				split(order[i], k, SUBSEP)
				print "  " k[1] " " k[2] " " k[3] ": MISSING (expected " want[order[i]] ")"
				bad++
			}
		print "SUMMARY", pass + 0, skip + 0, bad + 0
	}
	' "$1" "$2"
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
setup=$(grep '^HARNESS: SETUP-FAILED' "$results")

pass=0 skip=0 bad=0
if [ "$HARNESS_MODE" = test ]; then
	[ -f "$expected" ] || die "no list of expected cases: $expected"
	tmp=$(mktemp -d)
	parse_results "$results" >"$tmp/got"
	# A filesystem that could not be set up ran nothing: its cases are
	# not missing, the setup error is reported instead.
	while read -r f; do
		[ "$f" = ALL ] && HARNESS_FS=''
		HARNESS_FS=${HARNESS_FS//$f/}
	done < <(sed -n 's/^HARNESS: SETUP-FAILED fs=\([a-z0-9]*\).*/\1/p; s/^HARNESS: SETUP-FAILED fsdax.*/ALL/p' "$results")
	expected_cases >"$tmp/want"
	echo "test cases ($(wc -l <"$tmp/want") expected, list $expected):"
	compare_cases "$tmp/want" "$tmp/got" >"$tmp/cmp"
	grep -v '^SUMMARY' "$tmp/cmp"
	read -r _ pass skip bad < <(grep '^SUMMARY' "$tmp/cmp")
	[ "$bad" -eq 0 ] || fail=1 why="${why:+$why; }$bad test case(s) failed, missing or skipped against the list"
	if [ ! -s "$tmp/got" ] && [ -z "$setup" ]; then
		fail=1 why="${why:+$why; }no test results at all"
	fi
	rm -rf "$tmp"
fi
counts="[pass $pass, skip $skip, bad $bad]"

if [ "$fail" -ne 0 ]; then
	[ -z "$setup" ] || echo "$setup"
	verdict "FAIL ($why${setup:+; guest setup failed}) $counts"
	exit "$EX_FAIL"
fi
if [ -n "$setup" ]; then
	echo "$setup"
	verdict "ERROR (guest setup failed) $counts"
	exit "$EX_SETUP"
fi
if [ "$done_rc" = 4 ] && [ "$HARNESS_MODE" != test ]; then
	verdict "SKIP (guest command exited 4)"
	exit "$EX_SKIP"
fi
if [ "$done_rc" != 0 ]; then
	verdict "FAIL (guest exited $done_rc) $counts"
	exit "$EX_FAIL"
fi
if [ "$HARNESS_MODE" = test ] && [ "$pass" -eq 0 ] && [ "$skip" -gt 0 ]; then
	verdict "SKIP (every case ran was an expected skip) $counts"
	exit "$EX_SKIP"
fi
verdict "PASS $counts"
exit "$EX_PASS"
