// SPDX-License-Identifier: GPL-2.0
/*
 * The text form of an operation: one line, "NAME key=value ...", with the
 * keys that operation uses and a comment after '#' for the reader.  It is
 * what a failure prints and what -r replays, so that a shrunk sequence can
 * be read, edited by hand and run again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/falloc.h>

#include "fuzz.h"

#ifndef FALLOC_FL_WRITE_ZEROES
#define FALLOC_FL_WRITE_ZEROES 0x80
#endif

static const char *const names[NR_OPS] = {
	[OP_MAP] = "map",
	[OP_UNMAP] = "unmap",
	[OP_MREMAP] = "mremap",
	[OP_MPROTECT] = "mprotect",
	[OP_MADVISE] = "madvise_dontneed",
	[OP_MSYNC] = "msync",
	[OP_STORE] = "store",
	[OP_PWRITE] = "pwrite",
	[OP_PREAD] = "pread",
	[OP_TRUNCATE] = "truncate",
	[OP_FALLOCATE] = "fallocate",
	[OP_FSYNC] = "fsync",
	[OP_CLONE] = "ficlone",
	[OP_CLONE_RANGE] = "ficlonerange",
	[OP_DEDUPE] = "fideduperange",
	[OP_COPY_RANGE] = "copy_file_range",
	[OP_EXCHANGE] = "exchange_range",
	[OP_COWEXTSIZE] = "cowextsize",
	[OP_VMSPLICE] = "vmsplice",
	[OP_PIPE_CLOSE] = "pipe_close",
	[OP_TOUCH] = "touch",
};

const unsigned int falloc_mode_list[] = {
	0,
	FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_ZERO_RANGE,
	FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	FALLOC_FL_COLLAPSE_RANGE,
	FALLOC_FL_INSERT_RANGE,
	FALLOC_FL_UNSHARE_RANGE,
	FALLOC_FL_WRITE_ZEROES,
};
const int nr_falloc_modes = sizeof(falloc_mode_list) / sizeof(falloc_mode_list[0]);

const char *op_name(enum op_type t)
{
	return t < NR_OPS ? names[t] : "?";
}

const char *falloc_mode_name(unsigned int mode)
{
	switch (mode) {
	case 0: return "allocate";
	case FALLOC_FL_KEEP_SIZE: return "allocate,keep_size";
	case FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE: return "punch_hole";
	case FALLOC_FL_ZERO_RANGE: return "zero_range";
	case FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE: return "zero_range,keep_size";
	case FALLOC_FL_COLLAPSE_RANGE: return "collapse_range";
	case FALLOC_FL_INSERT_RANGE: return "insert_range";
	case FALLOC_FL_UNSHARE_RANGE: return "unshare_range";
	case FALLOC_FL_WRITE_ZEROES: return "write_zeroes";
	}
	return "?";
}

const char *slot_describe(const struct slot *s, char *buf, size_t size)
{
	snprintf(buf, size, "f%d 0x%llx+0x%llx %s %s%s, address %s, %s",
		 s->file, (unsigned long long)s->off, (unsigned long long)s->len,
		 s->flags & MAPF_SHARED ? "shared" : "private",
		 s->prot & PROT_WRITE ? "rw" : "ro",
		 s->flags & MAPF_SYNC ? " sync" : "",
		 (s->align * PG - s->off) % PMD_SZ == 0 ? "PMD-capable" : "PTE-only",
		 s->flags & MAPF_HELPER ? "helper process" : "runner");
	return buf;
}

static const char *buf_name(enum buf_kind b)
{
	return b == BUF_BAD ? "bad" : b == BUF_MAP ? "map" : "heap";
}

#define ADD(...) (n += snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))

void op_format(const struct op *op, char *buf, size_t size)
{
	size_t n = 0;
	unsigned long long off = op->off, off2 = op->off2, len = op->len;

	ADD("%s", op_name(op->type));
	switch (op->type) {
	case OP_MAP:
		ADD(" slot=%d f=%d off=0x%llx len=0x%llx mode=%u align=%llu # %s %s%s%s, %s",
		    op->slot, op->file, off, len, op->mode, off2,
		    op->mode & MAPF_SHARED ? "shared" : "private",
		    op->mode & MAPF_WRITE ? "rw" : "ro",
		    op->mode & MAPF_SYNC ? " sync" : "",
		    op->mode & MAPF_HELPER ? " in the helper" : "",
		    (off2 * PG - off) % PMD_SZ == 0 ? "PMD-capable" : "PTE-only");
		break;
	case OP_UNMAP:
		ADD(" slot=%d", op->slot);
		break;
	case OP_MREMAP:
		ADD(" slot=%d len=0x%llx align=%llu", op->slot, len, off2);
		break;
	case OP_MPROTECT:
		ADD(" slot=%d mode=%u # %s", op->slot, op->mode,
		    op->mode & PROT_WRITE ? "rw" : "ro");
		break;
	case OP_MADVISE:
		ADD(" slot=%d off=0x%llx len=0x%llx", op->slot, off, len);
		break;
	case OP_MSYNC:
		ADD(" slot=%d off=0x%llx len=0x%llx mode=%u", op->slot, off, len, op->mode);
		break;
	case OP_STORE:
		ADD(" slot=%d off=0x%llx len=0x%llx fill=0x%02x", op->slot, off, len, op->fill);
		break;
	case OP_PWRITE:
	case OP_PREAD:
		ADD(" f=%d off=0x%llx len=0x%llx", op->file, off, len);
		if (op->type == OP_PWRITE)
			ADD(" fill=0x%02x", op->fill);
		ADD(" buf=%s", buf_name(op->buf));
		if (op->buf == BUF_BAD)
			ADD(" bufarg=0x%llx # faults after 0x%llx bytes",
			    (unsigned long long)op->bufarg, (unsigned long long)op->bufarg);
		if (op->buf == BUF_MAP)
			ADD(" slot=%d off2=0x%llx # %s slot %d at 0x%llx", op->slot, off2,
			    op->type == OP_PWRITE ? "from" : "into", op->slot, off2);
		break;
	case OP_TRUNCATE:
		ADD(" f=%d len=0x%llx", op->file, len);
		break;
	case OP_FALLOCATE:
		ADD(" f=%d mode=%u off=0x%llx len=0x%llx # %s", op->file, op->mode, off, len,
		    falloc_mode_name(op->mode));
		break;
	case OP_FSYNC:
		ADD(" f=%d mode=%u # %s", op->file, op->mode, op->mode ? "fdatasync" : "fsync");
		break;
	case OP_CLONE:
		ADD(" f=%d f2=%d # f%d becomes a clone of f%d", op->file, op->file2,
		    op->file, op->file2);
		break;
	case OP_CLONE_RANGE:
	case OP_DEDUPE:
	case OP_COPY_RANGE:
	case OP_EXCHANGE:
		ADD(" f=%d off=0x%llx f2=%d off2=0x%llx len=0x%llx # f%d at 0x%llx %s f%d at 0x%llx",
		    op->file, off, op->file2, off2, len, op->file, off,
		    op->type == OP_EXCHANGE ? "<->" : "<-", op->file2, off2);
		break;
	case OP_COWEXTSIZE:
		ADD(" f=%d len=0x%llx", op->file, len);
		break;
	case OP_VMSPLICE:
		ADD(" slot=%d off=0x%llx len=0x%llx pipe=%d", op->slot, off, len, op->pipe);
		break;
	case OP_PIPE_CLOSE:
		ADD(" pipe=%d", op->pipe);
		break;
	case OP_TOUCH:
		ADD(" slot=%d off=0x%llx len=0x%llx # read a byte of each page", op->slot, off, len);
		break;
	case NR_OPS:
		break;
	}
}

static int parse_buf(const char *v, enum buf_kind *b)
{
	if (!strcmp(v, "heap"))
		*b = BUF_HEAP;
	else if (!strcmp(v, "bad"))
		*b = BUF_BAD;
	else if (!strcmp(v, "map"))
		*b = BUF_MAP;
	else
		return -1;
	return 0;
}

/* One line into @op: 0, 1 for a blank or comment line, -1 on an error. */
int op_parse(const char *line, struct op *op)
{
	char copy[1024], *save = NULL, *w, *eq, *end;
	unsigned long long v;
	int t;

	memset(op, 0, sizeof(*op));
	op->file2 = op->slot = op->pipe = -1;
	snprintf(copy, sizeof(copy), "%s", line);
	if ((w = strchr(copy, '#')))
		*w = 0;
	w = strtok_r(copy, " \t\r\n", &save);
	if (!w)
		return 1;
	for (t = 0; t < NR_OPS; t++)
		if (!strcmp(w, names[t]))
			break;
	if (t == NR_OPS)
		return -1;
	op->type = t;
	while ((w = strtok_r(NULL, " \t\r\n", &save))) {
		eq = strchr(w, '=');
		if (!eq)
			return -1;
		*eq++ = 0;
		if (!strcmp(w, "buf")) {
			if (parse_buf(eq, &op->buf))
				return -1;
			continue;
		}
		errno = 0;
		v = strtoull(eq, &end, 0);
		if (errno || *end || end == eq)
			return -1;
		if (!strcmp(w, "f"))
			op->file = v;
		else if (!strcmp(w, "f2"))
			op->file2 = v;
		else if (!strcmp(w, "slot"))
			op->slot = v;
		else if (!strcmp(w, "pipe"))
			op->pipe = v;
		else if (!strcmp(w, "off"))
			op->off = v;
		else if (!strcmp(w, "off2") || !strcmp(w, "align"))
			op->off2 = v;
		else if (!strcmp(w, "len"))
			op->len = v;
		else if (!strcmp(w, "mode"))
			op->mode = v;
		else if (!strcmp(w, "fill"))
			op->fill = v;
		else if (!strcmp(w, "bufarg"))
			op->bufarg = v;
		else
			return -1;
	}
	if (op->file < 0 || op->file >= NFILES || op->file2 >= NFILES ||
	    op->slot >= NSLOTS || op->pipe >= NPIPES)
		return -1;
	return 0;
}
