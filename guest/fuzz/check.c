// SPDX-License-Identifier: GPL-2.0
/*
 * The check after every operation: read(2) of each file against the
 * model, then every page of every live mapping against the model (and,
 * where they differ, against read(2), so that the report says which of
 * the three disagree).  The mappings are checked in an order drawn from
 * the operation's check seed: the order of first touches decides which
 * entries (PMD or PTE, zero page or block) the faults create, and a
 * replay must create the same ones.
 *
 * Pages wholly beyond EOF must give SIGBUS; of those only the first and
 * the last of a mapping are probed (a signal per page is slow under TCG).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static unsigned char filebuf[FILE_MAX];

#define ADDF(buf, ...) snprintf((buf) + strlen(buf), sizeof(buf) - strlen(buf), __VA_ARGS__)

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
	unsigned char want[PG], copy[PG];
	uint64_t bad_pages;
};

static void describe_page(struct slot_check *c, uint64_t p, char *buf, size_t size)
{
	char d[256];

	snprintf(buf, size, "slot %d (%s) page %llu (f%d offset 0x%llx, size 0x%llx)",
		 c->si, slot_describe(c->s, d, sizeof(d)), (unsigned long long)p,
		 c->s->file, (unsigned long long)(c->s->off + p * PG),
		 (unsigned long long)A->size[c->s->file]);
}

static void report_mismatch(struct slot_check *c, uint64_t p, int diff, const char *what)
{
	const unsigned char *m = (const unsigned char *)c->s->addr + p * PG;
	uint64_t fo = c->s->off + p * PG + diff;
	char where[512];
	int r = read_byte(c->s->file, fo);

	if (c->bad_pages++)
		return;
	describe_page(c, p, where, sizeof(where));
	c->rep->kind = FAIL_MAP;
	snprintf(c->rep->msg, sizeof(c->rep->msg),
		 "%s, byte 0x%x: mapping 0x%02x, %s 0x%02x, read(2) %s%02x, model 0x%02x",
		 where, diff, m[diff], what, c->want[diff], r < 0 ? "none " : "0x",
		 r < 0 ? 0 : r, A->model[c->s->file][fo]);
}

static void report_fault(struct slot_check *c, uint64_t p, bool expected_fault)
{
	char where[512];

	if (c->bad_pages++)
		return;
	describe_page(c, p, where, sizeof(where));
	c->rep->kind = expected_fault ? FAIL_NO_SIGBUS : FAIL_SIGBUS;
	snprintf(c->rep->msg, sizeof(c->rep->msg), expected_fault ?
		 "%s: readable, though wholly beyond EOF" :
		 "%s: SIGBUS, though inside the file's size", where);
}

/* A page whose private copy the kernel may have zapped: which is it? */
static void check_maybe_page(struct slot_check *c, uint64_t p)
{
	const unsigned char *m = (const unsigned char *)c->s->addr + p * PG;
	uint64_t fo = c->s->off + p * PG;
	bool file_has_page = fo < round_up_pg(A->size[c->s->file]);
	uintptr_t fault;
	int d_copy, d_file = -1;

	if (!guarded_memcmp(m, A->priv[c->si][p], PG, &d_copy, &fault)) {
		if (file_has_page)
			report_fault(c, p, false);
		else
			A->priv_state[c->si][p] = PRIV_FOLLOW;	/* zapped, beyond EOF */
		return;
	}
	if (file_has_page)
		guarded_memcmp(m, A->model[c->s->file] + fo, PG, &d_file, &fault);
	if (d_copy < 0 && d_file < 0)
		return;		/* both the same: still cannot tell */
	if (d_copy < 0)
		A->priv_state[c->si][p] = PRIV_COPY;
	else if (file_has_page && d_file < 0)
		A->priv_state[c->si][p] = PRIV_FOLLOW;
	else {
		memcpy(c->want, A->priv[c->si][p], PG);
		report_mismatch(c, p, d_copy, "its private copy (or the file, if zapped)");
	}
}

/* Whether page @p, wholly beyond EOF, is one the check probes for SIGBUS. */
static bool probe_beyond_eof(struct slot_check *c, uint64_t p, uint64_t first_beyond)
{
	return p == first_beyond || p == c->s->len / PG - 1;
}

static void check_page(struct slot_check *c, uint64_t p, uint64_t first_beyond)
{
	const unsigned char *m = (const unsigned char *)c->s->addr + p * PG;
	uint8_t state = (c->s->flags & MAPF_SHARED) ? PRIV_FOLLOW : A->priv_state[c->si][p];
	uintptr_t fault;
	unsigned char byte;
	int diff;

	if (state == PRIV_MAYBE) {
		check_maybe_page(c, p);
		return;
	}
	if (!expected_page(c->si, p, c->want)) {
		if (probe_beyond_eof(c, p, first_beyond) && guarded_read(m, &byte, 1, &fault))
			report_fault(c, p, true);
		return;
	}
	if (!guarded_memcmp(m, c->want, PG, &diff, &fault))
		report_fault(c, p, false);
	else if (diff >= 0)
		report_mismatch(c, p, diff, state == PRIV_COPY ? "its private copy" : "expected");
}

/* Every page of slot @si, in the process that owns it. */
void check_slot(int si, struct slot_reply *rep)
{
	static struct slot_check c;
	uint64_t p, first_beyond;
	struct slot *s = &A->slot[si];

	memset(rep, 0, sizeof(*rep));
	if (!s->live)
		return;
	c.si = si;
	c.s = s;
	c.rep = rep;
	c.bad_pages = 0;
	first_beyond = round_up_pg(A->size[s->file]);
	first_beyond = first_beyond > s->off ? (first_beyond - s->off) / PG : 0;
	for (p = 0; p < s->len / PG; p++)
		check_page(&c, p, first_beyond);
	if (c.bad_pages > 1)
		snprintf(rep->msg + strlen(rep->msg), sizeof(rep->msg) - strlen(rep->msg),
			 "; %llu pages of this mapping are wrong", (unsigned long long)c.bad_pages);
}

static void shuffle(int *v, int n, uint32_t seed)
{
	uint64_t s = seed | (uint64_t)seed << 32;
	int i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = rnd(&s, i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

void check_all(uint32_t seed, struct outcome *o)
{
	struct slot_reply rep;
	int order[NSLOTS], i, f;

	memset(o, 0, sizeof(*o));
	for (f = 0; f < NFILES && !o->kind; f++)
		check_file(f, o);
	if (o->kind)
		return;
	for (i = 0; i < NSLOTS; i++)
		order[i] = i;
	shuffle(order, NSLOTS, seed);
	for (i = 0; i < NSLOTS; i++) {
		struct slot *s = &A->slot[order[i]];

		if (!s->live)
			continue;
		if (s->flags & MAPF_HELPER)
			helper_check_slot(order[i], &rep);
		else
			check_slot(order[i], &rep);
		if (rep.kind) {
			o->kind = rep.kind;
			snprintf(o->msg, sizeof(o->msg), "%s", rep.msg);
			return;
		}
	}
}
