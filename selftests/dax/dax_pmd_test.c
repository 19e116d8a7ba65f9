// SPDX-License-Identifier: GPL-2.0
/*
 * fs-DAX PMD mappings: a PMD-aligned mapping of a file whose blocks are
 * PMD-aligned is mapped with PMDs, a mapping 64 KiB off falls back to PTEs,
 * which fault-around maps from the PMD entries, at least a window per fault
 * and all of the faulting page's entry that the page table holds (in runs
 * of each entry's pages, whose references unmapping must drop), and both
 * read the file's data.  Fault-around leaves a page that memory failure
 * poisoned to the fault path, and memory failure of a page of a PMD entry
 * kills a process that maps that page alone.  Read faults of a misaligned
 * mapping make PMD entries themselves where the blocks allow, which an
 * aligned mapping then maps with PMDs, and whose pages, held in a pipe, make
 * a hole punch wait only until the pipe closes.
 *
 * smaps does not count fs-DAX PMDs in FilePmdMapped (the pages are
 * ZONE_DEVICE pages), so the PMD mapping is also recognised by its number of
 * page faults.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "dax_util.h"

FIXTURE(pmd)
{
	int fd;
	size_t ps, pmd, len;
	uint64_t seed;
	long fault_around;	/* value to restore, or -1 */
};

FIXTURE_SETUP(pmd)
{
	const char *dir;
	char why[256];
	int ret;

	self->fd = -1;
	self->fault_around = -1;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "no transparent hugepages, so no DAX PMDs");
	self->ps = dax_page_size();
	self->pmd = dax_pmd_size();
	self->len = 2 * self->pmd;
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	self->fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->fd) TH_LOG("cannot create a file in %s: %s", dir,
				      strerror(-self->fd));
	/* Allocating it all at once makes aligned extents more likely. */
	fallocate(self->fd, 0, 0, self->len);
	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, self->len / self->ps));
	ret = dax_extents_pmd_aligned(self->fd, self->len, self->pmd);
	if (ret < 0)
		SKIP(return, "FIEMAP: %s", strerror(-ret));
	if (!ret)
		SKIP(return, "the filesystem did not allocate PMD-aligned extents");

	/* Count faults, not pages mapped around them (xfs has ->map_pages). */
	self->fault_around = dax_fault_around_get();
	if (self->fault_around <= (long)self->ps || dax_fault_around_set(self->ps))
		self->fault_around = -1;
}

FIXTURE_TEARDOWN(pmd)
{
	if (self->fault_around >= 0)
		dax_fault_around_set(self->fault_around);
	if (self->fd >= 0)
		close(self->fd);
}

static void touch(const char *p, size_t len, size_t ps)
{
	size_t i;

	for (i = 0; i < len; i += ps)
		dax_touch(p + i);
}

TEST_F(pmd, aligned_uses_pmd)
{
	long f0, f1, f2, f3, pmd_kb, rss_kb, faults;
	char *p;

	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0UL, (uintptr_t)p % self->pmd);

	f0 = dax_minor_faults();
	touch(p, self->ps, self->ps);
	f1 = dax_minor_faults();
	pmd_kb = dax_smaps_field_kb(p, "FilePmdMapped:");
	rss_kb = dax_smaps_field_kb(p, "Rss:");
	f2 = dax_minor_faults();
	touch(p, self->len, self->ps);
	f3 = dax_minor_faults();
	faults = f1 - f0 + f3 - f2;

	TH_LOG("one page read: FilePmdMapped %ld kB, Rss %ld kB; %zu MiB read: %ld faults",
	       pmd_kb, rss_kb, self->len >> 20, faults);
	if (pmd_kb > 0) {
		EXPECT_LE((long)(self->pmd >> 10), pmd_kb);
	} else {
		/* One fault per PMD, with some slack for unrelated faults. */
		EXPECT_LE(1, faults);
		EXPECT_GE((long)(2 * self->len / self->pmd), faults);
	}
	EXPECT_EQ(-1, dax_verify(p, self->len / self->ps, self->seed, 0));
	munmap(p, self->len);
}

/*
 * A mapping 64 KiB off PMD alignment cannot use the file's PMD entries as
 * PMDs: without fault-around every page takes a fault of its own, and
 * fault-around maps the pages of those PMD entries with PTEs, one fault
 * per 64 KiB window at most (pte_random_rereads_map_entries counts what a
 * fault maps of its own entry).
 */
TEST_F(pmd, misaligned_uses_ptes)
{
	size_t npages = self->pmd / self->ps;
	long f0, f1, max;
	char why[256];
	char *p;

	if (!dax_has_fault_around(why, sizeof(why)))
		SKIP(return, "%s", why);

	/* Read through an aligned mapping first, which makes PMD entries. */
	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, p);
	touch(p, self->len, self->ps);
	munmap(p, self->len);

	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(DAX_PTE_COLOUR, (uintptr_t)p % self->pmd);
	f0 = dax_minor_faults();
	touch(p, self->pmd, self->ps);
	f1 = dax_minor_faults();
	EXPECT_EQ(-1, dax_verify(p, self->len / self->ps, self->seed, 0));
	munmap(p, self->len);
	if (self->fault_around < 0)
		SKIP(return, "fault_around_bytes cannot be set (debugfs)");
	TH_LOG("%zu kB at a misaligned address, fault_around_bytes %zu: %ld faults for %zu pages",
	       self->pmd >> 10, self->ps, f1 - f0, npages);
	EXPECT_LE((long)npages, f1 - f0);

	ASSERT_EQ(0, dax_fault_around_set(self->fault_around));
	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	f0 = dax_minor_faults();
	touch(p, self->pmd, self->ps);
	f1 = dax_minor_faults();
	EXPECT_EQ(-1, dax_verify(p, self->len / self->ps, self->seed, 0));
	munmap(p, self->len);
	/*
	 * At most one per window; the first fault into the new page table maps
	 * one page (->fault() sets up the table), plus slack for unrelated
	 * faults.
	 */
	max = self->pmd / self->fault_around + 4;
	TH_LOG("again with fault_around_bytes %ld: %ld faults, at most %ld expected",
	       self->fault_around, f1 - f0, max);
	EXPECT_GE(max, f1 - f0);
}

/*
 * Fault-around maps the pages of a PMD entry under a misaligned mapping in
 * runs, with one folio reference for each page of a run.  The PTEs must map
 * the entry's pages in order, and unmapping part of a run, then the rest,
 * must drop every reference: truncate waits for any page of the file that is
 * still referenced, so it would not end if a reference leaked, and one
 * dropped twice makes the kernel warn.  The mapping is 3 pages off a PMD
 * boundary, so that fault-around windows (which line up with page tables)
 * straddle the two entries.  The file is a named one here: if a reference
 * leaked, the last close of an unlinked file would wait for it forever (at
 * eviction) and hang the test; a linked one is left behind instead.
 */
TEST_F_TIMEOUT(pmd, misaligned_runs_released, 120)
{
	size_t npages = self->len / self->ps, per_pmd = self->pmd / self->ps, i;
	const char *dir = dax_test_dir();
	uint64_t pm, prev = 0;
	struct dax_kwatch kwatch;
	char why[256], path[4096];
	long faults;
	int fd, status;
	bool exited;
	pid_t pid;
	char *p;

	if (!dax_has_fault_around(why, sizeof(why)))
		SKIP(return, "%s", why);
	/* The fixture set a window of one page: runs need a larger one. */
	if (self->fault_around >= 0)
		ASSERT_EQ(0, dax_fault_around_set(self->fault_around));
	if (dax_fault_around_get() <= (long)self->ps)
		SKIP(return, "fault_around_bytes is one page: no fault-around");

	snprintf(path, sizeof(path), "%s/dax_pmd_test.runs.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd) TH_LOG("cannot create %s: %s", path, strerror(errno));
	fallocate(fd, 0, 0, self->len);
	if (dax_write_pattern(fd, self->seed, 0, npages) ||
	    dax_extents_pmd_aligned(fd, self->len, self->pmd) <= 0) {
		close(fd);
		unlink(path);
		SKIP(return, "no PMD-aligned extents in a second file");
	}
	DAX_KWATCH_START(&kwatch);

	/* PMD entries: one fault per PMD, as in aligned_uses_pmd. */
	p = dax_map_file_at(fd, self->len, PROT_READ, MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, p);
	faults = dax_minor_faults();
	touch(p, self->len, self->ps);
	faults = dax_minor_faults() - faults;
	munmap(p, self->len);
	if (faults > (long)(2 * self->len / self->pmd)) {
		close(fd);
		unlink(path);
		SKIP(return, "an aligned read took %ld faults: no PMD entries", faults);
	}

	p = dax_map_file_colour(fd, self->len, PROT_READ, MAP_SHARED, 0,
				3 * self->ps);
	ASSERT_NE(MAP_FAILED, p);
	touch(p, self->len, self->ps);
	for (i = 0; i < npages; i++, prev = pm) {
		pm = dax_pagemap(p + i * self->ps);
		ASSERT_TRUE(pm & DAX_PAGEMAP_PRESENT)
			TH_LOG("page %zu is not mapped after a read", i);
		/* PFNs show to root only. */
		if (i % per_pmd && (pm & DAX_PAGEMAP_PFN) &&
		    (prev & DAX_PAGEMAP_PFN))
			ASSERT_EQ((prev & DAX_PAGEMAP_PFN) + 1,
				  pm & DAX_PAGEMAP_PFN)
				TH_LOG("page %zu is not the page after page %zu",
				       i, i - 1);
	}
	/* Part of a run, and a range across the two PMD entries. */
	ASSERT_EQ(0, munmap(p + 3 * self->ps, 5 * self->ps));
	ASSERT_EQ(0, munmap(p + (per_pmd - 2) * self->ps, 4 * self->ps));
	EXPECT_EQ(-1, dax_verify(p, 3, self->seed, 0));
	EXPECT_EQ(-1, dax_verify(p + 8 * self->ps, per_pmd - 10, self->seed, 8));
	EXPECT_EQ(-1, dax_verify(p + (per_pmd + 2) * self->ps, per_pmd - 2,
				 self->seed, per_pmd + 2));
	munmap(p, self->len);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(ftruncate(fd, 0) ? 1 : 0);
	exited = dax_wait_exit(pid, 30, &status);
	if (!exited) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fd);
		TH_LOG("left %s behind: its truncate waits for a page", path);
	}
	ASSERT_TRUE(exited)
		TH_LOG("truncate did not end in 30 s: a page is still referenced");
	close(fd);
	unlink(path);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("truncate failed (wait status %#x)", status);
	DAX_ASSERT_NO_COMPLAINT(&kwatch);
	dax_kwatch_stop(&kwatch);
}

/*
 * Read faults of a mapping that cannot use PMDs make PMD entries where the
 * file's blocks allow them: an aligned mapping of the file read afterwards
 * then uses PMDs, one fault per PMD, where order-0 entries would make every
 * PMD fault fall back to PTEs (with the fixture's window of one page, a fault
 * per page).  Both mappings read the file's data.
 */
TEST_F(pmd, pte_reads_make_pmd_entries)
{
	long faults;
	char why[256];
	char *p;

	if (!dax_has_fault_around(why, sizeof(why)))
		SKIP(return, "%s", why);

	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	touch(p, self->len, self->ps);
	EXPECT_EQ(-1, dax_verify(p, self->len / self->ps, self->seed, 0));
	munmap(p, self->len);

	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, p);
	faults = dax_minor_faults();
	touch(p, self->len, self->ps);
	faults = dax_minor_faults() - faults;
	EXPECT_EQ(-1, dax_verify(p, self->len / self->ps, self->seed, 0));
	munmap(p, self->len);
	TH_LOG("%zu MiB read through PTEs, then through an aligned mapping: %ld faults",
	       self->len >> 20, faults);
	/* One per PMD, with some slack for unrelated faults. */
	EXPECT_GE((long)(2 * self->len / self->pmd), faults)
		TH_LOG("the PTE reads left entries that a PMD cannot map");
}

/*
 * Sum the "mapped" and "large" fields of the fs_dax:dax_map_pages events of
 * inode @ino in the trace buffer of tracefs directory @trace: *@large is -1
 * if the events have no "large".  Returns 0 or -errno.
 */
static int read_map_pages(const char *trace, unsigned long ino, long *mapped,
			  long *large)
{
	char path[256], line[1024], ino_str[40];
	unsigned int m, l;
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", trace);
	snprintf(ino_str, sizeof(ino_str), " ino %#lx ", ino);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	*mapped = 0;
	*large = -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "dax_map_pages:") || !strstr(line, ino_str))
			continue;
		p = strstr(line, " mapped ");
		if (!p || sscanf(p, " mapped %u", &m) != 1)
			continue;
		*mapped += m;
		if (sscanf(p, " mapped %u large %u", &m, &l) == 2)
			*large = (*large < 0 ? 0 : *large) + l;
	}
	fclose(f);
	return 0;
}

/*
 * The PMD entries that PTE reads made are mapped by fault-around as the
 * pages of large folios, in runs: on a re-read through PTEs, with the
 * system's fault_around_bytes, the fs_dax:dax_map_pages events map most of
 * the file, and say of every page they mapped that it was of a large folio
 * (their field "large").
 */
TEST_F(pmd, pte_rereads_map_large_folios)
{
	const char *trace = dax_tracefs_dir();
	const char *event = "events/fs_dax/dax_map_pages/enable";
	long mapped, large;
	struct stat st;
	char why[256];
	char *p;
	int ret;

	if (!dax_has_fault_around(why, sizeof(why)))
		SKIP(return, "%s", why);
	if (!trace)
		SKIP(return, "no tracefs with the fs_dax events");
	if (self->fault_around < 0)
		SKIP(return, "fault_around_bytes cannot be set (debugfs)");
	ASSERT_EQ(0, dax_fault_around_set(self->fault_around));
	ASSERT_EQ(0, fstat(self->fd, &st));

	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	touch(p, self->len, self->ps);
	munmap(p, self->len);

	ASSERT_EQ(0, dax_tracefs_write(trace, "tracing_on", "1"));
	ASSERT_EQ(0, dax_tracefs_write(trace, event, "1"));
	ASSERT_EQ(0, dax_tracefs_write(trace, "trace", ""));
	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	touch(p, self->len, self->ps);
	EXPECT_EQ(-1, dax_verify(p, self->len / self->ps, self->seed, 0));
	munmap(p, self->len);
	ASSERT_EQ(0, dax_tracefs_write(trace, event, "0"));
	ret = read_map_pages(trace, st.st_ino, &mapped, &large);
	ASSERT_EQ(0, ret) TH_LOG("cannot read the trace: %s", strerror(-ret));
	TH_LOG("%zu MiB read through PTEs again: %ld pages mapped around, %ld of large folios",
	       self->len >> 20, mapped, large);
	ASSERT_LE(0, large) TH_LOG("the dax_map_pages events have no field large");
	EXPECT_LE((long)(self->len / self->ps / 2), mapped);
	EXPECT_EQ(mapped, large)
		TH_LOG("fault-around mapped pages of PMD entries as pages of their own");
}

/*
 * The two tests below count the faults of re-reads through PTEs with a
 * 64 KiB window, which a fault that meets a PMD entry outgrows.  Why they
 * cannot run here, or NULL: with 4 KiB pages only, where a PMD entry is
 * 2 MiB (a window spans 2 MiB at most, which a larger page's PMD entry
 * outgrows), and where fault_around_bytes can be set and restored.
 */
#define REREAD_WINDOW	(64 * 1024)

static const char *reread_unfit(const FIXTURE_DATA(pmd) *self, char *why,
				size_t len)
{
	if (!dax_has_fault_around(why, len))
		return why;
	if (self->ps != 4096)
		return "PMD entries larger than the largest window";
	if (self->fault_around < 0)
		return "fault_around_bytes is one page or cannot be set (debugfs)";
	return NULL;
}

/*
 * Read @len bytes of @fd through a mapping that cannot use PMDs, which makes
 * PMD entries where the blocks allow, and return whether it made them: an
 * aligned read then takes a fault per PMD, where order-0 entries would take
 * one per 64 KiB window.
 */
static bool pte_reads_made_pmd_entries(int fd, size_t len, size_t ps,
				       size_t pmd)
{
	long faults;
	char *p;

	p = dax_map_file_at(fd, len, PROT_READ, MAP_SHARED, 0, false);
	if (p == MAP_FAILED)
		return false;
	touch(p, len, ps);
	munmap(p, len);

	p = dax_map_file_at(fd, len, PROT_READ, MAP_SHARED, 0, true);
	if (p == MAP_FAILED)
		return false;
	faults = dax_minor_faults();
	touch(p, len, ps);
	faults = dax_minor_faults() - faults;
	munmap(p, len);
	return faults <= (long)(2 * len / pmd);
}

/*
 * A fault that meets a PMD entry maps all of the entry's pages that the page
 * table and the VMA hold, not only the fault-around window: a random re-read
 * through PTEs takes one fault per part of an entry that one page table
 * holds (two per entry, as the mapping is 64 KiB off PMD alignment), where
 * 64 KiB windows would take one per window (64 for the fixture's 4 MiB).
 */
TEST_F(pmd, pte_random_rereads_map_entries)
{
	size_t npages = self->len / self->ps, i;
	long faults, pmds = self->len / self->pmd;
	const char *unfit;
	size_t *order;
	char why[256];
	char *p;

	unfit = reread_unfit(self, why, sizeof(why));
	if (unfit)
		SKIP(return, "%s", unfit);
	ASSERT_EQ(0, dax_fault_around_set(REREAD_WINDOW));
	order = dax_page_order(npages, self->seed);
	ASSERT_NE(NULL, order);
	if (!pte_reads_made_pmd_entries(self->fd, self->len, self->ps,
					self->pmd)) {
		free(order);
		SKIP(return, "the PTE reads made no PMD entries");
	}

	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	faults = dax_minor_faults();
	for (i = 0; i < npages; i++)
		dax_touch(p + order[i] * self->ps);
	faults = dax_minor_faults() - faults;
	EXPECT_EQ(-1, dax_verify(p, npages, self->seed, 0));
	munmap(p, self->len);
	free(order);
	TH_LOG("%zu MiB read through PTEs, then again in random order: %ld faults",
	       self->len >> 20, faults);
	/* Two per entry, with some slack for unrelated faults. */
	EXPECT_GE(2 * pmds + 4, faults)
		TH_LOG("the random re-read mapped windows, not the PMD entries' pages");
}

/*
 * A fault that maps its PMD entry past the window moves the window that the
 * next fault compares with to end where it mapped: a sequential re-read
 * through PTEs of a file of PMD entries grows its window as over order-0
 * entries, one fault per page table once grown, where a window that started
 * again at every entry would take about two per page table.  A file of its
 * own, of 16 PMDs.
 */
TEST_F_TIMEOUT(pmd, pte_sequential_rereads_grow_the_window, 60)
{
	size_t len = 16 * self->pmd, npages = len / self->ps, w;
	long faults, tables, ramp = 0;
	const char *dir = dax_test_dir();
	const char *unfit;
	char why[256];
	char *p;
	int fd, ret;

	unfit = reread_unfit(self, why, sizeof(why));
	if (unfit)
		SKIP(return, "%s", unfit);
	ASSERT_EQ(0, dax_fault_around_set(REREAD_WINDOW));
	fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, fd);
	fallocate(fd, 0, 0, len);
	ASSERT_EQ(0, dax_write_pattern(fd, self->seed, 0, npages));
	ret = dax_extents_pmd_aligned(fd, len, self->pmd);
	if (ret <= 0 || !pte_reads_made_pmd_entries(fd, len, self->ps, self->pmd)) {
		close(fd);
		SKIP(return, "no PMD entries for %zu MiB", len >> 20);
	}

	p = dax_map_file_at(fd, len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	faults = dax_minor_faults();
	touch(p, len, self->ps);
	faults = dax_minor_faults() - faults;
	EXPECT_EQ(-1, dax_verify(p, npages, self->seed, 0));
	munmap(p, len);
	close(fd);
	/* The page tables the mapping spans, and the window's growth. */
	tables = (DAX_PTE_COLOUR + len + self->pmd - 1) / self->pmd;
	for (w = REREAD_WINDOW; w < self->pmd; w *= 2)
		ramp++;
	TH_LOG("%zu MiB read through PTEs, then again: %ld faults, %ld page tables",
	       len >> 20, faults, tables);
	/* Slack for unrelated faults, and windows cut short by need_resched(). */
	EXPECT_GE(tables + ramp + 4, faults)
		TH_LOG("the window started again at every PMD entry");
}

/*
 * A page of a PMD entry that PTE reads made, held in a pipe: the reference
 * is its folio's, so it makes the whole entry busy.  A hole punch of another
 * page of the entry waits for it (ext4 and xfs wait for every page of the
 * file anyway), and must end once the pipe closes; the pipe keeps the page's
 * data, and the mapping then shows what read(2) shows.  The file is a named
 * one, for the reason misaligned_runs_released gives.
 */
#define PIPED_PAGE	300
#define PUNCHED_PAGE	5

TEST_F_TIMEOUT(pmd, punch_beside_piped_page, 60)
{
	size_t npages = self->len / self->ps;
	const char *dir = dax_test_dir();
	struct iovec iov;
	char path[4096], *p, *buf;
	int fd, pfd[2], status;
	bool waited;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/dax_pmd_test.punch.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd) TH_LOG("cannot create %s: %s", path, strerror(errno));
	fallocate(fd, 0, 0, self->len);
	if (dax_write_pattern(fd, self->seed, 0, npages) ||
	    dax_extents_pmd_aligned(fd, self->len, self->pmd) <= 0) {
		close(fd);
		unlink(path);
		SKIP(return, "no PMD-aligned extents in a second file");
	}
	p = dax_map_file_at(fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	touch(p, self->len, self->ps);
	ASSERT_EQ(0, pipe(pfd));
	iov.iov_base = p + PIPED_PAGE * self->ps;
	iov.iov_len = self->ps;
	ASSERT_EQ((ssize_t)self->ps, vmsplice(pfd[1], &iov, 1, 0));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pfd[0]);
		close(pfd[1]);
		_exit(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				PUNCHED_PAGE * self->ps, self->ps) ? 1 : 0);
	}
	waited = !dax_wait_exit(pid, 2.0, &status);
	TH_LOG("the punch %s for the page in the pipe",
	       waited ? "waits" : "does not wait");
	buf = malloc(self->ps);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ((ssize_t)self->ps, read(pfd[0], buf, self->ps));
	close(pfd[0]);
	close(pfd[1]);
	EXPECT_EQ(-1, dax_verify(buf, 1, self->seed, PIPED_PAGE));
	free(buf);
	if (waited && !dax_wait_exit(pid, 10.0, &status)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		TH_LOG("left %s behind", path);
		ASSERT_TRUE(false) TH_LOG("the punch still waits 10 s after the pipe closed");
	}
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the punch failed (wait status %#x)", status);
	touch(p, self->len, self->ps);
	EXPECT_TRUE(dax_is_zero(p + PUNCHED_PAGE * self->ps, self->ps));
	EXPECT_EQ(-1, dax_verify(p, PUNCHED_PAGE, self->seed, 0));
	EXPECT_EQ(-1, dax_verify(p + (PUNCHED_PAGE + 1) * self->ps,
				 npages - PUNCHED_PAGE - 1, self->seed,
				 PUNCHED_PAGE + 1));
	munmap(p, self->len);
	close(fd);
	unlink(path);
}

#define POISON_PAGE	5	/* not the first page of its PMD entry */
#define FAR_PAGE	64	/* not in the fault-around window of POISON_PAGE */

/*
 * Poison one page of a PMD entry with MADV_HWPOISON in a child that maps it,
 * which memory failure kills (SIGBUS, or SIGKILL where it cannot tell the
 * address): 0 once that is done, 1 if MADV_HWPOISON is not available (errno
 * in *@err), -1 on another failure (the child's wait status in *@err).  The
 * child maps the file with PTEs, and with @touch_first also the entry's
 * first page, through which v7.3 finds the processes to kill.
 */
static int poison_page(int fd, size_t len, size_t off, bool touch_first,
		       int *err)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		char *p = dax_map_file_at(fd, len, PROT_READ, MAP_SHARED, 0, false);

		signal(SIGBUS, SIG_DFL);
		if (p == MAP_FAILED)
			_exit(2);
		if (touch_first)
			dax_touch(p);
		dax_touch(p + off);
		/* Exit 3: the page table maps the entry's first page. */
		if (!touch_first && dax_pagemap(p) & DAX_PAGEMAP_PRESENT)
			_exit(3);
		if (madvise(p + off, dax_page_size(), MADV_HWPOISON)) {
			status = errno;
			_exit(status == EPERM || status == EINVAL ? 100 + status : 2);
		}
		/* Memory failure sends SIGBUS to the processes that map it. */
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) > 100) {
		*err = WEXITSTATUS(status) - 100;
		return 1;
	}
	*err = status;
	return WIFSIGNALED(status) &&
	       (WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGKILL) ? 0 : -1;
}

/*
 * Memory failure of a page of a PMD entry unmaps it and keeps the entry (and
 * v7.3 flags the entry's first page, not the poisoned one).  Fault-around of a
 * misaligned mapping, which maps the pages of PMD entries with PTEs, must
 * leave the poisoned page to the fault path (which checks the device's bad
 * blocks) however the page is flagged, while it still maps the pages of an
 * entry that is not poisoned.  Needs CAP_SYS_ADMIN and
 * CONFIG_MEMORY_FAILURE.  The poisoned block is freed with the file and
 * stays flagged until reboot, where a later file of the test filesystem
 * may get it: the test runs only with DAX_TEST_HWPOISON=1.
 */
TEST_F(pmd, hwpoison_not_mapped_around)
{
	size_t npages = self->pmd / self->ps;
	int err = 0, ret;
	char why[256];
	char *p;

	if (dax_env_long("DAX_TEST_HWPOISON", 0, 0, 1) != 1)
		SKIP(return, "set DAX_TEST_HWPOISON=1 to run it: it poisons a block until reboot");
	if (!dax_has_fault_around(why, sizeof(why)))
		SKIP(return, "%s", why);
	if (self->fault_around < 0)
		SKIP(return, "fault_around_bytes cannot be set (debugfs)");
	ASSERT_EQ(0, dax_fault_around_set(self->fault_around));
	/* PMD entries first, as in misaligned_uses_ptes. */
	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, p);
	touch(p, self->len, self->ps);
	munmap(p, self->len);

	ret = poison_page(self->fd, self->len, POISON_PAGE * self->ps, true, &err);
	if (ret == 1)
		SKIP(return, "MADV_HWPOISON: %s", strerror(err));
	ASSERT_EQ(0, ret)
		TH_LOG("memory failure did not kill the poisoning child (wait status %#x)",
		       err);

	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, p);
	/*
	 * The first fault into a page table maps one page: set up the two
	 * tables that the windows below are in with faults outside them.
	 */
	dax_touch(p + FAR_PAGE * self->ps);
	dax_touch(p + (npages + FAR_PAGE) * self->ps);
	/* The second PMD entry: fault-around maps the window around a fault. */
	dax_touch(p + (npages + POISON_PAGE - 1) * self->ps);
	EXPECT_TRUE(dax_pagemap(p + (npages + POISON_PAGE) * self->ps) &
		    DAX_PAGEMAP_PRESENT)
		TH_LOG("fault-around did not map the page next to a fault");
	/* The poisoned entry: the neighbour of the fault must stay unmapped. */
	dax_touch(p + (POISON_PAGE - 1) * self->ps);
	EXPECT_FALSE(dax_pagemap(p + POISON_PAGE * self->ps) & DAX_PAGEMAP_PRESENT)
		TH_LOG("fault-around mapped the poisoned page %d", POISON_PAGE);
	munmap(p, self->len);
}

/*
 * Memory failure of a page of a PMD entry must find the processes that map
 * that page, though they map no other page of the entry: a child that maps
 * the file with PTEs and has faulted in only that page, in the middle of
 * the entry (out of reach of fault-around from the entry's first page), is
 * killed when it poisons it.  Memory failure used to look for mappings of
 * the entry's first page only, so the child went on with the page mapped.
 * Needs CAP_SYS_ADMIN and CONFIG_MEMORY_FAILURE.  The poisoned block is
 * freed with the file and stays flagged until reboot, where a later file of
 * the test filesystem may get it: the test runs only with DAX_TEST_HWPOISON=1.
 */
TEST_F(pmd, hwpoison_kills_the_mapper_of_a_subpage)
{
	size_t page = self->pmd / self->ps / 2 + POISON_PAGE;
	long faults, max_faults = 2 * self->len / self->pmd;
	int err = 0, ret;
	char *p;

	if (dax_env_long("DAX_TEST_HWPOISON", 0, 0, 1) != 1)
		SKIP(return, "set DAX_TEST_HWPOISON=1 to run it: it poisons a block until reboot");
	/* PMD entries, or the folio is a page of its own: as aligned_uses_pmd. */
	p = dax_map_file_at(self->fd, self->len, PROT_READ, MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, p);
	faults = dax_minor_faults();
	touch(p, self->len, self->ps);
	faults = dax_minor_faults() - faults;
	munmap(p, self->len);
	ASSERT_GE(max_faults, faults)
		TH_LOG("%ld faults to read %zu MiB through an aligned mapping: no PMD entries",
		       faults, self->len >> 20);

	ret = poison_page(self->fd, self->len, page * self->ps, false, &err);
	if (ret == 1)
		SKIP(return, "MADV_HWPOISON: %s", strerror(err));
	ASSERT_FALSE(WIFEXITED(err) && WEXITSTATUS(err) == 3)
		TH_LOG("fault-around mapped the entry's first page along with page %zu",
		       page);
	EXPECT_EQ(0, ret)
		TH_LOG("poisoning page %zu of a PMD entry did not kill its mapper (status %#x)",
		       page, err);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
