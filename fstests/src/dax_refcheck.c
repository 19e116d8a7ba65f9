// SPDX-License-Identifier: GPL-2.0
/*
 * Copy on write and truncate of reflinked fs-DAX pages that a pipe references.
 *
 * A DAX page is the file's block.  A page spliced into a pipe with vmsplice()
 * holds a reference that unmapping does not remove.  When write(2) to a
 * reflinked file copies such a page to a new block, or truncate frees it, the
 * kernel has to wait for the reference (or leave the block alone), or the
 * pipe hands out whatever is written to the block next, and the mapping of the
 * file may keep showing a block that is no longer the file's.  A wait has to
 * sleep, has to end when the reference goes, and must only happen for pages
 * that the operation moves or frees.
 *
 * Usage: dax_refcheck COMMAND DIR
 *
 * Each command makes DIR/refcheck.a (256 pages of 0x11) and its clone
 * DIR/refcheck.b (FICLONE), runs one scenario and removes the files.  Nothing
 * is printed on success; a failure prints one line per problem on stdout and
 * exits 1.  What happened on the way (a wait, for instance) goes to stderr.
 * Exit 2 is a setup error.
 *
 * Commands:
 *   cow-write-ref        another process keeps page 5 of a in a pipe; a CoW
 *                        write(2) of page 5 may wait for the pipe, and must
 *                        end once it is drained; the mapping of a equals
 *                        read(2) afterwards, also once b is deleted and its
 *                        space reused
 *   cow-write-own-ref    the writer itself keeps page 5 of a in a pipe and
 *                        CoW-writes it: either it waits until SIGKILL, a and b
 *                        intact, or the pipe must not show what b writes into
 *                        the old block later
 *   truncate-clone-ref   a reader of b keeps b's page 5 (the same block) in a
 *                        pipe; truncate of a may wait, but must end once the
 *                        pipe closes, though b still maps the page
 *   cow-write-clone-ref  the same with a CoW write(2) of a's page 5
 *   cow-write-beside     another process keeps page 0 of a in a pipe; a CoW
 *                        write(2) of page 5 has nothing to wait for, and must
 *                        not wait
 *   cow-write-beside-own the writer keeps page 0 in its own pipe
 *   cow-write-beside-clone  a reader of b keeps b's page 0 in a pipe
 *   splice-into-cow      a process vmsplices page 0 of a into a pipe and
 *                        splice()s the pipe into page 5 of a
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
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/fs.h>

#define NPAGES		256
#define REF_PAGE	5	/* the page written or truncated */
#define BESIDE_PAGE	0	/* the page referenced beside it */
#define OLD_BYTE	0x11
#define NEW_BYTE	0x22
#define OTHER_BYTE	0x33
#define PTE_COLOUR	(64UL << 10)
#define OTHER_SIZE	(64UL << 20)

static size_t ps, len;
static int fd_a = -1, fd_b = -1;
static char path_a[4096], path_b[4096], path_other[4096];
static int pipefd[2] = { -1, -1 };
static int failures;

#define fail(...) do { printf(__VA_ARGS__); putchar('\n'); failures++; } while (0)
#define note(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

static void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	exit(2);
}

static int fill(int fd, off_t off, size_t n, int byte)
{
	char *buf = malloc(1UL << 20);
	size_t done, chunk;
	int ret = 0;

	if (!buf)
		return -1;
	memset(buf, byte, 1UL << 20);
	for (done = 0; done < n; done += chunk) {
		chunk = n - done < (1UL << 20) ? n - done : (1UL << 20);
		if (pwrite(fd, buf, chunk, off + done) != (ssize_t)chunk) {
			ret = -1;
			break;
		}
	}
	free(buf);
	return ret;
}

/*
 * A shared mapping of @fd that cannot use PMD entries (its address is 64 KiB
 * off the file offset's PMD alignment): every page is a PTE of its own.
 */
static char *map_pte(int fd, int prot)
{
	size_t pmd = 2UL << 20, rlen = len + 2 * pmd + PTE_COLOUR;
	uintptr_t res, addr;
	char *p;

	p = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	res = (uintptr_t)p;
	addr = ((res + pmd - 1) & ~(pmd - 1)) + PTE_COLOUR;
	p = mmap((void *)addr, len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED)
		return p;
	munmap((void *)res, addr - res);
	munmap((void *)(addr + len), res + rlen - addr - len);
	return p;
}

/* Map @fd read-only and fault in every page. */
static char *map_and_read(int fd)
{
	char *map = map_pte(fd, PROT_READ);
	size_t off;

	if (map == MAP_FAILED)
		die("mmap");
	for (off = 0; off < len; off += ps)
		(void)*(volatile char *)(map + off);
	return map;
}

/* The first page of @map that differs from read(2) of @fd, or -1. */
static long first_stale_page(int fd, const char *map)
{
	char *buf = malloc(ps);
	long ret = -1;
	size_t off;

	if (!buf)
		die("malloc");
	for (off = 0; off < len; off += ps) {
		if (pread(fd, buf, ps, off) != (ssize_t)ps)
			die("pread");
		if (memcmp(buf, map + off, ps)) {
			ret = off / ps;
			break;
		}
	}
	free(buf);
	return ret;
}

/* Map @fd afresh and compare it with read(2): what a new user sees. */
static void remap_and_compare(int fd, const char *name, const char *when)
{
	char *map = map_and_read(fd);
	long p = first_stale_page(fd, map);

	if (p >= 0)
		fail("%s, %s: page %ld of the mapping (0x%x) differs from read(2)",
		     name, when, p, (unsigned char)map[p * ps]);
	munmap(map, len);
}

static void close_pipe(void)
{
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	pipefd[0] = pipefd[1] = -1;
}

/* Splice page @idx of @map into the pipe @fd: the pipe references it. */
static void splice_page(int fd, char *map, size_t idx)
{
	struct iovec iov = { map + idx * ps, ps };

	if (vmsplice(fd, &iov, 1, 0) != (ssize_t)ps)
		die("vmsplice");
}

/* Wait up to @secs for @pid: 1 with *@status if it exited, else 0. */
static int wait_child(pid_t pid, double secs, int *status)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < secs * 100; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		nanosleep(&ts, NULL);
	}
	return waitpid(pid, status, WNOHANG) == pid;
}

/* CPU time (user + system) of @pid in ms, or -1. */
static long cpu_ms(pid_t pid)
{
	unsigned long utime, stime;
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &utime, &stime) != 2)
		return -1;
	return (utime + stime) * 1000 / sysconf(_SC_CLK_TCK);
}

/*
 * Wait 2 s for @pid doing @what: true if it exited, else false, having
 * checked that it sleeps rather than spins meanwhile.
 */
static bool exits_or_sleeps(pid_t pid, int *status, const char *what)
{
	long ms0 = cpu_ms(pid), ms;

	if (wait_child(pid, 2.0, status))
		return true;
	ms = cpu_ms(pid);
	if (ms0 >= 0 && ms >= 0 && ms - ms0 > 1000)
		fail("%s used %ld ms of CPU in 2 s: it spins instead of sleeping",
		     what, ms - ms0);
	return false;
}

/* Kill @pid if it is still there, and reap it. */
static void kill_child(pid_t pid, int *status, const char *what)
{
	kill(pid, SIGKILL);
	if (!wait_child(pid, 10.0, status))
		fail("%s ignored SIGKILL for 10 s", what);
}

static bool exited_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A child running @op with none of the parent's pipe open: its exit code. */
static pid_t fork_child(int (*op)(void))
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close_pipe();
		_exit(op());
	}
	return pid;
}

static int cow_write_ref_page(void)
{
	char *buf = malloc(ps);

	if (!buf)
		return 2;
	memset(buf, NEW_BYTE, ps);
	return pwrite(fd_a, buf, ps, REF_PAGE * ps) == (ssize_t)ps ? 0 : 1;
}

static int truncate_a(void)
{
	return ftruncate(fd_a, 0) ? 1 : 0;
}

/* The clone's page REF_PAGE holds the old data, through a mapping and read(2). */
static void check_clone(const char *when)
{
	char *map = map_and_read(fd_b);
	long p = first_stale_page(fd_b, map);

	if (p >= 0)
		fail("the clone, %s: page %ld of its mapping differs from read(2)",
		     when, p);
	if (map[REF_PAGE * ps] != OLD_BYTE)
		fail("the clone, %s: page %d holds 0x%x, not its data 0x%x", when,
		     REF_PAGE, (unsigned char)map[REF_PAGE * ps], OLD_BYTE);
	munmap(map, len);
}

static void cow_write_ref(void)
{
	char *map = map_and_read(fd_a), *buf = malloc(ps);
	int status, other;
	bool waited;
	pid_t pid;

	if (!buf)
		die("malloc");
	splice_page(pipefd[1], map, REF_PAGE);
	pid = fork_child(cow_write_ref_page);
	waited = !wait_child(pid, 2.0, &status);
	if (waited) {
		note("the CoW write(2) waits for the pipe's reference");
	} else {
		if (!exited_ok(status))
			fail("the CoW write(2) failed (status 0x%x)", status);
		/* The old block is still referenced by the pipe. */
		remap_and_compare(fd_a, "the file", "pipe still open");
	}
	if (read(pipefd[0], buf, ps) != (ssize_t)ps)
		die("read pipe");
	close_pipe();
	if (waited) {
		if (!wait_child(pid, 10.0, &status)) {
			fail("the CoW write(2) still waits 10 s after the pipe was drained");
			kill_child(pid, &status, "the CoW write(2)");
		} else if (!exited_ok(status)) {
			fail("the CoW write(2) failed (status 0x%x)", status);
		}
	}
	munmap(map, len);
	remap_and_compare(fd_a, "the file", "pipe drained");

	/* Free the old block and let another file take the space. */
	close(fd_b);
	fd_b = -1;
	unlink(path_b);
	other = open(path_other, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (other < 0 || fill(other, 0, OTHER_SIZE, OTHER_BYTE) || fsync(other))
		die("the other file");
	close(other);
	remap_and_compare(fd_a, "the file", "the clone deleted and its space reused");
	map = map_and_read(fd_a);
	if (map[REF_PAGE * ps] != NEW_BYTE)
		fail("the file's page %d holds 0x%x after the clone went, not 0x%x",
		     REF_PAGE, (unsigned char)map[REF_PAGE * ps], NEW_BYTE);
	munmap(map, len);
	free(buf);
}

/* The parent's end of the pipe that the child tells it it is ready on. */
static int ready_fd = -1;

/*
 * Map a, splice page REF_PAGE of the mapping into a pipe of this process,
 * tell the parent, and CoW-write that page.  If the write returns, write the
 * clone's page in place, then read the pipe: it must show the file's data,
 * old or new, never the clone's later write (exit 4).
 */
static int splice_then_cow_write(void)
{
	char *map = map_pte(fd_a, PROT_READ), *buf = malloc(ps);
	int p[2];

	if (map == MAP_FAILED || !buf || pipe(p))
		return 2;
	(void)*(volatile char *)(map + REF_PAGE * ps);
	splice_page(p[1], map, REF_PAGE);
	if (write(ready_fd, "w", 1) != 1)
		return 2;
	if (cow_write_ref_page())
		return 1;
	memset(buf, OTHER_BYTE, ps);
	if (pwrite(fd_b, buf, ps, REF_PAGE * ps) != (ssize_t)ps)
		return 2;
	if (read(p[0], buf, ps) != (ssize_t)ps)
		return 3;
	return buf[0] == OTHER_BYTE ? 4 : 0;
}

static void cow_write_own_ref(void)
{
	char *buf = malloc(ps), c;
	bool wrote = true;
	int status, ready[2];
	size_t i;
	pid_t pid;

	if (!buf || pipe(ready))
		die("setup");
	ready_fd = ready[1];
	pid = fork_child(splice_then_cow_write);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		die("the child died before its write");
	close(ready[0]);

	if (!exits_or_sleeps(pid, &status, "the CoW write(2)")) {
		note("the CoW write(2) of a page in the writer's own pipe waits; killing it");
		kill(pid, SIGKILL);
		if (!wait_child(pid, 10.0, &status)) {
			fail("the CoW write(2) ignored SIGKILL for 10 s");
			return;
		}
		wrote = !WIFSIGNALED(status);
	}
	if (wrote) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
			fail("the CoW write(2) did not wait, and the pipe then showed what the clone wrote into the old block");
		else if (!exited_ok(status))
			fail("the writer failed (status 0x%x)", status);
	}

	/* The file: the page written or as it was, the rest as it was. */
	if (pread(fd_a, buf, ps, REF_PAGE * ps) != (ssize_t)ps)
		die("pread");
	for (i = 0; i < ps; i++) {
		if (buf[i] != (wrote ? NEW_BYTE : OLD_BYTE)) {
			fail("byte %zu of the file's page %d after a %s write: 0x%x", i,
			     REF_PAGE, wrote ? "completed" : "killed",
			     (unsigned char)buf[i]);
			break;
		}
	}
	remap_and_compare(fd_a, "the file", "after the write");
	/* The clone: its own data, written over by the child if it wrote. */
	if (pread(fd_b, buf, ps, REF_PAGE * ps) != (ssize_t)ps)
		die("pread");
	if (buf[0] != (wrote ? OTHER_BYTE : OLD_BYTE))
		fail("the clone's page %d holds 0x%x", REF_PAGE, (unsigned char)buf[0]);
	remap_and_compare(fd_b, "the clone", "after the write");
	free(buf);
}

/*
 * A reader of the clone keeps the clone's page REF_PAGE, the same block as
 * the file's, in a pipe; the file maps it too.  @op (truncate or CoW write of
 * the file) may wait for the reference, but the wait must end once the pipe
 * lets go of the page, though the clone still maps it.
 */
static void clone_ref(int (*op)(void), const char *what)
{
	char *map_a = map_and_read(fd_a), *map_b = map_and_read(fd_b);
	int status;
	pid_t pid;

	splice_page(pipefd[1], map_b, REF_PAGE);
	pid = fork_child(op);
	if (!exits_or_sleeps(pid, &status, what)) {
		note("%s waits for the clone's pipe", what);
		close_pipe();
		if (!wait_child(pid, 10.0, &status)) {
			fail("%s still waits 10 s after the clone's pipe closed", what);
			kill_child(pid, &status, what);
			goto out;
		}
	}
	if (!exited_ok(status))
		fail("%s failed (status 0x%x)", what, status);
out:
	close_pipe();
	if (map_b[REF_PAGE * ps] != OLD_BYTE)
		fail("the clone's mapping shows 0x%x at page %d after %s",
		     (unsigned char)map_b[REF_PAGE * ps], REF_PAGE, what);
	munmap(map_a, len);
	munmap(map_b, len);
	check_clone("after it");
}

static void truncate_clone_ref(void)
{
	clone_ref(truncate_a, "the truncate");
}

static void cow_write_clone_ref(void)
{
	char *map;

	clone_ref(cow_write_ref_page, "the CoW write(2)");
	remap_and_compare(fd_a, "the file", "after the CoW write(2)");
	map = map_and_read(fd_a);
	if (map[REF_PAGE * ps] != NEW_BYTE)
		fail("the file's page %d holds 0x%x after the CoW write(2)",
		     REF_PAGE, (unsigned char)map[REF_PAGE * ps]);
	munmap(map, len);
}

/*
 * A child that maps a, splices page BESIDE_PAGE of its mapping into a pipe of
 * its own and keeps it there while it CoW-writes page REF_PAGE.
 */
static int splice_beside_then_cow_write(void)
{
	char *map = map_and_read(fd_a);
	int p[2];

	if (pipe(p))
		return 2;
	splice_page(p[1], map, BESIDE_PAGE);
	return cow_write_ref_page();
}

/*
 * A child that copies page BESIDE_PAGE of a into page REF_PAGE without a copy:
 * vmsplice() then splice() into the file, whose write of REF_PAGE copies on
 * write while the pipe holds the source page.
 */
static int splice_beside_into_cow_page(void)
{
	char *map = map_and_read(fd_a);
	loff_t off = REF_PAGE * ps;
	int p[2];

	if (pipe(p))
		return 2;
	splice_page(p[1], map, BESIDE_PAGE);
	return splice(p[0], NULL, fd_a, &off, ps, 0) == (ssize_t)ps ? 0 : 1;
}

/*
 * Run @op, a CoW write of REF_PAGE, in a child while page BESIDE_PAGE is held
 * in a pipe (by this process, or by the child itself): the write has no
 * reason to wait.  It fails if it has not returned in 5 s.  Then the file's
 * mapping must equal read(2), and the clone must keep its data.
 */
static void beside(int (*op)(void), const char *what, int want_byte)
{
	int status;
	bool done;
	char *map;
	pid_t pid;

	pid = fork_child(op);
	done = wait_child(pid, 5.0, &status);
	if (!done) {
		fail("%s (page %d) waited 5 s for page %d, which it does not write",
		     what, REF_PAGE, BESIDE_PAGE);
		close_pipe();
		if (!wait_child(pid, 10.0, &status))
			kill_child(pid, &status, what);
		else
			note("it went on once the parent's pipe closed");
	} else if (!exited_ok(status)) {
		fail("%s failed (status 0x%x)", what, status);
	}
	close_pipe();
	remap_and_compare(fd_a, "the file", "after the CoW write");
	map = map_and_read(fd_a);
	if (done && map[REF_PAGE * ps] != want_byte)
		fail("the file's page %d holds 0x%x after %s, not 0x%x", REF_PAGE,
		     (unsigned char)map[REF_PAGE * ps], what, want_byte);
	munmap(map, len);
	check_clone("after the file's CoW write");
}

static void cow_write_beside(void)
{
	char *map_a = map_and_read(fd_a), *map_b = map_and_read(fd_b);

	splice_page(pipefd[1], map_a, BESIDE_PAGE);
	beside(cow_write_ref_page, "a CoW write(2)", NEW_BYTE);
	munmap(map_a, len);
	munmap(map_b, len);
}

static void cow_write_beside_own(void)
{
	char *map_b = map_and_read(fd_b);

	beside(splice_beside_then_cow_write, "a CoW write(2) by the pipe's holder",
	       NEW_BYTE);
	munmap(map_b, len);
}

static void cow_write_beside_clone(void)
{
	char *map_a = map_and_read(fd_a), *map_b = map_and_read(fd_b);

	splice_page(pipefd[1], map_b, BESIDE_PAGE);
	beside(cow_write_ref_page, "a CoW write(2), the clone's page in a pipe",
	       NEW_BYTE);
	munmap(map_a, len);
	munmap(map_b, len);
}

static void splice_into_cow(void)
{
	char *map_b = map_and_read(fd_b);

	beside(splice_beside_into_cow_page, "a splice() of a page of the file",
	       OLD_BYTE);
	munmap(map_b, len);
}

static const struct {
	const char *name;
	void (*run)(void);
} commands[] = {
	{ "cow-write-ref", cow_write_ref },
	{ "cow-write-own-ref", cow_write_own_ref },
	{ "truncate-clone-ref", truncate_clone_ref },
	{ "cow-write-clone-ref", cow_write_clone_ref },
	{ "cow-write-beside", cow_write_beside },
	{ "cow-write-beside-own", cow_write_beside_own },
	{ "cow-write-beside-clone", cow_write_beside_clone },
	{ "splice-into-cow", splice_into_cow },
};

static void usage(void)
{
	size_t i;

	fprintf(stderr, "Usage: dax_refcheck COMMAND DIR\nCommands:");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(stderr, " %s", commands[i].name);
	fputc('\n', stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 3)
		usage();
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			break;
	if (i == sizeof(commands) / sizeof(commands[0]))
		usage();
	/* Nobody on stdout but this program's verdict lines. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ps = sysconf(_SC_PAGESIZE);
	len = NPAGES * ps;
	snprintf(path_a, sizeof(path_a), "%s/refcheck.a", argv[2]);
	snprintf(path_b, sizeof(path_b), "%s/refcheck.b", argv[2]);
	snprintf(path_other, sizeof(path_other), "%s/refcheck.other", argv[2]);

	fd_a = open(path_a, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd_a < 0)
		die(path_a);
	if (fill(fd_a, 0, len, OLD_BYTE) || fsync(fd_a))
		die("writing the file");
	fd_b = open(path_b, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd_b < 0)
		die(path_b);
	if (ioctl(fd_b, FICLONE, fd_a))
		die("FICLONE");
	if (pipe(pipefd))
		die("pipe");

	commands[i].run();

	close_pipe();
	if (fd_a >= 0)
		close(fd_a);
	if (fd_b >= 0)
		close(fd_b);
	unlink(path_a);
	unlink(path_b);
	unlink(path_other);
	return failures ? 1 : 0;
}
