/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * sirqd is the lcore's softirq context: it runs handlers as the lcore
 * (rte_lcore_id(), so the lcore's mempool cache and rte_timer list), and
 * only the execution lock keeps it and the dispatcher apart. These tests
 * hand a flood back and forth between the two and count every mbuf, run
 * a timer in sirqd, and check that a per-lcore operation without the
 * lock stops the process instead of corrupting the mempool cache.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_timer.h>

#include "eal_harness.h"
#include "sirq.h"
#include "sirq_lcore_internal.h"

static const char *const null_vdev[] = { "net_null0", NULL };

/*
 * A flag in every mbuf, set while the test owns it. Handlers keep the
 * last HOLD_MAX packets they received across runs, on both threads, so
 * an mbuf handed out again while it is held (two threads in one mempool
 * cache at once) finds its flag set.
 */
static int owned_off = -1;

#define HOLD_MAX 1024

struct flood {
	int txq;
	uint64_t received;
	uint64_t handed_out_twice;
	uint64_t off_lcore;		/* handler saw another rte_lcore_id() */
	uint64_t switches;		/* runs on another thread than the last */
	pthread_t last;
	unsigned int held;
	unsigned int hold_head;
	struct rte_mbuf *hold[HOLD_MAX];
};

static inline uint8_t *
owned(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, owned_off, uint8_t *);
}

/* Let go of the oldest held packet: half to the pool, half to the NIC. */
static void
release_oldest(struct sirq_lcore *lc, struct flood *f)
{
	struct rte_mbuf *m = f->hold[f->hold_head];

	f->hold_head = (f->hold_head + 1) % HOLD_MAX;
	f->held--;
	*owned(m) = 0;
	if (lc == NULL || (f->received & 1) != 0)
		rte_pktmbuf_free(m);
	else
		cr_assert(sirq_tx(lc, (unsigned int)f->txq, m) == 0);
}

static void
flood_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	 struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct flood *f = arg;
	uint16_t i;

	(void)port;
	(void)queue;
	if (f == NULL) {
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	if (rte_lcore_id() != TEST_LCORE)
		f->off_lcore++;
	if (!pthread_equal(pthread_self(), f->last)) {
		f->switches++;
		f->last = pthread_self();
	}
	for (i = 0; i < n; i++) {
		if (*owned(pkts[i]) != 0)
			f->handed_out_twice++;
		*owned(pkts[i]) = 1;
		if (f->held == HOLD_MAX)
			release_oldest(lc, f);
		f->hold[(f->hold_head + f->held) % HOLD_MAX] = pkts[i];
		f->held++;
		__atomic_store_n(&f->received, f->received + 1,
				 __ATOMIC_RELEASE);
	}
}

/*
 * A second vector that takes mbufs from the lcore's cache and gives them
 * back, raising itself again: NET_RX and it are pending together all the
 * time, so without the execution lock the dispatcher would run one while
 * sirqd runs the other, both in the same mempool cache.
 */
#define VEC_CHURN SIRQ_NR_KERNEL_VECTORS
#define CHURN_BURST 32
#define CHURN_ROUNDS 4

static void
churn(struct sirq_cpu *cpu, void *arg)
{
	struct flood *f = arg;
	struct rte_mbuf *m[CHURN_BURST];
	unsigned int i, round;

	for (round = 0; round < CHURN_ROUNDS; round++) {
		if (rte_pktmbuf_alloc_bulk(test_pool(), m, CHURN_BURST) != 0)
			break;
		for (i = 0; i < CHURN_BURST; i++) {
			if (*owned(m[i]) != 0)
				f->handed_out_twice++;
			*owned(m[i]) = 1;
		}
		for (i = 0; i < CHURN_BURST; i++)
			*owned(m[i]) = 0;
		rte_pktmbuf_free_bulk(m, CHURN_BURST);
	}
	sirq_raise_irqoff(cpu, VEC_CHURN);
}

/* The dispatcher's application slice: it polls on instead of sleeping. */
static void
app_slice(struct sirq_lcore *lc, void *arg)
{
	(void)lc;
	__atomic_fetch_add((uint64_t *)arg, 1, __ATOMIC_RELAXED);
}

static void
register_owned_flag(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "sirq_test_owned",
		.size = sizeof(uint8_t),
		.align = __alignof__(uint8_t),
	};

	owned_off = rte_mbuf_dynfield_register(&desc);
	cr_assert(owned_off >= 0, "dynfield: %s", strerror(rte_errno));
}

Test(lcore_exclusive, flood_handed_back_and_forth_loses_and_doubles_no_mbuf,
     .timeout = 90)
{
	struct sirq_lcore_conf conf;
	struct flood f = { 0 };
	struct sirq_lcore *lc;
	struct sirq_stats st;
	uint64_t end, flips = 0, slices = 0;

	eal_start(null_vdev);
	register_owned_flag();
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_MAINLINE;
	/* sirqd on the other CPU: the two really run at once. */
	conf.worker_cpus = "0";
	conf.app_fn = app_slice;
	conf.app_arg = &slices;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, flood_rx, &f) == 0);
	f.txq = sirq_lcore_add_tx_queue(lc, 0, 0);
	cr_assert(f.txq >= 0);
	cr_assert(sirq_register(sirq_lcore_cpu(lc), VEC_CHURN, churn, &f,
				"CHURN") == 0);

	/*
	 * need_resched on and off every millisecond: the dispatcher's
	 * passes end on it and wake sirqd, and under mainline the
	 * dispatcher, which has an application slice to run and so polls
	 * on, keeps running passes too: the two threads take the lock from
	 * each other all the time, each with the lcore's mempool cache.
	 */
	dispatcher_launch(lc);
	cr_assert(sirq_raise(sirq_lcore_cpu(lc), VEC_CHURN) == 0);
	end = now_ns() + 2000000000ULL;
	while (now_ns() < end) {
		sirq_set_need_resched(sirq_lcore_cpu(lc), (flips++ & 1) != 0);
		usleep(1000);
	}
	sirq_set_need_resched(sirq_lcore_cpu(lc), false);
	dispatcher_join(lc);
	while (f.held != 0)
		release_oldest(NULL, &f);

	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 0, "dispatcher ran NET_RX");
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0, "sirqd ran NET_RX");
	cr_expect_gt(f.switches, 100, "NET_RX changed threads %lu times",
		     (unsigned long)f.switches);
	cr_log_info("%lu packets, NET_RX changed threads %lu times",
		    (unsigned long)f.received, (unsigned long)f.switches);
	cr_expect_gt(f.received, 100000, "%lu packets", (unsigned long)f.received);
	cr_expect_eq(f.handed_out_twice, 0, "an mbuf was handed out twice");
	cr_expect_eq(f.off_lcore, 0, "a handler ran with another lcore id");
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "%u mbufs not back in the pool",
		     pool_in_use());
}

/* TIMER: the lcore's rte_timer list, run by sirqd as the lcore. */

struct timer_seen {
	uint64_t fired;
	unsigned int lcore;
	bool in_worker;
};

static struct sirq_lcore *timer_lc;

static void
on_timer(struct rte_timer *t, void *arg)
{
	struct timer_seen *s = arg;
	struct sirq_stats st;

	(void)t;
	sirq_stats_get(sirq_lcore_cpu(timer_lc), &st);
	s->lcore = rte_lcore_id();
	s->in_worker = st.runs[SIRQ_TIMER][SIRQ_CTX_INLINE] == 0;
	__atomic_store_n(&s->fired, 1, __ATOMIC_RELEASE);
}

Test(lcore_exclusive, deferred_policy_runs_the_lcores_timers_in_sirqd,
     .timeout = 60)
{
	struct sirq_lcore_conf conf;
	struct timer_seen seen = { .lcore = RTE_MAX_LCORE };
	struct rte_timer tim;
	struct sirq_stats st;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_DEFERRED;
	timer_lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(timer_lc != NULL);
	rte_timer_init(&tim);
	cr_assert(rte_timer_reset(&tim, rte_get_timer_hz() / 100, SINGLE,
				  TEST_LCORE, on_timer, &seen) == 0);
	dispatcher_launch(timer_lc);
	cr_assert(wait_for(&seen.fired, 1, 10000), "the timer never fired");
	dispatcher_join(timer_lc);

	sirq_stats_get(sirq_lcore_cpu(timer_lc), &st);
	cr_expect_eq(seen.lcore, TEST_LCORE, "callback on lcore %u", seen.lcore);
	cr_expect(seen.in_worker, "TIMER ran on the dispatcher");
	cr_expect_gt(st.runs[SIRQ_TIMER][SIRQ_CTX_WORKER], 0);
	sirq_lcore_free(timer_lc);
}

/* The check: per-lcore state without the lock stops the process. */

static struct sirq_lcore *
idle_lcore(void)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(null_vdev);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, flood_rx, NULL) == 0);
	return lc;
}

Test(lcore_exclusive, net_rx_without_the_execution_lock_aborts,
     .signal = SIGABRT, .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore();

	sirq_net_rx_action(sirq_lcore_cpu(lc), &lc->rx);
	cr_assert_fail("NET_RX ran without the lock");
}

Test(lcore_exclusive, rx_fetch_without_the_execution_lock_aborts,
     .signal = SIGABRT, .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore();

	sirq_hardirq_rx_fetch(&lc->rx);
	cr_assert_fail("the fetch ran without the lock");
}

Test(lcore_exclusive, handler_of_an_lcore_on_another_lcore_aborts,
     .signal = SIGABRT, .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore();
	struct sirq_cpu *cpu = sirq_lcore_cpu(lc);

	/* The lock, but lcore 0's mempool cache and timer list. */
	sirq_bh_disable(cpu);
	sirq_net_rx_action(cpu, &lc->rx);
	cr_assert_fail("NET_RX of lcore %u ran on lcore %u", TEST_LCORE,
		       rte_lcore_id());
}

static int
net_rx_with_bh_off(void *arg)
{
	struct sirq_lcore *lc = arg;
	struct sirq_cpu *cpu = sirq_lcore_cpu(lc);

	sirq_bh_disable(cpu);
	sirq_net_rx_action(cpu, &lc->rx);	/* nothing scheduled: no poll */
	return sirq_bh_enable(cpu);
}

Test(lcore_exclusive, on_its_lcore_with_bottom_halves_off_the_same_call_runs,
     .timeout = 30)
{
	struct sirq_lcore *lc = idle_lcore();

	cr_assert(rte_eal_remote_launch(net_rx_with_bh_off, lc, TEST_LCORE) == 0);
	cr_expect_eq(rte_eal_wait_lcore(TEST_LCORE), 0);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0);
}

/* Another thread's bh_enable leaves the lcore's handlers to the lcore. */
static uint64_t timer_vector_runs;

static void
count_run(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	__atomic_fetch_add(&timer_vector_runs, 1, __ATOMIC_RELAXED);
}

Test(lcore_exclusive, bh_enable_on_another_lcore_leaves_the_work_to_its_own,
     .timeout = 30)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct sirq_cpu *cpu;
	struct sirq_stats st;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_MAINLINE;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cpu = sirq_lcore_cpu(lc);
	cr_assert(sirq_register(cpu, SIRQ_NR_KERNEL_VECTORS, count_run, NULL,
				"APP") == 0);

	sirq_bh_disable(cpu);
	sirq_raise(cpu, SIRQ_NR_KERNEL_VECTORS);
	cr_assert_eq(sirq_bh_enable(cpu), 0);
	cr_expect_eq(timer_vector_runs, 0, "ran on lcore %u", rte_lcore_id());
	cr_expect_neq(sirq_pending(cpu) & SIRQ_BIT(SIRQ_NR_KERNEL_VECTORS), 0);

	dispatcher_launch(lc);
	cr_expect(wait_for(&timer_vector_runs, 1, 10000), "never ran");
	dispatcher_join(lc);
	sirq_stats_get(cpu, &st);
	cr_expect_eq(st.runs[SIRQ_NR_KERNEL_VECTORS][SIRQ_CTX_INLINE] +
		     st.runs[SIRQ_NR_KERNEL_VECTORS][SIRQ_CTX_WORKER], 1,
		     "once, by the lcore's dispatcher or sirqd");
	sirq_lcore_free(lc);
}
