#!/bin/bash
# Usage: fstests.sh [--kernels base,series] [--kernel base|series=BZIMAGE]...
#                   [--configs ext4,xfs,xfs-su2m,xfs-rmapbt] [-- TESTS...]
# make fstests: fstests (from FSTESTS_SRC, see get-fstests.sh, with this
# repository's tests of fstests/ put in) in QEMU on
# the two fsdax NVDIMMs mounted -o dax=always, one boot per kernel and
# configuration, on plain v7.3 (base) and on the series (series), both of
# the default profile, built as make bench does unless --kernel
# base=BZIMAGE or series=BZIMAGE names the image to boot for it (then
# nothing is built for that kernel). TESTS are ./check arguments (test names, -g GROUP);
# by default those of tests/fstests-selection; the word "fsx" among them
# adds the fsx runs of tests/fsx-runs (reported as fsx/NAME) after
# ./check. Writes per boot the logs
# and fstests' results under $BUILD/logs/fstests-TIME/KERNEL-CONFIG and a
# table test -> result per kernel (with the reason of every notrun) to
# .../summary.md, which it prints. FSTESTS_JOBS=2 runs the boots of a
# configuration at once, FSTESTS_TIMEOUT (s, default 14400) limits each;
# FSTESTS_OUT=DIR puts the logs there (a later run adds its boots to the
# table of an earlier one).
# Exit 0 when every test that ran on the
# series passed or also failed on the base, 1 otherwise, 2 setup error.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

all_configs=ext4,xfs,xfs-su2m,xfs-rmapbt
names=base,series configs=$all_configs
tests=()
declare -A image=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernels|--configs)
		[ $# -ge 2 ] || die "$1 needs an argument"
		[ "$1" = --kernels ] && names=$2 || configs=$2
		shift ;;
	--kernel)
		[ $# -ge 2 ] || die "$1 needs an argument"
		case $2 in
		base=?*|series=?*) ;;
		*) die "--kernel wants base=BZIMAGE or series=BZIMAGE, not '$2'" ;;
		esac
		[ -f "${2#*=}" ] || die "--kernel $2: no such file"
		image[${2%%=*}]=$(realpath "${2#*=}")
		shift ;;
	--) shift; tests=("$@"); break ;;
	*) die "unknown option '$1' (see the usage line in $0)" ;;
	esac
	shift
done

# Configuration name -> filesystem and mkfs options.
config_fs() { case $1 in ext4) echo ext4 ;; xfs|xfs-su2m|xfs-rmapbt) echo xfs ;; *) return 1 ;; esac; }
config_mkfs() {
	case $1 in
	ext4|xfs) echo "" ;;
	# Stripe unit 2 MiB: file extents that PMD faults can map.
	xfs-su2m) echo "-d su=2m,sw=1" ;;
	# The reverse-mapping btree: memory failure finds the owners of a
	# poisoned block through it (xfs/550-552; mkfs.xfs 6.1 makes none).
	xfs-rmapbt) echo "-m rmapbt=1" ;;
	esac
}
IFS=, read -r -a configs <<<"$configs"
for c in "${configs[@]}"; do
	config_fs "$c" >/dev/null || die "unknown configuration '$c' (${all_configs//,/, })"
done
ab_names "$names"

# The fsx runs (FSTESTS_FSX_RUNS: another list, for the harness's tests),
# checked before anything is built.
runs_file=${FSTESTS_FSX_RUNS:-$TOP/tests/fsx-runs}
[ -f "$runs_file" ] || die "no fsx runs file $runs_file"
fsx_runs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$runs_file")
declare -A fsx_names=()
while read -r name seed ops _; do
	[ -n "$name" ] || continue
	case $name in *[!A-Za-z0-9_.-]*) die "$runs_file: fsx run name '$name': use letters, digits, _ . -" ;; esac
	[ -z "${fsx_names[$name]:-}" ] || die "$runs_file: fsx run '$name' is listed twice"
	fsx_names[$name]=1
	# fsx takes seed 0 for "pick one": a run must be repeatable.
	case $seed in ''|0|*[!0-9]*) die "$runs_file: fsx run '$name' needs a numeric SEED other than 0" ;; esac
	case $ops in ''|*[!0-9]*) die "$runs_file: fsx run '$name' needs a numeric OPS" ;; esac
done <<<"$fsx_runs"

fst=$("$TOP/scripts/get-fstests.sh")
# The default selection: "-g GROUP" lines pass through; "A&B" lines
# become the tests of fstests' group lists that are in both groups.
expand_selection() {
	local line a b
	while read -r line; do
		line=${line%%#*}
		line=${line%"${line##*[![:space:]]}"}
		case $line in
		'') ;;
		*'&'*)
			a=${line%%&*} b=${line#*&}
			awk -v a="$a" -v b="$b" '
				/^#/ { next }
				{ ia = ib = 0
				  for (i = 2; i <= NF; i++) { if ($i == a) ia = 1; if ($i == b) ib = 1 }
				  if (ia && ib) { split(FILENAME, p, "/"); print p[length(p) - 1] "/" $1 } }
			' "$fst"/tests/*/group.list ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <"$TOP/tests/fstests-selection"
}
if [ ${#tests[@]} -eq 0 ]; then
	mapfile -t sel < <(expand_selection)
	for t in "${sel[@]}"; do
		read -r -a words <<<"$t"
		tests+=("${words[@]}")
	done
fi

# "fsx" among the tests: the runs of tests/fsx-runs after ./check.
fsx=0 check_args=()
for t in "${tests[@]}"; do
	if [ "$t" = fsx ]; then fsx=1; else check_args+=("$t"); fi
done
[ "$fsx" = 1 ] || fsx_runs=

rootfs=$BUILD/fstests-root.img
"$TOP/scripts/mkrootfs.sh" "$rootfs" "$fst"
ab_kernels image default "${kernels[@]}"

# One boot: kernel $1, configuration $2, logs and results in $3.
boot_one() {
	local k=$1 c=$2 dir=$3 start=$SECONDS
	mkdir -p "$dir"
	{
		printf 'FSTESTS_FS=%q\n' "$(config_fs "$c")"
		printf 'FSTESTS_MKFS=%q\n' "$(config_mkfs "$c")"
		if [ ${#check_args[@]} -gt 0 ]; then
			printf 'FSTESTS_ARGS=%q\n' "-R xunit ${check_args[*]}"
		fi
		printf 'FSTESTS_FSX=%q\n' "$fsx_runs"
	} >"$dir/fstests.env"
	ACCEL=${ACCEL:-$(cat "$BUILD/accel" 2>/dev/null || echo tcg)} \
		FSTESTS_ENV=$dir/fstests.env QEMU_TIMEOUT=${FSTESTS_TIMEOUT:-14400} \
		"$TOP/scripts/boot-guest.sh" "${image[$k]}" "$rootfs" "$dir" fstests \
		>/dev/null 2>"$dir/boot.log"
	echo $((SECONDS - start)) >"$dir/seconds"
	debugfs -R "rdump /opt/xfstests/results $dir" "$dir/root.img" >/dev/null 2>&1 ||
		log "$k on $c: no results on the root disk"
	rm -f "$dir/root.img"
	log "$k on $c: $(grep -E '^(Passed|Failed|Not run)' "$dir/results.log" | tr '\n' ' ')($((SECONDS - start)) s)"
}

# FSTESTS_JOBS=2 boots the kernels of a configuration side by side (each
# guest runs on one host thread under TCG; they share no NVDIMM).
top=${FSTESTS_OUT:-$BUILD/logs/fstests-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$top"
log "fstests ./check ${tests[*]}"
log "logs: $top"
for c in "${configs[@]}"; do
	pids=()
	for k in "${kernels[@]}"; do
		log "$k on $c: booting"
		if [ "${FSTESTS_JOBS:-1}" -gt 1 ]; then
			boot_one "$k" "$c" "$top/$k-$c" &
			pids+=($!)
		else
			boot_one "$k" "$c" "$top/$k-$c"
		fi
	done
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
done
rc=0
# The table has every kernel that booted in $top, this run's or not.
mapfile -t all < <(for d in "$top"/*-*/; do d=${d%/}; d=${d##*/}; echo "${d%%-*}"; done |
	sort -u)
mapfile -t allc < <(for d in "$top"/*-*/; do d=${d%/}; d=${d##*/}; echo "${d#*-}"; done | sort -u)
"$TOP/scripts/fstests-report.py" "$top" "${all[@]}" -- "${allc[@]}" >"$top/summary.md" || rc=$?
cat "$top/summary.md"
exit "$rc"
