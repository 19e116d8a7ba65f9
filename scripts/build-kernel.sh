#!/bin/bash
# Usage: build-kernel.sh SRC OBJ PROFILE
# Configure (configure-kernel.sh) and build bzImage out of tree in OBJ,
# showing progress; the full log goes to OBJ/build.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: build-kernel.sh SRC OBJ PROFILE"
src=$(cd "$1" && pwd) obj=$2 profile=$3
mkdir -p "$obj"
obj=$(cd "$obj" && pwd)
need_tools make gcc flex bison bc
"$TOP/scripts/configure-kernel.sh" "$src" "$obj" "$profile"
log "building bzImage ($profile) in $obj, log: $obj/build.log"
start=$SECONDS
run_logged "$obj/build.log" kmake "$src" "$obj" bzImage ||
	exit "$EX_SETUP"
log "built $obj/arch/x86/boot/bzImage in $((SECONDS - start))s"
