// SPDX-License-Identifier: GPL-2.0
/*
 * The model: what each file holds (bytes and size), which block each page
 * is (only to tell whether a pipe of ours holds a page an operation
 * writes), and what each page of a private mapping shows.
 *
 * Invariant: model bytes beyond a file's size are zero, as the kernel
 * zeroes the tail of the last block on truncate and on writes beyond EOF.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "fuzz.h"

struct arena *A;

#define MAX_ID ((uint32_t)(sizeof(A->idref) / sizeof(A->idref[0])))

uint64_t round_up_pg(uint64_t x)
{
	return (x + PG - 1) & ~(PG - 1);
}

void model_init(void)
{
	A->next_id = 1;
}

static void set_id(int f, uint64_t page, uint32_t id)
{
	uint32_t old = A->blockid[f][page];

	if (old)
		A->idref[old]--;
	if (id)
		A->idref[id]++;
	A->blockid[f][page] = id;
}

/*
 * A write to a page: a hole gets a block, a shared block is copied on
 * write; a block of this page alone stays the same block.
 */
static void page_written(int f, uint64_t page)
{
	uint32_t id = A->blockid[f][page];

	if (id && A->idref[id] == 1)
		return;
	set_id(f, page, A->next_id < MAX_ID ? A->next_id++ : 0);
}

static void pages_written(int f, uint64_t off, uint64_t n)
{
	uint64_t p;

	if (!n)
		return;
	for (p = off / PG; p <= (off + n - 1) / PG; p++)
		page_written(f, p);
}

static void grow(int f, uint64_t end)
{
	if (end > A->size[f])
		A->size[f] = end;
}

void model_write(int f, uint64_t off, const unsigned char *data, uint64_t n)
{
	memmove(A->model[f] + off, data, n);
	pages_written(f, off, n);
	grow(f, off + n);
}

/*
 * A write that failed or stopped short may still have allocated blocks
 * for its whole range (DAX writes allocate before they copy): give its
 * holes block ids, so that a pipe that takes such a page is known to
 * hold a block.  Only the waits the watchdog explains depend on it.
 */
void model_maybe_allocated(int f, uint64_t off, uint64_t n)
{
	uint64_t p;

	if (!n)
		return;
	for (p = off / PG; p <= (off + n - 1) / PG && p < FILE_PAGES; p++)
		if (!A->blockid[f][p])
			page_written(f, p);
}

void model_fill(int f, uint64_t off, int byte, uint64_t n)
{
	memset(A->model[f] + off, byte, n);
	pages_written(f, off, n);
	grow(f, off + n);
}

/* Zero a range inside the file: whole pages become holes. */
void model_zero(int f, uint64_t off, uint64_t n)
{
	uint64_t p, end = off + n;

	if (end > A->size[f])
		end = A->size[f];
	if (off >= end)
		return;
	memset(A->model[f] + off, 0, end - off);
	for (p = off / PG; p <= (end - 1) / PG; p++) {
		if (p * PG >= off && (p + 1) * PG <= end)
			set_id(f, p, 0);
		else
			page_written(f, p);
	}
}

void model_resize(int f, uint64_t size)
{
	uint64_t old = A->size[f], p;

	if (size >= old) {
		A->size[f] = size;
		return;
	}
	memset(A->model[f] + size, 0, old - size);
	for (p = round_up_pg(size) / PG; p < FILE_PAGES; p++)
		set_id(f, p, 0);
	if (size % PG)
		page_written(f, size / PG);
	A->size[f] = size;
	/* Truncate zaps private copies beyond the new last page. */
	priv_maybe(f, round_up_pg(size), FILE_MAX);
}

/* @n bytes of @src at @soff to @dst at @doff; @share: by reflink. */
void model_copy(int dst, uint64_t doff, int src, uint64_t soff, uint64_t n, bool share)
{
	uint64_t i;

	if (!n)
		return;
	memmove(A->model[dst] + doff, A->model[src] + soff, n);
	if (share && doff % PG == 0 && soff % PG == 0) {
		for (i = 0; i < round_up_pg(n) / PG; i++)
			set_id(dst, doff / PG + i, A->blockid[src][soff / PG + i]);
	} else {
		pages_written(dst, doff, n);
	}
	grow(dst, doff + n);
	priv_maybe(dst, doff, doff + n);
}

void model_exchange(int f1, uint64_t off1, int f2, uint64_t off2, uint64_t n)
{
	static unsigned char tmp[FILE_MAX];
	uint64_t i;
	uint32_t id;

	memcpy(tmp, A->model[f1] + off1, n);
	memmove(A->model[f1] + off1, A->model[f2] + off2, n);
	memcpy(A->model[f2] + off2, tmp, n);
	for (i = 0; i < round_up_pg(n) / PG; i++) {
		id = A->blockid[f1][off1 / PG + i];
		A->blockid[f1][off1 / PG + i] = A->blockid[f2][off2 / PG + i];
		A->blockid[f2][off2 / PG + i] = id;
	}
	/* Bytes moved beyond a size are not part of that file. */
	memset(A->model[f1] + A->size[f1], 0, FILE_MAX - A->size[f1]);
	memset(A->model[f2] + A->size[f2], 0, FILE_MAX - A->size[f2]);
	priv_maybe(f1, off1, off1 + n);
	priv_maybe(f2, off2, off2 + n);
}

/* fallocate(COLLAPSE_RANGE): block multiples, off + len below size. */
void model_collapse(int f, uint64_t off, uint64_t len)
{
	uint64_t size = A->size[f], p;

	memmove(A->model[f] + off, A->model[f] + off + len, size - off - len);
	memset(A->model[f] + size - len, 0, len);
	for (p = off / PG; p < FILE_PAGES; p++)
		set_id(f, p, p + len / PG < FILE_PAGES ? A->blockid[f][p + len / PG] : 0);
	A->size[f] = size - len;
	priv_maybe(f, off, FILE_MAX);
}

/* fallocate(INSERT_RANGE): block multiples, off below size. */
void model_insert(int f, uint64_t off, uint64_t len)
{
	uint64_t size = A->size[f], p;

	memmove(A->model[f] + off + len, A->model[f] + off, size - off);
	memset(A->model[f] + off, 0, len);
	for (p = FILE_PAGES; p-- > off / PG;)
		set_id(f, p, p >= off / PG + len / PG ? A->blockid[f][p - len / PG] : 0);
	A->size[f] = size + len;
	priv_maybe(f, off, FILE_MAX);
}

/* fallocate(UNSHARE_RANGE): shared blocks of the range get copies. */
void model_unshare(int f, uint64_t off, uint64_t len)
{
	uint64_t p, end = off + len;

	if (end > A->size[f])
		end = A->size[f];
	for (p = off / PG; p * PG < end; p++) {
		uint32_t id = A->blockid[f][p];

		if (id && A->idref[id] > 1)
			page_written(f, p);
	}
}

/* FIDEDUPERANGE that found the ranges equal: the blocks are shared now. */
void model_dedupe(int dst, uint64_t doff, int src, uint64_t soff, uint64_t n)
{
	uint64_t i;

	if (doff % PG || soff % PG)
		return;
	for (i = 0; i < n / PG; i++)
		set_id(dst, doff / PG + i, A->blockid[src][soff / PG + i]);
	priv_maybe(dst, doff, doff + n);
}

/*
 * Pages of private mappings of @f in [start, end) whose copy an
 * operation may have zapped (truncate and fallocate ranges, remapping):
 * the next check takes either the copy or the file, whichever it finds.
 */
void priv_maybe(int f, uint64_t start, uint64_t end)
{
	uint64_t p, fo;
	int si;

	for (si = 0; si < NSLOTS; si++) {
		struct slot *s = &A->slot[si];

		if (!s->live || s->file != f || (s->flags & MAPF_SHARED))
			continue;
		for (p = 0; p < s->len / PG; p++) {
			fo = s->off + p * PG;
			if (fo + PG > start && fo < end && A->priv_state[si][p] == PRIV_COPY)
				A->priv_state[si][p] = PRIV_MAYBE;
		}
	}
}

/* Private pages from @from_page on show the file again (munmap, madvise). */
void model_slot_reset(int si, uint64_t from_page)
{
	if (from_page < MAP_PAGES)
		memset(&A->priv_state[si][from_page], PRIV_FOLLOW, MAP_PAGES - from_page);
}

/*
 * What page @page of slot @si shows: true with the bytes in @out, false
 * if reading it must give SIGBUS (wholly beyond EOF, no private copy).
 * A PRIV_MAYBE page is given as its copy; the check knows the other way.
 */
bool expected_page(int si, uint64_t page, unsigned char *out)
{
	struct slot *s = &A->slot[si];
	uint64_t fo = s->off + page * PG;

	if (!(s->flags & MAPF_SHARED) && A->priv_state[si][page] != PRIV_FOLLOW) {
		memcpy(out, A->priv[si][page], PG);
		return true;
	}
	if (fo >= round_up_pg(A->size[s->file]))
		return false;
	memcpy(out, A->model[s->file] + fo, PG);
	return true;
}

/*
 * The @n bytes at byte @moff of slot @si as a buffer for write(2) would
 * give them: *valid is how many come before the first page that faults.
 */
bool expected_bytes(int si, uint64_t moff, uint64_t n, unsigned char *out, uint64_t *valid)
{
	static unsigned char page[PG];
	uint64_t done = 0, p, in, chunk;

	while (done < n) {
		p = (moff + done) / PG;
		in = (moff + done) % PG;
		chunk = PG - in < n - done ? PG - in : n - done;
		if (!expected_page(si, p, page))
			break;
		memcpy(out + done, page + in, chunk);
		done += chunk;
	}
	*valid = done;
	return done == n;
}

/* A store of @n bytes through slot @si at byte @moff, in the model. */
void model_store(int si, uint64_t moff, const unsigned char *data, uint64_t n)
{
	struct slot *s = &A->slot[si];
	uint64_t done = 0, p, in, chunk;

	if (s->flags & MAPF_SHARED) {
		model_write(s->file, s->off + moff, data, n);
		return;
	}
	while (done < n) {
		p = (moff + done) / PG;
		in = (moff + done) % PG;
		chunk = PG - in < n - done ? PG - in : n - done;
		if (A->priv_state[si][p] != PRIV_COPY) {
			/*
			 * The first write copies the page as the file has it
			 * (a PRIV_MAYBE page the check could not tell apart
			 * from the file is the same either way).
			 */
			if (A->priv_state[si][p] == PRIV_FOLLOW)
				memcpy(A->priv[si][p], A->model[s->file] + s->off + p * PG, PG);
			A->priv_state[si][p] = PRIV_COPY;
		}
		memcpy(A->priv[si][p] + in, data + done, chunk);
		done += chunk;
	}
}
