#!/bin/bash
# Usage: get-fstests.sh
# Print the path of a built fstests tree: the checkout named by
# FSTESTS_SRC (a git checkout or a plain tree of
# git://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git or a mirror of it)
# copied to $BUILD/fstests, with this repository's own tests (fstests/,
# fstests-overlay.sh) put into the copy, and built there with make, so
# that the user's tree is never written. Rebuilt only when the source or
# fstests/ changes. The build dependencies come from
# scripts/install-deps.sh fstests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=${FSTESTS_SRC:-}
[ -n "$src" ] || die "FSTESTS_SRC is not set: name your fstests checkout, e.g. FSTESTS_SRC=~/src/xfstests-dev make fstests"
if [ ! -f "$src/check" ] || [ ! -f "$src/ltp/fsx.c" ]; then
	die "FSTESTS_SRC=$src does not look like fstests (no check, ltp/fsx.c)"
fi
need_tools rsync make gcc autoconf automake libtoolize
out=$BUILD/fstests
if git -C "$src" rev-parse --verify -q HEAD >/dev/null 2>&1 &&
	[ -z "$(git -C "$src" status --porcelain 2>/dev/null)" ]; then
	rev=$(git -C "$src" rev-parse HEAD)
else
	rev=tree-$(cd "$src" && find . -path ./.git -prune -o -type f -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
fi
# Our tests are part of what is built.
rev=$rev+overlay-$(cd "$TOP" && find fstests scripts/fstests-overlay.sh -type f -print0 |
	LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
if [ -x "$out/check" ] && [ "$(cat "$out/.harness-build-stamp" 2>/dev/null)" = "$rev" ]; then
	echo "$out"
	exit 0
fi
rm -rf "$out"
mkdir -p "$out" "$BUILD/logs"
rsync -a --exclude=.git "$src/" "$out/"
"$TOP/scripts/fstests-overlay.sh" "$out"
log "building fstests ($rev) in $out"
run_logged "$BUILD/logs/fstests-build.log" make -C "$out" -j"$(nproc)" ||
	die "the fstests build failed (did scripts/install-deps.sh fstests run?)"
[ -x "$out/ltp/fsx" ] || die "the fstests build made no ltp/fsx"
echo "$rev" >"$out/.harness-build-stamp"
echo "$out"
