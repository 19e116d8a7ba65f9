#!/bin/bash
# Usage: check.sh [CHECK...]
# Everything a maintainer runs before posting the series (make check).
# Each check prints PASS/FAIL/SKIP with its time; its output goes to
# $BUILD/check/NAME.log and is shown when it fails. The last line is
# "N passed, N failed[, N skipped]". Exit 0 only if nothing failed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# The checks, in order: the one list of them.
checks=(
	shellcheck        # every harness script passes shellcheck
	verdict           # verdict.sh judges prepared guest logs right
	series-files      # series and patches/ agree; patches/ and selftests/dax are what regen gives
	series-applies    # the series applies to the pinned base with git am
	b4                # b4 am takes the series from a list mbox, in order
	checkpatch        # checkpatch.pl --strict on the postings: no errors, no warnings
	kernel-doc        # kernel-doc -none -Wall on touched C files: nothing new
	kernel-configs    # every profile in kernel-config/ configures, nothing dropped
	kernel-build      # bzImage of the default profile, at the tip
	bisect-build      # every patch builds (W=1, touched objects) in order
	postings          # each posting: signed off by its poster alone, b4 takes it, applies and builds on its base
	sparse            # sparse (C=2) on touched objects: nothing new vs base
	sparse-catches    # the sparse check fails on a patch adding a warning
	selftests-build   # make -C tools/testing/selftests TARGETS=dax
	bad-input         # the harness's own tests: bad input fails cleanly
	guest-ext4        # dax kselftests in QEMU on ext4, lockdep, clean log
	guest-xfs         # dax kselftests in QEMU on xfs, lockdep, clean log
	crash-ext4        # MAP_SYNC crash cycles on ext4
	crash-xfs         # MAP_SYNC crash cycles on xfs
	fuzz              # dax-fuzz: its checks can fail (host); a fixed-seed run on ext4, xfs and xfs -d su=2m
	bad-guest         # a panicking and a hanging guest fail the verdict
)

src=
branch=
profile=default
obj=$BUILD/obj-$profile
kernel=$obj/arch/x86/boot/bzImage
base=

check_shellcheck() {
	local files
	mapfile -t files < <(cd "$TOP" && { ls qemu-run.sh scripts/*.sh .ci/run guest/*.sh guest/init tests/*.sh; } 2>/dev/null)
	(cd "$TOP" && shellcheck -x "${files[@]}")
}

# Every profile, not only the one built below: a profile nobody builds
# would otherwise rot unnoticed (kasan did, on SLUB_TINY).
check_kernel-configs() {
	local f p rc=0 tmp
	ensure_tree || return 1
	tmp=$(mktemp -d)
	for f in "$TOP"/kernel-config/*.config; do
		p=$(basename "$f" .config)
		[ "$p" = base ] && continue
		"$TOP/scripts/configure-kernel.sh" "$src" "$tmp/$p" "$p" || rc=1
	done
	rm -rf "$tmp"
	return "$rc"
}

check_bad-input() { "$TOP/tests/harness-tests.sh"; }
check_verdict() { "$TOP/tests/verdict-tests.sh"; }

check_series-files() {
	local tmp rc=0 p names
	# One read of series: grep -q in a pipe would end sed with SIGPIPE
	# (pipefail) once series outgrows sed's first write.
	names=$(series_patches)
	for p in "$TOP"/patches/*.patch; do
		case ${p##*/} in 0000-*) continue ;; esac
		grep -qxF "${p##*/}" <<<"$names" ||
			{ echo "patches/${p##*/} is not in series"; rc=1; }
	done
	while read -r p; do
		[ -f "$TOP/patches/$p" ] || { echo "series names $p, not in patches/"; rc=1; }
	done < <(series_patches)
	[ "$rc" = 0 ] || return 1
	ensure_tree || return 1
	tmp=$(mktemp -d)
	"$TOP/scripts/regen-patches.sh" "$src" "$tmp" || { rm -rf "$tmp"; return 1; }
	# Commit ids (the base's too) and the cover letter's date differ
	# between trees; everything else must be identical.
	diff -ru -I '^From [0-9a-f]\{40\} ' -I '^Date: ' -I '^base-commit: ' \
		"$TOP/patches" "$tmp" --exclude=series --exclude=selftests &&
		diff -u "$TOP/series" "$tmp/series" &&
		diff -ru "$TOP/selftests/dax" "$tmp/selftests/dax" || rc=1
	rm -rf "$tmp"
	[ "$rc" = 0 ] || echo "patches/, series or selftests/dax differ from what scripts/regen-patches.sh makes (see diff above; make regen)"
	return "$rc"
}

ensure_tree() {
	[ -n "$src" ] && return 0
	src=$("$TOP/scripts/apply-series.sh") || return 1
	branch=$(git -C "$src" symbolic-ref --short HEAD)
	if [ -n "${KERNEL_SRC:-}" ]; then
		base=$(git -C "$KERNEL_SRC" rev-parse "${KERNEL_BASE:-HEAD}^{commit}")
	else
		base=$(git -C "$src" rev-parse "$BASE_TAG^{commit}")
	fi
}

check_series-applies() {
	ensure_tree || return 1
	echo "$(git -C "$src" rev-list --count "$base..HEAD") patches applied in $src"
}

# The postings (scripts/postings.sh) as make regen's user would send
# them, made once per run with a stand-in poster: what checkpatch and
# the postings check read. The committed patches carry no Signed-off-by.
check_poster="Patch Poster <poster@example.org>"
postings_dir=
ensure_postings() {
	[ -n "$postings_dir" ] && return 0
	ensure_tree || return 1
	POSTINGS_CHECK=1 POSTER=$check_poster \
		"$TOP/scripts/postings.sh" "$BUILD/check/postings" >/dev/null || return 1
	postings_dir=$BUILD/check/postings
}

# posting_patches NAME: the patch files of a posting, without its cover.
posting_patches() {
	local f
	for f in "$postings_dir/$1"/*.patch; do
		case ${f##*/} in 0000-cover-letter.patch) ;; *) echo "$f" ;; esac
	done
}

# Errors and warnings fail; --strict's CHECKs are listed (the tracepoint
# macros and xfs's function definition style always draw some). The base
# tree from Debian's source package has no upstream history, so commit
# ids in Fixes: tags cannot be looked up here (UNKNOWN_COMMIT_ID). It
# reads the postings: the form in which the patches carry a sign-off.
check_checkpatch() {
	local p name rc=0 out
	ensure_postings || return 1
	while read -r name _; do
		while read -r p; do
			out=$(cd "$src" && ./scripts/checkpatch.pl --strict --no-tree -q \
				--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID "$p" 2>&1)
			if [ -z "$out" ]; then
				echo "$name/${p##*/}: clean"
				continue
			fi
			echo "$name/${p##*/}:"
			echo "$out"
			echo "$out" | grep -Eq '^(ERROR|WARNING):' && rc=1
		done < <(posting_patches "$name")
	done <"$postings_dir/order"
	return "$rc"
}

# Objects (relative to the tree) built from the C files in the directories
# that COMMITS touch, as far as the configured build has them.
touched_objects() {
	local f d c
	for d in $(git -C "$src" diff --name-only "$@" -- '*.c' '*.h' ':!tools' |
		   xargs -rn1 dirname | sort -u); do
		case $d in include*) continue ;; esac
		for c in "$src/$d"/*.c; do
			f=${c#"$src"/}
			[ -f "$obj/${f%.c}.o" ] && echo "${f%.c}.o"
		done
	done | sort -u
}

# Objects of the C files that COMMITS change.
changed_objects() {
	local f
	for f in $(git -C "$src" diff --name-only "$@" -- '*.c' ':!tools'); do
		[ -f "$obj/${f%.c}.o" ] && echo "${f%.c}.o"
	done
}

# build_objects SRC OBJ OBJECTS...: with W=1; nothing if no OBJECTS.
build_objects() {
	local tree=$1 out=$2
	shift 2
	[ $# -gt 0 ] || return 0
	kmake "$tree" "$out" -s W=1 "$@"
}

# Builds at other commits than the tip happen in a worktree and build
# directory of their own, so that the tip's build stays up to date.
bwt=$BUILD/bisect
bobj=$BUILD/obj-bisect
bisect_tree() {
	if [ ! -d "$bwt" ]; then
		git -C "$src" worktree prune
		git -C "$src" worktree add -q --detach "$bwt" HEAD || return 1
	fi
	"$TOP/scripts/configure-kernel.sh" "$bwt" "$bobj" "$profile"
}

check_bisect-build() {
	local c rc=0 objs
	ensure_tree || return 1
	[ -f "$kernel" ] || check_kernel-build || return 1
	bisect_tree || return 1
	for c in $(git -C "$src" rev-list --reverse "$base..$branch"); do
		git -C "$bwt" checkout -q --detach "$c" || return 1
		echo "== $(git -C "$bwt" log -1 --format='%h %s' "$c")"
		mapfile -t objs < <(touched_objects "$c^" "$c")
		build_objects "$bwt" "$bobj" "${objs[@]}" || rc=1
		if git -C "$bwt" diff --name-only "$c^" "$c" | grep '^tools/testing/selftests/dax/' >/dev/null; then
			kmake "$bwt" "$bobj" -s headers &&
				make -s -C "$bwt/tools/testing/selftests" O="$bobj/kselftest" \
				KHDR_INCLUDES="-isystem $bobj/usr/include" TARGETS=dax >/dev/null ||
				rc=1
		fi
		[ "$rc" = 0 ] || { echo "build fails at $c"; break; }
	done
	return "$rc"
}

# Each posting: its patches are the poster's, with the poster's
# Signed-off-by as their last trailer and none other; git am applies it
# on its own base (v7.3, or v7.3 and the postings it names) in the bisect
# worktree, and every commit that gives a tree the series never had is
# built (W=1, touched objects; the others bisect-build built); b4 am
# takes it from a list mbox, and its output gives the same tree. The
# last posting ends at the series' tree.
check_postings() {
	local name after a p c t rc=0 n tmp msgid pbase tip
	local -A stack_trees=()
	ensure_postings || return 1
	if grep -l '^Signed-off-by:' "$TOP"/patches/*.patch; then
		echo "committed patches above carry a Signed-off-by: only the poster's belongs, in the postings"
		return 1
	fi
	[ -f "$kernel" ] || check_kernel-build || return 1
	bisect_tree || return 1
	for c in $(git -C "$src" rev-list "$base..$branch"); do
		stack_trees[$(git -C "$src" rev-parse "$c^{tree}")]=1
	done
	tmp=$(mktemp -d)
	am() { git -C "$bwt" -c user.name=harness -c user.email=harness@localhost am -q "$@"; }
	while read -r name after; do
		n=0
		while read -r p; do
			n=$((n + 1))
			grep -qxF "From: $check_poster" "$p" ||
				{ echo "$name/${p##*/}: From: is not the poster"; rc=1; }
			t=$(awk '/^---$/ { print last; exit } /^[A-Za-z-]+: / { last = $0 }' "$p")
			[ "$t" = "Signed-off-by: $check_poster" ] ||
				{ echo "$name/${p##*/}: last trailer is '$t', not the poster's Signed-off-by"; rc=1; }
			[ "$(grep -c '^Signed-off-by:' "$p")" = 1 ] ||
				{ echo "$name/${p##*/}: more than one Signed-off-by"; rc=1; }
		done < <(posting_patches "$name")
		git -C "$bwt" checkout -q --detach "$base" || { rc=1; break; }
		for a in $after; do
			mapfile -t files < <(posting_patches "$a")
			am "${files[@]}" || { echo "$name: posting $a does not apply before it"; rc=1; break 2; }
		done
		pbase=$(git -C "$bwt" rev-parse HEAD)
		mapfile -t files < <(posting_patches "$name")
		am "${files[@]}" || { echo "$name does not apply on its base"; git -C "$bwt" am --abort; rc=1; break; }
		tip=$(git -C "$bwt" rev-parse HEAD)
		echo "== $name: $n patch(es) apply on $([ -n "$after" ] && echo "v7.3 + $after" || echo v7.3)"
		for c in $(git -C "$bwt" rev-list --reverse "$pbase..$tip"); do
			[ -z "${stack_trees[$(git -C "$bwt" rev-parse "$c^{tree}")]:-}" ] || continue
			echo "   building $(git -C "$bwt" log -1 --format='%s' "$c") (a tree of its own)"
			git -C "$bwt" checkout -q --detach "$c" || { rc=1; break 2; }
			mapfile -t objs < <(touched_objects "$c^" "$c")
			build_objects "$bwt" "$bobj" "${objs[@]}" || { echo "build fails at $c"; rc=1; break 2; }
		done
		msgid="<0.$SERIES_CHANGE_ID.$name@harness.invalid>"
		"$TOP/scripts/series-mbox.sh" "$postings_dir/$name" >"$tmp/$name.mbox" || { rc=1; break; }
		b4_take "$bwt" "$tmp/$name.mbox" "$msgid" "$tmp/$name" "$n" >"$tmp/$name.b4" ||
			{ cat "$tmp/$name.b4"; echo "$name: b4 am failed"; rc=1; break; }
		if git -C "$bwt" checkout -q --detach "$pbase" && am "$tmp/$name"/*.mbx &&
			[ "$(git -C "$bwt" rev-parse "HEAD^{tree}")" = "$(git -C "$bwt" rev-parse "$tip^{tree}")" ]; then
			echo "   b4 am: $n patch(es), the same tree"
		else
			echo "$name: b4's mbox does not give the posting's tree"
			rc=1
		fi
	done <"$postings_dir/order"
	rm -rf "$tmp"
	[ "$rc" = 0 ] || return 1
	[ "$(git -C "$bwt" rev-parse "$tip^{tree}")" = "$(git -C "$src" rev-parse "$branch^{tree}")" ] ||
		{ echo "the last posting does not end at the series' tree"; return 1; }
	echo "the last posting ends at the series' tree"
}

# Warnings of sparse (or kernel-doc), without line numbers, so that the
# base and the series can be compared.
# Warning and error lines (sparse: "file:line:col: warning:", kernel-doc:
# "Warning: file:line ..."), without line and column numbers, sorted.
normalize_warnings() {
	{ grep -iE 'warning|error' || true; } |
		sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/; s/:[0-9]+ / /' | sort -u
}

sparse=
sparse_at() {
	local rev=$1; shift
	git -C "$bwt" checkout -q --detach "$rev" || return 1
	kmake "$bwt" "$bobj" C=2 CHECK="$sparse" "$@" 2>&1 >/dev/null | normalize_warnings
}

# sparse_compare OLD NEW OBJECTS...: prints the warnings NEW adds to OLD
# on OBJECTS; fails if there are any.
sparse_compare() {
	local old=$1 new=$2 before after rc=0
	shift 2
	after=$(sparse_at "$new" "$@") || rc=1
	before=$(sparse_at "$old" "$@") || rc=1
	echo "sparse on $# objects: $(echo "$after" | grep -c .) warnings at $new, $(echo "$before" | grep -c .) at $old"
	if comm -13 <(echo "$before") <(echo "$after") | grep .; then
		echo "new sparse warnings (above)"
		rc=1
	fi
	return "$rc"
}

# A sparse the tree accepts: the installed one, or Debian's built here.
# Kbuild silently skips one it considers too old; then the check would
# prove nothing, so the probe must not say so.
sparse_ready() {
	local probe
	ensure_tree || return 1
	[ -f "$kernel" ] || check_kernel-build || return 1
	bisect_tree || return 1
	[ -n "$sparse" ] && return 0
	sparse=$("$TOP/scripts/get-sparse.sh" "$src") || return $?
	probe=$(kmake "$bwt" "$bobj" C=2 CHECK="$sparse" fs/dax.o 2>&1)
	if [[ $probe == *"sparse is not available or not up to date"* ]]; then
		echo "Kbuild does not run $sparse"
		return 1
	fi
	echo "sparse: $sparse ($("$sparse" --version))"
}

check_sparse() {
	local objs
	sparse_ready || return $?
	mapfile -t objs < <(changed_objects "$base" "$branch")
	[ ${#objs[@]} -gt 0 ] || { echo "no kernel objects touched"; return 0; }
	sparse_compare "$base" "$branch" "${objs[@]}"
}

# The sparse check fails on a patch that adds a sparse warning: a __user
# pointer dereferenced in fs/dax.c, on top of the series, committed on a
# detached HEAD of the bisect worktree (no branch moves).
check_sparse-catches() {
	local bad out rc
	sparse_ready || return $?
	git -C "$bwt" checkout -q --detach "$branch" || return 1
	printf '\nint dax_sparse_probe(int __user *p);\nint dax_sparse_probe(int __user *p)\n{\n\treturn *p;\n}\n' \
		>>"$bwt/fs/dax.c"
	git -C "$bwt" -c user.name=harness -c user.email=harness@localhost \
		commit -q -a -m "sparse probe: dereference a __user pointer" || return 1
	bad=$(git -C "$bwt" rev-parse HEAD)
	out=$(sparse_compare "$branch" "$bad" fs/dax.o)
	rc=$?
	echo "$out"
	if [ "$rc" -eq 0 ] || ! grep -q 'dereference of noderef expression' <<<"$out"; then
		echo "the sparse check did not fail on a dereferenced __user pointer"
		return 1
	fi
	echo "the sparse check fails on the probe patch, naming the warning"
}

# b4_take TREE MBOX MSGID OUTDIR N: b4 am of the thread MSGID in MBOX,
# run in TREE, into OUTDIR; fails unless it finds N patches and reports
# nothing missing, out of order, or wrong. Prints what b4 said.
b4_take() {
	local tree=$1 mbox=$2 msgid=$3 outdir=$4 n=$5 out rc=0
	mkdir -p "$outdir"
	out=$(cd "$tree" && b4 --offline-mode am --no-parent -m "$mbox" \
		-o "$outdir" "$msgid" 2>&1) || rc=1
	echo "$out" | grep -v '^  [[ ]'
	grep -q "^Total patches: $n\$" <<<"$out" ||
		{ echo "b4 did not find the $n patches"; rc=1; }
	if grep -Ei 'missing|out of order|WARNING|ERROR' <<<"$out" >/dev/null; then
		echo "b4 reported a problem (above)"
		rc=1
	fi
	return "$rc"
}

# The series as a list carries it (series-mbox.sh) through b4 am, in the
# pinned base's tree: b4 must find every patch in order, nothing missing,
# and what it writes must apply with git am and give the series' tree.
check_b4() {
	local tmp out msgid n rc=0
	ensure_tree || return 1
	command -v b4 >/dev/null || { echo "b4 is not installed (make deps)"; return 1; }
	tmp=$(mktemp -d)
	msgid="0.$SERIES_CHANGE_ID@harness.invalid"
	"$TOP/scripts/series-mbox.sh" >"$tmp/series.mbox" || return 1
	git -C "$src" worktree add -q --detach "$tmp/tree" "$base" || return 1
	n=$(series_patches | grep -c .)
	out=$(b4_take "$tmp/tree" "$tmp/series.mbox" "$msgid" "$tmp/out" "$n") || rc=1
	echo "$out"
	grep -q "^ Base: .*$base" <<<"$out" ||
		{ echo "b4 did not use the series' base-commit $base"; rc=1; }
	if [ "$rc" -eq 0 ]; then
		git -C "$tmp/tree" -c user.name=harness -c user.email=harness@localhost \
			am -q "$tmp"/out/*.mbx || rc=1
		[ "$(git -C "$tmp/tree" rev-parse "HEAD^{tree}")" = "$(git -C "$src" rev-parse "$branch^{tree}")" ] ||
			{ echo "b4's mbox does not give the series' tree"; rc=1; }
	fi
	# And the check sees a lost patch: the same mbox without patch 2.
	awk '/^From [0-9a-f]+ Mon Sep 17 00:00:00 2001$/ { n++ } n != 3' "$tmp/series.mbox" >"$tmp/lossy.mbox"
	mkdir "$tmp/out2"
	out=$(cd "$tmp/tree" && b4 --offline-mode am --no-parent -m "$tmp/lossy.mbox" \
		-o "$tmp/out2" "$msgid" 2>&1)
	grep -q 'missing \[2/' <<<"$out" ||
		{ echo "b4 did not report patch 2 missing from a lossy mbox"; rc=1; }
	git -C "$src" worktree remove --force "$tmp/tree"
	rm -rf "$tmp"
	[ "$rc" -eq 0 ] && echo "b4 am: $n patches in order, applied to the base, same tree as the series; patch 2 dropped: reported missing"
	return "$rc"
}

# kernel-doc's warnings for FILE (read from DIR/FILE), the path as F and
# without line numbers, sorted.
kernel_doc_warnings() {
	(cd "$src" && ./scripts/kernel-doc -none -Wall "$1/$2" 2>&1) |
		sed "s|$1/$2|F|g" | normalize_warnings
}

check_kernel-doc() {
	local files f rc=0 new tmp
	ensure_tree || return 1
	mapfile -t files < <(git -C "$src" diff --name-only --diff-filter=AM "$base" HEAD -- '*.c' '*.h' ':!tools')
	[ ${#files[@]} -gt 0 ] || { echo "no kernel C files touched"; return 0; }
	# kernel-doc reads files only (not a pipe): the base's copy goes here.
	tmp=$(mktemp -d)
	for f in "${files[@]}"; do
		mkdir -p "$tmp/$(dirname "$f")"
		git -C "$src" show "$base:$f" >"$tmp/$f" 2>/dev/null || : >"$tmp/$f"
		new=$(comm -13 <(kernel_doc_warnings "$tmp" "$f") \
			<(kernel_doc_warnings "$src" "$f"))
		if [ -n "$new" ]; then
			echo "$f:"; echo "$new"; rc=1
		else
			echo "$f: nothing new"
		fi
	done
	rm -rf "$tmp"
	return "$rc"
}

check_selftests-build() {
	ensure_tree || return 1
	"$TOP/scripts/configure-kernel.sh" "$src" "$obj" "$profile" &&
		"$TOP/scripts/build-selftests.sh" "$src" "$obj" "$BUILD/kselftest-install" &&
		"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio" "$BUILD/kselftest-install" &&
		ls "$BUILD/kselftest-install/dax"
}

check_kernel-build() {
	ensure_tree || return 1
	"$TOP/scripts/build-kernel.sh" "$src" "$obj" "$profile"
}

need_guest() {
	[ -f "$kernel" ] || check_kernel-build || return 1
	[ -f "$BUILD/initramfs.cpio" ] || check_selftests-build || return 1
}

guest_run() {
	need_guest || return 1
	"$TOP/qemu-run.sh" --kernel "$kernel" "$@"
}

check_guest-ext4() { guest_run --fs ext4; }
check_guest-xfs() { guest_run --fs xfs; }
check_crash-ext4() { need_guest && "$TOP/scripts/crash-cycles.sh" "$kernel" ext4 5; }
check_crash-xfs() { need_guest && "$TOP/scripts/crash-cycles.sh" "$kernel" xfs 5; }

# dax-fuzz (Documentation/fuzz.md): its own tests on the host (a wrong
# model must fail it), then a short fixed-seed run, 1000 operations from
# seed 1 (the first two rounds of make fuzz), on ext4, xfs and xfs -d
# su=2m in one guest; a failure the fuzzer reports fails the check. A few
# minutes.
check_fuzz() {
	"$TOP/tests/fuzz-tests.sh" || return 1
	need_guest || return 1
	guest_run --fs xfs --timeout 900 -- \
		'/harness/fuzz-guest.sh ext4 -s 1 -n 1000 -S 120 && /harness/fuzz-guest.sh xfs -s 1 -n 1000 -S 120 && /harness/fuzz-guest.sh xfs-su2m -s 1 -n 1000 -S 120'
}

# A guest that panics, and one that hangs, must fail the verdict with 1.
check_bad-guest() {
	local rc
	need_guest || return 1
	rc=0; guest_run -- 'echo c >/proc/sysrq-trigger' || rc=$?
	[ "$rc" = 1 ] || { echo "panicking guest: exit $rc, want 1"; return 1; }
	rc=0; guest_run --timeout 30 -- 'sleep 600' || rc=$?
	[ "$rc" = 1 ] || { echo "hanging guest: exit $rc, want 1"; return 1; }
	echo "panic and hang both fail the verdict"
}

# A check that runs out of disk fails wherever it writes next, with
# whatever error that tool prints: say so beside the failure.
disk_note() {
	local free
	free=$(df -Pm "$BUILD" 2>/dev/null | awk 'NR == 2 { print $4 }')
	[ -n "$free" ] && [ "$free" -lt 1024 ] &&
		echo "    (the filesystem of $BUILD has $free MiB free: a full disk may be the cause)"
	return 0
}

run_check() {
	local name=$1 start=$SECONDS rc=0 logf=$BUILD/check/$1.log
	"check_$name" >"$logf" 2>&1 || rc=$?
	case $rc in
	0) echo "PASS: $name ($((SECONDS - start))s)"; passed=$((passed + 1)) ;;
	4) echo "SKIP: $name ($((SECONDS - start))s)"; skipped=$((skipped + 1)) ;;
	*) echo "FAIL: $name ($((SECONDS - start))s, log $logf):"
	   tail -n 40 "$logf" | sed 's/^/    /'
	   disk_note
	   failed=$((failed + 1)) ;;
	esac
}

mkdir -p "$BUILD/check"
want=("$@")
[ ${#want[@]} -gt 0 ] || want=("${checks[@]}")
passed=0 failed=0 skipped=0
for c in "${want[@]}"; do
	declare -F "check_$c" >/dev/null || die "unknown check '$c' (have: ${checks[*]})"
	run_check "$c"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
