/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Lifecycle: a dispatcher and its sirqd started and stopped a thousand
 * times in one process, and an lcore created and freed a thousand times,
 * with packets through every cycle. Nothing may accumulate: threads, file
 * descriptors, rte_malloc memory, mbufs. Then the calls made in the wrong
 * order or with wrong arguments, and what each returns.
 *
 * The port is made of rings: the test puts mbufs on its Rx ring, the Rx
 * function sends them back out with sirq_tx(), the test takes them off
 * the TX ring ("the wire") and frees them.
 */

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "eal_harness.h"

#define CYCLES 1000
#define PKTS_PER_CYCLE 32
#define RING_SIZE 1024
#define CYCLE_TIMEOUT_MS 5000
#define VEC_PING SIRQ_NR_KERNEL_VECTORS

struct ring_port {
	struct rte_ring *rx;
	struct rte_ring *wire;
	uint16_t port;
};

struct fwd_state {
	struct sirq_lcore *lc;
	int txq;
	uint64_t received;
	uint64_t pings;
};

static void
forward_back(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	     struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct fwd_state *f = arg;
	uint16_t i;

	(void)port;
	(void)queue;
	for (i = 0; i < n; i++)
		if (sirq_tx(lc, (unsigned int)f->txq, pkts[i]) != 0)
			rte_pktmbuf_free(pkts[i]);
	__atomic_fetch_add(&f->received, n, __ATOMIC_RELEASE);
}

static void
ping(struct sirq_cpu *cpu, void *arg)
{
	struct fwd_state *f = arg;

	(void)cpu;
	__atomic_fetch_add(&f->pings, 1, __ATOMIC_RELEASE);
}

static void
ring_port_start(struct ring_port *rp)
{
	int port;

	rp->rx = rte_ring_create("rx", RING_SIZE, 0, 0);
	rp->wire = rte_ring_create("wire", RING_SIZE, 0, 0);
	cr_assert(rp->rx != NULL && rp->wire != NULL);
	port = rte_eth_from_rings("rings", &rp->rx, 1, &rp->wire, 1, 0);
	cr_assert(port >= 0);
	rp->port = (uint16_t)port;
	port_start(rp->port, 1, false);
}

static struct sirq_lcore *
lcore_on_port(const struct ring_port *rp, struct fwd_state *f,
	      enum sirq_mode mode)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	sirq_lcore_conf_default(&conf);
	conf.mode = mode;
	conf.worker_cpus = "0";
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL, "sirq_lcore_create: %s", rte_strerror(rte_errno));
	cr_assert_eq(sirq_lcore_add_rx_queue(lc, rp->port, 0, forward_back, f), 0);
	f->txq = sirq_lcore_add_tx_queue(lc, rp->port, 0);
	cr_assert(f->txq >= 0);
	cr_assert_eq(sirq_register(sirq_lcore_cpu(lc), VEC_PING, ping, f,
				   "PING"), 0);
	f->lc = lc;
	return lc;
}

/*
 * One cycle of traffic on a running dispatcher: packets in, a raise, an
 * explicit wake-up of sirqd; everything received before it returns.
 */
static void
traffic(const struct ring_port *rp, struct fwd_state *f, uint64_t cycle)
{
	struct rte_mbuf *m[PKTS_PER_CYCLE];

	cr_assert_eq(rte_pktmbuf_alloc_bulk(test_pool(), m, PKTS_PER_CYCLE), 0);
	cr_assert_eq(rte_ring_enqueue_bulk(rp->rx, (void **)m, PKTS_PER_CYCLE,
					   NULL), PKTS_PER_CYCLE);
	cr_assert_eq(sirq_raise(sirq_lcore_cpu(f->lc), VEC_PING), 0);
	sirq_worker_wakeup(sirq_lcore_cpu(f->lc));
	cr_assert(wait_for(&f->received, cycle * PKTS_PER_CYCLE,
			   CYCLE_TIMEOUT_MS), "cycle %llu: packets stuck",
		  (unsigned long long)cycle);
	cr_assert(wait_for(&f->pings, cycle, CYCLE_TIMEOUT_MS),
		  "cycle %llu: raise never ran", (unsigned long long)cycle);
}

/* Take the wire's packets off and free them; how many there were. */
static unsigned int
wire_drain(const struct ring_port *rp)
{
	struct rte_mbuf *m[RING_SIZE];
	unsigned int n = rte_ring_dequeue_burst(rp->wire, (void **)m, RING_SIZE,
						NULL);

	rte_pktmbuf_free_bulk(m, n);
	return n;
}

static unsigned int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	cr_assert(d != NULL);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static unsigned int
count_threads(void)
{
	char line[128];
	unsigned int n = 0;
	FILE *f = fopen("/proc/self/status", "r");

	cr_assert(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

static size_t
heap_allocated(void)
{
	struct rte_malloc_socket_stats st;

	cr_assert_eq(rte_malloc_get_socket_stats((int)rte_socket_id(), &st), 0);
	return st.heap_allocsz_bytes;
}

Test(lcore_lifecycle, dispatcher_and_worker_start_and_stop_1000_times,
     .timeout = 120)
{
	struct fwd_state f = { 0 };
	struct ring_port rp;
	struct sirq_lcore *lc;
	unsigned int threads, fds, forwarded = 0;
	struct sirq_lcore_stats st;
	uint64_t c, t0;

	eal_start(NULL);
	ring_port_start(&rp);
	lc = lcore_on_port(&rp, &f, SIRQ_MODE_POLL);
	threads = count_threads();
	fds = count_fds();

	t0 = now_ns();
	for (c = 1; c <= CYCLES; c++) {
		dispatcher_launch(lc);
		traffic(&rp, &f, c);
		dispatcher_join(lc);
		forwarded += wire_drain(&rp);
		cr_assert_eq(count_threads(), threads,
			     "cycle %llu: sirqd not joined",
			     (unsigned long long)c);
	}
	cr_log_info("%d start/stop cycles in %.2f s", CYCLES,
		    (double)(now_ns() - t0) / 1e9);
	sirq_lcore_stats_get(lc, &st);
	cr_expect_eq(forwarded, CYCLES * PKTS_PER_CYCLE,
		     "every packet sent before each stop returned");
	cr_expect_eq(st.rx_dropped_at_stop, 0);
	cr_expect_eq(count_fds(), fds, "file descriptors leaked");
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "every mbuf back in its pool");
}

Test(lcore_lifecycle, lcore_created_run_and_freed_1000_times_in_both_modes,
     .timeout = 120)
{
	struct ring_port rp;
	unsigned int threads, fds, forwarded = 0;
	size_t heap;
	uint64_t c, t0;

	eal_start(NULL);
	ring_port_start(&rp);
	threads = count_threads();
	fds = count_fds();
	heap = 0;

	t0 = now_ns();
	for (c = 1; c <= CYCLES; c++) {
		struct fwd_state f = { 0 };
		struct sirq_lcore *lc;

		lc = lcore_on_port(&rp, &f, (c & 1) != 0 ? SIRQ_MODE_IRQ :
				   SIRQ_MODE_POLL);
		dispatcher_launch(lc);
		traffic(&rp, &f, 1);
		dispatcher_join(lc);
		sirq_lcore_free(lc);
		forwarded += wire_drain(&rp);
		/* The first create sets up the rte_timer subsystem for good. */
		if (c == 1)
			heap = heap_allocated();
	}
	cr_log_info("%d create/run/free cycles in %.2f s", CYCLES,
		    (double)(now_ns() - t0) / 1e9);
	cr_expect_eq(forwarded, CYCLES * PKTS_PER_CYCLE);
	cr_expect_eq(count_threads(), threads, "threads left behind");
	cr_expect_eq(count_fds(), fds, "file descriptors leaked");
	cr_expect_eq(heap_allocated(), heap, "rte_malloc memory leaked");
	cr_expect_eq(pool_in_use(), 0, "every mbuf back in its pool");
}

/* A stop with no dispatcher running is kept: the next launch returns at once. */
Test(lcore_lifecycle, stop_before_launch_and_double_stop, .timeout = 30)
{
	struct fwd_state f = { 0 };
	struct ring_port rp;
	struct sirq_lcore *lc;
	struct sirq_lcore_stats st;

	eal_start(NULL);
	ring_port_start(&rp);
	lc = lcore_on_port(&rp, &f, SIRQ_MODE_POLL);

	sirq_lcore_stop(lc);
	sirq_lcore_stop(lc);
	dispatcher_launch(lc);
	cr_assert_eq(rte_eal_wait_lcore(TEST_LCORE), 0);
	sirq_lcore_stats_get(lc, &st);
	cr_expect_eq(st.iterations, 0, "a pending stop ends the next run at once");

	/* The stop was consumed: this run forwards until stopped, twice. */
	dispatcher_launch(lc);
	traffic(&rp, &f, 1);
	sirq_lcore_stop(lc);
	dispatcher_join(lc);
	sirq_lcore_stop_all();
	sirq_lcore_stop_all();
	cr_expect_eq(wire_drain(&rp), PKTS_PER_CYCLE);
	sirq_lcore_free(lc);
	sirq_lcore_free(NULL);
	cr_expect_eq(pool_in_use(), 0);
}


Test(lcore_lifecycle, calls_with_wrong_arguments_are_refused, .timeout = 30)
{
	struct sirq_lcore_conf conf;
	struct ring_port rp;
	struct sirq_lcore *lc;
	struct rte_mbuf *m;

	eal_start(NULL);
	ring_port_start(&rp);
	sirq_lcore_conf_default(&conf);

	cr_expect_null(sirq_lcore_create(RTE_MAX_LCORE, &conf));
	cr_expect_eq(rte_errno, EINVAL, "lcore id beyond RTE_MAX_LCORE");
	cr_expect_null(sirq_lcore_create(TEST_LCORE + 1, &conf));
	cr_expect_eq(rte_errno, EINVAL, "lcore not enabled in EAL");
	cr_expect_null(sirq_lcore_create(TEST_LCORE, NULL));
	cr_expect_eq(rte_errno, EINVAL, "NULL configuration");
	conf.napi_weight = 0;
	cr_expect_null(sirq_lcore_create(TEST_LCORE, &conf));
	cr_expect_eq(rte_errno, EINVAL, "napi weight 0");
	sirq_lcore_conf_default(&conf);
	conf.worker_cpus = "3-1";
	cr_expect_null(sirq_lcore_create(TEST_LCORE, &conf));
	cr_expect_eq(rte_errno, EINVAL, "worker cpus 3-1");
	sirq_lcore_conf_default(&conf);

	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert_not_null(lc);
	cr_expect_null(sirq_lcore_create(TEST_LCORE, &conf));
	cr_expect_eq(rte_errno, EEXIST, "a second dispatcher for one lcore");

	cr_expect_eq(sirq_lcore_add_rx_queue(lc, RTE_MAX_ETHPORTS, 0, rx_free_all,
					     NULL), -EINVAL, "no such port");
	cr_expect_eq(sirq_lcore_add_rx_queue(lc, rp.port, 1, rx_free_all, NULL),
		     -EINVAL, "no such queue");
	cr_expect_eq(sirq_lcore_add_rx_queue(lc, rp.port, 0, NULL, NULL),
		     -EINVAL, "NULL Rx function");
	cr_expect_eq(sirq_lcore_add_tx_queue(lc, RTE_MAX_ETHPORTS, 0), -EINVAL);
	cr_expect_eq(sirq_lcore_add_tx_queue(lc, rp.port, 1), -EINVAL);

	m = rte_pktmbuf_alloc(test_pool());
	sirq_bh_disable(sirq_lcore_cpu(lc));
	cr_expect_eq(sirq_tx(lc, 0, m), -EINVAL, "no TX queue 0 yet");
	cr_expect_eq(sirq_tx(lc, 0, NULL), -EINVAL);
	cr_expect_eq(sirq_bh_enable(sirq_lcore_cpu(lc)), 0);
	rte_pktmbuf_free(m);

	/* On the main lcore, for lcore 1: refused, nothing started. */
	cr_expect_eq(sirq_lcore_main(lc), -EINVAL);
	cr_expect_eq(sirq_lcore_main(NULL), -EINVAL);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0);
}
