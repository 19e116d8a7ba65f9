#!/bin/bash
# Usage: postings.sh [OUTDIR]
# The postings of Documentation/postings/list, ready for git send-email:
# OUTDIR/NAME/*.patch (default $BUILD/postings), each posting numbered
# on its own, on its own base (v7.3, or v7.3 and the postings it names as
# AFTER), with its cover letter (or notes) from NAME.txt, To: the one
# who merges it and Cc: everyone get_maintainer.pl names for any of its
# patches, on every message. Every patch is made the work of the person
# who posts it and carries that person's Signed-off-by: taken from
# POSTER="Name <address>" or else from git's user.name and user.email,
# as git format-patch -s does. The committed patches carry none: only a
# person can certify the DCO (Documentation/process/coding-assistants.rst,
# submitting-patches.rst). An identity on a domain that takes no mail is
# refused, unless POSTINGS_CHECK=1 (make check's own output, thrown away).
# OUTDIR/order lists the postings in order, each with those it applies
# on ("NAME AFTER..."), for make check.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -le 1 ] || die "usage: postings.sh [OUTDIR]"
# no_poster MESSAGE: the identity is missing or unusable.
no_poster() { die "$1"; }
out=${1:-$BUILD/postings}
# POSTINGS_LIST: another list, for the harness's tests.
list=${POSTINGS_LIST:-$TOP/Documentation/postings/list}
[ -f "$list" ] || die "no postings list $list"

poster=${POSTER:-}
if [ -z "$poster" ]; then
	name=$(git -C "$TOP" config user.name || true)
	email=$(git -C "$TOP" config user.email || true)
	{ [ -n "$name" ] && [ -n "$email" ]; } ||
		no_poster "who posts? set git's user.name and user.email, or POSTER='Name <address>': the postings carry that person's Signed-off-by"
	poster="$name <$email>"
fi
[[ $poster =~ ^([^\<]*[^\<[:space:]])[[:space:]]*\<([^@\<\>[:space:]]+@[^@\<\>[:space:]]+)\>$ ]] ||
	no_poster "POSTER '$poster' is not 'Name <address>'"
pname=${BASH_REMATCH[1]} pemail=${BASH_REMATCH[2]}
case ${pemail,,} in
*noreply*|*.example|*.invalid|*.test|*.localhost|*@localhost|*@example.com|*@example.org|*@example.net)
	[ "${POSTINGS_CHECK:-0}" = 1 ] ||
		no_poster "'$pemail' takes no mail: a Signed-off-by needs a person who can be reached (set POSTER or git's user.email)" ;;
esac

src=$("$TOP/scripts/apply-series.sh")
base=$(git -C "$src" rev-parse --verify "$BASE_TAG^{commit}")
mapfile -t stack < <(git -C "$src" rev-list --reverse "$base..HEAD")
[ "${#stack[@]}" -gt 0 ] || die "$src has no patches on the base"

# The list, checked: names, ranges that cover the stack in order once.
names=() ranges=() labels=() afters=() tos=() ccs=()
next=1
while IFS='|' read -r name range label after to cc; do
	name=$(echo "$name" | xargs) range=$(echo "$range" | tr -d ' ')
	label=$(echo "$label" | xargs)
	after=$(echo "$after" | xargs) to=$(echo "$to" | sed 's/^ *//; s/ *$//')
	cc=$(echo "$cc" | sed 's/^ *//; s/ *$//')
	[ -n "$name" ] || continue
	case $name in *[!a-z0-9-]*) die "$list: posting name '$name': use a-z, 0-9, -" ;; esac
	[[ $range =~ ^([0-9]+)(-([0-9]+))?$ ]] || die "$list: $name: PATCHES '$range' is not N or N-M"
	first=${BASH_REMATCH[1]} last=${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}
	{ [ "$first" = "$next" ] && [ "$last" -ge "$first" ]; } ||
		die "$list: $name: PATCHES $range, where patch $next comes next"
	next=$((last + 1))
	[ $((last - first + 1)) -le 15 ] ||
		die "$list: $name: $((last - first + 1)) patches; post 15 or fewer at a time"
	case $label in
	PATCH|"RFC PATCH") ;;
	*) die "$list: $name: LABEL '$label' is neither PATCH nor RFC PATCH" ;;
	esac
	[ -n "$to" ] || die "$list: $name has no TO"
	[ -f "$TOP/Documentation/postings/$name.txt" ] || die "no Documentation/postings/$name.txt"
	for a in ${after/#-/}; do
		printf '%s\n' "${names[@]}" | grep -xF "$a" >/dev/null ||
			die "$list: $name: AFTER names '$a', not an earlier posting"
	done
	names+=("$name") ranges+=("$first $last") labels+=("$label") afters+=("${after/#-/}") tos+=("$to") ccs+=("$cc")
done < <(sed 's/#.*//; /^[[:space:]]*$/d' "$list")
[ "$next" = $((${#stack[@]} + 1)) ] ||
	die "$list covers patches 1-$((next - 1)); the series has ${#stack[@]}"

# get_maintainer.pl for PATCH files: maintainers, reviewers and lists.
recipients() {
	(cd "$src" && PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 ./scripts/get_maintainer.pl \
		--no-rolestats --no-git --no-git-fallback --fixes --no-s \
		--no-keywords --m --r --l "$@")
}
folded() { paste -sd '\t' | sed 's/\t/,\n /g'; }

tmp=$(mktemp -d)
wt=$tmp/tree
# A branch and a notes ref of this run's own, removed at the end.
tag=postings-tmp-$$
cleanup() {
	git -C "$src" worktree remove --force "$wt" 2>/dev/null || true
	git -C "$src" update-ref -d "refs/notes/$tag" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
git -C "$src" worktree add -q --detach "$wt" "$base"
g() {
	GIT_AUTHOR_NAME=$pname GIT_AUTHOR_EMAIL=$pemail \
	GIT_COMMITTER_NAME=$pname GIT_COMMITTER_EMAIL=$pemail \
		git -C "$wt" -c user.name="$pname" -c user.email="$pemail" "$@"
}

# Only a directory this script made (it has an order file) is replaced.
if [ -e "$out" ] && [ ! -f "$out/order" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
	die "$out exists and is not a postings directory: not replacing it"
fi
rm -rf "$out"
mkdir -p "$out"
: >"$out/order"
declare -A own=()
for i in "${!names[@]}"; do
	name=${names[$i]}
	read -r first last <<<"${ranges[$i]}"
	# The posting's base: v7.3, then the postings it applies on.
	g checkout -q --detach "$base"
	for a in ${afters[$i]}; do
		g cherry-pick "${own[$a]}" >/dev/null ||
			die "$name: posting $a does not apply on the postings before it"
	done
	pbase=$(git -C "$wt" rev-parse HEAD)
	for ((p = first; p <= last; p++)); do
		g cherry-pick "${stack[$((p - 1))]}" >/dev/null ||
			die "$name: patch $p does not apply on its base"
		g commit -q --amend --no-edit --reset-author --signoff
	done
	own[$name]=$pbase..$(git -C "$wt" rev-parse HEAD)
	n=$((last - first + 1))
	txt=$TOP/Documentation/postings/$name.txt
	opts=(-q --no-signature --subject-prefix="${labels[$i]}" -o "$out/$name")
	if [ "$n" -gt 1 ]; then
		g checkout -q -b "$tag"
		g -c core.abbrev=12 -c "branch.$tag.description=$(cat "$txt")" \
			format-patch "${opts[@]}" --cover-letter --cover-from-description=subject \
			"$pbase..HEAD"
		g checkout -q --detach
		g branch -q -D "$tag"
		# As b4 prep records them: the posting's change-id, and those of
		# the postings it applies on, as prerequisites.
		{
			echo "change-id: $SERIES_CHANGE_ID-$name"
			for a in ${afters[$i]}; do
				echo "prerequisite-change-id: $SERIES_CHANGE_ID-$a:v1"
			done
		} >>"$out/$name/0000-cover-letter.patch"
	else
		g notes --ref="$tag" add -f -F "$txt" HEAD
		g -c core.abbrev=12 format-patch "${opts[@]}" --notes="$tag" "$pbase..HEAD"
	fi
	echo "$name ${afters[$i]}" >>"$out/order"
	to=${tos[$i]}
	pf=()
	for f in "$out/$name"/*.patch; do
		case ${f##*/} in 0000-cover-letter.patch) ;; *) pf+=("$f") ;; esac
	done
	found=$(recipients "${pf[@]}") || die "$name: get_maintainer.pl failed"
	cc=$( { echo "$found"; tr ',' '\n' <<<"${ccs[$i]}"; } |
		sed 's/^ *//; s/ *$//' | awk 'NF && !seen[$0]++' | grep -vxF "$to" || true)
	h="To: $to"
	[ -z "$cc" ] || h+=$'\n'"Cc: $(folded <<<"$cc")"
	for f in "$out/$name"/*.patch; do
		awk -v h="$h" '!done && /^Date: / { print; print h; done = 1; next } { print }' \
			"$f" >"$f.tmp" && mv "$f.tmp" "$f"
	done
	echo "$name: $n patch(es) on $([ -z "${afters[$i]}" ] && echo v7.3 || echo "v7.3 + ${afters[$i]}"), To: $to"
done
