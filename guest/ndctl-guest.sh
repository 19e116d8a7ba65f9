#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ndctl's own tests in the guest (make ndctl, scripts/ndctl.sh): run by
# guest/fstests-guest.sh when /harness/fstests.env has HARNESS_SUITE=ndctl,
# with its output going to the host's results log. Also from that file:
#   NDCTL_TESTS    the tests to run, by their names in ndctl's
#                  test/meson.build (dax-ext4.sh, device-dax, ...)
#   NDCTL_TIMEOUT  the limit of one test in seconds (meson's: 600)
# Runs each test as ndctl's meson test does (NDCTL, DAXCTL, CXL,
# TEST_PATH, DATA_PATH) without meson, from a fresh working directory,
# and prints one line per test:
#   NDCTL-RESULT NAME pass|skip|fail SECONDS REASON
# A test that loads nfit_test or cxl_test is not run: the kernel has no
# modules (CONFIG_MODULES=n); nor is revoke-devmem without /dev/mem. Exit status 77 is a skip (its reason: the
# test's last line of output), anything but 0 a failure. Each test's
# output stays in /harness/ndctl-logs/NAME.log for the host to copy
# out; the kernel log gets "ndctl-test: begin/end NAME" around each.
set -u
# shellcheck disable=SC1091 # written by the host
. /harness/fstests.env

src=/opt/ndctl
bld=$src/build
export NDCTL=$bld/ndctl/ndctl DAXCTL=$bld/daxctl/daxctl CXL=$bld/cxl/cxl
export TEST_PATH=$bld/test DATA_PATH=$src/test
logs=/harness/ndctl-logs
rm -rf "$logs"
mkdir -p "$logs"

# What the tests expect of an installed system: ndctl and daxctl on the
# PATH, tracefs, /dev/mapper nodes, and journalctl -k --since -Ns for check_dmesg (there is
# no journal here: the kernel messages of the last N seconds from dmesg).
bin=/tmp/ndctl-bin
mkdir -p "$bin"
ln -sf "$NDCTL" "$DAXCTL" "$CXL" "$bin/"
cat >"$bin/journalctl" <<'SHIM'
#!/bin/sh
since=
while [ $# -gt 0 ]; do
	case $1 in --since) since=$2; shift ;; --since=*) since=${1#--since=} ;; esac
	shift
done
secs=${since#-}
secs=${secs%s}
case $secs in ''|*[!0-9]*) secs=100000000 ;; esac
now=$(cut -d' ' -f1 /proc/uptime)
dmesg | awk -v from="$now" -v n="$secs" '
	{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
	t + 0 >= from - n { print }' | tac
SHIM
chmod 755 "$bin/journalctl"
export PATH=$bin:$PATH
# dmsetup (dm.sh) waits for udev otherwise, and there is none: it makes
# the /dev/mapper nodes itself.
export DM_UDEV_SYNCHRONIZE=0 DM_DISABLE_UDEV=1
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing

echo "ndctl $("$NDCTL" --version) tests on kernel $(uname -r): ${NDCTL_TESTS:-}"
echo "kernel command line: $(cat /proc/cmdline)"
# The QEMU NVDIMMs (ACPI.NFIT) come with empty label areas: initialize
# them, as test/align.sh does, so that the tests can make namespaces.
if "$NDCTL" list -D -b ACPI.NFIT 2>/dev/null | grep -q '"dev"'; then
	{ "$NDCTL" disable-region -b ACPI.NFIT all &&
	  "$NDCTL" init-labels -f -b ACPI.NFIT all &&
	  "$NDCTL" enable-region -b ACPI.NFIT all; } 2>&1 | sed 's/^/  /'
fi
"$NDCTL" list -RNDu 2>&1 | sed 's/^/  /'
grep -iE 'persistent|nvdimm|reserved' /proc/iomem | sed 's/^/  iomem: /'

# The program of a test name: a script in the source tree's test/, else
# an executable of the build (dashes become underscores in a few).
program() {
	local name=$1
	case $name in
	*.sh) [ -x "$src/test/$name" ] && echo "$src/test/$name" ;;
	*)
		if [ -x "$bld/test/$name" ]; then echo "$bld/test/$name"
		elif [ -x "$bld/test/${name//-/_}" ]; then echo "$bld/test/${name//-/_}"
		fi ;;
	esac
}

result() { echo "NDCTL-RESULT $1 $2 $3 $4"; }
for name in ${NDCTL_TESTS:-}; do
	prog=$(program "$name")
	if [ -z "$prog" ]; then
		result "$name" fail 0 "no such test in $src"
		continue
	fi
	if grep -qE 'modprobe (-r )?(nfit_test|cxl_test)' "$prog" 2>/dev/null; then
		result "$name" skip 0 "needs the nfit_test/cxl_test module (CONFIG_MODULES=n)"
		continue
	fi
	# revoke-devmem maps the pmem through /dev/mem, which the harness's
	# kernel does not have.
	if [ "$name" = revoke-devmem ] && [ ! -e /dev/mem ]; then
		result "$name" skip 0 "needs /dev/mem (CONFIG_DEVMEM=n)"
		continue
	fi
	work=/tmp/ndctl-work/$name
	rm -rf "$work"
	mkdir -p "$work"
	echo "ndctl-test: begin $name" >/dev/kmsg
	start=$(date +%s)
	(cd "$work" && exec timeout -k 10 "${NDCTL_TIMEOUT:-600}" "$prog") \
		>"$logs/$name.log" 2>&1 </dev/null
	rc=$?
	secs=$(($(date +%s) - start))
	echo "ndctl-test: end $name rc $rc" >/dev/kmsg
	# Whatever a failed test left mounted on the pmem devices.
	grep -E '^/dev/(pmem|mapper)' /proc/mounts | cut -d' ' -f2 | xargs -r umount -l
	case $rc in
	0) result "$name" pass "$secs" "" ;;
	77)
		reason=$(grep -v '^+' "$logs/$name.log" | grep -v '^[[:space:]]*$' | tail -n 1)
		result "$name" skip "$secs" "${reason:-exit 77}" ;;
	124|137) result "$name" fail "$secs" "timed out after ${NDCTL_TIMEOUT:-600} s" ;;
	*)
		result "$name" fail "$secs" "exit $rc"
		tail -n 30 "$logs/$name.log" | sed "s/^/  $name: /" ;;
	esac
done
"$NDCTL" list -RNDu 2>&1 | sed 's/^/  /'
sync
exit 0
