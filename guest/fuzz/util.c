// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers: the seeded random numbers, time, messages, address
 * reservations, and access to mappings that makes SIGBUS and SIGSEGV into
 * a return value instead of a crash.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

/* xorshift64*: small, and the same sequence for a seed everywhere. */
uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint64_t rnd(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

bool chance(uint64_t *s, int percent)
{
	return (int)rnd(s, 100) < percent;
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One line on stdout, prefixed, flushed: the guest's log is a serial line. */
void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("dax-fuzz: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

const char *fail_name(enum fail_kind k)
{
	static const char *const names[NR_FAILS] = {
		[FAIL_NONE] = "none",
		[FAIL_FILE] = "FILE_MISMATCH",
		[FAIL_MAP] = "MAP_MISMATCH",
		[FAIL_SIGBUS] = "SIGBUS",
		[FAIL_NO_SIGBUS] = "NO_SIGBUS",
		[FAIL_WAIT] = "WAIT",
		[FAIL_HANG] = "HANG",
		[FAIL_ERROR] = "ERROR",
		[FAIL_KERNEL] = "KERNEL",
		[FAIL_CRASH] = "CRASH",
	};

	return k < NR_FAILS ? names[k] : "?";
}

/*
 * A PROT_NONE range of @len bytes starting @align_pages pages after a
 * 2 MiB boundary, for a mapping to replace with MAP_FIXED: so that a
 * mapping can be put where a PMD fits, or deliberately where none does.
 */
void *reserve_aligned(size_t len, unsigned int align_pages)
{
	size_t total = len + 2 * PMD_SZ;
	char *p, *base;

	p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	base = (char *)(((uintptr_t)p + PMD_SZ - 1) & ~(PMD_SZ - 1));
	base += (align_pages % (PMD_SZ / PG)) * PG;
	if (base > p)
		munmap(p, base - p);
	if (p + total > base + len)
		munmap(base + len, p + total - (base + len));
	return base;
}

/*
 * Guarded access.  The fault handler jumps back to the guard with the
 * faulting address; SA_NODEFER keeps the signal unblocked after the jump,
 * so that sigsetjmp() need not save the mask (a system call each time).
 */
static __thread sigjmp_buf *volatile guard_env;
static __thread volatile uintptr_t guard_addr;

/*
 * The accesses must happen between setting and clearing guard_env: keep
 * the compiler from moving them out, or from dropping the first store.
 */
#define barrier() __asm__ __volatile__("" ::: "memory")
static inline void guard_on(sigjmp_buf *env)
{
	guard_env = env;
	barrier();
}

static inline void guard_off(void)
{
	barrier();
	guard_env = NULL;
}

static void fault_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!guard_env) {
		/* A fault outside a guard is a bug of ours or the kernel's. */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	guard_addr = (uintptr_t)si->si_addr;
	siglongjmp(*guard_env, 1);
}

int sigbus_guard_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	if (sigaction(SIGBUS, &sa, NULL) || sigaction(SIGSEGV, &sa, NULL))
		return -1;
	return 0;
}

/* Copy @n bytes from a mapping; false and the address if it faulted. */
bool guarded_read(const void *p, void *out, size_t n, uintptr_t *fault)
{
	sigjmp_buf env;

	if (sigsetjmp(env, 0)) {
		guard_env = NULL;
		*fault = guard_addr;
		return false;
	}
	guard_on(&env);
	memcpy(out, p, n);
	guard_off();
	return true;
}

/* memset() through a mapping; false and the address if it faulted. */
bool guarded_write(void *p, int byte, size_t n, uintptr_t *fault)
{
	sigjmp_buf env;

	if (sigsetjmp(env, 0)) {
		guard_env = NULL;
		*fault = guard_addr;
		return false;
	}
	guard_on(&env);
	memset(p, byte, n);
	guard_off();
	return true;
}

/*
 * Compare @n bytes of a mapping with what they should be: *diff is the
 * index of the first byte that differs, or -1.  False if it faulted.
 */
bool guarded_memcmp(const void *map, const void *want, size_t n, int *diff,
		    uintptr_t *fault)
{
	const volatile unsigned char *m = map;
	const unsigned char *w = want;
	sigjmp_buf env;
	size_t i;

	if (sigsetjmp(env, 0)) {
		guard_env = NULL;
		*fault = guard_addr;
		return false;
	}
	guard_on(&env);
	*diff = -1;
	if (memcmp(map, want, n)) {
		for (i = 0; i < n; i++)
			if (m[i] != w[i]) {
				*diff = i;
				break;
			}
	}
	guard_off();
	return true;
}
