/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The DPDK binding's public functions under misuse: NULL, out-of-range
 * and wrong-state arguments get a negative errno (or NULL with rte_errno
 * and errno set, for the constructor), never a crash; the vectors the
 * binding runs are not the application's to replace.
 */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "eal_harness.h"


static void
never_called(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	cr_assert_fail("handler called");
}

Test(lcore_misuse, create_before_eal_init_fails_with_enodev)
{
	struct sirq_lcore_conf conf;

	sirq_lcore_conf_default(&conf);
	errno = 0;
	cr_assert_null(sirq_lcore_create(0, &conf));
	cr_expect_eq(rte_errno, ENODEV);
	cr_expect_eq(errno, ENODEV, "errno %d", errno);
}

Test(lcore_misuse, create_sets_rte_errno_and_errno_for_each_bad_argument)
{
	struct sirq_lcore_conf conf;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	errno = 0;
	cr_expect_null(sirq_lcore_create(TEST_LCORE, NULL));
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_null(sirq_lcore_create(RTE_MAX_LCORE, &conf));
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(rte_errno, EINVAL);
	conf.napi_weight = 0;
	errno = 0;
	cr_expect_null(sirq_lcore_create(TEST_LCORE, &conf));
	cr_expect_eq(errno, EINVAL);
	sirq_lcore_conf_default(&conf);
	conf.params.max_restart = 0;
	cr_expect_null(sirq_lcore_create(TEST_LCORE, &conf));
	conf.params.max_restart = 1;
	conf.mode = SIRQ_MODE_MAX;
	cr_expect_null(sirq_lcore_create(TEST_LCORE, &conf));
}

Test(lcore_misuse, every_function_refuses_a_null_lcore)
{
	struct sirq_lcore_params p;
	struct sirq_lcore_stats ls;
	struct sirq_napi_params np = { 0 };
	struct sirq_napi_info info;
	struct sirq_tx_tracker t;
	struct rte_mbuf *m = NULL;

	eal_start(NULL);
	sirq_lcore_conf_default(NULL);
	cr_expect_eq(sirq_lcore_add_rx_queue(NULL, 0, 0, rx_free_all, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_add_tx_queue(NULL, 0, 0), -EINVAL);
	cr_expect_eq(sirq_tx(NULL, 0, m), -EINVAL);
	cr_expect_eq(sirq_tx_burst(NULL, 0, &m, 1), -EINVAL);
	cr_expect_eq(sirq_tx_tracked(NULL, 0, m, &t), -EINVAL);
	cr_expect_null(sirq_lcore_cpu(NULL));
	cr_expect_eq(sirq_lcore_id(NULL), RTE_MAX_LCORE);
	cr_expect_eq(sirq_lcore_main(NULL), -EINVAL);
	sirq_lcore_stop(NULL);
	memset(&ls, 0xff, sizeof(ls));
	sirq_lcore_stats_get(NULL, &ls);
	cr_expect_eq(ls.iterations, 0);
	sirq_lcore_free(NULL);
	cr_expect_eq(sirq_lcore_get_params(NULL, &p), -EINVAL);
	cr_expect_eq(sirq_lcore_set_params(NULL, &p), -EINVAL);
	cr_expect_eq(sirq_napi_count(NULL), 0);
	cr_expect_eq(sirq_napi_get(NULL, 0, &info), -EINVAL);
	cr_expect_eq(sirq_napi_set(NULL, 0, &np), -EINVAL);
	cr_expect_eq(sirq_napi_busy_poll(NULL, 0, 8, false, 0), -EINVAL);
	cr_expect_eq(sirq_napi_suspend_irqs(NULL, 0), -EINVAL);
	cr_expect_eq(sirq_napi_resume_irqs(NULL, 0), -EINVAL);
	cr_expect_eq(sirq_napi_params_check(NULL), -EINVAL);
}

Test(lcore_misuse, out_of_range_and_wrong_state_arguments_are_refused)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_lcore_params p;
	struct sirq_lcore_conf conf;
	struct sirq_napi_info info;
	struct sirq_napi_params np = { 0 };
	struct sirq_lcore *lc;
	struct sirq_cpu *cpu;
	struct rte_mbuf *m;
	int txq;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert_not_null(lc);
	cpu = sirq_lcore_cpu(lc);

	/* Queues that do not exist, and a NULL Rx function. */
	cr_expect_eq(sirq_lcore_add_rx_queue(lc, 0, 0, NULL, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_add_rx_queue(lc, 0, 1, rx_free_all, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_add_rx_queue(lc, 9, 0, rx_free_all, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_add_tx_queue(lc, 0, 1), -EINVAL);
	cr_expect_eq(sirq_lcore_add_tx_queue(lc, 9, 0), -EINVAL);
	cr_assert_eq(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all, NULL), 0);
	txq = sirq_lcore_add_tx_queue(lc, 0, 0);
	cr_assert_geq(txq, 0);

	/* What the PMD gives: a port or queue that does not exist. */
	cr_expect_eq(sirq_rx_queue_work(9, 0), -EINVAL);
	cr_expect_eq(sirq_rx_queue_work(0, 1), -EINVAL);
	cr_expect_eq(sirq_rx_queue_work(RTE_MAX_ETHPORTS, 0), -EINVAL);
	cr_expect_eq(sirq_tx_queue_cleanup(9, 0), -EINVAL);
	cr_expect_eq(sirq_tx_queue_cleanup(0, 1), -EINVAL);
	cr_expect_str_eq(sirq_rx_work_name(-EINVAL), "?");
	cr_expect_str_eq(sirq_rx_work_name(SIRQ_RX_WORK_FETCH + 1), "?");
	/* net_null has neither: the fallbacks. */
	cr_expect_eq(sirq_rx_queue_work(0, 0), SIRQ_RX_WORK_FETCH);
	cr_expect_str_eq(sirq_rx_work_name(SIRQ_RX_WORK_FETCH), "fetch");
	cr_expect_eq(sirq_tx_queue_cleanup(0, 0), 0);

	/* TX: a bad index, NULL packets, and outside the lcore's context. */
	m = rte_pktmbuf_alloc(test_pool());
	cr_assert_not_null(m);
	cr_expect_eq(sirq_tx(lc, 5, m), -EINVAL);
	cr_expect_eq(sirq_tx(lc, (unsigned int)txq, NULL), -EINVAL);
	cr_expect_eq(sirq_tx_burst(lc, (unsigned int)txq, NULL, 1), -EINVAL);
	cr_expect_eq(sirq_tx(lc, (unsigned int)txq, m), -EPERM);
	rte_pktmbuf_free(m);

	/* NAPI contexts that do not exist, and bad settings. */
	cr_expect_eq(sirq_napi_count(lc), 1);
	cr_expect_eq(sirq_napi_get(lc, 1, &info), -EINVAL);
	cr_expect_eq(sirq_napi_get(lc, 0, NULL), -EINVAL);
	cr_expect_eq(sirq_napi_set(lc, 1, &np), -EINVAL);
	cr_expect_eq(sirq_napi_set(lc, 0, NULL), -EINVAL);
	np.defer_hard_irqs = 2;		/* a deferral without its timeout */
	cr_expect_eq(sirq_napi_set(lc, 0, &np), -EINVAL);
	cr_expect_eq(sirq_napi_busy_poll(lc, 0, 0, false, 0), -EINVAL);

	/* The binding's vectors are its own; the application gets free ones. */
	cr_expect_eq(sirq_register(cpu, SIRQ_TIMER, never_called, NULL, NULL), -EBUSY);
	cr_expect_eq(sirq_register(cpu, SIRQ_NET_RX, never_called, NULL, NULL), -EBUSY);
	cr_expect_eq(sirq_register(cpu, SIRQ_NET_TX, never_called, NULL, NULL), -EBUSY);
	cr_expect_geq(sirq_vector_alloc(cpu, never_called, NULL, "APP"),
		      (int)SIRQ_NR_KERNEL_VECTORS);

	/* The control plane refuses bad values and changes nothing. */
	cr_assert_eq(sirq_lcore_get_params(lc, &p), 0);
	cr_expect_eq(sirq_lcore_get_params(lc, NULL), -EINVAL);
	cr_expect_eq(sirq_lcore_set_params(lc, NULL), -EINVAL);
	p.napi_weight = 0;
	cr_expect_eq(sirq_lcore_set_params(lc, &p), -EINVAL);
	p.napi_weight = 64;
	p.engine.policy = SIRQ_POLICY_MAX;
	cr_expect_eq(sirq_lcore_set_params(lc, &p), -EINVAL);
	p.engine.policy = SIRQ_POLICY_MAINLINE;
	p.worker_boost_priority = 1000;
	cr_expect_eq(sirq_lcore_set_params(lc, &p), -EINVAL);
	cr_assert_eq(sirq_lcore_get_params(lc, &p), 0);
	cr_expect_eq(p.engine.policy, conf.params.policy);
	cr_expect_eq(p.napi_weight, conf.napi_weight);

	/* Another lcore's main, and a second lcore on the same id. */
	cr_expect_eq(sirq_lcore_main(lc), -EINVAL, "main on the wrong lcore");
	errno = 0;
	cr_expect_null(sirq_lcore_create(TEST_LCORE, &conf));
	cr_expect_eq(errno, EEXIST);

	/* Bottom halves: an enable without a disable. */
	cr_expect_eq(sirq_bh_enable(cpu), -EPERM);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}
