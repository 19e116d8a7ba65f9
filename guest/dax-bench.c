// SPDX-License-Identifier: GPL-2.0
/*
 * dax-bench: the guest side of make bench. Each mode prints one line
 * "BENCH <name> key=value ..." that scripts/bench-report.sh (wall time)
 * and scripts/bench-icount-report.sh (instructions, counts) tabulate.
 *
 *   dax-bench read FILE KIB pte|pmd|populate|pteonpmd|ptefalloc seq|rand NAME
 *	Create FILE (KIB KiB of data; KIB 0: use FILE as it is, e.g. on a
 *	read-only filesystem), then read one word per page through
 *	a mapping placed so that no PMD can be used (pte), PMD aligned
 *	(pmd), or with MAP_POPULATE; three times, through three fresh
 *	mappings.  pteonpmd: as pte, after one untimed read of the whole
 *	file (allocated as for pmd) through a PMD-aligned mapping, so that
 *	the PTE mappings map the pages of PMD entries.  ptefalloc: as pte,
 *	on a file allocated as for pmd (PMD-aligned extents where the
 *	filesystem gives them), read through PTEs only.  Reports minor
 *	faults, nanoseconds (mmap() and the reads) and the vma_lock_success
 *	and vma_lock_retry counts of each pass, and the nanoseconds of its
 *	munmap() (unmap_ns).
 *   dax-bench share FILE KIB pte|pteonpmd|ptefalloc seq|rand NAME
 *	Untimed: create FILE as read does, read it once through a mapping
 *	placed as read places it, then again with the fault-around events
 *	on: the pages that fault-around mapped in the second read
 *	(fa_mapped) and how many of them belong to large folios (fa_large),
 *	from the dax_map_pages and dax_fault_around events.  Prints the
 *	name alone where the kernel has no such events (v7.3).
 *   dax-bench syncfault DIR prealloc|empty sync|nosync load|idle NAME
 *	512 write faults on a fresh 2 MiB file, with or without MAP_SYNC,
 *	optionally with a background writer: min/avg/max latency in us and
 *	the histogram buckets of the MAP_SYNC thread.
 *   dax-bench write FILE MIB NAME
 *	write(2) of MIB MiB in 4 KiB pieces to a file nobody maps, into
 *	holes (after truncate) and over data: MiB/s.
 *   dax-bench cowwrite FILE KIB unmapped|mapped|other|plain NAME
 *	write(2) of KIB KiB in 4 KiB pieces over the data of a new FILE:
 *	after FICLONE of FILE into FILE.clone (all but plain), so that every
 *	write copies on write, with FILE not mapped (unmapped), mapped and
 *	read by this process (mapped, plain) or by a child that keeps the
 *	mapping while the writes run (other); plain: no clone.  Reports the
 *	nanoseconds of the writes (ns1) and the writer's CPU time in them
 *	(cpu1: without what other tasks, kernel workers included, ran).
 *	Writes back and sleeps a second before the set-up and the writes.
 *   dax-bench pmdmix FILE KIB FIRSTKIB NAME
 *	Create FILE (KIB KiB, allocated in one piece: 2 MiB extents on a
 *	filesystem made for them), read its first FIRSTKIB KiB through a
 *	mapping that no PMD can map, then all of it through a PMD-aligned
 *	one: the PMD faults of the second read that mapped a PMD (pmd_nopage)
 *	and that fell back to PTEs (pmd_fallback), from the
 *	fs_dax:dax_pmd_fault_done tracepoint.
 *   dax-bench storefsync FILE KIB pte|pteonpmd|ptefalloc NAME
 *	Create FILE (KIB KiB, at least 4096), read all of it through a shared, writable
 *	mapping that no PMD can map (pteonpmd: after a read through a
 *	PMD-aligned one, so that it has PMD entries; ptefalloc: allocated
 *	as for pmd, read through PTEs only), fsync() it, then store
 *	one byte into one page and fsync() again: the pages that the second
 *	fsync() wrote back (flushed_pages, the pglen of the
 *	fs_dax:dax_writeback_one events).
 *   dax-bench scale FILE MIB THREADS NAME
 *	THREADS threads read-fault a shared mapping of FILE while another
 *	thread mmaps and munmaps in a loop: faults per second, and the
 *	vma_lock_* counters of /proc/vmstat.
 *   dax-bench readers FILE MIB THREADS NAME
 *	The same without the mmap/munmap thread: readers that share one
 *	file and one mapping, each faulting its own part of it again and
 *	again (MADV_DONTNEED after each pass).
 *
 * With DAX_BENCH_MARK=NAME in the environment, cowwrite NAME calls a
 * one-byte function at PROFILE_MARK just before and just after its timed
 * writes, for a QEMU plugin that counts what runs in between (make
 * profile).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x080000
#endif

#ifndef FICLONE
#define FICLONE _IOW(0x94, 9, int)
#endif

#define PMD_SZ	(2UL << 20)
#define PTE_COLOUR (64UL << 10)

static size_t ps;

static void die(const char *what)
{
	fprintf(stderr, "dax-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A fixed user address no mapping of this program uses otherwise. */
#define PROFILE_MARK 0x5a5a00000000UL

/* For case @name, execute the instruction at PROFILE_MARK (mapped once). */
static void profile_mark(const char *name)
{
	static void (*mark)(void);
	const char *env = getenv("DAX_BENCH_MARK");

	if (!env || strcmp(env, name))
		return;
	if (!mark) {
		unsigned char *p = mmap((void *)PROFILE_MARK, ps,
					PROT_READ | PROT_WRITE | PROT_EXEC,
					MAP_PRIVATE | MAP_ANONYMOUS |
					MAP_FIXED_NOREPLACE, -1, 0);

		if (p != (void *)PROFILE_MARK)
			die("mmap PROFILE_MARK");
		*p = 0xc3;	/* ret */
		mark = (void (*)(void))p;
	}
	mark();
}

/*
 * Write back everything, then sleep a second for the kernel workers that
 * queued more (under -icount with sleep=off an idle guest skips ahead).
 */
static void settle(void)
{
	const struct timespec second = { .tv_sec = 1 };

	sync();
	nanosleep(&second, NULL);
}

/* CPU time of the calling thread: under -icount, its own instructions. */
static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static long vmstat(const char *name)
{
	char key[64];
	long val, ret = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2)
		if (!strcmp(key, name))
			ret = val;
	fclose(f);
	return ret;
}

/*
 * Write @len bytes to a new file.  @aligned: allocate it in one piece first,
 * so that xfs (mkfs -d su=2m) places it on 2 MiB boundaries for PMD faults;
 * 1 MiB writes would allocate it 1 MiB at a time.
 */
static int make_file(const char *path, size_t len, int aligned)
{
	size_t chunk = 1UL << 20, off;
	char *buf = malloc(chunk);
	int fd;

	if (!buf)
		die("malloc");
	memset(buf, 0x5a, chunk);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(path);
	if (aligned && fallocate(fd, 0, 0, len))
		die("fallocate");
	for (off = 0; off < len; off += chunk)
		if (pwrite(fd, buf, chunk, off) != (ssize_t)chunk)
			die("pwrite");
	if (fsync(fd))
		die("fsync");
	free(buf);
	return fd;
}

/* Map at a PMD-aligned address, or PTE_COLOUR past one. */
static char *map_at(int fd, size_t len, int prot, int flags, int pmd)
{
	char *res, *addr, *p;

	res = mmap(NULL, len + 2 * PMD_SZ, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		die("mmap reserve");
	addr = (char *)(((uintptr_t)res + PMD_SZ - 1) & ~(PMD_SZ - 1));
	if (!pmd)
		addr += PTE_COLOUR;
	munmap(res, len + 2 * PMD_SZ);
	p = mmap(addr, len, prot, flags | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

static void touch_pages(const char *p, size_t len)
{
	volatile char sink;
	size_t off;

	for (off = 0; off < len; off += ps)
		sink = p[off];
	(void)sink;
}

/*
 * Read all of @fd (@len bytes) through a PMD-aligned mapping, which leaves
 * PMD entries where the blocks allow, then unmap it: the set-up of the
 * cases that map PMD entries with PTEs (pteonpmd).
 */
static void read_through_pmds(int fd, size_t len)
{
	char *p = map_at(fd, len, PROT_READ, MAP_SHARED, 1);

	touch_pages(p, len);
	munmap(p, len);
}

/*
 * The order in which the read and share cases read @npages pages: 0, 1, ...
 * or, with @rnd, a shuffle of them that is the same on every run.
 */
static size_t *read_order(size_t npages, int rnd)
{
	unsigned int seed = 42;
	size_t *order, i, j, t;

	order = malloc(npages * sizeof(*order));
	if (!order)
		die("malloc");
	for (i = 0; i < npages; i++)
		order[i] = i;
	for (i = npages - 1; rnd && i > 0; i--) {
		j = rand_r(&seed) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	return order;
}

#define TRACE_DIR "/sys/kernel/debug/tracing/"
#define FA_EVENTS TRACE_DIR "events/fs_dax/dax_map_pages/enable"

static void trace_write(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		die(file);
	close(fd);
}

/* Turn the fault-around events (dax_map_pages, dax_fault_around) on or off. */
static void fault_around_events(const char *on)
{
	trace_write(FA_EVENTS, on);
	trace_write(TRACE_DIR "events/fs_dax/dax_fault_around/enable", on);
}

/*
 * Sum the "mapped" and "large" fields of the fault-around events in the
 * trace buffer into *@mapped and *@large; *@large is -1 if the events have
 * no such field.
 */
static void fault_around_pages(long *mapped, long *large)
{
	FILE *f = fopen(TRACE_DIR "trace", "r");
	char line[1024], *m, *l;

	if (!f)
		die(TRACE_DIR "trace");
	*mapped = 0;
	*large = -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "dax_map_pages:") &&
		    !strstr(line, "dax_fault_around:"))
			continue;
		m = strstr(line, " mapped ");
		l = strstr(line, " large ");
		if (m)
			*mapped += strtol(m + 8, NULL, 10);
		if (l)
			*large = (*large < 0 ? 0 : *large) + strtol(l + 7, NULL, 10);
	}
	fclose(f);
}

/*
 * Read all of @fd (@len bytes, @npages pages in @order) once more, untimed,
 * through a mapping placed as @pmd says, with the fault-around events on:
 * print how many pages fault-around mapped and how many of them were of
 * large folios.  Nothing where the kernel has no fault-around (v7.3).
 */
static void report_fault_around(int fd, size_t len, const size_t *order,
				size_t npages, int pmd)
{
	volatile char sink;
	long mapped, large;
	size_t i;
	char *p;

	if (access(FA_EVENTS, W_OK))
		return;
	fault_around_events("1");
	trace_write(TRACE_DIR "trace", "");
	p = map_at(fd, len, PROT_READ, MAP_SHARED, pmd);
	for (i = 0; i < npages; i++)
		sink = p[order[i] * ps];
	(void)sink;
	munmap(p, len);
	fault_around_events("0");
	fault_around_pages(&mapped, &large);
	printf(" fa_mapped=%ld", mapped);
	if (large >= 0)
		printf(" fa_large=%ld", large);
}

static int bench_read(char **argv)
{
	size_t len = strtoul(argv[1], NULL, 0) << 10, npages, i;
	int pmd = !strcmp(argv[2], "pmd"), populate = !strcmp(argv[2], "populate");
	int onpmd = !strcmp(argv[2], "pteonpmd");
	int falloc = !strcmp(argv[2], "ptefalloc");
	int rnd = !strcmp(argv[3], "rand");
	volatile char sink;
	size_t *order;
	char mark[128];
	int fd, pass;

	if (!pmd && !populate && !onpmd && !falloc && strcmp(argv[2], "pte")) {
		fprintf(stderr, "dax-bench: read: pte, pmd, populate, pteonpmd or ptefalloc, not %s\n",
			argv[2]);
		return 2;
	}
	if (!rnd && strcmp(argv[3], "seq")) {
		fprintf(stderr, "dax-bench: read: seq or rand, not %s\n", argv[3]);
		return 2;
	}
	if (len) {
		fd = make_file(argv[0], len, pmd || onpmd || falloc);
	} else {
		struct stat st;

		fd = open(argv[0], O_RDONLY);
		if (fd < 0 || fstat(fd, &st))
			die(argv[0]);
		len = st.st_size;
	}
	npages = len / ps;
	order = read_order(npages, rnd);
	if (onpmd)
		read_through_pmds(fd, len);
	printf("BENCH %s pages=%zu", argv[4], npages);
	for (pass = 1; pass <= 3; pass++) {
		static const char *const names[] = { "first", "reread", "third" };
		long s0 = vmstat("vma_lock_success"), r0 = vmstat("vma_lock_retry");
		uint64_t t0, ns;

		/* make profile's window: the pass's timed mmap and reads. */
		snprintf(mark, sizeof(mark), "%s-%s", argv[4], names[pass - 1]);
		profile_mark(mark);
		t0 = now_ns();
		char *p = map_at(fd, len, PROT_READ,
				 MAP_SHARED | (populate ? MAP_POPULATE : 0), pmd);
		/* The reads' faults: MAP_POPULATE's are taken by mmap(). */
		long f0 = minflt();

		for (i = 0; i < npages; i++)
			sink = p[order[i] * ps];
		ns = now_ns() - t0;
		profile_mark(mark);
		printf(" faults%d=%ld ns%d=%llu", pass, minflt() - f0, pass,
		       (unsigned long long)ns);
		printf(" vma_success%d=%ld vma_retry%d=%ld", pass,
		       vmstat("vma_lock_success") - s0, pass,
		       vmstat("vma_lock_retry") - r0);
		/* And the window of its munmap(). */
		snprintf(mark, sizeof(mark), "%s-munmap%d", argv[4], pass);
		profile_mark(mark);
		t0 = now_ns();
		munmap(p, len);
		ns = now_ns() - t0;
		profile_mark(mark);
		printf(" unmap_ns%d=%llu", pass, (unsigned long long)ns);
	}
	(void)sink;
	printf("\n");
	close(fd);
	if (strtoul(argv[1], NULL, 0))
		unlink(argv[0]);
	free(order);
	return 0;
}

static int bench_share(char **argv)
{
	size_t len = strtoul(argv[1], NULL, 0) << 10, npages, i;
	int onpmd = !strcmp(argv[2], "pteonpmd");
	int falloc = !strcmp(argv[2], "ptefalloc");
	int rnd = !strcmp(argv[3], "rand");
	volatile char sink;
	size_t *order;
	char *p;
	int fd;

	if (!onpmd && !falloc && strcmp(argv[2], "pte")) {
		fprintf(stderr, "dax-bench: share: pte, pteonpmd or ptefalloc, not %s\n",
			argv[2]);
		return 2;
	}
	if (!rnd && strcmp(argv[3], "seq")) {
		fprintf(stderr, "dax-bench: share: seq or rand, not %s\n", argv[3]);
		return 2;
	}
	if (!len) {
		fprintf(stderr, "dax-bench: share: KIB must not be 0\n");
		return 2;
	}
	fd = make_file(argv[0], len, onpmd || falloc);
	npages = len / ps;
	order = read_order(npages, rnd);
	if (onpmd)
		read_through_pmds(fd, len);
	p = map_at(fd, len, PROT_READ, MAP_SHARED, 0);
	for (i = 0; i < npages; i++)
		sink = p[order[i] * ps];
	(void)sink;
	munmap(p, len);
	printf("BENCH %s", argv[4]);
	report_fault_around(fd, len, order, npages, 0);
	printf("\n");
	close(fd);
	unlink(argv[0]);
	free(order);
	return 0;
}

static volatile int stop_load;

static void *writer_load(void *arg)
{
	char path[4096], *buf = malloc(1 << 20);
	int fd;

	snprintf(path, sizeof(path), "%s/load", (char *)arg);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf)
		die("load");
	memset(buf, 1, 1 << 20);
	while (!stop_load) {
		if (pwrite(fd, buf, 1 << 20, 0) < 0)
			break;
		fsync(fd);
	}
	close(fd);
	unlink(path);
	free(buf);
	return NULL;
}

static int bench_syncfault(char **argv)
{
	int prealloc = !strcmp(argv[1], "prealloc"), sync = !strcmp(argv[2], "sync");
	int load = !strcmp(argv[3], "load"), n = 512, i, b;
	uint64_t lat, min = ~0ULL, max = 0, sum = 0;
	unsigned long buckets[16] = { 0 };
	char path[4096], *p;
	pthread_t th;
	int fd;

	snprintf(path, sizeof(path), "%s/syncfault", argv[0]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, n * ps))
		die(path);
	if (prealloc && fallocate(fd, 0, 0, n * ps))
		die("fallocate");
	if (prealloc) {
		/* Written blocks: the "prealloc" case. */
		char *buf = calloc(1, n * ps);

		if (!buf || pwrite(fd, buf, n * ps, 0) != (ssize_t)(n * ps))
			die("prealloc");
		free(buf);
	}
	fsync(fd);
	if (load && pthread_create(&th, NULL, writer_load, argv[0]))
		die("pthread_create");
	p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
		 sync ? MAP_SHARED_VALIDATE | MAP_SYNC : MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	for (i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		p[i * ps] = 1;
		lat = (now_ns() - t0) / 1000;
		min = lat < min ? lat : min;
		max = lat > max ? lat : max;
		sum += lat;
		for (b = 0; b < 15 && (2ULL << b) <= lat; b++)
			;
		buckets[b]++;
	}
	stop_load = 1;
	if (load)
		pthread_join(th, NULL);
	printf("BENCH %s min=%llu avg=%llu max=%llu", argv[4], (unsigned long long)min,
	       (unsigned long long)(sum / n), (unsigned long long)max);
	for (b = 0; b < 16; b++)
		if (buckets[b])
			printf(" us%lu-%lu=%lu", b ? 1UL << b : 0, (2UL << b) - 1, buckets[b]);
	printf("\n");
	munmap(p, n * ps);
	close(fd);
	unlink(path);
	return 0;
}

static int bench_write(char **argv)
{
	size_t len = strtoul(argv[1], NULL, 0) << 20, off;
	char *buf = malloc(ps);
	int fd, pass;

	if (!buf)
		die("malloc");
	memset(buf, 0xa5, ps);
	fd = open(argv[0], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(argv[0]);
	printf("BENCH %s", argv[2]);
	for (pass = 0; pass < 2; pass++) {
		uint64_t t0 = now_ns();

		/* Pass 0 writes into holes (allocating), pass 1 over data. */
		for (off = 0; off < len; off += ps)
			if (pwrite(fd, buf, ps, off) != (ssize_t)ps)
				die("pwrite");
		printf(" %s_mibs=%.1f", pass ? "overwrite" : "allocate",
		       (double)(len >> 20) * 1e9 / (now_ns() - t0));
	}
	printf("\n");
	close(fd);
	unlink(argv[0]);
	free(buf);
	return 0;
}

/* Read one word of each page of @p (@len bytes). */
static int bench_cowwrite(char **argv)
{
	size_t len = strtoul(argv[1], NULL, 0) << 10, off;
	const char *how = argv[2];
	bool plain = !strcmp(how, "plain"), other = !strcmp(how, "other");
	bool self = plain || !strcmp(how, "mapped");
	int fd, cfd = -1, ready[2], done[2];
	char clone[4096], *buf, *p = NULL, c;
	pid_t child = -1;
	uint64_t t0, c0, ns, cpu;

	if (!plain && !other && !self && strcmp(how, "unmapped")) {
		fprintf(stderr, "dax-bench: cowwrite: unknown mapping %s\n", how);
		return 2;
	}
	/*
	 * Let the work that earlier cases left run first (XFS frees deleted
	 * files' blocks and writes its log in workers, which run later the
	 * faster those cases ran), so that it neither runs during the writes
	 * nor decides where this file's blocks go.
	 */
	settle();
	fd = make_file(argv[0], len, 0);
	snprintf(clone, sizeof(clone), "%s.clone", argv[0]);
	if (!plain) {
		cfd = open(clone, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (cfd < 0 || ioctl(cfd, FICLONE, fd))
			die("FICLONE");
	}
	if (self) {
		p = map_at(fd, len, PROT_READ, MAP_SHARED, 0);
		touch_pages(p, len);
	}
	if (other) {
		if (pipe(ready) || pipe(done))
			die("pipe");
		child = fork();
		if (child < 0)
			die("fork");
		if (!child) {
			/* EOF on done[0] once the parent closes done[1]. */
			close(done[1]);
			p = map_at(fd, len, PROT_READ, MAP_SHARED, 0);
			touch_pages(p, len);
			if (write(ready[1], "r", 1) != 1 || read(done[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		close(done[0]);
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1)
			die("child mapping");
	}
	buf = malloc(ps);
	if (!buf)
		die("malloc");
	memset(buf, 0xa5, ps);
	/* Nor what the set-up left: log it now, not during the writes. */
	settle();
	profile_mark(argv[3]);
	t0 = now_ns();
	c0 = thread_ns();
	for (off = 0; off < len; off += ps)
		if (pwrite(fd, buf, ps, off) != (ssize_t)ps)
			die("pwrite");
	cpu = thread_ns() - c0;
	ns = now_ns() - t0;
	profile_mark(argv[3]);
	printf("BENCH %s pages=%zu ns1=%llu cpu1=%llu\n", argv[3], len / ps,
	       (unsigned long long)ns, (unsigned long long)cpu);
	if (other) {
		close(done[1]);
		close(ready[0]);
		if (waitpid(child, NULL, 0) != child)
			die("waitpid");
	}
	if (p)
		munmap(p, len);
	free(buf);
	close(fd);
	unlink(argv[0]);
	if (cfd >= 0) {
		close(cfd);
		unlink(clone);
	}
	return 0;
}

/* Count the dax_pmd_fault_done events in the trace buffer that say @what. */
static long pmd_faults(const char *what)
{
	FILE *f = fopen(TRACE_DIR "trace", "r");
	char line[1024];
	long n = 0;

	if (!f)
		die(TRACE_DIR "trace");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "dax_pmd_fault_done:") && strstr(line, what))
			n++;
	fclose(f);
	return n;
}

/* The pages that the dax_writeback_one events in the trace buffer wrote back. */
static long pages_written_back(void)
{
	FILE *f = fopen(TRACE_DIR "trace", "r");
	char line[1024], *len;
	long n = 0;

	if (!f)
		die(TRACE_DIR "trace");
	while (fgets(line, sizeof(line), f)) {
		len = strstr(line, " pglen ");
		if (strstr(line, "dax_writeback_one:") && len)
			n += strtol(len + 7, NULL, 0);
	}
	fclose(f);
	return n;
}

static int bench_storefsync(char **argv)
{
	size_t len = strtoul(argv[1], NULL, 0) << 10;
	int onpmd = !strcmp(argv[2], "pteonpmd");
	int falloc = !strcmp(argv[2], "ptefalloc");
	int fd;
	char *p;

	if (!onpmd && !falloc && strcmp(argv[2], "pte")) {
		fprintf(stderr, "dax-bench: storefsync: pte, pteonpmd or ptefalloc, not %s\n",
			argv[2]);
		return 2;
	}
	if (len < 2 * PMD_SZ) {
		fprintf(stderr, "dax-bench: storefsync: KIB must be at least %lu (two PMDs), not %s\n",
			(unsigned long)(2 * PMD_SZ >> 10), argv[1]);
		return 2;
	}
	fd = make_file(argv[0], len, onpmd || falloc);
	if (onpmd)
		read_through_pmds(fd, len);
	p = map_at(fd, len, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	touch_pages(p, len);
	if (fsync(fd))
		die("fsync");
	trace_write(TRACE_DIR "events/fs_dax/dax_writeback_one/enable", "1");
	trace_write(TRACE_DIR "trace", "");
	/* A page in the middle of the second PMD range of the file. */
	p[PMD_SZ + PMD_SZ / 2] = 1;
	if (fsync(fd))
		die("fsync");
	trace_write(TRACE_DIR "events/fs_dax/dax_writeback_one/enable", "0");
	printf("BENCH %s flushed_pages=%ld\n", argv[3], pages_written_back());
	munmap(p, len);
	close(fd);
	unlink(argv[0]);
	return 0;
}

static int bench_pmdmix(char **argv)
{
	size_t len = strtoul(argv[1], NULL, 0) << 10;
	size_t first = strtoul(argv[2], NULL, 0) << 10;
	int fd = make_file(argv[0], len, 1);
	char *p;

	if (first > len) {
		fprintf(stderr, "dax-bench: pmdmix: FIRSTKIB past the file\n");
		return 2;
	}
	if (first) {
		p = map_at(fd, first, PROT_READ, MAP_SHARED, 0);
		touch_pages(p, first);
		munmap(p, first);
	}
	trace_write(TRACE_DIR "events/fs_dax/dax_pmd_fault_done/enable", "1");
	trace_write(TRACE_DIR "trace", "");
	p = map_at(fd, len, PROT_READ, MAP_SHARED, 1);
	touch_pages(p, len);
	munmap(p, len);
	trace_write(TRACE_DIR "events/fs_dax/dax_pmd_fault_done/enable", "0");
	printf("BENCH %s pmds=%zu pmd_nopage=%ld pmd_fallback=%ld\n", argv[3],
	       len / PMD_SZ, pmd_faults("NOPAGE"), pmd_faults("FALLBACK"));
	close(fd);
	unlink(argv[0]);
	return 0;
}

struct scale_arg {
	char *map;
	size_t len;
	uint64_t deadline;
	long faults;
};

static void *scale_reader(void *arg)
{
	struct scale_arg *a = arg;
	volatile char sink;
	size_t i;

	while (now_ns() < a->deadline) {
		for (i = 0; i < a->len; i += ps)
			sink = a->map[i];
		a->faults += a->len / ps;
		madvise(a->map, a->len, MADV_DONTNEED);
	}
	(void)sink;
	return NULL;
}

static void *scale_mmapper(void *arg)
{
	struct scale_arg *a = arg;
	void *p;

	while (now_ns() < a->deadline) {
		p = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, 1 << 20);
	}
	return NULL;
}

static int bench_scale(char **argv, bool mmapper)
{
	size_t len = strtoul(argv[1], NULL, 0) << 20;
	int nthreads = atoi(argv[2]), i, fd;
	struct scale_arg a[8], m;
	pthread_t th[8], mt;
	long s0 = vmstat("vma_lock_success"), r0 = vmstat("vma_lock_retry");
	long faults = 0;
	char *map;

	if (nthreads < 1 || nthreads > 8)
		die("threads");
	fd = make_file(argv[0], len, 0);
	map = map_at(fd, len, PROT_READ, MAP_SHARED, 0);
	m.deadline = now_ns() + 5000000000ULL;
	if (mmapper)
		pthread_create(&mt, NULL, scale_mmapper, &m);
	for (i = 0; i < nthreads; i++) {
		a[i].map = map + i * (len / nthreads);
		a[i].len = len / nthreads;
		a[i].deadline = m.deadline;
		a[i].faults = 0;
		pthread_create(&th[i], NULL, scale_reader, &a[i]);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		faults += a[i].faults;
	}
	if (mmapper)
		pthread_join(mt, NULL);
	printf("BENCH %s pages_per_s=%ld vma_lock_success=%ld vma_lock_retry=%ld\n",
	       argv[3], faults / 5, vmstat("vma_lock_success") - s0,
	       vmstat("vma_lock_retry") - r0);
	munmap(map, len);
	close(fd);
	unlink(argv[0]);
	return 0;
}

int main(int argc, char **argv)
{
	ps = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 7 && !strcmp(argv[1], "read"))
		return bench_read(argv + 2);
	if (argc == 7 && !strcmp(argv[1], "share"))
		return bench_share(argv + 2);
	if (argc == 7 && !strcmp(argv[1], "syncfault"))
		return bench_syncfault(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "write"))
		return bench_write(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "cowwrite"))
		return bench_cowwrite(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "pmdmix"))
		return bench_pmdmix(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "storefsync"))
		return bench_storefsync(argv + 2);
	if (argc == 6 && !strcmp(argv[1], "scale"))
		return bench_scale(argv + 2, true);
	if (argc == 6 && !strcmp(argv[1], "readers"))
		return bench_scale(argv + 2, false);
	fprintf(stderr, "usage: see the comment at the top of dax-bench.c\n");
	return 2;
}
