#!/bin/bash
# Usage: ndctl.sh [--kernels base,series] [--kernel NAME=BZIMAGE]... [-- TESTS...]
# make ndctl: ndctl's own DAX tests (ndctl pinned in base.env, built by
# get-ndctl.sh with its destructive tests) in QEMU on the Debian root
# disk of mkrootfs.sh (build/ndctl-root.img, ndctl in /opt/ndctl), one
# boot per kernel, on plain v7.3 (base) and on the series (series), both
# of the default profile (built as fstests.sh does, unless --kernel
# NAME=BZIMAGE names the image to boot for NAME). TESTS are test names of
# ndctl's test/meson.build; by default its "dax" suite. The guest gets a
# legacy e820 pmem region (memmap=NDCTL_MEMMAP, default 3G!4G: with -m 6G
# QEMU puts 3 GiB of RAM below 4G and 3 GiB above, which this takes; 3G
# leaves device-dax the 2 GiB it verifies at 1 GiB alignment),
# where dax-dev, dax-ext4.sh, dax-xfs.sh, mmap.sh, device-dax and the
# like run, beside the two QEMU NVDIMMs (ACPI.NFIT, 1042 MiB each: room
# for dm.sh's 1 GiB namespaces beside a label area of NDCTL_LABEL_SIZE,
# default 128K, which the guest initializes; QEMU maps 2 MiB less of
# each, back to back, so that the second one starts 16 MiB aligned, as
# ndctl wants its namespaces). Tests that load nfit_test or cxl_test,
# and revoke-devmem without /dev/mem, are skipped (guest/ndctl-guest.sh).
# The NVDIMMs' backing files are the boot's own, as for every guest.
# Writes per boot the logs (results.log,
# console.log, each test's output under ndctl-logs/) under
# $BUILD/logs/ndctl-TIME/KERNEL and a table test -> result per kernel to
# .../summary.md, which it prints. A kernel complaint (scripts/kernel-complaints.txt)
# logged while a test ran is added to its result. Exit 0 when every test
# that ran on the series passed, or failed on the base too; 1 otherwise;
# 2 setup error. Environment: NDCTL_TIMEOUT (s, one test, default 900),
# NDCTL_GUEST_TIMEOUT (s, one boot, default 7200), NDCTL_MEMMAP,
# NDCTL_LABEL_SIZE, ACCEL.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

names=base,series
declare -A image=()
tests=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernels)
		[ $# -ge 2 ] || die "$1 needs an argument"
		names=$2; shift ;;
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
ab_names "$names"
need_tools debugfs awk

ndctl=$("$TOP/scripts/get-ndctl.sh")
# ndctl's "dax" suite, in the order of its test/meson.build.
if [ ${#tests[@]} -eq 0 ]; then
	mapfile -t tests < <(awk -F"'" \
		'/^[[:space:]]*\[/ && $4 == "dax" { print $2 }' "$ndctl/test/meson.build")
	[ ${#tests[@]} -gt 0 ] || die "no dax suite in $ndctl/test/meson.build"
fi
rootfs=$BUILD/ndctl-root.img
"$TOP/scripts/mkrootfs.sh" "$rootfs" - "$ndctl"
ab_kernels image default "${kernels[@]}"
# The kernel complaints verdict.sh fails a run for: the one list.
kernel_bad=$(kernel_complaints)
[ -n "$kernel_bad" ] || die "no patterns in scripts/kernel-complaints.txt"

top=$BUILD/logs/ndctl-$(date +%Y%m%d-%H%M%S)
mkdir -p "$top"
log "ndctl $NDCTL_VERSION tests: ${tests[*]}"
log "logs: $top"
for k in "${kernels[@]}"; do
	img=${image[$k]}
	dir=$top/$k
	mkdir -p "$dir"
	echo "$img" >"$dir/kernel"
	{
		printf 'HARNESS_SUITE=ndctl\n'
		printf 'NDCTL_TESTS=%q\n' "${tests[*]}"
		printf 'NDCTL_TIMEOUT=%q\n' "${NDCTL_TIMEOUT:-900}"
	} >"$dir/fstests.env"
	log "$k ($img): booting"
	start=$SECONDS
	ACCEL=${ACCEL:-$(cat "$BUILD/accel" 2>/dev/null || echo tcg)} \
		FSTESTS_ENV=$dir/fstests.env QEMU_TIMEOUT=${NDCTL_GUEST_TIMEOUT:-7200} \
		GUEST_MEM=6G GUEST_MAXMEM=9G NVDIMM_SIZE=1042M NVDIMM_DIR=$dir/nvdimm \
		NVDIMM_LABEL_SIZE=${NDCTL_LABEL_SIZE:-128K} \
		APPEND="memmap=${NDCTL_MEMMAP:-3G!4G}" \
		"$TOP/scripts/boot-guest.sh" "$img" "$rootfs" "$dir" ndctl >/dev/null
	echo $((SECONDS - start)) >"$dir/seconds"
	debugfs -R "rdump /harness/ndctl-logs $dir" "$dir/root.img" >/dev/null 2>&1 ||
		log "$k: no test logs on the root disk"
	rm -rf "$dir/root.img" "$dir/nvdimm"
	log "$k: $(grep -c '^NDCTL-RESULT .* pass ' "$dir/results.log") passed," \
		"$(grep -c '^NDCTL-RESULT .* skip ' "$dir/results.log") skipped," \
		"$(grep -c '^NDCTL-RESULT .* fail ' "$dir/results.log") failed" \
		"($((SECONDS - start)) s)"
done

# One cell of the table: the guest's result line of test $2 in boot
# directory $1 and what the kernel complained of while it ran.
cell() {
	local dir=$1 name=$2 line res secs reason bad
	line=$(grep -m 1 "^NDCTL-RESULT $name " "$dir/results.log" || true)
	if [ -z "$line" ]; then
		if grep -q '^HARNESS: DONE' "$dir/results.log"; then
			echo "MISSING"
		else
			bad=$(grep -h -m 1 -oE "($kernel_bad|HARNESS: TIMEOUT).*" \
				"$dir/console.log" "$dir/results.log" | head -n 1 | tr -d '\r' | cut -c1-100 || true)
			echo "MISSING (the guest did not finish: ${bad//|/\\|})"
		fi
		return
	fi
	read -r _ _ res secs reason <<<"$line"
	bad=$(tr -d '\r' <"$dir/console.log" |
		awk -v b="ndctl-test: begin $name" -v e="ndctl-test: end $name rc" \
		'index($0, e) { exit } on { print } substr($0, length($0) - length(b) + 1) == b { on = 1 }' |
		grep -m 1 -oE "($kernel_bad).*" | cut -c1-100 || true)
	case $res in
	pass) echo "pass (${secs} s)" ;;
	skip) echo "skip: ${reason//|/\\|}" ;;
	*) echo "**FAIL**: ${reason//|/\\|} (${secs} s)" ;;
	esac | tr -d '\n'
	[ -z "$bad" ] || printf ', **kernel: %s**' "${bad//|/\\|}"
	echo
}
status() { # pass, skip, fail or bad (a kernel complaint) of a cell
	case $1 in
	*'**kernel:'*) echo bad ;; pass*) echo pass ;; skip*) echo skip ;; *) echo fail ;;
	esac
}
rc=0
{
	echo "# ndctl $NDCTL_VERSION tests, $(date -u +%Y-%m-%d)"
	echo
	printf '| test |'
	for k in "${kernels[@]}"; do
		case $k in base) printf ' v7.3 (base) |' ;; *) printf ' %s |' "$k" ;; esac
	done
	echo
	printf '|---|'; printf -- '---|%.0s' "${kernels[@]}"; echo
	for t in "${tests[@]}"; do
		printf '| %s |' "$t"
		declare -A st=()
		for k in "${kernels[@]}"; do
			c=$(cell "$top/$k" "$t")
			st[$k]=$(status "$c")
			printf ' %s |' "$c"
		done
		echo
		case ${st[series]:-} in
		fail|bad) [ "${st[base]:-}" = "${st[series]}" ] || rc=1 ;;
		esac
		unset st
	done
	echo
	for k in "${kernels[@]}"; do
		echo "- $k: $(cat "$top/$k/kernel"), guest $(cat "$top/$k/seconds") s," \
			"$(grep -qs '^HARNESS: DONE' "$top/$k/results.log" && echo finished || echo 'did not finish')," \
			"kernel log: $(grep -cE "$kernel_bad" "$top/$k/console.log" || true) complaint lines"
	done
	echo "- guest: -m 6G, memmap=${NDCTL_MEMMAP:-3G!4G} (legacy e820 pmem), two 1042 MiB QEMU NVDIMMs with ${NDCTL_LABEL_SIZE:-128K} label areas"
	echo "- logs: $top/KERNEL/{results.log,console.log,ndctl-logs/TEST.log}"
} >"$top/summary.md"
cat "$top/summary.md"
exit "$rc"
