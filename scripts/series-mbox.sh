#!/bin/bash
# Usage: series-mbox.sh [DIR] > FILE
# A series as one mbox, the way a mailing list delivers it: headers
# unfolded, each message with a Message-Id, every later message a reply
# to the first (the cover letter). Without DIR: patches/, in the order of
# ./series; with DIR: its *.patch files in name order (a posting of
# scripts/postings.sh), Message-Ids made from DIR's name. For b4:
#   b4 am -m FILE "<0.$SERIES_CHANGE_ID@harness.invalid>"     (patches/)
#   b4 am -m FILE "<0.$SERIES_CHANGE_ID.NAME@harness.invalid>" (a posting)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -le 1 ] || die "usage: series-mbox.sh [DIR] > FILE"
files=() tag=$SERIES_CHANGE_ID
if [ $# -eq 0 ]; then
	for p in 0000-cover-letter.patch $(series_patches); do
		[ -f "$TOP/patches/$p" ] || die "patches/$p is missing"
		files+=("$TOP/patches/$p")
	done
else
	[ -d "$1" ] || die "no directory $1"
	files=("$1"/*.patch)
	[ -f "${files[0]}" ] || die "no *.patch in $1"
	tag=$SERIES_CHANGE_ID.$(basename "$1")
fi
n=0
for f in "${files[@]}"; do
	awk -v id="<$n.$tag@harness.invalid>" \
	    -v parent="<0.$tag@harness.invalid>" -v n="$n" '
	BEGIN { hdr = 1 }
	NR == 1 { print; next }
	hdr && /^[ \t]/ { sub(/^[ \t]+/, " "); line = line $0; next }
	hdr && line != "" { print line; line = "" }
	hdr && /^$/ {
		print "Message-Id: " id
		if (n > 0) { print "In-Reply-To: " parent; print "References: " parent }
		print; hdr = 0; next
	}
	hdr { line = $0; next }
	{ print }' "$f"
	n=$((n + 1))
done
