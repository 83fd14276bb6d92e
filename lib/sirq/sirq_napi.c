/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NAPI: an lcore's Rx queues, how their "interrupt" is noticed, and what
 * a poll of one does. Which queue is polled when, and for how much, is
 * the engine's net_rx_action() (sirq_napi_core.c), shared with sirq-sim;
 * this file is the driver it calls.
 *
 * A queue is idle until its "interrupt" schedules it: a done descriptor
 * where the PMD reports descriptor status or counts done descriptors, a
 * written descriptor where it gives a power-monitor condition instead,
 * else a fetch into its staging
 * array that returned packets, which NET_RX consumes first. From then on
 * the queue is on the poll list, polled by whoever runs NET_RX (the
 * dispatcher or sirqd), until a poll returns less than its weight
 * (napi_complete_done()); no "hardirq" touches it meanwhile.
 */

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "sirq_dpdk.h"
#include "sirq_napi.h"

/* Queues whose work any thread may see without the lock. */
static inline uint16_t
rx_nb_lockless(const struct sirq_rx *rx)
{
	return rx->nb_desc + rx->nb_count + rx->nb_monitor;
}

/* A queue's index is its bit in the engine's masks. */
_Static_assert(SIRQ_LCORE_MAX_NAPI <= SIRQ_NAPI_MAX,
	       "more Rx queues per lcore than NAPI contexts per CPU");

static unsigned int napi_poll(void *ctx, uint16_t idx, uint16_t weight);
static bool napi_rearm(void *ctx, uint16_t idx);
static void napi_wake_thread(void *ctx, uint16_t idx);

/*
 * Is the queue's "interrupt" masked: its context scheduled, or idle with
 * the interrupt left off by a deferred completion? Then no look at its
 * source schedules it: NET_RX, its thread or its timer will.
 */
static inline bool
napi_masked(const struct sirq_rx *rx, uint16_t idx)
{
	uint64_t m = __atomic_load_n(&rx->sd.sched, __ATOMIC_ACQUIRE) |
		__atomic_load_n(&rx->sd.irq_off, __ATOMIC_RELAXED);

	return (m & (UINT64_C(1) << idx)) != 0;
}

/* With rx->cpu, rx->stats and rx->weight set: no queue yet. */
int
sirq_rx_init(struct sirq_rx *rx, unsigned int budget, unsigned int budget_us)
{
	struct sirq_softnet_conf conf = {
		.cpu = rx->cpu,
		.budget = budget,
		.budget_usecs = budget_us,
		.poll = napi_poll,
		.rearm = napi_rearm,
		.wake_thread = napi_wake_thread,
		.poll_ctx = rx,
		.time_squeeze = &rx->stats->time_squeeze,
		.budget_exhausted = &rx->stats->budget_exhausted,
	};

	rx->nb_napi = 0;
	rx->nb_intr = 0;
	return sirq_softnet_init(&rx->sd, &conf);
}

int
sirq_rx_add_queue(struct sirq_rx *rx, uint16_t port, uint16_t queue,
		  sirq_rx_fn_t fn, void *arg)
{
	struct sirq_napi *n;
	int idx;

	if (rx->nb_napi >= SIRQ_LCORE_MAX_NAPI)
		return -ENOSPC;
	idx = sirq_napi_add(&rx->sd, rx->weight);
	if (idx < 0)
		return idx;
	RTE_VERIFY(idx == rx->nb_napi);
	n = &rx->napi[rx->nb_napi++];
	memset(n, 0, sizeof(*n));
	n->port = port;
	n->queue = queue;
	n->irq = SIRQ_NAPI_IRQ_FETCH;
	n->intr_fd = -1;
	n->thread_fd = -1;
	n->thread_tid = -1;
	n->rx = rx;
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
 * Has the queue work since the condition was armed? By value, work is
 * the word having moved since before the last burst, or the PMD's own
 * test saying so: a poll may complete with packets left in the ring
 * (virtio's split ring rounds each burst down to a cache line of used
 * entries, so 6 waiting can give 4), and those moved the word before
 * the burst. Each test misses only what the other sees: the PMD's, a
 * ring that filled up since; the value, packets that were there before.
 * A look that races with NET_RX arming it on the other thread may decide
 * on a mix of the old and the new condition, both of the same ring: at
 * worst one poll for nothing, or one look late.
 */
static inline bool
napi_monitor_fired(const struct sirq_napi *n)
{
	uint64_t v;

	if (unlikely(n->monitor_fire))
		return true;
	v = monitor_read(&n->pmc);
	if (n->monitor_by_value && v != n->monitor_before)
		return true;
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

/*
 * PMDs whose rte_eth_rx_queue_count() can stand for descriptor status,
 * read from the 22.11 sources: vmxnet3 counts the completion ring's
 * entries whose generation bit says done, reading the ring only. Not
 * net_vhost: its count takes the vhost queue's access lock, which the
 * vhost library holds while the guest reconfigures, and a SCHED_FIFO
 * dispatcher must not spin behind it.
 */
static const char *const queue_count_drivers[] = {
	"net_vmxnet3",
};

static bool
driver_in(uint16_t port, const char *const *drivers, unsigned int n)
{
	struct rte_eth_dev_info info;
	unsigned int i;

	if (rte_eth_dev_info_get(port, &info) != 0)
		return false;
	for (i = 0; i < n; i++)
		if (strcmp(info.driver_name, drivers[i]) == 0)
			return true;
	return false;
}

/*
 * How a queue can say that it has work without giving it: descriptor
 * status (most NIC PMDs), a count of done descriptors (vmxnet3), a
 * power-monitor condition (virtio, which has neither in 22.11), or not
 * at all (fetch). *pmc: the monitor condition, when that is the answer.
 */
static enum sirq_napi_irq
rx_queue_probe(uint16_t port, uint16_t queue, struct rte_power_monitor_cond *pmc)
{
	if (rte_eth_rx_descriptor_status(port, queue, 0) >= 0)
		return SIRQ_NAPI_IRQ_DESC;
	if (driver_in(port, queue_count_drivers, RTE_DIM(queue_count_drivers)) &&
	    rte_eth_rx_queue_count(port, queue) >= 0)
		return SIRQ_NAPI_IRQ_COUNT;
	if (driver_in(port, monitor_exact_drivers, RTE_DIM(monitor_exact_drivers)) &&
	    rte_eth_get_monitor_addr(port, queue, pmc) == 0 &&
	    pmc->fn != NULL && monitor_size_valid(pmc->size))
		return SIRQ_NAPI_IRQ_MONITOR;
	pmc->addr = NULL;
	return SIRQ_NAPI_IRQ_FETCH;
}

static enum sirq_napi_irq
napi_probe_irq(struct sirq_napi *n)
{
	enum sirq_napi_irq irq = rx_queue_probe(n->port, n->queue, &n->pmc);

	/*
	 * What came before the start, a full ring included, is found by a
	 * first poll, which arms the condition.
	 */
	if (irq == SIRQ_NAPI_IRQ_MONITOR)
		n->monitor_fire = true;
	return irq;
}

int
sirq_rx_queue_work(uint16_t port, uint16_t queue)
{
	struct rte_eth_dev_info info;
	struct rte_power_monitor_cond pmc;

	if (rte_eth_dev_info_get(port, &info) != 0 || queue >= info.nb_rx_queues)
		return -EINVAL;
	memset(&pmc, 0, sizeof(pmc));
	return (int)rx_queue_probe(port, queue, &pmc);
}

const char *
sirq_rx_work_name(int work)
{
	switch (work) {
	case SIRQ_RX_WORK_DESC:
		return "desc_status";
	case SIRQ_RX_WORK_COUNT:
		return "queue_count";
	case SIRQ_RX_WORK_MONITOR:
		return "monitor";
	case SIRQ_RX_WORK_FETCH:
		return "fetch";
	default:
		return "?";
	}
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

	rx->nb_desc = rx->nb_count = rx->nb_monitor = 0;
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		n->irq = napi_probe_irq(n);
		if (n->irq == SIRQ_NAPI_IRQ_DESC)
			rx->nb_desc++;
		else if (n->irq == SIRQ_NAPI_IRQ_COUNT)
			rx->nb_count++;
		else if (n->irq == SIRQ_NAPI_IRQ_MONITOR)
			rx->nb_monitor++;
	}
	SIRQ_LOG(DEBUG, "lcore %u: %u Rx queue(s): %u by descriptor status, %u by queue count, %u by monitor condition, %u by fetch",
		 rx->lcore_id, rx->nb_napi, rx->nb_desc, rx->nb_count,
		 rx->nb_monitor, rx->nb_napi - rx_nb_lockless(rx));
}

/*
 * irq mode, before sirqd starts: the queues' Rx interrupts, on, where
 * the PMD has them (intr_conf.rxq = 1 at configure). Returns how many.
 */
unsigned int
sirq_rx_intr_start(struct sirq_rx *rx)
{
	uint16_t i;

	rx->nb_intr = 0;
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		n->intr_fd = rte_eth_dev_rx_intr_ctl_q_get_fd(n->port, n->queue);
		if (n->intr_fd < 0) {
			n->intr_fd = -1;
			continue;
		}
		/* -ENOTSUP on net_tap, whose events fire all the same. */
		n->intr_ctl = rte_eth_dev_rx_intr_enable(n->port, n->queue) == 0;
		__atomic_store_n(&n->intr_on, true, __ATOMIC_RELAXED);
		rx->nb_intr++;
	}
	return rx->nb_intr;
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

	if (rx_nb_lockless(rx) == 0)
		return 0;
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		if (n->irq == SIRQ_NAPI_IRQ_FETCH || napi_masked(rx, i))
			continue;
		if (n->irq == SIRQ_NAPI_IRQ_DESC) {
			if (rte_eth_rx_descriptor_status(n->port, n->queue, 0) !=
			    RTE_ETH_RX_DESC_DONE)
				continue;
			counter = &rx->stats->rx_sched_desc;
		} else if (n->irq == SIRQ_NAPI_IRQ_COUNT) {
			if (rte_eth_rx_queue_count(n->port, n->queue) <= 0)
				continue;
			counter = &rx->stats->rx_sched_count;
		} else {
			if (!napi_monitor_fired(n))
				continue;
			counter = &rx->stats->rx_sched_monitor;
		}
		/* The dispatcher and sirqd both look: one schedules it. */
		if (sirq_napi_schedule(&rx->sd, i)) {
			sirq_stat_add_atomic(counter, 1);
			fired++;
		}
	}
	return fired;
}

/*
 * The Rx "interrupt" of the other queues: a fetch, under the lock. The
 * staged packets are published to whichever thread runs NET_RX by the
 * release of sirq_napi_schedule().
 */
/* A fetch into the staging array, by the lock holder: any packets? */
static inline bool
napi_fetch(struct sirq_napi *n)
{
	n->nb_staged = rte_eth_rx_burst(n->port, n->queue, n->staged,
					SIRQ_STAGE_SIZE);
	n->staged_pos = 0;
	return n->nb_staged != 0;
}

unsigned int
sirq_hardirq_rx_fetch(struct sirq_rx *rx)
{
	unsigned int fired = 0;
	uint16_t i;

	if (rx_nb_lockless(rx) == rx->nb_napi)
		return 0;
	SIRQ_ASSERT_EXCLUSIVE(rx->cpu, rx->lcore_id, "Rx fetch");
	for (i = 0; i < rx->nb_napi; i++) {
		struct sirq_napi *n = &rx->napi[i];

		if (n->irq != SIRQ_NAPI_IRQ_FETCH || napi_masked(rx, i))
			continue;
		if (napi_fetch(n) && sirq_napi_schedule(&rx->sd, i)) {
			sirq_stat_add(&rx->stats->rx_sched_fetch, 1);
			fired++;
		}
	}
	return fired;
}

/*
 * One NAPI poll, the engine's callback: the staged packets first, then
 * the queue, up to @weight, handed to the queue's function with the TX
 * flush around it. A poll that got less than its weight is the driver's
 * napi_complete_done(): a monitored queue arms its condition here, before
 * the engine unmasks its "interrupt".
 */
static unsigned int
napi_poll(void *ctx, uint16_t idx, uint16_t weight)
{
	struct rte_mbuf *pkts[SIRQ_NAPI_WEIGHT_MAX];
	struct sirq_rx *rx = ctx;
	struct sirq_napi *n = &rx->napi[idx];
	unsigned int got = 0;
	uint16_t take;

	/* Masked while scheduled, as a driver's interrupt handler does. */
	if (unlikely(n->intr_on) && n->intr_ctl) {
		rte_eth_dev_rx_intr_disable(n->port, n->queue);
		__atomic_store_n(&n->intr_on, false, __ATOMIC_RELAXED);
	}
	if (n->staged_pos < n->nb_staged) {
		take = RTE_MIN((uint16_t)(n->nb_staged - n->staged_pos),
			       weight);
		memcpy(pkts, &n->staged[n->staged_pos], take * sizeof(pkts[0]));
		n->staged_pos += take;
		got = take;
	}
	if (got < weight) {
		if (n->irq == SIRQ_NAPI_IRQ_MONITOR)
			napi_monitor_before_burst(n);
		got += rte_eth_rx_burst(n->port, n->queue, &pkts[got],
					(uint16_t)(weight - got));
	}

	sirq_stat_add(&rx->stats->rx_polls, 1);
	if (got != 0) {
		sirq_stat_add(&rx->stats->rx_packets, got);
		sirq_tx_poll_begin(rx->tx);
		n->fn(rx->lc, n->port, n->queue, pkts, (uint16_t)got, n->arg);
		sirq_tx_poll_end(rx->tx);
	}
	if (got < weight && n->irq == SIRQ_NAPI_IRQ_MONITOR)
		napi_monitor_arm(n);
	return got;
}

/*
 * After napi_complete_done(), by the lock holder: the queue's Rx
 * interrupt on again, then one more look at the ring. What the device
 * wrote while the interrupt was off raised none, so it is found here or
 * not until the next packet's interrupt. Queues without an interrupt to
 * turn on are looked at by every "hardirq" anyway.
 */
static bool
napi_rearm(void *ctx, uint16_t idx)
{
	struct sirq_rx *rx = ctx;
	struct sirq_napi *n = &rx->napi[idx];
	bool work;

	if (likely(!n->intr_ctl))
		return false;
	rte_eth_dev_rx_intr_enable(n->port, n->queue);
	__atomic_store_n(&n->intr_on, true, __ATOMIC_RELAXED);
	sirq_stat_add(&rx->stats->rx_intr_rearms, 1);
	switch (n->irq) {
	case SIRQ_NAPI_IRQ_DESC:
		work = rte_eth_rx_descriptor_status(n->port, n->queue, 0) ==
			RTE_ETH_RX_DESC_DONE;
		break;
	case SIRQ_NAPI_IRQ_COUNT:
		work = rte_eth_rx_queue_count(n->port, n->queue) > 0;
		break;
	case SIRQ_NAPI_IRQ_MONITOR:
		work = napi_monitor_fired(n);
		break;
	default:
		work = napi_fetch(n);
		break;
	}
	if (work)
		sirq_stat_add(&rx->stats->rx_intr_rearm_work, 1);
	return work;
}

/*
 * NET_RX: the engine's net_rx_action() over this lcore's queues, by the
 * holder of its execution lock (the polls use the lcore's mempool cache
 * and TX buffers).
 */
void
sirq_net_rx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sirq_rx *rx = arg;

	SIRQ_ASSERT_EXCLUSIVE(cpu, rx->lcore_id, "NET_RX");
	sirq_softnet_rx_action(&rx->sd);
}

/*
 * irq mode: would a look at the queues find anything that no
 * "interrupt" brings? Not when every queue either has its Rx interrupt
 * armed (the PMD's event wakes the dispatcher, as l3fwd-power sleeps on
 * it) or is masked: scheduled, or idle with its deferred interrupt
 * waiting for its timer (the dispatcher's sleep wakes for that, and
 * whoever arms one sooner kicks it). True then, with @net_rx_has set if
 * a scheduled queue waits for NET_RX (wherever NET_RX runs) rather than
 * for its thread or a busy poller; false if a queue needs a look.
 */
bool
sirq_rx_irq_quiet(const struct sirq_rx *rx, bool *net_rx_has)
{
	uint64_t sched = __atomic_load_n(&rx->sd.sched, __ATOMIC_ACQUIRE);
	uint64_t irq_off = __atomic_load_n(&rx->sd.irq_off, __ATOMIC_RELAXED);
	uint64_t threaded = __atomic_load_n(&rx->sd.threaded,
					    __ATOMIC_RELAXED);
	uint64_t busy = __atomic_load_n(&rx->sd.in_busy_poll,
					__ATOMIC_RELAXED);
	bool masked = false;
	uint16_t i;

	for (i = 0; i < rx->nb_napi; i++) {
		const struct sirq_napi *n = &rx->napi[i];
		uint64_t bit = UINT64_C(1) << i;

		/* Its thread or a busy poller has it; or its timer will. */
		if (sched & bit)
			masked |= ((threaded | busy) & bit) == 0;
		else if (irq_off & bit)
			continue;
		else if (n->intr_fd < 0 || (n->intr_ctl &&
			 !__atomic_load_n(&n->intr_on, __ATOMIC_RELAXED)))
			return false;
	}
	*net_rx_has = masked;
	return true;
}

/*
 * Threaded NAPI (napi_threaded_poll()): the context's own thread, as
 * the lcore (its handlers use the lcore's mempool cache and TX buffers,
 * under the execution lock like sirqd), SCHED_OTHER on the lcore's CPUs.
 * It sleeps until its context is scheduled, then polls it with bottom
 * halves off, one poll per lock hold, until it completes; the outermost
 * bh enable runs what the polls raised (NET_TX), as local_bh_enable()
 * does in the kthread.
 *
 * Threaded busy-poll (napi_threaded_poll_loop(napi, busy_poll), 6.19):
 * no poll completes the context, so the thread polls it again and
 * again, never sleeping and never turning the queue's Rx interrupt
 * back on (napi_rearm() is not reached). Between two polls the kernel
 * calls cond_resched(), which switches only when the scheduler has
 * marked the thread; here the scheduler preempts it by itself, so the
 * loop goes straight on. Not sched_yield(): under EEVDF (Linux 6.6 on)
 * a yield forfeits the rest of the thread's slice, and a thread that
 * yields after every poll got 1,364 polls/s beside one busy task on its
 * CPU, against 186,000 alone (bench figures in docs/reliability.md).
 * A napi-set back to enabled lets the next poll complete it as usual;
 * one to disabled hands it to NET_RX (sirq_napi_set_cfg()), and the
 * thread's next poll finds it not its own.
 */
static void
napi_wake_thread(void *ctx, uint16_t idx)
{
	struct sirq_rx *rx = ctx;
	uint64_t one = 1;
	ssize_t r;

	/* EAGAIN: a wake-up is already pending. */
	r = write(rx->napi[idx].thread_fd, &one, sizeof(one));
	RTE_SET_USED(r);
}

static void *
napi_thread_main(void *arg)
{
	struct sirq_napi *n = arg;
	struct sirq_rx *rx = n->rx;
	uint16_t idx = (uint16_t)(n - rx->napi);
	rte_cpuset_t cpus = rte_lcore_cpuset(rx->lcore_id);
	uint64_t token;

	RTE_PER_LCORE(_lcore_id) = rx->lcore_id;
	if (rte_thread_set_affinity(&cpus) != 0)
		SIRQ_LOG(WARNING, "napi/%u-%u: cannot pin", rx->lcore_id, idx);
	__atomic_store_n(&n->thread_tid, (int)gettid(), __ATOMIC_RELEASE);
	for (;;) {
		if (read(n->thread_fd, &token, sizeof(token)) < 0 &&
		    errno != EINTR && errno != EAGAIN)
			SIRQ_LOG(ERR, "napi/%u-%u: eventfd read: %s",
				 rx->lcore_id, idx, strerror(errno));
		if (__atomic_load_n(&n->thread_stop, __ATOMIC_ACQUIRE) != 0)
			break;
		for (;;) {
			bool repoll;

			sirq_bh_disable(rx->cpu);
			if (rx->thread_look != NULL)
				rx->thread_look(rx->thread_polled_arg);
			repoll = sirq_napi_threaded_poll(&rx->sd, idx);
			/* Runs what the look and the poll raised (TIMER, NET_TX). */
			sirq_bh_enable(rx->cpu);
			rx->thread_polled(rx->thread_polled_arg);
			/* A stop ends a context that always has work too. */
			if (!repoll || __atomic_load_n(&n->thread_stop,
						       __ATOMIC_RELAXED) != 0)
				break;
		}
	}
	return NULL;
}

static int
napi_thread_start(struct sirq_rx *rx, uint16_t idx)
{
	struct sirq_napi *n = &rx->napi[idx];
	pthread_attr_t attr;
	char name[16];
	int ret;

	if (n->thread_running)
		return 0;
	__atomic_store_n(&n->thread_stop, 0, __ATOMIC_RELAXED);
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	ret = pthread_create(&n->thread, &attr, napi_thread_main, n);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		SIRQ_LOG(ERR, "lcore %u: cannot start the thread of NAPI %u: %s",
			 rx->lcore_id, idx, strerror(ret));
		return -ret;
	}
	snprintf(name, sizeof(name), "napi/%u-%u", rx->lcore_id, idx);
	pthread_setname_np(n->thread, name);
	n->thread_running = true;
	/*
	 * Its TID once it has one: napi-get says the thread is there when
	 * this returns. It needs no lock to get that far; a sleep, not a
	 * yield, lets it run under a SCHED_FIFO caller on the same CPU.
	 */
	while (__atomic_load_n(&n->thread_tid, __ATOMIC_ACQUIRE) < 0)
		usleep(50);
	return 0;
}

/*
 * A context set to busy-poll is scheduled at once, so that its thread
 * starts polling now rather than at the queue's next "interrupt" (the
 * kernel waits for that one): from then on no poll completes it. By the
 * execution lock's holder, with the thread started.
 */
static void
napi_busy_poll_kick(struct sirq_rx *rx, uint16_t idx)
{
	if (rx->sd.cfg[idx].threaded == SIRQ_NAPI_THREADED_BUSY_POLL &&
	    sirq_napi_schedule(&rx->sd, idx))
		SIRQ_LOG(DEBUG, "lcore %u: NAPI %u busy polled by its thread",
			 rx->lcore_id, idx);
}

/*
 * At the lcore's start, with the lock held: a thread for each threaded
 * context; those in busy-poll mode start polling.
 */
int
sirq_rx_threads_start(struct sirq_rx *rx)
{
	uint16_t i;
	int ret;

	for (i = 0; i < rx->nb_napi; i++) {
		if (!rx->sd.cfg[i].threaded)
			continue;
		ret = napi_thread_start(rx, i);
		if (ret != 0) {
			sirq_rx_threads_stop(rx);
			return ret;
		}
	}
	for (i = 0; i < rx->nb_napi; i++)
		napi_busy_poll_kick(rx, i);
	return 0;
}

/* Context @idx's thread ends, if it runs; under the lcore's napi_set_lock. */
void
sirq_rx_napi_thread_stop(struct sirq_rx *rx, uint16_t idx)
{
	struct sirq_napi *n = &rx->napi[idx];

	if (!n->thread_running)
		return;
	__atomic_store_n(&n->thread_stop, 1, __ATOMIC_RELEASE);
	napi_wake_thread(rx, idx);
	pthread_join(n->thread, NULL);
	n->thread_running = false;
	__atomic_store_n(&n->thread_tid, -1, __ATOMIC_RELAXED);
}

/* At the lcore's stop, before the drain: every context's thread ends. */
void
sirq_rx_threads_stop(struct sirq_rx *rx)
{
	uint16_t i;

	for (i = 0; i < rx->nb_napi; i++)
		sirq_rx_napi_thread_stop(rx, i);
}

bool
sirq_rx_napi_thread_running(const struct sirq_rx *rx, uint16_t idx)
{
	return rx->napi[idx].thread_running;
}

/*
 * napi-set's first half, on the caller, under the lcore's napi_set_lock
 * and without its execution lock: what a threaded context needs before
 * its settings apply. Its eventfd, which whoever schedules it writes
 * from then on; and, with @start (the lcore runs), its thread, which
 * sleeps on that eventfd until the context is scheduled for it. Starting
 * and joining threads never happens on the lcore.
 */
int
sirq_rx_napi_thread_prepare(struct sirq_rx *rx, uint16_t idx, bool start)
{
	if (rx->napi[idx].thread_fd < 0) {
		rx->napi[idx].thread_fd = eventfd(0, EFD_CLOEXEC);
		if (rx->napi[idx].thread_fd < 0)
			return -EAGAIN;
	}
	if (start && napi_thread_start(rx, idx) != 0)
		return -EAGAIN;
	return 0;
}

/*
 * napi-set's second half, by the execution lock's holder (on the lcore,
 * sirq_lcore_call()): the settings. A context set to busy-poll starts
 * polling at once while the lcore runs (@running).
 */
int
sirq_rx_napi_apply(struct sirq_rx *rx, uint16_t idx,
		   const struct sirq_napi_params *p, bool running)
{
	int ret;

	if (idx >= rx->nb_napi || p->threaded >= SIRQ_NAPI_THREADED_MAX)
		return -EINVAL;
	ret = sirq_napi_set_cfg(&rx->sd, idx, p);
	if (ret == 0 && running)
		napi_busy_poll_kick(rx, idx);
	return ret;
}

/* Before the launch: both halves at once (sirq_lcore_add_rx_queue()). */
int
sirq_rx_napi_set(struct sirq_rx *rx, uint16_t idx,
		 const struct sirq_napi_params *p)
{
	int ret = 0;

	if (idx >= rx->nb_napi || p->threaded >= SIRQ_NAPI_THREADED_MAX)
		return -EINVAL;
	if (p->threaded)
		ret = sirq_rx_napi_thread_prepare(rx, idx, false);
	return ret != 0 ? ret : sirq_rx_napi_apply(rx, idx, p, false);
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
	}
	sirq_softnet_reset(&rx->sd);
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
		if (n->thread_fd >= 0)
			close(n->thread_fd);
		n->thread_fd = -1;
	}
	rx->nb_napi = 0;
}
