// SPDX-License-Identifier: GPL-2.0
/*
 * Carrying out one operation and bringing the model along.
 *
 * An operation whose preconditions do not hold is skipped: that happens
 * when a shrunk sequence lost the operation that made them hold (a store
 * through a slot that is no longer mapped), and it keeps a replay
 * meaningful.  System calls may fail in the ways their callers must
 * expect (EINVAL for a misaligned collapse, ENOSPC, EFAULT from a buffer
 * that faults); the model then stays as it was.  Any other error fails.
 *
 * Mapping operations run in the process that owns the slot: the runner,
 * or the helper, which gets them through a socket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "fuzz.h"

#ifndef FALLOC_FL_WRITE_ZEROES
#define FALLOC_FL_WRITE_ZEROES 0x80
#endif
#ifndef MAP_SYNC
#define MAP_SHARED_VALIDATE 0x03
#define MAP_SYNC 0x80000
#endif

/* XFS_IOC_EXCHANGE_RANGE of v7.3's fs/xfs/libxfs/xfs_fs.h. */
struct xfs_exchange_range {
	int32_t file1_fd;
	uint32_t pad;
	uint64_t file1_offset;
	uint64_t file2_offset;
	uint64_t length;
	uint64_t flags;
};
#define XFS_IOC_EXCHANGE_RANGE _IOW('X', 129, struct xfs_exchange_range)

#define BADBUF_MAX	(2UL << 20)

int fds[NFILES];
static unsigned char *iobuf;		/* FILE_MAX bytes */
static unsigned char *badbuf_end;	/* a PROT_NONE page starts here */
static int helper_cmd_fd = -1, helper_reply_fd = -1;
static pid_t helper_pid;

/*
 * Pipes holding vmspliced pages: which file page each held, and which
 * block it was then (0: a hole, or a private copy, which is no file's).
 */
struct held_page {
	int file;	/* -1: a private copy */
	uint64_t page;
	uint32_t id;
};

struct held_pipe {
	bool live;
	int fd[2];
	int npages;
	struct held_page held[PIPE_PAGES];
};
static struct held_pipe pipes[NPIPES];
static pthread_mutex_t pipes_lock = PTHREAD_MUTEX_INITIALIZER;

enum helper_cmd { CMD_SLOT_OP, CMD_CHECK };
struct helper_msg {
	enum helper_cmd cmd;
	struct op op;
};

void fail(struct outcome *o, enum fail_kind k, const char *fmt, ...)
{
	va_list ap;

	o->kind = k;
	va_start(ap, fmt);
	vsnprintf(o->msg, sizeof(o->msg), fmt, ap);
	va_end(ap);
}

void exec_init(void)
{
	unsigned char *p;

	iobuf = malloc(FILE_MAX);
	p = mmap(NULL, BADBUF_MAX + PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!iobuf || p == MAP_FAILED || mprotect(p + BADBUF_MAX, PG, PROT_NONE)) {
		perror("dax-fuzz: buffers");
		exit(EX_SETUP);
	}
	badbuf_end = p + BADBUF_MAX;
}

/* ---- the helper: a second mm whose mappings are checked too ---- */

/* Whole messages over pipes (the guest kernel has no AF_UNIX). */
static bool read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	ssize_t r;

	while (n) {
		r = read(fd, p, n);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += r;
		n -= r;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t r;

	while (n) {
		r = write(fd, p, n);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += r;
		n -= r;
	}
	return true;
}

static void helper_main(int in, int out)
{
	struct helper_msg m;
	struct slot_reply rep;

	if (sigbus_guard_init())
		_exit(EX_SETUP);
	while (read_full(in, &m, sizeof(m))) {
		memset(&rep, 0, sizeof(rep));
		if (m.cmd == CMD_CHECK)
			check_slot(m.op.slot, &rep);
		else
			slot_exec(&m.op, &rep);
		if (!write_full(out, &rep, sizeof(rep)))
			break;
	}
	_exit(0);
}

int helper_start(void)
{
	int cmd[2], reply[2];

	if (pipe(cmd) || pipe(reply))
		return -1;
	helper_pid = fork();
	if (helper_pid < 0)
		return -1;
	if (helper_pid == 0) {
		close(cmd[1]);
		close(reply[0]);
		helper_main(cmd[0], reply[1]);
	}
	close(cmd[0]);
	close(reply[1]);
	helper_cmd_fd = cmd[1];
	helper_reply_fd = reply[0];
	return 0;
}

void helper_stop(void)
{
	if (helper_cmd_fd >= 0)
		close(helper_cmd_fd);	/* the helper's read() ends */
	if (helper_reply_fd >= 0)
		close(helper_reply_fd);
	if (helper_pid > 0)
		waitpid(helper_pid, NULL, 0);
	helper_cmd_fd = helper_reply_fd = -1;
	helper_pid = 0;
}

static void helper_call(enum helper_cmd cmd, const struct op *op, struct slot_reply *rep)
{
	struct helper_msg m = { .cmd = cmd, .op = *op };

	if (!write_full(helper_cmd_fd, &m, sizeof(m)) ||
	    !read_full(helper_reply_fd, rep, sizeof(*rep))) {
		memset(rep, 0, sizeof(*rep));
		rep->kind = FAIL_CRASH;
		snprintf(rep->msg, sizeof(rep->msg), "the helper process died");
	}
}

void helper_check_slot(int si, struct slot_reply *rep)
{
	struct op op = { .type = OP_MAP, .slot = si };

	helper_call(CMD_CHECK, &op, rep);
}

/* ---- the owner's side of mapping operations ---- */

static int map_flags(unsigned int mode)
{
	if (!(mode & MAPF_SHARED))
		return MAP_PRIVATE;
	return mode & MAPF_SYNC ? MAP_SHARED_VALIDATE | MAP_SYNC : MAP_SHARED;
}

static void owner_map(const struct op *op, struct slot *s, struct slot_reply *rep)
{
	void *base = reserve_aligned(s->len, s->align), *p;

	if (!base) {
		rep->ret = -errno;
		return;
	}
	p = mmap(base, s->len, s->prot, map_flags(s->flags) | MAP_FIXED, fds[s->file], s->off);
	if (p == MAP_FAILED) {
		rep->ret = -errno;
		munmap(base, s->len);
		return;
	}
	(void)op;
	s->addr = (uintptr_t)p;
	s->live = true;
}

static void owner_mremap(const struct op *op, struct slot *s, struct slot_reply *rep)
{
	void *base = reserve_aligned(op->len, op->off2), *p;

	if (!base) {
		rep->ret = -errno;
		return;
	}
	p = mremap((void *)s->addr, s->len, op->len, MREMAP_MAYMOVE | MREMAP_FIXED, base);
	if (p == MAP_FAILED) {
		rep->ret = -errno;
		munmap(base, op->len);
		return;
	}
	s->addr = (uintptr_t)p;
	s->len = op->len;
	s->align = op->off2;
}

/* Carry out a mapping operation on a slot of this process. */
void slot_exec(const struct op *op, struct slot_reply *rep)
{
	struct slot *s = &A->slot[op->slot];
	char *addr = (char *)s->addr;
	int r = 0;

	switch (op->type) {
	case OP_MAP:
		owner_map(op, s, rep);
		return;
	case OP_UNMAP:
		r = munmap(addr, s->len);
		s->live = false;
		break;
	case OP_MREMAP:
		owner_mremap(op, s, rep);
		return;
	case OP_MPROTECT:
		r = mprotect(addr, s->len, op->mode);
		if (!r)
			s->prot = op->mode;
		break;
	case OP_MADVISE:
		r = madvise(addr + op->off, op->len, MADV_DONTNEED);
		break;
	case OP_MSYNC:
		r = msync(addr + op->off, op->len, op->mode);
		break;
	case OP_STORE:
		rep->faulted = !guarded_write(addr + op->off, op->fill, op->len, &rep->fault);
		break;
	case OP_TOUCH:
		touch_slot(op, rep);
		break;
	default:
		break;
	}
	rep->ret = r ? -errno : 0;
}

static void owner_exec(const struct op *op, struct slot_reply *rep)
{
	memset(rep, 0, sizeof(*rep));
	if (A->slot[op->slot].flags & MAPF_HELPER)
		helper_call(CMD_SLOT_OP, op, rep);
	else
		slot_exec(op, rep);
}

/* ---- preconditions ---- */

static struct slot *live_slot(int si)
{
	return si >= 0 && si < NSLOTS && A->slot[si].live ? &A->slot[si] : NULL;
}

/* A live slot of the runner's own, as buffers of read(2) and write(2) are. */
static struct slot *runner_slot(int si)
{
	struct slot *s = live_slot(si);

	return s && !(s->flags & MAPF_HELPER) ? s : NULL;
}

static bool in_slot(const struct slot *s, uint64_t off, uint64_t len)
{
	return len && off < s->len && len <= s->len - off;
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

static bool file_range_ok(uint64_t off, uint64_t len)
{
	return off <= FILE_MAX && len <= FILE_MAX - off;
}

/* ---- the wrong model of -W: the check must catch it ---- */

static void wrong_model(const struct op *op, int f, uint64_t off, uint64_t n)
{
	if (cfg.wrong_model != (int)op->type || !n || off >= A->size[f])
		return;
	A->model[f][off] ^= 0xff;
}

/* ---- each operation ---- */

static void report_errno(struct outcome *o, const struct op *op, int e)
{
	fail(o, FAIL_ERROR, "%s failed: %s", op_name(op->type), strerror(e));
}

/* A system call failed: refused in a way callers expect, or a failure. */
static void refused(struct outcome *o, const struct op *op, int e, bool expected)
{
	if (expected)
		o->refused = e;
	else
		report_errno(o, op, e);
}

static void exec_map(const struct op *op, struct outcome *o)
{
	struct slot *s = op->slot >= 0 && op->slot < NSLOTS ? &A->slot[op->slot] : NULL;
	struct slot_reply rep;

	if (!s || s->live || op->off % PG || op->len % PG || !op->len || op->len > MAP_MAX ||
	    !file_range_ok(op->off, op->len) ||
	    ((op->mode & MAPF_SYNC) && (!(op->mode & MAPF_SHARED) || !feat.mapsync))) {
		o->skipped = true;
		return;
	}
	memset(s, 0, sizeof(*s));
	s->file = op->file;
	s->flags = op->mode;
	s->prot = PROT_READ | (op->mode & MAPF_WRITE ? PROT_WRITE : 0);
	s->off = op->off;
	s->len = op->len;
	s->align = op->off2 % (PMD_SZ / PG);
	model_slot_reset(op->slot, 0);
	owner_exec(op, &rep);
	if (rep.ret)
		report_errno(o, op, -rep.ret);
}

static void exec_mapping_op(const struct op *op, struct outcome *o)
{
	struct slot *s = live_slot(op->slot);
	struct slot_reply rep;

	if (!s) {
		o->skipped = true;
		return;
	}
	switch (op->type) {
	case OP_MREMAP:
		if (!op->len || op->len % PG || op->len > MAP_MAX ||
		    !file_range_ok(s->off, op->len)) {
			o->skipped = true;
			return;
		}
		break;
	case OP_MPROTECT:
		if (op->mode != PROT_READ && op->mode != (PROT_READ | PROT_WRITE)) {
			o->skipped = true;
			return;
		}
		break;
	case OP_MADVISE:
	case OP_MSYNC:
	case OP_TOUCH:
		if (op->off % PG || op->len % PG || !in_slot(s, op->off, op->len)) {
			o->skipped = true;
			return;
		}
		break;
	default:
		break;
	}
	owner_exec(op, &rep);
	if (rep.kind) {
		fail(o, rep.kind, "%s", rep.msg);
		return;
	}
	if (rep.ret) {
		report_errno(o, op, -rep.ret);
		return;
	}
	if (op->type == OP_UNMAP)
		model_slot_reset(op->slot, 0);
	else if (op->type == OP_MREMAP)
		model_slot_reset(op->slot, op->len / PG);
	else if (op->type == OP_MADVISE && !(s->flags & MAPF_SHARED))
		memset(&A->priv_state[op->slot][op->off / PG], PRIV_FOLLOW, op->len / PG);
}

static void exec_store(const struct op *op, struct outcome *o)
{
	struct slot *s = live_slot(op->slot);
	struct slot_reply rep;
	uint64_t fo;

	/* Stores beyond EOF would fault, or write what no file holds. */
	if (!s || !(s->prot & PROT_WRITE) || !in_slot(s, op->off, op->len) ||
	    s->off + op->off + op->len > A->size[s->file]) {
		o->skipped = true;
		return;
	}
	fo = s->off + op->off;
	owner_exec(op, &rep);
	if (rep.faulted) {
		fail(o, FAIL_SIGBUS, "a store through slot %d at 0x%llx (f%d offset 0x%llx, inside its size 0x%llx) faulted at page 0x%llx of the slot",
		     op->slot, (unsigned long long)op->off, s->file, (unsigned long long)fo,
		     (unsigned long long)A->size[s->file],
		     (unsigned long long)((rep.fault - s->addr) / PG));
		return;
	}
	memset(iobuf, op->fill, op->len);
	model_store(op->slot, op->off, iobuf, op->len);
	if (s->flags & MAPF_SHARED)
		wrong_model(op, s->file, fo, op->len);
	else if (cfg.wrong_model == OP_STORE)
		A->priv[op->slot][op->off / PG][op->off % PG] ^= 0xff;
}

/*
 * The buffer of a pwrite(2) and what the model says it holds; *valid is
 * how many of its bytes can be read before it faults.
 */
static const void *write_source(const struct op *op, uint64_t *valid, bool *skip)
{
	struct slot *s;

	switch (op->buf) {
	case BUF_HEAP:
		memset(iobuf, op->fill, op->len);
		*valid = op->len;
		return iobuf;
	case BUF_BAD:
		if (op->bufarg > BADBUF_MAX)
			break;
		*valid = op->bufarg < op->len ? op->bufarg : op->len;
		memset(badbuf_end - op->bufarg, op->fill, *valid);
		memset(iobuf, op->fill, *valid);
		return badbuf_end - op->bufarg;
	case BUF_MAP:
		s = runner_slot(op->slot);
		/*
		 * From the file it writes: apart, and inside its size (the
		 * write would make a source page beyond EOF readable as it
		 * extends the file).
		 */
		if (!s || !in_slot(s, op->off2, op->len) ||
		    (s->file == op->file &&
		     (overlap(s->off + op->off2, op->len, op->off, op->len) ||
		      s->off + op->off2 + op->len > A->size[s->file])))
			break;
		expected_bytes(op->slot, op->off2, op->len, iobuf, valid);
		return (const char *)s->addr + op->off2;
	}
	*skip = true;
	return NULL;
}

static void exec_pwrite(const struct op *op, struct outcome *o)
{
	uint64_t valid = 0;
	bool skip = false;
	const void *src;
	ssize_t n;

	if (!op->len || !file_range_ok(op->off, op->len)) {
		o->skipped = true;
		return;
	}
	src = write_source(op, &valid, &skip);
	if (skip) {
		o->skipped = true;
		return;
	}
	n = pwrite(fds[op->file], src, op->len, op->off);
	model_maybe_allocated(op->file, op->off, op->len);
	/*
	 * A buffered write that copies nothing beyond EOF still sets the
	 * size to its offset (generic and simple write_end: the size
	 * becomes pos + copied): not DAX's doing, so allowed.
	 */
	if (n <= 0 && op->off > A->size[op->file])
		A->size_may_be[op->file] = op->off;
	if (n < 0) {
		refused(o, op, errno, (errno == EFAULT && valid < op->len) || errno == ENOSPC);
		return;
	}
	if ((uint64_t)n > valid) {
		fail(o, op->buf == BUF_MAP ? FAIL_NO_SIGBUS : FAIL_ERROR,
		     "pwrite wrote 0x%zx bytes from a buffer that should fault after 0x%llx",
		     n, (unsigned long long)valid);
		return;
	}
	model_write(op->file, op->off, iobuf, n);
	wrong_model(op, op->file, op->off, n);
}

/* pread(2) into a mapping: a store into the destination slot. */
static void pread_into_slot(const struct op *op, struct outcome *o)
{
	struct slot *s = runner_slot(op->slot);
	ssize_t n;

	if (!s || !(s->prot & PROT_WRITE) || !in_slot(s, op->off2, op->len) ||
	    s->off + op->off2 + op->len > A->size[s->file] ||
	    (s->file == op->file && overlap(s->off + op->off2, op->len, op->off, op->len))) {
		o->skipped = true;
		return;
	}
	n = pread(fds[op->file], (char *)s->addr + op->off2, op->len, op->off);
	if (s->flags & MAPF_SHARED)
		model_maybe_allocated(s->file, s->off + op->off2, op->len);
	if (n < 0) {
		report_errno(o, op, errno);
		return;
	}
	memcpy(iobuf, A->model[op->file] + op->off, n);
	model_store(op->slot, op->off2, iobuf, n);
	if (s->flags & MAPF_SHARED)
		wrong_model(op, s->file, s->off + op->off2, n);
}

static void exec_pread(const struct op *op, struct outcome *o)
{
	uint64_t size = A->size[op->file], want, room;
	unsigned char *dst;
	ssize_t n, i;

	if (!op->len || !file_range_ok(op->off, op->len) || op->len > BADBUF_MAX) {
		o->skipped = true;
		return;
	}
	if (op->buf == BUF_MAP) {
		pread_into_slot(op, o);
		return;
	}
	want = op->off < size ? size - op->off : 0;
	if (want > op->len)
		want = op->len;
	room = op->len;
	dst = iobuf;
	if (op->buf == BUF_BAD) {
		room = op->bufarg < op->len ? op->bufarg : op->len;
		dst = badbuf_end - op->bufarg;
		if (op->bufarg > BADBUF_MAX) {
			o->skipped = true;
			return;
		}
	}
	n = pread(fds[op->file], dst, op->len, op->off);
	if (n < 0) {
		refused(o, op, errno, errno == EFAULT && room < want);
		return;
	}
	if ((uint64_t)n > want || (uint64_t)n > room ||
	    (op->buf == BUF_HEAP && (uint64_t)n != want)) {
		fail(o, FAIL_ERROR, "pread returned 0x%zx bytes; the file has 0x%llx there, the buffer room for 0x%llx",
		     n, (unsigned long long)want, (unsigned long long)room);
		return;
	}
	for (i = 0; i < n; i++)
		if (dst[i] != A->model[op->file][op->off + i]) {
			fail(o, FAIL_FILE, "pread of f%d at 0x%llx: byte 0x%zx is 0x%02x, the model has 0x%02x",
			     op->file, (unsigned long long)op->off, i, dst[i],
			     A->model[op->file][op->off + i]);
			return;
		}
}

static void exec_truncate(const struct op *op, struct outcome *o)
{
	if (op->len > FILE_MAX) {
		o->skipped = true;
		return;
	}
	if (ftruncate(fds[op->file], op->len)) {
		report_errno(o, op, errno);
		return;
	}
	model_resize(op->file, op->len);
}

static bool falloc_errno_expected(int e)
{
	return e == EINVAL || e == EOPNOTSUPP || e == ENOSPC || e == EFBIG || e == ENODEV;
}

static void falloc_model(const struct op *op)
{
	int f = op->file;
	uint64_t end = op->off + op->len, size = A->size[f];

	switch (op->mode) {
	case 0:
		model_resize(f, end > size ? end : size);
		break;
	case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE:
	case FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE:
		model_zero(f, op->off, op->len);
		priv_maybe(f, op->off, end);
		break;
	case FALLOC_FL_ZERO_RANGE:
		model_resize(f, end > size ? end : size);
		model_zero(f, op->off, op->len);
		priv_maybe(f, op->off, end);
		break;
	case FALLOC_FL_WRITE_ZEROES:
		model_fill(f, op->off, 0, op->len);
		priv_maybe(f, op->off, end);
		break;
	case FALLOC_FL_COLLAPSE_RANGE:
		model_collapse(f, op->off, op->len);
		break;
	case FALLOC_FL_INSERT_RANGE:
		model_insert(f, op->off, op->len);
		break;
	case FALLOC_FL_UNSHARE_RANGE:
		/* Without KEEP_SIZE it allocates, and extends the file. */
		model_resize(f, end > size ? end : size);
		model_unshare(f, op->off, op->len);
		break;
	default:	/* FALLOC_FL_KEEP_SIZE: no change a reader sees */
		break;
	}
}

static void exec_fallocate(const struct op *op, struct outcome *o)
{
	int i;

	for (i = 0; i < nr_falloc_modes; i++)
		if (falloc_mode_list[i] == op->mode)
			break;
	if (i == nr_falloc_modes || !op->len || !file_range_ok(op->off, op->len) ||
	    (op->mode == FALLOC_FL_INSERT_RANGE && A->size[op->file] + op->len > FILE_MAX)) {
		o->skipped = true;
		return;
	}
	if (fallocate(fds[op->file], op->mode, op->off, op->len)) {
		refused(o, op, errno, falloc_errno_expected(errno));
		return;
	}
	falloc_model(op);
	if (op->mode != FALLOC_FL_COLLAPSE_RANGE && op->mode != FALLOC_FL_INSERT_RANGE)
		wrong_model(op, op->file, op->off, op->len);
}

static void exec_fsync(const struct op *op, struct outcome *o)
{
	if ((op->mode ? fdatasync(fds[op->file]) : fsync(fds[op->file])))
		report_errno(o, op, errno);
}

static bool remap_errno_expected(int e)
{
	return e == EINVAL || e == EOPNOTSUPP || e == EXDEV || e == ENOSPC || e == EFBIG ||
	       e == ETXTBSY || e == EBUSY || e == EPERM || e == EOVERFLOW || e == EBADE;
}

static bool two_files(const struct op *op, bool may_be_same)
{
	return op->file2 >= 0 && op->file2 < NFILES && (may_be_same || op->file2 != op->file);
}

static void exec_clone(const struct op *op, struct outcome *o)
{
	if (!two_files(op, false)) {
		o->skipped = true;
		return;
	}
	if (ioctl(fds[op->file], FICLONE, fds[op->file2])) {
		refused(o, op, errno, remap_errno_expected(errno));
		return;
	}
	model_copy(op->file, 0, op->file2, 0, A->size[op->file2], true);
	wrong_model(op, op->file, 0, A->size[op->file2]);
}

/* The bytes a remap of @len (0: to EOF) from @src at @off covers. */
static uint64_t remap_len(int src, uint64_t off, uint64_t len)
{
	uint64_t size = A->size[src];

	if (off >= size)
		return 0;
	if (!len || len > size - off)
		return size - off;
	return len;
}

static void exec_clone_range(const struct op *op, struct outcome *o)
{
	struct file_clone_range r = {
		.src_fd = fds[op->file2 < 0 ? 0 : op->file2],
		.src_offset = op->off2,
		.src_length = op->len,
		.dest_offset = op->off,
	};
	uint64_t n;

	if (!two_files(op, true) || !file_range_ok(op->off, op->len) ||
	    !file_range_ok(op->off2, op->len)) {
		o->skipped = true;
		return;
	}
	n = remap_len(op->file2, op->off2, op->len);
	if (op->off + n > FILE_MAX) {
		o->skipped = true;
		return;
	}
	if (ioctl(fds[op->file], FICLONERANGE, &r)) {
		refused(o, op, errno, remap_errno_expected(errno));
		return;
	}
	model_copy(op->file, op->off, op->file2, op->off2, n, true);
	wrong_model(op, op->file, op->off, n);
}

static void exec_dedupe(const struct op *op, struct outcome *o)
{
	struct {
		struct file_dedupe_range r;
		struct file_dedupe_range_info info;
	} d;
	uint64_t n;
	bool same;

	if (!two_files(op, true) || !file_range_ok(op->off, op->len) ||
	    !file_range_ok(op->off2, op->len) || !op->len) {
		o->skipped = true;
		return;
	}
	memset(&d, 0, sizeof(d));
	d.r.src_offset = op->off2;
	d.r.src_length = op->len;
	d.r.dest_count = 1;
	d.info.dest_fd = fds[op->file];
	d.info.dest_offset = op->off;
	if (ioctl(fds[op->file2], FIDEDUPERANGE, &d)) {
		refused(o, op, errno, remap_errno_expected(errno));
		return;
	}
	if (d.info.status < 0) {
		refused(o, op, -d.info.status, remap_errno_expected(-d.info.status));
		return;
	}
	n = d.info.bytes_deduped;
	if (d.info.status != FILE_DEDUPE_RANGE_SAME || !n)
		return;
	/* The kernel compared the data: so must the model agree. */
	same = op->off + n <= FILE_MAX && op->off2 + n <= FILE_MAX &&
	       !memcmp(A->model[op->file] + op->off, A->model[op->file2] + op->off2, n);
	if (!same) {
		fail(o, FAIL_FILE, "FIDEDUPERANGE found f%d at 0x%llx and f%d at 0x%llx equal over 0x%llx bytes; the model has them differ",
		     op->file, (unsigned long long)op->off, op->file2,
		     (unsigned long long)op->off2, (unsigned long long)n);
		return;
	}
	model_dedupe(op->file, op->off, op->file2, op->off2, n);
}

static void exec_copy_range(const struct op *op, struct outcome *o)
{
	loff_t in = op->off2, out = op->off;
	ssize_t n;
	bool share;

	if (!two_files(op, true) || !op->len || !file_range_ok(op->off, op->len) ||
	    !file_range_ok(op->off2, op->len)) {
		o->skipped = true;
		return;
	}
	n = copy_file_range(fds[op->file2], &in, fds[op->file], &out, op->len, 0);
	if (n < 0) {
		refused(o, op, errno, remap_errno_expected(errno));
		return;
	}
	/* Block-aligned copies may be done by reflink; others copy data. */
	share = feat.reflink && op->off % feat.blksize == 0 && op->off2 % feat.blksize == 0;
	model_copy(op->file, op->off, op->file2, op->off2, n, share);
	wrong_model(op, op->file, op->off, n);
}

static void exec_exchange(const struct op *op, struct outcome *o)
{
	struct xfs_exchange_range x = {
		.file1_fd = fds[op->file2 < 0 ? 0 : op->file2],
		.file1_offset = op->off2,
		.file2_offset = op->off,
		.length = op->len,
	};

	if (!two_files(op, false) || !op->len || !file_range_ok(op->off, op->len) ||
	    !file_range_ok(op->off2, op->len)) {
		o->skipped = true;
		return;
	}
	if (ioctl(fds[op->file], XFS_IOC_EXCHANGE_RANGE, &x)) {
		refused(o, op, errno, remap_errno_expected(errno) || errno == ENOTTY);
		return;
	}
	model_exchange(op->file2, op->off2, op->file, op->off, op->len);
	wrong_model(op, op->file, op->off, op->len);
}

static void exec_cowextsize(const struct op *op, struct outcome *o)
{
	struct fsxattr fa;

	if (ioctl(fds[op->file], FS_IOC_FSGETXATTR, &fa)) {
		refused(o, op, errno, errno == ENOTTY || errno == EOPNOTSUPP);
		return;
	}
	if (op->len)
		fa.fsx_xflags |= FS_XFLAG_COWEXTSIZE;
	else
		fa.fsx_xflags &= ~FS_XFLAG_COWEXTSIZE;
	fa.fsx_cowextsize = op->len;
	if (ioctl(fds[op->file], FS_IOC_FSSETXATTR, &fa))
		refused(o, op, errno, errno == EINVAL || errno == EOPNOTSUPP || errno == ENOTTY);
}

/* ---- pipes that keep references to mapped pages ---- */

static bool held_block_in(uint32_t id, int f, uint64_t first, uint64_t last)
{
	uint64_t p;

	for (p = first; p <= last; p++)
		if (A->blockid[f][p] == id)
			return true;
	return false;
}

bool pipe_live(int pi)
{
	bool live;

	pthread_mutex_lock(&pipes_lock);
	live = pi >= 0 && pi < NPIPES && pipes[pi].live;
	pthread_mutex_unlock(&pipes_lock);
	return live;
}

int pipes_live(void)
{
	int i, n = 0;

	for (i = 0; i < NPIPES; i++)
		n += pipe_live(i);
	return n;
}

static void pipe_close_locked(int pi)
{
	close(pipes[pi].fd[0]);
	close(pipes[pi].fd[1]);
	pipes[pi].live = false;
}

/* The watchdog lets go of every reference we hold; how many pipes. */
int pipes_close_all(void)
{
	int i, n = 0;

	pthread_mutex_lock(&pipes_lock);
	for (i = 0; i < NPIPES; i++)
		if (pipes[i].live) {
			pipe_close_locked(i);
			n++;
		}
	pthread_mutex_unlock(&pipes_lock);
	return n;
}

/* What a pipe holds when it takes page @page of slot @si. */
static struct held_page slot_page_held(const struct slot *s, int si, uint64_t page)
{
	struct held_page h = { .file = -1 };

	if (!(s->flags & MAPF_SHARED) && A->priv_state[si][page] != PRIV_FOLLOW)
		return h;
	h.file = s->file;
	h.page = s->off / PG + page;
	h.id = A->blockid[s->file][h.page];
	return h;
}

static void exec_vmsplice(const struct op *op, struct outcome *o)
{
	struct slot *s = runner_slot(op->slot);
	struct held_pipe p = { .live = true };
	struct iovec iov;
	ssize_t n;
	uint64_t i;

	if (!s || op->off % PG || op->len % PG || op->len > PIPE_PAGES * PG ||
	    !in_slot(s, op->off, op->len) || s->off + op->off + op->len > round_up_pg(A->size[s->file]) ||
	    op->pipe < 0 || op->pipe >= NPIPES || pipe_live(op->pipe)) {
		o->skipped = true;
		return;
	}
	if (pipe2(p.fd, O_NONBLOCK)) {
		report_errno(o, op, errno);
		return;
	}
	iov.iov_base = (char *)s->addr + op->off;
	iov.iov_len = op->len;
	n = vmsplice(p.fd[1], &iov, 1, SPLICE_F_NONBLOCK);
	if (n < 0) {
		close(p.fd[0]);
		close(p.fd[1]);
		refused(o, op, errno, errno == EFAULT || errno == EAGAIN || errno == ENOMEM);
		return;
	}
	for (i = 0; i < (uint64_t)n / PG; i++)
		p.held[p.npages++] = slot_page_held(s, op->slot, op->off / PG + i);
	pthread_mutex_lock(&pipes_lock);
	pipes[op->pipe] = p;
	pthread_mutex_unlock(&pipes_lock);
}

static void exec_pipe_close(const struct op *op, struct outcome *o)
{
	if (!pipe_live(op->pipe)) {
		o->skipped = true;
		return;
	}
	pthread_mutex_lock(&pipes_lock);
	if (pipes[op->pipe].live)
		pipe_close_locked(op->pipe);
	pthread_mutex_unlock(&pipes_lock);
}

/*
 * Whether a pipe of ours holds a page of file @f in [@off, @off + @len),
 * or the block of one of those pages (which a clone may share).
 */
static bool held_in_range(int f, uint64_t off, uint64_t len)
{
	uint64_t first = off / PG, last;
	const struct held_page *h;
	int i, j;

	if (f < 0 || !len)
		return false;
	last = (off + len - 1) / PG;
	if (last >= FILE_PAGES)
		last = FILE_PAGES - 1;
	for (i = 0; i < NPIPES; i++) {
		for (j = 0; pipes[i].live && j < pipes[i].npages; j++) {
			h = &pipes[i].held[j];
			if (h->file == f && h->page >= first && h->page <= last)
				return true;
			if (h->id && held_block_in(h->id, f, first, last))
				return true;
		}
	}
	return false;
}

/*
 * Whether a reference we hold explains that @op waits: one on a block
 * the operation writes (a write(2) or a store), or on any block of a file
 * whose layout the operation breaks (truncate, fallocate and the remap
 * operations wait for every busy page of the inodes they lock).
 */
bool holds_explain(const struct op *op)
{
	struct slot *s;
	bool r = false;

	pthread_mutex_lock(&pipes_lock);
	switch (op->type) {
	case OP_PWRITE:
		r = held_in_range(op->file, op->off, op->len);
		break;
	case OP_PREAD:
		s = op->buf == BUF_MAP ? live_slot(op->slot) : NULL;
		r = s && (s->flags & MAPF_SHARED) &&
		    held_in_range(s->file, s->off + op->off2, op->len);
		break;
	case OP_STORE:
		s = live_slot(op->slot);
		r = s && (s->flags & MAPF_SHARED) && held_in_range(s->file, s->off + op->off, op->len);
		break;
	case OP_TRUNCATE:
	case OP_FALLOCATE:
		r = held_in_range(op->file, 0, FILE_MAX);
		break;
	case OP_CLONE:
	case OP_CLONE_RANGE:
	case OP_DEDUPE:
	case OP_COPY_RANGE:
	case OP_EXCHANGE:
		r = held_in_range(op->file, 0, FILE_MAX) || held_in_range(op->file2, 0, FILE_MAX);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&pipes_lock);
	return r;
}

void exec_op(const struct op *op, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	if (op->file < 0 || op->file >= NFILES) {
		o->skipped = true;
		return;
	}
	switch (op->type) {
	case OP_MAP: exec_map(op, o); break;
	case OP_UNMAP:
	case OP_MREMAP:
	case OP_MPROTECT:
	case OP_MADVISE:
	case OP_MSYNC:
	case OP_TOUCH: exec_mapping_op(op, o); break;
	case OP_STORE: exec_store(op, o); break;
	case OP_PWRITE: exec_pwrite(op, o); break;
	case OP_PREAD: exec_pread(op, o); break;
	case OP_TRUNCATE: exec_truncate(op, o); break;
	case OP_FALLOCATE: exec_fallocate(op, o); break;
	case OP_FSYNC: exec_fsync(op, o); break;
	case OP_CLONE: exec_clone(op, o); break;
	case OP_CLONE_RANGE: exec_clone_range(op, o); break;
	case OP_DEDUPE: exec_dedupe(op, o); break;
	case OP_COPY_RANGE: exec_copy_range(op, o); break;
	case OP_EXCHANGE: exec_exchange(op, o); break;
	case OP_COWEXTSIZE: exec_cowextsize(op, o); break;
	case OP_VMSPLICE: exec_vmsplice(op, o); break;
	case OP_PIPE_CLOSE: exec_pipe_close(op, o); break;
	case NR_OPS: o->skipped = true; break;
	}
}
