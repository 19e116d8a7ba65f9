#!/bin/bash
# Usage: fstests-overlay.sh FSTESTS_TREE
# Put this repository's fstests tests (fstests/: tests/DIR/NNN, their
# .out files, helper programs src/NAME.c) into the fstests tree
# FSTESTS_TREE, with the build glue fstests wants for each helper: its
# name in src/Makefile's LINUX_TARGETS and /src/NAME in .gitignore.
# Idempotent. get-fstests.sh runs it on its copy before building;
# fstests-posting.sh on a checkout, to commit the result.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: fstests-overlay.sh FSTESTS_TREE"
dst=$1 overlay=$TOP/fstests
{ [ -f "$dst/src/Makefile" ] && [ -f "$dst/check" ]; } ||
	die "$dst does not look like fstests (no check, src/Makefile)"
[ -d "$overlay" ] || die "no $overlay"
cp -R "$overlay/." "$dst/"

new=()
for c in "$overlay"/src/*.c; do
	[ -e "$c" ] || continue
	prog=$(basename "$c" .c)
	grep -qw -- "$prog" "$dst/src/Makefile" || new+=("$prog")
	grep -qx -- "/src/$prog" "$dst/.gitignore" ||
		printf '/src/%s\n' "$prog" >"$dst/.gitignore.add.$prog"
done
if [ ${#new[@]} -gt 0 ]; then
	# One more line at the end of the first LINUX_TARGETS assignment.
	awk -v progs="${new[*]}" '
		!done && /^LINUX_TARGETS = / { inblock = 1 }
		inblock && !/\\$/ { print $0 " \\"; print "\t" progs; inblock = 0; done = 1; next }
		{ print }
		END { if (!done) exit 1 }
	' "$dst/src/Makefile" >"$dst/src/Makefile.new" ||
		die "no LINUX_TARGETS assignment in $dst/src/Makefile"
	mv "$dst/src/Makefile.new" "$dst/src/Makefile"
fi
# After the last /src/ entry of .gitignore, where fstests adds new ones.
for add in "$dst"/.gitignore.add.*; do
	[ -e "$add" ] || continue
	line=$(cat "$add")
	rm -f "$add"
	awk -v line="$line" '
		{ l[NR] = $0 } /^\/src\// { last = NR }
		END { for (i = 1; i <= NR; i++) { print l[i]; if (i == last) print line }
		      if (!last) print line }
	' "$dst/.gitignore" >"$dst/.gitignore.new"
	mv "$dst/.gitignore.new" "$dst/.gitignore"
done
