/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dax-fuzz: random file operations against mappings that live for the
 * whole run.  Documentation/fuzz.md describes the program; this header
 * holds what its parts share.
 *
 * Processes: the supervisor (main.c) starts one runner per round (a fresh
 * directory of files) and per replay while it shrinks a failure; the
 * runner (runner.c) forks a helper, a second process whose mappings are
 * checked like the runner's own.  The model of the files and the table of
 * mappings live in an arena of shared memory that both see.
 */
#ifndef DAX_FUZZ_H
#define DAX_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PG		4096UL
#define PMD_SZ		(2UL << 20)
#define NFILES		3
#define ALL_FILES	((1u << NFILES) - 1)
#define FILE_MAX	(8UL << 20)	/* no operation makes a file larger */
#define FILE_PAGES	(FILE_MAX / PG)
#define NSLOTS		10		/* mappings */
#define MAP_MAX		(4UL << 20)	/* the longest mapping */
#define MAP_PAGES	(MAP_MAX / PG)
#define NPIPES		6		/* pipes holding vmspliced pages */
#define PIPE_PAGES	16		/* a pipe's default capacity */

/* Exit codes, as everywhere in the harness. */
#define EX_PASS		0
#define EX_FAIL		1
#define EX_SETUP	2
#define EX_SKIP		4

enum op_type {
	OP_MAP,		/* map a slot: file, offset, length, flags, alignment */
	OP_UNMAP,
	OP_MREMAP,	/* move a slot to a new address, new length */
	OP_MPROTECT,
	OP_MADVISE,	/* MADV_DONTNEED over part of a slot */
	OP_MSYNC,
	OP_STORE,	/* memset through a slot */
	OP_PWRITE,
	OP_PREAD,
	OP_TRUNCATE,
	OP_FALLOCATE,
	OP_FSYNC,
	OP_CLONE,	/* FICLONE: the whole of file2 into file */
	OP_CLONE_RANGE,	/* FICLONERANGE */
	OP_DEDUPE,	/* FIDEDUPERANGE */
	OP_COPY_RANGE,	/* copy_file_range(2) */
	OP_EXCHANGE,	/* XFS_IOC_EXCHANGE_RANGE */
	OP_COWEXTSIZE,	/* FS_IOC_FSSETXATTR fsx_cowextsize */
	OP_VMSPLICE,	/* pages of a slot into a pipe we keep */
	OP_PIPE_CLOSE,
	OP_TOUCH,	/* read a byte of each page of part of a slot: fault it in */
	NR_OPS
};

/* -W map: the mapping check expects one wrong byte per page. */
#define WRONG_MAP	NR_OPS

/* Flags of a mapping (op.mode of OP_MAP). */
#define MAPF_SHARED	1
#define MAPF_WRITE	2
#define MAPF_SYNC	4
#define MAPF_HELPER	8	/* the helper process owns it */

/* Where pwrite(2) takes its data from and pread(2) puts it (op.buf). */
enum buf_kind {
	BUF_HEAP,	/* ordinary memory */
	BUF_BAD,	/* op.bufarg bytes of memory, then a PROT_NONE page */
	BUF_MAP,	/* a runner's slot op.slot at byte op.off2 */
};

/*
 * One operation, with every parameter absolute, so that a recorded list
 * replays the same without the generator.  Which fields an operation
 * uses: op_format() in ops.c.
 */
struct op {
	enum op_type type;
	int file, file2, slot, pipe;
	uint64_t off, off2, len;
	unsigned int mode;	/* flags, fallocate mode, prot, msync flags, alignment */
	unsigned int fill;	/* the byte written */
	enum buf_kind buf;
	uint64_t bufarg;
};

/* A private page's content relative to the file. */
enum priv_state {
	PRIV_FOLLOW,	/* not written through the mapping: shows the file */
	PRIV_COPY,	/* the process's own copy (arena priv) */
	PRIV_MAYBE,	/* the copy, or the file if the kernel zapped the copy */
};

struct slot {
	bool live;
	int file;
	unsigned int flags;	/* MAPF_* */
	int prot;		/* PROT_READ or PROT_READ | PROT_WRITE */
	uint64_t off, len;	/* file offset and length, page multiples */
	unsigned int align;	/* address offset in pages from a 2 MiB boundary */
	uintptr_t addr;		/* in the owner's address space */
};

/* Kinds of failure; a replay while shrinking must fail the same way. */
enum fail_kind {
	FAIL_NONE,
	FAIL_FILE,	/* read(2) differs from the model */
	FAIL_MAP,	/* a mapping differs from read(2) or the model */
	FAIL_SIGBUS,	/* SIGBUS inside the file's size */
	FAIL_NO_SIGBUS,	/* a page wholly beyond EOF was readable, or mapped */
	FAIL_WAIT,	/* an operation waited with nothing of ours to explain it */
	FAIL_HANG,	/* an operation did not end even after we let go */
	FAIL_ERROR,	/* an operation failed in a way it never should */
	FAIL_KERNEL,	/* the kernel log reports a problem */
	FAIL_CRASH,	/* the runner died */
	NR_FAILS
};

struct features {
	bool reflink, dedupe, copy_range, exchange, cowextsize, mapsync;
	unsigned int falloc_modes;	/* bit i: mode of falloc_mode_list[i] works */
	unsigned long blksize;
	char fstype[16];
};

/* The shared state of a runner and its helper. */
struct arena {
	uint64_t size[NFILES];
	uint64_t size_may_be[NFILES];	/* another size the check accepts, 0: none */
	uint32_t blockid[NFILES][FILE_PAGES];	/* which block a page is, 0: none */
	uint32_t next_id;
	struct slot slot[NSLOTS];
	uint8_t priv_state[NSLOTS][MAP_PAGES];
	unsigned char model[NFILES][FILE_MAX];	/* zero beyond size */
	unsigned char priv[NSLOTS][MAP_PAGES][PG];
	uint16_t idref[1 << 21];		/* pages per block id */
};

struct config {
	const char *dir;
	uint64_t seed;
	long max_ops;		/* over all rounds */
	long round_ops;		/* operations per round (fresh files) */
	double seconds;		/* time budget; 0: none */
	double wait_bound;	/* seconds an operation may take */
	double shrink_seconds;	/* time budget of one shrink */
	int max_failures;	/* stop after this many */
	int wrong_model;	/* -1, an op_type whose model update is corrupted,
				   or WRONG_MAP: the check expects a wrong byte */
	bool verbose, allow_nondax, no_shrink;
	const char *replay;	/* a file of operations */
	const char *save_dir;	/* where shrunk sequences are written */
};

/* What the generator did, for the EPISODES line (gen.c). */
enum { GS_EPISODES, GS_HOLE, GS_COW_CHANGE, GS_COW_CHANGE_HOLE, NR_GEN_STATS };
extern long gen_stats[NR_GEN_STATS];

/* What a run (a round or a replay) ended with. */
struct result {
	long gen[NR_GEN_STATS];	/* gen_stats of the round */
	long done[NR_OPS], skipped[NR_OPS], refused[NR_OPS];	/* per operation */
	double seconds[NR_OPS];
	double op_seconds, file_check_seconds, map_check_seconds;
	enum fail_kind kind;
	long fail_op;		/* index of the failing operation */
	long ops_done;
	char msg[4096];
};

/* The fallocate modes the fuzzer uses, in the order of falloc_modes bits. */
extern const unsigned int falloc_mode_list[];
extern const int nr_falloc_modes;

/* main.c */
extern struct config cfg;
extern struct features feat;

/* util.c */
uint64_t rng_next(uint64_t *s);
uint64_t rnd(uint64_t *s, uint64_t n);
bool chance(uint64_t *s, int percent);
double now(void);
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *fail_name(enum fail_kind k);
void *reserve_aligned(size_t len, unsigned int align_pages);
int sigbus_guard_init(void);
bool guarded_read(const void *p, void *out, size_t n, uintptr_t *fault);
bool guarded_write(void *p, int byte, size_t n, uintptr_t *fault);
bool guarded_memcmp(const void *map, const void *want, size_t n, int *diff,
		    uintptr_t *fault);

/* ops.c */
const char *op_name(enum op_type t);
void op_format(const struct op *op, char *buf, size_t size);
int op_parse(const char *line, struct op *op);
const char *falloc_mode_name(unsigned int mode);
const char *slot_describe(const struct slot *s, char *buf, size_t size);

/* model.c: what the files and the private pages hold, as we expect it */
extern struct arena *A;
void model_init(void);
void model_write(int f, uint64_t off, const unsigned char *data, uint64_t n);
void model_fill(int f, uint64_t off, int byte, uint64_t n);
void model_maybe_allocated(int f, uint64_t off, uint64_t n);
void model_zero(int f, uint64_t off, uint64_t n);
void model_resize(int f, uint64_t size);
void model_copy(int dst, uint64_t doff, int src, uint64_t soff, uint64_t n, bool share);
void model_exchange(int f1, uint64_t off1, int f2, uint64_t off2, uint64_t n);
void model_collapse(int f, uint64_t off, uint64_t len);
void model_insert(int f, uint64_t off, uint64_t len);
void model_unshare(int f, uint64_t off, uint64_t len);
void model_dedupe(int dst, uint64_t doff, int src, uint64_t soff, uint64_t n);
void model_store(int si, uint64_t moff, const unsigned char *data, uint64_t n);
void model_slot_reset(int si, uint64_t from_page);
void priv_maybe(int f, uint64_t start, uint64_t end);
bool expected_page(int si, uint64_t page, unsigned char *out);
bool expected_bytes(int si, uint64_t moff, uint64_t n, unsigned char *out, uint64_t *valid);
uint64_t round_up_pg(uint64_t x);

/* exec.c: carrying out operations, in the runner or the slot's owner */
struct outcome {
	enum fail_kind kind;
	bool skipped;		/* its preconditions do not hold (in a replay) */
	int refused;		/* the errno of a call that failed as it may */
	char msg[2048];
};

/* What the owner of a slot reports back (the helper through a socket). */
struct slot_reply {
	int ret;		/* 0 or -errno */
	bool faulted;		/* a store got SIGBUS or SIGSEGV */
	uintptr_t fault;
	enum fail_kind kind;	/* of a check */
	char msg[2048];
};

extern int fds[NFILES];
void exec_init(void);
void exec_op(const struct op *op, struct outcome *o);
void slot_exec(const struct op *op, struct slot_reply *rep);
int helper_start(void);
void helper_stop(void);
void helper_check_slot(int si, struct slot_reply *rep);
bool pipe_live(int pi);
int pipes_live(void);
int pipes_close_all(void);
bool holds_explain(const struct op *op);
void fail(struct outcome *o, enum fail_kind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* check.c: every page of every mapping against the model and read(2) */
void check_slot(int si, struct slot_reply *rep);
unsigned int files_changed_by(const struct op *op);
void check_all(struct outcome *o, unsigned int files, double *file_seconds, double *map_seconds);
void touch_slot(const struct op *op, struct slot_reply *rep);

/* gen.c: the next random operation for the state the model is in */
void gen_reset(uint64_t *rng);
void gen_op(uint64_t *rng, struct op *op);

/* runner.c: one round (generate) or one replay of a list */
void run_round(uint64_t seed, long nops, double deadline, const struct op *list,
	       long nlist, struct op *log, struct result *res);

#endif
