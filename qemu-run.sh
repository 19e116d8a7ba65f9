#!/bin/bash
# The main job: Linux v7.3 + the DAX fault-path series, built and booted in
# QEMU with two emulated NVDIMMs; runs the dax kselftests on each
# filesystem mounted -o dax=always and prints the results and a verdict.
# See README.md. Exit: 0 pass, 1 test failure or crash, 2 setup/config/
# build/boot error, 4 everything skipped.
set -euo pipefail
. "$(dirname "$0")/scripts/lib.sh"

usage() {
	cat <<USAGE
usage: ./qemu-run.sh [options] [-- CMD]
  --fs ext4|xfs|all     filesystems to test (default: all = ext4 xfs)
  --config PROFILE      a kernel-config/ profile: default, kasan, nodebug (default: default)
  --kernel BZIMAGE      boot this kernel instead of building one
  --no-series           build and boot plain v7.3 (the pinned base)
  --tests PATTERN       run only the dax kselftests whose name matches (shell glob)
  --append ARGS         extra kernel command line arguments
  --shell               interactive guest shell on this terminal
  --timeout S           guest time limit in seconds (default: 1800)
  --env NAME=VALUE      set NAME in the tests' environment in the guest
                        (repeatable; VALUE without spaces), e.g.
                        DAX_FAULT_AROUND=1 or DAX_RACE_SECONDS=60
  -- CMD                run CMD in the guest (fsdax set up), exit with its status
environment: KERNEL_SRC=DIR (your kernel git tree), KERNEL_BASE=REV,
  BUILD_DIR=DIR (default ./build), ACCEL=kvm|tcg
USAGE
}

fs=all profile=default kernel="" series=1 tests="" append="" mode=test timeout=1800 guestcmd=""
env=""
while [ $# -gt 0 ]; do
	case $1 in
	--fs|--config|--kernel|--tests|--append|--timeout|--env)
		[ $# -ge 2 ] || die "$1 needs an argument"
		case $1 in
		--fs) fs=$2 ;;
		--config) profile=$2 ;;
		--kernel) kernel=$2 ;;
		--tests) tests=$2 ;;
		--append) append=$2 ;;
		--timeout) timeout=$2 ;;
		--env)
			[[ $2 =~ ^[A-Z_][A-Z0-9_]*=[^[:space:]]*$ ]] ||
				die "--env needs NAME=VALUE (VALUE without spaces), not '$2'"
			env="${env:+$env }$2" ;;
		esac
		shift ;;
	--no-series) series=0 ;;
	--shell) mode=shell ;;
	-h|--help) usage; exit 0 ;;
	--) shift; mode=cmd guestcmd="$*"; break ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
	shift
done
case $fs in
all) fs="ext4 xfs" ;;
ext4|xfs) ;;
*) die "unsupported --fs '$fs' (ext4, xfs or all)" ;;
esac
case $timeout in
''|*[!0-9]*) die "--timeout needs a number of seconds, not '$timeout'" ;;
esac
[ "$mode" != cmd ] || [ -n "$guestcmd" ] || die "-- needs a command"
if [ ! -f "$TOP/kernel-config/$profile.config" ] || [ "$profile" = base ]; then
	profiles=()
	for f in "$TOP"/kernel-config/*.config; do
		f=${f##*/}
		[ "$f" = base.config ] || profiles+=("${f%.config}")
	done
	die "unknown --config '$profile' (kernel-config/ has: ${profiles[*]})"
fi
if [ -n "$kernel" ]; then
	[ -f "$kernel" ] || die "--kernel $kernel: no such file"
	[ "$(dd if="$kernel" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] ||
		die "--kernel $kernel is not an x86 bzImage"
fi
[ "$series" = 1 ] || [ -z "${KERNEL_SRC:-}" ] ||
	die "--no-series boots the pinned base; it does not take KERNEL_SRC"

# The tree with the series: its kselftests run in every guest (plain
# v7.3 too, which is how the tests show what v7.3 gets wrong).
src=$("$TOP/scripts/apply-series.sh")
obj=$BUILD/obj-$profile
[ -n "${KERNEL_SRC:-}" ] && obj=$BUILD/obj-user-$profile
if [ -z "$kernel" ]; then
	if [ "$series" = 1 ]; then
		"$TOP/scripts/build-kernel.sh" "$src" "$obj" "$profile"
		kernel=$obj/arch/x86/boot/bzImage
	else
		base=$("$TOP/scripts/get-base.sh")
		"$TOP/scripts/build-kernel.sh" "$base" "$obj-base" "$profile"
		kernel=$obj-base/arch/x86/boot/bzImage
	fi
else
	"$TOP/scripts/configure-kernel.sh" "$src" "$obj" "$profile"
fi
"$TOP/scripts/build-selftests.sh" "$src" "$obj" "$BUILD/kselftest-install"
if [ -n "$tests" ]; then
	have=$(sed -n 's/^dax://p' "$BUILD/kselftest-install/kselftest-list.txt" | tr '\n' ' ')
	match=
	for t in $have; do
		# shellcheck disable=SC2254
		case $t in $tests) match=$t ;; esac
	done
	[ -n "$match" ] || die "--tests '$tests' matches no dax kselftest (have: ${have% })"
fi
"$TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio" "$BUILD/kselftest-install"

logdir=$BUILD/logs/$(date +%Y%m%d-%H%M%S)-$$
export HARNESS_FS="$fs" HARNESS_TESTS="$tests" HARNESS_CMD="$guestcmd" HARNESS_ENV="$env"
export APPEND="$append" QEMU_TIMEOUT="$timeout"
"$TOP/scripts/boot-guest.sh" "$kernel" "$BUILD/initramfs.cpio" "$logdir" "$mode"
[ "$mode" != shell ] || exit 0
echo "logs: $logdir"
rc=0
"$TOP/scripts/verdict.sh" "$logdir" "$(echo "$fs" | tr ' ' +)" || rc=$?
exit "$rc"
