/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NAPI's per-context modes (netdev-genl napi-set, Linux 6.13) on a real
 * lcore, with one Rx queue of a net_ring port (rte_eth_from_rings) that
 * the test feeds:
 *  - threaded NAPI: the queue is polled by its own thread
 *    "napi/<lcore>-<id>", not by NET_RX; napi-set moves it between the
 *    two while the lcore runs;
 *  - defer_hard_irqs with gro_flush_timeout: a completion leaves the
 *    "interrupt" off and the context's timer re-polls it, until that many
 *    empty polls in a row turn it back on;
 *  - busy polling: an application thread on the lcore's CPU polls the
 *    queue itself (napi_busy_loop());
 *  - threaded busy-poll (6.19): the queue's thread polls it without end,
 *    never completing it (its "interrupt" never turned back on), and
 *    napi-set moves it to enabled, disabled and back while it runs;
 *  - /sirq/napi and /sirq/napi_set through dpdk-telemetry.py.
 * The receive function records the thread (gettid()) that each packet
 * arrived on; calls never overlap, since every poller holds the lcore's
 * execution lock.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "eal_harness.h"
/* The per-context counters napi-get has no room for (irq_unmasks). */
#include "sirq_lcore_internal.h"

#define PACKETS 4000
#define ENQUEUE_BURST 32
#define RING_SLOTS 4096
/* Generous: nothing here needs more than milliseconds when it works. */
#define RECEIVE_TIMEOUT_MS 10000
#define STATE_TIMEOUT_MS 10000
/* Busy polls beside a CPU hog within STATE_TIMEOUT_MS: 5,000 a second. */
#define BUSY_BESIDE_HOG 50000
#define MAX_TIDS 8

/* The kernel's usual pair: 4 empty re-polls, 50 us apart. */
#define DEFER_HARD_IRQS 4
#define GRO_FLUSH_TIMEOUT_NS 50000
/* Long enough for hundreds of due 50 us timers, had one been left armed. */
#define QUIET_AFTER_IRQ_ON_MS 200

/* sirq_napi_busy_poll() as an epoll loop with busy_poll_usecs calls it. */
#define BUSY_BUDGET SIRQ_BUSY_POLL_BUDGET_DEFAULT
#define BUSY_POLL_US 1000
/* Give up sending if the busy poller never got a packet after this many. */
#define BUSY_MAX_PACKETS 200000


/* Who received what: packets per receiving thread. */
struct rx_seen {
	uint64_t received;		/* the test waits on it */
	uint32_t nb_tids;
	int tid[MAX_TIDS];
	uint64_t packets[MAX_TIDS];
	uint64_t untracked;		/* beyond MAX_TIDS threads */
};

static void
seen_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct rx_seen *s = arg;
	int self = (int)gettid();
	uint32_t i, nb = s->nb_tids;

	(void)lc;
	(void)port;
	(void)queue;
	for (i = 0; i < nb && s->tid[i] != self; i++)
		;
	if (i == nb && nb < MAX_TIDS) {
		s->tid[i] = self;
		__atomic_store_n(&s->nb_tids, nb + 1, __ATOMIC_RELEASE);
	}
	if (i < MAX_TIDS)
		__atomic_store_n(&s->packets[i], s->packets[i] + n,
				 __ATOMIC_RELAXED);
	else
		__atomic_store_n(&s->untracked, s->untracked + n,
				 __ATOMIC_RELAXED);
	rte_pktmbuf_free_bulk(pkts, n);
	__atomic_store_n(&s->received, s->received + n, __ATOMIC_RELEASE);
}

/* Packets that arrived on thread @tid so far. */
static uint64_t
packets_on(const struct rx_seen *s, int tid)
{
	uint32_t i, nb = __atomic_load_n(&s->nb_tids, __ATOMIC_ACQUIRE);

	for (i = 0; i < nb; i++)
		if (s->tid[i] == tid)
			return __atomic_load_n(&s->packets[i], __ATOMIC_RELAXED);
	return 0;
}

/*
 * A net_ring port with one queue pair, started; its Rx ring in @rx.
 * @name tells its rings and port from another's.
 */
static uint16_t
ring_port_named(const char *name, struct rte_ring **rx)
{
	char rx_name[32], tx_name[32], port_name[32];
	struct rte_ring *tx;
	int port;

	snprintf(rx_name, sizeof(rx_name), "rx%s", name);
	snprintf(tx_name, sizeof(tx_name), "tx%s", name);
	snprintf(port_name, sizeof(port_name), "rings%s", name);
	*rx = rte_ring_create(rx_name, RING_SLOTS, 0,
			      RING_F_SP_ENQ | RING_F_SC_DEQ);
	tx = rte_ring_create(tx_name, RING_SLOTS, 0,
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	cr_assert(*rx != NULL && tx != NULL);
	port = rte_eth_from_rings(port_name, rx, 1, &tx, 1, 0);
	cr_assert(port >= 0, "rte_eth_from_rings: %s", rte_strerror(rte_errno));
	port_start((uint16_t)port, 1, false);
	return (uint16_t)port;
}

static uint16_t
ring_port(struct rte_ring **rx)
{
	return ring_port_named("", rx);
}

/* @count packets of 64 bytes into the port's Rx ring. */
static void
send_packets(struct rte_ring *rx, unsigned int count)
{
	struct rte_mbuf *m[ENQUEUE_BURST];
	unsigned int sent = 0;

	while (sent < count) {
		unsigned int n = RTE_MIN((unsigned int)ENQUEUE_BURST,
					 count - sent);
		unsigned int i, done = 0;

		cr_assert(rte_pktmbuf_alloc_bulk(test_pool(), m, n) == 0);
		for (i = 0; i < n; i++)
			cr_assert(rte_pktmbuf_append(m[i], 64) != NULL);
		while (done < n)
			done += rte_ring_enqueue_burst(rx, (void **)&m[done],
						       n - done, NULL);
		sent += n;
	}
}

/* An lcore of @conf on TEST_LCORE with the port's queue 0 as NAPI 0. */
static struct sirq_lcore *
napi_lcore(const struct sirq_lcore_conf *conf, uint16_t port,
	   struct rx_seen *seen)
{
	struct sirq_lcore *lc = sirq_lcore_create(TEST_LCORE, conf);

	cr_assert(lc != NULL, "sirq_lcore_create: %s", rte_strerror(rte_errno));
	cr_assert(sirq_lcore_add_rx_queue(lc, port, 0, seen_rx, seen) == 0);
	cr_assert_eq(sirq_napi_count(lc), 1);
	return lc;
}

static int
current_tid(void *arg)
{
	(void)arg;
	return (int)gettid();
}

/* The TID of TEST_LCORE's EAL thread, which runs the dispatcher. */
static int
dispatcher_tid(void)
{
	return on_test_lcore(current_tid, NULL);
}

static struct sirq_napi_info
napi_info(const struct sirq_lcore *lc)
{
	struct sirq_napi_info info;

	cr_assert_eq(sirq_napi_get(lc, 0, &info), 0);
	return info;
}

static uint64_t
net_rx_runs(struct sirq_lcore *lc)
{
	struct sirq_stats st;

	sirq_stats_get(sirq_lcore_cpu(lc), &st);
	return st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE] +
		st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER];
}

/* The name of thread @tid of this process. */
static void
thread_name(int tid, char *name, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	f = fopen(path, "r");
	cr_assert(f != NULL, "no thread %d: %s", tid, strerror(errno));
	cr_assert(fgets(name, (int)len, f) != NULL);
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
}

/*
 * Wait until the launched lcore runs its loop (its threads started):
 * dispatcher_launch() returns before sirq_lcore_main() gets that far.
 */
static void
wait_lcore_running(const struct sirq_lcore *lc)
{
	uint64_t end = now_ns() + STATE_TIMEOUT_MS * 1000000ULL;
	struct sirq_lcore_stats ls;

	for (;;) {
		sirq_lcore_stats_get(lc, &ls);
		if (ls.iterations > 0)
			return;
		cr_assert(now_ns() < end, "the lcore did not start in %d ms",
			  STATE_TIMEOUT_MS);
		usleep(1000);
	}
}

/* Wait until NAPI 0 has a thread; its TID, or -1 after the timeout. */
static int
wait_napi_thread(const struct sirq_lcore *lc)
{
	uint64_t end = now_ns() + STATE_TIMEOUT_MS * 1000000ULL;
	struct sirq_napi_info info;

	do {
		info = napi_info(lc);
		if (info.thread_tid > 0)
			return info.thread_tid;
		usleep(1000);
	} while (now_ns() < end);
	return -1;
}

/*
 * Wait until NAPI 0 is idle with its interrupt on (neither scheduled nor
 * left masked by a deferral); false after the timeout. Its state in @info.
 */
static bool
wait_napi_irq_on(const struct sirq_lcore *lc, struct sirq_napi_info *info)
{
	uint64_t end = now_ns() + STATE_TIMEOUT_MS * 1000000ULL;

	do {
		*info = napi_info(lc);
		if (!info->scheduled && !info->irq_masked)
			return true;
		usleep(1000);
	} while (now_ns() < end);
	return false;
}

/* Nothing left behind: every mbuf back in the pool once the lcore is gone. */
static void
join_and_free(struct sirq_lcore *lc)
{
	dispatcher_join(lc);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "%u mbufs leaked", pool_in_use());
}

Test(lcore_napi, a_threaded_napi_is_polled_by_its_own_thread_not_by_net_rx,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats ls;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	rte_cpuset_t lcore_cpus, thread_cpus;
	char name[32], want[32];
	int dispatcher;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.napi.threaded = true;
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	dispatcher = dispatcher_tid();
	info = napi_info(lc);
	cr_expect(info.params.threaded);
	cr_expect_eq(info.thread_tid, -1, "a thread before the lcore runs");

	dispatcher_launch(lc);
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS),
		  "received %" PRIu64 " of %d", seen.received, PACKETS);

	info = napi_info(lc);
	cr_assert_gt(info.thread_tid, 0, "no thread while the lcore runs");
	cr_expect_neq(info.thread_tid, dispatcher);
	thread_name(info.thread_tid, name, sizeof(name));
	snprintf(want, sizeof(want), "napi/%d-0", TEST_LCORE);
	cr_expect_str_eq(name, want);
	/* SCHED_OTHER on the lcore's CPUs, as sirq.h says. */
	lcore_cpus = rte_lcore_cpuset(TEST_LCORE);
	cr_assert_eq(sched_getaffinity(info.thread_tid, sizeof(thread_cpus),
				       &thread_cpus), 0);
	cr_expect(CPU_EQUAL(&lcore_cpus, &thread_cpus),
		  "the NAPI thread is not pinned to the lcore's CPUs");
	cr_expect_eq(sched_getscheduler(info.thread_tid), SCHED_OTHER);

	cr_expect_eq(packets_on(&seen, info.thread_tid), PACKETS,
		     "%" PRIu64 " of %d packets on the NAPI thread, %u "
		     "receiving thread(s)", packets_on(&seen, info.thread_tid),
		     PACKETS, seen.nb_tids);
	cr_expect_eq(seen.nb_tids, 1, "packets on %u threads", seen.nb_tids);
	cr_expect_gt(info.thread_polls, 0);
	cr_expect_eq(net_rx_runs(lc), 0, "NET_RX ran for a threaded queue");

	dispatcher_join(lc);
	info = napi_info(lc);
	cr_expect_eq(info.thread_tid, -1, "the thread outlived the lcore");
	cr_expect_eq(seen.received, PACKETS);
	sirq_lcore_stats_get(lc, &ls);
	cr_expect_eq(ls.rx_packets, PACKETS);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "%u mbufs leaked", pool_in_use());
}

Test(lcore_napi, napi_set_moves_a_running_queue_to_its_thread_and_back_to_net_rx,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_params p;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	uint64_t runs, polls;
	int tid;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	dispatcher_launch(lc);

	/* Unthreaded: NET_RX polls it. */
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS));
	info = napi_info(lc);
	cr_expect_eq(info.thread_tid, -1);
	cr_expect_eq(info.thread_polls, 0);
	cr_expect_gt(net_rx_runs(lc), 0);

	/* Threaded from now on: it gets its thread, which polls it. */
	p = info.params;
	p.threaded = true;
	cr_assert_eq(sirq_napi_set(lc, 0, &p), 0);
	tid = wait_napi_thread(lc);
	cr_assert_gt(tid, 0, "no thread %d ms after napi-set threaded",
		     STATE_TIMEOUT_MS);
	cr_expect_eq(packets_on(&seen, tid), 0);
	polls = napi_info(lc).thread_polls;
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, 2 * PACKETS, RECEIVE_TIMEOUT_MS));
	cr_expect_eq(packets_on(&seen, tid), PACKETS,
		     "%" PRIu64 " of %d packets on the NAPI thread",
		     packets_on(&seen, tid), PACKETS);
	info = napi_info(lc);
	cr_expect(info.params.threaded);
	cr_expect_gt(info.thread_polls, polls);

	/* Back to NET_RX; the idle thread stays until the lcore stops. */
	p.threaded = false;
	cr_assert_eq(sirq_napi_set(lc, 0, &p), 0);
	runs = net_rx_runs(lc);
	polls = napi_info(lc).thread_polls;
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, 3 * PACKETS, RECEIVE_TIMEOUT_MS));
	cr_expect_eq(packets_on(&seen, tid), PACKETS,
		     "the thread took packets after napi-set threaded=0");
	cr_expect_gt(net_rx_runs(lc), runs, "NET_RX did not take it back");
	info = napi_info(lc);
	cr_expect(!info.params.threaded);
	cr_expect_eq(info.thread_polls, polls);

	join_and_free(lc);
	cr_expect_eq(seen.received, 3 * PACKETS);
}

/*
 * "A context made threaded while the lcore runs gets its thread now"
 * (sirq.h): once napi-set returns, napi-get names it.
 */
Test(lcore_napi, napi_set_threaded_returns_with_the_thread_running,
     .timeout = 60)
{
	struct sirq_napi_params threaded = { .threaded = true };
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	int tid;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	dispatcher_launch(lc);
	/* Set before the loop runs, it would get its thread at the start. */
	wait_lcore_running(lc);
	cr_assert_eq(sirq_napi_set(lc, 0, &threaded), 0);
	info = napi_info(lc);
	tid = wait_napi_thread(lc);
	cr_expect_gt(info.thread_tid, 0,
		     "napi-get right after napi-set threaded: thread_tid %d "
		     "(%d a moment later)", info.thread_tid, tid);
	cr_expect_gt(tid, 0);
	join_and_free(lc);
}

/* ... and one made threaded before the launch gets it as the lcore starts. */
Test(lcore_napi, napi_set_threaded_before_the_launch_starts_with_the_lcore,
     .timeout = 60)
{
	struct sirq_napi_params threaded = { .threaded = true };
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct rte_ring *rx;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	cr_assert_eq(sirq_napi_set(lc, 0, &threaded), 0);
	cr_expect_lt(napi_info(lc).thread_tid, 0, "a thread before the launch");
	dispatcher_launch(lc);
	wait_lcore_running(lc);
	cr_expect_gt(napi_info(lc).thread_tid, 0,
		     "no thread once the lcore's loop runs");
	join_and_free(lc);
}

Test(lcore_napi, napi_set_refuses_a_deferral_without_timeout_and_unknown_ids,
     .timeout = 60)
{
	struct sirq_napi_params deferral = { .defer_hard_irqs = 2,
					     .gro_flush_timeout_ns = 20000 };
	struct sirq_napi_params no_timeout = { .defer_hard_irqs = 5 };
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	dispatcher_launch(lc);
	cr_assert_eq(sirq_napi_set(lc, 0, &deferral), 0);

	cr_expect_eq(sirq_napi_params_check(&no_timeout), -EINVAL);
	cr_expect_eq(sirq_napi_set(lc, 0, &no_timeout), -EINVAL);
	cr_expect_eq(sirq_napi_set(lc, 1, &deferral), -EINVAL);
	cr_expect_eq(sirq_napi_set(lc, UINT32_MAX, &deferral), -EINVAL);
	cr_expect_eq(sirq_napi_set(lc, 0, NULL), -EINVAL);
	cr_expect_eq(sirq_napi_get(lc, 1, &info), -EINVAL);

	info = napi_info(lc);
	cr_expect_eq(info.params.defer_hard_irqs, 2, "a refused set changed it");
	cr_expect_eq(info.params.gro_flush_timeout_ns, 20000);
	cr_expect(!info.params.threaded);

	/* Still receiving. */
	send_packets(rx, PACKETS);
	cr_expect(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS));
	join_and_free(lc);
}

/* An irq-mode lcore (SCHED_FIFO, sleeping between looks) deferring 4 x 50 us. */
static struct sirq_lcore *
deferring_irq_lcore(struct rx_seen *seen, struct rte_ring **rx)
{
	struct sirq_lcore_conf conf;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.mode = SIRQ_MODE_IRQ;
	conf.napi.defer_hard_irqs = DEFER_HARD_IRQS;
	conf.napi.gro_flush_timeout_ns = GRO_FLUSH_TIMEOUT_NS;
	return napi_lcore(&conf, ring_port(rx), seen);
}

/*
 * Each completion of a burst leaves the interrupt off and arms the
 * context's timer (napi_watchdog()), which schedules it again; once the
 * traffic stops, defer_hard_irqs empty polls in a row turn it back on,
 * and no timer fires any more.
 */
Test(lcore_napi, deferred_interrupts_are_re_polled_by_the_timer_then_turned_back_on,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_napi_info info, later;
	struct sirq_lcore *lc;
	struct rte_ring *rx;

	lc = deferring_irq_lcore(&seen, &rx);
	dispatcher_launch(lc);
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS),
		  "received %" PRIu64 " of %d", seen.received, PACKETS);

	cr_assert(wait_napi_irq_on(lc, &info),
		  "%d ms after the traffic: scheduled %d, irq masked %d, "
		  "%" PRIu64 " deferred, %" PRIu64 " by the timer",
		  STATE_TIMEOUT_MS, info.scheduled, info.irq_masked,
		  info.deferred, info.watchdog);
	cr_expect_gt(info.deferred, 0, "no completion left the interrupt off");
	cr_expect_gt(info.watchdog, 0, "the timer never scheduled it");
	/* Only a deferral arms the timer, and only the timer ends one. */
	cr_expect_eq(info.watchdog, info.deferred,
		     "%" PRIu64 " timer schedules for %" PRIu64 " deferrals",
		     info.watchdog, info.deferred);
	cr_expect_eq(info.params.defer_hard_irqs, DEFER_HARD_IRQS);

	usleep(QUIET_AFTER_IRQ_ON_MS * 1000);
	later = napi_info(lc);
	cr_expect_eq(later.watchdog, info.watchdog,
		     "the timer fired with the interrupt on");
	cr_expect(!later.irq_masked && !later.scheduled);

	join_and_free(lc);
	cr_expect_eq(seen.received, PACKETS);
}

/*
 * One packet, the interrupt on: the poll that takes it and the
 * defer_hard_irqs - 1 empty polls after it each leave the interrupt off;
 * the timer schedules each next one; the defer_hard_irqs-th empty poll
 * turns the interrupt back on (napi_complete_done() of 6.13).
 */
Test(lcore_napi, one_packet_costs_defer_hard_irqs_empty_polls_from_the_timer,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_lcore_stats before, after;
	struct sirq_napi_info idle, info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;

	lc = deferring_irq_lcore(&seen, &rx);
	dispatcher_launch(lc);
	wait_lcore_running(lc);
	cr_assert(wait_napi_irq_on(lc, &idle));
	sirq_lcore_stats_get(lc, &before);

	send_packets(rx, 1);
	cr_assert(wait_for(&seen.received, 1, RECEIVE_TIMEOUT_MS));
	cr_assert(wait_napi_irq_on(lc, &info),
		  "scheduled %d, irq masked %d, %" PRIu64 " deferred, %" PRIu64
		  " by the timer", info.scheduled, info.irq_masked,
		  info.deferred - idle.deferred, info.watchdog - idle.watchdog);
	sirq_lcore_stats_get(lc, &after);

	cr_expect_eq(info.deferred - idle.deferred, DEFER_HARD_IRQS);
	cr_expect_eq(info.watchdog - idle.watchdog, DEFER_HARD_IRQS);
	cr_expect_eq(after.rx_polls - before.rx_polls, DEFER_HARD_IRQS + 1,
		     "%" PRIu64 " polls: one with the packet, then the empty ones",
		     after.rx_polls - before.rx_polls);
	cr_expect_eq(after.rx_packets - before.rx_packets, 1);

	join_and_free(lc);
	cr_expect_eq(seen.received, 1);
}

/*
 * An application thread: a plain pthread (no lcore id) pinned to @cpus,
 * that calls @fn once, or in a loop until told to stop.
 */
struct app_thread {
	pthread_t thread;
	rte_cpuset_t cpus;
	struct sirq_lcore *lc;
	int (*fn)(struct app_thread *t);
	bool loop;
	uint32_t stop;
	int pin_error;
	int tid;
	unsigned int lcore_after;	/* rte_lcore_id() after the last call */
	int ret;			/* @fn's, if called once */
	uint64_t calls;
	uint64_t packets;		/* sum of busy polls' returns */
	uint64_t errors;
	int first_error;
};

static void *
app_thread_main(void *arg)
{
	struct app_thread *t = arg;

	t->pin_error = pthread_setaffinity_np(pthread_self(), sizeof(t->cpus),
					      &t->cpus);
	__atomic_store_n(&t->tid, (int)gettid(), __ATOMIC_RELEASE);
	if (t->pin_error != 0)
		return NULL;
	do {
		t->ret = t->fn(t);
		t->lcore_after = rte_lcore_id();
		__atomic_fetch_add(&t->calls, 1, __ATOMIC_RELEASE);
	} while (t->loop && !__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE));
	return NULL;
}

static void
app_thread_start(struct app_thread *t)
{
	cr_assert_eq(pthread_create(&t->thread, NULL, app_thread_main, t), 0);
}

static void
app_thread_join(struct app_thread *t)
{
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
	cr_assert_eq(pthread_join(t->thread, NULL), 0);
	cr_assert_eq(t->pin_error, 0, "pthread_setaffinity_np: %s",
		     strerror(t->pin_error));
	/* It ran as the lcore only while it held the lock. */
	cr_expect_eq(t->lcore_after, LCORE_ID_ANY,
		     "the application thread is lcore %u after the call",
		     t->lcore_after);
}

/* @fn(@lc) once on a thread pinned to @cpus; its return value. */
static int
on_app_thread(struct sirq_lcore *lc, const rte_cpuset_t *cpus,
	      int (*fn)(struct app_thread *t))
{
	struct app_thread t = { .lc = lc, .cpus = *cpus, .fn = fn };

	app_thread_start(&t);
	app_thread_join(&t);
	return t.ret;
}

static int
busy_poll(struct app_thread *t)
{
	int ret = sirq_napi_busy_poll(t->lc, 0, BUSY_BUDGET, true,
				      BUSY_POLL_US);

	if (ret >= 0) {
		__atomic_fetch_add(&t->packets, (uint64_t)ret, __ATOMIC_RELAXED);
	} else if (t->errors++ == 0) {
		t->first_error = ret;
	}
	return ret;
}

static int
busy_poll_budget_0(struct app_thread *t)
{
	return sirq_napi_busy_poll(t->lc, 0, 0, true, BUSY_POLL_US);
}

static int
busy_poll_budget_257(struct app_thread *t)
{
	return sirq_napi_busy_poll(t->lc, 0, 257, true, BUSY_POLL_US);
}

static int
busy_poll_napi_1(struct app_thread *t)
{
	return sirq_napi_busy_poll(t->lc, 1, BUSY_BUDGET, true, BUSY_POLL_US);
}

static int
suspend_irqs(struct app_thread *t)
{
	return sirq_napi_suspend_irqs(t->lc, 0);
}

static int
resume_irqs(struct app_thread *t)
{
	return sirq_napi_resume_irqs(t->lc, 0);
}

static int
suspend_irqs_napi_1(struct app_thread *t)
{
	return sirq_napi_suspend_irqs(t->lc, 1);
}

static int
resume_irqs_napi_1(struct app_thread *t)
{
	return sirq_napi_resume_irqs(t->lc, 1);
}

/*
 * napi_busy_loop() from an application thread on the lcore's CPU, with
 * prefer_busy_poll, while the test sends: every packet arrives, some of
 * them on the application's thread, and napi-get counts what its polls
 * took.
 */
Test(lcore_napi, an_application_thread_on_the_lcores_cpu_busy_polls_the_queue,
     .timeout = 60)
{
	struct app_thread poller = { 0 };
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	uint64_t sent = 0;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	dispatcher_launch(lc);
	wait_lcore_running(lc);		/* until then, -EAGAIN */

	poller.lc = lc;
	poller.cpus = rte_lcore_cpuset(TEST_LCORE);
	poller.fn = busy_poll;
	poller.loop = true;
	app_thread_start(&poller);
	cr_assert(wait_for(&poller.calls, 1, RECEIVE_TIMEOUT_MS));

	/* Bursts until the poller got some (it shares the CPU), PACKETS at least. */
	while (sent < PACKETS ||
	       (packets_on(&seen, poller.tid) == 0 && sent < BUSY_MAX_PACKETS)) {
		send_packets(rx, ENQUEUE_BURST);
		sent += ENQUEUE_BURST;
		cr_assert(wait_for(&seen.received, sent, RECEIVE_TIMEOUT_MS),
			  "received %" PRIu64 " of %" PRIu64, seen.received,
			  sent);
	}
	app_thread_join(&poller);

	info = napi_info(lc);
	cr_expect_eq(poller.errors, 0, "%" PRIu64 " busy polls failed, first %d",
		     poller.errors, poller.first_error);
	cr_expect_gt(packets_on(&seen, poller.tid), 0,
		     "none of %" PRIu64 " packets on the busy-polling thread",
		     sent);
	cr_expect_gt(info.busy_packets, 0);
	cr_expect_gt(info.busy_polls, 0);
	cr_expect_eq(info.busy_packets, poller.packets,
		     "napi-get counts %" PRIu64 ", the calls returned %" PRIu64,
		     info.busy_packets, poller.packets);
	/* Its bottom-half enables may also run NET_RX there. */
	cr_expect_geq(packets_on(&seen, poller.tid), info.busy_packets);
	cr_expect(!info.in_busy_poll, "still owned after the poller left");

	join_and_free(lc);
	cr_expect_eq(seen.received, sent);
}

/*
 * Busy polling is for the lcore's CPU while the lcore runs: another
 * CPU's thread gets -EPERM, a budget outside 1..256 or an unknown
 * context -EINVAL, a lcore not running -EAGAIN.
 */
Test(lcore_napi, busy_poll_refuses_other_cpus_bad_arguments_and_a_stopped_lcore,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	rte_cpuset_t lcore_cpus, other_cpus, both;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	lcore_cpus = rte_lcore_cpuset(TEST_LCORE);
	/* The main lcore's CPU: another one (EAL pins lcore n to CPU n). */
	other_cpus = rte_lcore_cpuset(rte_get_main_lcore());
	CPU_AND(&both, &lcore_cpus, &other_cpus);
	cr_assert_eq(CPU_COUNT(&both), 0, "the two lcores share a CPU");

	/* Not running yet: its queues are left alone. */
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, busy_poll), -EAGAIN);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, suspend_irqs), -EAGAIN);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, resume_irqs), -EAGAIN);

	dispatcher_launch(lc);
	wait_lcore_running(lc);
	cr_expect_eq(on_app_thread(lc, &other_cpus, busy_poll), -EPERM);
	cr_expect_eq(on_app_thread(lc, &other_cpus, suspend_irqs), -EPERM);
	cr_expect_eq(on_app_thread(lc, &other_cpus, resume_irqs), -EPERM);
	/* The main lcore is another CPU's thread too. */
	cr_expect_eq(sirq_napi_busy_poll(lc, 0, BUSY_BUDGET, true, 0), -EPERM);

	cr_expect_eq(on_app_thread(lc, &lcore_cpus, busy_poll_budget_0), -EINVAL);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, busy_poll_budget_257),
		     -EINVAL);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, busy_poll_napi_1), -EINVAL);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, suspend_irqs_napi_1),
		     -EINVAL);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, resume_irqs_napi_1),
		     -EINVAL);

	cr_expect_eq(on_app_thread(lc, &lcore_cpus, suspend_irqs), 0);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, resume_irqs), 0);
	cr_expect_geq(on_app_thread(lc, &lcore_cpus, busy_poll), 0);

	/* Still receiving, through NET_RX. */
	send_packets(rx, PACKETS);
	cr_expect(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS));

	dispatcher_join(lc);
	cr_expect_eq(on_app_thread(lc, &lcore_cpus, busy_poll), -EAGAIN,
		     "busy poll of a stopped lcore");
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "%u mbufs leaked", pool_in_use());
}


static bool
json_has(const char *json, const char *text)
{
	return strstr(json, text) != NULL;
}

/* A refused command answers with the reason: {"<command>": {"error": ...}}. */
static void
expect_refused(const char *cmd, const char *name)
{
	static char out[4096];
	char want[64];

	telemetry(cmd, out, sizeof(out));
	snprintf(want, sizeof(want), "{\"%s\": {\"error\": \"", name);
	cr_expect(json_has(out, want), "%s: %s", cmd, out);
}

/* /sirq/napi,1,0 shows NAPI 0 threaded, defer 2, 20 us, thread @tid. */
static void
expect_threaded_napi(const char *json, int64_t tid)
{
	cr_expect(json_has(json, "\"mode\": \"threaded\""), "%s", json);
	cr_expect_eq(json_i64(json, "defer_hard_irqs"), 2, "%s", json);
	cr_expect_eq(json_i64(json, "gro_flush_timeout"), 20000, "%s", json);
	cr_expect_eq(json_i64(json, "pid"), tid, "%s", json);
}

Test(lcore_napi, telemetry_napi_get_and_napi_set, .timeout = 60)
{
	static char out[65536];
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	char cmd[128];
	int64_t pid;
	int tid;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	cr_assert(sirq_telemetry_register() == 0);
	dispatcher_launch(lc);
	wait_lcore_running(lc);		/* napi-set's thread comes at once */

	/* napi-get of every context of the lcore. */
	snprintf(cmd, sizeof(cmd), "/sirq/napi,%d", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(json_has(out, "\"napi0\": {"), "%s", out);
	cr_expect(!json_has(out, "\"napi1\""), "%s", out);
	cr_expect(json_has(out, "\"mode\": \"softirq\""), "%s", out);
	cr_expect_eq(json_i64(out, "pid"), -1, "%s", out);
	cr_expect_eq(json_i64(out, "defer_hard_irqs"), 0, "%s", out);

	/* napi-set replies with the context as it is now. */
	snprintf(cmd, sizeof(cmd),
		 "/sirq/napi_set,%d,0,threaded=1,defer_hard_irqs=2,gro_flush_timeout=20000",
		 TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(json_has(out, "\"mode\": \"threaded\""), "%s", out);
	cr_expect_eq(json_i64(out, "defer_hard_irqs"), 2, "%s", out);
	cr_expect_eq(json_i64(out, "gro_flush_timeout"), 20000, "%s", out);
	pid = json_i64(out, "pid");
	cr_expect_gt(pid, 0, "napi-set threaded=1 replied without a thread: %s",
		     out);

	info = napi_info(lc);
	cr_assert(info.params.threaded);
	cr_expect_eq(info.params.defer_hard_irqs, 2);
	cr_expect_eq(info.params.gro_flush_timeout_ns, 20000);
	tid = wait_napi_thread(lc);
	cr_assert_gt(tid, 0, "no thread %d ms after napi-set threaded=1",
		     STATE_TIMEOUT_MS);
	if (pid > 0)
		cr_expect_eq(pid, tid);
	pid = tid;

	snprintf(cmd, sizeof(cmd), "/sirq/napi,%d,0", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	expect_threaded_napi(out, pid);

	/* Refused, and nothing changes. */
	snprintf(cmd, sizeof(cmd), "/sirq/napi_set,%d,0,bogus=1", TEST_LCORE);
	expect_refused(cmd, "/sirq/napi_set");
	snprintf(cmd, sizeof(cmd),
		 "/sirq/napi_set,%d,0,defer_hard_irqs=3,gro_flush_timeout=0",
		 TEST_LCORE);
	expect_refused(cmd, "/sirq/napi_set");
	snprintf(cmd, sizeof(cmd), "/sirq/napi,%d,99", TEST_LCORE);
	expect_refused(cmd, "/sirq/napi");
	snprintf(cmd, sizeof(cmd), "/sirq/napi,%d,0", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	expect_threaded_napi(out, pid);
	info = napi_info(lc);
	cr_expect(info.params.threaded);
	cr_expect_eq(info.params.defer_hard_irqs, 2);
	cr_expect_eq(info.params.gro_flush_timeout_ns, 20000);

	/* The thread telemetry named is the one that receives. */
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS));
	cr_expect_eq(packets_on(&seen, (int)pid), PACKETS);

	join_and_free(lc);
}

/* NAPI 0's counters that sirq_napi_info has no room for. */
static uint64_t
irq_unmasks(const struct sirq_lcore *lc)
{
	return __atomic_load_n(&lc->rx.sd.counters[0].irq_unmasks,
			       __ATOMIC_RELAXED);
}

static uint64_t
thread_busy_polls(const struct sirq_lcore *lc)
{
	return __atomic_load_n(&lc->rx.sd.counters[0].thread_busy_polls,
			       __ATOMIC_RELAXED);
}

/* Wait until @get(lc) is above @than; false after the timeout. */
static bool
wait_above(const struct sirq_lcore *lc,
	   uint64_t (*get)(const struct sirq_lcore *), uint64_t than)
{
	uint64_t end = now_ns() + STATE_TIMEOUT_MS * 1000000ULL;

	while (get(lc) <= than)
		if (now_ns() >= end)
			return false;
		else
			usleep(1000);
	return true;
}

/*
 * Threaded busy-poll: the thread polls the queue with no packet coming
 * (it does not sleep), takes what comes, and no poll completes the
 * context, so its interrupt is never turned back on (irq_unmasks stays
 * 0, napi-get says scheduled and in_busy_poll). Back to enabled, the
 * next poll completes it and the thread sleeps; busy-poll again, then
 * disabled: NET_RX takes it over at once, without -EBUSY.
 */
Test(lcore_napi, threaded_busy_poll_polls_without_end_and_never_unmasks,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_params p;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	uint64_t busy, polls, runs, unmasks;
	int tid;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.napi.threaded = SIRQ_NAPI_THREADED_BUSY_POLL;
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	cr_expect_eq(napi_info(lc).params.threaded,
		     SIRQ_NAPI_THREADED_BUSY_POLL);
	dispatcher_launch(lc);
	wait_lcore_running(lc);
	tid = wait_napi_thread(lc);
	cr_assert_gt(tid, 0, "no thread in busy-poll mode");

	/* No packet yet: it polls all the same, again and again. */
	cr_assert(wait_above(lc, thread_busy_polls, 1000),
		  "%" PRIu64 " busy polls in %d ms without packets",
		  thread_busy_polls(lc), STATE_TIMEOUT_MS);
	info = napi_info(lc);
	cr_expect(info.scheduled, "a busy-polled context is idle");
	cr_expect(info.in_busy_poll);
	cr_expect_eq(irq_unmasks(lc), 0, "the interrupt was turned back on");

	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS),
		  "received %" PRIu64 " of %d", seen.received, PACKETS);
	cr_expect_eq(packets_on(&seen, tid), PACKETS);
	cr_expect_eq(net_rx_runs(lc), 0, "NET_RX ran for a busy-polled queue");
	busy = thread_busy_polls(lc);
	cr_assert(wait_above(lc, thread_busy_polls, busy + 1000),
		  "the thread stopped polling after the packets");
	cr_expect_eq(irq_unmasks(lc), 0, "the interrupt was turned back on");
	info = napi_info(lc);
	cr_expect(info.scheduled && info.in_busy_poll);

	/* Enabled: completed at the next poll, then the thread sleeps. */
	p = info.params;
	p.threaded = SIRQ_NAPI_THREADED_ENABLED;
	cr_assert_eq(sirq_napi_set(lc, 0, &p), 0,
		     "busy-poll to enabled refused");
	cr_assert(wait_napi_irq_on(lc, &info),
		  "still scheduled %d ms after napi-set enabled",
		  STATE_TIMEOUT_MS);
	cr_expect(!info.in_busy_poll);
	cr_expect_gt(irq_unmasks(lc), 0);
	usleep(20000);
	polls = napi_info(lc).thread_polls;
	busy = thread_busy_polls(lc);
	usleep(100000);
	cr_expect_eq(napi_info(lc).thread_polls, polls,
		     "the thread polled an idle queue in enabled mode");
	unmasks = irq_unmasks(lc);
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, 2 * PACKETS, RECEIVE_TIMEOUT_MS));
	cr_expect_eq(packets_on(&seen, tid), 2 * PACKETS);
	cr_expect_eq(thread_busy_polls(lc), busy);
	cr_assert(wait_above(lc, irq_unmasks, unmasks),
		  "threaded NAPI's completion did not turn the interrupt on");

	/* Busy-poll again, then disabled: NET_RX takes it as it is. */
	p.threaded = SIRQ_NAPI_THREADED_BUSY_POLL;
	cr_assert_eq(sirq_napi_set(lc, 0, &p), 0);
	cr_assert(wait_above(lc, thread_busy_polls, busy + 100),
		  "busy-poll set again: the thread does not poll");
	unmasks = irq_unmasks(lc);
	usleep(20000);
	cr_expect_eq(irq_unmasks(lc), unmasks, "unmasked while busy polled");
	runs = net_rx_runs(lc);
	p.threaded = SIRQ_NAPI_THREADED_DISABLED;
	cr_assert_eq(sirq_napi_set(lc, 0, &p), 0,
		     "busy-poll to disabled refused (a busy-polled context is never idle)");
	cr_assert(wait_napi_irq_on(lc, &info),
		  "still scheduled %d ms after napi-set disabled",
		  STATE_TIMEOUT_MS);
	cr_expect(!info.in_busy_poll);
	busy = thread_busy_polls(lc);
	polls = napi_info(lc).thread_polls;
	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, 3 * PACKETS, RECEIVE_TIMEOUT_MS));
	/*
	 * Its thread polls it no more. The packets may still arrive on the
	 * thread's TID: a wake-up left from busy-poll lets it run the NET_RX
	 * its bh enable finds pending, as local_bh_enable() does in any
	 * task (seen once in ten runs beside a busy-polling process).
	 */
	cr_expect_eq(napi_info(lc).thread_polls, polls,
		     "the thread polled it after napi-set disabled");
	cr_expect_gt(net_rx_runs(lc), runs, "NET_RX did not take it over");
	cr_expect_eq(thread_busy_polls(lc), busy);

	join_and_free(lc);
	cr_expect_eq(seen.received, 3 * PACKETS);
}

/*
 * Each context counts what every poll took from its queue, NET_RX's and
 * its thread's alike (napi-get's packets: the per-queue share that RSS
 * spreads), and no Rx interrupt in poll mode.
 */
Test(lcore_napi, each_context_counts_the_packets_of_its_queue,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_napi_info a, b;
	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats ls;
	struct rte_ring *rx0, *rx1;
	struct sirq_lcore *lc;
	uint16_t p0, p1;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	p0 = ring_port_named("a", &rx0);
	p1 = ring_port_named("b", &rx1);
	lc = napi_lcore(&conf, p0, &seen);
	cr_assert(sirq_lcore_add_rx_queue(lc, p1, 0, seen_rx, &seen) == 0);
	dispatcher_launch(lc);
	wait_lcore_running(lc);
	send_packets(rx0, 300);
	send_packets(rx1, 77);
	cr_assert(wait_for(&seen.received, 377, RECEIVE_TIMEOUT_MS),
		  "received %" PRIu64 " of 377", seen.received);

	/* Context 1 to its thread: what the thread takes counts too. */
	cr_assert_eq(sirq_napi_get(lc, 1, &b), 0);
	b.params.threaded = SIRQ_NAPI_THREADED_ENABLED;
	cr_assert_eq(sirq_napi_set(lc, 1, &b.params), 0);
	send_packets(rx1, 50);
	cr_assert(wait_for(&seen.received, 427, RECEIVE_TIMEOUT_MS),
		  "received %" PRIu64 " of 427", seen.received);
	cr_assert_eq(sirq_napi_get(lc, 1, &b), 0);
	cr_expect_gt(b.thread_polls, 0, "context 1's thread never polled");

	cr_assert_eq(sirq_napi_get(lc, 0, &a), 0);
	cr_expect_eq(a.packets, 300);
	cr_expect_eq(b.packets, 127);
	cr_expect_eq(a.irqs + b.irqs, 0, "Rx interrupts in poll mode");
	sirq_lcore_stats_get(lc, &ls);
	cr_expect_eq(a.packets + b.packets, ls.rx_packets);
	join_and_free(lc);
}

/* A CPU hog's one round: the application thread loops on it. */
static int
spin_round(struct app_thread *t)
{
	volatile unsigned int i;

	for (i = 0; i < 10000; i++)
		;
	RTE_SET_USED(t);
	return 0;
}

/*
 * Threaded busy-poll shares its CPU as a fair-class thread does: beside
 * a thread that never sleeps, pinned to the same CPU, it still polls
 * tens of thousands of times a second. Its loop called sched_yield()
 * after every poll before; under EEVDF a yield gives up the rest of the
 * slice, and beside one busy task the thread polled 1,364 times a
 * second (against 186,000 alone), so that the case above failed now and
 * then beside a busy-polling process.
 */
Test(lcore_napi, threaded_busy_poll_keeps_polling_beside_a_busy_thread,
     .timeout = 60)
{
	struct app_thread hog = { .fn = spin_round, .loop = true };
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	uint64_t busy, start, ns;
	bool ok;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.napi.threaded = SIRQ_NAPI_THREADED_BUSY_POLL;
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	dispatcher_launch(lc);
	wait_lcore_running(lc);
	cr_assert_gt(wait_napi_thread(lc), 0, "no thread in busy-poll mode");

	hog.cpus = rte_lcore_cpuset(TEST_LCORE);
	app_thread_start(&hog);
	while (__atomic_load_n(&hog.calls, __ATOMIC_ACQUIRE) == 0)
		usleep(1000);
	busy = thread_busy_polls(lc);
	start = now_ns();
	ok = wait_above(lc, thread_busy_polls, busy + BUSY_BESIDE_HOG);
	ns = now_ns() - start;
	busy = thread_busy_polls(lc) - busy;
	app_thread_join(&hog);
	cr_assert(ok, "%" PRIu64 " busy polls in %d ms beside a busy thread "
		  "on the lcore's CPU (%" PRIu64 " rounds of it)", busy,
		  STATE_TIMEOUT_MS, hog.calls);
	cr_log_info("%d busy polls in %.1f ms beside a busy thread",
		    BUSY_BESIDE_HOG, ns / 1e6);
	join_and_free(lc);
}

/* Out-of-range modes are refused, by napi-set and at create. */
Test(lcore_napi, napi_set_refuses_a_threaded_mode_that_is_none,
     .timeout = 60)
{
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_params p = { .threaded = SIRQ_NAPI_THREADED_MAX };
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	uint16_t port;

	eal_start(NULL);
	cr_expect_eq(sirq_napi_params_check(&p), -EINVAL);
	sirq_lcore_conf_default(&conf);
	conf.napi.threaded = SIRQ_NAPI_THREADED_MAX;
	cr_expect(sirq_lcore_create(TEST_LCORE, &conf) == NULL,
		  "created with threaded %u", conf.napi.threaded);
	cr_expect_eq(rte_errno, EINVAL);
	sirq_lcore_conf_default(&conf);
	port = ring_port(&rx);
	lc = napi_lcore(&conf, port, &seen);
	cr_expect_eq(sirq_napi_set(lc, 0, &p), -EINVAL);
	p.threaded = 255;
	cr_expect_eq(sirq_napi_set(lc, 0, &p), -EINVAL);
	cr_expect_eq(napi_info(lc).params.threaded, SIRQ_NAPI_THREADED_DISABLED);
	cr_expect_eq(napi_info(lc).thread_tid, -1);
	sirq_lcore_free(lc);
}

/* /sirq/napi_set takes netdev-genl's names and refuses others, saying why. */
Test(lcore_napi, telemetry_napi_set_threaded_busy_poll, .timeout = 60)
{
	static char out[65536];
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;
	struct rte_ring *rx;
	char cmd[128];

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, ring_port(&rx), &seen);
	cr_assert(sirq_telemetry_register() == 0);
	dispatcher_launch(lc);
	wait_lcore_running(lc);

	snprintf(cmd, sizeof(cmd), "/sirq/napi,%d,0", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(json_has(out, "\"threaded\": \"disabled\""), "%s", out);

	snprintf(cmd, sizeof(cmd), "/sirq/napi_set,%d,0,threaded=busy-poll",
		 TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(json_has(out, "\"mode\": \"threaded\""), "%s", out);
	cr_expect(json_has(out, "\"threaded\": \"busy-poll\""), "%s", out);
	cr_assert_eq(napi_info(lc).params.threaded,
		     SIRQ_NAPI_THREADED_BUSY_POLL);
	cr_assert(wait_above(lc, thread_busy_polls, 100));
	snprintf(cmd, sizeof(cmd), "/sirq/napi,%d,0", TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect_gt(json_i64(out, "thread_busy_polls"), 0, "%s", out);
	cr_expect_eq(json_i64(out, "irq_unmasks"), 0, "%s", out);
	cr_expect_eq(json_i64(out, "in_busy_poll"), 1, "%s", out);

	/* A bad value: refused, the reason names it, nothing changes. */
	snprintf(cmd, sizeof(cmd), "/sirq/napi_set,%d,0,threaded=busy",
		 TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(json_has(out, "\"error\": \"bad value 'busy' for threaded"),
		  "%s", out);
	cr_expect_eq(napi_info(lc).params.threaded,
		     SIRQ_NAPI_THREADED_BUSY_POLL);

	/* The old spellings still work: 1 is enabled, 0 disabled. */
	snprintf(cmd, sizeof(cmd), "/sirq/napi_set,%d,0,threaded=1",
		 TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(json_has(out, "\"threaded\": \"enabled\""), "%s", out);
	snprintf(cmd, sizeof(cmd), "/sirq/napi_set,%d,0,threaded=enabled",
		 TEST_LCORE);
	telemetry(cmd, out, sizeof(out));
	cr_expect(json_has(out, "\"threaded\": \"enabled\""), "%s", out);

	send_packets(rx, PACKETS);
	cr_assert(wait_for(&seen.received, PACKETS, RECEIVE_TIMEOUT_MS));
	join_and_free(lc);
}

/* Packets received by every thread but @tid. */
static uint64_t
packets_but(const struct rx_seen *s, int tid)
{
	uint32_t i, nb = __atomic_load_n(&s->nb_tids, __ATOMIC_ACQUIRE);
	uint64_t sum = __atomic_load_n(&s->untracked, __ATOMIC_RELAXED);

	for (i = 0; i < nb; i++)
		if (s->tid[i] != tid)
			sum += __atomic_load_n(&s->packets[i], __ATOMIC_RELAXED);
	return sum;
}

/* Wait until @fn(@s, @tid) passes @floor; false after the timeout. */
static bool
wait_packets(uint64_t (*fn)(const struct rx_seen *, int),
	     const struct rx_seen *s, int tid, uint64_t floor)
{
	uint64_t end = now_ns() + STATE_TIMEOUT_MS * 1000000ULL;

	while (fn(s, tid) <= floor) {
		if (now_ns() >= end)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * A queue under a constant flood is never idle: its context stays
 * scheduled from one NET_RX run to the next. napi-set threaded=enabled
 * was refused (-EBUSY, "try again") every time under net_null, and its
 * refusal left a thread behind. Now NET_RX hands the context over the
 * next time it comes to it: the thread receives, and from then on no
 * other thread does. Back to disabled, NET_RX takes it over at once.
 */
Test(lcore_napi, napi_set_threaded_applies_under_a_flood_and_back,
     .timeout = 60)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_napi_params threaded = {
		.threaded = SIRQ_NAPI_THREADED_ENABLED,
	};
	struct sirq_napi_params disabled = { 0 };
	struct rx_seen seen = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	uint64_t others, mine;
	int tid;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	lc = napi_lcore(&conf, 0, &seen);
	dispatcher_launch(lc);
	cr_assert(wait_packets(packets_but, &seen, -1, 100000),
		  "the flood never came");
	cr_assert(napi_info(lc).scheduled, "idle under a flood");

	cr_assert_eq(sirq_napi_set(lc, 0, &threaded), 0);
	info = napi_info(lc);
	cr_expect_eq(info.params.threaded, SIRQ_NAPI_THREADED_ENABLED);
	tid = info.thread_tid;
	cr_assert_gt(tid, 0, "no thread after napi-set threaded");
	cr_assert(wait_packets(packets_on, &seen, tid, 0),
		  "its thread received nothing in %d ms: %" PRIu64 " polls",
		  STATE_TIMEOUT_MS, napi_info(lc).thread_polls);
	/* Handed over: NET_RX (dispatcher, sirqd) has received its last. */
	others = packets_but(&seen, tid);
	mine = packets_on(&seen, tid);
	cr_assert(wait_packets(packets_on, &seen, tid, mine + 100000));
	cr_expect_eq(packets_but(&seen, tid), others,
		     "NET_RX polled a context its thread had: %" PRIu64
		     " packets more", packets_but(&seen, tid) - others);
	cr_expect_gt(napi_info(lc).thread_polls, 0);

	cr_assert_eq(sirq_napi_set(lc, 0, &disabled), 0);
	cr_assert(wait_packets(packets_but, &seen, tid, others),
		  "NET_RX did not take it back");
	mine = packets_on(&seen, tid);
	cr_assert(wait_packets(packets_but, &seen, tid,
			       packets_but(&seen, tid) + 100000));
	cr_expect_eq(packets_on(&seen, tid), mine,
		     "its thread polled it after disabled: %" PRIu64
		     " packets more", packets_on(&seen, tid) - mine);
	join_and_free(lc);
}
