// SPDX-License-Identifier: GPL-2.0
/*
 * A runner: one process per round and per replay, in a directory of its
 * own with fresh files, so that a replay starts from what the round
 * started from.  It forks the helper, then for each operation: carries it
 * out under the watchdog, looks at the kernel log, and checks everything.
 *
 * The watchdog bounds how long an operation may take.  Past the bound it
 * closes every pipe we hold (our only references to pages), and the
 * operation should then end: if a pipe held a page the operation writes,
 * or any page of a file whose layout it breaks, the wait was ours and
 * legitimate; otherwise it is a failure (the kernel waited for something
 * the operation does not touch).  An operation that does not end even
 * then is a hang.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

static struct result *res;		/* shared with the supervisor */

static struct {
	pthread_mutex_t lock;
	bool busy;		/* an operation is running */
	long index;
	double start;
	bool let_go;		/* the pipes were closed for it */
	double let_go_at;
	int pipes_closed;
	char desc[512];
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int kmsg = -1;

/* What the kernel must never print; the same list as scripts/verdict.sh. */
static const char *const kernel_bad[] = {
	"WARNING:", "BUG:", "Oops", "general protection fault", "KASAN:", "UBSAN:",
	"possible circular locking dependency", "inconsistent lock state",
	"possible recursive locking", "suspicious RCU usage", "blocked for more than",
	"soft lockup", "list_add corruption", "list_del corruption",
	"page dumped because", "Bad page", "VM_BUG_ON", "Kernel panic",
};

static void publish(long index, const struct outcome *o)
{
	res->kind = o->kind;
	res->fail_op = index;
	snprintf(res->msg, sizeof(res->msg), "%s", o->msg);
}

static void *watchdog(void *arg)
{
	struct outcome o;
	double t;

	(void)arg;
	for (;;) {
		usleep(100 * 1000);
		pthread_mutex_lock(&wd.lock);
		t = now();
		if (wd.busy && !wd.let_go && t - wd.start > cfg.wait_bound) {
			wd.let_go = true;
			wd.let_go_at = t;
			pthread_mutex_unlock(&wd.lock);
			wd.pipes_closed = pipes_close_all();
			continue;
		}
		if (wd.busy && wd.let_go && t - wd.let_go_at > 2 * cfg.wait_bound) {
			memset(&o, 0, sizeof(o));
			fail(&o, FAIL_HANG, "op %ld (%s) has not ended %.1f s after we closed our %d pipe(s), %.1f s after it began",
			     wd.index, wd.desc, t - wd.let_go_at, wd.pipes_closed, t - wd.start);
			publish(wd.index, &o);
			say("FAILURE %s: %s", fail_name(o.kind), o.msg);
			/* The stuck thread may never return: leave without it. */
			_exit(EX_FAIL);
		}
		pthread_mutex_unlock(&wd.lock);
	}
	return NULL;
}

static void watch_begin(long index, const struct op *op)
{
	pthread_mutex_lock(&wd.lock);
	wd.index = index;
	wd.start = now();
	wd.let_go = false;
	wd.pipes_closed = 0;
	op_format(op, wd.desc, sizeof(wd.desc));
	wd.busy = true;
	pthread_mutex_unlock(&wd.lock);
}

/*
 * The operation ended: a failure if the watchdog had to let go for it and
 * no reference of ours explains the wait.
 */
static void watch_end(const struct op *op, bool explained, struct outcome *o)
{
	bool let_go;
	double took;

	pthread_mutex_lock(&wd.lock);
	wd.busy = false;
	let_go = wd.let_go;
	took = now() - wd.start;
	pthread_mutex_unlock(&wd.lock);
	if (!let_go)
		return;
	if (explained) {
		if (cfg.verbose)
			say("op %ld waited %.1f s for a page a pipe of ours held (expected)",
			    wd.index, took);
		return;
	}
	if (o->kind)
		return;
	fail(o, FAIL_WAIT, "%s took %.1f s: it ended after we closed %d pipe(s) at %.1f s, and none held a page it writes or a page of a file whose layout it breaks",
	     op_name(op->type), took, wd.pipes_closed, cfg.wait_bound);
}

static void kmsg_open(void)
{
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
}

/* A record of the kernel log since the last look that reports a problem. */
static void kmsg_scan(struct outcome *o)
{
	char rec[8192];
	ssize_t n;
	size_t i;

	while (kmsg >= 0) {
		n = read(kmsg, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: read on */
		if (n <= 0)
			return;
		rec[n] = 0;
		for (i = 0; i < sizeof(kernel_bad) / sizeof(kernel_bad[0]); i++)
			if (strstr(rec, kernel_bad[i]) && !o->kind) {
				char *msg = strchr(rec, ';');

				fail(o, FAIL_KERNEL, "the kernel log says: %s",
				     msg ? msg + 1 : rec);
				o->msg[strcspn(o->msg, "\n")] = 0;
			}
	}
}

static void file_path(char *buf, size_t size, const char *dir, int f)
{
	snprintf(buf, size, "%s/f%d", dir, f);
}

static void setup_files(const char *dir)
{
	char path[4096];
	int f;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		exit(EX_SETUP);
	}
	for (f = 0; f < NFILES; f++) {
		file_path(path, sizeof(path), dir, f);
		fds[f] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fds[f] < 0) {
			perror(path);
			exit(EX_SETUP);
		}
	}
}

static void remove_files(const char *dir)
{
	char path[4096];
	int f;

	for (f = 0; f < NFILES; f++) {
		file_path(path, sizeof(path), dir, f);
		unlink(path);
	}
	rmdir(dir);
}

static void setup_arena(void)
{
	A = mmap(NULL, sizeof(*A), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (A == MAP_FAILED) {
		perror("dax-fuzz: arena");
		exit(EX_SETUP);
	}
	model_init();
}

static void print_op(long i, const struct op *op, const struct outcome *o)
{
	char line[1024], note[128] = "";

	op_format(op, line, sizeof(line));
	if (o->skipped)
		snprintf(note, sizeof(note), "   (skipped)");
	else if (o->refused)
		snprintf(note, sizeof(note), "   (refused: %s)", strerror(o->refused));
	say("op %ld: %s%s", i, line, note);
}

/*
 * One operation with everything after it; false if it failed.  read(2)
 * of files the operation does not change is checked every FULL_CHECK
 * operations and after the last (final_check(): a shrunk sequence ends
 * with the operation whose check failed, so it is checked as fully).
 */
#define FULL_CHECK 16

static bool step(long i, const struct op *op)
{
	unsigned int files = files_changed_by(op);
	struct outcome o, k;
	bool explained;
	double t;

	explained = holds_explain(op);
	t = now();
	watch_begin(i, op);
	exec_op(op, &o);
	watch_end(op, explained, &o);
	t = now() - t;
	res->op_seconds += t;
	res->seconds[op->type] += t;
	if (cfg.verbose)
		print_op(i, op, &o);
	res->done[op->type]++;
	if (o.skipped)
		res->skipped[op->type]++;
	if (o.refused)
		res->refused[op->type]++;
	memset(&k, 0, sizeof(k));
	kmsg_scan(&k);
	if (!o.kind && k.kind)
		o = k;
	if (!o.kind)
		check_all(&o, i % FULL_CHECK == FULL_CHECK - 1 ? ALL_FILES : files,
			  &res->file_check_seconds, &res->map_check_seconds);
	if (!o.kind)
		return true;
	publish(i, &o);
	return false;
}

/* Every file once more at the end of a round, as the last operation's. */
static void final_check(long last)
{
	struct outcome o;

	check_all(&o, ALL_FILES, &res->file_check_seconds, &res->map_check_seconds);
	if (o.kind)
		publish(last, &o);
}

static void runner_main(const char *dir, uint64_t seed, long nops, double deadline,
			const struct op *list, long nlist, struct op *log)
{
	pthread_t tid;
	struct op op;
	uint64_t rng = seed;
	long i;

	/* A helper that died must not kill us through its pipe. */
	signal(SIGPIPE, SIG_IGN);
	setup_files(dir);
	setup_arena();
	exec_init();
	gen_reset(&rng);
	if (helper_start()) {
		perror("dax-fuzz: helper");
		exit(EX_SETUP);
	}
	if (sigbus_guard_init() || pthread_create(&tid, NULL, watchdog, NULL)) {
		perror("dax-fuzz: runner");
		exit(EX_SETUP);
	}
	kmsg_open();
	for (i = 0;; i++) {
		if (list) {
			if (i >= nlist)
				break;
			op = list[i];
		} else {
			if (i >= nops || (deadline && now() > deadline))
				break;
			gen_op(&rng, &op);
			memcpy(res->gen, gen_stats, sizeof(gen_stats));
			log[i] = op;
		}
		res->ops_done = i;
		if (!step(i, &op)) {
			res->ops_done = i + 1;
			break;
		}
		res->ops_done = i + 1;
	}
	if (!res->kind && i > 0)
		final_check(i - 1);
	pipes_close_all();
	helper_stop();
	remove_files(dir);
	exit(res->kind ? EX_FAIL : EX_PASS);
}

static long round_counter;

/*
 * One round: from @seed, up to @nops generated operations (recorded in
 * @log) or until @deadline; or, with @list, a replay of @nlist recorded
 * ones.  In a fresh directory and process; the outcome in @out.
 */
void run_round(uint64_t seed, long nops, double deadline, const struct op *list,
	       long nlist, struct op *log, struct result *out)
{
	char dir[3072];
	pid_t pid;
	int status = 0;
	long last_done = -1;
	double last_progress = now(), hang_limit = 6 * cfg.wait_bound + 60;

	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		perror("dax-fuzz: result");
		exit(EX_SETUP);
	}
	memset(res, 0, sizeof(*res));
	snprintf(dir, sizeof(dir), "%s/run-%d-%ld", cfg.dir, getpid(), round_counter++);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		runner_main(dir, seed, nops, deadline, list, nlist, log);
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (res->ops_done != last_done) {
			last_done = res->ops_done;
			last_progress = now();
		} else if (now() - last_progress > hang_limit) {
			/* The watchdog itself is stuck: give the runner up. */
			if (!res->kind) {
				res->kind = FAIL_HANG;
				res->fail_op = res->ops_done;
				snprintf(res->msg, sizeof(res->msg),
					 "op %ld made no progress for %.0f s", res->ops_done, hang_limit);
			}
			kill(pid, SIGKILL);
			say("the runner is stuck; leaving it (pid %d) behind", pid);
			break;
		}
		usleep(50 * 1000);
	}
	if (!res->kind && WIFSIGNALED(status)) {
		res->kind = FAIL_CRASH;
		res->fail_op = res->ops_done;
		snprintf(res->msg, sizeof(res->msg), "the runner died of signal %d at op %ld",
			 WTERMSIG(status), res->ops_done);
	} else if (!res->kind && WIFEXITED(status) && WEXITSTATUS(status) != EX_PASS) {
		say("the runner could not be set up (exit %d)", WEXITSTATUS(status));
		exit(EX_SETUP);
	}
	*out = *res;
	munmap(res, sizeof(*res));
	remove_files(dir);
}
