#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Usage: fuzz-guest.sh CONFIG [DAX-FUZZ OPTIONS...]
# In the guest: make the SCRATCH namespace a filesystem of CONFIG, mount
# it -o dax=always on DAX_SCRATCH_DIR and run /harness/dax-fuzz there
# (Documentation/fuzz.md). CONFIG:
#   ext4       mkfs.ext4 defaults
#   xfs        mkfs.xfs defaults (reflink on, no stripe unit)
#   xfs-su2m   mkfs.xfs -d su=2m,sw=1: extents PMD faults can map
# Exits with dax-fuzz's status (0 clean, 1 failure, 2 setup, 4 not DAX).
config=${1:?usage: fuzz-guest.sh CONFIG [DAX-FUZZ OPTIONS...]}
shift
dev=${DAX_SCRATCH_DEV:-/dev/pmem1}
dir=${DAX_SCRATCH_DIR:-/mnt/scratch}

case $config in
ext4) fs=ext4 ;;
xfs) fs=xfs ;;
xfs-su2m) fs=xfs ;;
*) echo "fuzz-guest.sh: unknown config '$config' (ext4, xfs, xfs-su2m)"; exit 2 ;;
esac

case $config in
ext4) mkfs.ext4 -q -F "$dev" ;;
xfs) mkfs.xfs -q -f "$dev" ;;
xfs-su2m) mkfs.xfs -q -f -d su=2m,sw=1 "$dev" ;;
esac || { echo "fuzz-guest.sh: mkfs of $config on $dev failed"; exit 2; }
# Exchange-range (XFS_IOC_EXCHANGE_RANGE) needs the superblock's
# EXCHRANGE incompat bit (1 << 6), which mkfs.xfs sets from xfsprogs 6.10
# (-i exchange=1); Debian 12's 6.1 cannot, so set it here: the bit is all
# that mkfs does for it. write -d: this xfs_db's verifier does not know it.
if [ "$fs" = xfs ]; then
	incompat=$(xfs_db -c 'sb 0' -c 'print features_incompat' "$dev" | sed -n 's/^features_incompat = //p')
	xfs_db -x -c 'sb 0' -c "write -d features_incompat $((incompat | 64))" "$dev" >/dev/null ||
		{ echo "fuzz-guest.sh: cannot set the exchange-range bit on $dev"; exit 2; }
fi
mkdir -p "$dir"
mount -t "$fs" -o dax=always "$dev" "$dir" ||
	{ echo "fuzz-guest.sh: cannot mount $dev on $dir"; exit 2; }
mkdir -p "$dir/fuzz"
echo "FUZZ-CONFIG $config ($(uname -r))"
/harness/dax-fuzz "$@" "$dir/fuzz"
rc=$?
umount "$dir" || rc=2
echo "FUZZ-EXIT $config $rc"
exit "$rc"
