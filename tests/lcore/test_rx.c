/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NET_RX on real ethdev queues: every packet arrives, in order per queue;
 * the NAPI weight and the netdev budgets bound what one NET_RX run takes;
 * no mbuf is left behind after stop.
 */

#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "eal_harness.h"

#define RING_QUEUES 2
#define PACKETS_PER_QUEUE 20000
#define ENQUEUE_BURST 32

struct rx_record {
	uint64_t received;		/* all queues; the test waits on it */
	uint64_t calls;
	uint64_t max_burst;
	uint64_t next_seq[RING_QUEUES];	/* expected sequence per queue */
	uint64_t out_of_order;
	uint64_t spin_cycles;		/* work per call, to test budget-us */
};

static void
record_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	  struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct rx_record *r = arg;
	uint16_t i;

	(void)lc;
	(void)port;
	for (i = 0; i < n; i++) {
		uint64_t seq = *rte_pktmbuf_mtod(pkts[i], uint64_t *);

		if (queue < RING_QUEUES) {
			if (seq != r->next_seq[queue])
				r->out_of_order++;
			r->next_seq[queue] = seq + 1;
		}
	}
	rte_pktmbuf_free_bulk(pkts, n);
	r->calls++;
	if (n > r->max_burst)
		r->max_burst = n;
	if (r->spin_cycles != 0) {
		uint64_t end = rte_get_tsc_cycles() + r->spin_cycles;

		while (rte_get_tsc_cycles() < end)
			;
	}
	__atomic_store_n(&r->received, r->received + n, __ATOMIC_RELEASE);
}

static struct sirq_lcore *
lcore_with_policy(enum sirq_policy_id policy)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	sirq_lcore_conf_default(&conf);
	conf.params.policy = policy;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL, "sirq_lcore_create: %s", rte_strerror(rte_errno));
	return lc;
}

static void
enqueue_sequence(struct rte_ring *ring, uint64_t count)
{
	struct rte_mbuf *m[ENQUEUE_BURST];
	uint64_t seq = 0;

	while (seq < count) {
		unsigned int n = RTE_MIN((uint64_t)ENQUEUE_BURST, count - seq);
		unsigned int i, done = 0;

		cr_assert(rte_pktmbuf_alloc_bulk(test_pool(), m, n) == 0);
		for (i = 0; i < n; i++) {
			uint64_t *p = (uint64_t *)rte_pktmbuf_append(m[i], 64);

			*p = seq++;
		}
		while (done < n)
			done += rte_ring_enqueue_burst(ring, (void **)&m[done],
						       n - done, NULL);
	}
}

Test(lcore_rx, ring_packets_all_arrive_in_order_per_queue, .timeout = 60)
{
	struct rte_ring *rx[RING_QUEUES], *tx[RING_QUEUES];
	struct rx_record rec = { 0 };
	struct sirq_lcore *lc;
	struct sirq_stats st;
	unsigned int q, in_use_before;
	int port;

	eal_start(NULL);
	for (q = 0; q < RING_QUEUES; q++) {
		char name[32];

		snprintf(name, sizeof(name), "rx%u", q);
		rx[q] = rte_ring_create(name, 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "tx%u", q);
		tx[q] = rte_ring_create(name, 4096, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		cr_assert(rx[q] != NULL && tx[q] != NULL);
	}
	port = rte_eth_from_rings("rings", rx, RING_QUEUES, tx, RING_QUEUES, 0);
	cr_assert(port >= 0, "rte_eth_from_rings: %s", rte_strerror(rte_errno));
	port_start((uint16_t)port, RING_QUEUES, false);
	in_use_before = pool_in_use();

	lc = lcore_with_policy(SIRQ_POLICY_KICINSKI);
	for (q = 0; q < RING_QUEUES; q++)
		cr_assert(sirq_lcore_add_rx_queue(lc, (uint16_t)port, (uint16_t)q,
						  record_rx, &rec) == 0);
	dispatcher_launch(lc);
	for (q = 0; q < RING_QUEUES; q++)
		enqueue_sequence(rx[q], PACKETS_PER_QUEUE);
	cr_assert(wait_for(&rec.received, RING_QUEUES * PACKETS_PER_QUEUE, 20000),
		  "received %lu of %u", (unsigned long)rec.received,
		  RING_QUEUES * PACKETS_PER_QUEUE);
	dispatcher_join(lc);

	cr_expect_eq(rec.received, RING_QUEUES * PACKETS_PER_QUEUE,
		     "no packet lost or duplicated");
	cr_expect_eq(rec.out_of_order, 0, "order kept per queue");
	for (q = 0; q < RING_QUEUES; q++)
		cr_expect_eq(rec.next_seq[q], PACKETS_PER_QUEUE);
	cr_expect_leq(rec.max_burst, SIRQ_NAPI_WEIGHT_DEFAULT);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE] +
		     st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), in_use_before, "every mbuf back in its pool");
}

/*
 * Endless input on NULL_QUEUES queues: every poll takes exactly the
 * weight, and each NET_RX run polls each queue at most once (the kernel
 * repolls a full NAPI on the next run), so the packet budget of 300 is
 * reached after five polls and the time budget after as many as fit.
 */
#define NULL_QUEUES 16

static struct sirq_lcore *
null_flood_lcore(struct rx_record *rec, uint16_t budget, uint32_t budget_us)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	uint16_t q;

	static const char *const vdevs[] = { "net_null0", NULL };

	eal_start(vdevs);
	port_start(0, NULL_QUEUES, false);
	sirq_lcore_conf_default(&conf);
	conf.params.policy = SIRQ_POLICY_MAINLINE;
	conf.netdev_budget = budget;
	conf.netdev_budget_us = budget_us;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	for (q = 0; q < NULL_QUEUES; q++)
		cr_assert(sirq_lcore_add_rx_queue(lc, 0, q, record_rx, rec) == 0);
	return lc;
}

Test(lcore_rx, endless_input_net_rx_stops_at_the_packet_budget, .timeout = 60)
{
	struct rx_record rec = { 0 };
	struct sirq_lcore_stats ls;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	uint64_t runs;

	/* A time budget that a preempted run cannot reach first. */
	/* A time budget never reached: the largest accepted, 100 ms. */
	lc = null_flood_lcore(&rec, SIRQ_NETDEV_BUDGET_DEFAULT,
			      (uint32_t)sirq_param_range("netdev_budget_us")->max);
	dispatcher_launch(lc);
	cr_assert(wait_for(&rec.received, 1000000, 20000));
	dispatcher_join(lc);

	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	sirq_lcore_stats_get(lc, &ls);
	runs = st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE] +
		st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER];
	/* 300 packets at weight 64: five full polls, 320, then the squeeze. */
	cr_expect_eq(rec.max_burst, SIRQ_NAPI_WEIGHT_DEFAULT, "weight holds");
	cr_expect_eq(ls.rx_packets, rec.received);
	cr_expect_eq(ls.rx_packets, runs * 5 * SIRQ_NAPI_WEIGHT_DEFAULT,
		     "%lu packets in %lu NET_RX runs",
		     (unsigned long)ls.rx_packets, (unsigned long)runs);
	cr_expect_eq(ls.rx_polls, runs * 5, "five polls per run");
	cr_expect_eq(ls.time_squeeze, runs, "every run squeezed");
	cr_expect_eq(ls.budget_exhausted, runs, "by the packet budget");
	sirq_lcore_free(lc);
}

Test(lcore_rx, endless_input_net_rx_stops_at_the_time_budget, .timeout = 60)
{
	struct rx_record rec = { 0 };
	struct sirq_lcore_stats ls;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	uint64_t runs;

	/*
	 * A packet budget never reached (the largest accepted, 10000, where
	 * a run makes 8 polls of 64); each poll takes 300 us of work.
	 */
	lc = null_flood_lcore(&rec,
			      (uint16_t)sirq_param_range("netdev_budget")->max,
			      SIRQ_NETDEV_BUDGET_US_DEFAULT);
	rec.spin_cycles = rte_get_tsc_hz() / 1000000 * 300;
	dispatcher_launch(lc);
	cr_assert(wait_for(&rec.received, 50000, 20000));
	dispatcher_join(lc);

	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	sirq_lcore_stats_get(lc, &ls);
	runs = st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE] +
		st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER];
	cr_expect_gt(ls.time_squeeze, 0);
	cr_expect_eq(ls.budget_exhausted, 0, "never the packet budget");
	/*
	 * Every poll takes at least 300 us, so a run that respects 2000 us
	 * makes at most 7 polls plus the one that crosses the limit, where
	 * the queues alone would allow NULL_QUEUES.
	 */
	cr_expect_leq(ls.rx_polls, runs * (2000 / 300 + 1),
		      "%lu polls in %lu runs", (unsigned long)ls.rx_polls,
		      (unsigned long)runs);
	sirq_lcore_free(lc);
}
