#!/bin/bash
# Usage: fstests-overlay.sh FSTESTS_TREE [FILE...]
# Put this repository's fstests tests (fstests/: tests/DIR/NNN, their
# .out files, helper programs src/NAME.c; or only the FILEs named, paths
# inside fstests/) into the fstests tree FSTESTS_TREE, with the build glue
# fstests wants for each helper: its name in src/Makefile's LINUX_TARGETS
# and /src/NAME in .gitignore. A file that the tree has already with other
# content is refused (a test number fstests has taken since: renumber ours
# with fstests' tools/nextid). Idempotent. get-fstests.sh runs it on its
# copy before building; fstests-posting.sh on a checkout, file by file, to
# commit the result.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: fstests-overlay.sh FSTESTS_TREE [FILE...]"
dst=$1 overlay=$TOP/fstests
shift
{ [ -f "$dst/src/Makefile" ] && [ -f "$dst/check" ]; } ||
	die "$dst does not look like fstests (no check, src/Makefile)"
[ -d "$overlay" ] || die "no $overlay"
if [ $# -eq 0 ]; then
	mapfile -t files < <(cd "$overlay" && find . -type f -printf '%P\n' | LC_ALL=C sort)
else
	files=("$@")
fi

progs=()
for f in "${files[@]}"; do
	[ -f "$overlay/$f" ] || die "no fstests/$f"
	if [ -e "$dst/$f" ] && ! cmp -s "$overlay/$f" "$dst/$f"; then
		die "$dst/$f exists with other content: renumber fstests/$f (fstests' tools/nextid)"
	fi
	mkdir -p "$(dirname "$dst/$f")"
	cp -p "$overlay/$f" "$dst/$f"
	case $f in src/*.c) progs+=("$(basename "$f" .c)") ;; esac
done

new=()
for prog in "${progs[@]}"; do
	grep -qw -- "$prog" "$dst/src/Makefile" || new+=("$prog")
	grep -qx -- "/src/$prog" "$dst/.gitignore" && continue
	# After the last /src/ entry of .gitignore, where fstests adds new ones.
	awk -v line="/src/$prog" '
		{ l[NR] = $0 } /^\/src\// { last = NR }
		END { for (i = 1; i <= NR; i++) { print l[i]; if (i == last) print line }
		      if (!last) print line }
	' "$dst/.gitignore" >"$dst/.gitignore.new"
	mv "$dst/.gitignore.new" "$dst/.gitignore"
done
if [ ${#new[@]} -gt 0 ]; then
	# At the end of the first LINUX_TARGETS assignment: on its last line
	# where that stays within 80 columns (a tab is 8), else on a new one.
	awk -v progs="${new[*]}" '
		!done && /^LINUX_TARGETS = / { inblock = 1 }
		inblock && !/\\$/ {
			if (length($0 " " progs) + 7 <= 80) print $0 " " progs
			else { print $0 " \\"; print "\t" progs }
			inblock = 0; done = 1; next
		}
		{ print }
		END { if (!done) exit 1 }
	' "$dst/src/Makefile" >"$dst/src/Makefile.new" ||
		die "no LINUX_TARGETS assignment in $dst/src/Makefile"
	mv "$dst/src/Makefile.new" "$dst/src/Makefile"
fi
