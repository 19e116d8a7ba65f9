#!/bin/bash
# Usage: fstests-posting.sh [OUTDIR]
# The fstests posting of this repository's DAX tests (fstests/), ready for
# git send-email: OUTDIR (default $BUILD/postings/fstests-dax) gets
# git format-patch's cover letter and one patch per line of
# tests/fstests-posting, made on a worktree of the fstests checkout
# FSTESTS_SRC at its HEAD (FSTESTS_BASE names another commit): each commit
# puts its files in with fstests-overlay.sh (a helper with its build
# glue), its message is the header comment of its test, and the cover
# letter is Documentation/postings/fstests-dax.txt (first line: the
# subject). The patches carry base-commit:, To: and Cc: (the list's) and,
# like the kernel postings (postings.sh), the poster as author and the
# poster's Signed-off-by: POSTER="Name <address>" or git's user.name and
# user.email. An address that takes no mail is refused unless
# POSTINGS_CHECK=1 (a stand-in, for a look at the result). Each commit is
# checked to apply with git am on the base, and the last tree to build
# with make (FSTESTS_POSTING_BUILD=0 skips the build).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -le 1 ] || die "usage: fstests-posting.sh [OUTDIR]"
out=$(realpath -m "${1:-$BUILD/postings/fstests-dax}")
list=$TOP/tests/fstests-posting
cover=$TOP/Documentation/postings/fstests-dax.txt
[ -f "$list" ] || die "no $list"
[ -f "$cover" ] || die "no $cover"
src=${FSTESTS_SRC:-}
[ -n "$src" ] || die "FSTESTS_SRC is not set: name your fstests git checkout"
git -C "$src" rev-parse --verify -q HEAD >/dev/null 2>&1 ||
	die "FSTESTS_SRC=$src is not a git checkout: the posting needs fstests' history"
base=$(git -C "$src" rev-parse --verify "${FSTESTS_BASE:-HEAD}^{commit}") ||
	die "no commit ${FSTESTS_BASE:-HEAD} in $src"
need_tools git make

poster=${POSTER:-}
if [ -z "$poster" ]; then
	name=$(git -C "$TOP" config user.name || true)
	email=$(git -C "$TOP" config user.email || true)
	{ [ -n "$name" ] && [ -n "$email" ]; } ||
		die "who posts? set git's user.name and user.email, or POSTER='Name <address>': the patches carry that person's Signed-off-by"
	poster="$name <$email>"
fi
[[ $poster =~ ^([^\<]*[^\<[:space:]])[[:space:]]*\<([^@\<\>[:space:]]+@[^@\<\>[:space:]]+)\>$ ]] ||
	die "POSTER '$poster' is not 'Name <address>'"
pname=${BASH_REMATCH[1]} pemail=${BASH_REMATCH[2]}
case ${pemail,,} in
*noreply*|*.example|*.invalid|*.test|*.localhost|*@localhost|*@example.com|*@example.org|*@example.net)
	[ "${POSTINGS_CHECK:-0}" = 1 ] ||
		die "'$pemail' takes no mail: a Signed-off-by needs a person who can be reached (set POSTER or git's user.email)" ;;
esac

to=$(sed -n 's/^to:[[:space:]]*//p' "$list")
cc=$(sed -n 's/^cc:[[:space:]]*//p' "$list")
[ -n "$to" ] || die "$list has no to: line"
subjects=() filesets=()
while IFS='|' read -r subject files; do
	subject=$(echo "$subject" | sed 's/^ *//; s/ *$//')
	{ [ -n "$subject" ] && [ -n "${files// /}" ]; } || die "$list: '$subject': SUBJECT | FILES"
	subjects+=("$subject") filesets+=("$files")
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e '/^to:/d' -e '/^cc:/d' "$list")
[ ${#subjects[@]} -gt 0 ] || die "$list lists no commit"
# Every file of fstests/ goes into the posting, once.
listed=$(for f in "${filesets[@]}"; do
	read -r -a fs <<<"$f"
	printf '%s\n' "${fs[@]}"
done | LC_ALL=C sort)
have=$(cd "$TOP/fstests" && find . -type f -printf '%P\n' | LC_ALL=C sort)
[ "$listed" = "$have" ] || die "$list and fstests/ differ: $(diff <(echo "$listed") <(echo "$have") | grep '^[<>]' | tr '\n' ' ')"

tmp=$(mktemp -d)
wt=$tmp/fstests am=$tmp/am
cleanup() {
	git -C "$src" worktree remove --force "$wt" 2>/dev/null || true
	git -C "$src" worktree remove --force "$am" 2>/dev/null || true
	rm -rf "$tmp"
	git -C "$src" worktree prune 2>/dev/null || true
}
trap cleanup EXIT
git -C "$src" worktree add -q --detach "$wt" "$base"
g() {
	GIT_AUTHOR_NAME=$pname GIT_AUTHOR_EMAIL=$pemail \
	GIT_COMMITTER_NAME=$pname GIT_COMMITTER_EMAIL=$pemail \
		git -C "$wt" -c user.name="$pname" -c user.email="$pemail" "$@"
}

# The description of a test: its header comment from the line after
# "FS QA Test No. NNN" to the line before ". ./common/preamble".
description() {
	awk '
		/^# FS QA Test/ { on = 1; next }
		/^\. \.\/common\/preamble/ { exit }
		on { sub(/^# ?/, ""); print }
	' "$1" | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}'
}
# The kernel fixes a test names with _fixed_by_kernel_commit, one a line.
fixes() {
	sed -e ':a' -e '/\\$/{N;s/\\\n[[:space:]]*/ /;ba' -e '}' "$1" |
		sed -n 's/.*_fixed_by_kernel_commit [0-9a-fx]* *\("[^"]*"\).*/\1/p'
}

for i in "${!subjects[@]}"; do
	read -r -a files <<<"${filesets[$i]}"
	"$TOP/scripts/fstests-overlay.sh" "$wt" "${files[@]}"
	msg=$tmp/msg
	{
		echo "${subjects[$i]}"
		echo
		for f in "${files[@]}"; do
			case $f in
			tests/*/[0-9]*.out) ;;
			tests/*/[0-9]*)
				description "$TOP/fstests/$f"
				fx=$(fixes "$TOP/fstests/$f")
				if [ -n "$fx" ]; then
					echo
					if [ "$(wc -l <<<"$fx")" = 1 ]; then
						echo "The kernel fix, posted and not merged yet (the test names it with"
						echo "_fixed_by_kernel_commit xxxxxxxxxxxx until it has a commit id):"
					else
						echo "The kernel fixes, posted and not merged yet (the test names them with"
						echo "_fixed_by_kernel_commit xxxxxxxxxxxx until they have commit ids):"
					fi
					while read -r line; do echo "  $line"; done <<<"$fx"
				fi ;;
			esac
		done
	} >"$msg"
	g add -A .
	g commit -q -s -F "$msg"
done

if [ "${FSTESTS_POSTING_BUILD:-1}" = 1 ]; then
	log "building the posting's tree"
	run_logged "$tmp/build.log" make -C "$wt" -j"$(nproc)" ||
		die "the posting's tree does not build (log above)"
	for f in "$TOP"/fstests/src/*.c; do
		[ -x "$wt/src/$(basename "$f" .c)" ] || die "the build made no src/$(basename "$f" .c)"
	done
fi

# Only a directory this script made (it has a .fstests-posting mark) is replaced.
if [ -e "$out" ] && [ ! -f "$out/.fstests-posting" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
	die "$out exists and is not an fstests posting directory: not replacing it"
fi
rm -rf "$out"
mkdir -p "$out"
touch "$out/.fstests-posting"
g checkout -q -b "fstests-posting-$$"
g -c core.abbrev=12 -c "branch.fstests-posting-$$.description=$(cat "$cover")" \
	format-patch -q --no-signature --cover-letter --cover-from-description=subject \
	--base="$base" -o "$out" "$base..HEAD"
g checkout -q --detach
g branch -q -D "fstests-posting-$$"
h="To: $to"
[ -z "$cc" ] || h+=$'\n'"Cc: ${cc//, /,$'\n' }"
for f in "$out"/*.patch; do
	awk -v h="$h" '!done && /^Date: / { print; print h; done = 1; next } { print }' \
		"$f" >"$f.tmp" && mv "$f.tmp" "$f"
done

# The patches apply with git am on the base, in order.
git -C "$src" worktree add -q --detach "$am" "$base"
for f in "$out"/0*.patch; do
	case ${f##*/} in 0000-cover-letter.patch) continue ;; esac
	git -C "$am" -c user.name="$pname" -c user.email="$pemail" am -q "$f" ||
		die "${f##*/} does not apply with git am on $base"
done
[ -z "$(git -C "$am" diff "HEAD" "$(git -C "$wt" rev-parse HEAD)")" ] ||
	die "git am of the patches gives another tree than the commits"
git -C "$src" worktree remove --force "$am"
n=$(find "$out" -name '0*.patch' ! -name '0000-cover-letter.patch' | wc -l)
log "$n patches and a cover letter on fstests $(git -C "$src" log -1 --format='%h ("%s")' "$base") in $out"
echo "$out"
