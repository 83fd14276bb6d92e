/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * RCU: with an rte_rcu_qsbr in the configuration, the dispatcher reports
 * a quiescent state every iteration and sirqd after every pass (and is
 * offline while asleep), so a grace period started by a writer ends while
 * they run, in both modes; and it does not end while a handler is still
 * inside its read-side section.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "eal_harness.h"

#define RCU_THREADS 2
#define ID_DISPATCHER 0
#define ID_WORKER 1
#define VEC_READER SIRQ_NR_KERNEL_VECTORS
#define GRACE_PERIODS 100

static struct rte_rcu_qsbr *
qsbr_create(void)
{
	size_t sz = rte_rcu_qsbr_get_memsize(RCU_THREADS);
	struct rte_rcu_qsbr *v = rte_zmalloc("qsbr", sz, RTE_CACHE_LINE_SIZE);

	cr_assert(v != NULL);
	cr_assert(rte_rcu_qsbr_init(v, RCU_THREADS) == 0);
	cr_assert(rte_rcu_qsbr_thread_register(v, ID_DISPATCHER) == 0);
	cr_assert(rte_rcu_qsbr_thread_register(v, ID_WORKER) == 0);
	return v;
}

static struct sirq_lcore *
rcu_lcore(struct rte_rcu_qsbr *v, enum sirq_mode mode)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	sirq_lcore_conf_default(&conf);
	conf.mode = mode;
	conf.qsbr = v;
	conf.qsbr_dispatcher_id = ID_DISPATCHER;
	conf.qsbr_worker_id = ID_WORKER;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	return lc;
}

static void
grace_periods_end(enum sirq_mode mode)
{
	struct rte_rcu_qsbr *v;
	struct sirq_lcore *lc;
	unsigned int i;

	eal_start(NULL);
	v = qsbr_create();
	/* The dispatcher reports from its first iteration on. */
	rte_rcu_qsbr_thread_online(v, ID_DISPATCHER);
	lc = rcu_lcore(v, mode);
	dispatcher_launch(lc);
	for (i = 0; i < GRACE_PERIODS; i++) {
		uint64_t t = rte_rcu_qsbr_start(v);

		cr_assert(rte_rcu_qsbr_check(v, t, true) == 1);
	}
	dispatcher_join(lc);
	sirq_lcore_free(lc);
	rte_free(v);
}

Test(lcore_rcu, grace_periods_end_in_poll_mode, .timeout = 30)
{
	grace_periods_end(SIRQ_MODE_POLL);
}

Test(lcore_rcu, grace_periods_end_in_irq_mode, .timeout = 30)
{
	grace_periods_end(SIRQ_MODE_IRQ);
}

/* A handler that stays in its read-side section until told to leave. */
static uint32_t reader_inside, reader_release;

static void
long_reader(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	__atomic_store_n(&reader_inside, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&reader_release, __ATOMIC_ACQUIRE))
		;
}

Test(lcore_rcu, grace_period_waits_for_a_running_handler, .timeout = 30)
{
	struct rte_rcu_qsbr *v;
	struct sirq_lcore *lc;
	uint64_t t;

	eal_start(NULL);
	v = qsbr_create();
	rte_rcu_qsbr_thread_online(v, ID_DISPATCHER);
	lc = rcu_lcore(v, SIRQ_MODE_POLL);
	cr_assert(sirq_register(sirq_lcore_cpu(lc), VEC_READER, long_reader,
				NULL, "READER") == 0);
	dispatcher_launch(lc);
	cr_assert(sirq_raise(sirq_lcore_cpu(lc), VEC_READER) == 0);
	while (!__atomic_load_n(&reader_inside, __ATOMIC_ACQUIRE))
		;
	t = rte_rcu_qsbr_start(v);
	usleep(20000);
	cr_expect(rte_rcu_qsbr_check(v, t, false) == 0,
		  "grace period ended inside a handler");
	__atomic_store_n(&reader_release, 1, __ATOMIC_RELEASE);
	cr_expect(rte_rcu_qsbr_check(v, t, true) == 1);
	dispatcher_join(lc);
	sirq_lcore_free(lc);
	rte_free(v);
}

/*
 * The dispatcher's id is online from the start of sirq_lcore_main() and
 * offline once it returns: a grace period started after the stop ends
 * without the application putting it offline (it hung there before).
 */
Test(lcore_rcu, a_grace_period_after_the_stop_ends, .timeout = 30)
{
	struct rte_rcu_qsbr *v;
	struct sirq_lcore *lc;

	eal_start(NULL);
	v = qsbr_create();
	lc = rcu_lcore(v, SIRQ_MODE_POLL);
	dispatcher_launch(lc);
	cr_assert(rte_rcu_qsbr_check(v, rte_rcu_qsbr_start(v), true) == 1);
	dispatcher_join(lc);
	cr_expect(rte_rcu_qsbr_check(v, rte_rcu_qsbr_start(v), false) == 1,
		  "a grace period waits for the stopped dispatcher");
	sirq_lcore_free(lc);
	rte_free(v);
}

/*
 * With conf.qsbr every thread that runs handlers reports: a NAPI thread
 * does not, so threaded NAPI is refused, at create and at napi-set.
 */
Test(lcore_rcu, threaded_napi_is_refused_with_qsbr, .timeout = 30)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_lcore_conf conf;
	struct sirq_napi_params p;
	struct rte_rcu_qsbr *v;
	struct sirq_lcore *lc;

	eal_start(vdevs);
	port_start(0, 1, false);
	v = qsbr_create();
	sirq_lcore_conf_default(&conf);
	conf.qsbr = v;
	conf.napi.threaded = SIRQ_NAPI_THREADED_ENABLED;
	cr_expect(sirq_lcore_create(TEST_LCORE, &conf) == NULL);
	cr_expect_eq(errno, EINVAL);

	lc = rcu_lcore(v, SIRQ_MODE_POLL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all, NULL) == 0);
	memset(&p, 0, sizeof(p));
	p.threaded = SIRQ_NAPI_THREADED_ENABLED;
	cr_expect_eq(sirq_napi_set(lc, 0, &p), -EOPNOTSUPP);
	p.threaded = SIRQ_NAPI_THREADED_DISABLED;
	cr_expect_eq(sirq_napi_set(lc, 0, &p), 0);
	sirq_lcore_free(lc);
	rte_free(v);
}
