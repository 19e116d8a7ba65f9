#!/bin/bash
# Usage: get-qemu-plugin.sh
# Print the path of scripts/qemu-tbprof.c built as a TCG plugin for the
# installed qemu-system-x86_64, in $BUILD/tools. Its API header comes
# from Debian's source package of the installed QEMU (the plugin API is
# not in a binary package), fetched with private apt state under
# $BUILD/apt-qemu; the machine's apt configuration is never touched.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_tools qemu-system-x86_64 dpkg-query gcc
qemu-system-x86_64 -help | grep -q '^-plugin' ||
	die "qemu-system-x86_64 was built without TCG plugin support"
# 1:7.2+dfsg-7+deb12u18+b3: a binNMU (+bN) builds the source 7.2+dfsg-7+deb12u18.
version=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
tools=$BUILD/tools
so=$tools/qemu-tbprof-${version//:/_}.so
src=$TOP/scripts/qemu-tbprof.c
if [ -f "$so" ] && [ "$so" -nt "$src" ]; then
	echo "$so"
	exit 0
fi

apt=$BUILD/apt-qemu
inc=$apt/include-${version//:/_}
header=$inc/qemu-plugin.h
if [ ! -s "$header" ]; then
	need_tools apt-get tar
	private_apt "$apt" "deb-src $(debian_mirror) bookworm main"
	log "fetching the qemu=$version source package for its plugin API header"
	apt-get -q "${aptopts[@]}" update >"$apt/update.log" 2>&1 ||
		die "apt-get update of the bookworm sources failed (see $apt/update.log)"
	rm -rf "$apt/src"
	mkdir -p "$apt/src"
	(cd "$apt/src" && apt-get -q "${aptopts[@]}" source --download-only "qemu=$version") \
		>"$apt/download.log" 2>&1 ||
		die "qemu $version is not in the mirror's bookworm sources (see $apt/download.log)"
	mkdir -p "$inc"
	tar -xJOf "$apt/src"/qemu_*.orig.tar.xz --wildcards '*/include/qemu/qemu-plugin.h' \
		>"$header.tmp" || die "no include/qemu/qemu-plugin.h in the qemu $version source"
	mv "$header.tmp" "$header"
	rm -rf "$apt/src"
fi
mkdir -p "$tools"
gcc -O2 -Wall -shared -fPIC -I"$inc" -o "$so" "$src" ||
	die "building $src against the qemu $version plugin API failed"
echo "$so"
