// SPDX-License-Identifier: GPL-2.0
/*
 * fs-DAX fault-around: a read fault maps the pages of the fault-around
 * window along with the faulting one, both on the first read of a file and
 * through later mappings, and does so only where a fault would map the same
 * page read-only.  The window is fault_around_bytes (64 KiB by default) and
 * doubles on each read fault right after the previous window, up to a page
 * table; MADV_SEQUENTIAL takes a page table at once, MADV_RANDOM turns
 * fault-around off.
 *
 * Fault counts come from getrusage() minor faults.  The mappings are placed
 * so that no PMD can be used.  Tests that change fault_around_bytes need
 * debugfs and restore the old value.
 *
 * The tests skip on a kernel without DAX fault-around
 * (dax_has_fault_around(); DAX_FAULT_AROUND=1 runs them there).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "dax_util.h"

#define WINDOW		(64 * 1024)	/* fault_around_bytes for these tests */
#define SMALL_FILE	(64 * 1024)
#define BIG_FILE	(64UL << 20)

FIXTURE(fa)
{
	int fd;
	size_t ps;
	uint64_t seed;
	long saved;		/* fault_around_bytes to restore, or -1 */
};

FIXTURE_VARIANT(fa)
{
	int flags;
	bool shared;		/* writes reach the file */
};

FIXTURE_VARIANT_ADD(fa, shared)
{
	.flags = MAP_SHARED,
	.shared = true,
};

FIXTURE_VARIANT_ADD(fa, private)
{
	.flags = MAP_PRIVATE,
	.shared = false,
};

FIXTURE_VARIANT_ADD(fa, sync)
{
	.flags = MAP_SHARED_VALIDATE | MAP_SYNC,
	.shared = true,
};

FIXTURE_SETUP(fa)
{
	const char *dir;
	char why[256];
	void *p;

	self->fd = -1;
	self->saved = dax_fault_around_get();
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (!dax_has_fault_around(why, sizeof(why)))
		SKIP(return, "%s", why);
	if (self->saved < 0)
		SKIP(return, "no /sys/kernel/debug/fault_around_bytes (debugfs)");
	self->ps = dax_page_size();
	if (WINDOW < 16 * self->ps)
		SKIP(return, "the counts assume 16 pages in a %d KiB window, not %zu KiB pages",
		     WINDOW >> 10, self->ps >> 10);
	ASSERT_EQ(0, dax_fault_around_set(WINDOW));
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	self->fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->fd) TH_LOG("cannot create a file in %s: %s", dir,
				      strerror(-self->fd));
	if (variant->flags & MAP_SYNC) {
		p = mmap(NULL, self->ps, PROT_READ, variant->flags, self->fd, 0);
		if (p == MAP_FAILED && errno == EOPNOTSUPP)
			SKIP(return, "MAP_SYNC not supported (asynchronous DAX device?)");
		if (p != MAP_FAILED)
			munmap(p, self->ps);
	}
}

FIXTURE_TEARDOWN(fa)
{
	if (self->saved > 0)
		dax_fault_around_set(self->saved);
	if (self->fd >= 0)
		close(self->fd);
}

/* Faults taken to read one word of each page of @p in the given order. */
static long read_faults(const char *p, size_t npages, size_t ps, const size_t *order)
{
	long before = dax_minor_faults();
	size_t i;

	for (i = 0; i < npages; i++)
		dax_touch(p + (order ? order[i] : i) * ps);
	return dax_minor_faults() - before;
}

/*
 * Read a file of @size sequentially (or in the random @order) through two
 * fresh mappings, one after the other, and return both fault counts.  The
 * mappings opt out of huge pages, so that their reads make order-0 entries
 * only: the counts are those of the window.  A fault that meets a PMD entry
 * maps all of the entry's pages that the page table holds, whatever the
 * window (dax_pmd_test's pte_random_rereads_map_entries).
 */
static void count_two_mappings(struct __test_metadata *_metadata, int fd, int flags,
			       size_t size, const size_t *order, uint64_t seed,
			       long faults[2])
{
	size_t ps = dax_page_size(), npages = size / ps;
	char *p;
	int m;

	for (m = 0; m < 2; m++) {
		p = dax_map_pte(fd, size, PROT_READ, flags);
		ASSERT_NE(MAP_FAILED, p);
		/* EINVAL: no THP, so no PMD entries either. */
		ASSERT_TRUE(!madvise(p, size, MADV_NOHUGEPAGE) || errno == EINVAL);
		faults[m] = read_faults(p, npages, ps, order);
		EXPECT_EQ(-1, dax_verify(p, npages, seed, 0));
		munmap(p, size);
	}
}

/* Page tables that a mapping of @size placed by dax_map_pte() spans. */
static long pte_tables(size_t size)
{
	size_t table = dax_pmd_size();

	return (DAX_PTE_COLOUR + size + table - 1) / table;
}

/* Faults to grow the window from fault_around_bytes to a page table. */
static long ramp_faults(void)
{
	long n = 0;
	size_t w;

	for (w = WINDOW; w < dax_pmd_size(); w *= 2)
		n++;
	return n;
}

/*
 * Faults taken by two readers that take turns, page by page, each reading
 * its own half of the file sequentially: one through a mapping of @fd_a,
 * the other through a mapping of @fd_b.
 */
static long interleaved_faults(struct __test_metadata *_metadata, int fd_a,
			       int fd_b, int flags, size_t npages, uint64_t seed)
{
	size_t ps = dax_page_size(), half = npages / 2, i;
	char *a, *b;
	long before, faults;

	a = dax_map_pte(fd_a, npages * ps, PROT_READ, flags);
	b = dax_map_pte(fd_b, npages * ps, PROT_READ, flags);
	EXPECT_NE(MAP_FAILED, a);
	EXPECT_NE(MAP_FAILED, b);
	if (a == MAP_FAILED || b == MAP_FAILED)
		return -1;
	before = dax_minor_faults();
	for (i = 0; i < half; i++) {
		dax_touch(a + i * ps);
		dax_touch(b + (half + i) * ps);
	}
	faults = dax_minor_faults() - before;
	EXPECT_EQ(-1, dax_verify(a, half, seed, 0));
	EXPECT_EQ(-1, dax_verify(b + half * ps, npages - half, seed, half));
	munmap(a, npages * ps);
	munmap(b, npages * ps);
	return faults;
}

/*
 * The window grows per open file (in file->f_ra, as mmap readahead keeps its
 * state): two sequential readers that share one struct file and take turns
 * reset each other's window, so each of their faults maps fault_around_bytes
 * and no more, where through two struct files of the same file each window
 * grows as a lone reader's does.  The cover letter of fault-around lists the
 * first as a known limit; this checks that it has the floor it claims, one
 * fault per fault_around_bytes at most, and that readers of separate struct
 * files do not reset each other.  Both counts are logged.
 */
TEST_F_TIMEOUT(fa, interleaved_readers, 120)
{
	size_t npages = BIG_FILE / self->ps;
	long shared, separate, windows = BIG_FILE / WINDOW;
	long grown = 2 * (pte_tables(BIG_FILE / 2) + ramp_faults());
	char path[64];
	char *p;
	int fd;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	ASSERT_EQ(0, dax_fault_around_set(WINDOW));
	/* The first read makes the entries; count re-reads only. */
	p = dax_map_pte(self->fd, BIG_FILE, PROT_READ, variant->flags);
	ASSERT_NE(MAP_FAILED, p);
	read_faults(p, npages, self->ps, NULL);
	munmap(p, BIG_FILE);

	shared = interleaved_faults(_metadata, self->fd, self->fd,
				    variant->flags, npages, self->seed);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", self->fd);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	separate = interleaved_faults(_metadata, self->fd, fd, variant->flags,
				      npages, self->seed);
	close(fd);
	TH_LOG("%zu pages, two readers taking turns: %ld faults through one %s, %ld through two",
	       npages, shared, "struct file", separate);
	EXPECT_LE(shared, windows + 4);
	EXPECT_LE(separate, grown + 4);
}

/*
 * Sequential reads: the window grows from fault_around_bytes to a page
 * table, so a read takes one fault per page table plus the few that grow
 * it, on the first read of the file as through a later mapping (never more
 * than one per fault_around_bytes); one fault per page without fault-around.
 * A first read that makes PMD entries (2 MiB-aligned blocks) may take one
 * more fault per PMD range: in a page table that a range starts in, past
 * its first page, when no earlier fault made the range's entry ahead.
 */
TEST_F_TIMEOUT(fa, sequential_counts, 120)
{
	const size_t sizes[] = { SMALL_FILE, BIG_FILE };
	long npages, windows, tables, pmds, faults[2];
	size_t s;

	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		npages = sizes[s] / self->ps;
		windows = sizes[s] / WINDOW;
		tables = pte_tables(sizes[s]);
		pmds = sizes[s] / dax_pmd_size();

		ASSERT_EQ(0, ftruncate(self->fd, 0));
		ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
		ASSERT_EQ(0, dax_fault_around_set(WINDOW));
		count_two_mappings(_metadata, self->fd, variant->flags, sizes[s],
				   NULL, self->seed, faults);
		TH_LOG("%zu KiB, fault_around_bytes %d: %ld then %ld faults for %ld pages",
		       sizes[s] >> 10, WINDOW, faults[0], faults[1], npages);
		EXPECT_LE(faults[0], windows + 2);
		EXPECT_LE(faults[1], windows + 2);
		/*
		 * The first read also stops where an extent ends; either read
		 * where dax_map_pages() left a window to ->fault() because the
		 * CPU or the page table lock was wanted.
		 */
		EXPECT_LE(faults[0], tables + pmds + ramp_faults() + 4);
		EXPECT_LE(faults[1], tables + ramp_faults() + 2);
		EXPECT_LE(tables, faults[0]);
		/* It grows one step per fault, in the first page table. */
		if (tables > 1)
			EXPECT_LE(tables + ramp_faults() - 1, faults[1]);

		/* fault_around_bytes = 4096 turns it off. */
		ASSERT_EQ(0, ftruncate(self->fd, 0));
		ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
		ASSERT_EQ(0, dax_fault_around_set(self->ps));
		count_two_mappings(_metadata, self->fd, variant->flags, sizes[s],
				   NULL, self->seed, faults);
		TH_LOG("%zu KiB, fault_around_bytes %zu: %ld then %ld faults",
		       sizes[s] >> 10, self->ps, faults[0], faults[1]);
		EXPECT_LE(npages, faults[0]);
		EXPECT_LE(npages, faults[1]);
	}
}

/*
 * Random single-page reads take fewer faults than pages, and keep the
 * fault_around_bytes window, also right after a sequential read through the
 * same open file grew it: through a second mapping, where every page has an
 * entry, one fault per window, not fewer (a window that grew or stayed
 * grown) and not more (one that shrank).  The slack: a random fault lands
 * right after the previous window now and then and doubles it once, and
 * dax_map_pages() may leave part of such a window to ->fault().  The first
 * fault in a page table that has none yet is served by fault-around too,
 * which installs the page table: no extra fault per page table.
 */
TEST_F_TIMEOUT(fa, random_counts, 120)
{
	size_t npages = BIG_FILE / self->ps;
	size_t *order;
	long faults[2];

	order = dax_page_order(npages, self->seed);
	ASSERT_NE(NULL, order);
	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	count_two_mappings(_metadata, self->fd, variant->flags, BIG_FILE, NULL,
			   self->seed, faults);
	/* Drop the entries (not the window) for a first read again. */
	ASSERT_EQ(0, ftruncate(self->fd, 0));
	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	count_two_mappings(_metadata, self->fd, variant->flags, BIG_FILE, order,
			   self->seed, faults);
	free(order);
	TH_LOG("random: %ld then %ld faults for %zu pages", faults[0], faults[1], npages);
	EXPECT_GT((long)npages / 2, faults[0]);
	EXPECT_GT((long)npages / 2, faults[1]);
	EXPECT_LE((long)(BIG_FILE / WINDOW) * 15 / 16, faults[1]);
	EXPECT_LE(faults[1], (long)(BIG_FILE / WINDOW) + 8);
}

/*
 * madvise() hints: MADV_SEQUENTIAL maps the largest window from the first
 * fault, so a read takes fewer faults than without the hint, and at least
 * one per page table (at most two: the first fault in a page table that
 * has none yet is left to ->fault(), which maps only to the end of the
 * faulting page's extent); MADV_RANDOM maps only the faulting page.
 */
TEST_F_TIMEOUT(fa, madvise_hints, 120)
{
	static const int advice[] = { MADV_NORMAL, MADV_SEQUENTIAL, MADV_RANDOM };
	static const char * const name[] = {
		"MADV_NORMAL", "MADV_SEQUENTIAL", "MADV_RANDOM"
	};
	size_t size = 8 * dax_pmd_size(), npages = size / self->ps, a;
	long tables = pte_tables(size), faults[3][2];
	int m;
	char *p;

	for (a = 0; a < ARRAY_SIZE(advice); a++) {
		ASSERT_EQ(0, ftruncate(self->fd, 0));
		ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
		for (m = 0; m < 2; m++) {
			p = dax_map_pte(self->fd, size, PROT_READ, variant->flags);
			ASSERT_NE(MAP_FAILED, p);
			ASSERT_EQ(0, madvise(p, size, advice[a]));
			faults[a][m] = read_faults(p, npages, self->ps, NULL);
			EXPECT_EQ(-1, dax_verify(p, npages, self->seed, 0));
			munmap(p, size);
		}
		TH_LOG("%s: %ld then %ld faults for %zu pages, %ld page tables",
		       name[a], faults[a][0], faults[a][1], npages, tables);
	}
	for (m = 0; m < 2; m++) {
		EXPECT_LT(faults[1][m], faults[0][m]);
		EXPECT_LE(tables, faults[1][m]);
		EXPECT_LE(faults[1][m], 2 * tables);
		EXPECT_EQ((long)npages, faults[2][m]);
	}
}

/*
 * Map a 16-page file with pattern data and read its first page, which must
 * map the other 15 by fault-around: reading them takes no fault.
 */
static char *map_around(struct __test_metadata *_metadata, int fd, int flags,
			int prot, size_t npages)
{
	size_t ps = dax_page_size();
	char *p;

	p = dax_map_pte(fd, npages * ps, prot, flags);
	if (p == MAP_FAILED)
		return p;
	dax_touch(p);
	EXPECT_EQ(0, read_faults(p + ps, npages - 1, ps, NULL))
		TH_LOG("pages after the first were not mapped by fault-around");
	return p;
}

TEST_F(fa, truncate_sigbus)
{
	size_t ps = self->ps, npages = WINDOW / ps;
	char *p;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	p = map_around(_metadata, self->fd, variant->flags, PROT_READ, npages);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, ftruncate(self->fd, 4 * ps));
	EXPECT_EQ(-EFAULT, dax_probe_read(p + 8 * ps, NULL));
	EXPECT_EQ(-EFAULT, dax_probe_read(p + (npages - 1) * ps, NULL));
	EXPECT_EQ(0, dax_probe_read(p + 3 * ps, NULL));
	EXPECT_EQ(-1, dax_verify(p, 4, self->seed, 0));
	munmap(p, npages * ps);
}

TEST_F(fa, punch_zaps)
{
	size_t ps = self->ps, npages = WINDOW / ps;
	char *p;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	p = map_around(_metadata, self->fd, variant->flags, PROT_READ, npages);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       4 * ps, 4 * ps));
	EXPECT_TRUE(dax_is_zero(p + 4 * ps, 4 * ps));
	EXPECT_EQ(-1, dax_verify(p, 4, self->seed, 0));
	EXPECT_EQ(-1, dax_verify(p + 8 * ps, npages - 8, self->seed, 8));
	munmap(p, npages * ps);
}

/*
 * Holes and unwritten extents read zeros even when fault-around maps their
 * neighbours, and even where the media still holds old data: the unwritten
 * pages are on blocks of the file's old data (the test skips if none is).
 */
TEST_F(fa, holes_unwritten_zero)
{
	size_t ps = self->ps, npages = WINDOW / ps;
	long reused;
	char *p;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	ASSERT_EQ(0, fsync(self->fd));
	reused = dax_unwritten_over_old_data(self->fd, self->seed, 8, npages - 8);
	if (reused == -EOPNOTSUPP)
		SKIP(return, "fallocate() or FIEMAP not supported");
	ASSERT_LE(0, reused) TH_LOG("unwritten extents: %s", strerror(-reused));
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       ps, 7 * ps));
	TH_LOG("%ld of %zu unwritten pages are on blocks of the old data",
	       reused, npages - 8);
	if (!reused)
		SKIP(return, "no block of the old data stayed: old data cannot show");

	p = dax_map_pte(self->fd, npages * ps, PROT_READ, variant->flags);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, dax_verify(p, 1, self->seed, 0));
	EXPECT_TRUE(dax_is_zero(p + ps, (npages - 1) * ps));
	munmap(p, npages * ps);
}

/* RssFile of /proc/self/status in kB (an exact sum of the mm counter), or -1. */
static long rss_file_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssFile: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * The mm's file RSS counter counts each page that fault-around maps, once:
 * on the first read of a file (first touch creates the entries) and through
 * a second mapping (dax_map_pages() maps the entries), RssFile grows by the
 * mapping's smaps Rss, which counts its present PTEs but not the zero page
 * of a hole (nor does the counter), and munmap() takes as much off.
 * mlockall() maps the test's own file pages first, so that none of them is
 * faulted in while the counter is watched.
 */
TEST_F_TIMEOUT(fa, rss_counts_mapped_pages, 120)
{
	size_t ps = self->ps, npages = (4UL << 20) / ps, hole = npages / 2;
	long before, after, rss;
	char *p;
	int m;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       hole * ps, 4 * ps));
	if (mlockall(MCL_CURRENT))
		SKIP(return, "mlockall: %s", strerror(errno));
	/* The calls below, once, before the counter is watched. */
	ASSERT_LE(0, rss_file_kb());
	p = dax_map_pte(self->fd, ps, PROT_READ, variant->flags);
	ASSERT_NE(MAP_FAILED, p);
	dax_smaps_field_kb(p, "Rss:");
	munmap(p, ps);

	for (m = 0; m < 2; m++) {
		before = rss_file_kb();
		p = dax_map_pte(self->fd, npages * ps, PROT_READ, variant->flags);
		ASSERT_NE(MAP_FAILED, p);
		EXPECT_GT((long)npages, read_faults(p, npages, ps, NULL));
		rss = dax_smaps_field_kb(p, "Rss:");
		after = rss_file_kb();
		TH_LOG("mapping %d: RssFile %ld -> %ld kB, the mapping's Rss %ld kB",
		       m + 1, before, after, rss);
		EXPECT_EQ((long)((npages - 4) * ps >> 10), rss);
		EXPECT_EQ(rss, after - before);
		EXPECT_EQ(-1, dax_verify(p, hole, self->seed, 0));
		EXPECT_TRUE(dax_is_zero(p + hole * ps, 4 * ps));
		EXPECT_EQ(-1, dax_verify(p + (hole + 4) * ps, npages - hole - 4,
					 self->seed, hole + 4));
		munmap(p, npages * ps);
		EXPECT_EQ(before, rss_file_kb());
	}
	munlockall();
}

/*
 * A page mapped by fault-around is mapped read-only: writing it takes a
 * write fault, which updates mtime (shared mappings), and the data reaches
 * the file (shared) or only the private copy (private).
 */
TEST_F(fa, write_after_fault_around)
{
	size_t ps = self->ps, npages = WINDOW / ps;
	struct stat before, after;
	struct timespec delay = { .tv_nsec = 50 * 1000 * 1000 };
	char *p, *buf;
	long faults;

	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, npages));
	p = map_around(_metadata, self->fd, variant->flags, PROT_READ | PROT_WRITE, npages);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, fstat(self->fd, &before));
	nanosleep(&delay, NULL);

	faults = dax_minor_faults();
	dax_fill(p + 3 * ps, 1, self->seed + 1, 3);
	EXPECT_LE(1, dax_minor_faults() - faults)
		TH_LOG("a write to a page mapped by fault-around took no fault");
	ASSERT_EQ(0, msync(p, npages * ps, MS_SYNC));
	ASSERT_EQ(0, fstat(self->fd, &after));

	buf = malloc(ps);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ((ssize_t)ps, pread(self->fd, buf, ps, 3 * ps));
	if (variant->shared) {
		EXPECT_EQ(-1, dax_verify(buf, 1, self->seed + 1, 3));
		EXPECT_TRUE(after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
			    after.st_mtim.tv_nsec != before.st_mtim.tv_nsec);
	} else {
		EXPECT_EQ(-1, dax_verify(buf, 1, self->seed, 3));
		EXPECT_EQ(-1, dax_verify(p + 3 * ps, 1, self->seed + 1, 3));
	}
	/* The neighbours are still the file's data. */
	EXPECT_EQ(-1, dax_verify(p + 4 * ps, npages - 4, self->seed, 4));
	free(buf);
	munmap(p, npages * ps);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
