/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Transmit and TX completion on a ring port: the TX ring is the wire, and
 * the test decides when the "NIC" lets go of a packet by taking it off
 * the ring and freeing it. A completion must follow that moment, not the
 * moment tx_burst accepted the packet.
 */

#include <inttypes.h>
#include <unistd.h>

#include <rte_eth_ring.h>
#include <rte_ring.h>

#include "eal_harness.h"

#define TSQ_LIMIT_PKTS 4		/* per sender in flight, as TSQ caps bytes */
#define TSQ_TOTAL_PKTS 2000
#define WIRE_RING_SIZE 4096

struct sender {
	struct sirq_lcore *lc;
	int port;
	int txq;
	struct sirq_tasklet tasklet;
	struct sirq_tx_tracker tracker;
	uint64_t next_seq;
	uint64_t runs;
	int last_error;
};

/* The TSQ pattern: send while under the limit; completions call us again. */
static void
sender_push(struct sirq_tasklet *t, void *arg)
{
	struct sender *s = arg;

	(void)t;
	s->runs++;
	while (s->tracker.inflight_pkts < TSQ_LIMIT_PKTS &&
	       s->next_seq < TSQ_TOTAL_PKTS) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
		uint64_t *p;
		int ret;

		if (m == NULL)
			return;
		p = (uint64_t *)rte_pktmbuf_append(m, 64);
		*p = s->next_seq;
		ret = sirq_tx_tracked(s->lc, (unsigned int)s->txq, m,
				      &s->tracker);
		if (ret != 0) {
			s->last_error = ret;
			rte_pktmbuf_free(m);
			return;
		}
		s->next_seq++;
	}
}

static struct rte_ring *wire;

static struct sirq_lcore *
ring_port_lcore(struct sender *s)
{
	struct rte_ring *rx;
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	int port;

	eal_start(NULL);
	rx = rte_ring_create("rx", WIRE_RING_SIZE, 0, 0);
	wire = rte_ring_create("wire", WIRE_RING_SIZE, 0, 0);
	cr_assert(rx != NULL && wire != NULL);
	port = rte_eth_from_rings("rings", &rx, 1, &wire, 1, 0);
	cr_assert(port >= 0);
	port_start((uint16_t)port, 1, false);

	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	s->lc = lc;
	s->port = port;
	s->txq = sirq_lcore_add_tx_queue(lc, (uint16_t)port, 0);
	cr_assert(s->txq >= 0);
	sirq_tasklet_init(&s->tasklet, sender_push, s);
	s->tracker.tasklet = &s->tasklet;
	return lc;
}

/* One bottom-half section of the lcore, on the lcore, and what it saw. */
struct bh_tx {
	struct sirq_lcore *lc;
	unsigned int txq;
	struct rte_mbuf **pkts;
	uint16_t n;
	int ret;			/* sirq_tx() or sirq_tx_burst() */
	int enable_ret;
	unsigned int on_wire_before;	/* before sirq_bh_enable() */
	unsigned int on_wire_after;
};

static int
tx_with_bh_off(void *arg)
{
	struct bh_tx *b = arg;
	struct sirq_cpu *cpu = sirq_lcore_cpu(b->lc);

	sirq_bh_disable(cpu);
	b->ret = b->n == 1 ? sirq_tx(b->lc, b->txq, b->pkts[0]) :
		sirq_tx_burst(b->lc, b->txq, b->pkts, b->n);
	b->on_wire_before = rte_ring_count(wire);
	b->enable_ret = sirq_bh_enable(cpu);
	b->on_wire_after = rte_ring_count(wire);
	return 0;
}

Test(lcore_tx, sirq_tx_outside_handlers_is_refused, .timeout = 30)
{
	struct sender s = { 0 };
	struct sirq_lcore *lc = ring_port_lcore(&s);
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
	struct bh_tx b = { .lc = lc, .txq = (unsigned int)s.txq, .pkts = &m,
			   .n = 1 };

	cr_expect_eq(sirq_tx(lc, b.txq, m), -EPERM);
	/* Bottom halves off, but on lcore 0: not lcore 1's context. */
	sirq_bh_disable(sirq_lcore_cpu(lc));
	cr_expect_eq(sirq_tx(lc, b.txq, m), -EPERM, "another lcore's thread");
	cr_expect_eq(sirq_bh_enable(sirq_lcore_cpu(lc)), 0);

	cr_assert_eq(on_test_lcore(tx_with_bh_off, &b), 0);
	cr_expect_eq(b.ret, 0, "bottom halves off on the lcore is handler context");
	cr_expect_eq(b.on_wire_before, 1,
		     "outside a NAPI poll a send goes to the PMD at once (dev_queue_xmit)");
	cr_expect_eq(b.enable_ret, 0);
	cr_expect_eq(b.on_wire_after, 1);
	cr_assert_eq(rte_ring_dequeue(wire, (void **)&m), 0);
	rte_pktmbuf_free(m);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "every mbuf back in its pool");
}

Test(lcore_tx, completion_follows_the_pmd_release_not_tx_burst, .timeout = 30)
{
	struct sender s = { 0 };
	struct sirq_lcore *lc = ring_port_lcore(&s);
	struct rte_mbuf *sent[TSQ_LIMIT_PKTS];
	unsigned int n;

	dispatcher_launch(lc);
	sirq_tasklet_schedule(sirq_lcore_cpu(lc), &s.tasklet);

	/* tx_burst takes the first batch; nobody has freed it yet. */
	while (rte_ring_count(wire) < TSQ_LIMIT_PKTS)
		usleep(1000);
	usleep(50 * 1000);
	cr_expect_eq(rte_ring_count(wire), TSQ_LIMIT_PKTS, "capped in flight");
	cr_expect_eq(__atomic_load_n(&s.tracker.completed_pkts, __ATOMIC_ACQUIRE),
		     0, "accepted by tx_burst is not completed");

	/* The "NIC" releases them: now they complete and the sender resumes. */
	n = rte_ring_dequeue_burst(wire, (void **)sent, TSQ_LIMIT_PKTS, NULL);
	cr_assert_eq(n, TSQ_LIMIT_PKTS);
	rte_pktmbuf_free_bulk(sent, n);
	cr_expect(wait_for(&s.tracker.completed_pkts, TSQ_LIMIT_PKTS, 5000));
	while (rte_ring_count(wire) < TSQ_LIMIT_PKTS)
		usleep(1000);
	dispatcher_join(lc);
	cr_expect_geq(s.runs, 2, "the completion tasklet ran the sender again");
	sirq_lcore_free(lc);
	n = rte_ring_dequeue_burst(wire, (void **)sent, TSQ_LIMIT_PKTS, NULL);
	rte_pktmbuf_free_bulk(sent, n);
	cr_expect_eq(pool_in_use(), 0, "every mbuf back in its pool");
}

Test(lcore_tx, tsq_sender_moves_everything_in_order_within_its_cap,
     .timeout = 60)
{
	struct sender s = { 0 };
	struct sirq_lcore *lc = ring_port_lcore(&s);
	struct sirq_lcore_stats ls;
	uint64_t expect = 0, out_of_order = 0;
	unsigned int max_on_wire = 0;

	dispatcher_launch(lc);
	sirq_tasklet_schedule(sirq_lcore_cpu(lc), &s.tasklet);
	while (expect < TSQ_TOTAL_PKTS) {
		struct rte_mbuf *m;

		if (rte_ring_count(wire) > max_on_wire)
			max_on_wire = rte_ring_count(wire);
		if (rte_ring_dequeue(wire, (void **)&m) != 0) {
			sched_yield();
			continue;
		}
		if (*rte_pktmbuf_mtod(m, uint64_t *) != expect)
			out_of_order++;
		expect++;
		rte_pktmbuf_free(m);
	}
	cr_expect(wait_for(&s.tracker.completed_pkts, TSQ_TOTAL_PKTS, 5000));
	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, &ls);

	cr_expect_eq(out_of_order, 0);
	cr_expect_leq(max_on_wire, TSQ_LIMIT_PKTS, "never over the cap");
	cr_expect_eq(s.last_error, 0);
	cr_expect_eq(s.tracker.inflight_pkts, 0);
	cr_expect_eq(ls.tx_packets, TSQ_TOTAL_PKTS);
	cr_expect_eq(ls.tx_completions, TSQ_TOTAL_PKTS);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "every mbuf back in its pool");
}

#define BURST_PKTS (3 * SIRQ_TX_BURST + 5)	/* full buffers and a rest */

static void
alloc_numbered(struct rte_mbuf **m, unsigned int n)
{
	unsigned int i;

	cr_assert_eq(rte_pktmbuf_alloc_bulk(test_pool(), m, n), 0);
	for (i = 0; i < n; i++)
		*(uint64_t *)rte_pktmbuf_append(m[i], 64) = i;
}

Test(lcore_tx, sirq_tx_burst_outside_handlers_takes_nothing, .timeout = 30)
{
	struct sender s = { 0 };
	struct sirq_lcore *lc = ring_port_lcore(&s);
	struct rte_mbuf *m[BURST_PKTS];

	alloc_numbered(m, BURST_PKTS);
	cr_expect_eq(sirq_tx_burst(lc, (unsigned int)s.txq, m, BURST_PKTS),
		     -EPERM);
	cr_expect_eq(sirq_tx_burst(lc, (unsigned int)s.txq + 1, m, 1), -EINVAL);
	cr_expect_eq(rte_ring_count(wire), 0);
	cr_expect_eq(pool_in_use(), BURST_PKTS, "the caller still owns them");
	rte_pktmbuf_free_bulk(m, BURST_PKTS);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0);
}

Test(lcore_tx, sirq_tx_burst_outside_a_poll_sends_everything_before_it_returns,
     .timeout = 30)
{
	struct sender s = { 0 };
	struct sirq_lcore *lc = ring_port_lcore(&s);
	struct rte_mbuf *m[BURST_PKTS];
	struct sirq_lcore_stats ls;
	struct bh_tx b;
	unsigned int i, n;

	alloc_numbered(m, BURST_PKTS);
	b.lc = lc;
	b.txq = (unsigned int)s.txq;
	b.pkts = m;
	b.n = BURST_PKTS;
	cr_assert_eq(on_test_lcore(tx_with_bh_off, &b), 0);
	cr_expect_eq(b.ret, BURST_PKTS);
	cr_expect_eq(b.on_wire_before, BURST_PKTS,
		     "full buffers and the rest went to the PMD in the call");
	cr_expect_eq(b.enable_ret, 0);
	cr_expect_eq(b.on_wire_after, BURST_PKTS);

	n = rte_ring_dequeue_burst(wire, (void **)m, BURST_PKTS, NULL);
	cr_assert_eq(n, BURST_PKTS);
	for (i = 0; i < n; i++)
		cr_expect_eq(*rte_pktmbuf_mtod(m[i], uint64_t *), i, "in order");
	rte_pktmbuf_free_bulk(m, n);
	sirq_lcore_stats_get(lc, &ls);
	cr_expect_eq(ls.tx_packets, BURST_PKTS);
	cr_expect_eq(ls.tx_bursts, 1,
		     "a burst of a buffer's worth or more into an empty buffer "
		     "goes to the PMD as it is, in one call");
	cr_expect_eq(ls.tx_dropped, 0);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0);
}

#define FWD_ROUNDS 20

/*
 * @rounds bursts of BURST_PKTS numbered packets into the port's Rx ring,
 * each taken back from the wire, in order, before the next.
 */
static void
forward_rounds(struct rte_ring *rx, unsigned int rounds)
{
	struct rte_mbuf *m[BURST_PKTS];
	unsigned int round, n, i;

	for (round = 0; round < rounds; round++) {
		alloc_numbered(m, BURST_PKTS);
		cr_assert_eq(rte_ring_enqueue_bulk(rx, (void **)m, BURST_PKTS,
						   NULL), BURST_PKTS);
		for (n = 0; n < BURST_PKTS;) {
			unsigned int got = rte_ring_dequeue_burst(wire, (void **)m,
								  BURST_PKTS - n, NULL);

			for (i = 0; i < got; i++)
				cr_expect_eq(*rte_pktmbuf_mtod(m[i], uint64_t *),
					     n + i, "in order");
			rte_pktmbuf_free_bulk(m, got);
			n += got;
			if (got == 0)
				usleep(100);
		}
	}
}

/* An Rx function that sends every packet on, one sirq_tx() at a time. */
struct poll_fwd {
	int txq;
	uint64_t polls;
	uint64_t bursts_expected;	/* ceil(n / SIRQ_TX_BURST) per poll */
	uint64_t left_during_poll;	/* packets that reached the wire in it */
};

static void
forward_one_by_one(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
		   struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct poll_fwd *f = arg;
	struct sirq_lcore_stats before, after;
	unsigned int i;

	(void)port;
	(void)queue;
	sirq_lcore_stats_get(lc, &before);
	for (i = 0; i < n; i++)
		cr_assert_eq(sirq_tx(lc, (unsigned int)f->txq, pkts[i]), 0);
	sirq_lcore_stats_get(lc, &after);
	/* Full buffers have gone; the rest waits for the poll's end. */
	f->left_during_poll += after.tx_packets - before.tx_packets -
		(n - n % SIRQ_TX_BURST);
	f->polls++;
	f->bursts_expected += (n + SIRQ_TX_BURST - 1) / SIRQ_TX_BURST;
}

/* An Rx function that sends the whole burst on in one sirq_tx_burst(). */
static void
forward_burst(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	      struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct poll_fwd *f = arg;

	(void)port;
	(void)queue;
	cr_assert_eq(sirq_tx_burst(lc, (unsigned int)f->txq, pkts, n), n);
	f->polls++;
}

/*
 * A forwarding poll hands its burst to the PMD in one call, whatever its
 * size against the TX buffer: one doorbell per poll, as the poll's end
 * would ring, and no copy through the buffer.
 */
Test(lcore_tx, a_polls_burst_leaves_in_one_call_whatever_its_size, .timeout = 30)
{
	struct sender s = { 0 };
	struct sirq_lcore *lc = ring_port_lcore(&s);
	struct poll_fwd f = { .txq = s.txq };
	struct rte_ring *rx = rte_ring_lookup("rx");
	struct sirq_lcore_stats ls;

	cr_assert(rx != NULL);
	cr_assert_eq(sirq_lcore_add_rx_queue(lc, (uint16_t)s.port, 0,
					     forward_burst, &f), 0);
	dispatcher_launch(lc);
	forward_rounds(rx, FWD_ROUNDS);
	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, &ls);

	cr_expect_eq(ls.tx_packets, FWD_ROUNDS * BURST_PKTS);
	cr_expect_gt(ls.rx_polls, 0);
	cr_expect_eq(ls.tx_bursts, f.polls, "%" PRIu64 " bursts for %" PRIu64
		     " polls of up to %u packets", ls.tx_bursts, f.polls,
		     SIRQ_NAPI_WEIGHT_DEFAULT);
	cr_expect_eq(ls.tx_dropped, 0);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0);
}

/*
 * net/core/dev.c and the drivers: a NAPI poll transmits inside the poll
 * (xdp_do_flush() at its end rings the doorbell once); NET_TX is not
 * raised to send. A forwarding flood runs no NET_TX at all.
 */
Test(lcore_tx, a_napi_polls_sends_leave_in_one_burst_at_its_end_and_net_tx_never_runs,
     .timeout = 30)
{
	struct sender s = { 0 };
	struct sirq_lcore *lc = ring_port_lcore(&s);
	struct poll_fwd f = { .txq = s.txq };
	struct rte_ring *rx = rte_ring_lookup("rx");
	struct sirq_lcore_stats ls;
	struct sirq_stats st;

	cr_assert(rx != NULL);
	cr_assert_eq(sirq_lcore_add_rx_queue(lc, (uint16_t)s.port, 0,
					     forward_one_by_one, &f), 0);
	dispatcher_launch(lc);
	forward_rounds(rx, FWD_ROUNDS);
	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, &ls);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);

	cr_expect_eq(f.left_during_poll, 0, "the rest left after the Rx function");
	cr_expect_gt(f.polls, 0);
	cr_expect_eq(ls.tx_bursts, f.bursts_expected,
		     "one burst per full buffer and one per poll's rest");
	cr_expect_eq(ls.tx_packets, FWD_ROUNDS * BURST_PKTS);
	cr_expect_eq(st.runs[SIRQ_NET_TX][SIRQ_CTX_INLINE] +
		     st.runs[SIRQ_NET_TX][SIRQ_CTX_WORKER], 0,
		     "NET_TX never ran: nothing to complete");
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0);
}
