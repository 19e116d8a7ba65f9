#!/bin/bash
# The fuzzer's own tests, on the host (no guest, no DAX: dax-fuzz -D):
# a clean run passes; a deliberately wrong model (-W) fails, so the checks
# can fail; the mapping check alone can fail (-W map); a recorded
# sequence replays; bad input gives exit 2 and a directory without DAX
# exit 4. dax-fuzz is built here from guest/fuzz/ with the host's gcc.
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
# Files on tmpfs where there is one: quicker, and no disk to fill.
dir=$(mktemp -d "${FUZZ_TEST_DIR:-/dev/shm}/dax-fuzz-test.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp" "$dir"' EXIT

need_tools gcc
fuzz=$tmp/dax-fuzz
if ! gcc -O2 -Wall -Werror -pthread -o "$fuzz" "$TOP"/guest/fuzz/*.c 2>"$tmp/cc"; then
	echo "not ok 1 - dax-fuzz builds on the host:"
	sed 's/^/#   /' "$tmp/cc"
	exit 1
fi

# run CODE PATTERN DESCRIPTION -- ARGS...: dax-fuzz ARGS exits CODE and
# prints PATTERN (stdout or stderr).
run() {
	local code=$1 pattern=$2 desc=$3 rc=0
	shift 4
	"$fuzz" "$@" >"$tmp/out" 2>&1 </dev/null || rc=$?
	tap_check "$desc" "$rc" "$code" "$pattern" "$tmp/out"
}

run 0 "RESULT .* failures=0 " "a clean run passes" -- -D -s 1 -n 600 -R 300 "$dir"
for op in pwrite fallocate copy_file_range; do
	run 1 "FAILURE 1: FILE_MISMATCH" "a wrong model of $op fails the file check" -- \
		-D -s 1 -n 2000 -S 30 -W "$op" "$dir"
done
# A store through a private mapping has only the mapping to show it.
run 1 "FAILURE 1: \(FILE\|MAP\)_MISMATCH" "a wrong model of store fails a check" -- \
	-D -s 1 -n 2000 -S 30 -W store "$dir"
run 1 "FAILURE 1: MAP_MISMATCH" "a wrong expectation of mapped pages fails the mapping check" -- \
	-D -s 1 -n 2000 -S 30 -W map "$dir"
run 1 "shrunk to [1-9]" "a failure is shrunk" -- -D -s 1 -n 2000 -S 30 -W pwrite "$dir"
run 0 "RESULT pass: 11 operations" "a recorded sequence replays" -- \
	-D -r "$TOP/tests/fuzz/zero-page-after-cow.ops" "$dir"
printf 'pwrite f=9 off=0\n' >"$tmp/bad.ops"
run 2 "not an operation" "a sequence with a bad line is refused" -- -D -r "$tmp/bad.ops" "$dir"
run 2 "usage" "an unknown option is refused" -- -q "$dir"
run 2 "needs a number" "a bad number is refused" -- -n many "$dir"
run 2 "no operation 'nope'" "-W of no operation is refused" -- -W nope "$dir"
run 2 "is not a directory" "a missing directory is refused" -- "$tmp/none"
# Without -D a directory that is not DAX is skipped (exit 4), unless the
# host's filesystem happens to be DAX.
run 4 "DAX is off" "a directory without DAX is skipped" -- -n 1 "$dir"

echo "# dax-fuzz tests: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
