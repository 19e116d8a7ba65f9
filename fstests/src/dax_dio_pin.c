// SPDX-License-Identifier: GPL-2.0
/*
 * Direct I/O pinning fs-DAX pages against truncate and hole punch.
 *
 * Direct I/O pins its user buffer (FOLL_PIN) while the I/O runs.  When the
 * buffer is a shared mapping of a DAX file, the pinned pages are the file's
 * blocks, so truncate and hole punch of that file wait for the pins before
 * they free the blocks, and drop the fault lock while they wait, so that the
 * I/O can fault in the rest of its buffer.  The next I/O then faults a page
 * back in and pins it again; the wait has to end once the pins are gone
 * although the page is mapped again.
 *
 * Usage: dax_dio_pin SECONDS FILE BLOCKDEV
 *
 * FILE is made 4 MiB and mapped shared.  For each of four phases of SECONDS
 * (hole punches with O_DIRECT writes of BLOCKDEV from the mapping, with
 * reads of BLOCKDEV into it; truncates with the same), a thread does the
 * direct I/O in 256 KiB pieces while another punches or truncates the file.
 * BLOCKDEV (at least 4 MiB) is overwritten.  Each phase runs in a child
 * process; one whose truncate or punch has not returned 60 s after the
 * phase's end is reported and killed.  Nothing is printed on success; each
 * problem is a line on stdout and exit 1.  Exit 2 is a setup error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/falloc.h>

#define FILE_SIZE	(4L << 20)
#define IO_SIZE		(256L << 10)
#define GRACE		60

static double secs;
static const char *path, *devpath;

/* Filled by the phase's child, in memory shared with the parent. */
struct progress {
	volatile double op_start; /* when the running truncate or punch began, or 0 */
	const char *op;		/* what it is */
	long ios, efault, other, truncates, punches;
	int err;
};

static struct progress *prog;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerror(errno));
	exit(2);
}

struct dio {
	int dev;
	char *map;
	bool into_map;
	double deadline;
};

/* O_DIRECT reads into, or writes out of, the DAX mapping. */
static void *dio_run(void *arg)
{
	struct dio *d = arg;
	unsigned int rnd = getpid();
	off_t off;
	ssize_t ret;

	while (now() < d->deadline) {
		off = (rand_r(&rnd) % (FILE_SIZE / IO_SIZE)) * IO_SIZE;
		if (d->into_map)
			ret = pread(d->dev, d->map + off, IO_SIZE, off);
		else
			ret = pwrite(d->dev, d->map + off, IO_SIZE, off);
		if (ret >= 0) {
			prog->ios++;
		} else if (errno == EFAULT) {
			/* The page was truncated away under the I/O. */
			prog->efault++;
		} else {
			prog->other++;
			prog->err = errno;
		}
	}
	return NULL;
}

static void timed(const char *op, int ret)
{
	if (ret)
		die(op);
	prog->op_start = 0;
}

static void start(const char *op)
{
	prog->op = op;
	prog->op_start = now();
}

/*
 * A phase: direct I/O (@into_map: reads into the mapping) against hole
 * punches and truncates (@truncate_io: into the range under I/O, else only
 * beyond it).
 */
static int phase(bool into_map, bool truncate_io)
{
	struct dio d = { .into_map = into_map };
	unsigned int rnd = getpid();
	char *buf = malloc(FILE_SIZE);
	pthread_t th;
	off_t off;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !buf)
		die(path);
	memset(buf, 0x5a, FILE_SIZE);
	if (pwrite(fd, buf, FILE_SIZE, 0) != FILE_SIZE)
		die("pwrite");
	free(buf);
	d.dev = open(devpath, O_RDWR | O_DIRECT);
	if (d.dev < 0)
		die(devpath);
	d.map = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (d.map == MAP_FAILED)
		die("mmap");
	d.deadline = now() + secs;
	if (pthread_create(&th, NULL, dio_run, &d))
		die("pthread_create");
	while (now() < d.deadline) {
		if (truncate_io) {
			start("truncate");
			timed("truncate", ftruncate(fd, (rand_r(&rnd) % 4) << 20));
			start("truncate");
			timed("truncate", ftruncate(fd, FILE_SIZE));
		} else {
			start("truncate");
			timed("truncate", ftruncate(fd, 2 * FILE_SIZE));
			start("truncate");
			timed("truncate", ftruncate(fd, FILE_SIZE));
		}
		prog->truncates++;
		off = (rand_r(&rnd) % (FILE_SIZE / IO_SIZE)) * IO_SIZE;
		start("hole punch");
		timed("hole punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE |
					      FALLOC_FL_KEEP_SIZE, off, IO_SIZE));
		prog->punches++;
	}
	pthread_join(th, NULL);
	munmap(d.map, FILE_SIZE);
	close(d.dev);
	close(fd);
	return 0;
}

static int failures;

static void run_phase(const char *name, bool into_map, bool truncate_io)
{
	double end = now() + secs + GRACE, began;
	int status = 0;
	bool done = false;
	pid_t pid;

	memset(prog, 0, sizeof(*prog));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid)
		_exit(phase(into_map, truncate_io));
	while (now() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			done = true;
			break;
		}
		usleep(100 * 1000);
	}
	fprintf(stderr, "%s: %ld I/Os, %ld EFAULT, %ld truncate cycles, %ld punches\n",
		name, prog->ios, prog->efault, prog->truncates, prog->punches);
	if (!done) {
		began = prog->op_start;
		printf("%s: a %s has not returned for %.0f s, %d s after the I/O stopped\n",
		       name, began ? prog->op : "truncate or punch",
		       began ? now() - began : 0.0, GRACE);
		failures++;
		kill(pid, SIGKILL);
		end = now() + GRACE;
		while (now() < end && waitpid(pid, &status, WNOHANG) != pid)
			usleep(100 * 1000);
		return;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("%s: failed (status %#x)\n", name, status);
		failures++;
	}
	if (prog->other) {
		printf("%s: direct I/O failed: %s\n", name, strerror(prog->err));
		failures++;
	}
	if (!prog->ios || !prog->truncates) {
		printf("%s: no progress: %ld I/Os, %ld truncates\n", name,
		       prog->ios, prog->truncates);
		failures++;
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "Usage: dax_dio_pin SECONDS FILE BLOCKDEV\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	secs = atof(argv[1]);
	path = argv[2];
	devpath = argv[3];
	prog = mmap(NULL, sizeof(*prog), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (prog == MAP_FAILED)
		die("mmap");
	run_phase("punch, writes from the mapping", false, false);
	run_phase("punch, reads into the mapping", true, false);
	run_phase("truncate, writes from the mapping", false, true);
	run_phase("truncate, reads into the mapping", true, true);
	unlink(path);
	return failures ? 1 : 0;
}
