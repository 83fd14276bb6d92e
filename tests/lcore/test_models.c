/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The execution models on real threads: rt's ktimers/N and the
 * pushdown's sirq-<vector>/N, started with the dispatcher and with a
 * change of model, named as ps shows them, in their scheduling class;
 * a safe vector running while an unsafe one holds the BH lock (pushdown)
 * and never then (pushdown-locked); a flood stopped under pushdown with
 * every mbuf back.
 */

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_timer.h>

#include "eal_harness.h"

#define VEC_A SIRQ_NR_KERNEL_VECTORS		/* unsafe: holds the lock */
#define VEC_B (SIRQ_NR_KERNEL_VECTORS + 1)	/* safe under pushdown */
#define HOLD_MS 300
#define WAIT_MS 5000

/* Is a thread of this process named @name? Its tid in @tid if so. */
static bool
thread_named(const char *name, pid_t *tid)
{
	pid_t t = thread_tid_named(name);

	if (t != 0 && tid != NULL)
		*tid = t;
	return t != 0;
}

/* Wait until thread @name exists (@want) or is gone (!@want). */
static bool
wait_thread(const char *name, bool want)
{
	for (int i = 0; i < WAIT_MS / 10; i++) {
		if (thread_named(name, NULL) == want)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

static struct sirq_lcore *
lcore_with(enum sirq_policy_id policy)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = policy;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	return lc;
}

static void
set_policy(struct sirq_lcore *lc, enum sirq_policy_id policy)
{
	struct sirq_lcore_params p;

	cr_assert_eq(sirq_lcore_get_params(lc, &p), 0);
	p.engine.policy = policy;
	cr_assert_eq(sirq_lcore_set_params(lc, &p), 0);
}

/* The TIMER handler's thread, from an rte_timer callback. */
static char timer_thread[16];
static int timer_class = -1, timer_prio = -1;
static uint64_t timer_fired;

static void
record_timer_thread(struct rte_timer *t, void *arg)
{
	struct sched_param sp;

	(void)t;
	(void)arg;
	pthread_getname_np(pthread_self(), timer_thread, sizeof(timer_thread));
	pthread_getschedparam(pthread_self(), &timer_class, &sp);
	timer_prio = sp.sched_priority;
	__atomic_store_n(&timer_fired, 1, __ATOMIC_RELEASE);
}

/*
 * PREEMPT_RT since 6.13 (49a17639508c): TIMER runs in ktimers/N at the
 * lowest SCHED_FIFO priority, not in ksoftirqd nor at irq exit.
 */
Test(lcore_models, rt_timer_softirq_runs_in_ktimers_at_fifo_1, .timeout = 60)
{
	struct sirq_lcore *lc = lcore_with(SIRQ_POLICY_RT);
	struct rte_timer tim;

	dispatcher_launch(lc);
	cr_assert(wait_thread("ktimers/1", true), "no ktimers/1 under rt");
	cr_expect(!thread_named("sirq-timer/1", NULL));
	rte_timer_init(&tim);
	cr_assert_eq(rte_timer_reset(&tim, rte_get_timer_hz() / 1000, SINGLE,
				     TEST_LCORE, record_timer_thread, NULL), 0);
	cr_assert(wait_for(&timer_fired, 1, WAIT_MS), "the timer never fired");
	cr_expect_str_eq(timer_thread, "ktimers/1");
	cr_expect_eq(timer_class, SCHED_FIFO, "class %d", timer_class);
	cr_expect_eq(timer_prio, 1);
	dispatcher_join(lc);
	cr_expect(wait_thread("ktimers/1", false), "ktimers/1 outlived its lcore");
	sirq_lcore_free(lc);
}

/*
 * The model is the lcore's parameter: its threads come and go with it,
 * from the control plane, while the lcore runs.
 */
Test(lcore_models, threads_follow_a_change_of_model_at_run_time, .timeout = 60)
{
	struct sirq_lcore *lc = lcore_with(SIRQ_POLICY_KICINSKI);

	dispatcher_launch(lc);
	usleep(50 * 1000);
	cr_expect(!thread_named("ktimers/1", NULL));
	cr_expect(!thread_named("sirq-net_rx/1", NULL));

	set_policy(lc, SIRQ_POLICY_RT);
	cr_expect(thread_named("ktimers/1", NULL), "set_params returned before ktimers/1 started");

	set_policy(lc, SIRQ_POLICY_PUSHDOWN);
	cr_expect(thread_named("sirq-timer/1", NULL));
	cr_expect(thread_named("sirq-net_rx/1", NULL));
	cr_expect(thread_named("sirq-net_tx/1", NULL));
	cr_expect(wait_thread("ktimers/1", false), "rt's ktimers/1 kept under pushdown");

	set_policy(lc, SIRQ_POLICY_MAINLINE);
	cr_expect(wait_thread("sirq-net_rx/1", false));
	cr_expect(wait_thread("sirq-timer/1", false));
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

/* The class of a thread, settable per vector; bad values named and refused. */
Test(lcore_models, thread_sched_sets_the_class_of_a_running_thread, .timeout = 60)
{
	struct sirq_lcore *lc = lcore_with(SIRQ_POLICY_PUSHDOWN);
	struct sched_param sp;
	pid_t tid = 0;

	cr_expect_eq(sirq_lcore_thread_sched(lc, SIRQ_MAX_VECTORS, SCHED_OTHER, 0), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_sched(lc, SIRQ_NET_RX, 42, 0), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_sched(lc, SIRQ_NET_RX, SCHED_FIFO, 0), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_sched(lc, SIRQ_NET_RX, SCHED_FIFO, 100), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_sched(lc, SIRQ_NET_RX, SCHED_OTHER, 5), -EINVAL);
	cr_expect_eq(sirq_lcore_thread_sched(NULL, SIRQ_NET_RX, SCHED_OTHER, 0), -EINVAL);
	/* Before the start: taken at the thread's start. */
	cr_assert_eq(sirq_lcore_thread_sched(lc, SIRQ_TIMER, SCHED_RR, 2), 0);

	dispatcher_launch(lc);
	cr_assert(wait_thread("sirq-timer/1", true));
	cr_assert(thread_named("sirq-timer/1", &tid));
	cr_expect_eq(sched_getscheduler(tid), SCHED_RR);
	cr_assert_eq(sched_getparam(tid, &sp), 0);
	cr_expect_eq(sp.sched_priority, 2);

	cr_assert(thread_named("sirq-net_rx/1", &tid));
	cr_expect_eq(sched_getscheduler(tid), SCHED_OTHER);
	cr_assert_eq(sirq_lcore_thread_sched(lc, SIRQ_NET_RX, SCHED_FIFO, 3), 0);
	cr_expect_eq(sched_getscheduler(tid), SCHED_FIFO);
	cr_assert_eq(sched_getparam(tid, &sp), 0);
	cr_expect_eq(sp.sched_priority, 3);
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

/*
 * Weisbecker's pushdown: a vector proven safe (SIRQ_VEC_BH_SAFE, the
 * kernel's local_lock_nested_bh()) runs in its own thread while another
 * vector's thread holds the BH lock; with the lock kept for everyone
 * (pushdown-locked, CONFIG_PREEMPT_RT_NEEDS_BH_LOCK) it waits for it.
 */
static struct lock_hold hold_a = { .ms = HOLD_MS };
static uint64_t b_runs, b_during_a;


static void
safe_work(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	if (__atomic_load_n(&hold_a.holding, __ATOMIC_SEQ_CST))
		__atomic_fetch_add(&b_during_a, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&b_runs, 1, __ATOMIC_RELEASE);
}

static void
run_a_then_b(enum sirq_policy_id policy)
{
	struct sirq_lcore *lc = lcore_with(policy);
	struct sirq_cpu *cpu = sirq_lcore_cpu(lc);

	cr_assert_eq(sirq_register(cpu, VEC_A, hold_lock, &hold_a, "a"), 0);
	cr_assert_eq(sirq_register_flags(cpu, VEC_B, safe_work, NULL, "b",
					 SIRQ_VEC_BH_SAFE), 0);
	dispatcher_launch(lc);
	cr_assert(wait_thread("sirq-a/1", true), "no thread for vector a");
	cr_assert(wait_thread("sirq-b/1", true), "no thread for vector b");
	sirq_raise(cpu, VEC_A);
	for (int i = 0; i < WAIT_MS && !__atomic_load_n(&hold_a.holding, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	cr_assert(__atomic_load_n(&hold_a.holding, __ATOMIC_SEQ_CST), "a never ran");
	/* B raised while A holds the lock, many times. */
	while (__atomic_load_n(&hold_a.holding, __ATOMIC_SEQ_CST)) {
		sirq_raise(cpu, VEC_B);
		usleep(2000);
	}
	cr_assert(wait_for(&hold_a.runs, 1, WAIT_MS));
	sirq_raise(cpu, VEC_B);
	cr_assert(wait_for(&b_runs, 1, WAIT_MS), "b never ran");
	dispatcher_join(lc);
	sirq_lcore_free(lc);
}

Test(lcore_models, pushdown_safe_vector_runs_while_another_holds_the_bh_lock,
     .timeout = 60)
{
	run_a_then_b(SIRQ_POLICY_PUSHDOWN);
	cr_expect_gt(b_during_a, 0,
		     "b ran %lu times, never while a held the BH lock",
		     (unsigned long)b_runs);
}

Test(lcore_models, pushdown_locked_safe_vector_waits_for_the_bh_lock,
     .timeout = 60)
{
	run_a_then_b(SIRQ_POLICY_PUSHDOWN_LOCKED);
	cr_expect_eq(b_during_a, 0, "b ran %lu times while a held the BH lock",
		     (unsigned long)b_during_a);
}

/*
 * A flood on net_null under pushdown: NET_RX in sirq-net_rx/1, counted
 * as the worker's context, and a stop that leaves no mbuf behind.
 */
static uint64_t received;

Test(lcore_models, pushdown_flood_runs_net_rx_in_its_thread_and_stops_clean,
     .timeout = 60)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct sirq_stats st;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_PUSHDOWN;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert_eq(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all, &received), 0);
	dispatcher_launch(lc);
	cr_assert(wait_thread("sirq-net_rx/1", true));
	cr_assert(wait_for(&received, 100000, WAIT_MS), "the flood never came");
	usleep(200 * 1000);
	dispatcher_join(lc);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER],
		     st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE],
		     "NET_RX ran inline %lu times, in its thread %lu",
		     (unsigned long)st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE],
		     (unsigned long)st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER]);
	cr_expect(wait_thread("sirq-net_rx/1", false));
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "%u mbufs not back", pool_in_use());
}
