// SPDX-License-Identifier: GPL-2.0
/*
 * Removal of a pmem namespace under fs-DAX files.  Each test makes a
 * filesystem of the test directory's type on the SCRATCH device
 * (DAX_SCRATCH_DEV, mounted on DAX_SCRATCH_DIR), unbinds its pmem
 * namespace and binds it again: DAX_SCRATCH_DEV is overwritten.  One of
 * them adds a bad block to its pmem disk first (its badblocks file), one
 * a partition (BLKPG, no partition table), which goes with the unbind.
 * Without both variables the tests skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/blkpg.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "kselftest_harness.h"
#include "dax_util.h"

#define ND_PMEM		"/sys/bus/nd/drivers/nd_pmem"
#define UNBIND_PAGES	64

FIXTURE(unbind)
{
	const char *dev, *dir;
	const char *fstype, *mkfs;	/* the test directory's type */
	char nd[64];		/* the namespace's nd device: pfn1.0 */
	char part[PATH_MAX];	/* a partition of dev that holds the filesystem */
	bool mounted, unbound;
};

static int write_sysfs(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The nd device that provides block device @dev, bound to nd_pmem. */
static int nd_pmem_of(const char *dev, char *nd, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/block/%s/device", basename(dev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	if (strlen(basename(link)) >= len)
		return -ENAMETOOLONG;
	strcpy(nd, basename(link));
	snprintf(path, sizeof(path), ND_PMEM "/%s", nd);
	return access(path, F_OK) ? -ENODEV : 0;
}

/* Bind the namespace again and wait for its block device to come back. */
static int rebind(const char *dev, const char *nd)
{
	int ret = write_sysfs(ND_PMEM "/bind", nd), i;

	for (i = 0; !ret && i < 100 && access(dev, F_OK); i++)
		usleep(50 * 1000);
	return ret ?: access(dev, F_OK) ? -ENODEV : 0;
}

/*
 * Make a filesystem of the test directory's type, with @opts added to its
 * mkfs, on the SCRATCH device (or on the partition of it that a test added,
 * self->part) and mount it there with dax=always.  Returns
 * 0, or with @why set: -ENOENT if there is no such mkfs, -EINVAL if it
 * failed, -EIO if the mount failed or is not DAX.
 */
static int make_scratch_fs(FIXTURE_DATA(unbind) *self, const char *opts,
			   char *why, size_t len)
{
	const char *dev = self->part[0] ? self->part : self->dev;
	char cmd[PATH_MAX];
	int ret;

	if (snprintf(cmd, sizeof(cmd), "%s %s %s >/dev/null", self->mkfs, opts,
		     dev) >= (int)sizeof(cmd)) {
		snprintf(why, len, "device name too long: %s", dev);
		return -EINVAL;
	}
	ret = system(cmd);
	if (WIFEXITED(ret) && WEXITSTATUS(ret) == 127) {
		snprintf(why, len, "no %.*s", (int)strcspn(self->mkfs, " "),
			 self->mkfs);
		return -ENOENT;
	}
	if (ret) {
		snprintf(why, len, "%s failed", cmd);
		return -EINVAL;
	}
	mkdir(self->dir, 0755);
	if (mount(dev, self->dir, self->fstype, 0, "dax=always")) {
		snprintf(why, len, "mount %s on %s: %s", dev, self->dir,
			 strerror(errno));
		return -EIO;
	}
	if (dax_dir_is_dax(self->dir) != 1) {
		umount(self->dir);
		snprintf(why, len, "%s is not DAX after mounting with dax=always",
			 self->dir);
		return -EIO;
	}
	self->mounted = true;
	return 0;
}

/* Unmount the SCRATCH filesystem and make it again with @opts: as above. */
static int remake_scratch_fs(FIXTURE_DATA(unbind) *self, const char *opts,
			     char *why, size_t len)
{
	if (umount(self->dir)) {
		snprintf(why, len, "umount %s: %s", self->dir, strerror(errno));
		return -EIO;
	}
	self->mounted = false;
	return make_scratch_fs(self, opts, why, len);
}

/* Add or delete (@op) partition 1 of the SCRATCH disk, @start and @length. */
static int blkpg_scratch(FIXTURE_DATA(unbind) *self, int op, long long start,
			 long long length)
{
	struct blkpg_partition part = {
		.pno = 1,
		.start = start,
		.length = length,
	};
	struct blkpg_ioctl_arg arg = {
		.op = op,
		.datalen = sizeof(part),
		.data = &part,
	};
	int fd = open(self->dev, O_RDONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKPG, &arg))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Add partition 1 of the SCRATCH disk, from 2 MiB (a PMD boundary) to the
 * disk's last 2 MiB boundary, in place of one a killed run left, and wait for
 * its device node, which goes in self->part.  No partition table is written:
 * the partition lasts as long as the disk.
 */
static int add_scratch_partition(FIXTURE_DATA(unbind) *self)
{
	const long long pmd = 2 << 20;
	size_t n = strlen(self->dev);
	uint64_t size;
	int fd, ret, i;

	fd = open(self->dev, O_RDONLY);
	if (fd < 0)
		return -errno;
	ret = ioctl(fd, BLKGETSIZE64, &size) ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	blkpg_scratch(self, BLKPG_DEL_PARTITION, 0, 0);
	ret = blkpg_scratch(self, BLKPG_ADD_PARTITION, pmd,
			    (long long)(size & ~(uint64_t)(pmd - 1)) - pmd);
	if (ret)
		return ret;
	/* pmem1 -> pmem1p1, as the kernel names partitions of such disks */
	snprintf(self->part, sizeof(self->part), "%s%s1", self->dev,
		 n && isdigit((unsigned char)self->dev[n - 1]) ? "p" : "");
	for (i = 0; i < 100 && access(self->part, F_OK); i++)
		usleep(50 * 1000);
	return access(self->part, F_OK) ? -ENODEV : 0;
}

FIXTURE_SETUP(unbind)
{
	const char *test_dir;
	char why[PATH_MAX + 64];
	struct statfs sfs;
	int ret;

	self->dev = getenv("DAX_SCRATCH_DEV");
	self->dir = getenv("DAX_SCRATCH_DIR");
	test_dir = dax_check_dir(why, sizeof(why));
	if (!test_dir)
		SKIP(return, "%.1000s", why);
	if (!self->dev || !self->dir)
		SKIP(return, "DAX_SCRATCH_DEV and DAX_SCRATCH_DIR not set");
	if (geteuid())
		SKIP(return, "unbinding a namespace needs root");
	ret = nd_pmem_of(self->dev, self->nd, sizeof(self->nd));
	if (ret)
		SKIP(return, "%s is not a pmem namespace of nd_pmem: %s", self->dev,
		     strerror(-ret));
	ASSERT_EQ(0, statfs(test_dir, &sfs));
	switch (sfs.f_type) {
	case 0xef53:
		self->fstype = "ext4";
		self->mkfs = "mkfs.ext4 -q -F";
		break;
	case 0x58465342:
		self->fstype = "xfs";
		self->mkfs = "mkfs.xfs -q -f";
		break;
	default:
		SKIP(return, "%s is neither ext4 nor xfs", test_dir);
	}
	ret = make_scratch_fs(self, "", why, sizeof(why));
	if (ret == -ENOENT)
		SKIP(return, "%.1000s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
}

/* In the parent: the device must come back even if the test crashed. */
FIXTURE_TEARDOWN_PARENT(unbind)
{
	/*
	 * Bind first: unmounting evicts the files, which walks their DAX
	 * entries, and the struct pages of those went away with the device
	 * (v7.3 oopses in dax_layout_busy_page_range() then).  Binding the
	 * namespace again gives the same pfns struct pages again.
	 */
	if (self->unbound && rebind(self->dev, self->nd)) {
		TH_LOG("cannot bind %s again; %s stays mounted", self->nd, self->dir);
		return;
	}
	if (self->mounted)
		umount(self->dir);
	/* An unbind took the partition away with its disk. */
	if (self->part[0] && !self->unbound) {
		int ret = blkpg_scratch(self, BLKPG_DEL_PARTITION, 0, 0);

		if (ret)
			TH_LOG("cannot delete %s: %s", self->part, strerror(-ret));
	}
}

/*
 * Create @name in the test directory with UNBIND_PAGES pages of the pattern
 * of @seed, write it back, and map it with PTEs, checking what the mapping
 * shows: the mapping, with the file in *@fd.  The tests use named files: the
 * last close of an unlinked one would evict it while the device is away, as
 * unmounting would (see the teardown).
 */
static char *map_new_file(struct __test_metadata *_metadata,
			  FIXTURE_DATA(unbind) *self, const char *name,
			  uint64_t seed, int *fd)
{
	size_t len = UNBIND_PAGES * dax_page_size();
	char path[PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", self->dir, name);
	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, *fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, dax_write_pattern(*fd, seed, 0, UNBIND_PAGES));
	ASSERT_EQ(0, fsync(*fd));
	p = dax_map_pte(*fd, len, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(-1, dax_verify(p, UNBIND_PAGES, seed, 0));
	return p;
}

/* How many of the UNBIND_PAGES pages at @p read without SIGBUS. */
static size_t pages_readable(const char *p)
{
	size_t ps = dax_page_size(), i, n = 0;

	for (i = 0; i < UNBIND_PAGES; i++)
		n += !dax_probe_read(p + i * ps, NULL);
	return n;
}

/* How many of the UNBIND_PAGES pages at @p the page table maps. */
static size_t pages_present(const char *p)
{
	size_t ps = dax_page_size(), i, n = 0;

	for (i = 0; i < UNBIND_PAGES; i++)
		n += !!(dax_pagemap(p + i * ps) & DAX_PAGEMAP_PRESENT);
	return n;
}

/*
 * Once the namespace under a mounted filesystem is unbound, a read fault
 * fails (SIGBUS: the filesystem is shut down, dax_direct_access() fails).
 * Fault-around must not map the pfns that the file's DAX entries still hold
 * either: their struct pages are gone, and the storage may be given to
 * another user.  The entries are made by reading the file through a mapping;
 * MADV_DONTNEED then drops the page table entries but not the DAX entries,
 * so each read after the unbind goes through fault-around.
 */
TEST_F_TIMEOUT(unbind, no_mapping_of_a_dead_device, 120)
{
	size_t len = UNBIND_PAGES * dax_page_size(), readable, present;
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	char *p;
	int fd;

	p = map_new_file(_metadata, self, "unbind", seed, &fd);
	ASSERT_EQ(0, madvise(p, len, MADV_DONTNEED));

	ASSERT_EQ(0, write_sysfs(ND_PMEM "/unbind", self->nd));
	self->unbound = true;
	readable = pages_readable(p);
	present = pages_present(p);
	EXPECT_EQ(0, readable)
		TH_LOG("%zu of %d pages readable after %s was unbound", readable,
		       UNBIND_PAGES, self->nd);
	EXPECT_EQ(0, present)
		TH_LOG("%zu of %d pages mapped after %s was unbound", present,
		       UNBIND_PAGES, self->nd);
	munmap(p, len);
	close(fd);
}

/*
 * The pages a process has mapped when the namespace under the filesystem is
 * unbound must be unmapped then: their struct pages go away with the device,
 * and walking page table entries that still name them (a pagemap read,
 * munmap(), exit) oopses.  After the unbind each page reads as SIGBUS (checked
 * first: a read through a stale entry does not oops), none is mapped, and
 * munmap() returns.
 */
static void unmapped_by_unbind(struct __test_metadata *_metadata,
			       FIXTURE_DATA(unbind) *self)
{
	size_t len = UNBIND_PAGES * dax_page_size(), readable, present;
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	char *p;
	int fd;

	p = map_new_file(_metadata, self, "mapped", seed, &fd);
	present = pages_present(p);
	ASSERT_EQ(UNBIND_PAGES, present) TH_LOG("the read did not map every page");

	ASSERT_EQ(0, write_sysfs(ND_PMEM "/unbind", self->nd));
	self->unbound = true;
	readable = pages_readable(p);
	EXPECT_EQ(0, readable)
		TH_LOG("%zu of %d pages readable after %s was unbound", readable,
		       UNBIND_PAGES, self->nd);
	present = pages_present(p);
	EXPECT_EQ(0, present)
		TH_LOG("%zu of %d pages still mapped after %s was unbound", present,
		       UNBIND_PAGES, self->nd);
	/* With pages still mapped, the pagemap read above oopsed. */
	munmap(p, len);
	close(fd);
}

TEST_F_TIMEOUT(unbind, mapped_pages_after_unbind, 120)
{
	unmapped_by_unbind(_metadata, self);
}

/*
 * The same on a partition of the pmem disk.  The partitions share the disk's
 * dax_device, which has one holder: an ext4 on a partition does not take it,
 * and kill_dax() cannot tell it of the unbind.  It hears of it when
 * del_gendisk() marks its block device dead, after kill_dax() and before the
 * struct pages go, and must unmap its files then.  An xfs takes the holder on
 * a partition too; it refuses DAX there with reflink, which is left out.
 */
TEST_F_TIMEOUT(unbind, mapped_pages_after_unbind_on_a_partition, 120)
{
	char why[PATH_MAX + 64];
	int ret;

	ASSERT_EQ(0, umount(self->dir));
	self->mounted = false;
	ret = add_scratch_partition(self);
	ASSERT_EQ(0, ret) TH_LOG("partition 1 of %s: %s", self->dev, strerror(-ret));
	ret = make_scratch_fs(self, strcmp(self->fstype, "xfs") ? "" : "-m reflink=0",
			      why, sizeof(why));
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	unmapped_by_unbind(_metadata, self);
}

#define REF_PAGE	5	/* the page a pipe keeps across the unbind */

/*
 * A page that a pipe references (vmsplice) when the namespace under the
 * filesystem is unbound keeps its struct page in use: the unbind has to wait
 * for the reference, as it waits for the references to its dev_pagemap, or
 * the pipe's release and the eviction of the file (whose DAX entries still
 * name the page) touch the freed memory map.  The file is open during the
 * unbind, which therefore does not evict it.  The unbind, in a child that
 * holds no part of the pipe, must still be waiting after 2 s and return once
 * the pipe is closed; the files are then closed and evicted by unmounting the
 * filesystem with the device still away.  With @clone, the pipe takes the
 * page from a mapping of a clone of the file, which both map (xfs reflink).
 */
static void referenced_at_unbind(struct __test_metadata *_metadata,
				 FIXTURE_DATA(unbind) *self, bool clone)
{
	size_t ps = dax_page_size(), len = UNBIND_PAGES * ps;
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	char path[PATH_MAX], *p, *q;
	int fd, cfd = -1, pfd[2], status = 0;
	struct iovec iov;
	bool exited;
	pid_t pid;

	p = map_new_file(_metadata, self, "referenced", seed, &fd);
	q = p;
	if (clone) {
		snprintf(path, sizeof(path), "%s/referenced.clone", self->dir);
		cfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		ASSERT_LE(0, cfd);
		if (ioctl(cfd, FICLONE, fd))
			SKIP(return, "no reflink on this filesystem (FICLONE: %s)",
			     strerror(errno));
		q = dax_map_pte(cfd, len, PROT_READ, MAP_SHARED);
		ASSERT_NE(MAP_FAILED, q);
		ASSERT_EQ(-1, dax_verify(q, UNBIND_PAGES, seed, 0));
	}
	ASSERT_EQ(0, pipe(pfd));
	iov.iov_base = q + REF_PAGE * ps;
	iov.iov_len = ps;
	ASSERT_EQ((ssize_t)ps, vmsplice(pfd[1], &iov, 1, 0));
	/*
	 * The pipe is left as the page's only user.  The files stay open: the
	 * unbind evicts the files nobody uses, and eviction waits for the page.
	 */
	munmap(p, len);
	if (clone)
		munmap(q, len);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pfd[0]);
		close(pfd[1]);
		_exit(write_sysfs(ND_PMEM "/unbind", self->nd) ? 1 : 0);
	}
	self->unbound = true;
	exited = dax_wait_exit(pid, 2, &status);
	EXPECT_FALSE(exited)
		TH_LOG("the unbind returned (wait status %#x) while a pipe references a page",
		       status);
	/* Without the wait, the struct page is gone: this may oops. */
	close(pfd[0]);
	close(pfd[1]);
	if (!exited)
		ASSERT_TRUE(dax_wait_exit(pid, 60, &status))
			TH_LOG("the unbind did not return within 60 s of the pipe's close");
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the unbind failed: wait status %#x", status);
	/* Evicts the files, whose entries named the page, with the device away. */
	close(fd);
	if (clone)
		close(cfd);
	ASSERT_EQ(0, umount(self->dir)) TH_LOG("umount %s: %s", self->dir, strerror(errno));
	self->mounted = false;
}

TEST_F_TIMEOUT(unbind, referenced_page_at_unbind, 120)
{
	referenced_at_unbind(_metadata, self, false);
}

TEST_F_TIMEOUT(unbind, referenced_clone_page_at_unbind, 120)
{
	referenced_at_unbind(_metadata, self, true);
}

/* Byte offset on the device of byte @off of @fd (FIEMAP), or -errno. */
static long long device_offset(int fd, off_t off)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe;
	} req = { .fm = { .fm_start = off, .fm_length = 1,
			  .fm_flags = FIEMAP_FLAG_SYNC, .fm_extent_count = 1 } };
	const struct fiemap_extent *fe = &req.fm.fm_extents[0];

	if (ioctl(fd, FS_IOC_FIEMAP, &req.fm))
		return -errno;
	if (req.fm.fm_mapped_extents != 1 || fe->fe_logical > (__u64)off ||
	    (fe->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_ENCODED)))
		return -ENXIO;
	return fe->fe_physical + off - fe->fe_logical;
}

#define BAD_PAGE	9

/*
 * A block that the pmem driver lists as bad (a scrub found it; here it is
 * written to the disk's badblocks file): dax_direct_access() refuses it, so
 * read(2) fails with EIO and a read fault with SIGBUS.  Fault-around must not
 * map it either, from the DAX entry of a mapping made before the block went
 * bad.  The list is the driver's: unbinding the namespace and binding it
 * again starts a new one, which the teardown does.
 */
TEST_F_TIMEOUT(unbind, badblocks_not_mapped_around, 120)
{
	size_t ps = dax_page_size(), len = UNBIND_PAGES * ps;
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	char path[PATH_MAX], val[64], buf[4096 * 4], *p;
	long long where;
	int fd;

	ASSERT_GE(sizeof(buf), ps);
	p = map_new_file(_metadata, self, "badblocks", seed, &fd);
	munmap(p, len);
	where = device_offset(fd, BAD_PAGE * ps);
	ASSERT_LE(0, where) TH_LOG("FIEMAP: %s", strerror(-where));

	snprintf(path, sizeof(path), "/sys/block/%s/badblocks", basename(self->dev));
	snprintf(val, sizeof(val), "%lld %zu", where / 512, ps / 512);
	ASSERT_EQ(0, write_sysfs(path, val)) TH_LOG("%s: cannot add '%s'", path, val);
	ASSERT_EQ(-1, pread(fd, buf, ps, BAD_PAGE * ps))
		TH_LOG("read(2) of the bad page succeeded: the driver ignores its badblocks");
	ASSERT_EQ(EIO, errno);

	p = dax_map_pte(fd, len, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	dax_touch(p + (BAD_PAGE - 1) * ps);
	EXPECT_FALSE(dax_pagemap(p + BAD_PAGE * ps) & DAX_PAGEMAP_PRESENT)
		TH_LOG("the bad page was mapped around page %d", BAD_PAGE - 1);
	EXPECT_EQ(-EFAULT, dax_probe_read(p + BAD_PAGE * ps, NULL))
		TH_LOG("the bad page can be read through the mapping");
	munmap(p, len);
	close(fd);

	ASSERT_EQ(0, umount(self->dir));
	self->mounted = false;
	ASSERT_EQ(0, write_sysfs(ND_PMEM "/unbind", self->nd));
	self->unbound = true;
}

#define RMAP_WALK_MIB	16	/* a file the walk takes a while over */

/*
 * xfs with rmapbt finds the processes that map a device about to go away by
 * walking its reverse map, with the filesystem frozen, unmapping the pages of
 * each file it meets, and shuts down after the walk.  Freezing does not stop
 * read faults: a process that reads a file again after the walk unmapped it
 * maps its pages again until the shutdown, and those page table entries would
 * outlive the device (its struct pages go with it; munmap() then oopses).  A
 * child reads file "a", which the walk meets first, over and over through a
 * PTE mapping, while the walk goes through file "b", which has a DAX entry
 * for every page of its RMAP_WALK_MIB; once the unbind returns, no page of
 * "a" may be mapped.  The namespace is bound again before the child exits.
 * The unbind must also return: the walk of a filesystem of several groups
 * used to take about four billion pages for each file it met.
 */
TEST_F_TIMEOUT(unbind, rmapbt_faults_during_the_walk, 300)
{
	size_t ps = dax_page_size(), len = UNBIND_PAGES * ps, i;
	size_t big = (size_t)RMAP_WALK_MIB << 20;
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	int fa, fb, stop[2], report[2], status, ret;
	char path[PATH_MAX], why[PATH_MAX + 64], *p;
	size_t counts[2] = { 0, 0 };
	struct dax_kwatch kwatch;
	pid_t pid;

	if (strcmp(self->fstype, "xfs"))
		SKIP(return, "the reverse map walk is xfs's");
	ret = remake_scratch_fs(self, "-m rmapbt=1", why, sizeof(why));
	if (ret == -ENOENT || ret == -EINVAL)
		SKIP(return, "%.1000s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	DAX_KWATCH_START(&kwatch);

	snprintf(path, sizeof(path), "%s/a", self->dir);
	fa = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fa);
	ASSERT_EQ(0, dax_write_pattern(fa, seed, 0, UNBIND_PAGES));
	ASSERT_EQ(0, fsync(fa));
	snprintf(path, sizeof(path), "%s/b", self->dir);
	fb = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fb);
	ASSERT_EQ(0, fallocate(fb, 0, 0, big));
	ASSERT_EQ(0, dax_write_pattern(fb, seed, 0, big / ps));
	ASSERT_EQ(0, fsync(fb));
	/* A DAX entry for every page of "b": the walk looks at each. */
	p = dax_map_pte(fb, big, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < big; i += ps)
		dax_touch(p + i);
	munmap(p, big);

	ASSERT_EQ(0, pipe(stop));
	ASSERT_EQ(0, pipe(report));
	/* A child that died must fail the test, not kill it (SIGPIPE). */
	signal(SIGPIPE, SIG_IGN);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		close(stop[1]);
		close(report[0]);
		p = dax_map_pte(fa, len, PROT_READ, MAP_SHARED);
		if (p == MAP_FAILED)
			_exit(2);
		fcntl(stop[0], F_SETFL, O_NONBLOCK);
		for (i = 0; i < UNBIND_PAGES; i++)
			dax_probe_read(p + i * ps, NULL);
		if (write(report[1], "r", 1) != 1)
			_exit(3);
		/* Read every page until told to stop: what is unmapped faults. */
		while (read(stop[0], &c, 1) < 0)
			for (i = 0; i < UNBIND_PAGES; i++)
				dax_probe_read(p + i * ps, NULL);
		for (i = 0; i < UNBIND_PAGES; i++) {
			counts[0] += !!(dax_pagemap(p + i * ps) & DAX_PAGEMAP_PRESENT);
			counts[1] += !dax_probe_read(p + i * ps, NULL);
		}
		if (write(report[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(3);
		/* Keep the mapping until the namespace is back: then exit. */
		fcntl(stop[0], F_SETFL, 0);
		_exit(read(stop[0], &c, 1) < 0);
	}
	close(stop[0]);
	close(report[1]);
	/* The child mapped and read "a" once before the walk begins. */
	ASSERT_EQ(1, read(report[0], why, 1));

	ret = write_sysfs(ND_PMEM "/unbind", self->nd);
	if (!ret)
		self->unbound = true;
	EXPECT_EQ(1, write(stop[1], "s", 1));
	EXPECT_EQ((ssize_t)sizeof(counts), read(report[0], counts, sizeof(counts)));
	if (self->unbound && !rebind(self->dev, self->nd))
		self->unbound = false;
	EXPECT_EQ(1, write(stop[1], "x", 1));
	close(stop[1]);
	close(report[0]);
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, ret) TH_LOG("unbind %s: %s", self->nd, strerror(-ret));
	EXPECT_EQ(0, counts[0])
		TH_LOG("%zu of %d pages of \"a\" mapped after %s was unbound",
		       counts[0], UNBIND_PAGES, self->nd);
	EXPECT_EQ(0, counts[1])
		TH_LOG("%zu of %d pages of \"a\" readable after %s was unbound",
		       counts[1], UNBIND_PAGES, self->nd);
	close(fa);
	close(fb);
	DAX_ASSERT_NO_COMPLAINT(&kwatch);
}

#define HARD_OFFLINE	"/sys/devices/system/memory/hard_offline_page"

#define FAILURE_REPORTS	64	/* at most, per round: a burst around the umount */

/*
 * Report a memory failure at physical address @addr FAILURE_REPORTS times,
 * one right after the other: each report goes to the filesystem that holds
 * the DAX device (xfs with rmapbt walks its reverse map for the owners of
 * the block), and each adds a line to the kernel log and a page to
 * HardwareCorrupted.
 */
static void report_failures(uint64_t addr)
{
	char val[32];
	int i;

	snprintf(val, sizeof(val), "%#llx", (unsigned long long)addr);
	for (i = 0; i < FAILURE_REPORTS; i++)
		write_sysfs(HARD_OFFLINE, val);
}

/*
 * A memory failure that the filesystem hears of while it is unmounted: the
 * notification must keep the filesystem alive while it uses it, or not use
 * it.  xfs with rmapbt walks its reverse map for the owners of the failed
 * block, with the groups, buffers and mount that the unmount frees (ext4
 * leaves memory failures to memory_failure()).  The failed block is a free
 * one (a file's, unlinked, and the filesystem mounted again so that
 * background inode freeing is done with it): the walk finds no owner and
 * poisons no page.  Round after round, a child reports the failure in a
 * burst while the parent unmounts the filesystem, and the parent mounts it
 * again.  The unmount often lands in a walk, whose reference on the
 * superblock is then the last one.  Without the lifetime rule the
 * walk oopses on what the unmount freed, or logs "Corruption detected"
 * (groups still referenced), within a few rounds.
 */
TEST_F_TIMEOUT(unbind, memory_failure_racing_umount, DAX_RACE_TIMEOUT)
{
	double end = dax_now() + dax_race_seconds(10);
	size_t ps = dax_page_size();
	char path[PATH_MAX], why[PATH_MAX + 64], *p;
	struct dax_kwatch kwatch;
	unsigned long rounds = 0;
	uint64_t addr;
	int fd, status, ret, go[2];
	pid_t pid;
	char c;

	if (strcmp(self->fstype, "xfs"))
		SKIP(return, "the reverse map walk is xfs's");
	if (geteuid() || access(HARD_OFFLINE, W_OK))
		SKIP(return, "no %s", HARD_OFFLINE);
	ret = remake_scratch_fs(self, "-m rmapbt=1", why, sizeof(why));
	if (ret == -ENOENT || ret == -EINVAL)
		SKIP(return, "%.1000s", why);
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	srandom(getpid());
	DAX_KWATCH_START(&kwatch);

	snprintf(path, sizeof(path), "%s/failed", self->dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, dax_write_pattern(fd, 1, 0, 1));
	ASSERT_EQ(0, fsync(fd));
	p = dax_map_pte(fd, ps, PROT_READ, MAP_SHARED);
	ASSERT_NE(MAP_FAILED, p);
	dax_touch(p);
	addr = (dax_pagemap(p) & DAX_PAGEMAP_PFN) * ps;
	munmap(p, ps);
	close(fd);
	ASSERT_NE(0, addr) TH_LOG("no PFN in /proc/self/pagemap");
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, umount(self->dir));
	self->mounted = false;
	ASSERT_EQ(0, mount(self->dev, self->dir, self->fstype, 0, "dax=always"));
	self->mounted = true;

	while (dax_now() < end) {
		ASSERT_EQ(0, pipe(go));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(go[1]);
			if (read(go[0], &c, 1) == 1)
				report_failures(addr);
			_exit(0);
		}
		close(go[0]);
		ASSERT_EQ(1, write(go[1], "g", 1));
		close(go[1]);
		/* Somewhere in the burst, which takes some 10 ms here. */
		usleep(random() % 5000);
		ret = umount(self->dir) ? -errno : 0;
		if (!ret)
			self->mounted = false;
		/* The rest of the burst would only fill the log. */
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, ret) TH_LOG("umount %s: %s", self->dir, strerror(-ret));
		DAX_ASSERT_NO_COMPLAINT(&kwatch);
		ASSERT_EQ(0, mount(self->dev, self->dir, self->fstype, 0, "dax=always"))
			TH_LOG("mount %s: %s", self->dev, strerror(errno));
		self->mounted = true;
		rounds++;
	}
	TH_LOG("%lu rounds", rounds);
	DAX_ASSERT_NO_COMPLAINT(&kwatch);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
