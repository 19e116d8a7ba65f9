// SPDX-License-Identifier: GPL-2.0
/*
 * The check after every operation: read(2) of each file against the
 * model, then every page that a live mapping has in its page table
 * against the model (and, where they differ, against read(2), so that the
 * report says which of the three disagree).
 *
 * The check reads only pages that are mapped (/proc/self/pagemap says
 * which): reading one that is not would fault it in, and a check that
 * faults changes the very state it is there to see.  A PMD zero entry
 * that a write(2) dropped, say, would come back on the check's read and
 * hide the stale PTEs beside it.  Faults happen where the sequence says:
 * touch operations (and stores, and read(2)/write(2) with a mapped
 * buffer) fault pages in; the check then sees what the kernel left there.
 *
 * A page wholly beyond EOF must not be mapped (truncate unmaps it, faults
 * refuse it), and reading it through a touch must give SIGBUS.  A private
 * page with a copy of its own must stay mapped unless an operation may
 * have zapped it (PRIV_MAYBE).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)	/* also a migration entry: still there */

static unsigned char filebuf[FILE_MAX];
static int pagemap = -1;

static int read_byte(int f, uint64_t off)
{
	unsigned char c;

	return pread(fds[f], &c, 1, off) == 1 ? c : -1;
}

static void check_file(int f, struct outcome *o)
{
	uint64_t size = A->size[f], done = 0, i, first = 0, ndiff = 0;
	struct stat st;
	ssize_t n;

	if (!fstat(fds[f], &st) && A->size_may_be[f] && (uint64_t)st.st_size == A->size_may_be[f])
		model_resize(f, A->size_may_be[f]);
	A->size_may_be[f] = 0;
	size = A->size[f];
	if (fstat(fds[f], &st) || (uint64_t)st.st_size != size) {
		fail(o, FAIL_FILE, "f%d: size 0x%llx, the model has 0x%llx", f,
		     (unsigned long long)st.st_size, (unsigned long long)size);
		return;
	}
	while (done < size) {
		n = pread(fds[f], filebuf + done, size - done, done);
		if (n <= 0)
			break;
		done += n;
	}
	if (done < size) {
		fail(o, FAIL_FILE, "f%d: read(2) ends at 0x%llx of 0x%llx", f,
		     (unsigned long long)done, (unsigned long long)size);
		return;
	}
	if (!memcmp(filebuf, A->model[f], size))
		return;
	for (i = 0; i < size; i++)
		if (filebuf[i] != A->model[f][i]) {
			if (!ndiff++)
				first = i;
		}
	fail(o, FAIL_FILE, "f%d at 0x%llx (page %llu): read(2) 0x%02x, the model 0x%02x; %llu bytes differ",
	     f, (unsigned long long)first, (unsigned long long)(first / PG), filebuf[first],
	     A->model[f][first], (unsigned long long)ndiff);
}

struct slot_check {
	int si;
	struct slot *s;
	struct slot_reply *rep;
	unsigned char want[PG];
	uint64_t bad_pages;
	uint64_t pm[MAP_PAGES];		/* the slot's pagemap entries */
};

static void describe_page(struct slot_check *c, uint64_t p, char *buf, size_t size)
{
	char d[256];

	snprintf(buf, size, "slot %d (%s) page %llu (f%d offset 0x%llx, size 0x%llx)",
		 c->si, slot_describe(c->s, d, sizeof(d)), (unsigned long long)p,
		 c->s->file, (unsigned long long)(c->s->off + p * PG),
		 (unsigned long long)A->size[c->s->file]);
}

/* The first wrong page is reported; the others are counted. */
static bool first_bad(struct slot_check *c)
{
	return !c->bad_pages++;
}

static void report_mismatch(struct slot_check *c, uint64_t p, int diff, const char *what)
{
	const unsigned char *m = (const unsigned char *)c->s->addr + p * PG;
	uint64_t fo = c->s->off + p * PG + diff;
	char where[512];
	int r = read_byte(c->s->file, fo);

	if (!first_bad(c))
		return;
	describe_page(c, p, where, sizeof(where));
	c->rep->kind = FAIL_MAP;
	snprintf(c->rep->msg, sizeof(c->rep->msg),
		 "%s, byte 0x%x: mapping 0x%02x, %s 0x%02x, read(2) %s%02x, model 0x%02x",
		 where, diff, m[diff], what, c->want[diff], r < 0 ? "none " : "0x",
		 r < 0 ? 0 : r, A->model[c->s->file][fo]);
}

static void report_page(struct slot_check *c, uint64_t p, enum fail_kind kind, const char *what)
{
	char where[512];

	if (!first_bad(c))
		return;
	describe_page(c, p, where, sizeof(where));
	c->rep->kind = kind;
	snprintf(c->rep->msg, sizeof(c->rep->msg), "%s: %s", where, what);
}

/* A private copy the kernel may have zapped: which is the page now? */
static void check_maybe_page(struct slot_check *c, uint64_t p, bool mapped)
{
	const unsigned char *m = (const unsigned char *)c->s->addr + p * PG;
	uint64_t fo = c->s->off + p * PG;
	bool file_has_page = fo < round_up_pg(A->size[c->s->file]);
	uintptr_t fault;
	int d_copy, d_file = -1;

	if (!mapped) {
		A->priv_state[c->si][p] = PRIV_FOLLOW;	/* zapped */
		return;
	}
	if (!(c->pm[p] & PM_PRESENT))
		return;		/* being migrated: look next time */
	if (!guarded_memcmp(m, A->priv[c->si][p], PG, &d_copy, &fault)) {
		report_page(c, p, FAIL_SIGBUS, "SIGBUS on a mapped page");
		return;
	}
	if (file_has_page)
		guarded_memcmp(m, A->model[c->s->file] + fo, PG, &d_file, &fault);
	if (d_copy < 0 && d_file < 0)
		return;		/* both the same: cannot tell yet */
	if (d_copy < 0) {
		A->priv_state[c->si][p] = PRIV_COPY;
	} else if (file_has_page && d_file < 0) {
		A->priv_state[c->si][p] = PRIV_FOLLOW;
	} else {
		memcpy(c->want, A->priv[c->si][p], PG);
		report_mismatch(c, p, d_copy, "its private copy (or the file, if zapped)");
	}
}

static void check_page(struct slot_check *c, uint64_t p)
{
	const unsigned char *m = (const unsigned char *)c->s->addr + p * PG;
	uint8_t state = (c->s->flags & MAPF_SHARED) ? PRIV_FOLLOW : A->priv_state[c->si][p];
	bool mapped = c->pm[p] & (PM_PRESENT | PM_SWAP);
	uintptr_t fault;
	int diff;

	if (state == PRIV_MAYBE) {
		check_maybe_page(c, p, mapped);
		return;
	}
	if (!mapped) {
		if (state == PRIV_COPY)
			report_page(c, p, FAIL_MAP, "no longer mapped: its private copy is lost");
		return;
	}
	if (!(c->pm[p] & PM_PRESENT))
		return;		/* being migrated: look next time */
	if (!expected_page(c->si, p, c->want)) {
		report_page(c, p, FAIL_NO_SIGBUS, "mapped, though wholly beyond EOF");
		return;
	}
	if (cfg.wrong_model == WRONG_MAP)
		c->want[0] ^= 0xff;	/* -W map: the check must see it */
	if (!guarded_memcmp(m, c->want, PG, &diff, &fault))
		report_page(c, p, FAIL_SIGBUS, "SIGBUS on a mapped page inside the file's size");
	else if (diff >= 0)
		report_mismatch(c, p, diff, state == PRIV_COPY ? "its private copy" : "expected");
}

static bool read_pagemap(struct slot_check *c)
{
	size_t n = c->s->len / PG * sizeof(uint64_t);

	if (pagemap < 0)
		pagemap = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap >= 0 && pread(pagemap, c->pm, n, c->s->addr / PG * sizeof(uint64_t)) == (ssize_t)n)
		return true;
	c->rep->kind = FAIL_ERROR;
	snprintf(c->rep->msg, sizeof(c->rep->msg), "cannot read /proc/self/pagemap");
	return false;
}

/* Every mapped page of slot @si, in the process that owns it. */
void check_slot(int si, struct slot_reply *rep)
{
	static struct slot_check c;
	struct slot *s = &A->slot[si];
	uint64_t p;

	memset(rep, 0, sizeof(*rep));
	if (!s->live)
		return;
	c.si = si;
	c.s = s;
	c.rep = rep;
	c.bad_pages = 0;
	if (!read_pagemap(&c))
		return;
	for (p = 0; p < s->len / PG; p++)
		check_page(&c, p);
	if (c.bad_pages > 1)
		snprintf(rep->msg + strlen(rep->msg), sizeof(rep->msg) - strlen(rep->msg),
			 "; %llu pages of this mapping are wrong", (unsigned long long)c.bad_pages);
}

/*
 * A touch: read a byte of each page of a range of a slot, in the owner.
 * Pages inside the file must read without SIGBUS, pages wholly beyond EOF
 * (and not a private copy) must give it.  What they read is the check's.
 */
void touch_slot(const struct op *op, struct slot_reply *rep)
{
	struct slot *s = &A->slot[op->slot];
	uint64_t p, fo, eof = round_up_pg(A->size[s->file]);
	uintptr_t fault;
	unsigned char byte;
	bool beyond, faulted;

	for (p = op->off / PG; p < (op->off + op->len) / PG; p++) {
		fo = s->off + p * PG;
		beyond = fo >= eof &&
			 ((s->flags & MAPF_SHARED) || A->priv_state[op->slot][p] == PRIV_FOLLOW);
		faulted = !guarded_read((char *)s->addr + p * PG, &byte, 1, &fault);
		if (faulted == beyond)
			continue;
		rep->kind = faulted ? FAIL_SIGBUS : FAIL_NO_SIGBUS;
		snprintf(rep->msg, sizeof(rep->msg), "touch of slot %d page %llu (f%d offset 0x%llx, size 0x%llx): %s",
			 op->slot, (unsigned long long)p, s->file, (unsigned long long)fo,
			 (unsigned long long)A->size[s->file],
			 faulted ? "SIGBUS inside the file's size" : "readable, though wholly beyond EOF");
		return;
	}
}

/*
 * The files whose read(2) an operation may change: what it writes, and
 * the files of remaps (exchange changes both).  Reading a file costs
 * most of a check under TCG, so the others are read only every so often
 * (the runner decides); their mapped pages are checked every time.
 */
unsigned int files_changed_by(const struct op *op)
{
	const struct slot *s = op->slot >= 0 && op->slot < NSLOTS ? &A->slot[op->slot] : NULL;

	switch (op->type) {
	case OP_PWRITE:
	case OP_TRUNCATE:
	case OP_FALLOCATE:
	case OP_FSYNC:
	case OP_COWEXTSIZE:
		return 1u << op->file;
	case OP_CLONE:
	case OP_CLONE_RANGE:
	case OP_DEDUPE:
	case OP_COPY_RANGE:
	case OP_EXCHANGE:
		return 1u << op->file | (op->file2 >= 0 ? 1u << op->file2 : 0);
	case OP_STORE:
	case OP_MSYNC:
		return s ? 1u << s->file : 0;
	case OP_PREAD:
		return op->buf == BUF_MAP && s ? 1u << s->file : 0;
	default:
		return 0;
	}
}

void check_all(struct outcome *o, unsigned int files, double *file_seconds, double *map_seconds)
{
	struct slot_reply rep;
	double t = now();
	int si, f;

	memset(o, 0, sizeof(*o));
	for (f = 0; f < NFILES && !o->kind; f++)
		if (files & (1u << f))
			check_file(f, o);
	*file_seconds += now() - t;
	t = now();
	for (si = 0; si < NSLOTS && !o->kind; si++) {
		struct slot *s = &A->slot[si];

		if (!s->live)
			continue;
		if (s->flags & MAPF_HELPER)
			helper_check_slot(si, &rep);
		else
			check_slot(si, &rep);
		if (rep.kind) {
			o->kind = rep.kind;
			snprintf(o->msg, sizeof(o->msg), "%s", rep.msg);
		}
	}
	*map_seconds += now() - t;
}
