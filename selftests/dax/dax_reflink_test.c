// SPDX-License-Identifier: GPL-2.0
/*
 * Reflinked (FICLONE) DAX files: copy on write and truncate of pages that
 * something other than a page table still references.
 *
 * A DAX page is the file's block.  When write(2) to a reflinked file moves
 * the data of a page to a new block (copy on write), the old block's entry in
 * the file's mapping and every page table entry for it must go, or the
 * mapping keeps showing the old block, which belongs to the clone or, once
 * the clone is gone, to whichever file gets that space next.  A page spliced
 * into a pipe (vmsplice) holds a reference that unmapping does not remove:
 * the kernel has to wait for it, neither keep the old entry nor reset the
 * page under the reference.  Truncate of such a file has to wait for the
 * reference in a killable sleep, and end once the reference goes, even
 * while the clone maps the shared page.
 *
 * A read fault that runs while write(2) copies the data of a page to its new
 * block finds the old block in the file's extent map; it must not leave it
 * mapped once the write has moved the page.  One that runs while the file is
 * cloned must not take a page from the clone.
 *
 * Data is checked by comparing the mapping with read(2) of the same file: a
 * stale block shows nowhere else.  Kernel warnings are caught in the kernel
 * log (struct dax_kwatch).  The tests skip where the filesystem has no
 * reflink (ext4).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/futex.h>

#include "kselftest_harness.h"
#include "dax_util.h"

#define NPAGES		256	/* 1 MiB with 4 KiB pages */
#define REF_PAGE	5	/* the page spliced into a pipe */
#define OLD_BYTE	0x11
#define NEW_BYTE	0x22
#define OTHER_BYTE	0x33

FIXTURE(reflink)
{
	const char *dir;
	size_t ps, len;
	int a, b;			/* a file and its clone */
	char *map_a, *map_b;
	int pipe[2];
	struct dax_kwatch kwatch;
};

static int fill_file(int fd, size_t off, size_t len, int byte)
{
	char buf[64 * 1024];
	size_t done;
	ssize_t n;

	memset(buf, byte, sizeof(buf));
	for (done = 0; done < len; done += n) {
		n = pwrite(fd, buf, len - done < sizeof(buf) ? len - done : sizeof(buf),
			   off + done);
		if (n <= 0)
			return -1;
	}
	return 0;
}

/* Map @fd PTE-only, read-only and shared, and fault in every page. */
static char *map_and_read(int fd, size_t len, size_t ps)
{
	char *map = dax_map_file_at(fd, len, PROT_READ, MAP_SHARED, 0, false);
	size_t off;

	if (map == MAP_FAILED)
		return map;
	for (off = 0; off < len; off += ps)
		dax_touch(map + off);
	return map;
}

/* First page whose mapping differs from read(2) of the file, or -1. */
static long first_stale_page(int fd, const char *map, size_t len, size_t ps)
{
	char buf[4096 * 4];
	size_t off;

	if (ps > sizeof(buf))
		return 0;
	for (off = 0; off < len; off += ps) {
		if (pread(fd, buf, ps, off) != (ssize_t)ps ||
		    memcmp(buf, map + off, ps))
			return off / ps;
	}
	return -1;
}

/* Read /proc/@pid/@file into @buf, NUL-terminated: 0, or -1. */
static int read_proc(pid_t pid, const char *file, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* CPU time (user + system) of @pid in milliseconds, or -1. */
static long cpu_ms(pid_t pid)
{
	unsigned long utime, stime;
	char buf[1024], *p;

	if (read_proc(pid, "stat", buf, sizeof(buf)))
		return -1;
	p = strrchr(buf, ')');
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &utime, &stime) != 2)
		return -1;
	return (utime + stime) * 1000 / sysconf(_SC_CLK_TCK);
}

/* Times @pid went to sleep (voluntary context switches), or -1. */
static long sleeps(pid_t pid)
{
	char buf[2048], *p;

	if (read_proc(pid, "status", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	return p ? strtol(p + 26, NULL, 10) : -1;
}

/* Splice page @idx of @map into the pipe: the pipe holds a page reference. */
static ssize_t splice_page(int pipe_w, char *map, size_t idx, size_t ps)
{
	struct iovec iov = { map + idx * ps, ps };

	return vmsplice(pipe_w, &iov, 1, 0);
}

static void close_pipe(int pipe[2])
{
	if (pipe[0] >= 0)
		close(pipe[0]);
	if (pipe[1] >= 0)
		close(pipe[1]);
	pipe[0] = pipe[1] = -1;
}

/*
 * In a child: map @fd with @prot (shared, PTE-only), fault page @idx in and
 * splice it into a new pipe @p of the child's own.  Returns the mapping, or
 * MAP_FAILED.
 */
static char *map_and_splice(int fd, size_t ps, int prot, size_t idx, int p[2])
{
	char *map = dax_map_file_at(fd, NPAGES * ps, prot, MAP_SHARED, 0, false);

	if (map == MAP_FAILED || pipe(p))
		return MAP_FAILED;
	dax_touch(map + idx * ps);
	if (splice_page(p[1], map, idx, ps) != (ssize_t)ps)
		return MAP_FAILED;
	return map;
}

/* A child that runs @op on @fd with no pipe of ours open: its exit code. */
static pid_t fork_child(FIXTURE_DATA(reflink) *self, int (*op)(int fd, size_t ps),
			int fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		close_pipe(self->pipe);
		_exit(op(fd, self->ps));
	}
	return pid;
}

static int cow_write_ref_page(int fd, size_t ps)
{
	char buf[4096 * 4];

	memset(buf, NEW_BYTE, ps);
	return pwrite(fd, buf, ps, REF_PAGE * ps) == (ssize_t)ps ? 0 : 1;
}

static int truncate_to_zero(int fd, size_t ps)
{
	return ftruncate(fd, 0) ? 1 : 0;
}

FIXTURE_SETUP(reflink)
{
	char why[256];

	self->a = self->b = -1;
	self->map_a = self->map_b = MAP_FAILED;
	self->pipe[0] = self->pipe[1] = -1;
	self->dir = dax_check_dir(why, sizeof(why));
	if (!self->dir)
		SKIP(return, "%s", why);
	self->ps = dax_page_size();
	self->len = NPAGES * self->ps;
	if (self->ps > 4096 * 4)
		SKIP(return, "its buffers hold 16 KiB, pages are %zu KiB", self->ps >> 10);
	self->a = dax_tmpfile(self->dir, 0);
	ASSERT_LE(0, self->a);
	ASSERT_EQ(0, fill_file(self->a, 0, self->len, OLD_BYTE));
	self->b = dax_tmpfile(self->dir, 0);
	ASSERT_LE(0, self->b);
	if (ioctl(self->b, FICLONE, self->a)) {
		if (errno == EOPNOTSUPP || errno == EINVAL || errno == EXDEV ||
		    errno == ENOTTY)
			SKIP(return, "no reflink on this filesystem (FICLONE: %s)",
			     strerror(errno));
		ASSERT_EQ(0, errno);
	}
	ASSERT_EQ(0, pipe(self->pipe));
	DAX_KWATCH_START(&self->kwatch);
}

FIXTURE_TEARDOWN(reflink)
{
	dax_kwatch_stop(&self->kwatch);
	close_pipe(self->pipe);
	if (self->map_a != MAP_FAILED)
		munmap(self->map_a, self->len);
	if (self->map_b != MAP_FAILED)
		munmap(self->map_b, self->len);
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
}

/* Unmap and map @fd again, read every page: the mapping as a new user sees it. */
#define REMAP_AND_COMPARE(map, fd, what) do {					\
	munmap(map, self->len);							\
	map = map_and_read(fd, self->len, self->ps);				\
	ASSERT_NE(MAP_FAILED, map);						\
	long __p = first_stale_page(fd, map, self->len, self->ps);		\
	EXPECT_EQ(-1, __p)							\
		TH_LOG("%s: page %ld of the mapping differs from read(2): %#x, " \
		       "read(2) has the new data", what, __p,			\
		       __p >= 0 ? (unsigned char)map[__p * self->ps] : 0);	\
} while (0)

/*
 * No extra reference: a CoW write must leave the mapping of the file on the
 * new block, and the clone's on the old one.
 */
TEST_F_TIMEOUT(reflink, cow_write_mapped, 60)
{
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	ASSERT_EQ(0, cow_write_ref_page(self->a, self->ps));
	EXPECT_EQ(-1, first_stale_page(self->a, self->map_a, self->len, self->ps));
	EXPECT_EQ(NEW_BYTE, self->map_a[REF_PAGE * self->ps]);
	EXPECT_EQ(OLD_BYTE, self->map_b[REF_PAGE * self->ps]);
	EXPECT_EQ(-1, first_stale_page(self->b, self->map_b, self->len, self->ps));
	REMAP_AND_COMPARE(self->map_a, self->a, "file, mapped again");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * A CoW write to a page that a pipe references.  write(2) may wait for the
 * reference (it must then end when the pipe lets go of the page) or not, but
 * the file's mapping must show what read(2) shows, and keep doing so after
 * the old block is freed and taken by another file.
 */
TEST_F_TIMEOUT(reflink, cow_write_referenced_page, 120)
{
	int status, other;
	char buf[4096 * 4];
	pid_t pid;
	bool waited;

	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_a, REF_PAGE, self->ps));

	pid = fork_child(self, cow_write_ref_page, self->a);
	ASSERT_LT(0, pid);
	waited = !dax_wait_exit(pid, 2.0, &status);
	if (!waited) {
		ASSERT_EQ(0, status);
		/* The old block is still referenced by the pipe. */
		REMAP_AND_COMPARE(self->map_a, self->a, "CoW write, pipe still open");
	} else {
		TH_LOG("write(2) waits for the pipe's reference to the old block");
	}
	/* Drain the pipe: the page reference goes. */
	ASSERT_EQ(self->ps, read(self->pipe[0], buf, self->ps));
	close_pipe(self->pipe);
	if (waited) {
		ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
			TH_LOG("write(2) still waits 10 s after the reference went");
		ASSERT_EQ(0, status);
	}
	REMAP_AND_COMPARE(self->map_a, self->a, "CoW write, pipe drained");

	/* Free the old block and let another file take the space. */
	close(self->b);
	self->b = -1;
	other = dax_tmpfile(self->dir, 0);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, fill_file(other, 0, 64 * SZ_1M, OTHER_BYTE));
	fsync(other);
	close(other);
	REMAP_AND_COMPARE(self->map_a, self->a, "old block freed and reused");
	EXPECT_NE(OTHER_BYTE, self->map_a[REF_PAGE * self->ps]);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * Wait 2 s for child @pid running @what: true if it exited (*@status set),
 * else false, having checked that it sleeps rather than spins meanwhile
 * (the CPU time it used in these 2 s, not what it used before).  The log
 * line gives the CPU time and the number of times it went to sleep, which
 * is the number of times it woke up to check again.
 */
static bool child_exits_or_sleeps(struct __test_metadata *_metadata, pid_t pid,
				  int *status, const char *what)
{
	long ms0 = cpu_ms(pid), n0 = sleeps(pid), ms, n;

	if (dax_wait_exit(pid, 2.0, status))
		return true;
	ms = cpu_ms(pid);
	n = sleeps(pid);
	EXPECT_LE(0, ms0);
	EXPECT_LE(0, ms);
	EXPECT_GT(1000, ms - ms0)
		TH_LOG("%s used %ld ms of CPU in 2 s: it spins instead of sleeping",
		       what, ms - ms0);
	TH_LOG("%s waits: %ld ms of CPU, %ld sleeps in 2 s", what, ms - ms0,
	       n - n0);
	return false;
}

/*
 * Truncate of a file whose page a pipe references, the clone not mapping it:
 * the folio is the file's alone, so truncate must wait for the reference
 * (once the file lets go of the block, the clone writes it in place, which
 * the reference must not see), in a sleep (not on the CPU) that SIGKILL
 * ends, and a truncate that waits ends once the pipe lets go of the page
 * (the last reference goes through put_page(), which frees the folio and
 * wakes the waiter).
 */
TEST_F_TIMEOUT(reflink, truncate_shared_referenced_page, 120)
{
	int status;
	pid_t pid;

	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_a, REF_PAGE, self->ps));

	pid = fork_child(self, truncate_to_zero, self->a);
	ASSERT_LT(0, pid);
	ASSERT_FALSE(child_exits_or_sleeps(_metadata, pid, &status, "truncate"))
		TH_LOG("truncate did not wait for the page in the pipe");
	kill(pid, SIGKILL);
	ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
		TH_LOG("truncate ignored SIGKILL for 10 s");

	pid = fork_child(self, truncate_to_zero, self->a);
	ASSERT_LT(0, pid);
	ASSERT_FALSE(dax_wait_exit(pid, 1.0, &status))
		TH_LOG("the second truncate did not wait for the page in the pipe");
	close_pipe(self->pipe);
	ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
		TH_LOG("truncate still waits 10 s after the reference went");
	ASSERT_EQ(0, status);

	/* The clone keeps its data. */
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	EXPECT_EQ(OLD_BYTE, self->map_b[REF_PAGE * self->ps]);
	EXPECT_EQ(-1, first_stale_page(self->b, self->map_b, self->len, self->ps));
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * A page of the clone that the clone's reader holds in a pipe, while the file
 * maps the shared page too.  A CoW write(2) of the file over that page, or a
 * truncate of the file, may wait for the reference: once the file lets go of
 * the block, the clone writes it in place, which a reference taken while it
 * was shared must not see.  But the wait must sleep, and end once the pipe
 * lets go of the page, though the clone still maps it: that last put_page()
 * leaves the folio mapped and wakes nobody.
 */
static void clone_ref_op(FIXTURE_DATA(reflink) *self,
			 struct __test_metadata *_metadata,
			 int (*op)(int fd, size_t ps), const char *what)
{
	int status;
	pid_t pid;

	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_b, REF_PAGE, self->ps));

	pid = fork_child(self, op, self->a);
	ASSERT_LT(0, pid);
	if (!child_exits_or_sleeps(_metadata, pid, &status, what)) {
		close_pipe(self->pipe);
		if (!dax_wait_exit(pid, 10.0, &status)) {
			kill(pid, SIGKILL);
			dax_wait_exit(pid, 10.0, &status);
			ASSERT_TRUE(false)
				TH_LOG("%s still waits 10 s after the clone's pipe closed", what);
		}
		TH_LOG("%s waited for the clone's pipe", what);
	}
	ASSERT_EQ(0, status);
	close_pipe(self->pipe);

	/* The clone keeps its data, through its mapping and read(2). */
	EXPECT_EQ(OLD_BYTE, self->map_b[REF_PAGE * self->ps]);
	EXPECT_EQ(-1, first_stale_page(self->b, self->map_b, self->len, self->ps));
}

TEST_F_TIMEOUT(reflink, cow_write_clone_referenced_page, 60)
{
	clone_ref_op(self, _metadata, cow_write_ref_page, "CoW write(2)");
	REMAP_AND_COMPARE(self->map_a, self->a, "CoW write, clone's page in a pipe");
	EXPECT_EQ(NEW_BYTE, self->map_a[REF_PAGE * self->ps]);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

TEST_F_TIMEOUT(reflink, truncate_clone_referenced_page, 60)
{
	clone_ref_op(self, _metadata, truncate_to_zero, "truncate");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* The descriptor FICLONE clones from, in clone_into()'s child. */
static int clone_src = -1;

static int clone_into(int fd, size_t ps)
{
	return ioctl(fd, FICLONE, clone_src) ? 1 : 0;
}

/*
 * FICLONE into a file one of whose pages a pipe references.  xfs locks the two
 * files' MMAPLOCKs in inode number order and breaks the DAX layout of each; for
 * the second file it cannot wait with the first file's lock held.  It must
 * still sleep rather than spin until the reference goes, obey SIGKILL, and
 * end once the pipe lets go of the page.  The page spliced is one of the file
 * with the higher inode number, the second that xfs locks.
 */
TEST_F_TIMEOUT(reflink, clone_into_referenced_page, 120)
{
	struct stat sa, sb;
	int status, hi;
	bool killed;
	pid_t pid;
	char **map;

	ASSERT_EQ(0, fstat(self->a, &sa));
	ASSERT_EQ(0, fstat(self->b, &sb));
	hi = sa.st_ino > sb.st_ino ? self->a : self->b;
	clone_src = hi == self->a ? self->b : self->a;
	map = hi == self->a ? &self->map_a : &self->map_b;
	*map = map_and_read(hi, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, *map);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], *map, REF_PAGE, self->ps));

	pid = fork_child(self, clone_into, hi);
	ASSERT_LT(0, pid);
	if (child_exits_or_sleeps(_metadata, pid, &status, "FICLONE")) {
		/* Not an error by itself: the page is the clone's too. */
		TH_LOG("FICLONE did not wait for the page in the pipe");
	} else {
		kill(pid, SIGKILL);
		killed = dax_wait_exit(pid, 10.0, &status);
		EXPECT_TRUE(killed) TH_LOG("FICLONE ignored SIGKILL for 10 s");
		close_pipe(self->pipe);
		if (!killed)
			ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
				TH_LOG("FICLONE still runs 10 s after the pipe closed");

		ASSERT_EQ(0, pipe(self->pipe));
		ASSERT_EQ(self->ps, splice_page(self->pipe[1], *map, REF_PAGE, self->ps));
		pid = fork_child(self, clone_into, hi);
		ASSERT_LT(0, pid);
		if (!dax_wait_exit(pid, 1.0, &status)) {
			close_pipe(self->pipe);
			ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
				TH_LOG("FICLONE still waits 10 s after the reference went");
		}
	}
	ASSERT_EQ(0, status);
	close_pipe(self->pipe);

	REMAP_AND_COMPARE(*map, hi, "file cloned into");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * splice_then_cow_write()'s clone, its pipe to the parent, and whether it
 * stores through its mapping (a CoW write fault) instead of calling write(2).
 */
static int own_ref_clone = -1;
static int own_ref_ready = -1;
static bool own_ref_store;

/*
 * Fork a child that runs @op on @fd and writes a byte to own_ref_ready once
 * it has set up what the test needs; return when it has.  Returns the pid,
 * or -1 if the child went before it was ready.
 */
static pid_t fork_child_ready(FIXTURE_DATA(reflink) *self,
			      int (*op)(int fd, size_t ps), int fd)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready))
		return -1;
	own_ref_ready = ready[1];
	pid = fork_child(self, op, fd);
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

/*
 * A child that splices a page of its own shared mapping of @fd into a pipe
 * of its own, tells the parent, and writes that page: the only reference in
 * the write's way is one the writer holds itself.  If the write returns, the
 * clone's owner writes the clone's page in place, and the child then reads
 * its pipe: what the pipe shows must be this file's, old or new, never the
 * clone's later data (exit 4).
 */
static int splice_then_cow_write(int fd, size_t ps)
{
	int prot = own_ref_store ? PROT_READ | PROT_WRITE : PROT_READ;
	char buf[4096 * 4], *map;
	int p[2];

	map = map_and_splice(fd, ps, prot, REF_PAGE, p);
	if (map == MAP_FAILED)
		return 2;
	if (write(own_ref_ready, "w", 1) != 1)
		return 2;
	if (own_ref_store)
		__atomic_store_n(map + REF_PAGE * ps, NEW_BYTE, __ATOMIC_RELAXED);
	else if (cow_write_ref_page(fd, ps))
		return 1;
	memset(buf, OTHER_BYTE, ps);
	if (pwrite(own_ref_clone, buf, ps, REF_PAGE * ps) != (ssize_t)ps)
		return 2;
	if (read(p[0], buf, ps) != (ssize_t)ps)
		return 3;
	return buf[0] == OTHER_BYTE ? 4 : 0;
}

/*
 * A CoW write(2) of a page that the writer itself keeps in a pipe.  Writing
 * at once means letting the old block go under the pipe's reference: once
 * the file lets go of it, the clone writes it in place (or frees it), and
 * the pipe hands out data that is no longer this file's, which the child
 * checks.  A reference cannot be traced to its holder, so a kernel may wait
 * for this one as for any other, as truncate does: the write must then
 * sleep rather than spin, and SIGKILL must end it, the file and the clone
 * as they were.
 */
static void own_referenced(FIXTURE_DATA(reflink) *self,
			   struct __test_metadata *_metadata, bool store,
			   const char *what)
{
	char buf[4096 * 4];
	bool wrote = true;
	int status;
	size_t i;
	pid_t pid;

	own_ref_clone = self->b;
	own_ref_store = store;
	pid = fork_child_ready(self, splice_then_cow_write, self->a);
	ASSERT_LT(0, pid) TH_LOG("the child died before its write");

	if (!child_exits_or_sleeps(_metadata, pid, &status, what)) {
		TH_LOG("%s waits; SIGKILL must end it", what);
		kill(pid, SIGKILL);
		ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
			TH_LOG("%s ignored SIGKILL for 10 s", what);
		wrote = !WIFSIGNALED(status);
		if (!wrote)
			ASSERT_EQ(SIGKILL, WTERMSIG(status));
	}
	if (wrote) {
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_NE(4, WEXITSTATUS(status))
			TH_LOG("%s did not wait; the pipe then showed the clone's write",
			       what);
		ASSERT_EQ(0, WEXITSTATUS(status));
	}

	/* The file: the page written or as it was, the rest as it was. */
	ASSERT_EQ(self->ps, pread(self->a, buf, self->ps, REF_PAGE * self->ps));
	for (i = 0; i < self->ps; i++)
		ASSERT_EQ(wrote ? NEW_BYTE : OLD_BYTE, buf[i])
			TH_LOG("byte %zu of the page after a %s write", i,
			       wrote ? "completed" : "killed");
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	EXPECT_EQ(-1, first_stale_page(self->a, self->map_a, self->len, self->ps));
	EXPECT_EQ(OLD_BYTE, self->map_a[(REF_PAGE + 1) * self->ps]);

	/* The clone: its own data (written over by the child if it wrote). */
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	EXPECT_EQ(wrote ? OTHER_BYTE : OLD_BYTE, self->map_b[REF_PAGE * self->ps]);
	EXPECT_EQ(-1, first_stale_page(self->b, self->map_b, self->len, self->ps));
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

TEST_F_TIMEOUT(reflink, cow_write_own_referenced_page, 60)
{
	own_referenced(self, _metadata, false,
		       "CoW write(2) of a page in the writer's own pipe");
}

/* The shared mapping that store_ref_page() stores through, and the byte. */
static char *fault_map;
static char store_byte = NEW_BYTE;

/* A store into REF_PAGE through fault_map: a CoW write fault. */
static int store_ref_page(int fd, size_t ps)
{
	__atomic_store_n(fault_map + REF_PAGE * ps, store_byte, __ATOMIC_RELAXED);
	return 0;
}

/* Give @fd a CoW extent size hint of @bytes: 0, or -errno. */
static int set_cowextsize(int fd, unsigned int bytes)
{
	struct fsxattr fsx;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx))
		return -errno;
	fsx.fsx_xflags |= FS_XFLAG_COWEXTSIZE;
	fsx.fsx_cowextsize = bytes;
	return ioctl(fd, FS_IOC_FSSETXATTR, &fsx) ? -errno : 0;
}

/*
 * A store through the file's mapping into REF_PAGE while a pipe references
 * the page: a write fault that copies the page to a new block, as write(2)
 * does, after which the old block belongs to the clone (@unshared false: the
 * clone writes it in place) or is free (@unshared true: the clone gave up its
 * share first, and the file's CoW extent size hint preallocated CoW blocks
 * over the page, so the page is copied on write although it is the file's
 * alone; another file then takes the space).  The fault may wait for the
 * reference, and must then end once the pipe lets go of the page; if it does
 * not wait, what the pipe hands out must still be this file's data, never
 * what the block holds later.
 */
static void cow_fault_referenced(FIXTURE_DATA(reflink) *self,
				 struct __test_metadata *_metadata, bool unshared)
{
	char buf[4096 * 4];
	int status, ret, other;
	pid_t pid;

	ret = set_cowextsize(self->a, 32 * self->ps);
	if (ret)
		SKIP(return, "no CoW extent size hint: %s", strerror(-ret));
	if (unshared)
		ASSERT_EQ(0, fill_file(self->b, self->ps, 31 * self->ps, OLD_BYTE));
	/* CoW page 0: the hint preallocates CoW blocks over pages 0-31. */
	ASSERT_EQ(0, fill_file(self->a, 0, self->ps, OLD_BYTE));
	self->map_a = dax_map_file_at(self->a, self->len, PROT_READ | PROT_WRITE,
				      MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_EQ(OLD_BYTE, dax_touch(self->map_a + REF_PAGE * self->ps));
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_a, REF_PAGE, self->ps));

	fault_map = self->map_a;
	pid = fork_child(self, store_ref_page, self->a);
	ASSERT_LT(0, pid);
	if (!child_exits_or_sleeps(_metadata, pid, &status, "CoW write fault")) {
		TH_LOG("the CoW write fault waits for the pipe's reference");
		ASSERT_EQ(self->ps, read(self->pipe[0], buf, self->ps));
		EXPECT_EQ(OLD_BYTE, buf[0]);
		close_pipe(self->pipe);
		ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
			TH_LOG("the fault still waits 10 s after the reference went");
	}
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	if (self->pipe[0] >= 0) {
		/* The fault did not wait: the old block may be reused now. */
		if (unshared) {
			other = dax_tmpfile(self->dir, 0);
			ASSERT_LE(0, other);
			ASSERT_EQ(0, fill_file(other, 0, 64 * SZ_1M, OTHER_BYTE));
			close(other);
		} else {
			ASSERT_EQ(0, fill_file(self->b, REF_PAGE * self->ps, self->ps,
					       OTHER_BYTE));
		}
		ASSERT_EQ(self->ps, read(self->pipe[0], buf, self->ps));
		EXPECT_NE(OTHER_BYTE, buf[0])
			TH_LOG("the pipe hands out another file's data");
		close_pipe(self->pipe);
	}
	EXPECT_EQ(NEW_BYTE, self->map_a[REF_PAGE * self->ps]);
	REMAP_AND_COMPARE(self->map_a, self->a, "CoW write fault, pipe closed");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

TEST_F_TIMEOUT(reflink, cow_fault_referenced_page, 60)
{
	cow_fault_referenced(self, _metadata, false);
}

TEST_F_TIMEOUT(reflink, cow_fault_referenced_unshared_page, 120)
{
	cow_fault_referenced(self, _metadata, true);
}

/*
 * A CoW write(2) and a CoW write fault on the same page, which a pipe
 * references: the write(2) has its new block allocated when it starts to wait
 * for the reference, and the fault, which finds that block, may give up and
 * wait too; it is killed while it waits.  Once the pipe closes, the write(2)
 * must complete into the file: read(2) then returns its data (v7.3 completes
 * both at once, and the fault's store lands on the written page).
 */
TEST_F_TIMEOUT(reflink, cow_write_and_killed_fault, 60)
{
	char buf[4096 * 4];
	int status, fstatus;
	pid_t writer, faulter;
	size_t i;

	self->map_a = dax_map_file_at(self->a, self->len, PROT_READ | PROT_WRITE,
				      MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_EQ(OLD_BYTE, dax_touch(self->map_a + REF_PAGE * self->ps));
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_a, REF_PAGE, self->ps));

	writer = fork_child(self, cow_write_ref_page, self->a);
	ASSERT_LT(0, writer);
	if (child_exits_or_sleeps(_metadata, writer, &status, "CoW write(2)"))
		writer = 0;
	fault_map = self->map_a;
	store_byte = OTHER_BYTE;
	faulter = fork_child(self, store_ref_page, self->a);
	ASSERT_LT(0, faulter);
	if (!child_exits_or_sleeps(_metadata, faulter, &fstatus, "CoW write fault")) {
		kill(faulter, SIGKILL);
		ASSERT_TRUE(dax_wait_exit(faulter, 10.0, &fstatus))
			TH_LOG("the fault ignored SIGKILL for 10 s");
	}
	close_pipe(self->pipe);
	if (writer)
		ASSERT_TRUE(dax_wait_exit(writer, 10.0, &status))
			TH_LOG("write(2) still waits 10 s after the reference went");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	/* The write's data; the fault, if it was not killed, stored byte 0. */
	ASSERT_EQ(self->ps, pread(self->a, buf, self->ps, REF_PAGE * self->ps));
	EXPECT_TRUE(buf[0] == NEW_BYTE || buf[0] == OTHER_BYTE);
	for (i = 1; i < self->ps && buf[i] == NEW_BYTE; i++)
		;
	ASSERT_EQ(self->ps, i)
		TH_LOG("byte %zu of the page written: %#x, not the write's data %#x",
		       i, (unsigned char)buf[i], NEW_BYTE);
	REMAP_AND_COMPARE(self->map_a, self->a, "CoW write(2) and a killed fault");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* A store into a page that the storing process keeps in a pipe itself. */
TEST_F_TIMEOUT(reflink, cow_fault_own_referenced_page, 60)
{
	own_referenced(self, _metadata, true,
		       "CoW write fault on a page in the process's own pipe");
}

/*
 * A child that maps @fd, vmsplices REF_PAGE into a pipe of its own and makes
 * the kernel store into that page with futex(FUTEX_WAKE_OP): the fault comes
 * from fixup_user_fault(), which may not drop the mmap_lock, and futex
 * faults in again for as long as the fault reports the page handled.
 */
static int splice_then_futex_store(int fd, size_t ps)
{
	static int word;
	char *map;
	int p[2];

	map = map_and_splice(fd, ps, PROT_READ | PROT_WRITE, REF_PAGE, p);
	if (map == MAP_FAILED)
		return 2;
	if (write(own_ref_ready, "w", 1) != 1)
		return 2;
	syscall(SYS_futex, &word, FUTEX_WAKE_OP_PRIVATE, 0, 0,
		map + REF_PAGE * ps, FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
	return 0;
}

/*
 * The kernel's own store into a page that the process keeps in a pipe: the
 * CoW fault waits for the reference with the mmap_lock held, as the caller
 * cannot retry; SIGKILL must end it, and the process with it.
 */
TEST_F_TIMEOUT(reflink, cow_fault_from_kernel_killed, 60)
{
	int status;
	pid_t pid;

	pid = fork_child_ready(self, splice_then_futex_store, self->a);
	ASSERT_LT(0, pid) TH_LOG("the child died before its store");
	if (!child_exits_or_sleeps(_metadata, pid, &status, "futex store"))
		kill(pid, SIGKILL);
	ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
		TH_LOG("the futex store into a page in the process's own pipe %s",
		       "went on 10 s after SIGKILL");
	REMAP_AND_COMPARE(self->map_a, self->a, "futex store killed");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* A thread that sets its clear_child_tid to the word at @arg and waits. */
static void *set_tid_and_wait(void *arg)
{
	syscall(SYS_set_tid_address, arg);
	pause();
	return NULL;
}

/*
 * A child whose two threads have their clear_child_tid in REF_PAGE of its
 * mapping of @fd, which it keeps in a pipe of its own, and that then exits:
 * the exit stores 0 there, a CoW fault, before it closes the pipe.
 */
static int splice_then_exit_with_tid(int fd, size_t ps)
{
	pthread_t tid;
	char *map;
	int p[2];

	map = map_and_splice(fd, ps, PROT_READ | PROT_WRITE, REF_PAGE, p);
	if (map == MAP_FAILED)
		return 2;
	if (pthread_create(&tid, NULL, set_tid_and_wait, map + REF_PAGE * ps))
		return 2;
	syscall(SYS_set_tid_address, map + REF_PAGE * ps + sizeof(int));
	usleep(100 * 1000);
	return 0;
}

/*
 * The exit of a process whose clear_child_tid lies in a copied-on-write page
 * that the process keeps in its own pipe: the exit stores there before it
 * closes the pipe, and no signal reaches an exiting process, so the store
 * must not wait for the pipe.  The process must be gone within 10 s.
 */
TEST_F_TIMEOUT(reflink, cow_fault_at_exit, 60)
{
	int status;
	pid_t pid;

	pid = fork_child(self, splice_then_exit_with_tid, self->a);
	ASSERT_LT(0, pid);
	ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
		TH_LOG("a process storing into a page of its own pipe at exit %s",
		       "is still there after 10 s");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	REMAP_AND_COMPARE(self->map_a, self->a, "exit with clear_child_tid in a CoW page");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

static void ignore_signal(int sig)
{
}

/*
 * A child that keeps REF_PAGE of its mapping of @fd in a pipe of its own and
 * makes the kernel store into it with read(2) from /dev/zero: a fault from
 * kernel mode, which the child's signals interrupt.
 */
static int splice_then_read_into(int fd, size_t ps)
{
	struct sigaction sa = { .sa_handler = ignore_signal };
	int p[2], zero = open("/dev/zero", O_RDONLY);
	char *map;

	if (zero < 0 || sigaction(SIGUSR1, &sa, NULL))
		return 2;
	map = map_and_splice(fd, ps, PROT_READ | PROT_WRITE, REF_PAGE, p);
	if (map == MAP_FAILED)
		return 2;
	if (write(own_ref_ready, "w", 1) != 1)
		return 2;
	read(zero, map + REF_PAGE * ps, ps);
	return 0;
}

/*
 * The kernel's store (read(2) into the mapping) into a page that the process
 * keeps in its own pipe waits for the pipe; a signal that is not fatal must
 * not turn the wait into a loop on the CPU (a fault from kernel mode retries
 * at once), and SIGKILL must end it.
 */
TEST_F_TIMEOUT(reflink, cow_fault_from_kernel_signalled, 60)
{
	int status;
	pid_t pid;

	pid = fork_child_ready(self, splice_then_read_into, self->a);
	ASSERT_LT(0, pid) TH_LOG("the child died before its read");
	if (!child_exits_or_sleeps(_metadata, pid, &status, "read(2) into the page")) {
		kill(pid, SIGUSR1);
		if (!child_exits_or_sleeps(_metadata, pid, &status,
					   "read(2) into the page, after a signal"))
			kill(pid, SIGKILL);
	}
	ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
		TH_LOG("the read(2) into a page in the process's own pipe %s",
		       "went on 10 s after SIGKILL");
	REMAP_AND_COMPARE(self->map_a, self->a, "read(2) into a CoW page, signalled");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

struct mkwrite_waiter {
	char *addr;
	bool done;
};

static void *store_and_mark(void *arg)
{
	struct mkwrite_waiter *w = arg;

	__atomic_store_n(w->addr, NEW_BYTE, __ATOMIC_RELAXED);
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A thread stores into a page of its process's own mapping that the process
 * keeps in a pipe; a second thread then changes the protection of the VMA
 * (munmap(), mprotect() and mremap() take the VMA's write lock) and drains
 * the pipe.  The store may wait for the pipe, but not with the VMA or the
 * mmap_lock held: the mprotect() must return while the store waits, or the
 * process cannot drain its pipe and stays stuck until it is killed.  Exit 1
 * if the mprotect() took more than 3 s.
 */
static int store_then_mprotect(int fd, size_t ps)
{
	size_t len = NPAGES * ps;
	struct mkwrite_waiter w;
	char buf[4096 * 4], *map;
	pthread_t tid;
	double t;
	int p[2];

	map = map_and_splice(fd, ps, PROT_READ | PROT_WRITE, REF_PAGE, p);
	if (map == MAP_FAILED)
		return 2;
	w.addr = map + REF_PAGE * ps;
	w.done = false;
	if (pthread_create(&tid, NULL, store_and_mark, &w))
		return 2;
	sleep(1);
	t = dax_now();
	if (mprotect(map, len, PROT_READ | PROT_WRITE | PROT_EXEC))
		return 2;
	t = dax_now() - t;
	if (read(p[0], buf, ps) != (ssize_t)ps)
		return 2;
	close(p[0]);
	close(p[1]);
	pthread_join(tid, NULL);
	return t > 3.0 ? 1 : 0;
}

TEST_F_TIMEOUT(reflink, cow_fault_waits_without_the_vma_lock, 60)
{
	int status;
	pid_t pid;

	pid = fork_child(self, store_then_mprotect, self->a);
	ASSERT_LT(0, pid);
	if (!dax_wait_exit(pid, 20.0, &status)) {
		kill(pid, SIGKILL);
		dax_wait_exit(pid, 10.0, &status);
		ASSERT_TRUE(false)
			TH_LOG("mprotect() of the VMA waited for a store %s",
			       "waiting for the process's own pipe");
	}
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_NE(1, WEXITSTATUS(status))
		TH_LOG("mprotect() of the VMA waited more than 3 s for the store's wait");
	ASSERT_EQ(0, WEXITSTATUS(status));
	REMAP_AND_COMPARE(self->map_a, self->a, "a store, an mprotect() and the pipe drained");
	EXPECT_EQ(NEW_BYTE, self->map_a[REF_PAGE * self->ps]);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * A store into the file's page while a reader of the clone keeps the clone's
 * page of the shared block in a pipe: the fault may wait, as the CoW write(2)
 * of cow_write_clone_referenced_page may, but the wait must end once the
 * clone's pipe closes, though the clone still maps the page.
 */
TEST_F_TIMEOUT(reflink, cow_fault_clone_referenced_page, 60)
{
	int status;
	pid_t pid;

	self->map_a = dax_map_file_at(self->a, self->len, PROT_READ | PROT_WRITE,
				      MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_EQ(OLD_BYTE, dax_touch(self->map_a + REF_PAGE * self->ps));
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_b, REF_PAGE, self->ps));

	fault_map = self->map_a;
	pid = fork_child(self, store_ref_page, self->a);
	ASSERT_LT(0, pid);
	if (!child_exits_or_sleeps(_metadata, pid, &status, "CoW write fault")) {
		TH_LOG("the CoW write fault waits for the clone's pipe");
		close_pipe(self->pipe);
		if (!dax_wait_exit(pid, 10.0, &status)) {
			kill(pid, SIGKILL);
			dax_wait_exit(pid, 10.0, &status);
			ASSERT_TRUE(false)
				TH_LOG("the fault still waits 10 s after the clone's pipe closed");
		}
	}
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	close_pipe(self->pipe);

	EXPECT_EQ(OLD_BYTE, self->map_b[REF_PAGE * self->ps]);
	EXPECT_EQ(-1, first_stale_page(self->b, self->map_b, self->len, self->ps));
	EXPECT_EQ(NEW_BYTE, self->map_a[REF_PAGE * self->ps]);
	REMAP_AND_COMPARE(self->map_a, self->a, "CoW write fault, clone's pipe closed");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* The page beside_ops() splice; the CoW writes write REF_PAGE. */
#define SPLICED_PAGE	0

/*
 * A child that maps @fd, splices SPLICED_PAGE of its mapping into a pipe of
 * its own and keeps it there while it CoW-writes REF_PAGE: a page of the same
 * block range that it does not write.
 */
static int splice_other_then_cow_write(int fd, size_t ps)
{
	char *map = map_and_read(fd, NPAGES * ps, ps);
	int p[2];

	if (map == MAP_FAILED || pipe(p))
		return 2;
	if (splice_page(p[1], map, SPLICED_PAGE, ps) != (ssize_t)ps)
		return 3;
	return cow_write_ref_page(fd, ps);
}

/*
 * A child that moves SPLICED_PAGE of its mapping of @fd into REF_PAGE of the
 * same file without a copy: vmsplice() it into a pipe, then splice() the pipe
 * into the file, whose write(2) of REF_PAGE copies on write while the pipe
 * holds the source page.
 */
static int splice_other_into_cow_page(int fd, size_t ps)
{
	char *map = map_and_read(fd, NPAGES * ps, ps);
	loff_t off = REF_PAGE * ps;
	int p[2];

	if (map == MAP_FAILED || pipe(p))
		return 2;
	if (splice_page(p[1], map, SPLICED_PAGE, ps) != (ssize_t)ps)
		return 3;
	return splice(p[0], NULL, fd, &off, ps, 0) == (ssize_t)ps ? 0 : 1;
}

/*
 * Run @op, a CoW write of REF_PAGE that leaves SPLICED_PAGE alone, in a child
 * while SPLICED_PAGE is held in a pipe (by this process, or by the child
 * itself, as @op says).  The write has no reason to wait: nothing references
 * what it writes, and the page held stays the file's.  If it waits anyway,
 * the wait must end once this process's pipe closes; a child holding its own
 * pipe is killed after 10 s.  The file's mapping must then show what read(2)
 * shows, and the clone (@clone_map, or read(2) alone) must keep its data.
 */
static void cow_write_beside(FIXTURE_DATA(reflink) *self,
			     struct __test_metadata *_metadata,
			     int (*op)(int fd, size_t ps), const char *what)
{
	int status;
	pid_t pid;
	bool done;

	pid = fork_child(self, op, self->a);
	ASSERT_LT(0, pid);
	done = dax_wait_exit(pid, 5.0, &status);
	if (!done) {
		close_pipe(self->pipe);
		if (!dax_wait_exit(pid, 10.0, &status)) {
			kill(pid, SIGKILL);
			dax_wait_exit(pid, 10.0, &status);
		}
	}
	ASSERT_TRUE(done)
		TH_LOG("%s of page %d waited 5 s for page %d, which it does not write",
		       what, REF_PAGE, SPLICED_PAGE);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	close_pipe(self->pipe);

	REMAP_AND_COMPARE(self->map_a, self->a, what);
	EXPECT_EQ(-1, first_stale_page(self->b, self->map_b, self->len, self->ps))
		TH_LOG("the clone lost its data");
	EXPECT_EQ(OLD_BYTE, self->map_b[REF_PAGE * self->ps]);
}

/*
 * A CoW write(2) of one page while another page of the file, which it does
 * not write, is held in a pipe by another process: the write must not wait.
 */
TEST_F_TIMEOUT(reflink, cow_write_beside_referenced_page, 60)
{
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_a, SPLICED_PAGE,
					self->ps));
	cow_write_beside(self, _metadata, cow_write_ref_page, "CoW write(2)");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* The same with the writer holding the other page in its own pipe. */
TEST_F_TIMEOUT(reflink, cow_write_beside_own_referenced_page, 60)
{
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	cow_write_beside(self, _metadata, splice_other_then_cow_write,
			 "CoW write(2) by the pipe's holder");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * The same with a reader of the clone holding the clone's page of the shared
 * block in a pipe.
 */
TEST_F_TIMEOUT(reflink, cow_write_beside_clone_referenced_page, 60)
{
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_b, SPLICED_PAGE,
					self->ps));
	cow_write_beside(self, _metadata, cow_write_ref_page,
			 "CoW write(2), the clone's page in a pipe");
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* A zero-copy copy of one page of the file to another, with splice(). */
TEST_F_TIMEOUT(reflink, splice_page_into_cow_page, 60)
{
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	cow_write_beside(self, _metadata, splice_other_into_cow_page,
			 "splice() of a page of the file");
	EXPECT_EQ(OLD_BYTE, self->map_a[REF_PAGE * self->ps]);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

struct racing_reader {
	const char *map;
	size_t len, ps;
	bool stop;
	long rounds;
};

/*
 * Touch every page of the mapping, again and again: faults on whatever the
 * writer has just unmapped.
 */
static void *read_mapping(void *arg)
{
	struct racing_reader *rd = arg;
	size_t off;

	while (!__atomic_load_n(&rd->stop, __ATOMIC_RELAXED)) {
		for (off = 0; off < rd->len; off += rd->ps)
			dax_touch(rd->map + off);
		rd->rounds++;
	}
	return NULL;
}

/*
 * Clone @a into @b, then overwrite all @len bytes of @a with @byte through
 * write(2), which copies every page on write: 0, or the errno of the step
 * that failed.
 */
static int clone_and_overwrite(int a, int b, char *buf, size_t len, int byte)
{
	if (ioctl(b, FICLONE, a))
		return errno;
	memset(buf, byte, len);
	if (pwrite(a, buf, len, 0) != (ssize_t)len)
		return errno ? errno : EIO;
	return 0;
}

/*
 * Clone the file, then overwrite all of it with write(2), which copies every
 * page on write, while a thread keeps reading the file through its mapping.
 * Right after each write, the mapping must show the new data: a read fault
 * that ran during the write and mapped an old block (which the clone owns
 * after the write) would leave it there.  DAX_RACE_SECONDS sets the duration
 * (default 10, 1..60).
 */
TEST_F_TIMEOUT(reflink, cow_write_racing_reader, DAX_RACE_TIMEOUT)
{
	long secs = dax_race_seconds(10);
	struct racing_reader rd = { .len = self->len, .ps = self->ps };
	char *buf = malloc(self->len);
	long iter = 0, stale = -1;
	time_t end = time(NULL) + secs;
	pthread_t tid;
	int byte = 0, err = 0;

	ASSERT_NE(NULL, buf);
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	rd.map = self->map_a;
	ASSERT_EQ(0, pthread_create(&tid, NULL, read_mapping, &rd));
	while (time(NULL) < end && stale < 0) {
		byte = 0x40 + iter++ % 0x80;
		err = clone_and_overwrite(self->a, self->b, buf, self->len,
					  byte);
		if (err)
			break;
		stale = first_stale_page(self->a, self->map_a, self->len, self->ps);
	}
	__atomic_store_n(&rd.stop, true, __ATOMIC_RELAXED);
	pthread_join(tid, NULL);
	free(buf);
	ASSERT_EQ(0, err)
		TH_LOG("clone or write failed in round %ld: %s", iter, strerror(err));
	EXPECT_EQ(-1, stale)
		TH_LOG("round %ld: page %ld maps the old block: %#x, read(2) %#x",
		       iter, stale, stale >= 0 ?
		       (unsigned char)self->map_a[stale * self->ps] : 0, byte);
	TH_LOG("%ld clone+write rounds, %ld reader passes", iter, rd.rounds);
	EXPECT_LT(0, rd.rounds);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/* The byte of each page that store_mapping() writes. */
#define STORE_OFF	100

/*
 * Store into every page of the mapping, again and again: write faults on
 * whatever the writer has just unmapped, each a CoW of its own while the
 * page is shared.
 */
static void *store_mapping(void *arg)
{
	struct racing_reader *st = arg;
	char *map = (char *)st->map;
	size_t off;

	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED)) {
		for (off = 0; off < st->len; off += st->ps)
			__atomic_store_n(map + off + STORE_OFF, 0x7f,
					 __ATOMIC_RELAXED);
		st->rounds++;
	}
	return NULL;
}

/*
 * The first page of the file whose bytes other than STORE_OFF are not all
 * @byte, or -1.
 */
static long first_page_not(int fd, size_t len, size_t ps, int byte)
{
	char buf[4096 * 4];
	size_t off, i;

	if (ps > sizeof(buf))
		return 0;
	for (off = 0; off < len; off += ps) {
		if (pread(fd, buf, ps, off) != (ssize_t)ps)
			return off / ps;
		for (i = 0; i < ps; i++)
			if (i != STORE_OFF && (unsigned char)buf[i] != byte)
				return off / ps;
	}
	return -1;
}

/*
 * Clone the file, then overwrite all of it with write(2), which copies every
 * page on write, while a thread keeps storing one byte into each page through
 * the file's mapping.  A write fault during the write(2) is given the CoW
 * blocks the write(2) is copying into; if it copies the old page into one
 * that the write(2) has filled already, the write's data is gone, though
 * write(2) returned success.  After each write, read(2) must return the
 * write's data everywhere but the stored byte.  DAX_RACE_SECONDS sets the
 * duration (default 10, 1..60).
 */
TEST_F_TIMEOUT(reflink, cow_write_racing_store, DAX_RACE_TIMEOUT)
{
	long secs = dax_race_seconds(10);
	struct racing_reader st = { .len = self->len, .ps = self->ps };
	char *buf = malloc(self->len);
	long iter = 0, lost = -1;
	time_t end = time(NULL) + secs;
	pthread_t tid;
	int byte = 0, err = 0;

	ASSERT_NE(NULL, buf);
	self->map_a = dax_map_file_at(self->a, self->len, PROT_READ | PROT_WRITE,
				      MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, self->map_a);
	st.map = self->map_a;
	ASSERT_EQ(0, pthread_create(&tid, NULL, store_mapping, &st));
	while (time(NULL) < end && lost < 0 &&
	       !dax_kwatch_complained(&self->kwatch)) {
		byte = 0x40 + iter++ % 0x80;
		err = clone_and_overwrite(self->a, self->b, buf, self->len,
					  byte);
		if (err)
			break;
		lost = first_page_not(self->a, self->len, self->ps, byte);
	}
	__atomic_store_n(&st.stop, true, __ATOMIC_RELAXED);
	pthread_join(tid, NULL);
	free(buf);
	ASSERT_EQ(0, err)
		TH_LOG("clone or write failed in round %ld: %s", iter, strerror(err));
	TH_LOG("%ld clone+write rounds, %ld store passes", iter, st.rounds);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
	EXPECT_EQ(-1, lost)
		TH_LOG("round %ld: page %ld lost the write's %#x: read(2) %#x",
		       iter, lost, byte, lost >= 0 ?
		       (unsigned char)self->map_a[lost * self->ps] : 0);
	EXPECT_LT(0, st.rounds);
}

/* Whether the first @len bytes of the file are all @byte. */
static bool file_is(int fd, size_t len, int byte)
{
	char buf[4096];
	size_t off, i;

	for (off = 0; off < len; off += sizeof(buf)) {
		if (pread(fd, buf, sizeof(buf), off) != sizeof(buf))
			return false;
		for (i = 0; i < sizeof(buf); i++)
			if ((unsigned char)buf[i] != byte)
				return false;
	}
	return true;
}

/*
 * A CoW write(2) from a source buffer that is not mapped yet: an anonymous
 * mapping never touched, then a mapping of the file itself never touched (its
 * pages still shared with the clone).  A write that copies with page faults
 * disabled must fault the buffer in and go on: each must write all of it.
 */
TEST_F(reflink, cow_write_from_unfaulted_buffers)
{
	char *anon, *self_map;

	anon = mmap(NULL, self->len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, anon);
	EXPECT_EQ((ssize_t)self->len, pwrite(self->a, anon, self->len, 0));
	munmap(anon, self->len);
	EXPECT_TRUE(file_is(self->a, self->len, 0));
	EXPECT_TRUE(file_is(self->b, self->len, OLD_BYTE));

	ASSERT_EQ(0, fill_file(self->a, 0, self->len, NEW_BYTE));
	ASSERT_EQ(0, ioctl(self->b, FICLONE, self->a));
	self_map = mmap(NULL, self->len, PROT_READ, MAP_SHARED, self->a, 0);
	ASSERT_NE(MAP_FAILED, self_map);
	EXPECT_EQ((ssize_t)self->len,
		  pwrite(self->a, self_map, self->len, 0));
	munmap(self_map, self->len);
	EXPECT_TRUE(file_is(self->a, self->len, NEW_BYTE));
	EXPECT_TRUE(file_is(self->b, self->len, NEW_BYTE));
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * Overwrite the file with write(2), which gives it new blocks of its own and
 * leaves its pages unmapped, then clone it again, round after round, while
 * one thread reads the file through its mapping and another reads the clone
 * through its own.  A read fault on the file that looked up a block before
 * the clone shared it, and that associates the page with the file after the
 * clone's fault associated it with the clone, takes the page from the clone
 * (the kernel warns in dax_associate_entry()).  After each round the clone's
 * mapping must equal read(2) of the clone.  DAX_RACE_SECONDS sets the
 * duration (default 10, 1..60).
 */
TEST_F_TIMEOUT(reflink, clone_racing_readers, DAX_RACE_TIMEOUT)
{
	long secs = dax_race_seconds(10);
	struct racing_reader ra = { .len = self->len, .ps = self->ps };
	struct racing_reader rb = { .len = self->len, .ps = self->ps };
	char *buf = malloc(self->len);
	long iter = 0, stale = -1;
	time_t end = time(NULL) + secs;
	pthread_t ta, tb;
	int byte = 0, err = 0;

	ASSERT_NE(NULL, buf);
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	self->map_b = map_and_read(self->b, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_b);
	ra.map = self->map_a;
	rb.map = self->map_b;
	ASSERT_EQ(0, pthread_create(&ta, NULL, read_mapping, &ra));
	ASSERT_EQ(0, pthread_create(&tb, NULL, read_mapping, &rb));
	while (time(NULL) < end && stale < 0 &&
	       !dax_kwatch_complained(&self->kwatch)) {
		byte = 0x40 + iter++ % 0x80;
		memset(buf, byte, self->len);
		if (pwrite(self->a, buf, self->len, 0) != (ssize_t)self->len) {
			err = errno ? errno : EIO;
			break;
		}
		if (ioctl(self->b, FICLONE, self->a)) {
			err = errno;
			break;
		}
		stale = first_stale_page(self->b, self->map_b, self->len, self->ps);
	}
	__atomic_store_n(&ra.stop, true, __ATOMIC_RELAXED);
	__atomic_store_n(&rb.stop, true, __ATOMIC_RELAXED);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	free(buf);
	ASSERT_EQ(0, err)
		TH_LOG("write or clone failed in round %ld: %s", iter, strerror(err));
	TH_LOG("%ld write+clone rounds, %ld and %ld reader passes", iter,
	       ra.rounds, rb.rounds);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
	EXPECT_EQ(-1, stale)
		TH_LOG("round %ld: page %ld of the clone's mapping: %#x, read(2) %#x",
		       iter, stale, stale >= 0 ?
		       (unsigned char)self->map_b[stale * self->ps] : 0, byte);
	EXPECT_LT(0, ra.rounds);
	EXPECT_LT(0, rb.rounds);
}

static int extend_past_eof(int fd, size_t ps)
{
	return pwrite(fd, "x", 1, 2 * NPAGES * ps) == 1 ? 0 : 1;
}

static int fault_first_page(int fd, size_t ps)
{
	char *map = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, 0);

	if (map == MAP_FAILED)
		return 1;
	return dax_touch(map) == OLD_BYTE ? 0 : 2;
}

/*
 * A write past EOF zeroes the rest of the EOF block, which copies it on
 * write when the block is shared.  With the EOF page spliced into a pipe,
 * that zeroing may wait for the pipe, but not with the fault lock held: a
 * fault on another page of the file must go through meanwhile.  The EOF
 * page then reads zeros past the old EOF through the mapping as through
 * read(2).
 */
TEST_F_TIMEOUT(reflink, zero_eof_referenced_page, 120)
{
	size_t eof = self->len - 1000, last = (eof - 1) / self->ps;
	int status, fstatus;
	pid_t pid, faulter;
	char buf[4096 * 4], *map;
	bool waited, faulted;

	/*
	 * Clone again after the truncate, so that the EOF block is shared;
	 * an unaligned EOF can only be cloned onto the end of the clone.
	 */
	ASSERT_EQ(0, ftruncate(self->a, eof));
	/*
	 * Bytes past EOF in the EOF page, written through a mapping: the old
	 * block keeps them, the zeroing clears them in the new one, so a
	 * mapping left on the old block shows them where read(2) has zeros.
	 */
	map = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->a, 0);
	ASSERT_NE(MAP_FAILED, map);
	memset(map + eof, OTHER_BYTE, (last + 1) * self->ps - eof);
	ASSERT_EQ(0, msync(map, self->len, MS_SYNC));
	munmap(map, self->len);
	ASSERT_EQ(0, ftruncate(self->b, 0));
	ASSERT_EQ(0, ioctl(self->b, FICLONE, self->a));
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	ASSERT_EQ(self->ps, splice_page(self->pipe[1], self->map_a, last, self->ps));

	pid = fork_child(self, extend_past_eof, self->a);
	ASSERT_LT(0, pid);
	waited = !dax_wait_exit(pid, 2.0, &status);
	if (waited) {
		TH_LOG("write(2) past EOF waits for the pipe's reference");
		faulter = fork_child(self, fault_first_page, self->a);
		ASSERT_LT(0, faulter);
		faulted = dax_wait_exit(faulter, 5.0, &fstatus);
		EXPECT_TRUE(faulted)
			TH_LOG("a read fault waited 5 s for the write waiting for the pipe");
		ASSERT_EQ(self->ps, read(self->pipe[0], buf, self->ps));
		close_pipe(self->pipe);
		ASSERT_TRUE(dax_wait_exit(pid, 10.0, &status))
			TH_LOG("write(2) still waits 10 s after the reference went");
		if (!faulted)
			ASSERT_TRUE(dax_wait_exit(faulter, 10.0, &fstatus));
		EXPECT_EQ(0, fstatus);
	}
	ASSERT_EQ(0, status);
	munmap(self->map_a, self->len);
	self->map_a = map_and_read(self->a, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, self->map_a);
	EXPECT_EQ(-1, first_stale_page(self->a, self->map_a, self->len, self->ps));
	EXPECT_EQ(0, self->map_a[eof]);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * A CoW write fault through a mapping that cannot use PMDs, into a block that
 * a PMD entry of the file maps (xfs with PMD-aligned extents, mkfs -d su=2m):
 * the new entry is for one page, and must not take the place of the PMD
 * entry at its other indices.  A read fault through such a mapping must
 * leave the PMD entry as it is.  Whatever maps the file afterwards must show
 * what read(2) shows, the clone must keep its data (read(2)), and closing
 * the file (evicting it) must not find entries that the mapping does not
 * count.
 */
FIXTURE(pmd_cow)
{
	int a, b;
	size_t ps, pmd, len;
	uint64_t seed;
	char *map;
	long fault_around;	/* value to restore, or -1 */
	struct dax_kwatch kwatch;
};

FIXTURE_SETUP(pmd_cow)
{
	const char *dir;
	char why[256];
	int ret;

	self->a = self->b = -1;
	self->map = MAP_FAILED;
	self->fault_around = -1;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "no transparent hugepages, so no DAX PMDs");
	self->ps = dax_page_size();
	self->pmd = dax_pmd_size();
	self->len = 2 * self->pmd;
	if (self->ps > 4096 * 4)
		SKIP(return, "its buffers hold 16 KiB, pages are %zu KiB", self->ps >> 10);
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	self->a = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->a);
	fallocate(self->a, 0, 0, self->len);
	ASSERT_EQ(0, dax_write_pattern(self->a, self->seed, 0, self->len / self->ps));
	self->b = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->b);
	if (ioctl(self->b, FICLONE, self->a)) {
		if (errno == EOPNOTSUPP || errno == EINVAL || errno == EXDEV ||
		    errno == ENOTTY)
			SKIP(return, "no reflink on this filesystem (FICLONE: %s)",
			     strerror(errno));
		ASSERT_EQ(0, errno);
	}
	ret = dax_extents_pmd_aligned(self->a, self->len, self->pmd);
	if (ret < 0)
		SKIP(return, "FIEMAP: %s", strerror(-ret));
	if (!ret)
		SKIP(return, "the filesystem did not allocate PMD-aligned extents");
	self->fault_around = dax_fault_around_get();
	DAX_KWATCH_START(&self->kwatch);
}

FIXTURE_TEARDOWN(pmd_cow)
{
	dax_kwatch_stop(&self->kwatch);
	if (self->fault_around >= 0)
		dax_fault_around_set(self->fault_around);
	if (self->map != MAP_FAILED)
		munmap(self->map, self->len);
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
}

/* Map @fd (@aligned: with PMDs if it can) and compare it with read(2). */
static long remap_first_stale_page(FIXTURE_DATA(pmd_cow) *self, int fd,
				   bool aligned)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->len);
	self->map = dax_map_file_at(fd, self->len, PROT_READ, MAP_SHARED, 0,
				    aligned);
	if (self->map == MAP_FAILED)
		return -2;
	return first_stale_page(fd, self->map, self->len, self->ps);
}

TEST_F_TIMEOUT(pmd_cow, cow_fault_into_pmd_entry, 60)
{
	size_t npages = self->len / self->ps, off;
	long faults, stale;
	char *pte, *buf;

	self->map = dax_map_file_at(self->a, self->len, PROT_READ, MAP_SHARED, 0,
				    true);
	ASSERT_NE(MAP_FAILED, self->map);
	faults = dax_minor_faults();
	for (off = 0; off < self->len; off += self->ps)
		dax_touch(self->map + off);
	faults = dax_minor_faults() - faults;
	TH_LOG("aligned read of %zu pages: %ld faults", npages, faults);
	if (faults >= (long)npages / 8)
		SKIP(return, "the aligned mapping did not get PMDs");

	/* The faults themselves, not fault-around, for the first two pages. */
	if (self->fault_around > (long)self->ps)
		ASSERT_EQ(0, dax_fault_around_set(self->ps));
	pte = dax_map_file_at(self->a, self->len, PROT_READ | PROT_WRITE,
			      MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, pte);
	EXPECT_EQ(1, dax_pattern_decode(*(uint64_t *)(pte + self->ps),
					self->seed, false));
	__atomic_store_n(pte, 0x5a, __ATOMIC_RELAXED);
	munmap(pte, self->len);
	if (self->fault_around > (long)self->ps)
		ASSERT_EQ(0, dax_fault_around_set(self->fault_around));

	stale = remap_first_stale_page(self, self->a, false);
	EXPECT_EQ(-1, stale) TH_LOG("PTE mapping: page %ld differs from read(2)", stale);
	stale = remap_first_stale_page(self, self->a, true);
	EXPECT_EQ(-1, stale) TH_LOG("PMD mapping: page %ld differs from read(2)", stale);
	/*
	 * The clone is checked with read(2) only; mappings of a file and its
	 * clone with entries of different orders are the next two tests.
	 */
	buf = malloc(self->len);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ((ssize_t)self->len, pread(self->b, buf, self->len, 0));
	EXPECT_EQ(-1, dax_verify(buf, npages, self->seed, 0))
		TH_LOG("the clone lost its data");
	free(buf);

	/* Evict the file: its mapping must count what its entries hold. */
	munmap(self->map, self->len);
	self->map = MAP_FAILED;
	close(self->a);
	self->a = -1;
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * Compare the clone's PTE mapping @pte with read(2) and unmap it, evict the
 * clone, map the file again with PMDs where it can and compare it, then
 * evict the file.
 */
static void compare_clone_and_evict(FIXTURE_DATA(pmd_cow) *self,
				    struct __test_metadata *_metadata, char *pte)
{
	long stale;

	stale = first_stale_page(self->b, pte, self->len, self->ps);
	EXPECT_EQ(-1, stale) TH_LOG("clone, PTE mapping: page %ld differs from read(2)",
				    stale);
	munmap(pte, self->len);
	close(self->b);
	self->b = -1;
	stale = remap_first_stale_page(self, self->a, true);
	EXPECT_EQ(-1, stale) TH_LOG("after the clone went: page %ld differs from read(2)",
				    stale);
	munmap(self->map, self->len);
	self->map = MAP_FAILED;
	close(self->a);
	self->a = -1;
}

/*
 * Both files' pages of one block, mapped with entries of different orders:
 * the file's PMD entry makes the block's folio a PMD folio, and the clone's
 * PTE entries then name pages inside it.  Both mappings must show what
 * read(2) shows, and neither the mapping nor the evictions may warn.
 */
TEST_F_TIMEOUT(pmd_cow, clone_ptes_beside_pmd_entries, 60)
{
	size_t npages = self->len / self->ps, off;
	long faults;
	char *pte;

	self->map = dax_map_file_at(self->a, self->len, PROT_READ, MAP_SHARED, 0,
				    true);
	ASSERT_NE(MAP_FAILED, self->map);
	faults = dax_minor_faults();
	for (off = 0; off < self->len; off += self->ps)
		dax_touch(self->map + off);
	faults = dax_minor_faults() - faults;
	if (faults >= (long)npages / 8)
		SKIP(return, "the aligned mapping did not get PMDs (%ld faults)", faults);
	pte = dax_map_file_at(self->b, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, pte);
	compare_clone_and_evict(self, _metadata, pte);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * The other order: the clone maps single pages of the block with PTE entries
 * first (page 5 of the first PMD, page 0 of the second), then the file maps
 * the block with a PMD.  The clone's pages are folios of their own, which
 * hold its mapping's references; a PMD folio made over them would take those
 * references into its tail pages (page 5) or be a single page (page 0).  The
 * file must get PTEs there instead, and show what read(2) shows, before and
 * after the clone goes.
 */
TEST_F_TIMEOUT(pmd_cow, pmd_entries_over_clone_ptes, 60)
{
	size_t pages[] = { REF_PAGE, self->pmd / self->ps };
	long stale;
	char *pte;
	size_t i;

	if (self->fault_around > (long)self->ps)
		ASSERT_EQ(0, dax_fault_around_set(self->ps));
	pte = dax_map_file_at(self->b, self->len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, pte);
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		EXPECT_EQ(pages[i], dax_pattern_decode(*(uint64_t *)(pte + pages[i] * self->ps),
						       self->seed, false));
	if (self->fault_around > (long)self->ps)
		ASSERT_EQ(0, dax_fault_around_set(self->fault_around));

	stale = remap_first_stale_page(self, self->a, true);
	EXPECT_EQ(-1, stale) TH_LOG("PMD mapping: page %ld differs from read(2)", stale);
	compare_clone_and_evict(self, _metadata, pte);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

/*
 * A file read through a mapping that cannot use PMDs, before it had a clone:
 * where its blocks are 2 MiB aligned, the read faults make PMD entries, whose
 * folios are PMD folios, and a reference to a page of one is the whole
 * folio's.  Clone it then, read it again, and write one page with write(2)
 * while another page of the same 2 MiB is held in a pipe, by this process
 * or by the writer itself: the write must not wait for that page, as it
 * does not for an order-0 entry's.  A store through the mapping into a
 * third page is a CoW fault.  The mapping must show what read(2) shows, the
 * clone must keep its data, the pipe the page's data, and the evictions must
 * not warn.
 */
#define PTE_READ_WRITE_PAGE	5
#define PTE_READ_STORE_PAGE	7
#define PTE_READ_PIPED_PAGE	300

static int cow_write_one_page(int fd, size_t ps)
{
	char buf[4096 * 4];

	memset(buf, NEW_BYTE, ps);
	return pwrite(fd, buf, ps, PTE_READ_WRITE_PAGE * ps) == (ssize_t)ps ? 0 : 1;
}

/* The writer holds the page in a pipe of its own. */
static int splice_then_cow_write_one_page(int fd, size_t ps)
{
	char *map = dax_map_file_at(fd, 2 * dax_pmd_size(), PROT_READ, MAP_SHARED,
				    0, false);
	int p[2];

	if (map == MAP_FAILED || pipe(p))
		return 2;
	dax_touch(map + PTE_READ_PIPED_PAGE * ps);
	if (splice_page(p[1], map, PTE_READ_PIPED_PAGE, ps) != (ssize_t)ps)
		return 2;
	return cow_write_one_page(fd, ps);
}

static void clone_after_pte_reads(FIXTURE_DATA(pmd_cow) *self,
				  struct __test_metadata *_metadata, bool own)
{
	size_t npages = self->len / self->ps, off;
	const char *dir = dax_test_dir();
	int c, d, p[2] = { -1, -1 }, status;
	char *map, *buf;
	bool done;
	long faults;
	pid_t pid;

	ASSERT_EQ(2 * self->pmd, self->len);
	c = dax_tmpfile(dir, 0);
	ASSERT_LE(0, c);
	fallocate(c, 0, 0, self->len);
	ASSERT_EQ(0, dax_write_pattern(c, self->seed, 0, npages));
	if (dax_extents_pmd_aligned(c, self->len, self->pmd) != 1) {
		close(c);
		SKIP(return, "no PMD-aligned extents in a third file");
	}
	map = map_and_read(c, self->len, self->ps);
	ASSERT_NE(MAP_FAILED, map);
	munmap(map, self->len);
	/* Whether the reads made PMD entries: an aligned read uses PMDs. */
	map = dax_map_file_at(c, self->len, PROT_READ, MAP_SHARED, 0, true);
	ASSERT_NE(MAP_FAILED, map);
	faults = dax_minor_faults();
	for (off = 0; off < self->len; off += self->ps)
		dax_touch(map + off);
	faults = dax_minor_faults() - faults;
	munmap(map, self->len);
	TH_LOG("an aligned read after the PTE reads: %ld faults for %zu pages",
	       faults, npages);
	ASSERT_GE((long)(2 * self->len / self->pmd), faults)
		TH_LOG("the reads through PTEs made no PMD entries");

	d = dax_tmpfile(dir, 0);
	ASSERT_LE(0, d);
	ASSERT_EQ(0, ioctl(d, FICLONE, c));
	map = dax_map_file_at(c, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			      0, false);
	ASSERT_NE(MAP_FAILED, map);
	for (off = 0; off < self->len; off += self->ps)
		dax_touch(map + off);
	if (!own) {
		ASSERT_EQ(0, pipe(p));
		ASSERT_EQ((ssize_t)self->ps,
			  splice_page(p[1], map, PTE_READ_PIPED_PAGE, self->ps));
	}

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close_pipe(p);
		_exit(own ? splice_then_cow_write_one_page(c, self->ps) :
			    cow_write_one_page(c, self->ps));
	}
	done = dax_wait_exit(pid, 5.0, &status);
	if (!done) {
		close_pipe(p);
		if (!dax_wait_exit(pid, 10.0, &status)) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	ASSERT_TRUE(done)
		TH_LOG("the CoW write(2) of page %d waited 5 s for page %d in %s pipe",
		       PTE_READ_WRITE_PAGE, PTE_READ_PIPED_PAGE,
		       own ? "its own" : "another process's");
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the CoW write(2) failed (wait status %#x)", status);
	__atomic_store_n(map + PTE_READ_STORE_PAGE * self->ps, OTHER_BYTE,
			 __ATOMIC_RELAXED);

	buf = malloc(self->len);
	ASSERT_NE(NULL, buf);
	if (!own) {
		ASSERT_EQ((ssize_t)self->ps, read(p[0], buf, self->ps));
		close_pipe(p);
		EXPECT_EQ(-1, dax_verify(buf, 1, self->seed, PTE_READ_PIPED_PAGE))
			TH_LOG("the pipe does not hold the page's data");
	}
	EXPECT_EQ(-1, first_stale_page(c, map, self->len, self->ps));
	EXPECT_EQ(NEW_BYTE, map[PTE_READ_WRITE_PAGE * self->ps]);
	EXPECT_EQ(OTHER_BYTE, map[PTE_READ_STORE_PAGE * self->ps]);
	munmap(map, self->len);
	ASSERT_EQ((ssize_t)self->len, pread(d, buf, self->len, 0));
	EXPECT_EQ(-1, dax_verify(buf, npages, self->seed, 0))
		TH_LOG("the clone lost its data");
	free(buf);
	close(d);
	close(c);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

TEST_F_TIMEOUT(pmd_cow, clone_after_pte_reads, 60)
{
	clone_after_pte_reads(self, _metadata, false);
}

TEST_F_TIMEOUT(pmd_cow, clone_after_pte_reads_own_pipe, 60)
{
	clone_after_pte_reads(self, _metadata, true);
}

/* A store of @byte at @addr in a child: 0 if it worked, else its signal. */
static int store_in_child(char *addr, int byte)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		__atomic_store_n(addr, byte, __ATOMIC_RELAXED);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
}

/*
 * A hole under a PMD zero entry, mapped with PTEs by a mapping that cannot
 * use PMDs, then written with write(2): first a CoW write into the CoW fork
 * preallocation over the hole that fails on its user buffer (EFAULT), then a
 * write that allocates a block elsewhere in the hole.  Whatever removes the
 * zero entry must unmap every page it covered: the mapping must show what
 * read(2) shows, and a store through it must work.
 *
 * The layout: a 4 MiB file with its second 2 MiB a hole, and a CoW fork
 * extent over the first pages of that hole (one page written, cloned, written
 * again with a CoW extent size hint, then punched).  A read of the hole
 * through a 2 MiB-aligned mapping makes the PMD zero entry; a read through a
 * 1 MiB mapping at 3 MiB maps zero pages from it.
 */
TEST(cow_write_over_pmd_zero_entry)
{
	size_t ps = dax_page_size(), pmd = dax_pmd_size();
	size_t first = pmd / ps, cow_page = first + 8;
	size_t write_page = 3 * first / 2 + 2;
	char why[256], buf[4096 * 4], *hole, *pte, *bad;
	struct dax_kwatch kwatch;
	const char *dir;
	uint64_t val;
	int fd, clone, ret;

	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		SKIP(return, "no transparent hugepages, so no DAX PMDs");
	if (ps > sizeof(buf))
		SKIP(return, "its buffers hold 16 KiB, pages are %zu KiB", ps >> 10);
	DAX_KWATCH_START(&kwatch);
	fd = dax_tmpfile(dir, 2 * pmd);
	ASSERT_LE(0, fd);
	clone = dax_tmpfile(dir, 0);
	ASSERT_LE(0, clone);
	memset(buf, OLD_BYTE, ps);
	ASSERT_EQ((ssize_t)ps, pwrite(fd, buf, ps, first * ps));
	if (ioctl(clone, FICLONE, fd))
		SKIP(return, "no reflink on this filesystem (FICLONE: %s)",
		     strerror(errno));
	/* CoW fork preallocation: 32 pages around the page written. */
	ret = set_cowextsize(fd, 32 * ps);
	if (ret)
		SKIP(return, "no CoW extent size hint: %s", strerror(-ret));
	ASSERT_EQ((ssize_t)ps, pwrite(fd, buf, ps, first * ps));
	ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       first * ps, ps));

	hole = dax_map_file_at(fd, pmd, PROT_READ, MAP_SHARED, pmd, true);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, dax_touch(hole));
	munmap(hole, pmd);
	pte = mmap(NULL, pmd / 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   3 * pmd / 2);
	ASSERT_NE(MAP_FAILED, pte);
	ASSERT_EQ(0, dax_touch(pte));

	/* A CoW write that faults on its buffer, then one that allocates. */
	bad = mmap(NULL, ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	EXPECT_GT(0, pwrite(fd, bad, ps, cow_page * ps));
	munmap(bad, ps);
	memset(buf, NEW_BYTE, ps);
	ASSERT_EQ((ssize_t)ps, pwrite(fd, buf, ps, write_page * ps));

	bad = pte + (write_page - 3 * first / 2) * ps;
	ASSERT_EQ(0, dax_probe_read(bad, &val));
	EXPECT_EQ(NEW_BYTE, (unsigned char)val)
		TH_LOG("the mapping shows %#x where read(2) has %#x", (unsigned char)val,
		       NEW_BYTE);
	EXPECT_EQ(0, store_in_child(bad, OTHER_BYTE))
		TH_LOG("a store through the mapping died of signal %d",
		       store_in_child(bad, OTHER_BYTE));
	ASSERT_EQ((ssize_t)ps, pread(fd, buf, ps, write_page * ps));
	EXPECT_EQ(0, memcmp(buf, bad, ps))
		TH_LOG("the mapping and read(2) differ after the store");
	munmap(pte, pmd / 2);
	close(clone);
	close(fd);
	DAX_ASSERT_NO_COMPLAINT(&kwatch);
}

#define POISON_PAGES	512	/* one block poisoned per round, at most */
#define POISON_SPIN	20000	/* the widest head start, in spin_for() loops */

static void spin_for(long loops)
{
	long i;

	/* The compiler barrier keeps the loop. */
	for (i = 0; i < loops; i++)
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * The child of a poisoning round: map page @idx of @fd, fault it in (the
 * folio is now the file's), say so in @sync[0], wait for @sync[1], spin,
 * and poison the page.  Exits 0 if MADV_HWPOISON returned 0, 1 with
 * EBUSY (the folio was shared first, so memory failure has no owner for
 * it), 100 + errno if MADV_HWPOISON is not available, 2 on another error;
 * memory failure kills it with SIGBUS when it finds it.
 */
static void poison_when_told(int fd, size_t ps, size_t idx, int *sync,
			     long spin)
{
	char *p = mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, idx * ps);

	signal(SIGBUS, SIG_DFL);
	if (p == MAP_FAILED)
		_exit(2);
	dax_touch(p);
	__atomic_store_n(&sync[0], 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sync[1], __ATOMIC_ACQUIRE))
		;
	spin_for(spin);
	if (!madvise(p, ps, MADV_HWPOISON))
		_exit(0);
	if (errno == EPERM || errno == EINVAL)
		_exit(100 + errno);
	_exit(errno == EBUSY ? 1 : 2);
}

/*
 * Memory failure of a page that no filesystem callback resolves (xfs
 * without rmapbt, which leaves it to mf_generic_kill_procs()) locks the
 * folio's entry in the mapping that folio->mapping names, then uses
 * folio->mapping and folio->index again.  A clone's first fault on the same
 * block makes the folio shared, which clears folio->mapping and reuses
 * folio->index as a share count, under a lock of the clone's mapping only:
 * memory failure then collected with and unlocked through a NULL mapping
 * (an oops in dax_unlock_folio()).  Each round races the two on a new
 * page, with a head start for one side or the other: a child that maps the
 * page of the file poisons it while the parent faults in the clone's page.
 * Memory failure must either kill the child (it found the page the file's)
 * or fail with EBUSY (it found it shared).  The poisoned blocks stay in a
 * file the test leaves in DAX_TEST_DIR, so no later file gets them; runs
 * only with DAX_TEST_HWPOISON=1.  DAX_RACE_SECONDS bounds the duration
 * (default 10, 1..60).
 */
TEST_F_TIMEOUT(reflink, hwpoison_racing_clone_fault, DAX_RACE_TIMEOUT)
{
	size_t ps = self->ps, len = POISON_PAGES * ps, idx;
	long secs = dax_race_seconds(10), spin, killed = 0, busy = 0;
	time_t end = time(NULL) + secs;
	int *sync, fd, clone, status = 0;
	char path[PATH_MAX];
	uint64_t val;
	char *map;
	pid_t pid;

	if (dax_env_long("DAX_TEST_HWPOISON", 0, 0, 1) != 1)
		SKIP(return, "set DAX_TEST_HWPOISON=1 to run it: it poisons blocks until reboot");
	snprintf(path, sizeof(path), "%s/dax_reflink_test.poisoned.%d", self->dir,
		 getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, fill_file(fd, 0, len, OLD_BYTE));
	clone = dax_tmpfile(self->dir, 0);
	ASSERT_LE(0, clone);
	ASSERT_EQ(0, ioctl(clone, FICLONE, fd));
	map = dax_map_file_at(clone, len, PROT_READ, MAP_SHARED, 0, false);
	ASSERT_NE(MAP_FAILED, map);
	sync = mmap(NULL, 2 * sizeof(*sync), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sync);

	for (idx = 0; idx < POISON_PAGES && time(NULL) < end; idx++) {
		/* -POISON_SPIN..POISON_SPIN: who starts first, and by how much */
		spin = (long)(idx * 7919 % (2 * POISON_SPIN + 1)) - POISON_SPIN;
		sync[0] = 0;
		sync[1] = 0;
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close_pipe(self->pipe);
			poison_when_told(fd, ps, idx, sync, spin < 0 ? -spin : 0);
		}
		while (!__atomic_load_n(&sync[0], __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&sync[1], 1, __ATOMIC_RELEASE);
		spin_for(spin > 0 ? spin : 0);
		/* SIGBUS here is the fault path refusing a poisoned page. */
		dax_probe_read(map + idx * ps, &val);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (WIFEXITED(status) && WEXITSTATUS(status) > 100)
			break;
		if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGBUS ||
					    WTERMSIG(status) == SIGKILL))
			killed++;
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
			busy++;
		else
			break;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) > 100)
		SKIP(goto out, "MADV_HWPOISON: %s",
		     strerror(WEXITSTATUS(status) - 100));
	TH_LOG("%zu rounds: %ld poisoners killed, %ld saw the page shared",
	       idx, killed, busy);
	EXPECT_EQ((long)idx, killed + busy)
		TH_LOG("round %zu: the poisoning child ended with wait status %#x",
		       idx, status);
out:
	munmap(sync, 2 * sizeof(*sync));
	munmap(map, len);
	close(clone);
	close(fd);
	DAX_ASSERT_NO_COMPLAINT(&self->kwatch);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
