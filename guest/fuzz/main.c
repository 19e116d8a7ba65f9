// SPDX-License-Identifier: GPL-2.0
/*
 * dax-fuzz [options] DIR: random file operations against long-lived
 * mappings of a few files in DIR, each operation followed by a check of
 * every mapped page against read(2) and a model.  On a failure it prints
 * the seed and the shortest sequence of operations that still fails
 * (found by replaying subsets in fresh files), in a form that -r replays.
 * Documentation/fuzz.md has the details.
 *
 * Exit: 0 no failure, 1 a failure, 2 setup or usage error, 4 DIR not DAX.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "fuzz.h"

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif
#ifndef MAP_SYNC
#define MAP_SHARED_VALIDATE 0x03
#define MAP_SYNC 0x80000
#endif
#define XFS_SUPER_MAGIC 0x58465342
#define EXT4_SUPER_MAGIC 0xEF53

struct config cfg = {
	.max_ops = 10000,
	.round_ops = 500,
	.wait_bound = 10,
	.shrink_seconds = 600,
	.max_failures = 1,
	.wrong_model = -1,
};
struct features feat;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dax-fuzz [options] DIR\n"
		"  -s SEED    seed of the first round (default: from the clock; printed)\n"
		"  -n OPS     operations in all (default 10000)\n"
		"  -t SECS    stop fuzzing after SECS seconds (default: no limit)\n"
		"  -R OPS     operations per round; each round starts with fresh files (default 500)\n"
		"  -w SECS    how long an operation may take (default 10)\n"
		"  -S SECS    time limit of shrinking one failure (default 600)\n"
		"  -F N       stop after failures of N kinds (default 1); more of a kind\n"
		"             already found are counted, not shrunk, and fuzzing goes on\n"
		"  -r FILE    replay the operations in FILE (one per line) instead of fuzzing\n"
		"  -m         with -r: shrink the replayed sequence if it fails\n"
		"  -o DIR     write each shrunk sequence to DIR/failure-N.ops\n"
		"  -x         do not shrink failures\n"
		"  -v         print every operation\n"
		"  -W OP      deliberately wrong model: corrupt the model after every OP\n"
		"             (an operation that changes data, e.g. pwrite), or with OP\n"
		"             'map' expect a wrong byte in every mapped page: checks must fail\n"
		"  -D         run even if DIR is not DAX (to test the fuzzer itself)\n"
		"exit: 0 no failure, 1 failure, 2 setup or usage error, 4 DIR is not DAX\n");
}

static double parse_num(const char *opt, const char *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || d < 0) {
		fprintf(stderr, "dax-fuzz: %s needs a number, not '%s'\n", opt, v);
		exit(EX_SETUP);
	}
	return d;
}

static int parse_op_name(const char *v)
{
	int t;

	if (!strcmp(v, "map"))
		return WRONG_MAP;
	for (t = 0; t < NR_OPS; t++)
		if (!strcmp(v, op_name(t)))
			return t;
	fprintf(stderr, "dax-fuzz: -W: no operation '%s'\n", v);
	exit(EX_SETUP);
}

static bool seed_given, shrink_replay;

static void parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "s:n:t:R:w:S:F:r:mo:xvW:Dh")) != -1) {
		switch (c) {
		case 's': cfg.seed = parse_num("-s", optarg); seed_given = true; break;
		case 'n': cfg.max_ops = parse_num("-n", optarg); break;
		case 't': cfg.seconds = parse_num("-t", optarg); break;
		case 'R': cfg.round_ops = parse_num("-R", optarg); break;
		case 'w': cfg.wait_bound = parse_num("-w", optarg); break;
		case 'S': cfg.shrink_seconds = parse_num("-S", optarg); break;
		case 'F': cfg.max_failures = parse_num("-F", optarg); break;
		case 'r': cfg.replay = optarg; break;
		case 'm': shrink_replay = true; break;
		case 'o': cfg.save_dir = optarg; break;
		case 'x': cfg.no_shrink = true; break;
		case 'v': cfg.verbose = true; break;
		case 'W': cfg.wrong_model = parse_op_name(optarg); break;
		case 'D': cfg.allow_nondax = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(EX_SETUP);
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		exit(EX_SETUP);
	}
	cfg.dir = argv[optind];
	if (cfg.round_ops < 1 || cfg.wait_bound <= 0 || cfg.max_failures < 1) {
		fprintf(stderr, "dax-fuzz: -R, -w and -F must be positive\n");
		exit(EX_SETUP);
	}
}

/* ---- what the filesystem offers ---- */

static int probe_file(const char *name, uint64_t size, int fill)
{
	char path[4096], buf[65536];
	uint64_t done;
	int fd;

	snprintf(path, sizeof(path), "%s/.probe-%s", cfg.dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	unlink(path);
	memset(buf, fill, sizeof(buf));
	for (done = 0; done < size; done += sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), done) != sizeof(buf)) {
			close(fd);
			return -1;
		}
	return fd;
}

static bool is_dax(int fd)
{
	struct statx stx;

	return !statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) &&
	       (stx.stx_attributes_mask & STATX_ATTR_DAX) &&
	       (stx.stx_attributes & STATX_ATTR_DAX);
}

static void probe_remaps(int a, int b)
{
	struct {
		struct file_dedupe_range r;
		struct file_dedupe_range_info info;
	} d;
	struct {
		int32_t fd1;
		uint32_t pad;
		uint64_t off1, off2, len, flags;
	} x = { .fd1 = a, .len = 65536 };
	struct fsxattr fa;
	loff_t in = 0, out = 0;

	feat.reflink = !ioctl(b, FICLONE, a);
	memset(&d, 0, sizeof(d));
	d.r.src_length = 65536;
	d.r.dest_count = 1;
	d.info.dest_fd = b;
	feat.dedupe = !ioctl(a, FIDEDUPERANGE, &d) && d.info.status == FILE_DEDUPE_RANGE_SAME;
	feat.copy_range = copy_file_range(a, &in, b, &out, 4096, 0) == 4096;
	feat.exchange = !ioctl(b, _IOW('X', 129, x), &x);
	feat.cowextsize = !ioctl(b, FS_IOC_FSGETXATTR, &fa);
	if (feat.cowextsize) {
		fa.fsx_xflags |= FS_XFLAG_COWEXTSIZE;
		fa.fsx_cowextsize = 1 << 20;
		feat.cowextsize = !ioctl(b, FS_IOC_FSSETXATTR, &fa);
	}
}

static void probe_features(int a)
{
	struct statfs sfs;
	void *p;
	int b, i, fd;

	fstatfs(a, &sfs);
	snprintf(feat.fstype, sizeof(feat.fstype), "%s",
		 sfs.f_type == XFS_SUPER_MAGIC ? "xfs" :
		 sfs.f_type == EXT4_SUPER_MAGIC ? "ext4" : "other");
	feat.blksize = (unsigned long)sfs.f_bsize > PG ? (unsigned long)sfs.f_bsize : PG;
	b = probe_file("b", 65536, 0);
	if (b >= 0) {
		probe_remaps(a, b);
		close(b);
	}
	p = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | MAP_SYNC, a, 0);
	feat.mapsync = p != MAP_FAILED;
	if (feat.mapsync)
		munmap(p, PG);
	for (i = 0; i < nr_falloc_modes; i++) {
		fd = probe_file("falloc", 262144, 1);
		if (fd < 0)
			continue;
		if (!fallocate(fd, falloc_mode_list[i], 65536, 65536))
			feat.falloc_modes |= 1u << i;
		close(fd);
	}
}

static void print_features(void)
{
	char modes[512] = "";
	int i;

	for (i = 0; i < nr_falloc_modes; i++)
		if (feat.falloc_modes & (1u << i))
			snprintf(modes + strlen(modes), sizeof(modes) - strlen(modes), "%s%s",
				 *modes ? " " : "", falloc_mode_name(falloc_mode_list[i]));
	say("%s, block size %lu: FICLONE %s, FIDEDUPERANGE %s, copy_file_range %s, exchange-range %s, cowextsize %s, MAP_SYNC %s",
	    feat.fstype, feat.blksize, feat.reflink ? "yes" : "no", feat.dedupe ? "yes" : "no",
	    feat.copy_range ? "yes" : "no", feat.exchange ? "yes" : "no",
	    feat.cowextsize ? "yes" : "no", feat.mapsync ? "yes" : "no");
	say("fallocate modes: %s", modes);
}

/* DAX on for DIR's files?  Then what the filesystem can do. */
static void setup(void)
{
	struct stat st;
	int a;

	if (stat(cfg.dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dax-fuzz: %s is not a directory\n", cfg.dir);
		exit(EX_SETUP);
	}
	a = probe_file("a", 65536, 0x5a);
	if (a < 0) {
		fprintf(stderr, "dax-fuzz: cannot write files in %s: %s\n", cfg.dir, strerror(errno));
		exit(EX_SETUP);
	}
	if (is_dax(a)) {
		say("%s: DAX is on (STATX_ATTR_DAX set on its files)", cfg.dir);
	} else if (cfg.allow_nondax) {
		say("%s: DAX is off (no STATX_ATTR_DAX); running anyway (-D)", cfg.dir);
	} else {
		say("%s: DAX is off (no STATX_ATTR_DAX): skipped", cfg.dir);
		exit(EX_SKIP);
	}
	probe_features(a);
	close(a);
	print_features();
}

/* ---- shrinking ---- */

static struct op *shrink_buf;

#define SHRINK_WAIT_BOUND 4	/* seconds */

/*
 * Replay @n operations of @list in fresh files: fails the same way?  @r
 * keeps the outcome of the last replay that did.
 */
static bool still_fails(const struct op *list, long n, enum fail_kind kind,
			struct result *r, long *replays)
{
	struct result now;

	(*replays)++;
	run_round(0, 0, 0, list, n, NULL, &now);
	if (now.kind != kind)
		return false;
	*r = now;
	return true;
}

/*
 * The operations before @from that made the slots what they are at
 * @from: for each slot its last map and what changed it since.  A window
 * of the last operations replays with them in front.
 */
static long slot_setup_ops(const struct op *list, long from, struct op *out)
{
	long i, n = 0, last_map[NSLOTS];
	int si;

	for (si = 0; si < NSLOTS; si++)
		last_map[si] = -1;
	for (i = 0; i < from; i++) {
		if (list[i].type == OP_MAP && list[i].slot >= 0)
			last_map[list[i].slot] = i;
		if (list[i].type == OP_UNMAP && list[i].slot >= 0)
			last_map[list[i].slot] = -1;
	}
	for (i = 0; i < from; i++) {
		si = list[i].slot;
		if (si < 0 || last_map[si] < 0 || i < last_map[si])
			continue;
		if (list[i].type == OP_MAP || list[i].type == OP_MREMAP ||
		    list[i].type == OP_MPROTECT)
			out[n++] = list[i];
	}
	return n;
}

/*
 * First try short windows of the last operations (with the mappings set
 * up in front): most failures need only the last few.  Returns the
 * length of the list in @list now.
 */
static long shrink_window(struct op *list, long n, enum fail_kind kind, struct result *r,
			  long *replays, double deadline)
{
	long w, m;

	for (w = 8; w < n && now() < deadline; w *= 2) {
		m = slot_setup_ops(list, n - w, shrink_buf);
		memcpy(shrink_buf + m, list + n - w, w * sizeof(*list));
		if (still_fails(shrink_buf, m + w, kind, r, replays)) {
			memcpy(list, shrink_buf, (m + w) * sizeof(*list));
			return m + w;
		}
	}
	return n;
}

/*
 * Remove every operation of one type at once, type by type: most types
 * have nothing to do with a failure, and this drops them in a replay
 * each, where removing them one by one takes as many as there are.
 * The failing operation itself stays.
 */
static long shrink_types(struct op *list, long n, enum fail_kind kind, struct result *r,
			 long *replays, double deadline)
{
	long i, m;
	int t;

	for (t = 0; t < NR_OPS && now() < deadline; t++) {
		for (m = 0, i = 0; i < n - 1; i++)
			if (list[i].type != (enum op_type)t)
				shrink_buf[m++] = list[i];
		if (m == n - 1)
			continue;	/* none of this type */
		shrink_buf[m++] = list[n - 1];
		if (still_fails(shrink_buf, m, kind, r, replays)) {
			memcpy(list, shrink_buf, m * sizeof(*list));
			n = m;
		}
	}
	return n;
}

/*
 * Delta debugging: remove chunks of halving size while the rest still
 * fails, then single operations until none can go.
 */
static long shrink_ddmin(struct op *list, long n, enum fail_kind kind, struct result *r,
			 long *replays, double deadline)
{
	long chunk, i, m;
	bool changed = true;

	for (chunk = n / 2; chunk >= 1 && now() < deadline; chunk /= 2) {
		for (i = 0; i + chunk <= n && now() < deadline;) {
			/* The failing operation itself stays last. */
			if (i + chunk >= n) {
				i += chunk;
				continue;
			}
			m = 0;
			memcpy(shrink_buf, list, i * sizeof(*list));
			m = i;
			memcpy(shrink_buf + m, list + i + chunk, (n - i - chunk) * sizeof(*list));
			m += n - i - chunk;
			if (still_fails(shrink_buf, m, kind, r, replays)) {
				memcpy(list, shrink_buf, m * sizeof(*list));
				n = m;
			} else {
				i += chunk;
			}
		}
	}
	while (changed && now() < deadline) {
		changed = false;
		for (i = n - 2; i >= 0 && now() < deadline; i--) {
			memcpy(shrink_buf, list, i * sizeof(*list));
			memcpy(shrink_buf + i, list + i + 1, (n - i - 1) * sizeof(*list));
			if (still_fails(shrink_buf, n - 1, kind, r, replays)) {
				memcpy(list, shrink_buf, (n - 1) * sizeof(*list));
				n--;
				changed = true;
			}
		}
	}
	return n;
}

static void print_list(FILE *f, const char *prefix, const struct op *list, long n)
{
	char line[1024];
	long i;

	for (i = 0; i < n; i++) {
		op_format(&list[i], line, sizeof(line));
		fprintf(f, "%s%s\n", prefix, line);
	}
	fflush(f);
}

static void save_list(const struct op *list, long n, int number, const char *why)
{
	char path[4096];
	FILE *f;

	if (!cfg.save_dir)
		return;
	snprintf(path, sizeof(path), "%s/failure-%d.ops", cfg.save_dir, number);
	f = fopen(path, "w");
	if (!f) {
		say("cannot write %s: %s", path, strerror(errno));
		return;
	}
	fprintf(f, "# %s\n", why);
	print_list(f, "", list, n);
	fclose(f);
	say("saved as %s (replay: dax-fuzz -r %s DIR)", path, path);
}

/* Shrink the @n operations of @list that failed with @kind, and print them. */
static void shrink_and_report(struct op *list, long n, const struct result *orig, int number)
{
	double start = now(), deadline = start + cfg.shrink_seconds, wait_bound = cfg.wait_bound;
	struct result r = *orig;
	long replays = 0, m;

	if (!cfg.no_shrink) {
		say("shrinking %ld operations (%s), at most %.0f s ...", n, fail_name(orig->kind),
		    cfg.shrink_seconds);
		/*
		 * A replay that fails by waiting takes the wait bound: a
		 * shorter one keeps the shrink of a WAIT from taking ages
		 * (longer waits still fail it, as they must).
		 */
		if (cfg.wait_bound > SHRINK_WAIT_BOUND)
			cfg.wait_bound = SHRINK_WAIT_BOUND;
		shrink_buf = malloc(2 * n * sizeof(*list) + NSLOTS * sizeof(*list));
		m = shrink_window(list, n, orig->kind, &r, &replays, deadline);
		if (m == n && !still_fails(list, n, orig->kind, &r, &replays)) {
			say("the failure did not come back on a replay of all %ld operations: not shrunk", n);
			say("its last operations were:");
			print_list(stdout, "    ", list + (n > 30 ? n - 30 : 0), n > 30 ? 30 : n);
			free(shrink_buf);
			cfg.wait_bound = wait_bound;
			return;
		}
		m = shrink_types(list, m, orig->kind, &r, &replays, deadline);
		n = shrink_ddmin(list, m, orig->kind, &r, &replays, deadline);
		free(shrink_buf);
		cfg.wait_bound = wait_bound;
		say("shrunk to %ld operations in %ld replays, %.0f s%s", n, replays, now() - start,
		    now() >= deadline ? " (time limit: may shrink further)" : "");
		say("the shrunk sequence fails with %s: %s", fail_name(r.kind), r.msg);
	}
	say("SEQUENCE %d BEGIN (%ld operations; replay: dax-fuzz -r FILE DIR)", number, n);
	print_list(stdout, "", list, n);
	say("SEQUENCE %d END", number);
	save_list(list, n, number, r.msg);
}

/* ---- fuzzing and replaying ---- */

static int read_list(const char *path, struct op **list, long *n)
{
	char line[1024];
	long cap = 1024, lineno = 0;
	FILE *f = fopen(path, "r");
	int r;

	if (!f) {
		fprintf(stderr, "dax-fuzz: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*list = malloc(cap * sizeof(**list));
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (*n == cap)
			*list = realloc(*list, (cap *= 2) * sizeof(**list));
		r = op_parse(line, &(*list)[*n]);
		if (r < 0) {
			fprintf(stderr, "dax-fuzz: %s:%ld: not an operation: %s", path, lineno, line);
			fclose(f);
			return -1;
		}
		if (r == 0)
			(*n)++;
	}
	fclose(f);
	return 0;
}

static int replay(void)
{
	struct result r;
	struct op *list;
	long n;

	if (read_list(cfg.replay, &list, &n))
		return EX_SETUP;
	say("replaying %ld operations of %s", n, cfg.replay);
	run_round(0, 0, 0, list, n, NULL, &r);
	if (!r.kind) {
		say("RESULT pass: %ld operations, no failure", r.ops_done);
		return EX_PASS;
	}
	say("FAILURE %s at op %ld: %s", fail_name(r.kind), r.fail_op, r.msg);
	if (shrink_replay)
		shrink_and_report(list, r.fail_op + 1, &r, 1);
	say("RESULT fail: %s at op %ld of %ld", fail_name(r.kind), r.fail_op, n);
	return EX_FAIL;
}

/* How often each operation ran, was skipped, or was refused by the kernel. */
static long op_done[NR_OPS], op_skipped[NR_OPS], op_refused[NR_OPS];
static double op_time[NR_OPS];
static double op_seconds, file_check_seconds, map_check_seconds;
static long gen_total[NR_GEN_STATS];

static void count_ops(const struct result *r)
{
	int t;

	for (t = 0; t < NR_GEN_STATS; t++)
		gen_total[t] += r->gen[t];
	op_seconds += r->op_seconds;
	file_check_seconds += r->file_check_seconds;
	map_check_seconds += r->map_check_seconds;
	for (t = 0; t < NR_OPS; t++) {
		op_done[t] += r->done[t];
		op_skipped[t] += r->skipped[t];
		op_refused[t] += r->refused[t];
		op_time[t] += r->seconds[t];
	}
}

static void print_op_counts(void)
{
	int t;

	for (t = 0; t < NR_OPS; t++)
		say("OPSTAT %-16s %7ld run, %6ld skipped, %6ld refused by the kernel, %6.1f s",
		    op_name(t), op_done[t], op_skipped[t], op_refused[t], op_time[t]);
	say("EPISODES %ld started, %ld of them on a range made a hole first; first changes into the CoW extent of a recent CoW write: %ld (%ld after a hole)",
	    gen_total[GS_EPISODES], gen_total[GS_HOLE], gen_total[GS_COW_CHANGE],
	    gen_total[GS_COW_CHANGE_HOLE]);
	say("time: %.0f s in operations, %.0f s checking files with read(2), %.0f s checking mappings",
	    op_seconds, file_check_seconds, map_check_seconds);
}

static int fuzz(void)
{
	double start = now(), deadline = cfg.seconds ? start + cfg.seconds : 0;
	long total = 0, round, nops, first_at = -1;
	struct op *log = mmap(NULL, cfg.round_ops * sizeof(*log), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct result r;
	int failures = 0, kinds = 0;
	uint64_t seed;
	double shrink_start, shrink_seconds = 0, fuzz_seconds;
	unsigned int shrunk_kinds = 0;

	if (log == MAP_FAILED) {
		perror("dax-fuzz: log");
		return EX_SETUP;
	}
	say("seed %llu, %ld operations at most, %ld per round, %s, wait bound %.0f s%s%s",
	    (unsigned long long)cfg.seed, cfg.max_ops, cfg.round_ops,
	    deadline ? "time limit set" : "no time limit", cfg.wait_bound,
	    cfg.wrong_model >= 0 ? ", WRONG MODEL: " : "",
	    cfg.wrong_model == WRONG_MAP ? "mapped pages" :
	    cfg.wrong_model >= 0 ? op_name(cfg.wrong_model) : "");
	for (round = 0; total < cfg.max_ops && (!deadline || now() < deadline) &&
	     kinds < cfg.max_failures; round++) {
		seed = cfg.seed + round;
		nops = cfg.max_ops - total < cfg.round_ops ? cfg.max_ops - total : cfg.round_ops;
		run_round(seed, nops, deadline, NULL, 0, log, &r);
		total += r.ops_done;
		count_ops(&r);
		if (cfg.verbose || r.kind)
			say("round %ld (seed %llu): %ld operations, %s", round,
			    (unsigned long long)seed, r.ops_done, r.kind ? fail_name(r.kind) : "clean");
		if (!r.kind)
			continue;
		failures++;
		if (first_at < 0)
			first_at = total;
		say("FAILURE %d: %s at op %ld of round %ld (seed %llu; %ld operations run in all): %s",
		    failures, fail_name(r.kind), r.fail_op, round, (unsigned long long)seed, total, r.msg);
		say("the round again: dax-fuzz -s %llu -n %ld -R %ld DIR", (unsigned long long)seed,
		    r.fail_op + 1, r.fail_op + 1);
		/*
		 * One shrunk sequence per kind of failure: the others cost
		 * time.  A kind found again does not count towards -F, so that
		 * a failure that comes back often (a wait, say) does not end
		 * the run before other kinds have had their chance.
		 */
		if (shrunk_kinds & (1u << r.kind)) {
			say("not shrunk: a %s failure was shrunk above", fail_name(r.kind));
			continue;
		}
		shrunk_kinds |= 1u << r.kind;
		kinds++;
		shrink_start = now();
		shrink_and_report(log, r.fail_op + 1, &r, failures);
		shrink_seconds += now() - shrink_start;
		/* Shrinking does not eat the fuzzing budget. */
		if (deadline)
			deadline += now() - shrink_start;
	}
	print_op_counts();
	fuzz_seconds = now() - start - shrink_seconds;
	say("RESULT seed=%llu ops=%ld rounds=%ld failures=%d first_failure_after=%ld seconds=%.0f shrink_seconds=%.0f ops_per_second=%.1f",
	    (unsigned long long)cfg.seed, total, round, failures, first_at, fuzz_seconds,
	    shrink_seconds, total / (fuzz_seconds > 0 ? fuzz_seconds : 1));
	return failures ? EX_FAIL : EX_PASS;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	if (!seed_given)
		cfg.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	setvbuf(stdout, NULL, _IOLBF, 0);
	setup();
	return cfg.replay ? replay() : fuzz();
}
