/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Ten million wake-ups of a real worker thread, each of which a single
 * lost wake-up would turn into a hang.
 *
 * Under `deferred` the worker alone runs handlers. Every round starts
 * with the worker IDLE; the test thread (the dispatcher) raises a vector
 * once and calls sirq_irq_exit() until it is not BUSY, then waits for the
 * handler. Nobody raises or calls sirq_irq_exit() again, so the round
 * completes only if the engine either woke the worker (ops.wake_worker)
 * or the worker saw the raise itself while going idle. The worker sleeps the way sirqd does
 * (a token counter it consumes, here a futex after a short spin instead
 * of an eventfd, to keep ten million rounds within seconds).
 *
 * A round that does not complete within ROUND_TIMEOUT_NS fails the test
 * with the worker's state; meson's timeout is the backstop.
 */

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define VEC_ROUND VEC_APP0
/* Wake-ups per run; WAKEUP_TEST_WAKEUPS in the environment overrides (TSan). */
#define WAKEUPS_DEFAULT 10000000ULL
#define ROUND_TIMEOUT_NS SEC(10)
/* Spins before a futex sleep: a round trip is well under a microsecond. */
#define SPINS_BEFORE_SLEEP 8192
/*
 * Spins (of a pause each) before a sched_yield() while waiting, should
 * the other thread need this CPU: a yield is a system call, every round
 * paying one would make ten million rounds take minutes.
 */
#define SPINS_BEFORE_YIELD 64

struct wake_test {
	struct sirq_cpu *cpu;
	pthread_t worker;
	uint32_t tokens;		/* wake-ups not yet consumed (futex word) */
	uint32_t sleeping;		/* the worker is in futex_wait */
	uint64_t wake_calls;		/* ops.wake_worker */
	uint64_t futex_sleeps;
	uint64_t rounds_run;		/* handler runs */
};

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static long
futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

static uint64_t
clock_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
wake_worker(void *ctx)
{
	struct wake_test *t = ctx;

	__atomic_fetch_add(&t->wake_calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&t->tokens, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->sleeping, __ATOMIC_SEQ_CST))
		futex(&t->tokens, FUTEX_WAKE_PRIVATE, 1);
}

/* The eventfd read of sirqd: wait for a token and consume it. */
static void
consume_token(struct wake_test *t)
{
	unsigned int spins = 0;
	uint32_t n;

	for (;;) {
		n = __atomic_load_n(&t->tokens, __ATOMIC_SEQ_CST);
		if (n != 0) {
			if (__atomic_compare_exchange_n(&t->tokens, &n, n - 1,
							false, __ATOMIC_SEQ_CST,
							__ATOMIC_RELAXED))
				return;
			continue;
		}
		if (++spins < SPINS_BEFORE_SLEEP) {
			cpu_relax();
			if (spins % SPINS_BEFORE_YIELD == 0)
				sched_yield();
			continue;
		}
		__atomic_store_n(&t->sleeping, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&t->tokens, __ATOMIC_SEQ_CST) == 0) {
			t->futex_sleeps++;
			futex(&t->tokens, FUTEX_WAIT_PRIVATE, 0);
		}
		__atomic_store_n(&t->sleeping, 0, __ATOMIC_SEQ_CST);
		spins = 0;
	}
}

static void *
worker_main(void *arg)
{
	struct wake_test *t = arg;

	for (;;) {
		switch (sirq_worker_run(t->cpu)) {
		case SIRQ_WORKER_SLEEP:
			consume_token(t);
			break;
		case SIRQ_WORKER_YIELD:
			break;
		case SIRQ_WORKER_BUSY:
			sched_yield();
			break;
		case SIRQ_WORKER_EXIT:
		default:
			return NULL;
		}
	}
}

static void
count_round(struct sirq_cpu *cpu, void *arg)
{
	struct wake_test *t = arg;

	(void)cpu;
	__atomic_store_n(&t->rounds_run, t->rounds_run + 1, __ATOMIC_RELEASE);
}

/* Spin (yielding now and then) until @done says so; false after the timeout. */
static bool
wait_until(bool (*done)(struct wake_test *t), struct wake_test *t)
{
	uint64_t deadline = 0;
	unsigned int spins = 0;

	while (!done(t)) {
		cpu_relax();
		if (++spins % SPINS_BEFORE_YIELD != 0)
			continue;
		if (deadline == 0)
			deadline = clock_ns(NULL) + ROUND_TIMEOUT_NS;
		else if (clock_ns(NULL) >= deadline)
			return false;
		sched_yield();
	}
	return true;
}

static bool
worker_idle(struct wake_test *t)
{
	return sirq_worker_state(t->cpu) == SIRQ_WORKER_IDLE;
}

static uint64_t round_no;

static bool
round_done(struct wake_test *t)
{
	return __atomic_load_n(&t->rounds_run, __ATOMIC_ACQUIRE) >= round_no;
}

static uint64_t
wakeups_wanted(void)
{
	const char *s = getenv("WAKEUP_TEST_WAKEUPS");

	return s != NULL && *s != '\0' ? strtoull(s, NULL, 10) : WAKEUPS_DEFAULT;
}

Test(wakeup, ten_million_worker_wakeups_lose_none, .timeout = 180)
{
	static struct wake_test t;
	struct sirq_cpu_conf conf = { .name = "wakeup" };
	uint64_t want = wakeups_wanted(), start, wakeups = 0, busy_retries = 0;
	uint64_t passes = 0;
	struct sirq_stats st;
	unsigned int w;

	conf.params = harness_params(SIRQ_POLICY_DEFERRED);
	conf.ops.clock_ns = clock_ns;
	conf.ops.wake_worker = wake_worker;
	conf.ops.ctx = &t;
	t.cpu = sirq_cpu_create(&conf);
	cr_assert(t.cpu != NULL);
	cr_assert(eq(int, sirq_register(t.cpu, VEC_ROUND, count_round, &t,
					"ROUND"), 0));
	cr_assert(eq(int, pthread_create(&t.worker, NULL, worker_main, &t), 0));

	start = clock_ns(NULL);
	while (__atomic_load_n(&t.wake_calls, __ATOMIC_RELAXED) < want) {
		round_no++;
		cr_assert(wait_until(worker_idle, &t),
			  "round %llu: the worker never went idle (state %d)",
			  (unsigned long long)round_no, sirq_worker_state(t.cpu));
		sirq_raise(t.cpu, VEC_ROUND);
		/*
		 * BUSY leaves the work pending for the next call (sirq.h), as
		 * the binding's dispatcher loops make it: the worker held the
		 * lock and may have re-checked pending before the raise.
		 */
		while (sirq_irq_exit(t.cpu) == SIRQ_IRQ_EXIT_BUSY) {
			busy_retries++;
			cpu_relax();
		}
		cr_assert(wait_until(round_done, &t),
			  "round %llu: lost wake-up: raised, worker state %d, pending %#x, %llu tokens",
			  (unsigned long long)round_no, sirq_worker_state(t.cpu),
			  sirq_pending(t.cpu),
			  (unsigned long long)__atomic_load_n(&t.tokens, __ATOMIC_RELAXED));
	}

	sirq_worker_park(t.cpu);
	wake_worker(&t);
	cr_assert(eq(int, pthread_join(t.worker, NULL), 0));
	sirq_stats_get(t.cpu, &st);
	/* The worker's own transitions call no ops.wake_worker. */
	for (w = 0; w < SIRQ_WAKE_MAX; w++)
		if (w != SIRQ_WAKE_RECHECK && w != SIRQ_WAKE_RUN)
			wakeups += st.wakeups[w];
	for (w = 0; w < SIRQ_EXIT_MAX; w++)
		passes += st.pass_exit[w][SIRQ_CTX_WORKER];
	cr_log_info("%llu wake-ups in %llu rounds, %.1f s, %llu futex sleeps, %llu BUSY retries",
		    (unsigned long long)t.wake_calls,
		    (unsigned long long)round_no,
		    (double)(clock_ns(NULL) - start) / 1e9,
		    (unsigned long long)t.futex_sleeps,
		    (unsigned long long)busy_retries);
	cr_assert(eq(u64, st.runs[VEC_ROUND][SIRQ_CTX_WORKER], round_no));
	cr_assert(eq(u64, st.runs[VEC_ROUND][SIRQ_CTX_INLINE], 0));
	/* The explicit wake-up of the park above is not the engine's. */
	cr_assert(eq(u64, wakeups, t.wake_calls - 1));
	/* Every pass the first after a wake-up, or a continuation. */
	cr_log_info("%llu passes: %llu rechecks, %llu runs, %llu unused, %llu continued",
		    (unsigned long long)passes,
		    (unsigned long long)st.wakeups[SIRQ_WAKE_RECHECK],
		    (unsigned long long)st.wakeups[SIRQ_WAKE_RUN],
		    (unsigned long long)st.worker_wakeups_unused,
		    (unsigned long long)st.worker_continuations);
	cr_assert(eq(u64, passes, wakeups + st.wakeups[SIRQ_WAKE_RECHECK] +
		     st.wakeups[SIRQ_WAKE_RUN] - st.worker_wakeups_unused +
		     st.worker_continuations));
	sirq_cpu_free(t.cpu);
}
