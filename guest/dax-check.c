// SPDX-License-Identifier: GPL-2.0
/*
 * dax-check DIR: exit 0 if a file created in DIR has STATX_ATTR_DAX set,
 * i.e. the filesystem really is mounted with DAX; print why not otherwise.
 * Built static on the host and put into the guest initramfs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

int main(int argc, char **argv)
{
	char path[4096];
	struct statx stx;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: dax-check DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/.dax-check", argv[1]);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx)) {
		fprintf(stderr, "dax-check: %s: %s\n", path, strerror(errno));
		return 2;
	}
	close(fd);
	unlink(path);
	if (!(stx.stx_attributes_mask & STATX_ATTR_DAX) ||
	    !(stx.stx_attributes & STATX_ATTR_DAX)) {
		fprintf(stderr, "dax-check: %s is not DAX (STATX_ATTR_DAX clear)\n", argv[1]);
		return 1;
	}
	printf("dax-check: %s is DAX\n", argv[1]);
	return 0;
}
