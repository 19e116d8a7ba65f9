// SPDX-License-Identifier: GPL-2.0
/*
 * fs-DAX mapping entry locking under races.
 *
 * A child process keeps changing a file (truncate, hole punch, page writes,
 * and in the second test zero range, collapse range and insert range) while
 * the test process and two threads keep mapping the file afresh and reading
 * every page, which faults each page in again.  Every page must read as zero
 * or as the pattern written for it.  The last two tests each aim at one race
 * (see there).  Each test checks the data, that the churn and the readers
 * made progress, and that the kernel did not complain (a warning, an oops,
 * a lockdep splat: struct dax_kwatch); hangs show in the time limit.
 *
 * DAX_RACE_SECONDS sets the duration of each test (default 20, 1..60).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "kselftest_harness.h"
#include "dax_util.h"

#define FILE_SIZE	(4L << 20)
#define NR_READERS	3	/* the test process and two threads */
#define MAX_OPS		5000000L
#define MAX_ROUNDS	1000000L

enum churn_op {
	OP_TRUNCATE, OP_PUNCH, OP_WRITE, OP_ZERO, OP_COLLAPSE, OP_INSERT, NR_OPS
};

static const char * const op_name[NR_OPS] = {
	"truncate", "punch", "write", "zero", "collapse", "insert",
};

/* Filled by the churn child, in memory shared with the test process. */
struct churn_stats {
	long done[NR_OPS];
	unsigned int unsupported;	/* mask of ops found unsupported */
	int err_op;
	int err;
	int cur_op;			/* in progress, or -1 */
};

/* What a reader saw of a bad page, with the churn stopped. */
struct bad_page {
	int op;			/* the churn op in progress, or -1 */
	int again_err;		/* reading the word again faulted */
	uint64_t again;		/* the word read again through the mapping */
	uint64_t pread;		/* the word read with pread(2) */
	uint64_t pfn;		/* the page's PFN (/proc/self/pagemap), or 0 */
	uint64_t phys;		/* FIEMAP: the block's device offset */
	uint32_t fe_flags;	/* FIEMAP: the extent's flags, or ~0 if none */
};

struct reader {
	int fd;
	uint64_t seed;
	bool any_index;		/* any page's pattern is valid anywhere */
	double deadline;
	int *stop;
	pthread_t thread;
	long rounds, pages, sigbus, zaps;
	int map_err;
	long bad_off;		/* offset of the first bad word, or -1 */
	uint64_t bad_word;
	pid_t churn;		/* stopped when bad data shows */
	struct churn_stats *st;
	struct bad_page bad, good;	/* the bad page and page 0 */
};

static off_t file_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : st.st_size;
}

/* One change of the file; -1 with errno set on error, 1 if skipped. */
static int churn_one(int fd, enum churn_op op, uint64_t seed, void *buf,
		     unsigned int *rnd)
{
	size_t ps = dax_page_size(), npages = FILE_SIZE / ps;
	off_t off = (rand_r(rnd) % npages) * ps;
	off_t len = (1 + rand_r(rnd) % 8) * ps;
	off_t size = file_size(fd);
	size_t idx;
	int i;

	switch (op) {
	case OP_TRUNCATE:
		return ftruncate(fd, (1 + rand_r(rnd) % npages) * ps);
	case OP_PUNCH:
		return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len);
	case OP_WRITE:
		for (i = 0; i < 4; i++) {
			idx = rand_r(rnd) % npages;
			dax_fill(buf, 1, seed, idx);
			if (pwrite(fd, buf, ps, idx * ps) != (ssize_t)ps)
				return -1;
		}
		return 0;
	case OP_ZERO:
		if (off + len > FILE_SIZE)
			len = FILE_SIZE - off;
		return fallocate(fd, FALLOC_FL_ZERO_RANGE |
				 (rand_r(rnd) & 1 ? FALLOC_FL_KEEP_SIZE : 0), off, len);
	case OP_COLLAPSE:
		/* The collapsed range must end before EOF. */
		if (off + len >= size)
			return 1;
		return fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, off, len);
	case OP_INSERT:
		if (off >= size || size + len > FILE_SIZE)
			return 1;
		return fallocate(fd, FALLOC_FL_INSERT_RANGE, off, len);
	default:
		return 1;
	}
}

/* The churn child: returns its exit status. */
static int churn(int fd, uint64_t seed, unsigned int ops, double deadline,
		 struct churn_stats *st)
{
	unsigned int rnd = seed;
	enum churn_op op;
	void *buf;
	long i;
	int ret;

	buf = malloc(dax_page_size());
	if (!buf)
		return 1;
	for (i = 0; i < MAX_OPS && dax_now() < deadline; i++) {
		op = rand_r(&rnd) % NR_OPS;
		if (!(ops & (1U << op)))
			continue;
		__atomic_store_n(&st->cur_op, op, __ATOMIC_RELAXED);
		ret = churn_one(fd, op, seed, buf, &rnd);
		__atomic_store_n(&st->cur_op, -1, __ATOMIC_RELAXED);
		if (ret > 0)
			continue;
		if (!ret) {
			st->done[op]++;
			continue;
		}
		/*
		 * Not every filesystem supports every fallocate() mode, and
		 * collapse/insert have alignment rules of their own.
		 */
		if (errno == EOPNOTSUPP ||
		    (errno == EINVAL && (op == OP_COLLAPSE || op == OP_INSERT))) {
			ops &= ~(1U << op);
			st->unsupported |= 1U << op;
			continue;
		}
		st->err_op = op;
		st->err = errno;
		free(buf);
		return 1;
	}
	free(buf);
	return 0;
}

static uint64_t page_pfn(const void *addr)
{
	uint64_t ent = dax_pagemap(addr);

	return ent & DAX_PAGEMAP_PRESENT ? ent & DAX_PAGEMAP_PFN : 0;
}

/*
 * Record what the mapping, read(2) and the filesystem say of the page at
 * @off, for the log: which block the mapping shows against which block the
 * file has there, and whether that one is unwritten.
 */
static void look_at_page(struct reader *r, const char *map, off_t off,
			 size_t word, struct bad_page *b)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe;
	} f = { .fm = { .fm_start = off, .fm_length = dax_page_size(),
			.fm_flags = FIEMAP_FLAG_SYNC, .fm_extent_count = 1 } };

	b->op = r->st ? __atomic_load_n(&r->st->cur_op, __ATOMIC_RELAXED) : -1;
	b->again_err = dax_probe_read(map + off + word, &b->again);
	b->pfn = b->again_err ? 0 : page_pfn(map + off);
	if (pread(r->fd, &b->pread, 8, off + word) != 8)
		b->pread = ~0ULL;
	b->fe_flags = ~0U;
	if (!ioctl(r->fd, FS_IOC_FIEMAP, &f) && f.fm.fm_mapped_extents) {
		b->phys = f.fe.fe_physical + (off - f.fe.fe_logical);
		b->fe_flags = f.fe.fe_flags;
	}
}

/* Stop the churn where it is, and look at the bad page and at page 0. */
static void explain_bad(struct reader *r, const char *map, size_t i)
{
	size_t ps = dax_page_size();

	if (r->churn > 0)
		kill(r->churn, SIGSTOP);
	look_at_page(r, map, i * ps, r->bad_off - i * ps, &r->bad);
	look_at_page(r, map, 0, 0, &r->good);
}

/*
 * Check the first and the last word of page @i, @w: each must be zero or
 * the pattern of page @i (of any page with r->any_index).  Returns 0, or -1
 * with the first bad word recorded and explained.
 */
static int check_words(struct reader *r, const char *map, size_t i,
		       const uint64_t w[2])
{
	size_t ps = dax_page_size(), npages = FILE_SIZE / ps;
	long idx;
	int k;

	for (k = 0; k < 2; k++) {
		idx = dax_pattern_decode(w[k], r->seed, k);
		if (idx == DAX_PAT_ZERO)
			continue;
		if (idx >= 0 && (r->any_index ? (size_t)idx < npages :
				 (size_t)idx == i))
			continue;
		r->bad_off = i * ps + k * (ps - 8);
		r->bad_word = w[k];
		explain_bad(r, map, i);
		return -1;
	}
	return 0;
}

/*
 * Read the first and the last word of pages [first, first + n).
 * Returns 0 when done, 1 on SIGBUS (the file shrank), -1 on bad data.
 */
static int read_pages(struct reader *r, const char *map, size_t first, size_t n)
{
	size_t ps = dax_page_size(), i;
	uint64_t w[2];

	for (i = first; i < first + n; i++) {
		if (dax_probe_read(map + i * ps, &w[0]) ||
		    dax_probe_read(map + (i + 1) * ps - 8, &w[1])) {
			r->sigbus++;
			return 1;
		}
		/*
		 * A page may be caught in the middle of a write, so each
		 * word is checked on its own.
		 */
		if (check_words(r, map, i, w))
			return -1;
		r->pages++;
	}
	return 0;
}

static void *reader_run(void *arg)
{
	size_t ps = dax_page_size(), npages, first, n;
	struct reader *r = arg;
	unsigned int rnd = r->seed ^ (uintptr_t)r;
	char *map;
	int ret;

	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED) &&
	       r->rounds < MAX_ROUNDS && dax_now() < r->deadline) {
		map = dax_map_file_at(r->fd, FILE_SIZE, PROT_READ, MAP_SHARED, 0, false);
		if (map == MAP_FAILED) {
			r->map_err = errno;
			break;
		}
		/* Read up to EOF: SIGBUS means a truncate got in between. */
		npages = file_size(r->fd) / ps;
		ret = read_pages(r, map, 0, npages);
		if (ret >= 0 && npages && !(r->rounds % 4)) {
			/* Zap part of the mapping and fault it in again. */
			first = rand_r(&rnd) % npages;
			n = 1 + rand_r(&rnd) % (npages - first);
			if (!madvise(map + first * ps, n * ps, MADV_DONTNEED))
				r->zaps++;
			ret = read_pages(r, map, first, n);
		}
		munmap(map, FILE_SIZE);
		if (ret < 0)
			break;
		r->rounds++;
	}
	if (r->map_err || r->bad_off >= 0)
		__atomic_store_n(r->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

FIXTURE(race)
{
	int fd;
	uint64_t seed;
	struct dax_kwatch kwatch;
};

FIXTURE_SETUP(race)
{
	const char *dir;
	char why[256];

	self->fd = -1;
	DAX_KWATCH_START(&self->kwatch);
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	self->fd = dax_tmpfile(dir, FILE_SIZE);
	ASSERT_LE(0, self->fd) TH_LOG("cannot create a file in %s: %s", dir,
				      strerror(-self->fd));
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0,
				       FILE_SIZE / dax_page_size()));
}

FIXTURE_TEARDOWN(race)
{
	dax_kwatch_stop(&self->kwatch);
	if (self->fd >= 0)
		close(self->fd);
}

static void log_bad_page(struct __test_metadata *_metadata, const char *what,
			 const struct bad_page *b)
{
	TH_LOG("%s: churn op %s; mapping %s%#llx, pread %#llx; pfn %#llx; "
	       "block at %#llx, extent flags %#x",
	       what, b->op >= 0 && b->op < NR_OPS ? op_name[b->op] : "none",
	       b->again_err ? "faults, last " : "", (unsigned long long)b->again,
	       (unsigned long long)b->pread, (unsigned long long)b->pfn,
	       (unsigned long long)b->phys, b->fe_flags);
}

static void run_race(struct __test_metadata *_metadata, int fd, uint64_t seed,
		     unsigned int ops, bool any_index)
{
	long secs = dax_race_seconds(20);
	struct reader rd[NR_READERS] = {};
	struct churn_stats *st;
	char msg[256] = "";
	long rounds = 0;
	size_t len;
	int stop = 0, status, i;
	double deadline;
	pid_t pid;

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);

	TH_LOG("racing for %lds, seed %#llx", secs, (unsigned long long)seed);
	deadline = dax_now() + secs;
	st->cur_op = -1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(churn(fd, seed, ops, deadline, st));

	for (i = 0; i < NR_READERS; i++) {
		rd[i].churn = pid;
		rd[i].st = st;
		rd[i].fd = fd;
		rd[i].seed = seed;
		rd[i].any_index = any_index;
		rd[i].deadline = deadline;
		rd[i].stop = &stop;
		rd[i].bad_off = -1;
	}
	for (i = 1; i < NR_READERS; i++)
		ASSERT_EQ(0, pthread_create(&rd[i].thread, NULL, reader_run, &rd[i]));
	reader_run(&rd[0]);
	for (i = 1; i < NR_READERS; i++)
		pthread_join(rd[i].thread, NULL);

	/* Readers stop early only on errors: no need to churn on. */
	if (stop)
		kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	for (i = 0, len = 0; i < NR_OPS && len < sizeof(msg); i++) {
		if (!(ops & (1U << i)))
			continue;
		if (st->unsupported & (1U << i))
			len += snprintf(msg + len, sizeof(msg) - len, " %s: unsupported",
					op_name[i]);
		else
			len += snprintf(msg + len, sizeof(msg) - len, " %s: %ld",
					op_name[i], st->done[i]);
	}
	TH_LOG("churn:%s", msg);
	for (i = 0; i < NR_READERS; i++) {
		TH_LOG("reader %d: %ld rounds, %ld pages, %ld SIGBUS, %ld zaps",
		       i, rd[i].rounds, rd[i].pages, rd[i].sigbus, rd[i].zaps);
		EXPECT_EQ(0, rd[i].map_err)
			TH_LOG("reader %d: mmap: %s", i, strerror(rd[i].map_err));
		EXPECT_EQ(-1, rd[i].bad_off) {
			TH_LOG("reader %d: bad data at offset %#lx: %#llx", i,
			       rd[i].bad_off, (unsigned long long)rd[i].bad_word);
			log_bad_page(_metadata, "bad page", &rd[i].bad);
			log_bad_page(_metadata, "page 0", &rd[i].good);
		}
		rounds += rd[i].rounds;
	}
	if (!stop) {
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("churn failed (status %#x): %s: %s", status,
			       op_name[st->err_op], strerror(st->err));
		EXPECT_LT(0, rounds);
		EXPECT_LT(0, st->done[OP_TRUNCATE] + st->done[OP_WRITE]);
	}
	munmap(st, sizeof(*st));
}

TEST_F_TIMEOUT(race, fault_write_truncate, DAX_RACE_TIMEOUT)
{
	run_race(_metadata, self->fd, self->seed,
		 1U << OP_TRUNCATE | 1U << OP_PUNCH | 1U << OP_WRITE, false);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* Ranges shift, so any page's pattern may show up at any offset. */
TEST_F_TIMEOUT(race, zero_collapse_insert, DAX_RACE_TIMEOUT)
{
	run_race(_metadata, self->fd, self->seed,
		 1U << OP_TRUNCATE | 1U << OP_PUNCH | 1U << OP_WRITE |
		 1U << OP_ZERO | 1U << OP_COLLAPSE | 1U << OP_INSERT, true);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * The write(2) path against read faults: write(2) into a hole allocates a
 * block and then invalidates the mapping entries of the range, so that a
 * zero page mapped there before goes away.  A read fault that comes in
 * between maps the new block; its entry must not be torn down while the
 * page is still mapped (v7.3 warns in dax_folio_put(), which the test sees
 * in the kernel log).  A child keeps
 * punching a range and writing it again page by page; the test process
 * keeps zapping the range and reading it back.
 */
TEST_F_TIMEOUT(race, write_into_mapped_holes, DAX_RACE_TIMEOUT)
{
	long secs = dax_race_seconds(20);
	size_t ps = dax_page_size(), npages = FILE_SIZE / ps, span = 16;
	struct reader rd = { .fd = self->fd, .seed = self->seed, .bad_off = -1 };
	long rounds = 0;
	double deadline = dax_now() + secs;
	int status, ret = 0;
	char *map;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned int rnd = self->seed;
		char *buf = malloc(ps);
		size_t first, i;

		if (!buf)
			_exit(1);
		while (dax_now() < deadline) {
			first = rand_r(&rnd) % (npages / span) * span;
			if (fallocate(self->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      first * ps, span * ps))
				_exit(2);
			for (i = first; i < first + span; i++) {
				dax_fill(buf, 1, self->seed, i);
				if (pwrite(self->fd, buf, ps, i * ps) != (ssize_t)ps)
					_exit(3);
			}
		}
		_exit(0);
	}

	rd.churn = pid;
	map = dax_map_file_at(self->fd, FILE_SIZE, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, map);
	while (dax_now() < deadline) {
		ret = read_pages(&rd, map, 0, npages);
		if (ret < 0)
			break;
		madvise(map, FILE_SIZE, MADV_DONTNEED);
		rounds++;
	}
	munmap(map, FILE_SIZE);
	if (ret < 0)
		kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%ld read rounds, %ld pages read", rounds, rd.pages);
	EXPECT_EQ(-1, rd.bad_off) {
		TH_LOG("bad data at offset %#lx: %#llx", rd.bad_off,
		       (unsigned long long)rd.bad_word);
		log_bad_page(_metadata, "bad page", &rd.bad);
		log_bad_page(_metadata, "page 0", &rd.good);
	}
	/* A writer that the reader killed after bad data did not fail. */
	if (ret >= 0) {
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("writer failed: status %#x", status);
	}
	EXPECT_LT(0, rounds);
	/* v7.3 warns in dax_folio_put(): that is the failure to see. */
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * write(2) into unwritten extents against read faults.  A DAX write into an
 * unwritten extent turns it into a written one and zeroes the block before
 * it copies the data, and no fault may see the block in between: it still
 * holds whatever it held before (here the file's old data, which zero range
 * left in place; on a real system, another file's).  A child keeps rewriting
 * the file, zeroing it with FALLOC_FL_ZERO_RANGE (which keeps the blocks and
 * marks them unwritten) and writing it again page by page, every other page
 * first so that each write splits an extent; it publishes the page it is
 * about to write.  The test process faults each such page in once, after a
 * random delay that sweeps the write: only the first fault of a page asks
 * the filesystem, as it leaves a zero page entry that later faults map.  The
 * page must read as zero or as the new data, never as the old.  The delay is
 * drawn from twice the mean time that the child's page writes take, so that
 * the sweep covers the write on any machine.
 */
struct unwritten_churn {
	long seq;		/* odd while the old data is written back */
	long page;		/* the page being written, or -1 */
	long rounds, writes;
	long write_ns;		/* time spent in the writes */
	int err;
};

static int rewrite_unwritten(int fd, uint64_t seed, double deadline,
			     struct unwritten_churn *uc)
{
	size_t ps = dax_page_size(), npages = FILE_SIZE / ps, i, idx;
	char *buf = malloc(ps);
	double start;

	if (!buf)
		return 1;
	while (dax_now() < deadline) {
		__atomic_add_fetch(&uc->seq, 1, __ATOMIC_SEQ_CST);
		if (dax_write_pattern(fd, seed, 0, npages) ||
		    fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, FILE_SIZE)) {
			uc->err = errno;
			return 1;
		}
		__atomic_add_fetch(&uc->seq, 1, __ATOMIC_SEQ_CST);
		for (i = 0; i < npages && dax_now() < deadline; i++) {
			idx = i < npages / 2 ? 2 * i : 2 * (i - npages / 2) + 1;
			dax_fill(buf, 1, ~seed, idx);
			__atomic_store_n(&uc->page, idx, __ATOMIC_RELEASE);
			start = dax_now();
			if (pwrite(fd, buf, ps, idx * ps) != (ssize_t)ps) {
				uc->err = errno;
				return 1;
			}
			__atomic_add_fetch(&uc->write_ns,
					   (long)((dax_now() - start) * 1e9), __ATOMIC_RELAXED);
			__atomic_add_fetch(&uc->writes, 1, __ATOMIC_RELAXED);
		}
		uc->rounds++;
	}
	__atomic_store_n(&uc->page, -1, __ATOMIC_RELEASE);
	free(buf);
	return 0;
}

TEST_F_TIMEOUT(race, write_into_unwritten, DAX_RACE_TIMEOUT)
{
	long secs = dax_race_seconds(20), seq, page, last = -1, faults = 0;
	long writes, sweep_ns;
	unsigned int rnd = self->seed;
	double delay;
	size_t ps = dax_page_size();
	double deadline = dax_now() + secs;
	struct unwritten_churn *uc;
	struct reader rd = { .fd = self->fd, .seed = ~self->seed, .bad_off = -1 };
	int status;
	uint64_t w[2];
	char *map;
	pid_t pid;

	uc = mmap(NULL, sizeof(*uc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, uc);
	uc->page = -1;
	map = dax_map_file_at(self->fd, FILE_SIZE, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, map);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(rewrite_unwritten(self->fd, self->seed, deadline, uc));
	rd.churn = pid;

	while (dax_now() < deadline && rd.bad_off < 0) {
		seq = __atomic_load_n(&uc->seq, __ATOMIC_SEQ_CST);
		page = __atomic_load_n(&uc->page, __ATOMIC_SEQ_CST);
		if (page < 0 || seq & 1 || page == last)
			continue;
		last = page;
		/* Up to twice the mean page write (200 us until there is one). */
		writes = __atomic_load_n(&uc->writes, __ATOMIC_RELAXED);
		sweep_ns = writes ? 2 * __atomic_load_n(&uc->write_ns, __ATOMIC_RELAXED) /
			   writes : 200000;
		delay = dax_now() + (rand_r(&rnd) % (sweep_ns + 1)) / 1e9;
		while (dax_now() < delay)
			;
		madvise(map + page * ps, ps, MADV_DONTNEED);
		if (dax_probe_read(map + page * ps, &w[0]) ||
		    dax_probe_read(map + (page + 1) * ps - 8, &w[1]))
			continue;
		/* The old data is back once the next round began. */
		if (__atomic_load_n(&uc->seq, __ATOMIC_SEQ_CST) != seq)
			continue;
		faults++;
		/* Zero, or the new data of this page: not the old data. */
		check_words(&rd, map, page, w);
	}
	if (rd.bad_off >= 0)
		kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	munmap(map, FILE_SIZE);
	TH_LOG("%ld rounds, %ld page writes of %ld us each, %ld faults on the page being written",
	       uc->rounds, uc->writes, uc->writes ? uc->write_ns / uc->writes / 1000 : 0,
	       faults);
	EXPECT_EQ(-1, rd.bad_off) {
		TH_LOG("page %ld: %s data at offset %#lx: %#llx", rd.bad_off / (long)ps,
		       dax_pattern_decode(rd.bad_word, self->seed, rd.bad_off % ps != 0) >= 0 ?
		       "old (unwritten)" : "bad", rd.bad_off,
		       (unsigned long long)rd.bad_word);
		log_bad_page(_metadata, "bad page", &rd.bad);
	}
	if (rd.bad_off < 0)
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("writer failed: status %#x: %s", status, strerror(uc->err));
	EXPECT_LT(0, faults);
	munmap(uc, sizeof(*uc));
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
