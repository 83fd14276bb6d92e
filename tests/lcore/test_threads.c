/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The policies on real threads: the dispatcher on lcore 1, sirqd pinned to
 * CPU 0, and a vector that always has more work (it re-raises itself).
 * Then the test starves sirqd: it runs SCHED_FIFO on CPU 0 for a while,
 * so sirqd is runnable but does not run, as when the application keeps
 * the CPU. What the dispatcher does meanwhile is the policy.
 */

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "eal_harness.h"

#define VEC_LOAD SIRQ_NR_KERNEL_VECTORS
#define LOAD_WORK_US 20			/* per handler run */
#define WARMUP_MS 100			/* sirqd and dispatcher both run */
#define WARMUP_MAX_MS 5000		/* ... or until sirqd has run */
#define STARVE_MS 400			/* > 100 ms overload window, x4 */
#define HOG_PRIORITY 1			/* SCHED_FIFO: above sirqd's class */
#define LOST_WAKEUP_ROUNDS 20000

static void
endless_work(struct sirq_cpu *cpu, void *arg)
{
	uint64_t end = rte_get_tsc_cycles() +
		rte_get_tsc_hz() / 1000000 * LOAD_WORK_US;

	(void)arg;
	while (rte_get_tsc_cycles() < end)
		;
	sirq_raise_irqoff(cpu, VEC_LOAD);
}

static struct sirq_lcore *
starvable_lcore(enum sirq_policy_id policy)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = policy;
	conf.worker_cpus = "0";
	/*
	 * A hog preempting sirqd inside a pass gets it lent SCHED_FIFO
	 * above the hog, to finish the pass and let go of the lock (an
	 * application thread is SCHED_OTHER, below any lent priority).
	 */
	conf.worker_boost_priority = HOG_PRIORITY + 1;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_register(sirq_lcore_cpu(lc), VEC_LOAD, endless_work,
				NULL, "LOAD") == 0);
	return lc;
}

/* Keep CPU 0 for @ms at SCHED_FIFO: sirqd, pinned there, cannot run. */
static void
starve_cpu0(unsigned int ms)
{
	struct sched_param fifo = { .sched_priority = HOG_PRIORITY };
	struct sched_param other = { .sched_priority = 0 };
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ULL;

	cr_assert(pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) == 0,
		  "SCHED_FIFO needs root");
	while (now_ns() < end)
		;
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
}

struct starve_result {
	struct sirq_stats before;	/* when the starvation began */
	struct sirq_stats after;	/* when it ended */
	struct sirq_lcore_stats lcore;	/* at the end */
};

static uint64_t
inline_runs(const struct sirq_stats *st)
{
	return st->runs[VEC_LOAD][SIRQ_CTX_INLINE];
}

static uint64_t
worker_runs(const struct sirq_stats *st)
{
	return st->runs[VEC_LOAD][SIRQ_CTX_WORKER];
}

static void
run_starvation(enum sirq_policy_id policy, struct starve_result *r)
{
	struct sirq_lcore *lc = starvable_lcore(policy);
	struct sirq_cpu *cpu = sirq_lcore_cpu(lc);
	uint64_t end;

	dispatcher_launch(lc);
	cr_assert(sirq_raise(cpu, VEC_LOAD) == 0);
	/* Both running: WARMUP_MS, and longer if sirqd has not run yet. */
	usleep(WARMUP_MS * 1000);
	end = now_ns() + WARMUP_MAX_MS * 1000000ULL;
	for (;;) {
		sirq_stats_get(cpu, &r->before);
		if (worker_runs(&r->before) > 0 || now_ns() >= end)
			break;
		usleep(1000);
	}
	starve_cpu0(STARVE_MS);
	sirq_stats_get(cpu, &r->after);
	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, &r->lcore);
	sirq_lcore_free(lc);
}

Test(lcore_threads, ksoftirqd_leaves_a_starved_worker_its_work, .timeout = 30)
{
	struct starve_result r;

	run_starvation(SIRQ_POLICY_KSOFTIRQD, &r);
	cr_expect_gt(worker_runs(&r.before), 0, "sirqd took over");
	cr_expect_eq(inline_runs(&r.after), inline_runs(&r.before),
		     "nothing ran inline while sirqd was starved");
	cr_expect_eq(r.after.window_overrides, 0);
	/* The policy waits for sirqd anyway: no loan hurries its pass. */
	cr_expect_eq(r.lcore.worker_pi_boosts, 0,
		     "priority lent though the dispatcher would defer");
}

Test(lcore_threads, kicinski_takes_the_work_back_after_the_window, .timeout = 30)
{
	struct starve_result r;

	run_starvation(SIRQ_POLICY_KICINSKI, &r);
	cr_expect_gt(worker_runs(&r.before), 0, "sirqd took over");
	cr_expect_gt(r.after.deferred_to_worker, 0, "the dispatcher deferred");
	cr_expect_gt(inline_runs(&r.after), inline_runs(&r.before),
		     "inline runs resumed while sirqd was starved");
	cr_expect_gt(r.after.window_overrides, r.before.window_overrides,
		     "after its window ended");
}

Test(lcore_threads, mainline_keeps_running_inline, .timeout = 30)
{
	struct starve_result r;

	run_starvation(SIRQ_POLICY_MAINLINE, &r);
	cr_expect_gt(r.after.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 0,
		     "inline passes left work for sirqd");
	cr_expect_gt(inline_runs(&r.after), inline_runs(&r.before));
	cr_expect_eq(r.after.deferred_to_worker, 0);
}

/*
 * Poll mode with no application slice: while sirqd has the work, the
 * dispatcher has nothing to do and sleeps (a tick at most, or until
 * sirqd goes idle) instead of spinning beside it, as the kernel's idle
 * task never competes with ksoftirqd.
 */
#define IDLE_DISPATCHER_RUN_MS 300

Test(lcore_threads, dispatcher_without_an_app_slice_sleeps_while_sirqd_works,
     .timeout = 30)
{
	struct sirq_lcore *lc = starvable_lcore(SIRQ_POLICY_KSOFTIRQD);
	struct sirq_lcore_stats ls;
	struct sirq_stats st;
	uint64_t start = now_ns(), ran_ms;

	dispatcher_launch(lc);
	cr_assert(sirq_raise(sirq_lcore_cpu(lc), VEC_LOAD) == 0);
	usleep(IDLE_DISPATCHER_RUN_MS * 1000);
	dispatcher_join(lc);
	/* The run as it was: the join can take a while with CPU 0 busy. */
	ran_ms = (now_ns() - start) / 1000000;
	sirq_lcore_stats_get(lc, &ls);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_expect_gt(worker_runs(&st), 0, "sirqd had the work");
	cr_expect_gt(ls.poll_waits, 0, "the dispatcher slept");
	/*
	 * ksoftirqd leaves the work to sirqd whatever the time: every look
	 * that finds the work deferred or sirqd holding the lock is followed
	 * by a wait to the next scheduler tick (250 Hz), where a spin makes
	 * millions of them and a look every millisecond 300. (Looks that find
	 * nothing pending are poll mode's own spin; with CPU 0 shared, there
	 * are many of them between sirqd's runs, and they are not counted.)
	 */
	cr_expect_leq(st.deferred_to_worker + st.lock_busy,
		      2 * ran_ms * 250 / 1000 + 10,
		      "%lu deferred or busy looks, %lu waits in %lu ms",
		      (unsigned long)(st.deferred_to_worker + st.lock_busy),
		      (unsigned long)ls.poll_waits, (unsigned long)ran_ms);
	sirq_lcore_free(lc);
}

Test(lcore_threads, deferred_runs_nothing_on_the_dispatcher, .timeout = 30)
{
	struct starve_result r;

	run_starvation(SIRQ_POLICY_DEFERRED, &r);
	cr_expect_gt(worker_runs(&r.after), 0);
	cr_expect_eq(inline_runs(&r.after), 0);
}

/*
 * Every round needs a wake-up of an idle sirqd (deferred: it alone runs
 * handlers): one lost wake-up leaves the round waiting forever, and the
 * test's timeout fails it.
 */
static uint64_t rounds_done;

static void
count_round(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	__atomic_fetch_add(&rounds_done, 1, __ATOMIC_RELEASE);
}

Test(lcore_threads, no_wakeup_is_lost, .timeout = 120)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	uint64_t i;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_DEFERRED;
	conf.worker_cpus = "0";
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_register(sirq_lcore_cpu(lc), VEC_LOAD, count_round,
				NULL, "ROUND") == 0);
	dispatcher_launch(lc);
	for (i = 1; i <= LOST_WAKEUP_ROUNDS; i++) {
		/* Raise only once sirqd has gone (or is going) to sleep. */
		while (sirq_worker_state(sirq_lcore_cpu(lc)) != SIRQ_WORKER_IDLE)
			sched_yield();
		cr_assert(sirq_raise(sirq_lcore_cpu(lc), VEC_LOAD) == 0);
		while (__atomic_load_n(&rounds_done, __ATOMIC_ACQUIRE) < i)
			sched_yield();
	}
	dispatcher_join(lc);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_expect_eq(st.runs[VEC_LOAD][SIRQ_CTX_WORKER], LOST_WAKEUP_ROUNDS);
	cr_expect_gt(st.wakeups[SIRQ_WAKE_HANDOFF], 0);
	sirq_lcore_free(lc);
}

/* The lcore id the handler ran with, from sirqd under deferred. */
static unsigned int handler_lcore_id = RTE_MAX_LCORE;

static void
record_lcore_id(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	__atomic_store_n(&handler_lcore_id, rte_lcore_id(), __ATOMIC_RELEASE);
}

static unsigned int
worker_lcore_id(bool worker_register)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	unsigned int id;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_DEFERRED;
	conf.worker_register = worker_register;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_register(sirq_lcore_cpu(lc), VEC_LOAD, record_lcore_id,
				NULL, "ID") == 0);
	dispatcher_launch(lc);
	cr_assert(sirq_raise(sirq_lcore_cpu(lc), VEC_LOAD) == 0);
	while ((id = __atomic_load_n(&handler_lcore_id, __ATOMIC_ACQUIRE)) ==
	       RTE_MAX_LCORE)
		sched_yield();
	dispatcher_join(lc);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_expect_eq(st.runs[VEC_LOAD][SIRQ_CTX_WORKER], 1, "ran in sirqd");
	sirq_lcore_free(lc);
	return id;
}

Test(lcore_threads, worker_runs_handlers_as_the_lcore_it_serves, .timeout = 30)
{
	cr_expect_eq(worker_lcore_id(false), TEST_LCORE);
	cr_expect_eq(rte_lcore_count(), 2, "no lcore registered for sirqd");
}

Test(lcore_threads, deprecated_worker_register_changes_nothing, .timeout = 30)
{
	cr_expect_eq(worker_lcore_id(true), TEST_LCORE);
	cr_expect_eq(rte_lcore_count(), 2, "no lcore registered for sirqd");
}
