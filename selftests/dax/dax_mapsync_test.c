// SPDX-License-Identifier: GPL-2.0
/*
 * MAP_SYNC: accepted for files in DAX mode, refused with EOPNOTSUPP for
 * others, and a write fault through it into a hole makes the allocation
 * durable before it returns, which a plain MAP_SHARED write fault does not
 * (seen through the fs_dax tracepoints).  That the data written through it
 * reaches the file is dax_fault_test's (its sync variant).
 *
 * The non-DAX file is created in DAX_NONDAX_DIR (default /dev/shm).  On
 * asynchronous DAX (virtio-pmem), which refuses MAP_SYNC by design, the
 * tests skip.
 * Durability across a crash is checked by dax_crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "dax_util.h"

#define FILE_SIZE	(4L << 20)

FIXTURE(mapsync)
{
	int fd;
	uint64_t seed;
};

/*
 * Whether the block device under @dir sits on a virtio bus: virtio-pmem is
 * asynchronous DAX, which refuses MAP_SYNC by design.
 */
static bool dir_on_virtio(const char *dir)
{
	char path[64], real[PATH_MAX];
	struct stat st;

	if (stat(dir, &st))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	return realpath(path, real) && strstr(real, "/virtio");
}

FIXTURE_SETUP(mapsync)
{
	const char *dir;
	char why[256];
	void *p;

	self->fd = -1;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	self->fd = dax_tmpfile(dir, FILE_SIZE);
	ASSERT_LE(0, self->fd) TH_LOG("cannot create a file in %s: %s", dir,
				      strerror(-self->fd));
	p = mmap(NULL, FILE_SIZE, PROT_READ, MAP_SHARED_VALIDATE | MAP_SYNC,
		 self->fd, 0);
	if (p == MAP_FAILED && errno == EOPNOTSUPP && dir_on_virtio(dir))
		SKIP(return, "MAP_SYNC refused on asynchronous DAX (virtio-pmem)");
	if (p != MAP_FAILED)
		munmap(p, FILE_SIZE);
}

FIXTURE_TEARDOWN(mapsync)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(mapsync, dax_accepts)
{
	void *p;

	p = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED_VALIDATE | MAP_SYNC, self->fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap(MAP_SYNC): %s%s", strerror(errno),
					errno == EOPNOTSUPP ? " (asynchronous DAX device?)" : "");
	munmap(p, FILE_SIZE);
}

/*
 * The number of lines of the trace buffer for event @event ("name:") on
 * inode @ino that contain @what, or -errno.
 */
static int trace_lines(const char *dir, const char *event, unsigned long ino,
		       const char *what)
{
	char path[256], line[1024], ino_str[40];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", dir);
	snprintf(ino_str, sizeof(ino_str), " ino %#lx ", ino);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ino_str) && strstr(line, event) &&
		    strstr(line, what))
			n++;
	fclose(f);
	return n;
}

/*
 * A write fault into a hole through MAP_SYNC must not return before the
 * block it allocates is durable: the DAX fault handler returns
 * VM_FAULT_NEEDDSYNC, on which the filesystem commits the metadata
 * (dax_finish_sync_fault(), an fsync of the range) before it maps the page
 * writable.  A plain MAP_SHARED write fault into a hole gets no NEEDDSYNC.
 * If MAP_SYNC were ignored, the first half would fail.
 */
TEST_F(mapsync, sync_write_fault_needs_dsync)
{
	static const char *const event = "events/fs_dax/dax_pte_fault_done/enable";
	size_t ps = dax_page_size();
	const char *dir = dax_tracefs_dir();
	int n, plain_fd;
	struct stat st, plain_st;
	char *p, *q;

	if (!dir)
		SKIP(return, "no tracefs with fs_dax events");
	plain_fd = dax_tmpfile(dax_test_dir(), FILE_SIZE);
	ASSERT_LE(0, plain_fd);
	ASSERT_EQ(0, fstat(self->fd, &st));
	ASSERT_EQ(0, fstat(plain_fd, &plain_st));
	p = dax_map_file_at(self->fd, FILE_SIZE, PROT_READ | PROT_WRITE,
			MAP_SHARED_VALIDATE | MAP_SYNC, 0, false);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap(MAP_SYNC): %s", strerror(errno));
	q = dax_map_file_at(plain_fd, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			0, false);
	ASSERT_NE(MAP_FAILED, q);

	ASSERT_EQ(0, dax_tracefs_write(dir, "trace", ""));
	ASSERT_EQ(0, dax_tracefs_write(dir, event, "1"));
	ASSERT_EQ(0, dax_tracefs_write(dir, "tracing_on", "1"));
	dax_fill(p + 8 * ps, 1, self->seed, 8);
	dax_fill(q + 8 * ps, 1, self->seed, 8);
	dax_tracefs_write(dir, event, "0");

	n = trace_lines(dir, "dax_pte_fault_done:", st.st_ino, "NEEDDSYNC");
	EXPECT_LE(1, n) TH_LOG("no MAP_SYNC write fault returned VM_FAULT_NEEDDSYNC");
	n = trace_lines(dir, "dax_pte_fault_done:", plain_st.st_ino, "NEEDDSYNC");
	EXPECT_EQ(0, n) TH_LOG("a plain MAP_SHARED write fault returned NEEDDSYNC");
	n = trace_lines(dir, "dax_pte_fault_done:", plain_st.st_ino, "NOPAGE");
	EXPECT_LE(1, n) TH_LOG("the plain write fault was not traced");
	dax_tracefs_write(dir, "trace", "");
	munmap(q, FILE_SIZE);
	munmap(p, FILE_SIZE);
	close(plain_fd);
}

TEST(nondax_refuses)
{
	const char *dir = getenv("DAX_NONDAX_DIR") ?: "/dev/shm";
	size_t ps = dax_page_size();
	void *p;
	int fd;

	fd = dax_tmpfile(dir, ps);
	if (fd < 0)
		SKIP(return, "cannot create a file in %s: %s", dir, strerror(-fd));
	if (dax_dir_is_dax(dir) != 0) {
		close(fd);
		SKIP(return, "%s is not a usable non-DAX directory", dir);
	}

	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EOPNOTSUPP, errno);
	if (p != MAP_FAILED)
		munmap(p, ps);

	/* It is MAP_SYNC that is refused, not the mapping. */
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE, fd, 0);
	EXPECT_NE(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, ps);
	close(fd);
}

int main(int argc, char **argv)
{
	return dax_harness_run(argc, argv);
}
