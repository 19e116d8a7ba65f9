#!/bin/bash
# Usage: build-selftests.sh SRC OBJ INSTALL_DIR
# Build the dax kselftest target of SRC against the uapi headers of the
# configured build OBJ and install it (with run_kselftest.sh) in
# INSTALL_DIR for the guest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: build-selftests.sh SRC OBJ INSTALL_DIR"
src=$1 obj=$2 inst=$3
make -s -C "$src" O="$obj" headers >"$obj/headers.log" 2>&1 ||
	die "make headers failed (see $obj/headers.log)"
rm -rf "$inst"
run_logged "$obj/kselftest.log" make -C "$src/tools/testing/selftests" \
	O="$obj/kselftest" KHDR_INCLUDES="-isystem $obj/usr/include" \
	TARGETS=dax INSTALL_PATH="$inst" install || exit "$EX_SETUP"
