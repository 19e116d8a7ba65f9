#!/bin/bash
# Usage: apply-series.sh
# Print the path of a kernel tree with the series (patches/ in the order
# of ./series) applied with git am, on a branch of its own:
#   default          worktree $BUILD/series of the pinned base ($BUILD/linux)
#   KERNEL_SRC=DIR   worktree $BUILD/series-user of the user's git tree at
#                    KERNEL_BASE (default: its HEAD); the user's own work
#                    tree and branches are never touched
# The tree is reused when it already holds exactly this series. It is
# never reset over uncommitted changes or commits that are not in
# patches/ (make regen puts those into patches/). A patch that fails to
# apply is named and shown, and the tree is left at its base.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${KERNEL_SRC:-}" ]; then
	git -C "$KERNEL_SRC" rev-parse --git-dir >/dev/null 2>&1 ||
		die "KERNEL_SRC=$KERNEL_SRC is not a git tree"
	repo=$(cd "$KERNEL_SRC" && pwd)
	base=$(git -C "$repo" rev-parse --verify "${KERNEL_BASE:-HEAD}^{commit}") ||
		die "KERNEL_BASE=${KERNEL_BASE:-HEAD} is not a commit in $repo"
	wt=$BUILD/series-user branch=dax-series-harness
else
	repo=$("$TOP/scripts/get-base.sh")
	base=$(git -C "$repo" rev-parse "$BASE_TAG^{commit}")
	wt=$BUILD/series branch=dax-series
fi

mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "series lists no patches"
for p in "${patches[@]}"; do
	[ -f "$TOP/patches/$p" ] || die "series names patches/$p, which does not exist"
done
want=$(series_hash "$base")
stamp=$wt.stamp

if [ -d "$wt" ]; then
	[ -z "$(git -C "$wt" status --porcelain --untracked-files=no)" ] ||
		die "$wt has uncommitted changes; commit them (and make regen) or remove them"
	head=$(git -C "$wt" rev-parse HEAD)
	s_want='' s_head=$base
	[ -f "$stamp" ] && read -r s_want s_head <"$stamp"
	if [ "$s_want" = "$want" ] && [ "$s_head" = "$head" ]; then
		echo "$wt"
		exit 0
	fi
	# HEAD is neither the base nor what the harness applied last.
	[ "$s_head" = "$head" ] ||
		die "$wt has commits that are not in patches/ (run make regen first)"
else
	git -C "$repo" worktree prune
	git -C "$repo" worktree add -q --detach "$wt" "$base"
fi

log "applying ${#patches[@]} patches onto ${base:0:12} in $wt"
git -C "$wt" checkout -q -B "$branch" "$base"
rm -f "$stamp"
for p in "${patches[@]}"; do
	if ! git -C "$wt" -c user.name="dax harness" -c user.email=harness@localhost \
		am -q --keep-cr "$TOP/patches/$p" >"$BUILD/am.log" 2>&1; then
		log "error: patches/$p does not apply to ${base:0:12}:"
		sed -n '1,10p' "$BUILD/am.log" >&2
		git -C "$wt" am --show-current-patch=diff 2>/dev/null | sed -n '1,30p' >&2
		git -C "$wt" am --abort >/dev/null 2>&1 || true
		git -C "$wt" checkout -q -B "$branch" "$base"
		exit "$EX_SETUP"
	fi
done
echo "$want $(git -C "$wt" rev-parse HEAD)" >"$stamp"
echo "$wt"
