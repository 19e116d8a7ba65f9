#!/bin/bash
# Usage: get-ndctl.sh
# Print the path of a built ndctl tree with its tests: the upstream
# tarball of Debian's ndctl source package (version and SHA256 pinned in
# scripts/base.env) from the Debian mirror, unpacked into $BUILD/ndctl
# and built there with meson (-Dtest=enabled -Ddestructive=enabled; no
# docs or systemd), in $BUILD/ndctl/build. Rebuilt only when
# the pin or this script changes. The build dependencies come from
# scripts/install-deps.sh ndctl; the download keeps apt's own state
# under $BUILD/apt-ndctl and never touches the machine's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || die "usage: get-ndctl.sh"
out=$BUILD/ndctl
want=$(cat "$TOP/scripts/base.env" "$0" | sha256sum | cut -d' ' -f1)
if [ -x "$out/build/ndctl/ndctl" ] && [ -x "$out/build/test/dax-pmd" ] &&
	[ "$(cat "$out/.harness-build-stamp" 2>/dev/null)" = "$want" ]; then
	echo "$out"
	exit 0
fi
need_tools meson ninja gcc pkg-config sha256sum tar
helper=/usr/lib/apt/apt-helper
[ -x "$helper" ] || die "$helper is missing (Debian's apt)"
dl=$BUILD/apt-ndctl
tarball=$dl/${NDCTL_TARBALL##*/}
mkdir -p "$dl" "$BUILD/logs"
if ! echo "$NDCTL_SHA256  $tarball" | sha256sum -c --quiet - >/dev/null 2>&1; then
	mirror=$(debian_mirror)
	log "fetching ndctl $NDCTL_VERSION from $mirror/$NDCTL_TARBALL"
	rm -f "$tarball"
	# apt-helper checks the hash itself; -o keeps its state out of /var.
	"$helper" -o "Dir::State=$dl" -o "Dir::Cache=$dl" download-file \
		"$mirror/$NDCTL_TARBALL" "$tarball" "SHA256:$NDCTL_SHA256" \
		>"$dl/download.log" 2>&1 ||
		die "cannot fetch $NDCTL_TARBALL (SHA256 $NDCTL_SHA256) from $mirror (see $dl/download.log); update NDCTL_* in scripts/base.env"
fi

rm -rf "$out"
mkdir -p "$out"
tar -xzf "$tarball" -C "$out" --strip-components=1 ||
	die "cannot unpack $tarball"
log "building ndctl $NDCTL_VERSION with its tests in $out/build"
# run_logged runs it in a subshell: the cd stays there.
build_ndctl() {
	cd "$out" &&
	meson setup build -Dversion-tag="$NDCTL_VERSION" -Dtest=enabled \
		-Ddestructive=enabled -Ddocs=disabled -Dasciidoctor=disabled \
		-Dsystemd=disabled -Dbashcompletiondir=no &&
	meson compile -C build
}
run_logged "$BUILD/logs/ndctl-build.log" build_ndctl ||
	die "the ndctl build failed (did scripts/install-deps.sh ndctl run?)"
for f in ndctl/ndctl daxctl/daxctl test/dax-pmd test/dax-dev test/mmap; do
	[ -x "$out/build/$f" ] || die "the ndctl build made no $f"
done
echo "$want" >"$out/.harness-build-stamp"
echo "$out"
