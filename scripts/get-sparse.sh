#!/bin/bash
# Usage: get-sparse.sh KERNEL_SRC
# Print the path of a sparse that the kernel tree accepts (its
# scripts/checker-valid.sh): the installed one if it does, else Debian's
# source package (pinned in base.env) built into $BUILD/tools. Private apt
# state under $BUILD/apt-sparse; the machine's apt configuration is never
# touched. Exit 4 with the reason if neither works.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: get-sparse.sh KERNEL_SRC"
valid=$1/scripts/checker-valid.sh
[ -x "$valid" ] || die "$valid is missing"

# checker-valid.sh prints 1 for a sparse that the kernel will run.
usable() { [ "$("$valid" "$1" 2>/dev/null)" = 1 ]; }

if usable sparse; then
	command -v sparse
	exit 0
fi
tools=$BUILD/tools
bin=$tools/sparse-$SPARSE_VERSION/sparse
if usable "$bin"; then
	echo "$bin"
	exit 0
fi

skip() { echo "get-sparse.sh: $*" >&2; exit "$EX_SKIP"; }
need_tools apt-get sha256sum dpkg-source make gcc
apt=$BUILD/apt-sparse
mirror=$(debian_mirror)
private_apt "$apt" "deb-src $mirror $SPARSE_SUITE main"
dl=$apt/src
mkdir -p "$dl"
if ! (cd "$dl" && echo "$SPARSE_SHA256" | sha256sum -c --quiet - >/dev/null 2>&1); then
	log "fetching the $SPARSE_PKG=$SPARSE_VERSION source package from $mirror $SPARSE_SUITE"
	apt-get -q "${aptopts[@]}" update >"$apt/update.log" 2>&1 ||
		skip "apt-get update of $SPARSE_SUITE sources failed (see $apt/update.log)"
	(cd "$dl" && apt-get -q "${aptopts[@]}" source --download-only \
		"$SPARSE_PKG=$SPARSE_VERSION") >"$apt/download.log" 2>&1 ||
		skip "$SPARSE_PKG $SPARSE_VERSION is not in $SPARSE_SUITE any more (see $apt/download.log); update SPARSE_* in scripts/base.env"
	(cd "$dl" && echo "$SPARSE_SHA256" | sha256sum -c --quiet -) ||
		die "the $SPARSE_PKG source package does not match the SHA256 pinned in scripts/base.env"
fi

log "building sparse $SPARSE_VERSION in $tools"
rm -rf "${bin%/sparse}"
mkdir -p "$tools"
dsc=$dl/${SPARSE_PKG}_${SPARSE_VERSION}.dsc
# Checksums verified above; the .dsc signature needs a keyring we lack.
dpkg-source --no-check -x "$dsc" "${bin%/sparse}" >"$apt/unpack.log" 2>&1 ||
	die "dpkg-source -x $dsc failed (see $apt/unpack.log)"
# Debian builds it with its current gcc (use-gcc-16.patch); this machine's
# gcc is the one whose headers sparse should know.
make -C "${bin%/sparse}" -j"$(nproc)" CC=gcc sparse >"$apt/build.log" 2>&1 ||
	die "building sparse failed (see $apt/build.log)"
usable "$bin" || skip "$bin is built, but $valid rejects it too"
echo "$bin"
