/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The DPDK binding: a softirq dispatcher per lcore.
 *
 * Each iteration is a "hardirq" (look at the Rx queues that are not being
 * polled already, and at the rte_timer deadline; raise what is due) and an
 * irq_exit() (the engine runs pending work as the policy says). The
 * engine decides everything about policy; this file only feeds it.
 *
 * No vdev here can say whether an Rx queue has packets without taking them
 * (rx_queue_count and descriptor status are -ENOTSUP), so a queue is found
 * busy by fetching up to SIRQ_STAGE_SIZE packets into its staging array,
 * which NET_RX consumes first: the NAPI "interrupt" is a burst that
 * returned packets, and from then on the queue is on the poll list until
 * a poll returns less than its weight (napi_complete_done()).
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <numa.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_spinlock.h>
#include <rte_timer.h>

#include "sirq_private.h"
#include "sirq_lcore.h"

RTE_LOG_REGISTER(sirq_logtype, sirq, INFO);

#define NS_PER_US	1000ULL
#define NS_PER_SEC	1000000000ULL
/* ns = tsc * mult >> shift; 2^32 keeps the error under 1 ns per second. */
#define TSC_NS_SHIFT	32
/* Epoll events taken per sleep in irq mode. */
#define IRQ_MAX_EVENTS	16
/* Epoll data of the kick eventfd; Rx queues use their NAPI index. */
#define IRQ_KICK_TAG	UINT32_MAX
/*
 * Longest run of boosted worker passes while the application does not
 * want the CPU: the tick at HZ=1000, the finest granularity at which
 * cond_resched() would let another task in.
 */
#define WORKER_RESCHED_NS	(1000 * NS_PER_US)

/* Registry for stop_all() and telemetry; guarded for create/free only. */
static struct sirq_lcore *lcores[RTE_MAX_LCORE];
static rte_spinlock_t lcores_lock = RTE_SPINLOCK_INITIALIZER;

static uint64_t tsc_ns_mult;

static uint64_t
tsc_clock_ns(void *ctx)
{
	RTE_SET_USED(ctx);
	return (uint64_t)(((unsigned __int128)rte_get_tsc_cycles() *
			   tsc_ns_mult) >> TSC_NS_SHIFT);
}

static void
wake_fd(int fd)
{
	uint64_t one = 1;

	/* EAGAIN means the counter is already non-zero: awake anyway. */
	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		SIRQ_LOG(ERR, "eventfd write failed: %s", strerror(errno));
}

static void
lcore_wake_worker(void *ctx)
{
	struct sirq_lcore *lc = ctx;

	wake_fd(lc->worker_fd);
}

static void
lcore_kick(void *ctx)
{
	struct sirq_lcore *lc = ctx;

	if (lc->conf.mode == SIRQ_MODE_IRQ)
		wake_fd(lc->kick_fd);
}

static bool
lcore_need_resched(void *ctx)
{
	struct sirq_lcore *lc = ctx;

	return lc->conf.need_resched_fn(lc->conf.need_resched_arg);
}

void
sirq_lcore_conf_default(struct sirq_lcore_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	sirq_params_default(&conf->params);
	conf->mode = SIRQ_MODE_POLL;
	conf->napi_weight = SIRQ_NAPI_WEIGHT_DEFAULT;
	conf->netdev_budget = SIRQ_NETDEV_BUDGET_DEFAULT;
	conf->netdev_budget_us = SIRQ_NETDEV_BUDGET_US_DEFAULT;
	conf->irq_tick_us = SIRQ_IRQ_TICK_US_DEFAULT;
	conf->irq_priority = SIRQ_IRQ_PRIORITY_DEFAULT;
	conf->worker_boost_priority = SIRQ_WORKER_BOOST_PRIORITY_DEFAULT;
}

/* Parse "2", "2-3,6" into a cpuset; -EINVAL names nothing, caller logs. */
static int
parse_cpu_list(const char *s, rte_cpuset_t *set)
{
	char *end;

	CPU_ZERO(set);
	while (*s != '\0') {
		unsigned long lo, hi;

		errno = 0;
		lo = strtoul(s, &end, 10);
		if (end == s || errno != 0 || lo >= CPU_SETSIZE)
			return -EINVAL;
		hi = lo;
		s = end;
		if (*s == '-') {
			s++;
			hi = strtoul(s, &end, 10);
			if (end == s || errno != 0 || hi >= CPU_SETSIZE || hi < lo)
				return -EINVAL;
			s = end;
		}
		for (; lo <= hi; lo++)
			CPU_SET(lo, set);
		if (*s == ',')
			s++;
		else if (*s != '\0')
			return -EINVAL;
	}
	return CPU_COUNT(set) > 0 ? 0 : -EINVAL;
}

static int
check_conf(unsigned int lcore_id, const struct sirq_lcore_conf *c)
{
#define BAD(fmt, ...) do { \
		SIRQ_LOG(ERR, "lcore %u: " fmt, lcore_id, __VA_ARGS__); \
		return -EINVAL; \
	} while (0)

	if (sirq_params_check(&c->params) != 0)
		BAD("%s", "bad engine parameters");
	if ((unsigned int)c->mode >= SIRQ_MODE_MAX)
		BAD("unknown mode %d", (int)c->mode);
	if (c->napi_weight == 0 || c->napi_weight > SIRQ_NAPI_WEIGHT_MAX)
		BAD("napi weight %u not in 1..%u", c->napi_weight,
		    SIRQ_NAPI_WEIGHT_MAX);
	if (c->netdev_budget == 0)
		BAD("netdev budget %u", c->netdev_budget);
	if (c->netdev_budget_us == 0)
		BAD("netdev budget-us %u", c->netdev_budget_us);
	if (c->mode == SIRQ_MODE_IRQ && c->irq_tick_us == 0)
		BAD("irq tick %u us", c->irq_tick_us);
	if (c->mode == SIRQ_MODE_IRQ &&
	    (c->irq_priority < sched_get_priority_min(SCHED_FIFO) ||
	     c->irq_priority > sched_get_priority_max(SCHED_FIFO)))
		BAD("irq priority %d not a SCHED_FIFO priority", c->irq_priority);
	if (c->worker_boost_priority != 0 &&
	    (c->worker_boost_priority < sched_get_priority_min(SCHED_FIFO) ||
	     c->worker_boost_priority > sched_get_priority_max(SCHED_FIFO)))
		BAD("worker boost priority %d not a SCHED_FIFO priority",
		    c->worker_boost_priority);
	if (c->mode == SIRQ_MODE_IRQ &&
	    c->worker_boost_priority >= c->irq_priority)
		BAD("worker boost priority %d must be below irq priority %d",
		    c->worker_boost_priority, c->irq_priority);
	return 0;
#undef BAD
}

/* TIMER: the rte_timer list of this lcore. */
static void
timer_action(struct sirq_cpu *cpu, void *arg)
{
	RTE_SET_USED(cpu);
	RTE_SET_USED(arg);
	rte_timer_manage();
}

struct sirq_lcore *
sirq_lcore_create(unsigned int lcore_id, const struct sirq_lcore_conf *conf)
{
	struct sirq_cpu_conf cc;
	struct sirq_lcore *lc;
	char name[SIRQ_CPU_NAME_LEN];
	int socket, ret;

	if (lcore_id >= RTE_MAX_LCORE || conf == NULL ||
	    !rte_lcore_is_enabled(lcore_id)) {
		SIRQ_LOG(ERR, "lcore %u is not an enabled lcore", lcore_id);
		rte_errno = EINVAL;
		return NULL;
	}
	if (check_conf(lcore_id, conf) != 0) {
		rte_errno = EINVAL;
		return NULL;
	}

	socket = (int)rte_lcore_to_socket_id(lcore_id);
	lc = rte_zmalloc_socket("sirq_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE,
				socket);
	if (lc == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	lc->lcore_id = lcore_id;
	lc->socket = socket;
	lc->conf = *conf;
	lc->worker_fd = -1;
	lc->kick_fd = -1;
	lc->epoll_fd = -1;
	if (conf->worker_cpus != NULL && conf->worker_cpus[0] != '\0') {
		if (parse_cpu_list(conf->worker_cpus, &lc->worker_cpus) != 0) {
			SIRQ_LOG(ERR, "lcore %u: bad worker cpus '%s'",
				 lcore_id, conf->worker_cpus);
			rte_errno = EINVAL;
			goto fail;
		}
	} else {
		lc->worker_cpus = rte_lcore_cpuset(lcore_id);
	}
	lc->conf.worker_cpus = NULL;	/* not kept: the caller's string */

	if (tsc_ns_mult == 0)
		tsc_ns_mult = (uint64_t)(((unsigned __int128)NS_PER_SEC <<
					  TSC_NS_SHIFT) / rte_get_tsc_hz());

	lc->worker_fd = eventfd(0, EFD_CLOEXEC);
	lc->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (lc->worker_fd < 0 || lc->kick_fd < 0) {
		SIRQ_LOG(ERR, "lcore %u: eventfd: %s", lcore_id,
			 strerror(errno));
		rte_errno = errno;
		goto fail;
	}

	snprintf(name, sizeof(name), "lcore%u", lcore_id);
	memset(&cc, 0, sizeof(cc));
	cc.name = name;
	cc.id = lcore_id;
	cc.params = conf->params;
	cc.ops.clock_ns = tsc_clock_ns;
	cc.ops.wake_worker = lcore_wake_worker;
	cc.ops.kick = lcore_kick;
	cc.ops.need_resched = conf->need_resched_fn != NULL ?
		lcore_need_resched : NULL;
	cc.ops.ctx = lc;
	lc->cpu_mem = rte_malloc_socket("sirq_cpu", sirq_cpu_memsize(),
					RTE_CACHE_LINE_SIZE, socket);
	lc->cpu = lc->cpu_mem != NULL ? sirq_cpu_init(lc->cpu_mem, &cc) : NULL;
	if (lc->cpu == NULL) {
		rte_errno = lc->cpu_mem == NULL ? ENOMEM : EINVAL;
		goto fail;
	}

	ret = rte_timer_subsystem_init();
	if (ret != 0 && ret != -EALREADY) {
		SIRQ_LOG(ERR, "rte_timer_subsystem_init: %s", strerror(-ret));
		rte_errno = -ret;
		goto fail;
	}
	/* rte_timer lists belong to an lcore: TIMER stays on its thread. */
	sirq_register(lc->cpu, SIRQ_TIMER, timer_action, lc, NULL);
	sirq_set_inline_only(lc->cpu, SIRQ_TIMER, true);
	sirq_register(lc->cpu, SIRQ_NET_RX, sirq_net_rx_action, lc, NULL);
	sirq_register(lc->cpu, SIRQ_NET_TX, sirq_net_tx_action, lc, NULL);

	rte_spinlock_lock(&lcores_lock);
	if (lcores[lcore_id] != NULL) {
		rte_spinlock_unlock(&lcores_lock);
		SIRQ_LOG(ERR, "lcore %u already has a dispatcher", lcore_id);
		rte_errno = EEXIST;
		goto fail;
	}
	lcores[lcore_id] = lc;
	rte_spinlock_unlock(&lcores_lock);
	return lc;

fail:
	if (lc->worker_fd >= 0)
		close(lc->worker_fd);
	if (lc->kick_fd >= 0)
		close(lc->kick_fd);
	rte_free(lc->cpu_mem);
	rte_free(lc);
	return NULL;
}

int
sirq_lcore_add_rx_queue(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
			sirq_rx_fn_t fn, void *arg)
{
	struct rte_eth_dev_info info;
	struct sirq_napi *n;
	int socket;

	if (fn == NULL || !rte_eth_dev_is_valid_port(port) ||
	    rte_eth_dev_info_get(port, &info) != 0 ||
	    queue >= info.nb_rx_queues) {
		SIRQ_LOG(ERR, "lcore %u: no Rx queue %u on port %u",
			 lc->lcore_id, queue, port);
		return -EINVAL;
	}
	if (lc->nb_napi >= SIRQ_LCORE_MAX_NAPI) {
		SIRQ_LOG(ERR, "lcore %u: more than %u Rx queues", lc->lcore_id,
			 SIRQ_LCORE_MAX_NAPI);
		return -ENOSPC;
	}

	/* As l2fwd and testpmd do: say so, it costs every packet. */
	socket = rte_eth_dev_socket_id(port);
	if (socket >= 0 && socket != lc->socket)
		SIRQ_LOG(WARNING,
			 "port %u is on socket %d, polled from lcore %u on socket %d",
			 port, socket, lc->lcore_id, lc->socket);

	n = &lc->napi[lc->nb_napi++];
	memset(n, 0, sizeof(*n));
	n->port = port;
	n->queue = queue;
	n->weight = lc->conf.napi_weight;
	n->fn = fn;
	n->arg = arg;
	return 0;
}

struct sirq_cpu *
sirq_lcore_cpu(struct sirq_lcore *lc)
{
	return lc->cpu;
}

unsigned int
sirq_lcore_id(const struct sirq_lcore *lc)
{
	return lc->lcore_id;
}

/*
 * napi_schedule(): hand a queue with work to NET_RX, which may run on the
 * worker: the staged packets are published by the release on the ready
 * mask and taken with the acquire in poll_list_splice().
 */
static inline void
napi_schedule(struct sirq_lcore *lc, uint16_t idx)
{
	__atomic_store_n(&lc->napi[idx].scheduled, true, __ATOMIC_RELAXED);
	__atomic_fetch_or(&lc->napi_ready, UINT64_C(1) << idx,
			  __ATOMIC_RELEASE);
	sirq_raise_irqoff(lc->cpu, SIRQ_NET_RX);
}

/* napi_complete_done(): give the queue and its staging back. */
static inline void
napi_complete(struct sirq_napi *n)
{
	__atomic_store_n(&n->scheduled, false, __ATOMIC_RELEASE);
}

static inline void
poll_list_add(struct sirq_lcore *lc, uint16_t idx)
{
	lc->poll_list[(lc->poll_head + lc->poll_len) % SIRQ_LCORE_MAX_NAPI] = idx;
	lc->poll_len++;
}

static void
poll_list_splice(struct sirq_lcore *lc)
{
	uint64_t ready = __atomic_exchange_n(&lc->napi_ready, 0,
					     __ATOMIC_ACQUIRE);

	while (ready != 0) {
		poll_list_add(lc, (uint16_t)__builtin_ctzll(ready));
		ready &= ready - 1;
	}
}

/* The Rx "interrupt": fetch from queues that are not on the poll list. */
static inline void
hardirq_rx(struct sirq_lcore *lc)
{
	uint16_t i;

	for (i = 0; i < lc->nb_napi; i++) {
		struct sirq_napi *n = &lc->napi[i];

		if (__atomic_load_n(&n->scheduled, __ATOMIC_ACQUIRE))
			continue;
		n->nb_staged = rte_eth_rx_burst(n->port, n->queue, n->staged,
						SIRQ_STAGE_SIZE);
		n->staged_pos = 0;
		if (n->nb_staged != 0)
			napi_schedule(lc, i);
	}
}

static inline void
hardirq_timer(struct sirq_lcore *lc)
{
	if (rte_timer_next_ticks() == 0)
		sirq_raise_irqoff(lc->cpu, SIRQ_TIMER);
}

/* Every source, polled once per iteration: Rx, TX completions, timers. */
static inline void
hardirq(struct sirq_lcore *lc)
{
	hardirq_rx(lc);
	if (lc->nb_txq != 0)
		sirq_hardirq_tx(lc);
	hardirq_timer(lc);
}

static inline void
rcu_quiescent(struct sirq_lcore *lc, unsigned int id)
{
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_quiescent(lc->conf.qsbr, id);
}

/* One NAPI poll: the staged packets first, then the queue, up to weight. */
static unsigned int
napi_poll(struct sirq_lcore *lc, struct sirq_napi *n)
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
	if (got < n->weight)
		got += rte_eth_rx_burst(n->port, n->queue, &pkts[got],
					(uint16_t)(n->weight - got));

	sirq_stat_add(&lc->stats.rx_polls, 1);
	if (got != 0) {
		sirq_stat_add(&lc->stats.rx_packets, got);
		n->fn(lc, n->port, n->queue, pkts, (uint16_t)got, n->arg);
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
	struct sirq_lcore *lc = arg;
	uint64_t budget_end = tsc_clock_ns(NULL) +
		(uint64_t)lc->conf.netdev_budget_us * NS_PER_US;
	int budget = lc->conf.netdev_budget;
	uint16_t left;

	poll_list_splice(lc);
	for (left = lc->poll_len; left != 0; left--) {
		uint16_t idx = lc->poll_list[lc->poll_head];
		struct sirq_napi *n = &lc->napi[idx];
		unsigned int work;

		lc->poll_head = (lc->poll_head + 1) % SIRQ_LCORE_MAX_NAPI;
		lc->poll_len--;

		work = napi_poll(lc, n);
		budget -= (int)work;
		if (work < n->weight)
			napi_complete(n);
		else
			poll_list_add(lc, idx);

		if (budget <= 0 || tsc_clock_ns(NULL) >= budget_end) {
			sirq_stat_add(&lc->stats.time_squeeze, 1);
			if (budget <= 0)
				sirq_stat_add(&lc->stats.budget_exhausted, 1);
			break;
		}
	}
	if (lc->poll_len != 0)
		sirq_raise_irqoff(cpu, SIRQ_NET_RX);
}

/*
 * Enter or leave the non-preemptible part of a worker pass. A refused
 * boost is reported once and not tried again (sirqd's own copy of the
 * priority: the configuration stays what the user asked for).
 */
static bool
worker_boost(struct sirq_lcore *lc, bool on)
{
	struct sched_param sp = {
		.sched_priority = on ? lc->worker_boost : 0,
	};
	int ret;

	ret = pthread_setschedparam(pthread_self(),
				    on ? SCHED_FIFO : SCHED_OTHER, &sp);
	if (ret != 0 && on) {
		SIRQ_LOG(WARNING,
			 "sirqd/%u: SCHED_FIFO %d refused (%s): passes run preemptible",
			 lc->lcore_id, lc->worker_boost, strerror(ret));
		lc->worker_boost = 0;
	}
	return ret == 0;
}

/*
 * One pass, boosted. Between passes the worker drops back to SCHED_OTHER
 * and yields, as ksoftirqd's cond_resched() lets tasks in; but
 * cond_resched() reschedules only when the tick has marked the task, so
 * while the application does not want the CPU consecutive passes stay
 * boosted for up to WORKER_RESCHED_NS: two sched_setscheduler() calls per
 * pass were 6% of a flood forwarded by the worker.
 */
static enum sirq_worker_status
worker_pass(struct sirq_lcore *lc)
{
	enum sirq_worker_status st;

	if (!lc->worker_boosted && lc->worker_boost != 0 &&
	    sirq_pending(lc->cpu) != 0 && worker_boost(lc, true)) {
		lc->worker_boosted = true;
		lc->worker_boost_since = rte_rdtsc();
	}
	st = sirq_worker_run(lc->cpu);
	if (lc->worker_boosted &&
	    (st != SIRQ_WORKER_YIELD || sirq_need_resched(lc->cpu) ||
	     rte_rdtsc() - lc->worker_boost_since >= lc->worker_resched_tsc)) {
		worker_boost(lc, false);
		lc->worker_boosted = false;
	}
	return st;
}

/*
 * sirqd placed on CPUs of another node than the lcore it serves: its
 * allocations still prefer the lcore's node, where the queues and the
 * per-lcore state are; the placement is reported once.
 */
static void
worker_numa_policy(struct sirq_lcore *lc)
{
	unsigned int cpu;

	if (numa_available() < 0 || lc->socket < 0)
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &lc->worker_cpus) ||
		    numa_node_of_cpu((int)cpu) == lc->socket)
			continue;
		SIRQ_LOG(WARNING,
			 "sirqd/%u: CPU %u is on node %d, lcore %u on node %d; memory stays on node %d",
			 lc->lcore_id, cpu, numa_node_of_cpu((int)cpu),
			 lc->lcore_id, lc->socket, lc->socket);
		numa_set_preferred(lc->socket);
		return;
	}
}

static void *
worker_main(void *arg)
{
	struct sirq_lcore *lc = arg;
	uint64_t token;

	/*
	 * sirqd must not borrow the dispatcher's lcore id, whose per-lcore
	 * mempool cache is not thread-safe. By default it has none, because
	 * registering one (rte_thread_register) disables multi-process for
	 * good, which dpdk-dumpcap and dpdk-proc-info need, and its mempool
	 * operations go uncached to the shared ring; conf.worker_register
	 * chooses the cache instead. Either way handlers that need the
	 * lcore's own identity stay on the dispatcher (sirq_set_inline_only).
	 */
	worker_numa_policy(lc);
	if (lc->conf.worker_register && rte_thread_register() != 0)
		SIRQ_LOG(WARNING,
			 "sirqd/%u: no lcore id of its own (%s): mempool operations stay uncached",
			 lc->lcore_id, rte_strerror(rte_errno));
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_thread_online(lc->conf.qsbr, lc->conf.qsbr_worker_id);

	for (;;) {
		switch (worker_pass(lc)) {
		case SIRQ_WORKER_SLEEP:
			if (lc->conf.qsbr != NULL)
				rte_rcu_qsbr_thread_offline(lc->conf.qsbr,
							    lc->conf.qsbr_worker_id);
			if (read(lc->worker_fd, &token, sizeof(token)) < 0 &&
			    errno != EINTR)
				SIRQ_LOG(ERR, "sirqd/%u: eventfd read: %s",
					 lc->lcore_id, strerror(errno));
			if (lc->conf.qsbr != NULL)
				rte_rcu_qsbr_thread_online(lc->conf.qsbr,
							   lc->conf.qsbr_worker_id);
			break;
		case SIRQ_WORKER_YIELD:
			sirq_stat_add(&lc->stats.worker_passes, 1);
			rcu_quiescent(lc, lc->conf.qsbr_worker_id);
			if (!lc->worker_boosted)
				sched_yield();	/* cond_resched() */
			break;
		case SIRQ_WORKER_BUSY:
			sched_yield();
			break;
		case SIRQ_WORKER_EXIT:
		default:
			if (lc->conf.qsbr != NULL)
				rte_rcu_qsbr_thread_offline(lc->conf.qsbr,
							    lc->conf.qsbr_worker_id);
			/* Gives back a registered lcore id; no-op otherwise. */
			rte_thread_unregister();
			return NULL;
		}
	}
}

static int
worker_start(struct sirq_lcore *lc)
{
	char name[16];
	int ret;

	pthread_attr_t attr;

	/* Pinned and SCHED_OTHER from its first instruction, whoever starts it. */
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	ret = pthread_attr_setaffinity_np(&attr, sizeof(lc->worker_cpus),
					  &lc->worker_cpus);
	if (ret != 0)
		SIRQ_LOG(WARNING, "sirqd/%u: cannot pin: %s", lc->lcore_id,
			 strerror(ret));
	lc->worker_boost = lc->conf.worker_boost_priority;
	lc->worker_boosted = false;
	lc->worker_resched_tsc = WORKER_RESCHED_NS * rte_get_tsc_hz() /
		NS_PER_SEC;
	sirq_worker_unpark(lc->cpu);
	ret = pthread_create(&lc->worker, &attr, worker_main, lc);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		SIRQ_LOG(ERR, "lcore %u: cannot start sirqd: %s", lc->lcore_id,
			 strerror(ret));
		sirq_worker_park(lc->cpu);
		return -ret;
	}
	snprintf(name, sizeof(name), "sirqd/%u", lc->lcore_id);
	pthread_setname_np(lc->worker, name);
	lc->worker_running = true;
	return 0;
}

static void
worker_stop(struct sirq_lcore *lc)
{
	if (!lc->worker_running)
		return;
	sirq_worker_park(lc->cpu);
	wake_fd(lc->worker_fd);
	pthread_join(lc->worker, NULL);
	lc->worker_running = false;
}

static inline bool
should_stop(const struct sirq_lcore *lc)
{
	return __atomic_load_n(&lc->stop, __ATOMIC_RELAXED) != 0;
}

static void
poll_loop(struct sirq_lcore *lc)
{
	enum sirq_irq_exit_result res;

	while (!should_stop(lc)) {
		hardirq(lc);
		res = sirq_irq_exit(lc->cpu);
		rcu_quiescent(lc, lc->conf.qsbr_dispatcher_id);
		if (lc->conf.app_fn != NULL)
			lc->conf.app_fn(lc, lc->conf.app_arg);
		if (res == SIRQ_IRQ_EXIT_DEFERRED && !sirq_need_resched(lc->cpu))
			/*
			 * Work left to a runnable sirqd and no process that
			 * wants this CPU: spinning would only keep sirqd
			 * waiting for the scheduler, so give it the CPU now.
			 * While the application wants it, sirqd waits: that
			 * is the scenario the policies differ on.
			 */
			sched_yield();
		sirq_stat_add(&lc->stats.iterations, 1);
	}
}

static int
irq_setup(struct sirq_lcore *lc)
{
	struct sched_param sp = { .sched_priority = lc->conf.irq_priority };
	struct epoll_event ev = { .events = EPOLLIN };
	uint16_t i;
	int ret;

	lc->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (lc->epoll_fd < 0)
		return -errno;
	ev.data.u32 = IRQ_KICK_TAG;
	if (epoll_ctl(lc->epoll_fd, EPOLL_CTL_ADD, lc->kick_fd, &ev) != 0)
		return -errno;

	/* Rx interrupts where the PMD has them (net_tap); else the tick. */
	for (i = 0; i < lc->nb_napi; i++) {
		struct sirq_napi *n = &lc->napi[i];
		int fd;

		fd = rte_eth_dev_rx_intr_ctl_q_get_fd(n->port, n->queue);
		if (fd < 0)
			continue;
		/* -ENOTSUP on net_tap, whose events fire all the same. */
		rte_eth_dev_rx_intr_enable(n->port, n->queue);
		ev.events = EPOLLIN | EPOLLET;
		ev.data.u32 = i;
		if (epoll_ctl(lc->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0)
			lc->nb_rx_intr++;
	}

	ret = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (ret != 0)
		SIRQ_LOG(WARNING,
			 "lcore %u: SCHED_FIFO %d refused (%s): the dispatcher will not preempt like a hardirq",
			 lc->lcore_id, lc->conf.irq_priority, strerror(ret));
	SIRQ_LOG(INFO, "lcore %u: irq mode, %u Rx interrupt(s), tick %u us",
		 lc->lcore_id, lc->nb_rx_intr, lc->conf.irq_tick_us);
	return 0;
}

/*
 * Sleep until an Rx interrupt, a kick, the tick, or the next timer. When
 * the execution lock is busy, sleep the tick even with a timer due: the
 * holder (sirqd, below our SCHED_FIFO priority, or a bh-disabled thread)
 * only runs while we sleep, and TIMER can only run here once it is done.
 */
static void
irq_sleep(struct sirq_lcore *lc, enum sirq_irq_exit_result res)
{
	struct epoll_event ev[IRQ_MAX_EVENTS];
	uint64_t sleep_ns = (uint64_t)lc->conf.irq_tick_us * NS_PER_US;
	int64_t ticks = res == SIRQ_IRQ_EXIT_BUSY ? -1 : rte_timer_next_ticks();
	struct timespec ts;
	int i, n;

	if (ticks == 0)
		return;
	if (ticks > 0) {
		uint64_t timer_ns = (uint64_t)(((unsigned __int128)ticks *
						tsc_ns_mult) >> TSC_NS_SHIFT);

		sleep_ns = RTE_MIN(sleep_ns, timer_ns);
	}
	ts.tv_sec = (time_t)(sleep_ns / NS_PER_SEC);
	ts.tv_nsec = (long)(sleep_ns % NS_PER_SEC);
	sirq_stat_add(&lc->stats.irq_sleeps, 1);
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_thread_offline(lc->conf.qsbr,
					    lc->conf.qsbr_dispatcher_id);
	n = epoll_pwait2(lc->epoll_fd, ev, IRQ_MAX_EVENTS, &ts, NULL);
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_thread_online(lc->conf.qsbr,
					   lc->conf.qsbr_dispatcher_id);
	for (i = 0; i < n; i++) {
		uint64_t token;

		if (ev[i].data.u32 != IRQ_KICK_TAG) {
			sirq_stat_add(&lc->stats.irq_rx_events, 1);
			continue;
		}
		if (read(lc->kick_fd, &token, sizeof(token)) < 0 &&
		    errno != EAGAIN)
			SIRQ_LOG(ERR, "lcore %u: kick read: %s", lc->lcore_id,
				 strerror(errno));
	}
}

/*
 * irq mode: the dispatcher runs at SCHED_FIFO and sleeps between
 * "interrupts", so the worker and the application's threads on this CPU
 * only run while it sleeps, as ksoftirqd and user tasks do beside a
 * hardirq. Work is still found by fetching: interrupts are edge-triggered,
 * so every wake-up looks at every idle queue before sleeping again.
 */
static void
irq_loop(struct sirq_lcore *lc)
{
	enum sirq_irq_exit_result res;

	while (!should_stop(lc)) {
		hardirq(lc);
		res = sirq_irq_exit(lc->cpu);
		rcu_quiescent(lc, lc->conf.qsbr_dispatcher_id);
		sirq_stat_add(&lc->stats.iterations, 1);
		/*
		 * Loop at once only for work of our own; work left to sirqd,
		 * or a lock held by sirqd or a bh-disabled thread, needs
		 * them to run, which a SCHED_FIFO loop would prevent.
		 */
		if (res != SIRQ_IRQ_EXIT_RAN || sirq_pending(lc->cpu) == 0 ||
		    sirq_worker_state(lc->cpu) == SIRQ_WORKER_RUNNABLE)
			irq_sleep(lc, res);
	}
}

/*
 * After the last iteration: packets fetched but never polled go back to
 * their pool (counted as rx_dropped_at_stop), buffered ones are sent.
 */
static void
lcore_drain(struct sirq_lcore *lc)
{
	uint16_t i;

	for (i = 0; i < lc->nb_napi; i++) {
		struct sirq_napi *n = &lc->napi[i];

		if (n->staged_pos < n->nb_staged) {
			rte_pktmbuf_free_bulk(&n->staged[n->staged_pos],
					      n->nb_staged - n->staged_pos);
			sirq_stat_add(&lc->stats.rx_dropped_at_stop,
				      n->nb_staged - n->staged_pos);
		}
		n->nb_staged = n->staged_pos = 0;
		__atomic_store_n(&n->scheduled, false, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&lc->napi_ready, 0, __ATOMIC_RELAXED);
	lc->poll_len = 0;
	sirq_lcore_tx_drain(lc);
}

int
sirq_lcore_main(void *arg)
{
	struct sirq_lcore *lc = arg;
	struct sched_param saved_param;
	int saved_policy, ret;

	if (lc == NULL || rte_lcore_id() != lc->lcore_id) {
		SIRQ_LOG(ERR, "sirq_lcore_main on lcore %u for lcore %u",
			 rte_lcore_id(), lc != NULL ? lc->lcore_id : 0);
		return -EINVAL;
	}
	ret = worker_start(lc);
	if (ret != 0)
		return ret;

	if (lc->conf.mode == SIRQ_MODE_IRQ) {
		pthread_getschedparam(pthread_self(), &saved_policy, &saved_param);
		ret = irq_setup(lc);
		if (ret == 0)
			irq_loop(lc);
		else
			SIRQ_LOG(ERR, "lcore %u: irq mode set-up: %s",
				 lc->lcore_id, strerror(-ret));
		pthread_setschedparam(pthread_self(), saved_policy, &saved_param);
		if (lc->epoll_fd >= 0) {
			close(lc->epoll_fd);
			lc->epoll_fd = -1;
		}
	} else {
		poll_loop(lc);
	}

	/* The worker goes first; then what it left is run here, once. */
	worker_stop(lc);
	sirq_irq_exit(lc->cpu);
	lcore_drain(lc);
	/* Ready to be launched again. */
	__atomic_store_n(&lc->stop, 0, __ATOMIC_RELAXED);
	return ret;
}

void
sirq_lcore_stop(struct sirq_lcore *lc)
{
	__atomic_store_n(&lc->stop, 1, __ATOMIC_RELAXED);
	if (lc->kick_fd >= 0) {
		uint64_t one = 1;
		ssize_t r = write(lc->kick_fd, &one, sizeof(one));

		RTE_SET_USED(r);
	}
}

void
sirq_lcore_stop_all(void)
{
	unsigned int i;

	/* No lock: called from signal handlers; entries are stable while running. */
	for (i = 0; i < RTE_MAX_LCORE; i++) {
		struct sirq_lcore *lc = __atomic_load_n(&lcores[i],
							__ATOMIC_ACQUIRE);

		if (lc != NULL)
			sirq_lcore_stop(lc);
	}
}

void
sirq_lcore_stats_get(const struct sirq_lcore *lc, struct sirq_lcore_stats *st)
{
	sirq_counters_copy(st, &lc->stats, sizeof(*st));
}

void
sirq_lcore_free(struct sirq_lcore *lc)
{
	uint16_t i;

	if (lc == NULL)
		return;
	rte_spinlock_lock(&lcores_lock);
	__atomic_store_n(&lcores[lc->lcore_id], NULL, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&lcores_lock);

	for (i = 0; i < lc->nb_napi; i++) {
		struct sirq_napi *n = &lc->napi[i];

		if (n->staged_pos < n->nb_staged)
			rte_pktmbuf_free_bulk(&n->staged[n->staged_pos],
					      n->nb_staged - n->staged_pos);
	}
	sirq_lcore_txq_free(lc);
	close(lc->worker_fd);
	close(lc->kick_fd);
	rte_free(lc->cpu_mem);
	rte_free(lc);
}

/* For telemetry and JSON: run @fn on each registered lcore, locked. */
void
sirq_lcore_foreach(void (*fn)(struct sirq_lcore *lc, void *arg), void *arg)
{
	unsigned int i;

	rte_spinlock_lock(&lcores_lock);
	for (i = 0; i < RTE_MAX_LCORE; i++)
		if (lcores[i] != NULL)
			fn(lcores[i], arg);
	rte_spinlock_unlock(&lcores_lock);
}

struct sirq_lcore *
sirq_lcore_lookup_locked(unsigned int lcore_id)
{
	return lcore_id < RTE_MAX_LCORE ? lcores[lcore_id] : NULL;
}

void
sirq_lcore_registry_lock(void)
{
	rte_spinlock_lock(&lcores_lock);
}

void
sirq_lcore_registry_unlock(void)
{
	rte_spinlock_unlock(&lcores_lock);
}
