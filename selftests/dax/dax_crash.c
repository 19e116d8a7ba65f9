// SPDX-License-Identifier: GPL-2.0
/*
 * MAP_SYNC across a crash, in two phases around a hard reset:
 *
 *   dax_crash write DIR [NPAGES]
 *	Creates DIR/crashfile, 4 MiB and sparse, makes its name and size
 *	durable with fsync(), maps it with MAP_SYNC and writes a pattern into
 *	pages 0..NPAGES-1 (default 64), so that every page is allocated by a
 *	write fault.  Does the same for DIR/crashfile-nosync with a plain
 *	MAP_SHARED mapping.  Neither file is msync()ed or fsync()ed after the
 *	writes.  Prints "ready" and exits; the machine is then reset, e.g.
 *	with "echo b > /proc/sysrq-trigger".
 *
 *	What MAP_SYNC promises is that the file's metadata (the blocks the
 *	write faults allocated, the size) is durable.  The data is left in
 *	the CPU caches: this test is meant for a reset that keeps them
 *	(QEMU with file-backed NVDIMMs, or a platform with eADR); elsewhere
 *	a real MAP_SYNC user must also flush its cache lines.
 *
 *   dax_crash verify DIR [NPAGES]
 *	After the reboot: passes (exit 0) if crashfile is 4 MiB and all its
 *	written pages hold their pattern, else reports what is wrong and fails.
 *	For crashfile-nosync it only reports what survived.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest.h"
#include "dax_util.h"

#define CRASH_SIZE	(4L << 20)
#define CRASH_SEED	0xda5c4a5eULL
#define CRASH_PAGES	64

/* A new sparse file of CRASH_SIZE whose size is durable. */
static int create_file(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || ftruncate(fd, CRASH_SIZE) || fsync(fd))
		ksft_exit_fail_msg("%s: %s\n", path, strerror(errno));
	return fd;
}

static void write_pages(int fd, const char *name, int flags, size_t npages)
{
	size_t ps = dax_page_size(), i;
	long f0;
	char *p;

	p = mmap(NULL, CRASH_SIZE, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED && errno == EOPNOTSUPP)
		ksft_exit_skip("%s: MAP_SYNC not supported\n", name);
	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap %s: %s\n", name, strerror(errno));
	/*
	 * Read the holes twice: the first pass faults each page to the zero
	 * page, which leaves zero page entries; after MADV_DONTNEED, the
	 * second pass finds those entries and fault-around maps them
	 * read-only, a window per fault.  Each write below must still take
	 * the write fault that allocates the block (synchronously with
	 * MAP_SYNC).
	 */
	for (i = 0; i < npages; i++)
		dax_touch(p + i * ps);
	if (madvise(p, CRASH_SIZE, MADV_DONTNEED))
		ksft_exit_fail_msg("madvise %s: %s\n", name, strerror(errno));
	f0 = dax_minor_faults();
	for (i = 0; i < npages; i++)
		dax_touch(p + i * ps);
	ksft_print_msg("%s: %zu holes read again in %ld faults\n", name, npages,
		       dax_minor_faults() - f0);
	for (i = 0; i < npages; i++)
		dax_fill(p + i * ps, 1, CRASH_SEED, i);
	/* No msync(), no fsync(), no munmap(). */
	ksft_print_msg("%s: wrote %zu pages\n", name, npages);
}

static int do_write(const char *dir, size_t npages)
{
	int dfd, fd, fd_nosync;

	if (dax_dir_is_dax(dir) != 1)
		ksft_exit_skip("files in %s are not DAX\n", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		ksft_exit_fail_msg("%s: %s\n", dir, strerror(errno));
	fd = create_file(dir, "crashfile");
	fd_nosync = create_file(dir, "crashfile-nosync");
	if (fsync(dfd))
		ksft_exit_fail_msg("fsync %s: %s\n", dir, strerror(errno));

	write_pages(fd, "crashfile", MAP_SHARED_VALIDATE | MAP_SYNC, npages);
	write_pages(fd_nosync, "crashfile-nosync", MAP_SHARED, npages);
	printf("ready\n");
	fflush(stdout);
	return 0;
}

/* Count pages of @path that hold their pattern, are zero, or hold neither. */
static int check_file(const char *dir, const char *name, size_t npages,
		      off_t *size, size_t *good, size_t *zero, bool report)
{
	size_t ps = dax_page_size(), i;
	char path[PATH_MAX];
	struct stat st;
	char *buf;
	int fd;

	*good = *zero = 0;
	*size = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		ksft_print_msg("%s: %s\n", path, strerror(errno));
		return -1;
	}
	*size = st.st_size;
	buf = malloc(ps);
	if (!buf)
		ksft_exit_fail_msg("out of memory\n");
	for (i = 0; i < npages; i++) {
		if (pread(fd, buf, ps, i * ps) != (ssize_t)ps)
			memset(buf, 0, ps);
		if (dax_verify(buf, 1, CRASH_SEED, i) == -1) {
			(*good)++;
			continue;
		}
		if (dax_is_zero(buf, ps))
			(*zero)++;
		/* Name the first few bad pages. */
		if (report && i + 1 - *good <= 8)
			ksft_print_msg("%s: page %zu: %s\n", path, i,
				       dax_is_zero(buf, ps) ? "zero" : "garbage");
	}
	free(buf);
	close(fd);
	return 0;
}

static int do_verify(const char *dir, size_t npages)
{
	size_t good, zero;
	off_t size;
	int ret;

	ksft_print_header();
	ksft_set_plan(2);

	ret = check_file(dir, "crashfile", npages, &size, &good, &zero, true);
	ksft_test_result(!ret && size == CRASH_SIZE, "crashfile size %lld\n",
			 (long long)size);
	ksft_test_result(!ret && good == npages,
			 "crashfile: %zu of %zu MAP_SYNC pages intact, %zu zero\n",
			 good, npages, zero);

	if (!check_file(dir, "crashfile-nosync", npages, &size, &good, &zero, false)) {
		ksft_print_msg("crashfile-nosync (not checked): size %lld, ",
			       (long long)size);
		printf("%zu of %zu intact, %zu zero\n", good, npages, zero);
	}
	ksft_finished();
}

int main(int argc, char **argv)
{
	size_t npages = CRASH_PAGES;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s write|verify DIR [NPAGES]\n", argv[0]);
		return KSFT_FAIL;
	}
	if (argc == 4)
		npages = strtoul(argv[3], NULL, 0);
	if (!npages || npages > CRASH_SIZE / dax_page_size()) {
		fprintf(stderr, "NPAGES must be 1..%zu\n", CRASH_SIZE / dax_page_size());
		return KSFT_FAIL;
	}

	if (!strcmp(argv[1], "write"))
		return do_write(argv[2], npages);
	if (!strcmp(argv[1], "verify"))
		return do_verify(argv[2], npages);
	fprintf(stderr, "unknown command %s\n", argv[1]);
	return KSFT_FAIL;
}
