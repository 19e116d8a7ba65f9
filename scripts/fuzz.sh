#!/bin/bash
# Usage: fuzz.sh [--kernel NAME=BZIMAGE]... [--configs LIST] [--seconds S]
#                [--ops N] [--seed N] [--shrink S] [-- DAX-FUZZ OPTIONS...]
# make fuzz: dax-fuzz (guest/fuzz/, Documentation/fuzz.md) in QEMU, one
# boot per kernel and configuration of the SCRATCH namespace (ext4, xfs
# with mkfs defaults, xfs -d su=2m), each fuzzing for S seconds (default
# FUZZ_SECONDS or 150) or N operations, from the same seed (FUZZ_SEED,
# default 1) on every kernel. Kernels: plain v7.3 (base) and the series
# (series), built as make bench builds them, or bzImages given as
# --kernel NAME=BZIMAGE (repeatable) or FUZZ_KERNELS="NAME=BZIMAGE ...";
# NAME is a word of your choice (base, series, v4...).
# Prints a table of operations run and failures per kernel and
# configuration, with each failure's shrunk sequence, and writes it into
# Documentation/results-fuzz.md between its "make fuzz" markers
# (FUZZ_RESULTS=FILE elsewhere, FUZZ_RESULTS= nowhere). Logs:
# build/logs/fuzz-TIME/ (FUZZ_OUT=DIR).
# Exit 0 when no run failed, 1 when a run found a failure or did not
# finish, 2 on bad usage or a setup error.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

all_configs=ext4,xfs,xfs-su2m
configs=$all_configs seconds=${FUZZ_SECONDS:-150} ops=${FUZZ_OPS:-} seed=${FUZZ_SEED:-1}
shrink=120 extra=()
specs=()
fk=${FUZZ_KERNELS:-}
read -r -a specs <<<"${fk//,/ }"
while [ $# -gt 0 ]; do
	case $1 in
	--kernel|--configs|--seconds|--ops|--seed|--shrink)
		[ $# -ge 2 ] || die "$1 needs an argument"
		case $1 in
		--kernel) specs+=("$2") ;;
		--configs) configs=$2 ;;
		--seconds) seconds=$2 ;;
		--ops) ops=$2 ;;
		--seed) seed=$2 ;;
		--shrink) shrink=$2 ;;
		esac
		shift ;;
	--) shift; extra=("$@"); break ;;
	*) die "unknown option '$1' (see the usage line in $0)" ;;
	esac
	shift
done

number() { # NAME VALUE: a positive whole number
	case $2 in ''|*[!0-9]*|0) die "$1 needs a positive number, not '$2'" ;; esac
}
number --seconds "$seconds"
number --seed "$seed"
number --shrink "$shrink"
[ -z "$ops" ] || number --ops "$ops"
IFS=, read -r -a configs <<<"$configs"
[ ${#configs[@]} -gt 0 ] || die "--configs lists no configuration"
for c in "${configs[@]}"; do
	case ,$all_configs, in *",$c,"*) ;; *) die "unknown configuration '$c' (${all_configs//,/, })" ;; esac
done

# The kernels: NAME=BZIMAGE given, or base and series built here.
names=()
declare -A image=()
for s in "${specs[@]}"; do
	[[ $s == *=* ]] || die "--kernel needs NAME=BZIMAGE, not '$s'"
	k=${s%%=*}
	[[ $k =~ ^[A-Za-z0-9_.-]+$ ]] || die "kernel name '$k': use letters, digits, _ . -"
	[ -z "${image[$k]:-}" ] || die "kernel '$k' is given twice"
	names+=("$k")
	image[$k]=${s#*=}
done
for k in "${names[@]}"; do
	img=${image[$k]}
	[ -f "$img" ] || die "--kernel $k=$img: no such file"
	[ "$(dd if="$img" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] ||
		die "--kernel $k=$img is not an x86 bzImage"
	image[$k]=$(cd "$(dirname "$img")" && pwd)/$(basename "$img")
done
if [ ${#names[@]} -eq 0 ]; then
	names=(base series)
	for k in "${names[@]}"; do
		image[$k]=$(built_kernel "$k")
	done
fi

out=${FUZZ_OUT:-$BUILD/logs/fuzz-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
fuzz_args="-s $seed -t $seconds -n ${ops:-100000000} -S $shrink -F 3 ${extra[*]}"
# The guest's limit: the fuzzing, three shrinks, boot and slack.
guest_timeout=$((seconds + 3 * shrink + 900))
if [ -n "$ops" ]; then
	fuzz_args="-s $seed -n $ops -S $shrink -F 3 ${extra[*]}"
	guest_timeout=$((ops + 3 * shrink + 900))
fi
log "dax-fuzz $fuzz_args; logs: $out"

for k in "${names[@]}"; do
	for c in "${configs[@]}"; do
		log "$k on $c: fuzzing (${ops:+$ops operations}${ops:-$seconds s})"
		start=$SECONDS
		fs=xfs
		[ "$c" = ext4 ] && fs=ext4
		"$TOP/qemu-run.sh" --kernel "${image[$k]}" --fs "$fs" --timeout "$guest_timeout" \
			-- "/harness/fuzz-guest.sh $c $fuzz_args" >"$out/$k-$c.log" 2>&1 || true
		log "$k on $c: $(grep -o 'RESULT .*' "$out/$k-$c.log" || echo 'no result') ($((SECONDS - start)) s)"
	done
done

report=$out/summary.md
rc=0
"$TOP/scripts/fuzz-report.sh" "$out" "$fuzz_args" "${configs[*]}" "${names[@]}" >"$report" || rc=$?
cat "$report"
results=${FUZZ_RESULTS-$TOP/Documentation/results-fuzz.md}
if [ -n "$results" ]; then
	"$TOP/scripts/fuzz-report.sh" --into "$results" "$report"
	log "the table is in $results"
fi
exit "$rc"
