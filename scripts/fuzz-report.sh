#!/bin/bash
# Usage: fuzz-report.sh DIR ARGS CONFIGS KERNEL...
#        fuzz-report.sh --into FILE REPORT
# The first form prints make fuzz's report (markdown) from the boot logs
# DIR/KERNEL-CONFIG.log that scripts/fuzz.sh wrote: a table of operations
# and failures per kernel and configuration (CONFIGS: a space-separated
# list; ARGS: the dax-fuzz options, quoted), the operations each run
# did, and each failure with its shrunk sequence. Exit 1 when a run
# failed or has no result, else 0.
# The second form puts REPORT into FILE between the lines
# "<!-- make fuzz: begin -->" and "<!-- make fuzz: end -->", keeping the
# rest of FILE (the findings written by hand); FILE is made if missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

begin='<!-- make fuzz: begin -->' end='<!-- make fuzz: end -->'

if [ "${1:-}" = --into ]; then
	[ $# -eq 3 ] || die "usage: fuzz-report.sh --into FILE REPORT"
	file=$2 report=$3
	[ -f "$report" ] || die "no report $report"
	if [ ! -f "$file" ] || ! grep -qxF "$begin" "$file"; then
		{ [ ! -f "$file" ] || { cat "$file"; echo; }
		  echo "$begin"; echo "$end"; } >"$file.tmp"
		mv "$file.tmp" "$file"
	fi
	awk -v begin="$begin" -v end="$end" -v report="$report" '
		$0 == begin { print; while ((getline line < report) > 0) print line; skip = 1; next }
		$0 == end { skip = 0 }
		!skip { print }
	' "$file" >"$file.tmp"
	mv "$file.tmp" "$file"
	exit 0
fi

[ $# -ge 4 ] || die "usage: fuzz-report.sh DIR ARGS CONFIGS KERNEL..."
dir=$1 args=$2
read -r -a configs <<<"$3"
shift 3
kernels=("$@")

# field LOG NAME: NAME=VALUE of the RESULT line of LOG.
field() {
	sed -n "s/.*dax-fuzz: RESULT .*\\b$2=\\([^ ]*\\).*/\\1/p" "$1" | tail -n 1
}

# The first problem the kernel log showed (the verdict quotes the log).
kernel_note() {
	local v
	v=$(grep -m1 '^VERDICT' "$1" || true)
	case $v in
	*'kernel log reports a problem'*)
		grep -m1 -E 'WARNING:|BUG:|Oops|general protection|KASAN:|lockdep|blocked for more than' "$1" |
			sed 's/^\[ *[0-9.]*\] //; s/|/\\|/g' ;;
	*'did not finish'*) echo "guest did not finish" ;;
	'') echo "no verdict" ;;
	*) echo clean ;;
	esac
}

rc=0
echo "make fuzz: \`dax-fuzz $args\` on each kernel and configuration"
echo "($(date -u +%Y-%m-%d), logs in \`${dir#"$TOP"/}\`)."
echo
echo "| kernel | config | operations | ops/s | failures | first failure after (operations) | failure kinds | kernel log |"
echo "|---|---|---|---|---|---|---|---|"
for k in "${kernels[@]}"; do
	for c in "${configs[@]}"; do
		log=$dir/$k-$c.log
		if [ ! -f "$log" ] || ! grep -q 'dax-fuzz: RESULT' "$log"; then
			echo "| $k | $c | no result | | | | | $( [ -f "$log" ] && kernel_note "$log" || echo 'no log') |"
			rc=1
			continue
		fi
		n=$(field "$log" failures)
		first=$(field "$log" first_failure_after)
		[ "$first" = -1 ] && first=-
		kinds=$(sed -n 's/.*dax-fuzz: FAILURE [0-9]*: \([A-Z_]*\) .*/\1/p' "$log" | sort | uniq -c |
			awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')
		[ "$n" = 0 ] || rc=1
		echo "| $k | $c | $(field "$log" ops) | $(field "$log" ops_per_second) | $n | $first | ${kinds:--} | $(kernel_note "$log") |"
	done
done

echo
echo "Operations run per kernel and configuration (refused: the kernel returned an"
echo "error the caller must expect, e.g. EINVAL for a misaligned collapse):"
echo
header="| operation |" rule="|---|"
for k in "${kernels[@]}"; do
	for c in "${configs[@]}"; do
		header="$header $k $c |" rule="$rule---|"
	done
done
echo "$header"
echo "$rule"
ops=$(cat "$dir"/*.log 2>/dev/null | sed -n 's/.*dax-fuzz: OPSTAT \([a-z_]*\) .*/\1/p' | awk '!seen[$0]++')
for op in $ops; do
	row="| $op |"
	for k in "${kernels[@]}"; do
		for c in "${configs[@]}"; do
			cell=
			[ ! -f "$dir/$k-$c.log" ] ||
				cell=$(sed -n "s/.*dax-fuzz: OPSTAT $op  *\\([0-9]*\\) run, *[0-9]* skipped, *\\([0-9]*\\) refused.*/\\1 (\\2)/p" \
					"$dir/$k-$c.log" | tail -n 1)
			row="$row ${cell:--} |"
		done
	done
	echo "$row"
done

for k in "${kernels[@]}"; do
	for c in "${configs[@]}"; do
		log=$dir/$k-$c.log
		[ -f "$log" ] || continue
		grep -q 'dax-fuzz: FAILURE [0-9]' "$log" || continue
		echo
		echo "### $k on $c"
		awk '
			/dax-fuzz: FAILURE [0-9]+:/ { sub(/.*dax-fuzz: /, ""); print "\n" $0 }
			/dax-fuzz: the shrunk sequence fails with/ { sub(/.*dax-fuzz: /, ""); print "\n" $0 }
			/dax-fuzz: the failure did not come back/ { sub(/.*dax-fuzz: /, ""); print "\n" $0 }
			/dax-fuzz: SEQUENCE [0-9]+ BEGIN/ { print "\n```"; inseq = 1; next }
			/dax-fuzz: SEQUENCE [0-9]+ END/ { print "```"; inseq = 0; next }
			inseq { print }
		' "$log"
	done
done
exit "$rc"
