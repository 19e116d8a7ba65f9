#!/bin/bash
# The harness's own tests: bad input must give one clear line on stderr,
# the documented exit code, and no half-made state. The cases that get
# as far as building the kselftests run only where a kernel is built
# (make check builds it first).
set -uo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

kernel=$BUILD/obj-default/arch/x86/boot/bzImage
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

# expect CODE PATTERN DESCRIPTION -- COMMAND...: COMMAND exits CODE and
# says PATTERN on stderr.
expect() {
	local code=$1 pattern=$2 desc=$3 rc=0
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
	tap_check "$desc" "$rc" "$code" "$pattern" "$tmp/err"
}

run=$TOP/qemu-run.sh
echo "not a kernel" >"$tmp/not-a-kernel"
expect 2 "unknown option '--bogus'" "unknown flag" -- "$run" --bogus
expect 2 "no such file" "missing --kernel" -- "$run" --kernel "$tmp/nope"
expect 2 "is not an x86 bzImage" "--kernel that is no bzImage" -- "$run" --kernel "$tmp/not-a-kernel"
expect 2 "unsupported --fs 'btrfs'" "unsupported --fs" -- "$run" --fs btrfs
expect 2 "unknown --config 'nope'" "unknown config profile" -- "$run" --config nope
expect 2 "needs a number" "bad --timeout" -- "$run" --timeout soon
expect 2 "needs an argument" "option without its argument" -- "$run" --fs
expect 2 "needs a command" "-- without a command" -- "$run" --
expect 2 "--env needs NAME=VALUE" "--env without NAME=VALUE" -- "$run" --env "A B"
expect 2 "N must be a positive number" "crash cycles: N of 0" -- \
	"$TOP/scripts/crash-cycles.sh" "$tmp/not-a-kernel" ext4 0
expect 2 "N must be a positive number" "crash cycles: N not a number" -- \
	"$TOP/scripts/crash-cycles.sh" "$tmp/not-a-kernel" ext4 abc
prof=$TOP/scripts/profile.sh
expect 2 "FS must be ext4 or xfs, not 'btrfs'" "make profile: unknown filesystem" -- "$prof" btrfs
expect 2 "CASE must be write-mapped" "make profile: CoW case on ext4" -- "$prof" ext4 cowwrite-mapped
expect 2 "no kernel config 'nope'" "make profile: unknown config" -- "$prof" xfs write-mapped nope
expect 2 "CASE must be write-mapped" "make profile: read case without its pass" -- "$prof" xfs dax-pte-seq-128m
expect 2 "not 'dax-pte-seq-64k-first'" "make profile: read case it cannot mark" -- "$prof" xfs dax-pte-seq-64k-first
expect 2 "CASE and AGAINST are the same" "make profile: a case against itself" -- \
	"$prof" xfs dax-pte-seq-128m-reread nodebug dax-pte-seq-128m-reread
expect 2 "not 'nope'" "make profile: unknown AGAINST case" -- "$prof" xfs write-mapped nodebug nope
expect 2 "QEMU_PLUGIN needs TCG" "a TCG plugin on KVM" -- \
	env ACCEL=kvm QEMU_PLUGIN="$tmp/plugin.so" "$TOP/scripts/boot-guest.sh" \
	"$tmp/not-a-kernel" "$tmp/not-a-kernel" "$tmp/boot" test
fst=$TOP/scripts/fstests.sh
expect 2 "unknown configuration 'btrfs'" "make fstests: unknown configuration" -- \
	"$fst" --configs xfs,btrfs
expect 2 "unknown kernel 'v6'" "make fstests: unknown kernel" -- "$fst" --kernels v6
printf 'ok 1 100\nbad x 100\n' >"$tmp/fsx-runs"
expect 2 "fsx run 'bad' needs a numeric SEED" "make fstests: bad fsx runs list" -- \
	env FSTESTS_FSX_RUNS="$tmp/fsx-runs" "$fst"
printf 'a/b 1 100\n' >"$tmp/fsx-runs"
expect 2 "fsx run name 'a/b'" "make fstests: fsx run name not a word" -- \
	env FSTESTS_FSX_RUNS="$tmp/fsx-runs" "$fst"
expect 2 "FSTESTS_SRC is not set" "make fstests without FSTESTS_SRC" -- \
	env -u FSTESTS_SRC "$fst"
expect 2 "does not look like fstests" "make fstests: FSTESTS_SRC not fstests" -- \
	env FSTESTS_SRC="$tmp" "$fst"
expect 2 "--kernel wants base=BZIMAGE or series=BZIMAGE" "make fstests: --kernel of no kernel name" -- \
	"$fst" --kernel v6="$tmp/not-a-kernel"
expect 2 "no such file" "make fstests: --kernel of a missing image" -- \
	"$fst" --kernel base="$tmp/nope"
# Our fstests tests are not copied over a test fstests has taken since.
mkdir -p "$tmp/fst/src" "$tmp/fst/tests/generic"
touch "$tmp/fst/check"
printf 'LINUX_TARGETS = a \\\n\tb\n' >"$tmp/fst/src/Makefile"
echo "someone else's test" >"$tmp/fst/tests/generic/788"
expect 2 "tests/generic/788 exists with other content: renumber" "fstests overlay: a taken test number" -- \
	"$TOP/scripts/fstests-overlay.sh" "$tmp/fst" tests/generic/788
expect 2 "is not a git checkout" "fstests posting: FSTESTS_SRC without history" -- \
	env FSTESTS_SRC="$tmp/fst" POSTER="A B <a@b.c>" "$TOP/scripts/fstests-posting.sh" "$tmp/post"

fz=$TOP/scripts/fuzz.sh
expect 2 "unknown option '--bogus'" "make fuzz: unknown option" -- "$fz" --bogus
expect 2 "needs NAME=BZIMAGE" "make fuzz: --kernel without a name" -- "$fz" --kernel "$tmp/not-a-kernel"
expect 2 "no such file" "make fuzz: missing --kernel" -- "$fz" --kernel "a=$tmp/nope"
expect 2 "is not an x86 bzImage" "make fuzz: --kernel that is no bzImage" -- "$fz" --kernel "a=$tmp/not-a-kernel"
expect 2 "kernel name 'a b'" "make fuzz: kernel name not a word" -- "$fz" --kernel "a b=$tmp/not-a-kernel"
expect 2 "kernel 'a' is given twice" "make fuzz: a kernel named twice" -- \
	env FUZZ_KERNELS="a=$tmp/not-a-kernel" "$fz" --kernel "a=$tmp/not-a-kernel"
expect 2 "unknown configuration 'btrfs'" "make fuzz: unknown configuration" -- "$fz" --configs xfs,btrfs
expect 2 "needs a positive number, not 'soon'" "make fuzz: bad --seconds" -- "$fz" --seconds soon
expect 2 "needs a positive number, not '0'" "make fuzz: --ops of 0" -- "$fz" --ops 0
expect 2 "needs an argument" "make fuzz: option without its argument" -- "$fz" --seed

# The fstests table: a test that fails on the series and passes on v7.3
# fails the run; one that fails on both, or is not run, does not.
fake_boot() { # DIR XUNIT_CASES
	mkdir -p "$1/results"
	echo "HARNESS: DONE 0" >"$1/results.log"
	printf '<testsuite>%s</testsuite>\n' "$2" >"$1/results/result.xml"
}
pass='<testcase name="generic/001" time="1"/>'
fail='<testcase name="generic/001" time="1"><failure message="output mismatch"/></testcase>'
skip='<testcase name="generic/002" time="0"><skipped message="no reflink"/></testcase>'
fake_boot "$tmp/fst1/base-xfs" "$pass$skip"
fake_boot "$tmp/fst1/series-xfs" "$fail$skip"
fake_boot "$tmp/fst2/base-xfs" "$fail$skip"
fake_boot "$tmp/fst2/series-xfs" "$fail$skip"
report=$TOP/scripts/fstests-report.py
rc=0; "$report" "$tmp/fst1" base series -- xfs >"$tmp/out1" 2>&1 || rc=$?
tap_check "fstests table: a regression fails it" "$rc" 1 "| generic/001 | pass (1s) | fail: output mismatch |" "$tmp/out1"
rc=0; "$report" "$tmp/fst2" base series -- xfs >"$tmp/out2" 2>&1 || rc=$?
tap_check "fstests table: a failure on both does not" "$rc" 0 "| generic/002 | notrun: no reflink | notrun: no reflink |" "$tmp/out2"
rm -f "$tmp/fst2/series-xfs/results.log"
rc=0; "$report" "$tmp/fst2" base series -- xfs >"$tmp/out3" 2>&1 || rc=$?
tap_check "fstests table: a boot that did not finish fails it" "$rc" 1 "series: .*boot did not finish" "$tmp/out3"
# A boot that the time limit ended in the middle of a test: that test is
# not finished, whatever its line ends with (here "3600s").
mkdir -p "$tmp/fst3/base-xfs" "$tmp/fst3/series-xfs"
for k in base series; do
	printf '%s\n' "generic/001 12s ...  11s" \
		"generic/672        HARNESS: TIMEOUT after 3600s" >"$tmp/fst3/$k-xfs/results.log"
done
rc=0; "$report" "$tmp/fst3" base series -- xfs >"$tmp/out4" 2>&1 || rc=$?
tap_check "fstests table: a test cut by the time limit is not a pass" "$rc" 1 "| generic/672 | not finished: HARNESS: TIMEOUT after 3600s |" "$tmp/out4"

# An fsx run of ours that fails on the series and passes on v7.3 fails
# the table like a test of fstests.
mkdir -p "$tmp/fst4/base-xfs" "$tmp/fst4/series-xfs"
printf '%s\n' "fsx/small 40s" "HARNESS: DONE 0" >"$tmp/fst4/base-xfs/results.log"
printf '%s\n' "fsx/small [failed, exit status 1] READ BAD DATA" "HARNESS: DONE 1" \
	>"$tmp/fst4/series-xfs/results.log"
rc=0; "$report" "$tmp/fst4" base series -- xfs >"$tmp/out5" 2>&1 || rc=$?
tap_check "fstests table: an fsx run that fails on the series fails it" "$rc" 1 "| fsx/small | pass | fail: \[failed, exit status 1\] READ BAD DATA |" "$tmp/out5"

if [ -f "$kernel" ]; then
	expect 2 "matches no dax kselftest" "--tests that matches nothing" -- \
		"$run" --kernel "$kernel" --tests 'no_such_test*'
fi

# A missing tool: a PATH that has everything but QEMU.
mkdir "$tmp/bin"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
	for t in "$d"/*; do
		[ -x "$t" ] && [ ! -e "$tmp/bin/${t##*/}" ] && ln -s "$t" "$tmp/bin/${t##*/}"
	done
done
rm -f "$tmp/bin"/qemu-system-*
if [ -f "$kernel" ]; then
	expect 2 "missing tool(s): qemu-system-x86_64" "QEMU not installed" -- \
		env PATH="$tmp/bin" "$run" --kernel "$kernel" -- true
fi

# The postings: only a person who can be reached signs them off, and a
# list that leaves a patch out or takes them out of order is refused.
expect 2 "takes no mail" "postings signed off by an address that takes no mail" -- \
	env POSTER="Team <team@users.noreply.example>" "$TOP/scripts/postings.sh" "$tmp/post"
expect 2 "is not 'Name <address>'" "postings by a POSTER without an address" -- \
	env POSTER="Nobody" "$TOP/scripts/postings.sh" "$tmp/post"
if [ -d "$BUILD/linux/.git" ]; then
	# The first posting's last patch left out.
	last=$(sed -n 's/^dax-fixes *| *1-\([0-9]*\) .*/\1/p' "$TOP/Documentation/postings/list")
	sed "s/^\(dax-fixes *| *\)1-$last /\11-$((last - 1)) /" \
		"$TOP/Documentation/postings/list" >"$tmp/gap.list"
	expect 2 "where patch $last comes next" \
		"a postings list that leaves a patch out" -- \
		env POSTINGS_CHECK=1 POSTER="A B <a@b.org>" POSTINGS_LIST="$tmp/gap.list" \
		"$TOP/scripts/postings.sh" "$tmp/post"
	# The first two postings as one: more than 15 patches.
	second=$(sed -n 's/^[a-z0-9-]* *| *[0-9]*-\([0-9]*\) .*/\1/p' \
		"$TOP/Documentation/postings/list" | sed -n 2p)
	awk -v last="$second" '/^[a-z]/ && n++ == 1 { next }
		/^dax-fixes / { sub(/\| *1-[0-9]* /, "| 1-" last " ") } { print }' \
		"$TOP/Documentation/postings/list" >"$tmp/big.list"
	expect 2 "post 15 or fewer at a time" "a posting of more than 15 patches" -- \
		env POSTINGS_CHECK=1 POSTER="A B <a@b.org>" POSTINGS_LIST="$tmp/big.list" \
		"$TOP/scripts/postings.sh" "$tmp/post"
fi

# A patch that does not apply: a copy of the repository whose last patch
# has a context line changed. The run must stop naming that patch and
# leave its tree at the base, with no git am in progress.
if [ -d "$BUILD/linux/.git" ]; then
	mkdir "$tmp/repo" "$tmp/repo/build"
	(cd "$TOP" && git ls-files -z | xargs -0 cp --parents -t "$tmp/repo")
	# A repository of its own (objects shared): its branches are not ours.
	git clone -q --shared --no-checkout "$BUILD/linux" "$tmp/repo/build/linux"
	# The last patch that changes a file it does not create.
	last=$(series_patches | tac | while read -r p; do
		awk '/^@@/ { h = 1 } h && /^ / { f = 1 } END { exit !f }' \
			"$TOP/patches/$p" && { echo "$p"; break; }; done)
	# The first context line of the first hunk.
	awk '!done && hunk && /^ / { $0 = " CORRUPTED" substr($0, 2); done = 1 }
	     /^@@/ { hunk = 1 } { print }' "$tmp/repo/patches/$last" >"$tmp/corrupt"
	cp "$tmp/corrupt" "$tmp/repo/patches/$last"
	# The run stops at git am, before anything boots: --kernel only
	# spares it a kernel build, so a file with a bzImage's magic will do.
	{ head -c 514 /dev/zero; printf HdrS; } >"$tmp/fake-bzImage"
	expect 2 "patches/$last does not apply" "a patch that does not apply" -- \
		env -u BUILD_DIR "$tmp/repo/qemu-run.sh" --kernel "$tmp/fake-bzImage" -- true
	n=$((n + 1))
	wt=$tmp/repo/build/series
	if [ -d "$wt" ] && [ -z "$(git -C "$wt" status --porcelain)" ] &&
	   [ ! -d "$(git -C "$wt" rev-parse --git-path rebase-apply)" ] &&
	   [ "$(git -C "$wt" rev-parse HEAD)" = "$(git -C "$wt" rev-parse "$BASE_TAG^{commit}")" ]; then
		echo "ok $n - failed git am leaves the tree clean at the base"
	else
		echo "not ok $n - failed git am left state behind in $wt"
		failed=$((failed + 1))
	fi
	git -C "$tmp/repo/build/linux" worktree remove --force "$wt" 2>/dev/null
fi

echo "# harness bad-input tests: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
