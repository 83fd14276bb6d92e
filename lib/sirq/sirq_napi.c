/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NAPI: an lcore's Rx queues, how their "interrupt" is noticed, and
 * net_rx_action() (net/core/dev.c) as the NET_RX handler.
 *
 * A queue is idle until its "interrupt" schedules it: a done descriptor
 * where the PMD reports descriptor status, a written descriptor where it
 * gives a power-monitor condition instead, else a fetch into its staging
 * array that returned packets, which NET_RX consumes first. From then on
 * the queue is on the poll list, polled by whoever runs NET_RX (the
 * dispatcher or sirqd), until a poll returns less than its weight
 * (napi_complete_done()); no "hardirq" touches it meanwhile.
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "sirq_dpdk.h"
#include "sirq_napi.h"

int
sirq_rx_add_queue(struct sirq_rx *rx, uint16_t port, uint16_t queue,
		  sirq_rx_fn_t fn, void *arg)
{
	struct sirq_napi *n;

	if (rx->nb_napi >= SIRQ_LCORE_MAX_NAPI)
		return -ENOSPC;
	n = &rx->napi[rx->nb_napi++];
	memset(n, 0, sizeof(*n));
	n->port = port;
	n->queue = queue;
	n->weight = rx->weight;
	n->irq = SIRQ_NAPI_IRQ_FETCH;
	n->fn = fn;
	n->arg = arg;
	return 0;
}

/* The sizes rte_power_monitor() reads. */
static inline bool
monitor_size_valid(uint8_t size)
{
	return size == sizeof(uint8_t) || size == sizeof(uint16_t) ||
		size == sizeof(uint32_t) || size == sizeof(uint64_t);
}

/* The word a monitor condition names, read as rte_power_monitor() does. */
static inline uint64_t
monitor_read(const struct rte_power_monitor_cond *pmc)
{
	switch (pmc->size) {
	case sizeof(uint8_t):
		return *(const volatile uint8_t *)pmc->addr;
	case sizeof(uint16_t):
		return *(const volatile uint16_t *)pmc->addr;
	case sizeof(uint32_t):
		return *(const volatile uint32_t *)pmc->addr;
	default:
		return *(const volatile uint64_t *)pmc->addr;
	}
}

/* Before a poll's burst: the word as it is, for napi_monitor_arm(). */
static inline void
napi_monitor_before_burst(struct sirq_napi *n)
{
	if (n->pmc.addr != NULL)
		n->monitor_before = monitor_read(&n->pmc);
}

/*
 * At napi_complete(): the condition for the next looks. If it names the
 * same word as before the poll's burst (virtio's used index), any change
 * of that word since then is work the burst did not take: exact, where
 * the PMD's own test, the index modulo the ring size, takes a full ring
 * for an empty one (measured: a queue that filled up between two looks
 * was never polled again). If the word moved with the consumer (the
 * next descriptor's flags, packed ring), the PMD's test on it is exact.
 * Without a condition the queue looks busy until it gets one (polled
 * for nothing, never forgotten).
 */
static void
napi_monitor_arm(struct sirq_napi *n)
{
	const volatile void *before = n->pmc.addr;

	if (rte_eth_get_monitor_addr(n->port, n->queue, &n->pmc) != 0 ||
	    n->pmc.fn == NULL || !monitor_size_valid(n->pmc.size)) {
		n->pmc.addr = NULL;
		n->monitor_fire = true;
		return;
	}
	n->monitor_by_value = before != NULL && n->pmc.addr == before;
	n->monitor_fire = false;
}

/*
 * Has the queue work since the condition was armed? A look that races
 * with NET_RX arming it on the other thread may decide on a mix of the
 * old and the new condition, both of the same ring: at worst one poll
 * for nothing, or one look late.
 */
static inline bool
napi_monitor_fired(const struct sirq_napi *n)
{
	uint64_t v;

	if (unlikely(n->monitor_fire))
		return true;
	v = monitor_read(&n->pmc);
	if (n->monitor_by_value)
		return v != n->monitor_before;
	return n->pmc.fn(v, n->pmc.opaque) != 0;
}

/*
 * PMDs whose monitor condition can stand for descriptor status, read
 * from the 22.11 sources: it compares the producer's index with the
 * consumer's own (virtio: the used ring's index with vq_used_cons_idx),
 * so a packet that arrived between the last poll and the condition is
 * seen, and it names the port's own ring, mapped while the port is.
 * Not so elsewhere: net_ring's compares the producer's head with its
 * value when the condition was taken, which would miss that packet until
 * the next one; net_vhost's points into the guest's ring, which the vhost
 * library unmaps when the guest goes away. Those queues are fetched.
 */
static const char *const monitor_exact_drivers[] = {
	"net_virtio",
	"net_virtio_user",
};

static bool
monitor_is_exact(uint16_t port)
{
	struct rte_eth_dev_info info;
	unsigned int i;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return false;
	for (i = 0; i < RTE_DIM(monitor_exact_drivers); i++)
		if (strcmp(info.driver_name, monitor_exact_drivers[i]) == 0)
			return true;
	return false;
}

/*
 * How the queue can say that it has work without giving it: descriptor
 * status (most NIC PMDs), a power-monitor condition (virtio, which has
 * no descriptor status in 22.11), or not at all (fetch).
 */
static enum sirq_napi_irq
napi_probe_irq(struct sirq_napi *n)
{
	if (rte_eth_rx_descriptor_status(n->port, n->queue, 0) >= 0)
		return SIRQ_NAPI_IRQ_DESC;
	if (monitor_is_exact(n->port) &&
	    rte_eth_get_monitor_addr(n->port, n->queue, &n->pmc) == 0 &&
	    n->pmc.fn != NULL && monitor_size_valid(n->pmc.size)) {
		/*
		 * What came before the start, a full ring included, is
		 * found by a first poll, which arms the condition.
		 */
		n->monitor_fire = true;
		return SIRQ_NAPI_IRQ_MONITOR;
	}
	n->pmc.addr = NULL;
	return SIRQ_NAPI_IRQ_FETCH;
}

/*
 * Once the ports are started: which queues can say that they have work
 * without giving it (descriptor status, monitor condition), and which
 * must be fetched.
 */
void
sirq_rx_start(struct sirq_rx *rx)
{
	uint16_t i;

	rx->nb_desc = rx->nb_monitor = 0;
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		n->irq = napi_probe_irq(n);
		if (n->irq == SIRQ_NAPI_IRQ_DESC)
			rx->nb_desc++;
		else if (n->irq == SIRQ_NAPI_IRQ_MONITOR)
			rx->nb_monitor++;
	}
	SIRQ_LOG(DEBUG, "lcore %u: %u Rx queue(s): %u by descriptor status, %u by monitor condition, %u by fetch",
		 rx->lcore_id, rx->nb_napi, rx->nb_desc, rx->nb_monitor,
		 rx->nb_napi - rx->nb_desc - rx->nb_monitor);
}

/*
 * napi_schedule_prep(): the queue's "interrupt" is masked from here on;
 * false if it already was (the dispatcher and sirqd both look).
 */
static inline bool
napi_schedule_prep(struct sirq_napi *n)
{
	return !__atomic_exchange_n(&n->scheduled, true, __ATOMIC_ACQUIRE);
}

/*
 * __napi_schedule(): hand a queue with work to NET_RX, which may run on
 * the other thread: staged packets are published by the release on the
 * ready mask and taken with the acquire in poll_list_splice().
 */
static inline void
napi_schedule(struct sirq_rx *rx, uint16_t idx)
{
	__atomic_fetch_or(&rx->ready, UINT64_C(1) << idx, __ATOMIC_RELEASE);
	sirq_raise_irqoff(rx->cpu, SIRQ_NET_RX);
}

/* napi_complete_done(): unmask the queue's "interrupt". */
static inline void
napi_complete(struct sirq_napi *n)
{
	__atomic_store_n(&n->scheduled, false, __ATOMIC_RELEASE);
}

static inline bool
napi_is_scheduled(const struct sirq_napi *n)
{
	return __atomic_load_n(&n->scheduled, __ATOMIC_ACQUIRE);
}

/*
 * The Rx "interrupt" of queues with descriptor status or a monitor
 * condition; no lock needed. The dispatcher and sirqd may both look:
 * napi_schedule_prep() lets one of them schedule the queue. Returns the
 * queues it scheduled: the interrupts that fired.
 */
unsigned int
sirq_hardirq_rx_desc(struct sirq_rx *rx)
{
	unsigned int fired = 0;
	uint64_t *counter;
	uint16_t i;

	if (rx->nb_desc + rx->nb_monitor == 0)
		return 0;
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		if (n->irq == SIRQ_NAPI_IRQ_FETCH || napi_is_scheduled(n))
			continue;
		if (n->irq == SIRQ_NAPI_IRQ_DESC) {
			if (rte_eth_rx_descriptor_status(n->port, n->queue, 0) !=
			    RTE_ETH_RX_DESC_DONE)
				continue;
			counter = &rx->stats->rx_sched_desc;
		} else {
			if (!napi_monitor_fired(n))
				continue;
			counter = &rx->stats->rx_sched_monitor;
		}
		if (napi_schedule_prep(n)) {
			sirq_stat_add_atomic(counter, 1);
			napi_schedule(rx, i);
			fired++;
		}
	}
	return fired;
}

/* The Rx "interrupt" of the other queues: a fetch, under the lock. */
unsigned int
sirq_hardirq_rx_fetch(struct sirq_rx *rx)
{
	unsigned int fired = 0;
	uint16_t i;

	if (rx->nb_desc + rx->nb_monitor == rx->nb_napi)
		return 0;
	SIRQ_ASSERT_EXCLUSIVE(rx->cpu, rx->lcore_id, "Rx fetch");
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		if (n->irq != SIRQ_NAPI_IRQ_FETCH || napi_is_scheduled(n))
			continue;
		n->nb_staged = rte_eth_rx_burst(n->port, n->queue, n->staged,
						SIRQ_STAGE_SIZE);
		n->staged_pos = 0;
		if (n->nb_staged != 0 && napi_schedule_prep(n)) {
			sirq_stat_add(&rx->stats->rx_sched_fetch, 1);
			napi_schedule(rx, i);
			fired++;
		}
	}
	return fired;
}

static inline void
poll_list_add(struct sirq_rx *rx, uint16_t idx)
{
	rx->poll_list[(rx->poll_head + rx->poll_len) % SIRQ_LCORE_MAX_NAPI] = idx;
	rx->poll_len++;
}

static void
poll_list_splice(struct sirq_rx *rx)
{
	uint64_t ready = __atomic_exchange_n(&rx->ready, 0, __ATOMIC_ACQUIRE);

	while (ready != 0) {
		poll_list_add(rx, (uint16_t)__builtin_ctzll(ready));
		ready &= ready - 1;
	}
}

/* One NAPI poll: the staged packets first, then the queue, up to weight. */
static unsigned int
napi_poll(struct sirq_rx *rx, struct sirq_napi *n)
{
	struct rte_mbuf *pkts[SIRQ_NAPI_WEIGHT_MAX];
	unsigned int got = 0;
	uint16_t take;

	if (n->staged_pos < n->nb_staged) {
		take = RTE_MIN((uint16_t)(n->nb_staged - n->staged_pos),
			       n->weight);
		memcpy(pkts, &n->staged[n->staged_pos], take * sizeof(pkts[0]));
		n->staged_pos += take;
		got = take;
	}
	if (got < n->weight) {
		if (n->irq == SIRQ_NAPI_IRQ_MONITOR)
			napi_monitor_before_burst(n);
		got += rte_eth_rx_burst(n->port, n->queue, &pkts[got],
					(uint16_t)(n->weight - got));
	}

	sirq_stat_add(&rx->stats->rx_polls, 1);
	if (got != 0) {
		sirq_stat_add(&rx->stats->rx_packets, got);
		sirq_tx_poll_begin(rx->tx);
		n->fn(rx->lc, n->port, n->queue, pkts, (uint16_t)got, n->arg);
		sirq_tx_poll_end(rx->tx);
	}
	return got;
}

/*
 * net_rx_action(): poll each scheduled queue once, up to its weight, until
 * the budget of packets or time is spent (time_squeeze). A queue that used
 * its whole weight is polled again on the next run (the kernel's repoll
 * list), at the tail; NET_RX is raised again while any queue is scheduled.
 */
void
sirq_net_rx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sirq_rx *rx = arg;
	uint64_t budget_end = sirq_now_ns() +
		(uint64_t)rx->budget_us * SIRQ_NS_PER_US;
	int budget = rx->budget;
	uint16_t left;

	SIRQ_ASSERT_EXCLUSIVE(cpu, rx->lcore_id, "NET_RX");
	poll_list_splice(rx);
	for (left = rx->poll_len; left != 0; left--) {
		uint16_t idx = rx->poll_list[rx->poll_head];
		struct sirq_napi *n = &rx->napi[idx];
		unsigned int work;

		rx->poll_head = (rx->poll_head + 1) % SIRQ_LCORE_MAX_NAPI;
		rx->poll_len--;

		work = napi_poll(rx, n);
		budget -= (int)work;
		if (work < n->weight) {
			if (n->irq == SIRQ_NAPI_IRQ_MONITOR)
				napi_monitor_arm(n);
			napi_complete(n);
		} else
			poll_list_add(rx, idx);

		if (budget <= 0 || sirq_now_ns() >= budget_end) {
			sirq_stat_add(&rx->stats->time_squeeze, 1);
			if (budget <= 0)
				sirq_stat_add(&rx->stats->budget_exhausted, 1);
			break;
		}
	}
	if (rx->poll_len != 0)
		sirq_raise_irqoff(cpu, SIRQ_NET_RX);
}

/*
 * After the last iteration, with the lock held: packets fetched but never
 * polled go back to their pool (counted as rx_dropped_at_stop), every
 * queue is idle again.
 */
void
sirq_rx_drain(struct sirq_rx *rx)
{
	uint16_t i;

	SIRQ_ASSERT_EXCLUSIVE(rx->cpu, rx->lcore_id, "Rx drain");
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		if (n->staged_pos < n->nb_staged) {
			rte_pktmbuf_free_bulk(&n->staged[n->staged_pos],
					      n->nb_staged - n->staged_pos);
			sirq_stat_add(&rx->stats->rx_dropped_at_stop,
				      n->nb_staged - n->staged_pos);
		}
		n->nb_staged = n->staged_pos = 0;
		__atomic_store_n(&n->scheduled, false, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&rx->ready, 0, __ATOMIC_RELAXED);
	rx->poll_len = 0;
}

/* At free, on the thread freeing the lcore: whatever is still staged. */
void
sirq_rx_free(struct sirq_rx *rx)
{
	uint16_t i;

	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		if (n->staged_pos < n->nb_staged)
			rte_pktmbuf_free_bulk(&n->staged[n->staged_pos],
					      n->nb_staged - n->staged_pos);
		n->nb_staged = n->staged_pos = 0;
	}
	rx->nb_napi = 0;
}
