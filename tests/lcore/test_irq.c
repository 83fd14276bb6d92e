/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * irq mode: the dispatcher sleeps when there is nothing to do, and wakes
 * for Rx interrupts (net_tap, driven by the kernel from a network
 * namespace the test creates) and for rte_timer deadlines. The tick is set
 * to a whole second so that only those events can explain what it did.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_timer.h>
#include <rte_udp.h>

#include "eal_harness.h"

#define LONG_TICK_US 1000000		/* nothing else wakes it */
#define QUIET_MS 1000
/* Poll mode spends all of it; a sleeping dispatcher almost none. */
#define QUIET_CPU_SHARE_MAX 0.25
#define TIMER_PERIOD_MS 20
#define TIMER_RUN_MS 400
#define UDP_PORT 9
#define UDP_PACKETS 20

static struct sirq_lcore *
irq_lcore(void)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	sirq_lcore_conf_default(&conf);
	conf.mode = SIRQ_MODE_IRQ;
	conf.irq_tick_us = LONG_TICK_US;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	return lc;
}

static double
process_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

Test(lcore_irq, idle_dispatcher_sleeps, .timeout = 30)
{
	struct sirq_lcore_stats ls;
	struct sirq_lcore *lc;
	double cpu;

	eal_start(NULL);
	lc = irq_lcore();
	dispatcher_launch(lc);
	usleep(50 * 1000);
	cpu = process_cpu_seconds();
	usleep(QUIET_MS * 1000);
	cpu = process_cpu_seconds() - cpu;
	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, &ls);

	cr_expect_lt(cpu, QUIET_CPU_SHARE_MAX * QUIET_MS / 1000.0,
		     "the process used %.3f s of CPU in a quiet %d ms", cpu,
		     QUIET_MS);
	cr_expect_gt(ls.irq_sleeps, 0);
	sirq_lcore_free(lc);
}

/* An irq-mode lcore looking every 100 us, idle for QUIET_MS at @tick_hz. */
static void
quiet_run(uint32_t tick_hz, struct sirq_lcore_stats *ls)
{
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(NULL);
	sirq_lcore_conf_default(&conf);
	conf.mode = SIRQ_MODE_IRQ;
	conf.params.tick_hz = tick_hz;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	dispatcher_launch(lc);
	usleep(QUIET_MS * 1000);
	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, ls);
	sirq_lcore_free(lc);
}

/*
 * irq_exit() follows an interrupt: with no queue, timer or kick firing,
 * the dispatcher's looks (every irq_tick_us) are not interrupts and take
 * no decision; only the scheduler tick (HZ 250) does.
 */
Test(lcore_irq, a_look_that_finds_no_interrupt_takes_no_decision_between_ticks,
     .timeout = 30)
{
	struct sirq_lcore_stats ls;

	quiet_run(250, &ls);
	cr_expect_gt(ls.irq_ticks, 0, "no tick in %d ms", QUIET_MS);
	cr_expect_gt(ls.irq_quiet_looks, ls.irq_ticks,
		     "%" PRIu64 " quiet looks, %" PRIu64 " ticks: a look every "
		     "100 us, a tick every 4 ms", ls.irq_quiet_looks,
		     ls.irq_ticks);
	/* The stop's kick wakes it once more: a decision, neither. */
	cr_expect_leq(ls.irq_quiet_looks + ls.irq_ticks, ls.iterations);
	cr_expect_geq(ls.irq_quiet_looks + ls.irq_ticks + 2, ls.iterations,
		      "every look is a tick or a quiet one when nothing fires");
}

/* tick_hz 0, the TSC-exact model: every look decides, none is quiet. */
Test(lcore_irq, tick_hz_0_decides_at_every_look, .timeout = 30)
{
	struct sirq_lcore_stats ls;

	quiet_run(0, &ls);
	cr_expect_gt(ls.iterations, 0);
	cr_expect_eq(ls.irq_ticks, 0);
	cr_expect_eq(ls.irq_quiet_looks, 0);
}

static uint64_t timer_fires;

static void
count_fire(struct rte_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	__atomic_fetch_add(&timer_fires, 1, __ATOMIC_RELAXED);
}

Test(lcore_irq, wakes_for_timers, .timeout = 30)
{
	struct rte_timer tim;
	struct sirq_lcore *lc;
	struct sirq_stats st;
	uint64_t period;

	eal_start(NULL);
	period = rte_get_timer_hz() / 1000 * TIMER_PERIOD_MS;
	lc = irq_lcore();
	rte_timer_init(&tim);
	cr_assert(rte_timer_reset(&tim, period, PERIODICAL, TEST_LCORE,
				  count_fire, NULL) == 0);
	dispatcher_launch(lc);
	usleep(TIMER_RUN_MS * 1000);
	dispatcher_join(lc);
	rte_timer_stop_sync(&tim);
	sirq_stats_get(sirq_lcore_cpu(lc), &st);

	/* With only the 1 s tick it would have fired at most once. */
	cr_expect_geq(timer_fires, TIMER_RUN_MS / TIMER_PERIOD_MS / 2,
		      "fired %lu times in %d ms", (unsigned long)timer_fires,
		      TIMER_RUN_MS);
	cr_expect_eq(st.runs[SIRQ_TIMER][SIRQ_CTX_INLINE] +
		     st.runs[SIRQ_TIMER][SIRQ_CTX_WORKER], timer_fires,
		     "from the TIMER vector");
	sirq_lcore_free(lc);
}

struct udp_count {
	uint64_t udp;		/* our test datagrams */
	uint64_t frames;	/* everything, including IPv6 noise */
};

static void
count_udp(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	  struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct udp_count *c = arg;
	uint16_t i;

	(void)lc;
	(void)port;
	(void)queue;
	for (i = 0; i < n; i++) {
		const struct rte_ether_hdr *eth =
			rte_pktmbuf_mtod(pkts[i], const struct rte_ether_hdr *);
		const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
		const struct rte_udp_hdr *udp = (const void *)(ip + 1);

		if (rte_pktmbuf_data_len(pkts[i]) >= sizeof(*eth) + sizeof(*ip) +
		    sizeof(*udp) &&
		    eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
		    ip->next_proto_id == IPPROTO_UDP &&
		    udp->dst_port == rte_cpu_to_be_16(UDP_PORT))
			__atomic_fetch_add(&c->udp, 1, __ATOMIC_RELEASE);
	}
	c->frames += n;
	rte_pktmbuf_free_bulk(pkts, n);
}

static int
sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* A tap port of ours, its kernel side in a namespace with a static peer. */
struct tap_ns {
	char vdev[64];
	char ns[32];
	char tap[16];
};

static void
tap_ns_names(struct tap_ns *t)
{
	snprintf(t->ns, sizeof(t->ns), "sirqt%d", getpid());
	snprintf(t->tap, sizeof(t->tap), "sirqtap%d", getpid() % 100000);
	snprintf(t->vdev, sizeof(t->vdev), "net_tap0,iface=%s", t->tap);
}

static bool
tap_ns_up(const struct tap_ns *t)
{
	return sh("ip netns add %s", t->ns) == 0 &&
		sh("ip link set %s netns %s", t->tap, t->ns) == 0 &&
		sh("ip -n %s addr add 10.254.0.2/24 dev %s", t->ns, t->tap) == 0 &&
		sh("ip -n %s link set %s up", t->ns, t->tap) == 0 &&
		sh("ip -n %s neigh add 10.254.0.1 lladdr 02:00:00:00:00:01 dev %s",
		   t->ns, t->tap) == 0;
}

/* UDP_PACKETS datagrams from the namespace to the port. */
static bool
tap_ns_send(const struct tap_ns *t)
{
	return sh("ip netns exec %s bash -c 'for i in $(seq %d); do "
		  "echo sirq > /dev/udp/10.254.0.1/%d; done'",
		  t->ns, UDP_PACKETS, UDP_PORT) == 0;
}

Test(lcore_irq, wakes_for_rx_interrupts_from_a_namespace, .timeout = 60)
{
	struct udp_count count = { 0 };
	struct sirq_napi_info napi;
	struct sirq_lcore_stats ls;
	struct sirq_lcore *lc;
	struct tap_ns t;
	const char *vdevs[] = { t.vdev, NULL };
	bool ok;

	tap_ns_names(&t);
	eal_start(vdevs);
	port_start(0, 1, true);
	lc = irq_lcore();
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, count_udp, &count) == 0);
	dispatcher_launch(lc);
	ok = tap_ns_up(&t) && tap_ns_send(&t);
	if (ok)
		ok = wait_for(&count.udp, UDP_PACKETS, 10000);
	dispatcher_join(lc);
	sh("ip netns del %s", t.ns);
	cr_assert(ok, "namespace set-up or traffic failed; %lu datagrams in",
		  (unsigned long)count.udp);

	sirq_lcore_stats_get(lc, &ls);
	cr_expect_eq(count.udp, UDP_PACKETS, "every datagram reached NET_RX");
	cr_expect_gt(ls.irq_rx_events, 0, "woken by Rx interrupts");
	/* One queue: its share of the interrupts and packets is all. */
	cr_assert_eq(sirq_napi_get(lc, 0, &napi), 0);
	cr_expect_eq(napi.irqs, ls.irq_rx_events,
		     "queue 0: %" PRIu64 " interrupts, the lcore %" PRIu64,
		     napi.irqs, ls.irq_rx_events);
	cr_expect_eq(napi.packets, ls.rx_packets);
	cr_expect_geq(napi.packets, UDP_PACKETS);
	sirq_lcore_free(lc);
}

#define ARMED_QUIET_MS 500

/* Sleep @ms whatever signal cuts a sleep short. */
static void
quiet_for_ms(unsigned int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000;

	while (now_ns() < end)
		usleep(1000);
}

/*
 * l3fwd-power's model, and a NIC's: with every queue's Rx interrupt
 * armed, a look between interrupts finds nothing they would not bring.
 * At the defaults (a look every 100 us, a tick at 250 Hz) the dispatcher
 * wakes only for the tick and the interrupts, and still takes every
 * datagram.
 */
Test(lcore_irq, with_every_rx_interrupt_armed_it_wakes_only_for_ticks_and_interrupts,
     .timeout = 60)
{
	struct udp_count count = { 0 };
	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats ls;
	struct sirq_lcore *lc;
	struct tap_ns t;
	const char *vdevs[] = { t.vdev, NULL };
	bool ok;

	tap_ns_names(&t);
	eal_start(vdevs);
	port_start(0, 1, true);
	sirq_lcore_conf_default(&conf);
	conf.mode = SIRQ_MODE_IRQ;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, count_udp, &count) == 0);
	dispatcher_launch(lc);
	ok = tap_ns_up(&t);
	quiet_for_ms(ARMED_QUIET_MS);
	ok = ok && tap_ns_send(&t);
	if (ok)
		ok = wait_for(&count.udp, UDP_PACKETS, 10000);
	dispatcher_join(lc);
	sh("ip netns del %s", t.ns);
	cr_assert(ok, "namespace set-up or traffic failed; %lu datagrams in",
		  (unsigned long)count.udp);

	sirq_lcore_stats_get(lc, &ls);
	cr_expect_eq(count.udp, UDP_PACKETS, "every datagram reached NET_RX");
	cr_expect_gt(ls.irq_tick_sleeps, 0);
	/* A look every 100 us would be 40 per 4 ms tick. */
	cr_expect_leq(ls.iterations, 2 * (ls.irq_ticks + ls.irq_rx_events) + 20,
		      "%" PRIu64 " looks for %" PRIu64 " ticks and %" PRIu64
		      " Rx interrupts", ls.iterations, ls.irq_ticks,
		      ls.irq_rx_events);
	sirq_lcore_free(lc);
}

#define FLOOD_MS 1000


/*
 * net_null floods the lcore's one queue for FLOOD_MS in irq mode at the
 * default tick (250 Hz): every NET_RX run ends on its budget with the
 * queue still scheduled (masked), and what is left goes to sirqd.
 */
static void
flood_run(enum sirq_policy_id policy, struct sirq_lcore_stats *ls,
	  struct sirq_stats *st)
{
	static const char *const vdevs[] = { "net_null0", NULL };
	struct sirq_lcore_conf conf;
	struct sirq_lcore *lc;

	eal_start(vdevs);
	port_start(0, 1, false);
	sirq_lcore_conf_default(&conf);
	conf.mode = SIRQ_MODE_IRQ;
	conf.params.policy = policy;
	lc = sirq_lcore_create(TEST_LCORE, &conf);
	cr_assert(lc != NULL);
	cr_assert(sirq_lcore_add_rx_queue(lc, 0, 0, rx_free_all, NULL) == 0);
	dispatcher_launch(lc);
	usleep(FLOOD_MS * 1000);
	dispatcher_join(lc);
	sirq_lcore_stats_get(lc, ls);
	sirq_stats_get(sirq_lcore_cpu(lc), st);
	sirq_lcore_free(lc);
	cr_expect_eq(pool_in_use(), 0, "mbufs leaked");
}

/* Slept until the ticks: a look every 100 us would be 40 per 4 ms tick. */
static void
expect_looks_only_at_ticks(const struct sirq_lcore_stats *ls)
{
	cr_expect_gt(ls->irq_tick_sleeps, 0);
	cr_expect_gt(ls->irq_ticks, 0);
	cr_expect_leq(ls->iterations, 2 * ls->irq_ticks + 20,
		      "%" PRIu64 " looks for %" PRIu64 " ticks, %" PRIu64
		      " tick sleeps", ls->iterations, ls->irq_ticks,
		      ls->irq_tick_sleeps);
}

/*
 * A NIC whose NAPI is scheduled is masked: while ksoftirqd polls it, the
 * kernel enters irq_exit() only at the tick. So does the dispatcher when
 * every queue is masked and the policy leaves the work to sirqd: it
 * sleeps until the next tick instead of looking every irq_tick_us.
 */
Test(lcore_irq, with_every_queue_masked_and_the_work_with_sirqd_it_looks_only_at_ticks,
     .timeout = 30)
{
	struct sirq_lcore_stats ls;
	struct sirq_stats st;

	flood_run(SIRQ_POLICY_KSOFTIRQD, &ls, &st);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0, "sirqd polled");
	expect_looks_only_at_ticks(&ls);
}

/*
 * The same when an execution model's thread has NET_RX: under pushdown
 * the flood is sirq-net_rx/N's, sirqd may be idle, and the dispatcher
 * still has nothing to look for between ticks. It looked every 100 us
 * before: 10.7 % of the flooded CPU in the policy lab.
 */
Test(lcore_irq, with_every_queue_masked_and_the_work_with_a_net_rx_thread_it_looks_only_at_ticks,
     .timeout = 30)
{
	struct sirq_lcore_stats ls;
	struct sirq_stats st;

	flood_run(SIRQ_POLICY_PUSHDOWN, &ls, &st);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0,
		     "the NET_RX thread polled");
	expect_looks_only_at_ticks(&ls);
}

/*
 * mainline would run the work itself: the dispatcher keeps looking every
 * irq_tick_us, since a look that finds sirqd preempted inside a pass is
 * what lends it the CPU.
 */
Test(lcore_irq, when_the_policy_would_run_the_work_itself_the_looks_go_on,
     .timeout = 30)
{
	struct sirq_lcore_stats ls;
	struct sirq_stats st;

	flood_run(SIRQ_POLICY_MAINLINE, &ls, &st);
	cr_expect_gt(st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 0);
	cr_expect_eq(ls.irq_tick_sleeps, 0);
}
