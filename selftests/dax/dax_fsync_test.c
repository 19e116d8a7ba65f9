// SPDX-License-Identifier: GPL-2.0
/*
 * fsync() and msync() of stores made through a shared DAX mapping.
 *
 * A store through a mapping of a DAX file lands in the CPU cache; it reaches
 * the media when fsync() or msync() flushes the page, which they find by the
 * dirty tag of its entry in the file's mapping.  Truncate, hole punch and
 * fallocate break the layout of far more of the file than they change (the
 * whole file, on ext4 and xfs) and remove its entries: a store to a page
 * that such a call does not change must still be written back by the time
 * the next fsync() returns.
 *
 * A CoW write(2) (xfs with reflink) into part of a PMD entry removes the
 * whole entry: the stores made through it to the rest of its range stay in
 * the old blocks and must be flushed too.
 *
 * A CoW write(2) or zeroing (xfs with reflink) of part of a page copies the
 * rest of the page from the old block to the new one with cached stores, as
 * FALLOC_FL_UNSHARE_RANGE copies whole blocks, and no entry names the new
 * block afterwards: fsync() has nothing to flush, so the copy must be
 * flushed where it is made.  A CoW write(2) that stops short inside a page
 * must give the rest of the page its old data.
 *
 * read(2) sees the data either way (from the cache), so the tests look where
 * the kernel flushes: the fs_dax:dax_writeback_one tracepoint fires for each
 * range written back, and a kprobe on dax_flush() records the ranges that
 * the kernel flushes otherwise.  They need tracefs (and kprobe events for the
 * CoW copies) and root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>

#include "kselftest_harness.h"
#include "dax_util.h"

#define FILE_SIZE	SZ_1M
#define STORE_PAGE	3
#define WB_EVENT	"events/fs_dax/dax_writeback_one/enable"

/* Clear the trace and trace write backs: the tracefs directory, or NULL. */
static const char *writeback_trace_start(void)
{
	const char *dir = dax_tracefs_dir();

	if (!dir || dax_tracefs_write(dir, "trace", "") ||
	    dax_tracefs_write(dir, WB_EVENT, "1") ||
	    dax_tracefs_write(dir, "tracing_on", "1"))
		return NULL;
	return dir;
}

static void writeback_trace_stop(const char *dir)
{
	if (!dir)
		return;
	dax_tracefs_write(dir, WB_EVENT, "0");
	dax_tracefs_write(dir, "trace", "");
}

FIXTURE(fsync)
{
	int fd;
	size_t ps;
	const char *trace;
	char *map;
	unsigned long ino;
};

FIXTURE_SETUP(fsync)
{
	const char *dir;
	char why[256];
	struct stat st;

	self->fd = -1;
	self->map = MAP_FAILED;
	self->trace = NULL;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (!dax_tracefs_dir())
		SKIP(return, "no tracefs with fs_dax events");
	self->ps = dax_page_size();
	self->fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->fd) TH_LOG("cannot create a file in %s: %s", dir,
				      strerror(-self->fd));
	/* Written blocks, flushed: the store below is all there is to flush. */
	ASSERT_EQ(0, dax_write_pattern(self->fd, time(NULL), 0,
				       FILE_SIZE / self->ps));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, fstat(self->fd, &st));
	self->ino = st.st_ino;
	self->map = dax_map_file_at(self->fd, FILE_SIZE, PROT_READ | PROT_WRITE,
				    MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, self->map);

	self->trace = writeback_trace_start();
	ASSERT_NE(NULL, self->trace) TH_LOG("cannot trace fs_dax:dax_writeback_one");
}

FIXTURE_TEARDOWN(fsync)
{
	writeback_trace_stop(self->trace);
	if (self->map != MAP_FAILED)
		munmap(self->map, FILE_SIZE);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The write backs traced since the fixture's set-up for inode @ino: the
 * number of those whose range covers page @pgoff, or -errno; the pages of
 * all of them in *@pages, if not NULL.
 */
static int read_writebacks(const char *trace, unsigned long ino,
			   unsigned long pgoff, long *pages)
{
	char path[256], line[1024], ino_str[40];
	unsigned long off, len;
	const char *p;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", trace);
	snprintf(ino_str, sizeof(ino_str), " ino %#lx ", ino);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (pages)
		*pages = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "dax_writeback_one:") || !strstr(line, ino_str))
			continue;
		p = strstr(line, " pgoff ");
		if (!p || sscanf(p, " pgoff %lx pglen %lx", &off, &len) != 2)
			continue;
		if (off <= pgoff && pgoff < off + len)
			n++;
		if (pages)
			*pages += len;
	}
	fclose(f);
	return n;
}

/* The write backs traced for inode @ino that cover page @pgoff, or -errno. */
static int writebacks_of(const char *trace, unsigned long ino,
			 unsigned long pgoff)
{
	return read_writebacks(trace, ino, pgoff, NULL);
}

/* A store through the mapping: a write fault that dirties the page's entry. */
static void store(FIXTURE_DATA(fsync) *self)
{
	__atomic_store_n(self->map + STORE_PAGE * self->ps, 0x5a, __ATOMIC_RELAXED);
}

#define ASSERT_STORE_WRITTEN_BACK(self) do {					\
	int __n = writebacks_of((self)->trace, (self)->ino, STORE_PAGE);	\
	ASSERT_LE(0, __n) TH_LOG("cannot read the trace: %s", strerror(-__n));	\
	EXPECT_LE(1, __n) TH_LOG("page %d, stored to through the mapping, "	\
				 "was never written back", STORE_PAGE);	\
} while (0)

/* The control: without anything in between, fsync() writes the page back. */
TEST_F(fsync, plain)
{
	store(self);
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_STORE_WRITTEN_BACK(self);
}

TEST_F(fsync, after_fallocate_beyond_eof)
{
	store(self);
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_KEEP_SIZE, 4 * SZ_1M, SZ_1M));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_STORE_WRITTEN_BACK(self);
}

TEST_F(fsync, after_punch_elsewhere)
{
	store(self);
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       512 * 1024, 64 * 1024));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_STORE_WRITTEN_BACK(self);
}

TEST_F(fsync, after_zero_range_elsewhere)
{
	store(self);
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			       512 * 1024, 64 * 1024));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_STORE_WRITTEN_BACK(self);
}

TEST_F(fsync, after_truncate_past_page)
{
	store(self);
	ASSERT_EQ(0, ftruncate(self->fd, 768 * 1024));
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_STORE_WRITTEN_BACK(self);
}

TEST_F(fsync, msync_after_punch_elsewhere)
{
	store(self);
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       512 * 1024, 64 * 1024));
	ASSERT_EQ(0, msync(self->map, FILE_SIZE, MS_SYNC));
	ASSERT_STORE_WRITTEN_BACK(self);
}

/*
 * A write(2) or zeroing of 100 bytes inside a page of a file that shares its
 * blocks with a clone (xfs with reflink), a write(2) that stops short inside
 * a page (a fault on its buffer), an unshare: pages move to new blocks, and
 * the kernel copies their other bytes from the old blocks there.  Those copies
 * and the zeroes must be flushed by the time the call returns: afterwards no
 * entry names the new blocks for fsync() to flush.  A kprobe on dax_flush()
 * records the ranges this process asked to flush during the call.  write(2)'s
 * own data needs no such flush: it is copied with non-temporal stores.
 */
#define EDGE_PAGE	2
#define EDGE_OFF	1000
#define EDGE_LEN	100
#define EDGE_PAGES	16
#define KPROBE_GROUP	"dax_selftest"
#define KPROBE_EVENT	"flush"
#define KPROBE_NAME	KPROBE_GROUP "/" KPROBE_EVENT
#define KPROBE_DIR	"events/" KPROBE_NAME
#define MAX_FLUSHES	1024

FIXTURE(cow_edges)
{
	int a, b;
	size_t ps;
	uint64_t seed;
	const char *trace;
};

static void flush_probe_remove(const char *dir)
{
	dax_tracefs_write(dir, KPROBE_DIR "/enable", "0");
	dax_tracefs_append(dir, "kprobe_events", "-:" KPROBE_NAME);
}

/*
 * Probe dax_flush(dax_dev, addr, size) in this process only: 0 or -errno,
 * with nothing left behind on failure.
 */
static int flush_probe_start(const char *dir)
{
	char filter[64];
	int ret;

	flush_probe_remove(dir);	/* one left by a killed run */
	ret = dax_tracefs_append(dir, "kprobe_events", "p:" KPROBE_NAME
				 " dax_flush addr=$arg2:x64 size=$arg3:u64");
	if (ret)
		return ret;
	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	ret = dax_tracefs_write(dir, KPROBE_DIR "/filter", filter);
	if (!ret)
		ret = dax_tracefs_write(dir, "trace", "");
	if (!ret)
		ret = dax_tracefs_write(dir, KPROBE_DIR "/enable", "1");
	if (!ret)
		ret = dax_tracefs_write(dir, "tracing_on", "1");
	if (ret)
		flush_probe_remove(dir);
	return ret;
}

struct flushes {
	size_t n;
	unsigned long addr[MAX_FLUSHES], len[MAX_FLUSHES];
};

/* The ranges flushed since flush_probe_start(): 0 or -errno. */
static int read_flushes(const char *dir, struct flushes *f)
{
	char path[256], line[1024];
	unsigned long addr, len;
	const char *p;
	FILE *file;

	f->n = 0;
	snprintf(path, sizeof(path), "%s/trace", dir);
	file = fopen(path, "r");
	if (!file)
		return -errno;
	while (fgets(line, sizeof(line), file) && f->n < MAX_FLUSHES) {
		if (line[0] == '#' || !strstr(line, " " KPROBE_EVENT ":"))
			continue;
		p = strstr(line, " addr=");
		if (p && sscanf(p, " addr=%lx size=%lu", &addr, &len) == 2) {
			f->addr[f->n] = addr;
			f->len[f->n++] = len;
		}
	}
	fclose(file);
	return 0;
}

/* Whether the flushed ranges together cover [start, start + len). */
static bool covered(const struct flushes *f, unsigned long start, size_t len)
{
	unsigned long pos = start, end = start + len;
	bool moved = true;
	size_t i;

	while (pos < end && moved) {
		moved = false;
		for (i = 0; i < f->n; i++) {
			if (f->addr[i] <= pos && pos < f->addr[i] + f->len[i]) {
				pos = f->addr[i] + f->len[i];
				moved = true;
			}
		}
	}
	return pos >= end;
}

/*
 * The number of pages that a flushed range touches and in which [off1,
 * off1 + len1) and [off2, off2 + len2) are flushed.
 */
static size_t pages_covered(const struct flushes *f, size_t ps, size_t off1,
			    size_t len1, size_t off2, size_t len2)
{
	unsigned long page, last, seen[MAX_FLUSHES];
	size_t i, j, nseen = 0, n = 0;

	for (i = 0; i < f->n && f->len[i]; i++) {
		last = (f->addr[i] + f->len[i] - 1) & ~(ps - 1);
		for (page = f->addr[i] & ~(ps - 1); page <= last; page += ps) {
			for (j = 0; j < nseen && seen[j] != page; j++)
				;
			if (j < nseen || nseen == MAX_FLUSHES)
				continue;
			seen[nseen++] = page;
			if (covered(f, page + off1, len1) &&
			    covered(f, page + off2, len2))
				n++;
		}
	}
	return n;
}

FIXTURE_SETUP(cow_edges)
{
	char path[256], why[256];
	const char *dir;
	int ret;

	self->a = -1;
	self->b = -1;
	self->trace = NULL;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	self->trace = dax_tracefs_dir();
	if (!self->trace)
		SKIP(return, "no tracefs with fs_dax events");
	snprintf(path, sizeof(path), "%s/kprobe_events", self->trace);
	if (access(path, W_OK)) {
		self->trace = NULL;
		SKIP(return, "no kprobe events (CONFIG_KPROBE_EVENTS)");
	}
	self->ps = dax_page_size();
	/* Its own seed: blocks freed by an earlier case hold that one's. */
	self->seed = (uint64_t)time(NULL) << 20 ^ getpid();
	self->a = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->a);
	ASSERT_EQ(0, dax_write_pattern(self->a, self->seed, 0, EDGE_PAGES));
	ASSERT_EQ(0, fsync(self->a));
	self->b = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->b);
	if (ioctl(self->b, FICLONE, self->a))
		SKIP(return, "no reflink on this filesystem (FICLONE: %s)",
		     strerror(errno));
	ret = flush_probe_start(self->trace);
	if (ret == -ENOENT || ret == -EINVAL) {
		self->trace = NULL;
		SKIP(return, "cannot probe dax_flush(): %s", strerror(-ret));
	}
	ASSERT_EQ(0, ret) TH_LOG("cannot probe dax_flush(): %s", strerror(-ret));
}

FIXTURE_TEARDOWN(cow_edges)
{
	if (self->trace) {
		flush_probe_remove(self->trace);
		dax_tracefs_write(self->trace, "trace", "");
	}
	if (self->b >= 0)
		close(self->b);
	if (self->a >= 0)
		close(self->a);
}

/* Whether @fd holds the pattern, but @fill at [@off, @off + @len). */
static bool file_is(int fd, size_t ps, uint64_t seed, off_t off, size_t len,
		    int fill)
{
	size_t size = EDGE_PAGES * ps;
	char *want = malloc(size), *got = malloc(size);
	bool ok;

	ok = want && got && pread(fd, got, size, 0) == (ssize_t)size;
	if (ok) {
		dax_fill(want, EDGE_PAGES, seed, 0);
		memset(want + off, fill, len);
		ok = !memcmp(got, want, size);
	}
	free(want);
	free(got);
	return ok;
}

#define HAS_PATTERN(fd, self) file_is(fd, (self)->ps, (self)->seed, 0, 0, 0)

/* Read the ranges flushed so far into @f (a struct flushes *). */
#define READ_FLUSHES(self, f) do {						\
	int __ret = read_flushes((self)->trace, f);				\
	ASSERT_EQ(0, __ret) TH_LOG("cannot read the trace: %s", strerror(-__ret)); \
} while (0)

/* Whether page @idx of @fd moved to another block; the block in *@addr. */
static bool page_moved(int fd, size_t idx, uint64_t *addr)
{
	uint64_t now;

	return !dax_page_addresses(fd, idx, 1, &now) && now != *addr;
}

TEST_F(cow_edges, partial_write)
{
	size_t ps = self->ps, tail = EDGE_OFF + EDGE_LEN;
	struct flushes *f = malloc(sizeof(*f));
	char buf[EDGE_LEN];
	uint64_t block;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, dax_page_addresses(self->a, EDGE_PAGE, 1, &block));
	memset(buf, 0x77, sizeof(buf));
	ASSERT_EQ((ssize_t)sizeof(buf),
		  pwrite(self->a, buf, sizeof(buf), EDGE_PAGE * ps + EDGE_OFF));
	READ_FLUSHES(self, f);
	if (!page_moved(self->a, EDGE_PAGE, &block))
		SKIP(free(f); return, "the write was not a CoW");
	/* The head and the tail of the page, copied from the old block. */
	EXPECT_LE(1, pages_covered(f, ps, 0, EDGE_OFF, tail, ps - tail))
		TH_LOG("%zu ranges flushed; none covers bytes 0-%d and %zu-%zu of a page",
		       f->n, EDGE_OFF - 1, tail, ps - 1);
	EXPECT_TRUE(file_is(self->a, ps, self->seed, EDGE_PAGE * ps + EDGE_OFF,
			    EDGE_LEN, 0x77));
	EXPECT_TRUE(HAS_PATTERN(self->b, self));
	free(f);
}

TEST_F(cow_edges, partial_zero)
{
	struct flushes *f = malloc(sizeof(*f));
	size_t ps = self->ps;
	uint64_t block;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, dax_page_addresses(self->a, EDGE_PAGE, 1, &block));
	ASSERT_EQ(0, fallocate(self->a, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       EDGE_PAGE * ps + EDGE_OFF, EDGE_LEN));
	READ_FLUSHES(self, f);
	if (!page_moved(self->a, EDGE_PAGE, &block))
		SKIP(free(f); return, "the zeroing was not a CoW");
	/* The zeroes, and the head and the tail copied from the old block. */
	EXPECT_LE(1, pages_covered(f, ps, 0, ps, 0, 0))
		TH_LOG("%zu ranges flushed; none covers a whole page", f->n);
	EXPECT_TRUE(file_is(self->a, ps, self->seed, EDGE_PAGE * ps + EDGE_OFF,
			    EDGE_LEN, 0));
	EXPECT_TRUE(HAS_PATTERN(self->b, self));
	free(f);
}

/* FALLOC_FL_UNSHARE_RANGE copies whole blocks to new ones: all flushed. */
TEST_F(cow_edges, unshare)
{
	struct flushes *f = malloc(sizeof(*f));
	size_t ps = self->ps;
	uint64_t block;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, dax_page_addresses(self->a, EDGE_PAGE, 1, &block));
	if (fallocate(self->a, FALLOC_FL_UNSHARE_RANGE, 0, EDGE_PAGES * ps))
		SKIP(free(f); return, "FALLOC_FL_UNSHARE_RANGE: %s", strerror(errno));
	READ_FLUSHES(self, f);
	if (!page_moved(self->a, EDGE_PAGE, &block))
		SKIP(free(f); return, "the unshare kept the blocks");
	EXPECT_LE(EDGE_PAGES, pages_covered(f, ps, 0, ps, 0, 0))
		TH_LOG("%zu ranges flushed; they cover %zu whole pages of %d",
		       f->n, pages_covered(f, ps, 0, ps, 0, 0), EDGE_PAGES);
	EXPECT_TRUE(HAS_PATTERN(self->a, self));
	EXPECT_TRUE(HAS_PATTERN(self->b, self));
	free(f);
}

/*
 * A CoW write(2) of two pages at @off in page EDGE_PAGE from a buffer whose
 * second page is not readable: the write stops inside page EDGE_PAGE, and
 * that page moves to the new block.  The rest of it must hold the old data,
 * flushed: the write copied it from the old block with cached stores where it
 * started on a page boundary, and not at all where it did not.
 */
static void short_cow_write(struct __test_metadata *_metadata,
			    FIXTURE_DATA(cow_edges) *self, size_t off)
{
	struct flushes *f = malloc(sizeof(*f));
	size_t ps = self->ps, stop;
	uint64_t block;
	char *buf;
	ssize_t n;

	ASSERT_NE(NULL, f);
	buf = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 0x77, 2 * ps);
	ASSERT_EQ(0, mprotect(buf + ps, ps, PROT_NONE));
	ASSERT_EQ(0, dax_page_addresses(self->a, EDGE_PAGE, 1, &block));
	n = pwrite(self->a, buf + ps / 2, 2 * ps, EDGE_PAGE * ps + off);
	munmap(buf, 2 * ps);
	READ_FLUSHES(self, f);
	if (n <= 0 || n >= (ssize_t)(ps - off))
		SKIP(free(f); return, "the write did not stop inside its first page (%zd)", n);
	if (!page_moved(self->a, EDGE_PAGE, &block))
		SKIP(free(f); return, "the write was not a CoW");
	stop = off + n;
	EXPECT_TRUE(file_is(self->a, ps, self->seed, EDGE_PAGE * ps + off, n,
			    0x77))
		TH_LOG("page %d after a write of bytes %zu-%zu of it: not its old data after them",
		       EDGE_PAGE, off, stop - 1);
	EXPECT_LE(1, pages_covered(f, ps, stop, ps - stop, 0, 0))
		TH_LOG("%zu ranges flushed; none covers bytes %zu-%zu of a page",
		       f->n, stop, ps - 1);
	EXPECT_TRUE(HAS_PATTERN(self->b, self));
	free(f);
}

TEST_F(cow_edges, short_write)
{
	short_cow_write(_metadata, self, 0);
}

TEST_F(cow_edges, short_write_unaligned)
{
	short_cow_write(_metadata, self, EDGE_OFF);
}

/*
 * A CoW write(2) into a dirty PMD entry, on a file whose 2 MiB extents are
 * aligned (xfs with reflink and su=2m).  A write(2) to blocks that are not
 * shared is a CoW where xfs has CoW blocks preallocated over them: with a CoW
 * extent size hint of the file's size, the CoW write of one shared block of
 * the second 2 MiB preallocates them over the whole file.  A write to a page
 * of the first 2 MiB, which a PMD entry maps, then moves that page to a new
 * block and removes the entry; the stores made through it to its other
 * pages stay in the old blocks.
 */
#define COW_SHARED_PAGE	10	/* in the second PMD */
#define COW_WRITE_PAGE	10	/* in the first PMD */
#define COW_STORE_PAGE	5	/* stored to, and not written */

FIXTURE(cow_pmd)
{
	int a, b;
	size_t ps, pmd;
	char *map;
	unsigned long ino;
	const char *trace;
};

FIXTURE_SETUP(cow_pmd)
{
	struct file_clone_range fcr = { 0 };
	struct fsxattr fsx;
	const char *dir;
	char why[256];
	struct stat st;
	int ret;

	self->a = -1;
	self->b = -1;
	self->map = MAP_FAILED;
	self->trace = NULL;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (!dax_tracefs_dir())
		SKIP(return, "no tracefs with fs_dax events");
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "no transparent hugepages, so no DAX PMDs");
	self->ps = dax_page_size();
	self->pmd = dax_pmd_size();
	self->a = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->a);
	if (ioctl(self->a, FS_IOC_FSGETXATTR, &fsx))
		SKIP(return, "FS_IOC_FSGETXATTR: %s", strerror(errno));
	fsx.fsx_xflags |= FS_XFLAG_COWEXTSIZE;
	fsx.fsx_cowextsize = 2 * self->pmd;
	if (ioctl(self->a, FS_IOC_FSSETXATTR, &fsx))
		SKIP(return, "no CoW extent size hint here (xfs with reflink): %s",
		     strerror(errno));
	/* Allocating it all at once makes aligned extents more likely. */
	ASSERT_EQ(0, fallocate(self->a, 0, 0, 2 * self->pmd));
	ASSERT_EQ(0, dax_write_pattern(self->a, time(NULL), 0,
				       2 * self->pmd / self->ps));
	ASSERT_EQ(0, fsync(self->a));
	ret = dax_extents_pmd_aligned(self->a, 2 * self->pmd, self->pmd);
	if (ret != 1)
		SKIP(return, "the filesystem did not allocate PMD-aligned extents");

	self->b = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->b);
	fcr.src_fd = self->a;
	fcr.src_offset = self->pmd + COW_SHARED_PAGE * self->ps;
	fcr.src_length = self->ps;
	if (ioctl(self->b, FICLONERANGE, &fcr))
		SKIP(return, "no reflink on this filesystem (FICLONERANGE: %s)",
		     strerror(errno));
	ASSERT_EQ(0, fstat(self->a, &st));
	self->ino = st.st_ino;
	self->map = dax_map_file_at(self->a, 2 * self->pmd, PROT_READ | PROT_WRITE,
				    MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(cow_pmd)
{
	writeback_trace_stop(self->trace);
	if (self->map != MAP_FAILED)
		munmap(self->map, 2 * self->pmd);
	if (self->b >= 0)
		close(self->b);
	if (self->a >= 0)
		close(self->a);
}

TEST_F(cow_pmd, cow_write_into_dirty_pmd)
{
	size_t ps = self->ps, pmd = self->pmd;
	uint64_t before, after;
	long faults;
	char *buf;
	int n;

	faults = dax_minor_faults();
	__atomic_store_n(self->map + COW_STORE_PAGE * ps, 0x5a, __ATOMIC_RELAXED);
	__atomic_store_n(self->map + pmd / 2, 0x5a, __ATOMIC_RELAXED);
	faults = dax_minor_faults() - faults;
	if (faults > 1)
		SKIP(return, "two stores in 2 MiB took %ld faults: no PMD mapping", faults);

	self->trace = writeback_trace_start();
	ASSERT_NE(NULL, self->trace) TH_LOG("cannot trace fs_dax:dax_writeback_one");
	buf = malloc(ps);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x77, ps);
	ASSERT_EQ((ssize_t)ps, pwrite(self->a, buf, ps, pmd + COW_SHARED_PAGE * ps));
	ASSERT_EQ(0, dax_page_addresses(self->a, COW_WRITE_PAGE, 1, &before));
	/* Nothing has flushed the entry yet (the control). */
	n = writebacks_of(self->trace, self->ino, COW_STORE_PAGE);
	ASSERT_EQ(0, n) TH_LOG("page %d was written back before the CoW write (%d)",
			       COW_STORE_PAGE, n);

	ASSERT_EQ((ssize_t)ps, pwrite(self->a, buf, ps, COW_WRITE_PAGE * ps));
	free(buf);
	ASSERT_EQ(0, fsync(self->a));
	ASSERT_EQ(0, dax_page_addresses(self->a, COW_WRITE_PAGE, 1, &after));
	if (before == after)
		SKIP(return, "the write of page %d was not a CoW (no CoW blocks there)",
		     COW_WRITE_PAGE);

	n = writebacks_of(self->trace, self->ino, COW_STORE_PAGE);
	ASSERT_LE(0, n) TH_LOG("cannot read the trace: %s", strerror(-n));
	EXPECT_LE(1, n) TH_LOG("page %d, stored to through the PMD entry, was never written back",
			       COW_STORE_PAGE);
	EXPECT_EQ(0x5a, self->map[COW_STORE_PAGE * ps]);
}

/*
 * The same through a mapping that cannot use PMDs: the CoW write fault into
 * page COW_WRITE_PAGE splits the dirty PMD entry into entries of its own
 * pages, and the stores made through the PMD entry must be flushed before
 * its dirty mark goes with it.
 */
TEST_F(cow_pmd, cow_fault_into_dirty_pmd)
{
	size_t ps = self->ps, pmd = self->pmd;
	uint64_t before, after;
	long faults;
	char *buf, *pte;
	int n;

	faults = dax_minor_faults();
	__atomic_store_n(self->map + COW_STORE_PAGE * ps, 0x5a, __ATOMIC_RELAXED);
	__atomic_store_n(self->map + pmd / 2, 0x5a, __ATOMIC_RELAXED);
	faults = dax_minor_faults() - faults;
	if (faults > 1)
		SKIP(return, "two stores in 2 MiB took %ld faults: no PMD mapping", faults);

	self->trace = writeback_trace_start();
	ASSERT_NE(NULL, self->trace) TH_LOG("cannot trace fs_dax:dax_writeback_one");
	buf = malloc(ps);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x77, ps);
	/* Preallocates CoW blocks over the first PMD too (the hint). */
	ASSERT_EQ((ssize_t)ps, pwrite(self->a, buf, ps, pmd + COW_SHARED_PAGE * ps));
	free(buf);
	ASSERT_EQ(0, dax_page_addresses(self->a, COW_WRITE_PAGE, 1, &before));
	n = writebacks_of(self->trace, self->ino, COW_STORE_PAGE);
	ASSERT_EQ(0, n) TH_LOG("page %d was written back before the CoW fault (%d)",
			       COW_STORE_PAGE, n);

	pte = dax_map_file_at(self->a, pmd, PROT_READ | PROT_WRITE, MAP_SHARED,
			      0, false);
	ASSERT_NE(MAP_FAILED, pte);
	__atomic_store_n(pte + COW_WRITE_PAGE * ps, 0x66, __ATOMIC_RELAXED);
	ASSERT_EQ(0, fsync(self->a));
	ASSERT_EQ(0, dax_page_addresses(self->a, COW_WRITE_PAGE, 1, &after));
	if (before == after) {
		munmap(pte, pmd);
		SKIP(return, "the fault into page %d was not a CoW (no CoW blocks there)",
		     COW_WRITE_PAGE);
	}

	n = writebacks_of(self->trace, self->ino, COW_STORE_PAGE);
	EXPECT_EQ(0x5a, pte[COW_STORE_PAGE * ps]);
	EXPECT_EQ(0x66, self->map[COW_WRITE_PAGE * ps]);
	munmap(pte, pmd);
	ASSERT_LE(0, n) TH_LOG("cannot read the trace: %s", strerror(-n));
	EXPECT_LE(1, n) TH_LOG("page %d, stored to through the PMD entry, was never written back",
			       COW_STORE_PAGE);
}

/*
 * A store through a MAP_SYNC mapping into a page that the file shares with a
 * clone (xfs with reflink): the write fault copies the old page to a new
 * block with cached stores and remaps the file onto it.  MAP_SYNC promises
 * that the block is the file's after a crash once the store is allowed, so
 * the fault must be synchronous (fs_dax:dax_insert_pfn_mkwrite: the PTE made
 * writable after fdatasync()) even where the file had no other metadata to
 * sync, and the copy, which the program's own cache flushes do not cover,
 * must be written back by then (fs_dax:dax_writeback_one), or a power
 * failure leaves the rest of the page reading whatever the new block held.
 */
#define MKWRITE_EVENT	"events/fs_dax/dax_insert_pfn_mkwrite/enable"

FIXTURE(cow_sync)
{
	int fd, clone;
	size_t ps;
	const char *trace;
	char *map;
	unsigned long ino;
};

FIXTURE_VARIANT(cow_sync)
{
	/* Whether the file has other metadata to sync (an fallocate()). */
	bool datasync_dirty;
	/*
	 * Whether the CoW blocks of the page are preallocated (a CoW extent
	 * size hint and a CoW write of page 0): the fault then allocates
	 * nothing that would make the file's metadata dirty by itself.
	 */
	bool cow_prealloc;
};

FIXTURE_VARIANT_ADD(cow_sync, datasync_dirty)
{
	.datasync_dirty = true,
};

FIXTURE_VARIANT_ADD(cow_sync, datasync_clean)
{
	.datasync_dirty = false,
};

FIXTURE_VARIANT_ADD(cow_sync, cow_preallocated)
{
	.cow_prealloc = true,
};

FIXTURE_SETUP(cow_sync)
{
	const char *dir;
	char why[256];
	struct stat st;

	self->fd = self->clone = -1;
	self->map = MAP_FAILED;
	self->trace = NULL;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (!dax_tracefs_dir())
		SKIP(return, "no tracefs with fs_dax events");
	self->ps = dax_page_size();
	self->fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, dax_write_pattern(self->fd, time(NULL), 0,
				       FILE_SIZE / self->ps));
	self->clone = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->clone);
	if (ioctl(self->clone, FICLONE, self->fd))
		SKIP(return, "no reflink on this filesystem (FICLONE: %s)",
		     strerror(errno));
	if (variant->cow_prealloc) {
		struct fsxattr fsx;
		char page[4096 * 4];

		ASSERT_GE(sizeof(page), self->ps);
		ASSERT_EQ(0, ioctl(self->fd, FS_IOC_FSGETXATTR, &fsx));
		fsx.fsx_xflags |= FS_XFLAG_COWEXTSIZE;
		fsx.fsx_cowextsize = 32 * self->ps;
		if (ioctl(self->fd, FS_IOC_FSSETXATTR, &fsx))
			SKIP(return, "no CoW extent size hint: %s", strerror(errno));
		/* A CoW write of page 0 preallocates CoW blocks to page 31. */
		ASSERT_EQ((ssize_t)self->ps, pread(self->fd, page, self->ps, 0));
		ASSERT_EQ((ssize_t)self->ps, pwrite(self->fd, page, self->ps, 0));
	}
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, fsync(self->clone));
	if (variant->datasync_dirty)
		ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_KEEP_SIZE, 2 * FILE_SIZE,
				       self->ps));
	ASSERT_EQ(0, fstat(self->fd, &st));
	self->ino = st.st_ino;
	self->map = dax_map_file_at(self->fd, FILE_SIZE, PROT_READ | PROT_WRITE,
				    MAP_SHARED_VALIDATE | MAP_SYNC, 0, false);
	if (self->map == MAP_FAILED && errno == EOPNOTSUPP)
		SKIP(return, "no MAP_SYNC");
	ASSERT_NE(MAP_FAILED, self->map);
	self->trace = writeback_trace_start();
	ASSERT_NE(NULL, self->trace) TH_LOG("cannot trace fs_dax:dax_writeback_one");
	ASSERT_EQ(0, dax_tracefs_write(self->trace, MKWRITE_EVENT, "1"));
}

FIXTURE_TEARDOWN(cow_sync)
{
	if (self->trace)
		dax_tracefs_write(self->trace, MKWRITE_EVENT, "0");
	writeback_trace_stop(self->trace);
	if (self->map != MAP_FAILED)
		munmap(self->map, FILE_SIZE);
	if (self->fd >= 0)
		close(self->fd);
	if (self->clone >= 0)
		close(self->clone);
}

/* The number of lines of @event traced for inode @ino, or -errno. */
static int events_of(const char *trace, const char *event, unsigned long ino)
{
	char path[256], line[1024], ino_str[40];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", trace);
	snprintf(ino_str, sizeof(ino_str), " ino %#lx ", ino);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, event) && strstr(line, ino_str))
			n++;
	fclose(f);
	return n;
}

TEST_F(cow_sync, store_into_shared_page)
{
	int synced, written;

	__atomic_store_n(self->map + STORE_PAGE * self->ps, 0x5a, __ATOMIC_RELAXED);
	synced = events_of(self->trace, "dax_insert_pfn_mkwrite:", self->ino);
	written = writebacks_of(self->trace, self->ino, STORE_PAGE);
	ASSERT_LE(0, synced) TH_LOG("cannot read the trace: %s", strerror(-synced));
	ASSERT_LE(0, written) TH_LOG("cannot read the trace: %s", strerror(-written));
	EXPECT_LE(1, synced)
		TH_LOG("the CoW fault made the page writable without fdatasync()");
	EXPECT_LE(1, written)
		TH_LOG("the CoW fault's copy of page %d was not written back %s",
		       STORE_PAGE, "before the store went on");
}

/*
 * A store through a mapping that cannot use PMDs into a page of a PMD entry
 * (made by a PMD fault of an aligned mapping, or by the read faults of a
 * mapping that cannot use PMDs, where the file's blocks are 2 MiB aligned):
 * dirty tracking is per entry, so the write fault splits the entry first,
 * and fsync() writes back the stored page rather than the 2 MiB around it.
 * Where a page of the entry is referenced (a pipe after vmsplice()), the
 * entry stays whole and fsync() writes all of it back.  Either way, the
 * mapping and read(2) show the store and the rest of the file's data.
 */
#define PTE_STORE_PAGE	5
#define PTE_PIPED_PAGE	100

FIXTURE(pte_store)
{
	int fd;
	size_t ps, pmd;
	uint64_t seed;
	const char *trace;
	unsigned long ino;
};

FIXTURE_VARIANT(pte_store)
{
	bool pmd_fault;		/* the entry made by a PMD fault */
	bool piped;		/* a page of the entry in a pipe */
};

FIXTURE_VARIANT_ADD(pte_store, after_pmd_fault)
{
	.pmd_fault = true,
};

FIXTURE_VARIANT_ADD(pte_store, after_pte_reads)
{
	.pmd_fault = false,
};

FIXTURE_VARIANT_ADD(pte_store, page_in_pipe)
{
	.pmd_fault = true,
	.piped = true,
};

FIXTURE_VARIANT_ADD(pte_store, page_in_pipe_after_pte_reads)
{
	.pmd_fault = false,
	.piped = true,
};

FIXTURE_SETUP(pte_store)
{
	const char *dir;
	char why[256];
	struct stat st;
	int ret;

	self->fd = -1;
	self->trace = NULL;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (!dax_tracefs_dir())
		SKIP(return, "no tracefs with fs_dax events");
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "no transparent hugepages, so no DAX PMDs");
	self->ps = dax_page_size();
	self->pmd = dax_pmd_size();
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	self->fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->fd);
	/* Allocating it all at once makes aligned extents more likely. */
	fallocate(self->fd, 0, 0, 2 * self->pmd);
	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0,
				       2 * self->pmd / self->ps));
	ASSERT_EQ(0, fsync(self->fd));
	ret = dax_extents_pmd_aligned(self->fd, 2 * self->pmd, self->pmd);
	if (ret != 1)
		SKIP(return, "the filesystem did not allocate PMD-aligned extents");
	ASSERT_EQ(0, fstat(self->fd, &st));
	self->ino = st.st_ino;
}

FIXTURE_TEARDOWN(pte_store)
{
	writeback_trace_stop(self->trace);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(pte_store, fsync_writes_back_the_page)
{
	size_t ps = self->ps, len = 2 * self->pmd, npages = len / ps;
	struct dax_kwatch kwatch;
	char *p, *buf, *orig;
	int pipefd[2] = { -1, -1 };
	long faults, pages;
	int n;
	struct iovec iov;
	size_t i;

	DAX_KWATCH_START(&kwatch);
	/* The PMD entries, then the mapping that cannot use them as PMDs. */
	p = dax_map_file_at(self->fd, len, PROT_READ, MAP_SHARED, 0,
			    variant->pmd_fault);
	ASSERT_NE(MAP_FAILED, p);
	faults = dax_minor_faults();
	for (i = 0; i < len; i += ps)
		dax_touch(p + i);
	faults = dax_minor_faults() - faults;
	munmap(p, len);
	if (!variant->pmd_fault) {
		/* Whether they made PMD entries: an aligned read uses PMDs. */
		p = dax_map_file_at(self->fd, len, PROT_READ, MAP_SHARED, 0, true);
		ASSERT_NE(MAP_FAILED, p);
		faults = dax_minor_faults();
		for (i = 0; i < len; i += ps)
			dax_touch(p + i);
		faults = dax_minor_faults() - faults;
		munmap(p, len);
	}
	if (variant->pmd_fault && faults > (long)(2 * len / self->pmd))
		SKIP(return, "an aligned read took %ld faults: no PMD entries",
		     faults);
	ASSERT_GE((long)(2 * len / self->pmd), faults)
		TH_LOG("the reads through PTEs made no PMD entries (%ld faults)",
		       faults);

	p = dax_map_file_at(self->fd, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			    0, false);
	ASSERT_NE(MAP_FAILED, p);
	dax_touch(p);
	if (variant->piped) {
		ASSERT_EQ(0, pipe(pipefd));
		iov.iov_base = p + PTE_PIPED_PAGE * ps;
		iov.iov_len = ps;
		ASSERT_EQ((ssize_t)ps, vmsplice(pipefd[1], &iov, 1, 0));
	}
	self->trace = writeback_trace_start();
	ASSERT_NE(NULL, self->trace) TH_LOG("cannot trace fs_dax:dax_writeback_one");
	__atomic_store_n(p + PTE_STORE_PAGE * ps, 0x5a, __ATOMIC_RELAXED);
	ASSERT_EQ(0, fsync(self->fd));
	n = read_writebacks(self->trace, self->ino, PTE_STORE_PAGE, &pages);
	ASSERT_LE(0, n) TH_LOG("cannot read the trace: %s", strerror(-n));
	TH_LOG("a store of one byte, then fsync(): %ld pages written back", pages);
	EXPECT_LE(1, n)
		TH_LOG("page %d, stored to, was never written back", PTE_STORE_PAGE);
	if (!variant->piped)
		EXPECT_GT((long)(self->pmd / ps), pages)
			TH_LOG("fsync() wrote back the whole PMD entry for one page");

	/* What the mapping shows is what read(2) gives: the store, the rest. */
	buf = malloc(len);
	orig = malloc(ps);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, orig);
	ASSERT_EQ((ssize_t)len, pread(self->fd, buf, len, 0));
	EXPECT_EQ(0, memcmp(p, buf, len));
	EXPECT_EQ(0x5a, buf[PTE_STORE_PAGE * ps]);
	dax_fill(orig, 1, self->seed, PTE_STORE_PAGE);
	buf[PTE_STORE_PAGE * ps] = orig[0];
	EXPECT_EQ(-1, dax_verify(buf, npages, self->seed, 0));
	if (variant->piped) {
		close(pipefd[1]);
		ASSERT_EQ((ssize_t)ps, read(pipefd[0], orig, ps));
		close(pipefd[0]);
		EXPECT_EQ(-1, dax_verify(orig, 1, self->seed, PTE_PIPED_PAGE));
	}
	free(orig);
	free(buf);
	munmap(p, len);
	DAX_ASSERT_NO_COMPLAINT(&kwatch);
	dax_kwatch_stop(&kwatch);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
