#!/bin/bash
# Fetch the pinned Debian linux-source package and turn it into a git tree
# with one tagged base commit: $BUILD/linux. Cached: a second run is a no-op.
# The machine's apt configuration is never touched: a private sources list
# and state directory live under $BUILD/apt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

tree=$BUILD/linux
if git -C "$tree" rev-parse -q --verify "refs/tags/$BASE_TAG" >/dev/null 2>&1; then
	echo "$tree"
	exit 0
fi
need_tools apt-get sha256sum dpkg-deb tar xz git

apt=$BUILD/apt
mirror=$(debian_mirror)
private_apt "$apt" "deb $mirror $BASE_SUITE main"
mkdir -p "$apt/deb"
deb=$apt/deb/${BASE_PKG}_${BASE_VERSION//:/%3a}_all.deb
if [ ! -f "$deb" ]; then
	log "fetching $BASE_PKG=$BASE_VERSION from $mirror $BASE_SUITE"
	apt-get -q "${aptopts[@]}" update >"$apt/update.log" 2>&1 ||
		die "apt-get update of $BASE_SUITE failed (see $apt/update.log)"
	if ! (cd "$apt/deb" && apt-get -q "${aptopts[@]}" download \
		"$BASE_PKG=$BASE_VERSION") >"$apt/download.log" 2>&1; then
		rm -f "$apt"/deb/*.deb
		die "package $BASE_PKG version $BASE_VERSION is not available from $mirror $BASE_SUITE; use KERNEL_SRC=/path/to/linux (a git tree) instead"
	fi
fi
echo "$BASE_SHA256  $deb" | sha256sum -c --quiet - >/dev/null 2>&1 || {
	rm -f "$deb"
	die "$deb does not match the pinned SHA256 $BASE_SHA256"
}

log "unpacking $BASE_PKG into $tree"
tmp=$BUILD/linux.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./$BASE_TARBALL" |
	xz -d | tar -x -C "$tmp" --strip-components=1
# Debian's stanza at the end of .gitignore ignores everything at the top
# level; the base commit must hold the whole tree.
sed -i '/^# Debian/,$d' "$tmp/.gitignore"
git -C "$tmp" init -q -b base
git -C "$tmp" add -A
# A fixed identity and date: the same package gives the same base commit.
GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z" \
	git -C "$tmp" -c user.name="dax harness" -c user.email=harness@localhost \
	commit -q -m "Linux $BASE_VERSION ($BASE_PKG from Debian $BASE_SUITE)"
git -C "$tmp" tag "$BASE_TAG"
rm -rf "$tree"
mv "$tmp" "$tree"
echo "$tree"
