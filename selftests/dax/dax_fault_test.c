// SPDX-License-Identifier: GPL-2.0
/*
 * fs-DAX page fault basics, for shared, private and MAP_SYNC mappings:
 * file data, holes and unwritten extents read correctly, EOF gives SIGBUS,
 * hole punching and writes into holes replace what is mapped, private
 * mappings copy on write, writes through shared mappings update mtime, and
 * PTE faults complete under the per-VMA lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "dax_util.h"

FIXTURE(fault)
{
	int fd;
	size_t ps;
	uint64_t seed;
};

FIXTURE_VARIANT(fault)
{
	int flags;
	bool shared;		/* writes reach the file */
};

FIXTURE_VARIANT_ADD(fault, shared)
{
	.flags = MAP_SHARED,
	.shared = true,
};

FIXTURE_VARIANT_ADD(fault, private)
{
	.flags = MAP_PRIVATE,
	.shared = false,
};

FIXTURE_VARIANT_ADD(fault, sync)
{
	.flags = MAP_SHARED_VALIDATE | MAP_SYNC,
	.shared = true,
};

FIXTURE_SETUP(fault)
{
	const char *dir;
	char why[256];
	void *p;

	self->fd = -1;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	self->ps = dax_page_size();
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	self->fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->fd) TH_LOG("cannot create a file in %s: %s", dir,
				      strerror(-self->fd));
	/* dax_mapsync_test checks that DAX files accept MAP_SYNC. */
	if (variant->flags & MAP_SYNC) {
		p = mmap(NULL, self->ps, PROT_READ, variant->flags, self->fd, 0);
		if (p == MAP_FAILED && errno == EOPNOTSUPP)
			SKIP(return, "MAP_SYNC not supported (asynchronous DAX device?)");
		if (p != MAP_FAILED)
			munmap(p, self->ps);
	}
}

FIXTURE_TEARDOWN(fault)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Map @npages pages of @fd from page @pgoff. */
static char *map(int fd, int flags, size_t npages, int prot, off_t pgoff,
		 bool pmd_aligned)
{
	size_t ps = dax_page_size();

	return dax_map_file_at(fd, npages * ps, prot, flags, pgoff * ps, pmd_aligned);
}

static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

TEST_F(fault, read_data)
{
	size_t npages = 2 * dax_pmd_size() / self->ps + 3;
	char *p;
	int pmd;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	for (pmd = 0; pmd < 2; pmd++) {
		p = map(self->fd, variant->flags, npages, PROT_READ, 0, pmd);
		ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
		EXPECT_EQ(-1, dax_verify(p, npages, self->seed, 0))
			TH_LOG("pmd_aligned %d", pmd);
		munmap(p, npages * self->ps);
	}
	/* A mapping at a file offset. */
	p = map(self->fd, variant->flags, 4, PROT_READ, 5, false);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, dax_verify(p, 4, self->seed, 5));
	munmap(p, 4 * self->ps);
}

TEST_F(fault, read_past_eof_sigbus)
{
	size_t ps = self->ps;
	uint64_t w;
	char *p;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, 2));
	p = map(self->fd, variant->flags, 4, PROT_READ, 0, false);
	ASSERT_NE(MAP_FAILED, p);

	ASSERT_EQ(0, dax_probe_read(p, &w));
	EXPECT_EQ(dax_pattern_word(self->seed, 0, 0), w);
	ASSERT_EQ(0, dax_probe_read(p + ps, &w));
	EXPECT_EQ(dax_pattern_word(self->seed, 1, 0), w);
	EXPECT_EQ(-EFAULT, dax_probe_read(p + 2 * ps, NULL));
	EXPECT_EQ(-EFAULT, dax_probe_read(p + 3 * ps, NULL));

	/* Shrinking into the mapped second page zeroes its tail. */
	ASSERT_EQ(0, ftruncate(self->fd, ps + 64));
	ASSERT_EQ(0, dax_probe_read(p + ps + 8, &w));
	EXPECT_EQ(dax_pattern_word(self->seed, 1, 1), w);
	ASSERT_EQ(0, dax_probe_read(p + ps + 64, &w));
	EXPECT_EQ(0UL, w);
	ASSERT_EQ(0, dax_probe_read(p + 2 * ps - 8, &w));
	EXPECT_EQ(0UL, w);

	/* Shrinking below it takes the page away. */
	ASSERT_EQ(0, ftruncate(self->fd, ps));
	EXPECT_EQ(-EFAULT, dax_probe_read(p + ps, NULL));
	EXPECT_EQ(-EFAULT, dax_probe_read(p + 2 * ps - 8, NULL));
	ASSERT_EQ(0, dax_probe_read(p, &w));
	EXPECT_EQ(dax_pattern_word(self->seed, 0, 0), w);
	munmap(p, 4 * ps);
}

/*
 * Holes and unwritten extents read zeros, also where the blocks under them
 * held data before (the file's own, written and then zeroed as unwritten
 * extents: the test skips if no block of it stayed or came back).
 */
TEST_F(fault, holes_read_zero)
{
	size_t ps = self->ps, i;
	long reused;
	char *p;

	/* Pages 0-3: hole, 4-7: unwritten, 8-11: unwritten, allocated past EOF. */
	/* The pages before are written too: xfs allocates next to them. */
	ASSERT_EQ(0, dax_write_pattern(self->fd, ~self->seed, 0, 4));
	reused = dax_unwritten_over_old_data(self->fd, ~self->seed, 4, 4);
	if (reused == -EOPNOTSUPP)
		SKIP(return, "fallocate() or FIEMAP not supported");
	ASSERT_LE(0, reused) TH_LOG("unwritten extents: %s", strerror(-reused));
	TH_LOG("%ld of 4 unwritten pages are on blocks of the old data", reused);
	if (!reused)
		SKIP(return, "no block of the old data stayed: old data cannot show");
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       0, 4 * ps));
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_KEEP_SIZE, 8 * ps, 4 * ps));
	ASSERT_EQ(0, ftruncate(self->fd, 12 * ps));

	p = map(self->fd, variant->flags, 12, PROT_READ, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(dax_is_zero(p, 12 * ps));

	/* Data written into each kind of hole replaces the zeroes mapped there. */
	for (i = 2; i < 12; i += 4) {
		ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, i, 1));
		EXPECT_EQ(-1, dax_verify(p + i * ps, 1, self->seed, i))
			TH_LOG("page %zu", i);
		EXPECT_TRUE(dax_is_zero(p + (i + 1) * ps, ps))
			TH_LOG("page %zu", i + 1);
	}
	munmap(p, 12 * ps);
}

TEST_F(fault, punch_zaps)
{
	size_t ps = self->ps, npages = 2 * dax_pmd_size() / ps;
	char *p;
	int ret;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	/* PMD aligned: where the file allows it, the range is mapped by PMDs. */
	p = map(self->fd, variant->flags, npages, PROT_READ, 0, true);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(-1, dax_verify(p, npages, self->seed, 0));

	ret = fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, ps, ps);
	if (ret && errno == EOPNOTSUPP)
		SKIP(return, "hole punching not supported");
	ASSERT_EQ(0, ret);

	EXPECT_EQ(-1, dax_verify(p, 1, self->seed, 0));
	EXPECT_TRUE(dax_is_zero(p + ps, ps));
	EXPECT_EQ(-1, dax_verify(p + 2 * ps, npages - 2, self->seed, 2));
	munmap(p, npages * ps);
}

TEST_F(fault, private_cow)
{
	uint64_t seed2 = ~self->seed, expect;
	size_t ps = self->ps;
	char *p, *buf;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, 2));
	p = map(self->fd, variant->flags, 2, PROT_READ | PROT_WRITE, 0, false);
	ASSERT_NE(MAP_FAILED, p);

	/* Page 0 is read before it is written, page 1 is just written. */
	EXPECT_EQ(-1, dax_verify(p, 1, self->seed, 0));
	dax_fill(p, 2, seed2, 0);
	EXPECT_EQ(-1, dax_verify(p, 2, seed2, 0));

	expect = variant->shared ? seed2 : self->seed;
	buf = malloc(2 * ps);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ((ssize_t)(2 * ps), pread(self->fd, buf, 2 * ps, 0));
	EXPECT_EQ(-1, dax_verify(buf, 2, expect, 0));
	free(buf);
	munmap(p, 2 * ps);

	/* So does a new mapping. */
	p = map(self->fd, variant->flags, 2, PROT_READ, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, dax_verify(p, 2, expect, 0));
	munmap(p, 2 * ps);
}

TEST_F(fault, write_updates_mtime)
{
	struct timespec res, delay = { 0, 10 * 1000 * 1000 };
	uint64_t seed2 = ~self->seed;
	struct stat before, after;
	size_t ps = self->ps;
	char *p, *buf;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, 1));
	p = map(self->fd, variant->flags, 1, PROT_READ | PROT_WRITE, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, dax_verify(p, 1, self->seed, 0));
	ASSERT_EQ(0, fstat(self->fd, &before));

	/* Let the (coarse) clock used for file times move on. */
	if (!clock_getres(CLOCK_REALTIME_COARSE, &res) && !res.tv_sec &&
	    res.tv_nsec > delay.tv_nsec / 2)
		delay.tv_nsec = 2 * res.tv_nsec;
	nanosleep(&delay, NULL);

	dax_fill(p, 1, seed2, 0);
	ASSERT_EQ(0, msync(p, ps, MS_SYNC));
	ASSERT_EQ(0, fstat(self->fd, &after));
	TH_LOG("mtime %ld.%09ld -> %ld.%09ld",
	       (long)before.st_mtim.tv_sec, before.st_mtim.tv_nsec,
	       (long)after.st_mtim.tv_sec, after.st_mtim.tv_nsec);
	EXPECT_EQ(variant->shared, ts_after(&after.st_mtim, &before.st_mtim));

	buf = malloc(ps);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ((ssize_t)ps, pread(self->fd, buf, ps, 0));
	EXPECT_EQ(-1, dax_verify(buf, 1, variant->shared ? seed2 : self->seed, 0));
	free(buf);
	munmap(p, ps);
}

/* A /proc/vmstat counter, or -1 if the kernel does not have it. */
static long read_vmstat(const char *name)
{
	char key[64];
	long val, ret = -1;
	FILE *f;

	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			ret = val;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * PTE read faults, and write faults on pages nobody touched (a shared write
 * fault, a MAP_SYNC one, a private mapping's COW fault), complete under the
 * per-VMA lock instead of being retried under mmap_lock, as PMD faults on the
 * same files always did.  Fault-around is turned off so that every page takes
 * its own fault.  vma_lock_retry counts every process's retries: the bound
 * leaves room for a few elsewhere, where retrying each fault of the test
 * makes at least twice the number of pages.
 */
TEST_F(fault, faults_under_vma_lock)
{
	size_t npages = 32, ps = self->ps, i;
	long retry0, retry1, window;
	char *p;

	retry0 = read_vmstat("vma_lock_retry");
	if (retry0 < 0)
		SKIP(return, "no vma_lock_retry in /proc/vmstat (CONFIG_PER_VMA_LOCK_STATS)");
	window = dax_fault_around_get();
	if (window < 0 || dax_fault_around_set(ps))
		SKIP(return, "cannot set fault_around_bytes (debugfs not mounted?)");
	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, 2 * npages));
	p = map(self->fd, variant->flags, 2 * npages, PROT_READ | PROT_WRITE, 0,
		false);
	ASSERT_NE(MAP_FAILED, p);
	retry0 = read_vmstat("vma_lock_retry");
	for (i = 0; i < npages; i++)
		dax_touch(p + i * ps);
	for (i = npages; i < 2 * npages; i++)
		p[i * ps] ^= 1;
	retry1 = read_vmstat("vma_lock_retry");
	dax_fault_around_set(window);
	munmap(p, 2 * npages * ps);
	TH_LOG("%zu read and %zu write faults: vma_lock_retry +%ld", npages,
	       npages, retry1 - retry0);
	EXPECT_GT((long)npages / 2, retry1 - retry0);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
