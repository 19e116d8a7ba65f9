// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the fs-DAX selftests.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "../kselftest.h"
#include "dax_util.h"

#define PAT_HEAD_TAG	0xda50ULL
#define PAT_TAIL_TAG	0xda5eULL
#define FAULT_AROUND	"/sys/kernel/debug/fault_around_bytes"

size_t dax_page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = sysconf(_SC_PAGESIZE);
	return ps;
}

size_t dax_pmd_size(void)
{
	static size_t pmd;
	unsigned long val;
	FILE *f;

	if (pmd)
		return pmd;
	pmd = 2 * SZ_1M;
	f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (f) {
		if (fscanf(f, "%lu", &val) == 1 && val)
			pmd = val;
		fclose(f);
	}
	return pmd;
}

const char *dax_test_dir(void)
{
	const char *dir = getenv("DAX_TEST_DIR");

	return dir && *dir ? dir : NULL;
}

int dax_tmpfile(const char *dir, off_t size)
{
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/dax_selftest.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (ftruncate(fd, size)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int dax_dir_is_dax(const char *dir)
{
	struct statx stx;
	int fd, ret;

	fd = dax_tmpfile(dir, dax_page_size());
	if (fd < 0)
		return fd;
	ret = statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx);
	if (ret)
		ret = -errno;
	else
		ret = !!(stx.stx_attributes & STATX_ATTR_DAX);
	close(fd);
	return ret;
}

const char *dax_check_dir(char *why, size_t len)
{
	const char *dir = dax_test_dir();
	int ret;

	if (!dir) {
		snprintf(why, len, "DAX_TEST_DIR not set");
		return NULL;
	}
	ret = dax_dir_is_dax(dir);
	if (ret < 0) {
		snprintf(why, len, "cannot test a file in %s: %s", dir, strerror(-ret));
		return NULL;
	}
	if (!ret) {
		snprintf(why, len, "files in %s are not DAX (no STATX_ATTR_DAX)", dir);
		return NULL;
	}
	return dir;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t pattern_tag(uint64_t tag, uint64_t seed, uint64_t idx)
{
	return tag << 48 | (seed & 0xffff) << 32 | (idx & 0xffffffff);
}

uint64_t dax_pattern_word(uint64_t seed, uint64_t idx, size_t word)
{
	if (word == 0)
		return pattern_tag(PAT_HEAD_TAG, seed, idx);
	if (word == dax_page_size() / 8 - 1)
		return pattern_tag(PAT_TAIL_TAG, seed, idx);
	return mix64(seed ^ mix64(idx << 20 | word));
}

void dax_fill(void *buf, size_t npages, uint64_t seed, uint64_t first_idx)
{
	size_t nwords = dax_page_size() / 8;
	uint64_t *p = buf;
	size_t i, w;

	for (i = 0; i < npages; i++)
		for (w = 0; w < nwords; w++)
			*p++ = dax_pattern_word(seed, first_idx + i, w);
}

long dax_verify(const void *buf, size_t npages, uint64_t seed,
		uint64_t first_idx)
{
	size_t nwords = dax_page_size() / 8;
	const uint64_t *p = buf;
	size_t i, w;

	for (i = 0; i < npages; i++)
		for (w = 0; w < nwords; w++)
			if (*p++ != dax_pattern_word(seed, first_idx + i, w))
				return i;
	return -1;
}

long dax_pattern_decode(uint64_t word, uint64_t seed, bool last)
{
	uint64_t tag = last ? PAT_TAIL_TAG : PAT_HEAD_TAG;

	if (!word)
		return DAX_PAT_ZERO;
	if ((word & ~0xffffffffULL) != pattern_tag(tag, seed, 0))
		return DAX_PAT_BAD;
	return word & 0xffffffff;
}

bool dax_is_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

size_t *dax_page_order(size_t npages, unsigned int seed)
{
	size_t *order = malloc(npages * sizeof(*order)), i, j, t;

	if (!order)
		return NULL;
	for (i = 0; i < npages; i++)
		order[i] = i;
	/* Fisher-Yates */
	for (i = npages - 1; i > 0; i--) {
		j = rand_r(&seed) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	return order;
}

int dax_write_pattern(int fd, uint64_t seed, size_t first, size_t npages)
{
	size_t ps = dax_page_size(), chunk = SZ_1M / ps, n;
	ssize_t ret;
	void *buf;
	int err = 0;

	buf = malloc(chunk * ps);
	if (!buf)
		return -ENOMEM;
	while (npages) {
		n = npages < chunk ? npages : chunk;
		dax_fill(buf, n, seed, first);
		ret = pwrite(fd, buf, n * ps, first * ps);
		if (ret != (ssize_t)(n * ps)) {
			err = ret < 0 ? -errno : -EIO;
			break;
		}
		first += n;
		npages -= n;
	}
	free(buf);
	return err;
}

void *dax_map_file_at(int fd, size_t len, int prot, int flags, off_t offset,
		  bool pmd_aligned)
{
	/*
	 * Same offset in a PMD as the file offset, or 64 KiB further: then no
	 * PMD can be used, but 64 KiB fault-around windows (the default)
	 * still line up with the file.
	 */
	return dax_map_file_colour(fd, len, prot, flags, offset,
				   pmd_aligned ? 0 : DAX_PTE_COLOUR);
}

void *dax_map_file_colour(int fd, size_t len, int prot, int flags,
			  off_t offset, size_t colour)
{
	size_t pmd = dax_pmd_size(), ps = dax_page_size();
	size_t plen = (len + ps - 1) & ~(ps - 1);
	/* Room for the PMD alignment, the offset in a PMD and the colour. */
	size_t rlen = plen + 2 * pmd + colour;
	uintptr_t res, addr, end;
	void *p;
	int err;

	p = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return MAP_FAILED;
	res = (uintptr_t)p;
	addr = ((res + pmd - 1) & ~(pmd - 1)) + ((size_t)offset & (pmd - 1)) +
	       colour;

	p = mmap((void *)addr, len, prot, flags | MAP_FIXED, fd, offset);
	if (p == MAP_FAILED) {
		err = errno;
		munmap((void *)res, rlen);
		errno = err;
		return MAP_FAILED;
	}
	end = addr + plen;
	if (addr > res)
		munmap((void *)res, addr - res);
	if (end < res + rlen)
		munmap((void *)end, res + rlen - end);
	return p;
}

long dax_minor_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_minflt;
}

static __thread sigjmp_buf probe_env;
static __thread sig_atomic_t probe_armed;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe_sigbus(int sig, siginfo_t *si, void *uc)
{
	/*
	 * Memory failure's notice to a process that maps a page going away
	 * (BUS_MCEERR_AO, a device's removal too): no access of ours faulted.
	 */
	if (si->si_code == BUS_MCEERR_AO)
		return;
	if (!__atomic_load_n(&probe_armed, __ATOMIC_RELAXED)) {
		/* Not ours: the access is retried and kills us. */
		signal(sig, SIG_DFL);
		return;
	}
	__atomic_store_n(&probe_armed, 0, __ATOMIC_RELAXED);
	siglongjmp(probe_env, 1);
}

static void probe_install(void)
{
	struct sigaction sa = {
		.sa_sigaction = probe_sigbus,
		/* SIGBUS stays unblocked: no signal mask to restore. */
		.sa_flags = SA_NODEFER | SA_SIGINFO,
	};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

int dax_probe_read(const void *addr, uint64_t *val)
{
	uint64_t v;

	pthread_once(&probe_once, probe_install);
	if (sigsetjmp(probe_env, 0))
		return -EFAULT;
	__atomic_store_n(&probe_armed, 1, __ATOMIC_SEQ_CST);
	v = __atomic_load_n((const uint64_t *)addr, __ATOMIC_RELAXED);
	__atomic_store_n(&probe_armed, 0, __ATOMIC_SEQ_CST);
	if (val)
		*val = v;
	return 0;
}

uint64_t dax_pagemap(const void *addr)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent),
		  (uintptr_t)addr / dax_page_size() * sizeof(ent)) != sizeof(ent))
		ent = 0;
	close(fd);
	return ent;
}

long dax_smaps_field_kb(const void *addr, const char *field)
{
	unsigned long start, end;
	size_t flen = strlen(field);
	bool in_vma = false;
	char line[512];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			if (in_vma)
				break;
			in_vma = start == (uintptr_t)addr;
			continue;
		}
		if (in_vma && !strncmp(line, field, flen)) {
			kb = strtol(line + flen, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

long dax_fault_around_get(void)
{
	long val = -1;
	FILE *f;

	f = fopen(FAULT_AROUND, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

int dax_fault_around_set(long bytes)
{
	int fd, ret = 0;

	fd = open(FAULT_AROUND, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (dprintf(fd, "%ld\n", bytes) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * The tests of DAX fault-around fail on a kernel without it (v7.3 and older,
 * which CI systems run the current selftests on), so they ask this first: the
 * fs_dax:dax_fault_around tracepoint comes with the feature.
 * DAX_FAULT_AROUND=1 runs them anyway (to show that they fail there),
 * DAX_FAULT_AROUND=0 skips them.
 */
bool dax_has_fault_around(char *why, size_t len)
{
	static const char *const tracefs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing", NULL,
	};
	const char *env = getenv("DAX_FAULT_AROUND");
	bool events = false;
	char path[160];
	size_t i;

	if (env && *env) {
		if (strcmp(env, "0"))
			return true;
		snprintf(why, len, "DAX_FAULT_AROUND=0");
		return false;
	}
	for (i = 0; tracefs[i]; i++) {
		snprintf(path, sizeof(path), "%s/events/fs_dax", tracefs[i]);
		if (access(path, F_OK))
			continue;
		events = true;
		strncat(path, "/dax_fault_around", sizeof(path) - strlen(path) - 1);
		if (!access(path, F_OK))
			return true;
	}
	snprintf(why, len, "%s (DAX_FAULT_AROUND=1 runs it)", events ?
		 "the kernel has no DAX fault-around: no fs_dax:dax_fault_around event" :
		 "cannot tell whether the kernel has DAX fault-around: no fs_dax events");
	return false;
}

long dax_env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	long val;

	if (!s || !*s)
		return def;
	val = strtol(s, NULL, 0);
	return val < min ? min : val > max ? max : val;
}

unsigned long dax_taint(void)
{
	unsigned long taint = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (f) {
		if (fscanf(f, "%lu", &taint) != 1)
			taint = 0;
		fclose(f);
	}
	return taint;
}

/* Kernel log lines that report a problem (see dax_kwatch in dax_util.h). */
static const char *const dax_complaints[] = {
	"WARNING:", "BUG:", "Oops", "kernel BUG", "UBSAN:", "INFO: task ",
	"detected stall",
};

void dax_kwatch_start(struct dax_kwatch *w)
{
	w->started = true;
	w->said[0] = '\0';
	w->taint = dax_taint();
	w->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (w->kmsg >= 0 && lseek(w->kmsg, 0, SEEK_END) < 0) {
		close(w->kmsg);
		w->kmsg = -1;
	}
}

/* Whether kernel log record @rec ("prio,seq,time,flags;text") complains. */
static bool dax_kmsg_complains(const char *rec)
{
	const char *text = strchr(rec, ';');
	size_t i;

	if (!text)
		return false;
	for (i = 0; i < ARRAY_SIZE(dax_complaints); i++)
		if (strstr(text, dax_complaints[i]))
			return true;
	return false;
}

bool dax_kwatch_complained(struct dax_kwatch *w)
{
	unsigned long taint;
	char rec[8192];
	ssize_t n;

	if (w->said[0])
		return true;
	while (w->kmsg >= 0) {
		n = read(w->kmsg, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records lost to newer ones: read on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		rec[strcspn(rec, "\n")] = '\0';
		if (dax_kmsg_complains(rec)) {
			snprintf(w->said, sizeof(w->said), "%s",
				 strchr(rec, ';') + 1);
			return true;
		}
	}
	taint = dax_taint() & ~w->taint & DAX_TAINT_BAD;
	if (taint)
		snprintf(w->said, sizeof(w->said), "new taint flags %#lx", taint);
	return taint;
}

void dax_kwatch_stop(struct dax_kwatch *w)
{
	if (w->started && w->kmsg >= 0)
		close(w->kmsg);
	w->started = false;
}

double dax_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bool dax_wait_exit(pid_t pid, double secs, int *status)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	double end = dax_now() + secs;

	do {
		if (waitpid(pid, status, WNOHANG) == pid)
			return true;
		nanosleep(&ts, NULL);
	} while (dax_now() < end);
	return waitpid(pid, status, WNOHANG) == pid;
}

const char *dax_tracefs_dir(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing", NULL,
	};
	char path[128];
	size_t i;

	for (i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/events/fs_dax", dirs[i]);
		if (!access(path, F_OK))
			return dirs[i];
	}
	return NULL;
}

static int tracefs_write(const char *dir, const char *file, const char *val,
			 int flags)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | flags);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -EIO;
	close(fd);
	return ret;
}

int dax_tracefs_write(const char *dir, const char *file, const char *val)
{
	return tracefs_write(dir, file, val, O_TRUNC);
}

int dax_tracefs_append(const char *dir, const char *file, const char *val)
{
	return tracefs_write(dir, file, val, O_APPEND);
}

#define MAX_EXTENTS	32

int dax_extents_pmd_aligned(int fd, size_t len, size_t pmd)
{
	struct fiemap_extent *fe;
	struct fiemap *fm;
	size_t off, i;
	int ret;

	fm = calloc(1, sizeof(*fm) + MAX_EXTENTS * sizeof(*fe));
	if (!fm)
		return -ENOMEM;
	fm->fm_length = len;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = MAX_EXTENTS;
	ret = ioctl(fd, FS_IOC_FIEMAP, fm) ? -errno : 1;

	for (off = 0; ret > 0 && off < len; off += pmd) {
		for (i = 0; i < fm->fm_mapped_extents; i++) {
			fe = &fm->fm_extents[i];
			if (fe->fe_logical <= off && fe->fe_logical + fe->fe_length >= off + pmd)
				break;
		}
		if (i == fm->fm_mapped_extents ||
		    (fe->fe_flags & FIEMAP_EXTENT_UNWRITTEN) ||
		    (fe->fe_physical + off - fe->fe_logical) % pmd)
			ret = 0;
	}
	free(fm);
	return ret;
}

int dax_page_addresses(int fd, size_t first, size_t npages, uint64_t *addr)
{
	size_t ps = dax_page_size(), i, j;
	struct fiemap_extent *fe;
	struct fiemap *fm;
	uint64_t off;
	int ret = 0;

	fm = calloc(1, sizeof(*fm) + (npages + 1) * sizeof(*fe));
	if (!fm)
		return -ENOMEM;
	fm->fm_start = first * ps;
	fm->fm_length = npages * ps;
	/* No FIEMAP_FLAG_SYNC: it would write back (flush) dirty DAX entries. */
	fm->fm_extent_count = npages + 1;
	if (ioctl(fd, FS_IOC_FIEMAP, fm))
		ret = -errno;
	for (i = 0; !ret && i < npages; i++) {
		off = (first + i) * ps;
		addr[i] = 0;
		for (j = 0; j < fm->fm_mapped_extents; j++) {
			fe = &fm->fm_extents[j];
			if (fe->fe_logical <= off && off < fe->fe_logical + fe->fe_length) {
				addr[i] = fe->fe_physical + off - fe->fe_logical;
				break;
			}
		}
	}
	free(fm);
	return ret;
}

/* How many of the @n addresses in @new are in @old. */
static long count_reused(const uint64_t *old, const uint64_t *new, size_t n)
{
	long reused = 0;
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; new[i] && j < n; j++) {
			if (new[i] == old[j]) {
				reused++;
				break;
			}
		}
	}
	return reused;
}

long dax_unwritten_over_old_data(int fd, uint64_t seed, size_t first,
				 size_t npages)
{
	size_t ps = dax_page_size();
	off_t off = first * ps, len = npages * ps;
	uint64_t *old, *new;
	long ret;

	old = calloc(2 * npages, sizeof(*old));
	if (!old)
		return -ENOMEM;
	new = old + npages;
	ret = dax_write_pattern(fd, seed, first, npages);
	if (!ret && fsync(fd))
		ret = -errno;
	if (!ret)
		ret = dax_page_addresses(fd, first, npages, old);
	/* ext4 turns the extents unwritten in place, data and all. */
	if (!ret && fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len))
		ret = -errno;
	if (!ret)
		ret = dax_page_addresses(fd, first, npages, new);
	if (!ret && count_reused(old, new, npages))
		goto out;
	/*
	 * xfs frees and allocates again, and reuses a freed block only once
	 * the transaction that freed it is on disk: commit, and allocate next
	 * to the neighbours again, where the old blocks are.
	 */
	if (!ret && syncfs(fd))
		ret = -errno;
	if (!ret && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len))
		ret = -errno;
	if (!ret && syncfs(fd))
		ret = -errno;
	if (!ret && fallocate(fd, FALLOC_FL_KEEP_SIZE, off, len))
		ret = -errno;
	if (!ret)
		ret = dax_page_addresses(fd, first, npages, new);
out:
	if (!ret)
		ret = count_reused(old, new, npages);
	free(old);
	return ret;
}

/*
 * The global state that tests change: fault_around_bytes and the tracing
 * switches of the events they enable.  Saved when a test program starts,
 * given back when it ends, also after a test that was killed (a timeout)
 * before its teardown could do it.
 */
static const char *const dax_events[] = {
	"tracing_on",
	"events/fs_dax/dax_writeback_one/enable",
	"events/fs_dax/dax_pte_fault_done/enable",
	"events/fs_dax/dax_map_pages/enable",
};

static long saved_fault_around = -1;
static int saved_tracing[ARRAY_SIZE(dax_events)];
static pid_t saved_by;

static int tracefs_read_int(const char *dir, const char *file)
{
	char path[256];
	int val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

void dax_state_save(void)
{
	const char *dir = dax_tracefs_dir();
	size_t i;

	saved_by = getpid();
	saved_fault_around = dax_fault_around_get();
	for (i = 0; i < ARRAY_SIZE(dax_events); i++)
		saved_tracing[i] = dir ? tracefs_read_int(dir, dax_events[i]) : -1;
}

void dax_state_restore(void)
{
	const char *dir = dax_tracefs_dir();
	char val[16];
	size_t i;

	/* Not from a test's child that exit()s (forked after the save). */
	if (getpid() != saved_by)
		return;
	if (saved_fault_around > 0 && dax_fault_around_get() != saved_fault_around)
		dax_fault_around_set(saved_fault_around);
	for (i = 0; dir && i < ARRAY_SIZE(dax_events); i++) {
		if (saved_tracing[i] < 0 ||
		    tracefs_read_int(dir, dax_events[i]) == saved_tracing[i])
			continue;
		snprintf(val, sizeof(val), "%d", saved_tracing[i]);
		dax_tracefs_write(dir, dax_events[i], val);
	}
}
