#!/bin/bash
# Usage: regen-patches.sh [TREE [OUTDIR]]
# The round trip: turn the commits on TREE (default $BUILD/series) since
# the base into patches/ (git format-patch --cover-letter --base) and the
# order into ./series, and copy the kselftests as the series leaves them
# (tools/testing/selftests/dax/ of TREE's HEAD) to selftests/dax/. The
# cover letter comes from Documentation/cover-letter.txt (first line:
# subject). With OUTDIR, write all of it there instead (OUTDIR/series,
# OUTDIR/selftests/dax: make check compares that with what is committed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=${1:-$BUILD/series}
[ -z "${KERNEL_SRC:-}" ] || [ $# -ge 1 ] || tree=$BUILD/series-user
outdir=${2:-$TOP/patches}
seriesfile=$TOP/series seldir=$TOP/selftests/dax
[ $# -ge 2 ] && seriesfile=$outdir/series seldir=$outdir/selftests/dax
git -C "$tree" rev-parse --git-dir >/dev/null 2>&1 || die "$tree is not a git tree"
if [ -n "${KERNEL_SRC:-}" ]; then
	base=$(git -C "$KERNEL_SRC" rev-parse --verify "${KERNEL_BASE:-HEAD}^{commit}")
else
	base=$(git -C "$tree" rev-parse --verify "$BASE_TAG^{commit}")
fi
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
	die "$tree has uncommitted changes"
n=$(git -C "$tree" rev-list --count "$base..HEAD")
[ "$n" -gt 0 ] || die "$tree has no commits on top of ${base:0:12}"

branch=$(git -C "$tree" symbolic-ref -q --short HEAD) ||
	die "$tree: HEAD is detached; check out the series branch"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# format-patch takes the cover letter from the branch description.
# A fixed abbreviation keeps the index lines the same in every tree.
git -C "$tree" -c core.abbrev=12 \
	-c "branch.$branch.description=$(cat "$TOP/Documentation/cover-letter.txt")" \
	format-patch -q --cover-letter --cover-from-description=subject \
	--base="$base" --no-signature -o "$tmp" "$base..HEAD" \
	--subject-prefix="PATCH"

# get_maintainer.pl of the tree, one address per line: "maintainers" for
# To, "others" (reviewers and lists) for Cc, as b4 prep --auto-to-cc does.
recipients() {
	local who=$1; shift
	local opts=(--no-rolestats --no-git --no-git-fallback --no-fixes --no-s)
	case $who in
	maintainers) opts+=(--m --no-r --no-l) ;;
	others) opts+=(--no-m --r --l) ;;
	esac
	# A fixed hash seed: the same order of equally ranked names every run.
	(cd "$tree" && PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 \
		./scripts/get_maintainer.pl "${opts[@]}" "$@")
}

# folded ADDRESSES: "a,\n b" (one address per line in, a header value out).
folded() { paste -sd '\t' | sed 's/\t/,\n /g'; }

# add_recipients FILE TO CC: "To:" and "Cc:" lines (each left out when it
# has no addresses) after the Date: line.
add_recipients() {
	local f=$1 h=''
	[ -z "$2" ] || h="To: $(folded <<<"$2")"
	[ -z "$3" ] || h="${h:+$h$'\n'}Cc: $(folded <<<"$3")"
	[ -n "$h" ] || return 0
	awk -v h="$h" '!done && /^Date: / { print; print h; done = 1; next } { print }' \
		"$f" >"$f.tmp" && mv "$f.tmp" "$f"
}

[ -x "$tree/scripts/get_maintainer.pl" ] || die "$tree has no scripts/get_maintainer.pl"
all_to='' all_cc=''
for p in "$tmp"/*.patch; do
	case ${p##*/} in 0000-*) continue ;; esac
	to=$(recipients maintainers "$p")
	cc=$(recipients others "$p" | grep -vxF -f <(echo "$to") || true)
	add_recipients "$p" "$to" "$cc"
	all_to=$(printf '%s\n%s\n' "$all_to" "$to")
	all_cc=$(printf '%s\n%s\n' "$all_cc" "$cc")
done
all_to=$(echo "$all_to" | awk 'NF && !seen[$0]++')
all_cc=$(echo "$all_cc" | awk 'NF && !seen[$0]++' | grep -vxF -f <(echo "$all_to") || true)
cover=$(echo "$tmp"/0000-*.patch)
add_recipients "$cover" "$all_to" "$all_cc"
# What b4 prep records: the series' change-id, next to base-commit.
sed -i "s/^base-commit: .*/&\nchange-id: $SERIES_CHANGE_ID/" "$cover"

mkdir -p "$outdir"
rm -f "$outdir"/*.patch
cp "$tmp"/*.patch "$outdir/"
for p in "$outdir"/*.patch; do
	case ${p##*/} in 0000-*) ;; *) echo "${p##*/}" ;; esac
done >"$seriesfile"
# The kselftests as files, for readers who do not apply the series.
git -C "$tree" cat-file -e HEAD:tools/testing/selftests/dax 2>/dev/null ||
	die "$tree has no tools/testing/selftests/dax"
rm -rf "$seldir"
mkdir -p "$seldir"
git -C "$tree" archive HEAD tools/testing/selftests/dax |
	tar -x -C "$seldir" --strip-components=4
# The tree now holds exactly the series: let apply-series.sh reuse it.
if [ "$outdir" = "$TOP/patches" ]; then
	echo "$(series_hash "$base") $(git -C "$tree" rev-parse HEAD)" >"$tree.stamp"
fi
