#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Init (PID 1) of the fstests guests, on the Debian root disk that
# scripts/mkrootfs.sh makes. The host writes /harness/fstests.env with
#   HARNESS_SUITE   fstests (the default) or ndctl: then it runs
#                   /harness/ndctl-guest.sh instead (make ndctl)
#   FSTESTS_FS      ext4 or xfs
#   FSTESTS_MKFS    mkfs options for TEST and SCRATCH
#   FSTESTS_ARGS    the arguments of fstests' ./check (tests or -g groups;
#                   none: no ./check)
#   FSTESTS_FSX     fsx runs after ./check, one per line: NAME SEED OPS
#                   [fsx options] (tests/fsx-runs), on a file of TEST
# Sets up the two NVDIMMs as fsdax (/dev/pmem0 = TEST, /dev/pmem1 =
# SCRATCH; /dev/vdb, when there, is LOGWRITES_DEV), makes TEST's
# filesystem, runs ./check with both mounted -o dax=always, then the fsx
# runs, and powers off. ./check's output goes to /dev/ttyS1 (the
# host's results log), the kernel log to the console; the results stay
# in /opt/xfstests/results on the root disk for the host to copy out.
# /usr/local/sbin first: its su is the one that works here (su-nopam.sh).
export PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t devpts devpts /dev/pts
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/mounts /etc/mtab
mount -o remount,rw /
hostname fstests-guest

out=/dev/ttyS1
say() { echo "HARNESS: $*" >"$out"; }
finish() {
	say "DONE $1"
	sync
	umount /mnt/test /mnt/scratch 2>/dev/null
	# Wait for the power-off with builtins on a FIFO in tmpfs: the root
	# disk goes away during it, and an exec of sleep(1) from it then
	# fails with a bus error that kills init (a panic in the log).
	mkfifo /run/halt
	mount -o remount,ro /
	echo o >/proc/sysrq-trigger
	read -r -t 60 _ <>/run/halt
}

# shellcheck disable=SC1091
. /harness/fstests.env
# make ndctl: ndctl's own tests instead (guest/ndctl-guest.sh), on the
# legacy pmem region and the NVDIMMs as the kernel found them.
if [ "${HARNESS_SUITE:-fstests}" = ndctl ]; then
	/harness/ndctl-guest.sh >"$out" 2>&1
	finish $?
fi
if ! /harness/fsdax-setup.sh >"$out" 2>&1; then
	say "SETUP-FAILED fsdax"
	finish 2
fi
# dmsetup waits for udev otherwise, and there is none.
export DM_UDEV_SYNCHRONIZE=0 DM_DISABLE_UDEV=1

# shellcheck disable=SC2153 # FSTESTS_FS: from /harness/fstests.env
cat >/opt/xfstests/local.config <<CONFIG
export FSTYP=$FSTESTS_FS
export TEST_DEV=/dev/pmem0
export TEST_DIR=/mnt/test
export SCRATCH_DEV=/dev/pmem1
export SCRATCH_MNT=/mnt/scratch
export MKFS_OPTIONS="$FSTESTS_MKFS"
export MOUNT_OPTIONS="-o dax=always"
export TEST_FS_MOUNT_OPTS="-o dax=always"
CONFIG
# The host's empty second disk: the log of dm-log-writes (generic/470).
[ -b /dev/vdb ] && echo "export LOGWRITES_DEV=/dev/vdb" >>/opt/xfstests/local.config
force=-F
[ "$FSTESTS_FS" = xfs ] && force=-f
# shellcheck disable=SC2086 # mkfs options are words
if ! mkfs."$FSTESTS_FS" -q "$force" $FSTESTS_MKFS /dev/pmem0 >"$out" 2>&1; then
	say "SETUP-FAILED mkfs.$FSTESTS_FS $FSTESTS_MKFS"
	finish 2
fi
say "fstests on $FSTESTS_FS ($FSTESTS_MKFS), -o dax=always, kernel $(uname -r): ./check ${FSTESTS_ARGS:-(none)}"
cd /opt/xfstests || finish 2
rc=0
if [ -n "${FSTESTS_ARGS:-}" ]; then
	# shellcheck disable=SC2086 # test names and options are words
	./check $FSTESTS_ARGS >"$out" 2>&1 || rc=$?
fi

# The fsx runs, each on a new file of TEST, reported in ./check's way
# ("fsx/NAME 12s", or "[failed, ...]") for scripts/fstests-report.py;
# fsx's own logs stay in /opt/xfstests/results/fsx for the host.
run_fsx() {
	local name=$1 seed=$2 ops=$3 start=$SECONDS st=0
	shift 3
	# The name first, as ./check does: a crash or time-out mid-run
	# then shows on its line.
	printf 'fsx/%s ' "$name"
	echo "fsx-run: begin $name" >/dev/kmsg
	./ltp/fsx -q -S "$seed" -N "$ops" -P results/fsx "$@" "/mnt/test/fsx-$name" \
		>"results/fsx/$name.out" 2>&1 || st=$?
	echo "fsx-run: end $name" >/dev/kmsg
	if [ "$st" = 0 ]; then
		echo "$((SECONDS - start))s"
	else
		echo "[failed, exit status $st] $(tail -n 1 "results/fsx/$name.out")"
		rc=1
	fi
	rm -f "/mnt/test/fsx-$name"
}
if [ -n "${FSTESTS_FSX:-}" ]; then
	mkdir -p results/fsx /mnt/test
	mountpoint -q /mnt/test || mount -o dax=always /dev/pmem0 /mnt/test
	# fsx on the root disk would pass and prove nothing.
	if ! grep -q '^/dev/pmem0 /mnt/test .*dax=always' /proc/mounts; then
		say "SETUP-FAILED /dev/pmem0 not mounted -o dax=always on /mnt/test for fsx"
		finish 2
	fi
	while read -r name seed ops opts; do
		read -r -a optv <<<"$opts"
		say "fsx $name: -S $seed -N $ops $opts"
		run_fsx "$name" "$seed" "$ops" "${optv[@]}" >"$out" 2>&1
	done <<<"$FSTESTS_FSX"
fi
finish "$rc"
