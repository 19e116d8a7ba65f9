#!/bin/bash
# Usage: series-mbox.sh > FILE
# The series (patches/, in the order of ./series) as one mbox, the way a
# mailing list delivers it: headers unfolded, each message with a
# Message-Id, every patch a reply to the cover letter. For b4:
#   b4 am -m FILE "<0.$SERIES_CHANGE_ID@harness.invalid>"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || die "usage: series-mbox.sh > FILE"
n=0
for p in 0000-cover-letter.patch $(series_patches); do
	[ -f "$TOP/patches/$p" ] || die "patches/$p is missing"
	awk -v id="<$n.$SERIES_CHANGE_ID@harness.invalid>" \
	    -v parent="<0.$SERIES_CHANGE_ID@harness.invalid>" -v n="$n" '
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
	{ print }' "$TOP/patches/$p"
	n=$((n + 1))
done
