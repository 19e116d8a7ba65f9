#!/bin/bash
# Usage: build-selftests.sh SRC OBJ INSTALL_DIR
# Build the dax kselftest target of SRC against the uapi headers of the
# configured build OBJ and install it (with run_kselftest.sh) in
# INSTALL_DIR for the guest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: build-selftests.sh SRC OBJ INSTALL_DIR"
src=$1 obj=$2 inst=$3
# The installed tests are reused while the tree's selftests are unchanged.
stamp=$(git -C "$src" rev-parse HEAD:tools/testing/selftests 2>/dev/null)-$(git -C "$src" status --porcelain -- tools/testing/selftests | sha256sum | cut -c1-16)
if [ -x "$inst/run_kselftest.sh" ] && [ "$(cat "$inst.stamp" 2>/dev/null)" = "$stamp" ]; then
	exit 0
fi
rm -f "$inst.stamp"
kmake "$src" "$obj" -s headers >"$obj/headers.log" 2>&1 ||
	die "make headers failed (see $obj/headers.log)"
rm -rf "$inst"
run_logged "$obj/kselftest.log" make -C "$src/tools/testing/selftests" \
	O="$obj/kselftest" KHDR_INCLUDES="-isystem $obj/usr/include" \
	TARGETS=dax INSTALL_PATH="$inst" install || exit "$EX_SETUP"
echo "$stamp" >"$inst.stamp"
