// SPDX-License-Identifier: GPL-2.0
/*
 * The generator: the next operation, drawn from the seeded random numbers
 * with weights, and with parameters biased to where DAX goes wrong: 2 MiB
 * (PMD) boundaries, single 4 KiB pages, EOF, and the offsets recent
 * operations used (so that several operations meet on the same pages, as
 * every known regression needs: a write, a clone, a CoW write and a punch
 * of one page).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <linux/falloc.h>

#include "fuzz.h"

#define POS_LIMIT	(6UL << 20)	/* offsets drawn below this */
#define NHOT		8
#define TARGET_SLOTS	7
#define FAULT_AROUND	16		/* pages: fault_around_bytes' default, 64 KiB */
#define COW_EXTENT	(32 * PG)	/* xfs's default CoW extent size hint */

static uint64_t hot[NHOT];
static int nhot;

static uint64_t align_down(uint64_t x, uint64_t a)
{
	return x - x % a;
}

/*
 * Where recent CoW writes went (a write of a page whose block was
 * shared): xfs allocates CoW fork blocks for the whole extent of the CoW
 * extent size hint around each (aligned to the hint in the file; 32
 * blocks by default), and those stay when the data fork there is
 * punched.  A later write into such an extent goes through the CoW fork
 * even where the data fork has a hole; a write outside one allocates.
 * This follows the hints set with cowextsize; it is a guide for the
 * generator, not part of the model.
 */
struct cow_extent {
	int file;
	uint64_t lo, hi;
};
static struct cow_extent cow_ext[NHOT];
static int ncow_ext;
static uint64_t cow_hint[NFILES];	/* bytes; 0: the default */

static void remember_cow(int f, uint64_t pos)
{
	uint64_t hint = cow_hint[f] ? cow_hint[f] : COW_EXTENT;
	struct cow_extent *e = &cow_ext[ncow_ext++ % NHOT];

	e->file = f;
	e->lo = align_down(pos, hint);
	e->hi = e->lo + hint;
}

static bool in_cow_extent(int f, uint64_t pos)
{
	int i;

	for (i = 0; i < ncow_ext && i < NHOT; i++)
		if (cow_ext[i].file == f && pos >= cow_ext[i].lo && pos < cow_ext[i].hi)
			return true;
	return false;
}

long gen_stats[NR_GEN_STATS];

/*
 * Each round has a focus: a file and one of its 2 MiB ranges, which most
 * operations and mappings go to, so that many of them meet on one PMD's
 * worth of pages (a PMD entry, the PTEs fault-around maps from it, the
 * CoW fork around a page).
 */
static int focus_file;
static uint64_t focus_pmd;	/* its offset */

static bool have_prev;

static int ep_step;

void gen_reset(uint64_t *r)
{
	nhot = 0;
	ncow_ext = 0;
	memset(cow_hint, 0, sizeof(cow_hint));
	memset(gen_stats, 0, sizeof(gen_stats));
	have_prev = false;
	ep_step = 0;
	focus_file = rnd(r, NFILES);
	focus_pmd = rnd(r, 3) * PMD_SZ;
}

static void remember(uint64_t off)
{
	hot[nhot++ % NHOT] = off;
}

/* A byte offset in a file, biased as above. */
static uint64_t pick_pos(uint64_t *r, int f)
{
	uint64_t pos, k = rnd(r, 100);

	if (k < 20) {
		pos = rnd(r, 3) * PMD_SZ;
		if (chance(r, 30))
			pos = chance(r, 50) || !pos ? pos + PG : pos - PG;
	} else if (k < 45 && nhot) {
		pos = hot[rnd(r, nhot < NHOT ? nhot : NHOT)];
		if (chance(r, 25))
			pos += chance(r, 50) || pos < PG ? PG : -PG;
	} else if (k < 65) {
		pos = focus_pmd + rnd(r, PMD_SZ / PG) * PG;
	} else if (k < 75) {
		pos = align_down(A->size[f], PG);
		if (chance(r, 50))
			pos += chance(r, 50) || pos < 4 * PG ? rnd(r, 4) * PG : -rnd(r, 4) * PG;
	} else if (k < 92) {
		pos = rnd(r, POS_LIMIT / PG) * PG;
	} else {
		pos = rnd(r, POS_LIMIT);
	}
	return pos < POS_LIMIT ? pos : POS_LIMIT - PG;
}

static uint64_t pick_len(uint64_t *r)
{
	uint64_t k = rnd(r, 100);

	if (k < 40)
		return PG;
	if (k < 55)
		return (2 + rnd(r, 15)) * PG;
	if (k < 65)
		return 1 + rnd(r, PG - 1);
	if (k < 75)
		return PMD_SZ;
	if (k < 88)
		return (1 + rnd(r, 512)) * PG;
	return 1 + rnd(r, 64 << 10);
}

static uint64_t clip(uint64_t off, uint64_t len)
{
	return off + len > FILE_MAX ? FILE_MAX - off : len;
}

static int pick_file(uint64_t *r)
{
	return chance(r, 60) ? focus_file : (int)rnd(r, NFILES);
}

static int pick_other_file(uint64_t *r, int f)
{
	return (f + 1 + rnd(r, NFILES - 1)) % NFILES;
}

static int nr_live(void)
{
	int i, n = 0;

	for (i = 0; i < NSLOTS; i++)
		n += A->slot[i].live;
	return n;
}

/* A random slot that @want accepts, or -1. */
static int pick_slot(uint64_t *r, bool (*want)(const struct slot *))
{
	int i, n = 0, pick[NSLOTS];

	for (i = 0; i < NSLOTS; i++)
		if (A->slot[i].live && (!want || want(&A->slot[i])))
			pick[n++] = i;
	return n ? pick[rnd(r, n)] : -1;
}

static bool any_slot(const struct slot *s) { return s->live; }
static bool runner_owned(const struct slot *s) { return !(s->flags & MAPF_HELPER); }
static bool writable(const struct slot *s) { return s->prot & PROT_WRITE; }
static bool runner_writable(const struct slot *s) { return runner_owned(s) && writable(s); }

static bool over_focus(const struct slot *s)
{
	return s->file == focus_file && s->off < focus_pmd + PMD_SZ && s->off + s->len > focus_pmd;
}

static int free_slot(void)
{
	int i;

	for (i = 0; i < NSLOTS; i++)
		if (!A->slot[i].live)
			return i;
	return -1;
}

static unsigned int pick_align(uint64_t *r, uint64_t off)
{
	/* PMD-capable: address and file offset congruent modulo 2 MiB. */
	if (chance(r, 60))
		return (off / PG) % (PMD_SZ / PG);
	return rnd(r, PMD_SZ / PG);
}

static uint64_t pick_map_len(uint64_t *r)
{
	uint64_t k = rnd(r, 100);

	if (k < 35)
		return PMD_SZ;
	if (k < 50)
		return 2 * PMD_SZ;
	if (k < 65)
		return PMD_SZ / 2;
	return (1 + rnd(r, 512)) * PG;
}

/*
 * A mapping over the focus: the whole range where a PMD fits, or part of
 * it where none does (PTEs, which fault-around may map from the range's
 * PMD entry).
 */
static void pick_focus_map(uint64_t *r, struct op *op)
{
	uint64_t pages = PMD_SZ / PG;

	op->file = focus_file;
	if (chance(r, 50)) {
		op->off = focus_pmd;
		op->len = chance(r, 70) ? PMD_SZ : 2 * PMD_SZ;
		op->off2 = 0;
		return;
	}
	op->off = focus_pmd + rnd(r, pages - 1) * PG;
	op->len = (1 + rnd(r, pages - (op->off - focus_pmd) / PG)) * PG;
	op->off2 = 1 + rnd(r, pages - 1);	/* never congruent: PTE-only */
	if ((op->off2 * PG - op->off) % PMD_SZ == 0)
		op->off2 = (op->off2 + 1) % pages;
}

static void gen_map(uint64_t *r, struct op *op)
{
	op->type = OP_MAP;
	op->slot = free_slot();
	op->file = pick_file(r);
	op->off = chance(r, 50) ? rnd(r, 3) * PMD_SZ : align_down(pick_pos(r, op->file), PG);
	op->len = pick_map_len(r);
	op->off2 = pick_align(r, op->off);
	if (chance(r, 60))
		pick_focus_map(r, op);
	if (op->off + op->len > FILE_MAX)
		op->len = FILE_MAX - op->off;
	op->mode = 0;
	if (chance(r, 70))
		op->mode |= MAPF_SHARED;
	if (chance(r, 65))
		op->mode |= MAPF_WRITE;
	if ((op->mode & MAPF_SHARED) && feat.mapsync && chance(r, 10))
		op->mode |= MAPF_SYNC;
	if (chance(r, 25))
		op->mode |= MAPF_HELPER;
}

/*
 * A byte range inside slot @si and inside its file's size (stores and
 * reads into a mapping stay there): preferably at a position the file
 * offsets of other operations favour.  False if the slot has none.
 */
static bool pick_slot_range(uint64_t *r, int si, uint64_t *moff, uint64_t *len)
{
	struct slot *s = &A->slot[si];
	uint64_t size = A->size[s->file], end, pos;

	end = size > s->off ? size - s->off : 0;
	if (end > s->len)
		end = s->len;
	if (!end)
		return false;
	pos = pick_pos(r, s->file);
	if (pos >= s->off && pos < s->off + end)
		*moff = pos - s->off;
	else
		*moff = chance(r, 70) ? rnd(r, (end + PG - 1) / PG) * PG : rnd(r, end);
	if (*moff >= end)
		*moff = align_down(end - 1, PG);
	*len = pick_len(r);
	if (*len > end - *moff)
		*len = end - *moff;
	return true;
}

static unsigned int pick_fill(uint64_t *r)
{
	return 1 + rnd(r, 255);
}

static bool gen_store(uint64_t *r, struct op *op)
{
	op->type = OP_STORE;
	op->slot = pick_slot(r, writable);
	op->fill = pick_fill(r);
	return op->slot >= 0 && pick_slot_range(r, op->slot, &op->off, &op->len);
}

/* The buffer of a pwrite or pread: ordinary, faulting part-way, or a mapping. */
static void pick_buffer(uint64_t *r, struct op *op, bool for_read)
{
	uint64_t k = rnd(r, 100), moff, len;
	int si;

	op->buf = BUF_HEAP;
	if (k < 65)
		return;
	if (k < 82) {
		op->buf = BUF_BAD;
		op->len = op->len > PMD_SZ ? PMD_SZ : op->len;
		if (chance(r, 40))
			op->bufarg = 0;
		else if (chance(r, 50))
			op->bufarg = align_down(rnd(r, op->len), PG);
		else
			op->bufarg = rnd(r, op->len);
		return;
	}
	si = pick_slot(r, for_read ? runner_writable : runner_owned);
	if (si < 0)
		return;
	if (for_read) {
		if (!pick_slot_range(r, si, &moff, &len))
			return;
		op->len = len;
	} else {
		moff = rnd(r, A->slot[si].len / PG) * PG + (chance(r, 80) ? 0 : rnd(r, PG));
		if (moff >= A->slot[si].len)
			moff = 0;
		if (op->len > A->slot[si].len - moff)
			op->len = A->slot[si].len - moff;
	}
	op->buf = BUF_MAP;
	op->slot = si;
	op->off2 = moff;
}

static void gen_pwrite(uint64_t *r, struct op *op)
{
	op->type = OP_PWRITE;
	op->file = pick_file(r);
	op->off = pick_pos(r, op->file);
	op->len = clip(op->off, pick_len(r));
	op->fill = pick_fill(r);
	pick_buffer(r, op, false);
}

static void gen_pread(uint64_t *r, struct op *op)
{
	op->type = OP_PREAD;
	op->file = pick_file(r);
	op->off = pick_pos(r, op->file);
	op->len = clip(op->off, pick_len(r));
	pick_buffer(r, op, true);
}

static void gen_fallocate(uint64_t *r, struct op *op)
{
	int modes[16], n = 0, i;

	for (i = 0; i < nr_falloc_modes; i++)
		if (feat.falloc_modes & (1u << i))
			modes[n++] = falloc_mode_list[i];
	op->type = OP_FALLOCATE;
	op->file = pick_file(r);
	op->mode = n ? modes[rnd(r, n)] : 0;
	op->off = pick_pos(r, op->file);
	op->len = pick_len(r);
	if (op->mode == FALLOC_FL_COLLAPSE_RANGE || op->mode == FALLOC_FL_INSERT_RANGE ||
	    chance(r, 50)) {
		op->off = align_down(op->off, feat.blksize);
		op->len = align_down(op->len, feat.blksize);
		if (!op->len)
			op->len = feat.blksize;
	}
	/*
	 * A fifth of them clear the whole focus range: a hole where a PMD
	 * zero entry can go, with whatever the CoW fork keeps there.
	 */
	if (op->mode != FALLOC_FL_COLLAPSE_RANGE && op->mode != FALLOC_FL_INSERT_RANGE &&
	    chance(r, 20)) {
		op->file = focus_file;
		op->mode = chance(r, 70) ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE :
					  FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
		op->off = focus_pmd;
		op->len = PMD_SZ;
	}
	op->len = clip(op->off, op->len);
}

/* Offsets and length of a remap: block multiples, a file's own ones. */
static void gen_remap(uint64_t *r, struct op *op, enum op_type t, bool same_ok)
{
	op->type = t;
	op->file = pick_file(r);
	op->file2 = same_ok && chance(r, 15) ? op->file : pick_other_file(r, op->file);
	op->off2 = align_down(pick_pos(r, op->file2), feat.blksize);
	/* The same offset in both files: where clones share blocks. */
	op->off = chance(r, 50) ? op->off2 : align_down(pick_pos(r, op->file), feat.blksize);
	op->len = align_down(pick_len(r), feat.blksize);
	if (!op->len)
		op->len = feat.blksize;
	if (t == OP_CLONE_RANGE && chance(r, 20))
		op->len = 0;	/* to EOF */
	if (t == OP_COPY_RANGE && chance(r, 30)) {
		op->off = pick_pos(r, op->file);
		op->len = pick_len(r);
	}
	op->len = clip(op->off > op->off2 ? op->off : op->off2, op->len);
}

/* Exchange: both ranges inside both files, or it only gets EINVAL. */
static bool gen_exchange(uint64_t *r, struct op *op)
{
	uint64_t room1, room2;

	gen_remap(r, op, OP_EXCHANGE, false);
	room1 = A->size[op->file] > op->off ? A->size[op->file] - op->off : 0;
	room2 = A->size[op->file2] > op->off2 ? A->size[op->file2] - op->off2 : 0;
	if (op->len > room1)
		op->len = align_down(room1, feat.blksize);
	if (op->len > room2)
		op->len = align_down(room2, feat.blksize);
	return op->len > 0;
}

/*
 * The CoW extent size hint: 0 (the default, 32 blocks), a few sizes, and
 * often 3 MiB, whose aligned extents straddle 2 MiB boundaries, so that
 * a CoW write below a boundary preallocates CoW blocks in the next PMD.
 */
static uint64_t pick_cowextsize(uint64_t *r)
{
	static const uint64_t sizes[] = { 0, 64 << 10, 128 << 10, 1 << 20, 2 << 20 };

	return chance(r, 50) ? 3 << 20 : sizes[rnd(r, sizeof(sizes) / sizeof(sizes[0]))];
}

static void gen_cowextsize(uint64_t *r, struct op *op)
{
	op->type = OP_COWEXTSIZE;
	op->file = pick_file(r);
	op->len = pick_cowextsize(r);
}

static bool gen_vmsplice(uint64_t *r, struct op *op)
{
	uint64_t moff, len;
	int i;

	op->type = OP_VMSPLICE;
	op->slot = pick_slot(r, runner_owned);
	for (op->pipe = -1, i = 0; i < NPIPES; i++)
		if (!pipe_live(i)) {
			op->pipe = i;
			break;
		}
	if (op->slot < 0 || op->pipe < 0 || !pick_slot_range(r, op->slot, &moff, &len))
		return false;
	op->off = align_down(moff, PG);
	op->len = chance(r, 50) ? PG : (1 + rnd(r, PIPE_PAGES)) * PG;
	if (op->off + op->len > A->slot[op->slot].len)
		op->len = A->slot[op->slot].len - op->off;
	return true;
}

static bool gen_pipe_close(uint64_t *r, struct op *op)
{
	int live[NPIPES], n = 0, i;

	for (i = 0; i < NPIPES; i++)
		if (pipe_live(i))
			live[n++] = i;
	op->type = OP_PIPE_CLOSE;
	op->pipe = n ? live[rnd(r, n)] : -1;
	return n > 0;
}

/* Page-aligned part of a slot: a page, the whole slot, or a run. */
static void pick_slot_pages(uint64_t *r, const struct slot *s, uint64_t *off, uint64_t *len)
{
	uint64_t pages = s->len / PG, k = rnd(r, 100);

	if (k < 40) {
		*off = rnd(r, pages) * PG;
		*len = PG;
	} else if (k < 70) {
		*off = 0;
		*len = s->len;
	} else {
		*off = rnd(r, pages) * PG;
		*len = (1 + rnd(r, pages - *off / PG)) * PG;
	}
}

/*
 * Pages to touch: one page (fault-around maps its window), the whole
 * slot, or a run; preferably where the hot file offsets are.
 */
static void pick_touch_pages(uint64_t *r, const struct slot *s, uint64_t *off, uint64_t *len)
{
	uint64_t pos = pick_pos(r, s->file);

	pick_slot_pages(r, s, off, len);
	if (*len == PG && pos >= s->off && pos < s->off + s->len)
		*off = align_down(pos - s->off, PG);
}

static bool gen_slot_op(uint64_t *r, struct op *op, enum op_type t)
{
	struct slot *s;

	op->type = t;
	op->slot = pick_slot(r, any_slot);
	/* Touches go to mappings of the focus half the time. */
	if (t == OP_TOUCH && chance(r, 50) && pick_slot(r, over_focus) >= 0)
		op->slot = pick_slot(r, over_focus);
	if (op->slot < 0)
		return false;
	s = &A->slot[op->slot];
	switch (t) {
	case OP_MREMAP:
		op->len = chance(r, 50) ? s->len : pick_map_len(r);
		if (s->off + op->len > FILE_MAX)
			op->len = FILE_MAX - s->off;
		op->off2 = pick_align(r, s->off);
		break;
	case OP_MPROTECT:
		op->mode = s->prot ^ PROT_WRITE;
		break;
	case OP_MADVISE:
		pick_slot_pages(r, s, &op->off, &op->len);
		break;
	case OP_TOUCH:
		pick_touch_pages(r, s, &op->off, &op->len);
		break;
	case OP_MSYNC:
		pick_slot_pages(r, s, &op->off, &op->len);
		op->mode = (chance(r, 70) ? MS_SYNC : MS_ASYNC) | (chance(r, 20) ? MS_INVALIDATE : 0);
		break;
	default:
		break;
	}
	return true;
}

/* Relative weights of the operations (those the filesystem lacks: 0). */
static int weight(enum op_type t)
{
	int live = nr_live();

	switch (t) {
	case OP_MAP: return free_slot() < 0 ? 0 : live < TARGET_SLOTS ? 12 : 1;
	case OP_UNMAP: return live > 3 ? 3 : 0;
	case OP_MREMAP: return 3;
	case OP_MPROTECT: return 2;
	case OP_MADVISE: return 3;
	case OP_MSYNC: return 2;
	case OP_STORE: return 10;
	case OP_PWRITE: return 16;
	case OP_PREAD: return 5;
	case OP_TRUNCATE: return 5;
	case OP_FALLOCATE: return 12;
	case OP_FSYNC: return 2;
	case OP_CLONE: return feat.reflink ? 4 : 0;
	case OP_CLONE_RANGE: return feat.reflink ? 4 : 0;
	case OP_DEDUPE: return feat.dedupe ? 2 : 0;
	case OP_COPY_RANGE: return feat.copy_range ? 3 : 0;
	case OP_EXCHANGE: return feat.exchange ? 2 : 0;
	case OP_COWEXTSIZE: return feat.cowextsize ? 3 : 0;
	case OP_VMSPLICE: return 3;
	case OP_PIPE_CLOSE: return pipes_live() ? 3 : 0;
	case OP_TOUCH: return 14;
	case NR_OPS: break;
	}
	return 0;
}

static enum op_type pick_type(uint64_t *r)
{
	int w[NR_OPS], total = 0, t, k;

	/* A round starts by mapping: checks need mappings to check. */
	if (nr_live() < 4 && free_slot() >= 0)
		return OP_MAP;
	for (t = 0; t < NR_OPS; t++)
		total += (w[t] = weight(t));
	k = rnd(r, total);
	for (t = 0; t < NR_OPS - 1 && k >= w[t]; t++)
		k -= w[t];
	return t;
}

/* Fill @op for @t; false if the state offers nothing to do it on. */
static bool gen_type(uint64_t *r, struct op *op, enum op_type t)
{
	switch (t) {
	case OP_MAP: gen_map(r, op); return op->slot >= 0;
	case OP_UNMAP:
	case OP_MREMAP:
	case OP_MPROTECT:
	case OP_MADVISE:
	case OP_MSYNC:
	case OP_TOUCH: return gen_slot_op(r, op, t);
	case OP_STORE: return gen_store(r, op);
	case OP_PWRITE: gen_pwrite(r, op); return true;
	case OP_PREAD: gen_pread(r, op); return true;
	case OP_TRUNCATE:
		op->type = t;
		op->file = pick_file(r);
		op->len = pick_pos(r, op->file);
		return true;
	case OP_FALLOCATE: gen_fallocate(r, op); return true;
	case OP_FSYNC:
		op->type = t;
		op->file = pick_file(r);
		op->mode = chance(r, 50);
		return true;
	case OP_CLONE:
		op->type = t;
		op->file = pick_file(r);
		op->file2 = pick_other_file(r, op->file);
		return true;
	case OP_CLONE_RANGE:
	case OP_DEDUPE:
	case OP_COPY_RANGE: gen_remap(r, op, t, true); return true;
	case OP_EXCHANGE: return gen_exchange(r, op);
	case OP_COWEXTSIZE: gen_cowextsize(r, op); return true;
	case OP_VMSPLICE: return gen_vmsplice(r, op);
	case OP_PIPE_CLOSE: return gen_pipe_close(r, op);
	case NR_OPS: break;
	}
	return false;
}

/* The file offsets @op works on become the hot offsets of the next ones. */
static void remember_positions(const struct op *op)
{
	switch (op->type) {
	case OP_STORE:
		remember(A->slot[op->slot].off + op->off);
		break;
	case OP_PWRITE:
	case OP_PREAD:
	case OP_FALLOCATE:
		remember(op->off);
		break;
	case OP_TRUNCATE:
		remember(op->len);
		break;
	case OP_CLONE_RANGE:
	case OP_DEDUPE:
	case OP_COPY_RANGE:
	case OP_EXCHANGE:
		remember(op->off);
		remember(op->off2);
		break;
	default:
		break;
	}
}

/*
 * Follow-ups.  DAX goes wrong where operations meet on the same pages in
 * a particular order: data written, cloned, written again (a CoW write),
 * punched; a mapping touched where a PMD fits, then one touched where
 * none does, then written.  Drawing each operation independently makes
 * such chains rare, so a third of the operations follow up on the one
 * before, on the same file and pages.
 */
#define FOLLOW_UP 50	/* percent */

static struct op prev;
static bool prev_was_cow;	/* prev wrote a page that was shared */

/* Whether a write of @op's first page would be a CoW write. */
static bool writes_shared_page(const struct op *op)
{
	const struct slot *s;
	uint64_t p;
	int f = op->file;

	if (op->type == OP_STORE) {
		s = &A->slot[op->slot];
		if (!(s->flags & MAPF_SHARED))
			return false;
		f = s->file;
		p = (s->off + op->off) / PG;
	} else if (op->type == OP_PWRITE) {
		p = op->off / PG;
	} else {
		return false;
	}
	return p < FILE_PAGES && A->blockid[f][p] && A->idref[A->blockid[f][p]] > 1;
}

/* A live slot of file @f mapping byte @pos, or -1. */
static int slot_at(uint64_t *r, int f, uint64_t pos)
{
	int i, n = 0, pick[NSLOTS];

	for (i = 0; i < NSLOTS; i++) {
		const struct slot *s = &A->slot[i];

		if (s->live && s->file == f && pos >= s->off && pos < s->off + s->len)
			pick[n++] = i;
	}
	return n ? pick[rnd(r, n)] : -1;
}

static bool touch_at(uint64_t *r, struct op *op, int f, uint64_t pos)
{
	int si = slot_at(r, f, pos);

	if (si < 0)
		return false;
	op->type = OP_TOUCH;
	op->slot = si;
	op->off = align_down(pos - A->slot[si].off, PG);
	op->len = PG;
	if (chance(r, 30)) {
		op->off = 0;
		op->len = A->slot[si].len;
	}
	return true;
}

static void write_page_at(uint64_t *r, struct op *op, int f, uint64_t pos)
{
	op->type = OP_PWRITE;
	op->file = f;
	op->off = align_down(pos < POS_LIMIT ? pos : POS_LIMIT - PG, PG);
	op->len = PG;
	op->fill = pick_fill(r);
	op->buf = chance(r, 20) ? BUF_BAD : BUF_HEAP;
	op->bufarg = 0;
}

/* The file and byte an operation worked on, for its follow-up. */
static bool op_position(const struct op *op, int *f, uint64_t *pos)
{
	const struct slot *s;

	switch (op->type) {
	case OP_PWRITE:
	case OP_FALLOCATE:
	case OP_CLONE_RANGE:
		*f = op->file;
		*pos = op->off;
		return true;
	case OP_CLONE:
	case OP_COWEXTSIZE:
		/* No position of their own: the last one written. */
		*f = op->file;
		*pos = nhot ? hot[(nhot - 1) % NHOT] : 0;
		return true;
	case OP_STORE:
	case OP_TOUCH:
	case OP_MAP:
		s = &A->slot[op->slot];
		if (!s->live)
			return false;
		*f = s->file;
		*pos = s->off + (op->type == OP_MAP ? 0 : op->off);
		return true;
	default:
		return false;
	}
}

/* A PTE-only mapping of the 2 MiB range around @pos of file @f. */
static bool map_ptes_at(uint64_t *r, struct op *op, int f, uint64_t pos)
{
	uint64_t base = align_down(pos, PMD_SZ);

	op->type = OP_MAP;
	op->slot = free_slot();
	if (op->slot < 0)
		return false;
	op->file = f;
	op->off = base + rnd(r, PMD_SZ / PG / 2) * PG;
	op->len = (1 + rnd(r, (base + PMD_SZ - op->off) / PG)) * PG;
	op->off2 = (op->off / PG + 1 + rnd(r, PMD_SZ / PG - 1)) % (PMD_SZ / PG);
	op->mode = MAPF_SHARED | (chance(r, 50) ? MAPF_WRITE : 0) | (chance(r, 25) ? MAPF_HELPER : 0);
	return true;
}

static bool follow_up(uint64_t *r, struct op *op)
{
	uint64_t pos, k = rnd(r, 100);
	int f;

	if (!have_prev || !op_position(&prev, &f, &pos))
		return false;
	switch (prev.type) {
	case OP_PWRITE:
	case OP_STORE:
		/* After a CoW write: punch the page, the preallocation stays. */
		if (prev_was_cow && k < 40) {
			op->type = OP_FALLOCATE;
			op->file = f;
			op->mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
			op->off = align_down(pos, PG);
			op->len = PG;
			return true;
		}
		if (k < 30 && feat.reflink) {
			/*
			 * Share what was written: the whole file, or just its
			 * page (at the same offset of another file).  Only the
			 * second leaves a shared page between pages that are
			 * not, so that a CoW write of it keeps the rest of its
			 * CoW extent as preallocated CoW fork blocks; xfs
			 * converts a whole shared extent around a CoW write.
			 */
			op->type = OP_CLONE;
			op->file2 = f;
			op->file = pick_other_file(r, f);
			if (chance(r, 50)) {
				op->type = OP_CLONE_RANGE;
				op->off = op->off2 = align_down(pos, feat.blksize);
				op->len = feat.blksize;
			}
			return true;
		}
		if (k < 55) {
			op->type = OP_FALLOCATE;	/* punch it */
			op->file = f;
			op->mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
			op->off = align_down(pos, PG);
			op->len = PG;
			return true;
		}
		if (k < 80) {
			write_page_at(r, op, f, pos + (chance(r, 50) ? 0 : rnd(r, 64) * PG));
			return true;
		}
		return touch_at(r, op, f, pos);
	case OP_CLONE:
	case OP_CLONE_RANGE:
	case OP_COWEXTSIZE:
		if (prev.file2 >= 0 && chance(r, 50))
			f = prev.file2;	/* either side of a clone shares */
		if (k < 25 && feat.cowextsize && prev.type != OP_COWEXTSIZE) {
			op->type = OP_COWEXTSIZE;
			op->file = f;
			op->len = pick_cowextsize(r);
			return true;
		}
		write_page_at(r, op, f, pos);	/* a CoW write */
		return true;
	case OP_FALLOCATE:
		if (k < 50)
			return touch_at(r, op, f, pos);
		write_page_at(r, op, f, pos + rnd(r, 64) * PG);
		return true;
	case OP_MAP:
		return touch_at(r, op, f, pos);
	case OP_TOUCH:
		if (k < 30)
			return map_ptes_at(r, op, f, pos);
		if (k < 55)
			return touch_at(r, op, f, pos);
		/* A write where the touch mapped pages, or where writes went. */
		if (k < 80 || !nhot)
			pos += chance(r, 50) ? 0 : rnd(r, 512) * PG;
		else
			pos = hot[rnd(r, nhot < NHOT ? nhot : NHOT)] + rnd(r, 9) * PG - 4 * PG;
		write_page_at(r, op, f, pos < (1UL << 62) ? pos : 0);
		return true;
	default:
		return false;
	}
}

/*
 * Episodes.  A PMD entry, PTEs that fault-around mapped from it, and two
 * changes to parts of its range is where the entries have to be
 * invalidated consistently, and where the zero-page regression of the
 * 52-patch series was.  Random operations rarely line these up without
 * something in between that resets the range, so now and then an episode
 * does it on the focus range, in whatever state earlier operations left
 * it (holes, CoW fork blocks, shared or unwritten extents): touch a
 * PMD-capable mapping of it (mapped first if there is none), touch a
 * PTE-only one, then change two pages of the range.
 *
 * Half the episodes first make the focus range a hole inside EOF (a
 * truncate up if the file ends in it, a punch or zero of all of it),
 * because the PMD entry DAX keeps for a hole is the huge zero page,
 * which fault-around then maps as zero-page PTEs: the entry whose
 * invalidation is easiest to get wrong.  The punch leaves the CoW fork
 * as it is, so CoW blocks earlier writes preallocated stay.
 */
#define EPISODE 8	/* percent of operations that start one */

enum { EP_NONE, EP_SIZE, EP_HOLE, EP_TOUCH_PMD, EP_TOUCH_PTES, EP_CHANGE1, EP_CHANGE2 };

static bool pmd_slot_of_focus(const struct slot *s)
{
	return s->file == focus_file && s->off == focus_pmd && s->len >= PMD_SZ &&
	       (s->align * PG - s->off) % PMD_SZ == 0;
}

static bool pte_slot_of_focus(const struct slot *s)
{
	return over_focus(s) && ((s->align * PG - s->off) % PMD_SZ || s->len < PMD_SZ);
}

/* A slot @want accepts, or an operation that makes one (a map, or an unmap to make room). */
static int episode_slot(uint64_t *r, struct op *op, bool (*want)(const struct slot *), bool pmd)
{
	int si = pick_slot(r, want);

	if (si >= 0)
		return si;
	if (free_slot() < 0) {
		op->type = OP_UNMAP;
		op->slot = pick_slot(r, any_slot);
		return -1;
	}
	op->type = OP_MAP;
	op->slot = free_slot();
	op->file = focus_file;
	op->mode = MAPF_SHARED | (chance(r, 50) ? MAPF_WRITE : 0) | (chance(r, 25) ? MAPF_HELPER : 0);
	if (pmd) {
		op->off = focus_pmd;
		op->len = PMD_SZ;
		op->off2 = 0;
	} else {
		map_ptes_at(r, op, focus_file, focus_pmd);
	}
	return -1;
}

static void episode_touch(uint64_t *r, struct op *op, int si)
{
	const struct slot *s = &A->slot[si];
	uint64_t lo = s->off > focus_pmd ? s->off : focus_pmd;
	uint64_t hi = s->off + s->len < focus_pmd + PMD_SZ ? s->off + s->len : focus_pmd + PMD_SZ;

	op->type = OP_TOUCH;
	op->slot = si;
	if (chance(r, 50)) {
		op->off = lo - s->off;
		op->len = hi - lo;
	} else {
		op->off = align_down(lo + rnd(r, (hi - lo) / PG) * PG, PG) - s->off;
		op->len = PG;
	}
}

/*
 * A page of the focus range for the episode's changes: the first in the
 * CoW extent around a recent CoW write in the range (where the CoW fork
 * has blocks) or near a recent write, the second among the pages the PTE
 * touch mapped, outside the CoW extents we know of: fault-around maps
 * the 16 pages of the window around a touched page, aligned in the
 * address space (not in the file), inside the mapping.
 */
static uint64_t ep_touched, ep_touched_len;	/* file range of the PTE touch */
static uint64_t ep_window, ep_window_len;	/* the fault-around window in the file */
static bool ep_hole;				/* the episode made the range a hole */

static void episode_window(const struct slot *s)
{
	uint64_t vpage = s->align + (ep_touched - s->off) / PG;
	uint64_t lo = ep_touched - (vpage % FAULT_AROUND) * PG, hi = lo + FAULT_AROUND * PG;

	if (lo < s->off)
		lo = s->off;
	if (hi > s->off + s->len)
		hi = s->off + s->len;
	ep_window = lo;
	ep_window_len = hi - lo;
}

static uint64_t episode_pos(uint64_t *r, bool second)
{
	uint64_t k = rnd(r, 100), pos, lo, hi;
	int i, n = 0, pick[NHOT];

	for (i = 0; i < ncow_ext && i < NHOT; i++)
		if (cow_ext[i].file == focus_file && cow_ext[i].lo < focus_pmd + PMD_SZ &&
		    cow_ext[i].hi > focus_pmd)
			pick[n++] = i;
	if (!second && k < 50 && n) {
		i = pick[rnd(r, n)];
		lo = cow_ext[i].lo > focus_pmd ? cow_ext[i].lo : focus_pmd;
		hi = cow_ext[i].hi < focus_pmd + PMD_SZ ? cow_ext[i].hi : focus_pmd + PMD_SZ;
		gen_stats[GS_COW_CHANGE]++;
		gen_stats[GS_COW_CHANGE_HOLE] += ep_hole;
		return lo + rnd(r, (hi - lo) / PG) * PG;
	}
	if (!second && k < 75 && nhot) {
		pos = hot[rnd(r, nhot < NHOT ? nhot : NHOT)] + rnd(r, 17) * PG - 8 * PG;
		if (pos >= focus_pmd && pos < focus_pmd + PMD_SZ)
			return align_down(pos, PG);
	}
	/* Where fault-around mapped pages; outside CoW extents, 4 tries. */
	for (i = 0; second && k < 60 && ep_touched_len && i < 4; i++) {
		if (ep_touched_len > PG)
			pos = ep_touched + rnd(r, ep_touched_len / PG) * PG;
		else
			pos = ep_window + rnd(r, ep_window_len / PG) * PG;
		if (pos >= focus_pmd && pos < focus_pmd + PMD_SZ &&
		    (!in_cow_extent(focus_file, pos) || i == 3))
			return pos;
	}
	return focus_pmd + rnd(r, PMD_SZ / PG) * PG;
}

static void episode_change(uint64_t *r, struct op *op, bool second)
{
	uint64_t pos = episode_pos(r, second), k = rnd(r, 100);
	int si = slot_at(r, focus_file, pos);

	if (k < 80 || si < 0 || !(A->slot[si].prot & PROT_WRITE) || pos >= A->size[focus_file]) {
		write_page_at(r, op, focus_file, pos);
		return;
	}
	if (k < 90) {
		op->type = OP_STORE;
		op->slot = si;
		op->off = pos - A->slot[si].off;
		op->len = PG;
		op->fill = pick_fill(r);
		return;
	}
	op->type = OP_FALLOCATE;
	op->file = focus_file;
	op->mode = chance(r, 50) ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE :
				  FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
	op->off = pos;
	op->len = PG;
}

/* The episode's next operation; false when it is over. */
static bool episode_op(uint64_t *r, struct op *op)
{
	int si;

	switch (ep_step) {
	case EP_SIZE:
		ep_step = EP_HOLE;
		ep_hole = true;
		gen_stats[GS_HOLE]++;
		if (A->size[focus_file] < focus_pmd + PMD_SZ) {
			op->type = OP_TRUNCATE;
			op->file = focus_file;
			op->len = focus_pmd + PMD_SZ + (chance(r, 50) ? 0 : rnd(r, PMD_SZ / PG) * PG);
			return true;
		}
		/* fall through */
	case EP_HOLE:
		op->type = OP_FALLOCATE;
		op->file = focus_file;
		op->mode = (chance(r, 70) ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE) |
			   FALLOC_FL_KEEP_SIZE;
		op->off = focus_pmd;
		op->len = PMD_SZ;
		ep_step = EP_TOUCH_PMD;
		return true;
	case EP_TOUCH_PMD:
		si = episode_slot(r, op, pmd_slot_of_focus, true);
		if (si < 0)
			return op->slot >= 0;	/* the map or unmap first */
		episode_touch(r, op, si);
		ep_step = EP_TOUCH_PTES;
		return true;
	case EP_TOUCH_PTES:
		si = episode_slot(r, op, pte_slot_of_focus, false);
		if (si < 0)
			return op->slot >= 0;
		episode_touch(r, op, si);
		ep_touched = A->slot[si].off + op->off;
		ep_touched_len = op->len;
		episode_window(&A->slot[si]);
		ep_step = EP_CHANGE1;
		return true;
	case EP_CHANGE1:
		episode_change(r, op, false);
		ep_step = EP_CHANGE2;
		return true;
	case EP_CHANGE2:
		episode_change(r, op, true);
		ep_step = EP_NONE;
		return true;
	}
	return false;
}

static void clear_op(struct op *op)
{
	memset(op, 0, sizeof(*op));
	op->file2 = op->slot = op->pipe = -1;
}

void gen_op(uint64_t *r, struct op *op)
{
	bool done = false;

	clear_op(op);
	if (ep_step == EP_NONE && chance(r, EPISODE)) {
		ep_step = chance(r, 50) ? EP_SIZE : EP_TOUCH_PMD;
		ep_touched_len = 0;
		ep_hole = false;
		gen_stats[GS_EPISODES]++;
	}
	if (ep_step != EP_NONE) {
		done = episode_op(r, op);
		if (!done)
			ep_step = EP_NONE;
	}
	if (!done) {
		clear_op(op);
		done = chance(r, FOLLOW_UP) && follow_up(r, op);
	}
	while (!done) {
		clear_op(op);
		done = gen_type(r, op, pick_type(r));
	}
	if (op->off + op->len > FILE_MAX && op->type != OP_MAP && op->type != OP_TOUCH)
		op->len = op->off < FILE_MAX ? FILE_MAX - op->off : 0;
	remember_positions(op);
	prev = *op;
	prev_was_cow = writes_shared_page(op);
	if (prev_was_cow)
		remember_cow(op->type == OP_STORE ? A->slot[op->slot].file : op->file,
			     op->type == OP_STORE ? A->slot[op->slot].off + op->off : op->off);
	if (op->type == OP_COWEXTSIZE)
		cow_hint[op->file] = op->len;
	have_prev = true;
}
