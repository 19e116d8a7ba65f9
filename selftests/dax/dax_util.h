/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the fs-DAX selftests.
 *
 * The tests run on a directory of a filesystem mounted with DAX (ext4 or
 * xfs with -o dax, on a pmem device), named by the DAX_TEST_DIR environment
 * variable.  Without it, or when files created there are not in DAX mode,
 * the tests skip.
 */
#ifndef __DAX_UTIL_H
#define __DAX_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* uapi (KHDR_INCLUDES): STATX_ATTR_DAX, MAP_SYNC, FALLOC_FL_*. */
#include <linux/falloc.h>
#include <linux/mman.h>
#include <linux/stat.h>

#define SZ_1M			(1024UL * 1024)
/* Where dax_map_file_at() puts a mapping that must not use PMDs. */
#define DAX_PTE_COLOUR		(64UL * 1024)

/* Value returned by dax_pattern_decode() for a zero word. */
#define DAX_PAT_ZERO		(-1L)
/* Value returned by dax_pattern_decode() for a word of no page. */
#define DAX_PAT_BAD		(-2L)

size_t dax_page_size(void);
size_t dax_pmd_size(void);

/* DAX_TEST_DIR, or NULL if unset. */
const char *dax_test_dir(void);
/* 1 if files created in @dir are DAX, 0 if not, -errno on error. */
int dax_dir_is_dax(const char *dir);
/*
 * The test directory if it is usable; otherwise NULL with the reason to skip
 * in @why.
 */
const char *dax_check_dir(char *why, size_t len);
/* An unlinked file of @size bytes in @dir: fd, or -errno. */
int dax_tmpfile(const char *dir, off_t size);

/*
 * Page patterns.  Page @idx written with seed @seed holds 64-bit words that
 * depend on (seed, idx, word); the first and the last word of the page also
 * encode the page index, so that a single word tells which page it belongs to.
 */
uint64_t dax_pattern_word(uint64_t seed, uint64_t idx, size_t word);
void dax_fill(void *buf, size_t npages, uint64_t seed, uint64_t first_idx);
/* -1 if all pages hold their pattern, else the number of the first bad page */
long dax_verify(const void *buf, size_t npages, uint64_t seed,
		uint64_t first_idx);
/*
 * Page index of a first (@last false) or last (@last true) word of a page
 * pattern, DAX_PAT_ZERO for zero, DAX_PAT_BAD for anything else.
 */
long dax_pattern_decode(uint64_t word, uint64_t seed, bool last);
bool dax_is_zero(const void *buf, size_t len);
/* pwrite() the pattern of pages [first, first + npages): 0 or -errno */
int dax_write_pattern(int fd, uint64_t seed, size_t first, size_t npages);
/* Page indices 0 to @npages - 1 in a random order of @seed, or NULL */
size_t *dax_page_order(size_t npages, unsigned int seed);

/*
 * mmap() @len bytes of @fd at @offset at an address chosen so that the
 * mapping can use PMDs (@pmd_aligned: address and file offset have the same
 * offset in a PMD) or cannot (address DAX_PTE_COLOUR further).  Returns
 * MAP_FAILED with errno set on failure.
 */
void *dax_map_file_at(int fd, size_t len, int prot, int flags, off_t offset,
		  bool pmd_aligned);
/*
 * The same, at an address @colour bytes (below a PMD) past the offset of
 * @offset in a PMD: fault-around windows, which line up with page tables,
 * then start @colour bytes into the file's PMD ranges.
 */
void *dax_map_file_colour(int fd, size_t len, int prot, int flags,
			  off_t offset, size_t colour);

/* A mapping of @len bytes of @fd from its start that cannot use PMDs. */
static inline char *dax_map_pte(int fd, size_t len, int prot, int flags)
{
	return dax_map_file_at(fd, len, prot, flags, 0, false);
}

/*
 * 1 if each PMD-sized block of the first @len bytes of @fd lies in one
 * written extent at a PMD-aligned disk address (FIEMAP), 0 if not, or -errno.
 */
int dax_extents_pmd_aligned(int fd, size_t len, size_t pmd);

/*
 * The disk addresses (FIEMAP) of pages [first, first + npages) of @fd into
 * @addr, 0 for a page in no extent: 0 or -errno.  It leaves dirty entries
 * dirty (DAX has no delayed allocation to sync first).
 */
int dax_page_addresses(int fd, size_t first, size_t npages, uint64_t *addr);

/*
 * Make pages [first, first + npages) of @fd unwritten extents whose blocks
 * hold data: write them with pattern @seed, then zero the range with
 * FALLOC_FL_ZERO_RANGE, or punch it and allocate it again where that gave
 * new blocks.  Returns how many of the pages kept or got back a block of
 * the old data, which a read must not see, or -errno.
 */
long dax_unwritten_over_old_data(int fd, uint64_t seed, size_t first,
				 size_t npages);

long dax_minor_faults(void);

/* Read a byte through a mapping (faulting it in) without volatile. */
static inline char dax_touch(const void *addr)
{
	return __atomic_load_n((const char *)addr, __ATOMIC_RELAXED);
}

/* Read 8 bytes at @addr: 0, or -EFAULT if that raised SIGBUS. */
int dax_probe_read(const void *addr, uint64_t *val);

/*
 * The /proc/self/pagemap entry of the page at @addr, 0 if it cannot be
 * read: bit 63 present, bits 0-54 the PFN (0 without CAP_SYS_ADMIN).
 */
#define DAX_PAGEMAP_PRESENT	(1ULL << 63)
#define DAX_PAGEMAP_PFN		((1ULL << 55) - 1)
uint64_t dax_pagemap(const void *addr);

/* Size in kB of smaps @field ("Rss:") of the mapping at @addr, or -1. */
long dax_smaps_field_kb(const void *addr, const char *field);

/* /sys/kernel/debug/fault_around_bytes: -1 if absent. */
long dax_fault_around_get(void);
int dax_fault_around_set(long bytes);
/* Whether the kernel has DAX fault-around (else the reason in @why). */
bool dax_has_fault_around(char *why, size_t len);

/*
 * Kernel taint flags that mean the kernel complained: a bad page state (B),
 * an oops (D), a WARN (W) or a soft lockup (L).
 */
#define DAX_TAINT_BAD_PAGE	(1UL << 5)
#define DAX_TAINT_DIE		(1UL << 7)
#define DAX_TAINT_WARN		(1UL << 9)
#define DAX_TAINT_SOFTLOCKUP	(1UL << 14)
#define DAX_TAINT_BAD		(DAX_TAINT_BAD_PAGE | DAX_TAINT_DIE | \
				 DAX_TAINT_WARN | DAX_TAINT_SOFTLOCKUP)
/* /proc/sys/kernel/tainted, 0 if it cannot be read. */
unsigned long dax_taint(void);

/*
 * A watch on what the kernel complains of from a point on, so that a test
 * fails on a kernel warning by itself, wherever it runs: the kernel log
 * (/dev/kmsg, read from its end at the start) for a warning, a BUG, an oops,
 * a hung task or an RCU stall, and the taint flags for what the log may have
 * lost.  The log shows a warning also after an earlier one of the same boot
 * has set its taint flag; where it cannot be read (not root), only a new
 * taint flag shows.  A WARN_ON_ONCE() that fired earlier in the boot stays
 * silent.
 */
struct dax_kwatch {
	bool started;
	int kmsg;		/* -1 if /dev/kmsg cannot be read */
	unsigned long taint;	/* at the start */
	char said[160];		/* the first complaint seen */
};
void dax_kwatch_start(struct dax_kwatch *w);
/* Whether the kernel complained since the start; what it said in w->said. */
bool dax_kwatch_complained(struct dax_kwatch *w);
/* Close what start opened (a test's process that ends closes it too). */
void dax_kwatch_stop(struct dax_kwatch *w);

/* The tracefs directory that has the fs_dax events, or NULL. */
const char *dax_tracefs_dir(void);
/* Write @val to @file of tracefs directory @dir: 0 or -errno. */
int dax_tracefs_write(const char *dir, const char *file, const char *val);
/* Append @val to it instead (kprobe_events: a write replaces them all). */
int dax_tracefs_append(const char *dir, const char *file, const char *val);

/* Value of an environment variable clamped to [min, max], or @def. */
long dax_env_long(const char *name, long def, long min, long max);

/* CLOCK_MONOTONIC in seconds. */
double dax_now(void);

/*
 * Wait up to @secs for child @pid to exit: true, with its wait status in
 * *@status, if it did, false if it is still running.
 */
bool dax_wait_exit(pid_t pid, double secs, int *status);

/*
 * DAX_RACE_SECONDS sets how long each race test runs, 1 to
 * DAX_RACE_SECONDS_MAX; their TEST_F_TIMEOUT() is DAX_RACE_TIMEOUT, and the
 * three races of dax_race_test at the maximum fit in the target's timeout
 * (settings, 300 s).
 */
#define DAX_RACE_SECONDS_MAX	60
#define DAX_RACE_TIMEOUT	(DAX_RACE_SECONDS_MAX + 90)

static inline long dax_race_seconds(long def)
{
	return dax_env_long("DAX_RACE_SECONDS", def, 1, DAX_RACE_SECONDS_MAX);
}

/*
 * Save the global state that tests change (fault_around_bytes, the tracing
 * switches), and give it back (only in the process that saved it):
 * dax_harness_run() does both around a run.
 */
void dax_state_save(void);
void dax_state_restore(void);

#ifdef __KSELFTEST_HARNESS_H
/*
 * Start @w, and log what it cannot see: without the kernel log, a complaint
 * whose taint flag an earlier one of the boot set already.
 */
#define DAX_KWATCH_START(w) do {						\
	dax_kwatch_start(w);							\
	if ((w)->kmsg < 0 && ((w)->taint & DAX_TAINT_BAD))			\
		TH_LOG("no /dev/kmsg, and tainted before this test (%#lx): %s",	\
		       (w)->taint & DAX_TAINT_BAD,				\
		       "a new warning of that kind goes unseen");		\
} while (0)

/*
 * Fail the test if the kernel complained since DAX_KWATCH_START(@w): a kernel
 * that warned is broken even where the data looked right, and a kselftest
 * run without a harness that reads the kernel log must see it.
 */
#define DAX_ASSERT_NO_COMPLAINT(w) do {					\
	bool __complained = dax_kwatch_complained(w);				\
										\
	ASSERT_FALSE(__complained)						\
		TH_LOG("the kernel complained: \"%s\" (see dmesg)", (w)->said); \
} while (0)

/*
 * Run the tests, and give back the global state they changed when the
 * program exits (test_harness_run() ends with exit()): a test that the
 * harness killed on its timeout never reached its teardown.
 */
static inline int dax_harness_run(int argc, char **argv)
{
	dax_state_save();
	atexit(dax_state_restore);
	return test_harness_run(argc, argv);
}

/*
 * main() of the tests that all need a DAX directory: skip the whole
 * program (exit code KSFT_SKIP) when there is none.
 */
static inline int dax_harness_main(int argc, char **argv)
{
	char why[256];
	bool list = argc > 1 && !strcmp(argv[1], "-l");

	if (!list && !dax_check_dir(why, sizeof(why)))
		ksft_exit_skip("%s\n", why);
	return dax_harness_run(argc, argv);
}
#endif

#endif /* __DAX_UTIL_H */
