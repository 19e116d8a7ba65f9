// SPDX-License-Identifier: GPL-2.0
/*
 * Holes and unwritten extents of an fs-DAX file, read through a mapping while
 * write(2) fills them.
 *
 * A read fault on a hole or an unwritten extent maps the zero page.  write(2)
 * into the range allocates a block (hole) or converts the extent (unwritten)
 * and has to remove the zero page from every mapping, or the mapping keeps
 * reading zeros where read(2) reads the data.  The unwritten extents here lie
 * on blocks that still hold the file's old data (a zero range keeps them, or
 * a hole punch and allocation hands them out again), which a read must never
 * see: the block is zeroed before it is mapped.
 *
 * Usage: dax_unwritten COMMAND ARGS
 *
 *   holes-read-zero FILE shared|private|sync
 *	Pages 0-3 of FILE a hole, 4-7 unwritten over old data, 8-11 unwritten
 *	past EOF, then EOF at 12 pages: the mapping (MAP_SHARED, MAP_PRIVATE or
 *	MAP_SHARED_VALIDATE|MAP_SYNC) reads zeros; then write(2) of page 2, 6
 *	and 10: the mapping shows the data, and the next page still zeros.
 *   race-holes SECONDS FILE
 *	A child punches 16-page ranges of a 4 MiB file and writes them again
 *	page by page while this process zaps its mapping of the file and reads
 *	every page again: each page reads as zero or as its data.  A read fault
 *	that maps a block just allocated by the write must not have its entry
 *	torn down under the mapping (the kernel warns: see dmesg).
 *   race-unwritten SECONDS FILE
 *	A child writes the 4 MiB file, zeroes it with FALLOC_FL_ZERO_RANGE
 *	(unwritten extents over the old data) and writes it again page by page;
 *	this process faults in each page while it is written, after a delay
 *	that sweeps the write: it must read zero or the new data, never the
 *	old data.
 *
 * Nothing is printed on success; each problem is one line on stdout and exit
 * 1.  Progress goes to stderr.  Exit 2 is a setup error, 3 that the mapping
 * flags are not supported.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif

#define RACE_SIZE	(4UL << 20)
#define PTE_COLOUR	(64UL << 10)
#define HEAD_TAG	0xda50ULL
#define TAIL_TAG	0xda5eULL
#define PAT_ZERO	(-1L)
#define PAT_BAD		(-2L)

static size_t ps;
static int failures;

#define fail(...) do { printf(__VA_ARGS__); putchar('\n'); failures++; } while (0)

static void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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

static uint64_t tag(uint64_t t, uint64_t seed, uint64_t idx)
{
	return t << 48 | (seed & 0xffff) << 32 | (idx & 0xffffffff);
}

/*
 * Page @idx with seed @seed: its first and last words name the page, the
 * others are pseudo-random.
 */
static uint64_t pattern_word(uint64_t seed, uint64_t idx, size_t word)
{
	if (word == 0)
		return tag(HEAD_TAG, seed, idx);
	if (word == ps / 8 - 1)
		return tag(TAIL_TAG, seed, idx);
	return mix64(seed ^ mix64(idx << 20 | word));
}

static void fill(void *buf, size_t npages, uint64_t seed, uint64_t first)
{
	uint64_t *p = buf;
	size_t i, w;

	for (i = 0; i < npages; i++)
		for (w = 0; w < ps / 8; w++)
			*p++ = pattern_word(seed, first + i, w);
}

/* Whether @npages pages at @buf hold pattern @seed from page @first. */
static bool verify(const void *buf, size_t npages, uint64_t seed, uint64_t first)
{
	const uint64_t *p = buf;
	size_t i, w;

	for (i = 0; i < npages; i++)
		for (w = 0; w < ps / 8; w++)
			if (*p++ != pattern_word(seed, first + i, w))
				return false;
	return true;
}

/* The page a first (@last false) or last word names, PAT_ZERO or PAT_BAD. */
static long decode(uint64_t word, uint64_t seed, bool last)
{
	if (!word)
		return PAT_ZERO;
	if ((word & ~0xffffffffULL) != tag(last ? TAIL_TAG : HEAD_TAG, seed, 0))
		return PAT_BAD;
	return word & 0xffffffff;
}

static bool is_zero(const char *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

static void write_pattern(int fd, uint64_t seed, size_t first, size_t npages)
{
	char *buf = malloc(npages * ps);

	if (!buf)
		die("malloc");
	fill(buf, npages, seed, first);
	if (pwrite(fd, buf, npages * ps, first * ps) != (ssize_t)(npages * ps))
		die("pwrite");
	free(buf);
}

/* A mapping of @fd that cannot use PMD entries: one PTE per page. */
static char *map_pte(int fd, size_t len, int flags)
{
	size_t pmd = 2UL << 20, rlen = len + 2 * pmd + PTE_COLOUR;
	uintptr_t res, addr;
	char *p;
	int err;

	p = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	res = (uintptr_t)p;
	addr = ((res + pmd - 1) & ~(pmd - 1)) + PTE_COLOUR;
	p = mmap((void *)addr, len, PROT_READ, flags | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		munmap((void *)res, rlen);
		errno = err;
		return p;
	}
	munmap((void *)res, addr - res);
	munmap((void *)(addr + len), res + rlen - addr - len);
	return p;
}

/* The disk addresses (FIEMAP) of pages [first, first + n), 0 for none. */
static void page_addresses(int fd, size_t first, size_t n, uint64_t *addr)
{
	struct fiemap_extent *fe;
	struct fiemap *fm;
	uint64_t off;
	size_t i, j;

	fm = calloc(1, sizeof(*fm) + (n + 1) * sizeof(*fe));
	if (!fm)
		die("calloc");
	fm->fm_start = first * ps;
	fm->fm_length = n * ps;
	fm->fm_extent_count = n + 1;
	if (ioctl(fd, FS_IOC_FIEMAP, fm))
		die("FIEMAP");
	for (i = 0; i < n; i++) {
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
}

static long count_reused(const uint64_t *old, const uint64_t *new, size_t n)
{
	long reused = 0;
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; new[i] && j < n; j++)
			if (new[i] == old[j]) {
				reused++;
				break;
			}
	return reused;
}

/*
 * Make pages [first, first + n) unwritten extents over blocks that hold the
 * file's data (pattern @seed): a zero range keeps the blocks (ext4); where
 * it gave new ones, punch, commit and allocate again, which hands the freed
 * blocks out again (xfs reuses a block once the transaction that freed it is
 * on disk).  Returns how many pages are on blocks of the old data.
 */
static long unwritten_over_old_data(int fd, uint64_t seed, size_t first, size_t n)
{
	off_t off = first * ps, len = n * ps;
	uint64_t old[64], new[64];

	if (n > 64)
		return 0;
	write_pattern(fd, seed, first, n);
	if (fsync(fd))
		die("fsync");
	page_addresses(fd, first, n, old);
	if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len))
		die("zero range");
	page_addresses(fd, first, n, new);
	if (count_reused(old, new, n))
		return count_reused(old, new, n);
	if (syncfs(fd) ||
	    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len) ||
	    syncfs(fd) || fallocate(fd, FALLOC_FL_KEEP_SIZE, off, len))
		die("punch and allocate");
	page_addresses(fd, first, n, new);
	return count_reused(old, new, n);
}

static int holes_read_zero(const char *path, const char *how)
{
	static const char *const kind[] = {
		"a hole", "an unwritten extent", "an unwritten extent allocated past EOF",
	};
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	int fd, flags;
	long reused;
	size_t i;
	char *p;

	if (!strcmp(how, "shared"))
		flags = MAP_SHARED;
	else if (!strcmp(how, "private"))
		flags = MAP_PRIVATE;
	else if (!strcmp(how, "sync"))
		flags = MAP_SHARED_VALIDATE | MAP_SYNC;
	else
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path);
	/* The pages before are written too: xfs allocates next to them. */
	write_pattern(fd, ~seed, 0, 4);
	reused = unwritten_over_old_data(fd, ~seed, 4, 4);
	fprintf(stderr, "%s: %ld of 4 unwritten pages are on blocks of the old data\n",
		how, reused);
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4 * ps) ||
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, 8 * ps, 4 * ps) ||
	    ftruncate(fd, 12 * ps))
		die("punch, allocate, truncate");

	p = map_pte(fd, 12 * ps, flags);
	if (p == MAP_FAILED && errno == EOPNOTSUPP) {
		fprintf(stderr, "%s: mmap: %s\n", how, strerror(errno));
		close(fd);
		unlink(path);
		return 3;
	}
	if (p == MAP_FAILED)
		die("mmap");
	for (i = 0; i < 12; i++)
		if (!is_zero(p + i * ps, ps))
			fail("%s mapping: page %zu, %s, does not read zeros", how, i,
			     kind[i / 4]);

	/* Data written into each kind of hole replaces the zeros mapped there. */
	for (i = 2; i < 12; i += 4) {
		write_pattern(fd, seed, i, 1);
		if (!verify(p + i * ps, 1, seed, i))
			fail("%s mapping: page %zu, %s: the mapping does not show what write(2) wrote there (first word %#llx)",
			     how, i, kind[i / 4],
			     (unsigned long long)*(uint64_t *)(p + i * ps));
		if (!is_zero(p + (i + 1) * ps, ps))
			fail("%s mapping: page %zu, %s, does not read zeros after a write(2) of page %zu",
			     how, i + 1, kind[i / 4], i);
	}
	munmap(p, 12 * ps);
	close(fd);
	unlink(path);
	return 0;
}

/*
 * Check the first and last word of page @i, @w: each must be zero or the
 * pattern of page @i with @seed.  Prints the problem and returns false
 * otherwise.
 */
static bool check_words(int fd, size_t i, const uint64_t w[2], uint64_t seed,
			uint64_t old_seed, const char *what)
{
	uint64_t pread_word;
	long idx;
	int k;

	for (k = 0; k < 2; k++) {
		idx = decode(w[k], seed, k);
		if (idx == PAT_ZERO || idx == (long)i)
			continue;
		if (pread(fd, &pread_word, 8, i * ps + k * (ps - 8)) != 8)
			pread_word = ~0ULL;
		fail("%s: page %zu, %s word: %#llx (%s), read(2) has %#llx", what, i,
		     k ? "last" : "first", (unsigned long long)w[k],
		     decode(w[k], old_seed, k) >= 0 ? "the old data" :
		     idx >= 0 ? "another page's data" : "not data of this file",
		     (unsigned long long)pread_word);
		return false;
	}
	return true;
}

/* Read the first and the last word of page @i of @map into @w. */
static void read_words(const char *map, size_t i, uint64_t w[2])
{
	w[0] = __atomic_load_n((const uint64_t *)(map + i * ps), __ATOMIC_RELAXED);
	w[1] = __atomic_load_n((const uint64_t *)(map + (i + 1) * ps - 8),
			       __ATOMIC_RELAXED);
}

static int race_holes(double secs, const char *path)
{
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	size_t npages = RACE_SIZE / ps, span = 16, i;
	double deadline = now() + secs;
	long rounds = 0;
	bool bad = false;
	int fd, status;
	uint64_t w[2];
	char *map;
	pid_t pid;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path);
	write_pattern(fd, seed, 0, npages);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		unsigned int rnd = seed;
		size_t first;

		while (now() < deadline) {
			first = rand_r(&rnd) % (npages / span) * span;
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      first * ps, span * ps))
				_exit(2);
			for (i = first; i < first + span; i++)
				write_pattern(fd, seed, i, 1);
		}
		_exit(0);
	}
	map = map_pte(fd, RACE_SIZE, MAP_SHARED);
	if (map == MAP_FAILED)
		die("mmap");
	while (!bad && now() < deadline) {
		for (i = 0; i < npages && !bad; i++) {
			read_words(map, i, w);
			bad = !check_words(fd, i, w, seed, seed, "write(2) into holes");
		}
		madvise(map, RACE_SIZE, MADV_DONTNEED);
		rounds++;
	}
	if (bad)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!bad && !(WIFEXITED(status) && !WEXITSTATUS(status)))
		fail("the writer failed (status %#x)", status);
	fprintf(stderr, "%ld read rounds of %zu pages\n", rounds, npages);
	munmap(map, RACE_SIZE);
	close(fd);
	unlink(path);
	return 0;
}

/* Shared with the writer. */
struct unwritten_churn {
	long seq;		/* odd while the old data is written */
	long page;		/* the page being written, or -1 */
	long rounds, writes;
	long write_ns;		/* time spent in the page writes */
	int err;
};

static int rewrite_unwritten(int fd, uint64_t seed, double deadline,
			     struct unwritten_churn *uc)
{
	size_t npages = RACE_SIZE / ps, i, idx;
	char *buf = malloc(ps);
	double start;

	if (!buf)
		return 2;
	while (now() < deadline) {
		__atomic_add_fetch(&uc->seq, 1, __ATOMIC_SEQ_CST);
		write_pattern(fd, seed, 0, npages);
		if (fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, RACE_SIZE)) {
			uc->err = errno;
			return 1;
		}
		__atomic_add_fetch(&uc->seq, 1, __ATOMIC_SEQ_CST);
		/* Every other page first, so that each write splits an extent. */
		for (i = 0; i < npages && now() < deadline; i++) {
			idx = i < npages / 2 ? 2 * i : 2 * (i - npages / 2) + 1;
			fill(buf, 1, ~seed, idx);
			__atomic_store_n(&uc->page, idx, __ATOMIC_RELEASE);
			start = now();
			if (pwrite(fd, buf, ps, idx * ps) != (ssize_t)ps) {
				uc->err = errno;
				return 1;
			}
			__atomic_add_fetch(&uc->write_ns,
					   (long)((now() - start) * 1e9), __ATOMIC_RELAXED);
			__atomic_add_fetch(&uc->writes, 1, __ATOMIC_RELAXED);
		}
		uc->rounds++;
	}
	__atomic_store_n(&uc->page, -1, __ATOMIC_RELEASE);
	return 0;
}

static int race_unwritten(double secs, const char *path)
{
	uint64_t seed = (uint64_t)time(NULL) << 16 ^ getpid();
	long seq, page, last = -1, faults = 0, writes, sweep_ns;
	double deadline = now() + secs, delay;
	unsigned int rnd = seed;
	struct unwritten_churn *uc;
	bool bad = false;
	int fd, status;
	uint64_t w[2];
	char *map;
	pid_t pid;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path);
	write_pattern(fd, seed, 0, RACE_SIZE / ps);
	uc = mmap(NULL, sizeof(*uc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (uc == MAP_FAILED)
		die("mmap");
	uc->page = -1;
	map = map_pte(fd, RACE_SIZE, MAP_SHARED);
	if (map == MAP_FAILED)
		die("mmap");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(rewrite_unwritten(fd, seed, deadline, uc));

	while (!bad && now() < deadline) {
		seq = __atomic_load_n(&uc->seq, __ATOMIC_SEQ_CST);
		page = __atomic_load_n(&uc->page, __ATOMIC_SEQ_CST);
		if (page < 0 || seq & 1 || page == last)
			continue;
		last = page;
		/* Up to twice the mean page write (200 us until there is one). */
		writes = __atomic_load_n(&uc->writes, __ATOMIC_RELAXED);
		sweep_ns = writes ? 2 * __atomic_load_n(&uc->write_ns, __ATOMIC_RELAXED) /
			   writes : 200000;
		delay = now() + (rand_r(&rnd) % (sweep_ns + 1)) / 1e9;
		while (now() < delay)
			;
		madvise(map + page * ps, ps, MADV_DONTNEED);
		/* The first fault of the page asks the filesystem. */
		read_words(map, page, w);
		/* The old data is back once the next round began. */
		if (__atomic_load_n(&uc->seq, __ATOMIC_SEQ_CST) != seq)
			continue;
		faults++;
		bad = !check_words(fd, page, w, ~seed, seed,
				   "write(2) into unwritten extents");
	}
	if (bad)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	fprintf(stderr, "%ld rounds, %ld page writes of %ld us each, %ld faults on the page being written\n",
		uc->rounds, uc->writes, uc->writes ? uc->write_ns / uc->writes / 1000 : 0,
		faults);
	if (!bad && !(WIFEXITED(status) && !WEXITSTATUS(status)))
		fail("the writer failed (status %#x): %s", status, strerror(uc->err));
	if (!bad && !faults)
		fail("no fault ran while a page was written");
	munmap(map, RACE_SIZE);
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ps = sysconf(_SC_PAGESIZE);
	if (argc == 4 && !strcmp(argv[1], "holes-read-zero"))
		ret = holes_read_zero(argv[2], argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "race-holes"))
		ret = race_holes(atof(argv[2]), argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "race-unwritten"))
		ret = race_unwritten(atof(argv[2]), argv[3]);
	if (ret < 0) {
		fprintf(stderr, "Usage: dax_unwritten holes-read-zero FILE shared|private|sync\n"
			"       dax_unwritten race-holes|race-unwritten SECONDS FILE\n");
		return 2;
	}
	if (ret)
		return ret;
	return failures ? 1 : 0;
}
