/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Telemetry: dpdk-telemetry.py, pointed at this process's file prefix,
 * reads the /sirq/ commands while the dispatcher runs, and the numbers it
 * prints are the ones the library counts.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "eal_harness.h"

#define PACKETS 5000

static uint64_t received;

Test(lcore_telemetry, dpdk_telemetry_py_reads_the_counters, .timeout = 60)
{
	static char out[65536];
	struct rte_ring *rx, *tx;
	struct rte_mbuf *m[32];
	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats ls;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	char cmd[64];
	unsigned int sent = 0;
	int port;

	eal_start(NULL);
	rx = rte_ring_create("rx", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	tx = rte_ring_create("tx", 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	port = rte_eth_from_rings("rings", &rx, 1, &tx, 1, 0);
	cr_assert(port >= 0);
	port_start((uint16_t)port, 1, false);
	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, (uint16_t)port, 0, rx_free_all,
					  &received) == 0);
	cr_assert(sirq_telemetry_register() == 0);
	dispatcher_launch(lc);

	while (sent < PACKETS) {
		unsigned int n = RTE_MIN(32u, PACKETS - sent), i, done = 0;

		cr_assert(rte_pktmbuf_alloc_bulk(test_pool(), m, n) == 0);
		for (i = 0; i < n; i++)
			rte_pktmbuf_append(m[i], 60);
		while (done < n)
			done += rte_ring_enqueue_burst(rx, (void **)&m[done],
						       n - done, NULL);
		sent += n;
	}
	cr_assert(wait_for(&received, PACKETS, 10000));

	/* The dispatcher is still running: counters are read live. */
	snprintf(cmd, sizeof(cmd), "/sirq/stats,%d", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect_eq((uint64_t)json_i64(out, "rx_packets"), PACKETS, "%s", out);
	cr_expect_gt((uint64_t)json_i64(out, "iterations"), 0);

	telemetry("/sirq/softirqs", out, sizeof(out));
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_expect_eq((uint64_t)json_i64(out, "NET_RX"),
		     st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE] +
		     st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], "%s", out);

	snprintf(cmd, sizeof(cmd), "/sirq/latency,%d", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect_eq((uint64_t)json_i64(out, "samples"),
		     st.latency[SIRQ_NET_RX].samples, "%s", out);

	telemetry("/sirq/config", out, sizeof(out));
	cr_expect_eq((uint64_t)json_i64(out, "napi_weight"), SIRQ_NAPI_WEIGHT_DEFAULT);
	cr_expect(strstr(out, "\"policy\": \"kicinski\"") != NULL, "%s", out);

	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, &ls);
	cr_expect_eq(ls.rx_packets, PACKETS);
	sirq_lcore_free(lc);
}

/*
 * The control plane: /sirq/params_set changes the policy of a flooded
 * lcore from the telemetry thread, and the next pass obeys it: once
 * deferred is set, nothing runs inline any more and sirqd has it all.
 */
static uint64_t
net_rx_runs(struct sirq_lcore *lc, enum sirq_ctx ctx)
{
	struct sirq_stats st;

	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	return st.runs[SIRQ_NET_RX][ctx];
}

static uint64_t app_runs;

static void
count_run(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	__atomic_fetch_add((uint64_t *)arg, 1, __ATOMIC_RELEASE);
}

Test(lcore_telemetry, params_set_changes_the_policy_under_a_flood, .timeout = 60)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	static char out[65536];
	struct sirq_lcore_params p;
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	uint64_t inline_at_set, worker_at_set;
	char cmd[128];
	int vec;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_MAINLINE;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all, &received) == 0);
	vec = sirq_vector_alloc(sirq_lcore_cpu(lc), count_run, &app_runs,
				"app-peak");
	cr_assert_geq(vec, (int)SIRQ_NR_KERNEL_VECTORS);
	cr_assert(sirq_telemetry_register() == 0);
	dispatcher_launch(lc);
	/*
	 * The flood under way (5 s at most on a loaded machine). mainline
	 * runs it inline, unless sirqd took it first: a pass that ended on
	 * its limits woke sirqd, which polls the endless net_null queue
	 * itself pass after pass, and the dispatcher's looks find the lock
	 * busy (seen once in CI's Debian 13 leg: no inline run in 5 s).
	 * Either way NET_RX has run.
	 */
	for (int i = 0; i < 500 && net_rx_runs(lc, SIRQ_CTX_INLINE) +
	     net_rx_runs(lc, SIRQ_CTX_WORKER) == 0; i++)
		usleep(10 * 1000);
	cr_assert_gt(net_rx_runs(lc, SIRQ_CTX_INLINE) +
		     net_rx_runs(lc, SIRQ_CTX_WORKER), 0, "NET_RX never ran");

	snprintf(cmd, sizeof(cmd), "/sirq/params,%d", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(strstr(out, "\"policy\": \"mainline\"") != NULL, "%s", out);

	/* Applied when the reply comes: the next pass is the new policy's. */
	snprintf(cmd, sizeof(cmd), "/sirq/params_set,%d,policy=deferred,max_restart=5",
		 TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	inline_at_set = net_rx_runs(lc, SIRQ_CTX_INLINE);
	worker_at_set = net_rx_runs(lc, SIRQ_CTX_WORKER);
	cr_expect(strstr(out, "\"policy\": \"deferred\"") != NULL, "%s", out);
	cr_expect_eq(json_i64(out, "max_restart"), 5, "%s", out);
	cr_assert_eq(sirq_lcore_get_params(lc, &p), 0);
	cr_expect_eq(p.engine.policy, SIRQ_POLICY_DEFERRED);
	/* Long enough for sirqd to run, on a loaded machine too. */
	for (int i = 0; i < 500 && net_rx_runs(lc, SIRQ_CTX_WORKER) == worker_at_set; i++)
		usleep(10 * 1000);
	usleep(100 * 1000);
	cr_expect_eq(net_rx_runs(lc, SIRQ_CTX_INLINE), inline_at_set,
		     "NET_RX ran inline after deferred was set");
	cr_expect_gt(net_rx_runs(lc, SIRQ_CTX_WORKER), worker_at_set,
		     "sirqd took the flood");

	/* Bad values are refused with the reason, and change nothing. */
	snprintf(cmd, sizeof(cmd), "/sirq/params_set,%d,policy=fastest", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(strstr(out, "unknown policy 'fastest'") != NULL, "%s", out);
	/* The policies and models it would take, all of them. */
	cr_expect(strstr(out, "mainline, ksoftirqd, kicinski, deferred, rt, pushdown, pushdown-locked)") != NULL,
		  "%s", out);
	snprintf(cmd, sizeof(cmd), "/sirq/params_set,%d,max_restart=0", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(strstr(out, "bad value '0' for max_restart: max_restart must be in 1..1000") != NULL,
		  "%s", out);
	snprintf(cmd, sizeof(cmd), "/sirq/params_set,%d,napi_weight=0", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(strstr(out, "bad value '0' for napi_weight: napi_weight must be in 8..256") != NULL,
		  "%s", out);
	snprintf(cmd, sizeof(cmd), "/sirq/params_set,%d,napi_weight=65536", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(strstr(out, "bad value '65536' for napi_weight: napi_weight must be in 8..256") != NULL,
		  "%s", out);
	snprintf(cmd, sizeof(cmd), "/sirq/params_set,%d,no_such_key=1", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(strstr(out, "unknown key 'no_such_key'") != NULL, "%s", out);
	cr_assert_eq(sirq_lcore_get_params(lc, &p), 0);
	cr_expect_eq(p.engine.policy, SIRQ_POLICY_DEFERRED);
	cr_expect_eq(p.engine.max_restart, 5);

	/* "all" sets every lcore; the reply lists them. */
	telemetry("/sirq/params_set,all,policy=kicinski", out, sizeof(out));
	cr_expect(strstr(out, "\"lcore1\"") != NULL, "%s", out);
	cr_expect(strstr(out, "\"policy\": \"kicinski\"") != NULL, "%s", out);

	/* A vector whose name telemetry cannot take as a key shows as one. */
	while (__atomic_load_n(&app_runs, __ATOMIC_ACQUIRE) == 0) {
		cr_assert_eq(sirq_raise(sirq_lcore_cpu(lc), (unsigned int)vec), 0);
		usleep(10 * 1000);
	}
	telemetry("/sirq/softirqs", out, sizeof(out));
	cr_expect(strstr(out, "\"app_peak\": ") != NULL, "%s", out);

	/* The other commands say why too. */
	telemetry("/sirq/stats,77", out, sizeof(out));
	cr_expect(strstr(out, "lcore 77 has no sirq_lcore") != NULL, "%s", out);
	telemetry("/sirq/stats,x", out, sizeof(out));
	cr_expect(strstr(out, "is not an lcore id") != NULL, "%s", out);

	dispatcher_join(lc);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}

/*
 * Registered before rte_eal_init(), as DPDK's own libraries register
 * theirs from constructors: the commands are in the table when
 * rte_eal_init() opens the socket, and answer afterwards.
 */
Test(lcore_telemetry, commands_registered_before_eal_init_answer_after,
     .timeout = 60)
{
	static char out[65536];
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	char cmd[64];

	cr_assert_eq(sirq_telemetry_register(), 0);
	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.params.max_restart = 7;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	snprintf(cmd, sizeof(cmd), "/sirq/params,%d", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect_eq(json_i64(out, "max_restart"), 7, "%s", out);
	telemetry("/", out, sizeof(out));
	cr_expect(strstr(out, "\"/sirq/params_set\"") != NULL, "%s", out);
	sirq_lcore_free(lc);
}
