// SPDX-License-Identifier: GPL-2.0
/*
 * Whether the kernel writes back (flushes from the CPU cache) a store made
 * through a shared fs-DAX mapping.
 *
 * A store through a DAX mapping lands in the CPU cache.  fsync() and msync()
 * flush the pages whose mapping entries are tagged dirty; read(2) sees the
 * data either way, so only the place where the kernel flushes shows whether
 * a store would survive a power failure: the fs_dax:dax_writeback_one
 * tracepoint fires for each range written back.  The caller enables it (and
 * fs_dax:dax_insert_pfn_mkwrite) in a tracefs instance and names it.
 *
 * Usage: dax_writeback TRACEDIR FILE OP
 *
 * FILE is made 1 MiB of data, written back, and mapped shared with PTEs only;
 * the trace is cleared, page 3 is stored to, and then:
 *   none         fsync() (the control)
 *   fallocate    fallocate(KEEP_SIZE) of 4-5 MiB, then fsync()
 *   punch        a hole punch of 512-576 KiB, then fsync()
 *   zero         a zero range of 512-576 KiB, then fsync()
 *   truncate     a truncate to 768 KiB, then fsync()
 *   msync-punch  a hole punch of 512-576 KiB, then msync(MS_SYNC)
 * Page 3 must have been written back: "OP: page 3 written back", or
 * "OP: page 3 was not written back".
 *
 *   mapsync-cow        FILE is cloned to FILE.clone (FICLONE) and both are
 *                      fsynced; the mapping is MAP_SYNC; the store into the
 *                      shared page copies it to a new block
 *   mapsync-cow-dirty  the same, with an fallocate() past EOF first, so that
 *                      the file has metadata to sync anyway
 *   mapsync-cow-prealloc  the same as mapsync-cow, but FILE has a CoW extent
 *                      size hint of 32 pages (xfs), and a write(2) of page 0
 *                      then fsync() leave CoW blocks preallocated over page 3:
 *                      the fault allocates nothing
 * The fault must be synchronous (fs_dax:dax_insert_pfn_mkwrite: the page is
 * made writable after the metadata is synced) and the copy that the kernel
 * made must be written back by then; a line for each.
 *
 * Exit 0 when the output says so, 2 on a setup error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif

#define FILE_SIZE	(1UL << 20)
#define STORE_PAGE	3
#define PTE_COLOUR	(64UL << 10)

static const char *trace_dir;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	exit(2);
}

static void trace_clear(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		die(path);
	close(fd);
}

/*
 * The lines of @event traced for inode @ino; with @pgoff >= 0, only those
 * (dax_writeback_one) whose range covers page @pgoff.  The trace goes to
 * stderr for the record.
 */
static int events_of(const char *event, unsigned long ino, long pgoff)
{
	char path[4096], line[1024], ino_str[40], ev[128];
	unsigned long off, len;
	const char *p;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	snprintf(ino_str, sizeof(ino_str), " ino %#lx ", ino);
	snprintf(ev, sizeof(ev), " %s:", event);
	f = fopen(path, "r");
	if (!f)
		die(path);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, ev) || !strstr(line, ino_str))
			continue;
		fputs(line, stderr);
		if (pgoff < 0) {
			n++;
			continue;
		}
		p = strstr(line, " pgoff ");
		if (p && sscanf(p, " pgoff %lx pglen %lx", &off, &len) == 2 &&
		    off <= (unsigned long)pgoff && (unsigned long)pgoff < off + len)
			n++;
	}
	fclose(f);
	return n;
}

/* A shared mapping of @fd that cannot use PMD entries. */
static char *map_pte(int fd, size_t len, int flags)
{
	size_t pmd = 2UL << 20, rlen = len + 2 * pmd + PTE_COLOUR;
	uintptr_t res, addr;
	char *p;

	p = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	res = (uintptr_t)p;
	addr = ((res + pmd - 1) & ~(pmd - 1)) + PTE_COLOUR;
	p = mmap((void *)addr, len, PROT_READ | PROT_WRITE, flags | MAP_FIXED,
		 fd, 0);
	if (p == MAP_FAILED)
		return p;
	munmap((void *)res, addr - res);
	munmap((void *)(addr + len), res + rlen - addr - len);
	return p;
}

static int make_file(const char *path)
{
	char *buf = malloc(FILE_SIZE);
	size_t i;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf)
		die(path);
	for (i = 0; i < FILE_SIZE; i++)
		buf[i] = i / 4096 + 1;
	if (pwrite(fd, buf, FILE_SIZE, 0) != FILE_SIZE)
		die("pwrite");
	if (fsync(fd))
		die("fsync");
	free(buf);
	return fd;
}

static unsigned long ino_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("fstat");
	return st.st_ino;
}

static void store(char *map, size_t ps)
{
	__atomic_store_n(map + STORE_PAGE * ps, 0x5a, __ATOMIC_RELAXED);
}

static const char *const fsync_ops[] = {
	"none", "fallocate", "punch", "zero", "truncate", "msync-punch", NULL,
};

static int fsync_after(const char *file, const char *op)
{
	size_t ps = sysconf(_SC_PAGESIZE);
	int fd, ret, i;
	char *map;

	for (i = 0; fsync_ops[i] && strcmp(op, fsync_ops[i]); i++)
		;
	if (!fsync_ops[i])
		return -1;
	fd = make_file(file);
	map = map_pte(fd, FILE_SIZE, MAP_SHARED);
	if (map == MAP_FAILED)
		die("mmap");
	trace_clear();
	store(map, ps);
	if (!strcmp(op, "none"))
		ret = 0;
	else if (!strcmp(op, "fallocate"))
		ret = fallocate(fd, FALLOC_FL_KEEP_SIZE, 4 << 20, 1 << 20);
	else if (!strcmp(op, "punch") || !strcmp(op, "msync-punch"))
		ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				512 << 10, 64 << 10);
	else if (!strcmp(op, "zero"))
		ret = fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
				512 << 10, 64 << 10);
	else
		ret = ftruncate(fd, 768 << 10);
	if (ret)
		die(op);
	if (!strcmp(op, "msync-punch") ? msync(map, FILE_SIZE, MS_SYNC) : fsync(fd))
		die("fsync/msync");
	if (events_of("dax_writeback_one", ino_of(fd), STORE_PAGE) > 0)
		printf("%s: page %d written back\n", op, STORE_PAGE);
	else
		printf("%s: page %d was not written back\n", op, STORE_PAGE);
	munmap(map, FILE_SIZE);
	close(fd);
	return 0;
}

static int mapsync_cow(const char *file, const char *op)
{
	size_t ps = sysconf(_SC_PAGESIZE);
	int fd = make_file(file), clone;
	char path[4096], *map;
	unsigned long ino;

	snprintf(path, sizeof(path), "%s.clone", file);
	clone = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (clone < 0)
		die(path);
	if (ioctl(clone, FICLONE, fd))
		die("FICLONE");
	if (fsync(fd) || fsync(clone))
		die("fsync");
	if (!strcmp(op, "mapsync-cow-dirty") &&
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, 2 * FILE_SIZE, ps))
		die("fallocate");
	if (!strcmp(op, "mapsync-cow-prealloc")) {
		struct fsxattr fsx;
		char *buf = malloc(ps);

		if (!buf || ioctl(fd, FS_IOC_FSGETXATTR, &fsx))
			die("FS_IOC_FSGETXATTR");
		fsx.fsx_xflags |= FS_XFLAG_COWEXTSIZE;
		fsx.fsx_cowextsize = 32 * ps;
		if (ioctl(fd, FS_IOC_FSSETXATTR, &fsx))
			die("a CoW extent size hint (FS_IOC_FSSETXATTR)");
		/* A CoW write of page 0 preallocates CoW blocks over 0-31. */
		memset(buf, 0x77, ps);
		if (pwrite(fd, buf, ps, 0) != (ssize_t)ps || fsync(fd))
			die("CoW write of page 0");
		free(buf);
	}
	ino = ino_of(fd);
	map = map_pte(fd, FILE_SIZE, MAP_SHARED_VALIDATE | MAP_SYNC);
	if (map == MAP_FAILED)
		die("mmap MAP_SYNC");
	trace_clear();
	store(map, ps);
	if (events_of("dax_insert_pfn_mkwrite", ino, -1) > 0)
		printf("%s: the fault was synchronous\n", op);
	else
		printf("%s: the fault made the page writable without syncing the file\n", op);
	if (events_of("dax_writeback_one", ino, STORE_PAGE) > 0)
		printf("%s: the copy of page %d was written back\n", op, STORE_PAGE);
	else
		printf("%s: the copy of page %d was not written back\n", op, STORE_PAGE);
	munmap(map, FILE_SIZE);
	close(clone);
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc != 4) {
		fprintf(stderr, "Usage: dax_writeback TRACEDIR FILE OP\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	trace_dir = argv[1];
	if (!strcmp(argv[3], "mapsync-cow") || !strcmp(argv[3], "mapsync-cow-dirty") ||
	    !strcmp(argv[3], "mapsync-cow-prealloc"))
		ret = mapsync_cow(argv[2], argv[3]);
	else
		ret = fsync_after(argv[2], argv[3]);
	if (ret) {
		fprintf(stderr, "dax_writeback: unknown OP '%s'\n", argv[3]);
		return 2;
	}
	unlink(argv[2]);
	return 0;
}
