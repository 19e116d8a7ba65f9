// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned DAX pages against truncate and hole punch.
 *
 * Direct I/O pins the user buffer with FOLL_PIN for as long as the I/O runs.
 * When that buffer is a shared mapping of a DAX file, the pinned pages are
 * the file's blocks, so truncating or punching the file must wait for the
 * pins (dax_break_layout()) before the blocks are freed.  Here a thread does
 * O_DIRECT reads and writes of the raw SCRATCH device (DAX_SCRATCH_DEV) into
 * and out of such a mapping while another truncates the file and punches
 * holes in it.  The kernel side (warnings, use-after-free, hangs) shows in
 * dmesg and in the time limit; the test checks that the I/O and the
 * truncates kept going and that no I/O failed other than on pages that
 * were truncated away (EFAULT).
 *
 * Truncate and punch drop the fault lock while they wait for the pins, so
 * the I/O thread's next get_user_pages() can fault the page back in; v7.3
 * then waits for a refcount of zero that the new mapping's reference never
 * lets it reach, and truncate or punch sleeps with no I/O left in flight
 * until the time limit kills the test.
 *
 * io_uring fixed buffers take FOLL_LONGTERM pins, which fs-DAX pages refuse:
 * registering the mapping as a fixed buffer must fail.
 *
 * DAX_SCRATCH_DEV is overwritten.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>

#include "kselftest_harness.h"
#include "dax_util.h"

#define FILE_SIZE	(4L << 20)
#define IO_SIZE		(256L << 10)

FIXTURE(pin)
{
	int fd, dev;
	char *map;
	uint64_t seed;
};

FIXTURE_SETUP(pin)
{
	const char *dir, *dev = getenv("DAX_SCRATCH_DEV");
	char why[256];

	self->fd = -1;
	self->dev = -1;
	self->map = MAP_FAILED;
	dir = dax_check_dir(why, sizeof(why));
	if (!dir)
		SKIP(return, "%s", why);
	if (!dev)
		SKIP(return, "DAX_SCRATCH_DEV not set (a block device to overwrite)");
	self->dev = open(dev, O_RDWR | O_DIRECT);
	if (self->dev < 0)
		SKIP(return, "cannot open %s with O_DIRECT: %s", dev, strerror(errno));
	self->seed = (uint64_t)time(NULL) << 16 ^ getpid();
	self->fd = dax_tmpfile(dir, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, dax_write_pattern(self->fd, self->seed, 0, FILE_SIZE / dax_page_size()));
	self->map = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(pin)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, FILE_SIZE);
	if (self->fd >= 0)
		close(self->fd);
	if (self->dev >= 0)
		close(self->dev);
}

struct dio {
	int dev;
	char *map;
	bool into_map;		/* read the device into the mapping */
	double deadline;
	long done, efault, other;
	int err;
};

/* O_DIRECT reads into, or writes out of, the DAX mapping. */
static void *dio_run(void *arg)
{
	struct dio *d = arg;
	unsigned int rnd = (uintptr_t)d;
	off_t off;
	ssize_t ret;

	while (dax_now() < d->deadline) {
		off = (rand_r(&rnd) % (FILE_SIZE / IO_SIZE)) * IO_SIZE;
		if (d->into_map)
			ret = pread(d->dev, d->map + off, IO_SIZE, off);
		else
			ret = pwrite(d->dev, d->map + off, IO_SIZE, off);
		if (ret >= 0) {
			d->done++;
		} else if (errno == EFAULT) {
			/* The page was truncated away under the I/O. */
			d->efault++;
		} else {
			d->other++;
			d->err = errno;
		}
	}
	return NULL;
}

/*
 * Punch holes into the range under I/O, and truncate: into it if
 * @truncate_io, else only beyond it.
 */
static void dio_vs_truncate_punch(struct __test_metadata *_metadata, int fd,
				  struct dio d, unsigned int rnd, bool truncate_io)
{
	long secs = dax_race_seconds(10);
	long truncates = 0, punches = 0;
	pthread_t th;
	off_t off;

	d.deadline = dax_now() + secs;
	ASSERT_EQ(0, pthread_create(&th, NULL, dio_run, &d));
	while (dax_now() < d.deadline) {
		if (truncate_io) {
			ASSERT_EQ(0, ftruncate(fd, (rand_r(&rnd) % 4) * SZ_1M));
			ASSERT_EQ(0, ftruncate(fd, FILE_SIZE));
		} else {
			ASSERT_EQ(0, ftruncate(fd, 2 * FILE_SIZE));
			ASSERT_EQ(0, ftruncate(fd, FILE_SIZE));
		}
		truncates++;
		off = (rand_r(&rnd) % (FILE_SIZE / IO_SIZE)) * IO_SIZE;
		ASSERT_EQ(0, fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				       off, IO_SIZE));
		punches++;
	}
	pthread_join(th, NULL);
	TH_LOG("%ld I/Os, %ld EFAULT, %ld truncate cycles, %ld punches",
	       d.done, d.efault, truncates, punches);
	EXPECT_EQ(0, d.other) TH_LOG("direct I/O failed: %s", strerror(d.err));
	EXPECT_LT(0, d.done);
	EXPECT_LT(0, truncates);
}

/* Direct I/O from and into the mapping against hole punch. */
TEST_F_TIMEOUT(pin, dio_vs_punch, DAX_RACE_TIMEOUT)
{
	struct dio d = { .dev = self->dev, .map = self->map };

	dio_vs_truncate_punch(_metadata, self->fd, d, self->seed, false);
	d.into_map = true;
	dio_vs_truncate_punch(_metadata, self->fd, d, self->seed, false);
}

/* Direct I/O from and into the mapping against truncate of that range. */
TEST_F_TIMEOUT(pin, dio_vs_truncate, DAX_RACE_TIMEOUT)
{
	struct dio d = { .dev = self->dev, .map = self->map };

	dio_vs_truncate_punch(_metadata, self->fd, d, self->seed, true);
	d.into_map = true;
	dio_vs_truncate_punch(_metadata, self->fd, d, self->seed, true);
}

/* FOLL_LONGTERM pins of fs-DAX pages are refused. */
TEST_F(pin, io_uring_fixed_buffer_refused)
{
	struct io_uring_params p = {};
	struct iovec iov = { .iov_base = self->map, .iov_len = IO_SIZE };
	int ring, ret, err;

	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0)
		SKIP(return, "io_uring_setup: %s", strerror(errno));
	ret = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1);
	err = errno;
	EXPECT_EQ(-1, ret) TH_LOG("an fs-DAX mapping was registered as a fixed buffer");
	/* check_vma_flags(): FOLL_LONGTERM on an fs-DAX VMA */
	if (ret == -1)
		EXPECT_EQ(EOPNOTSUPP, err) TH_LOG("refused with %s", strerror(err));
	close(ring);
}

int main(int argc, char **argv)
{
	return dax_harness_main(argc, argv);
}
