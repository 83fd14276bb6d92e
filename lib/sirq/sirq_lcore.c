/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The DPDK binding: a softirq dispatcher per lcore.
 *
 * Each iteration is a "hardirq" (look at the Rx queues whose NAPI is not
 * scheduled, at TX completions and at the rte_timer deadline; raise what
 * is due) and an irq_exit() (the engine runs pending work as the policy
 * says). The engine decides everything about policy; this file only
 * feeds it. The parts have files of their own: NAPI and NET_RX in
 * sirq_napi.c, TX in sirq_tx.c, sirqd in sirq_worker.c, irq mode in
 * sirq_irq.c.
 *
 * What the "hardirq" does with the lcore's DPDK state (a fetch allocates
 * from the lcore's mempool cache; the timer list is the lcore's) happens
 * between sirq_irq_enter() and sirq_irq_exit(), under the execution lock
 * that sirqd holds for its passes: sirqd runs handlers as this lcore.
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

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

#include "sirq_lcore_internal.h"

RTE_LOG_REGISTER(sirq_logtype, sirq, INFO);

/* Registry for stop_all() and telemetry; guarded for create/free only. */
static struct sirq_lcore *lcores[RTE_MAX_LCORE];
static rte_spinlock_t lcores_lock = RTE_SPINLOCK_INITIALIZER;

uint64_t sirq_tsc_ns_mult;

static void lcore_worker_hardirq(void *ctx);
static void sirqd_went_idle(void *arg);
static void irq_worker_ran(void *arg);
static void napi_thread_polled(void *arg);
static int sthreads_sync(struct sirq_lcore *lc, bool run);
static void deadline_holders_sync(struct sirq_lcore *lc);

static inline bool
lcore_should_stop(const struct sirq_lcore *lc)
{
	return __atomic_load_n(&lc->stop, __ATOMIC_RELAXED) != 0;
}

static uint64_t
tsc_clock_ns(void *ctx)
{
	RTE_SET_USED(ctx);
	return sirq_now_ns();
}

static void
lcore_wake_worker(void *ctx)
{
	struct sirq_lcore *lc = ctx;

	sirqd_wake(&lc->worker);
}

/* A softirq thread of the execution model has work: wake it. */
static void
lcore_thread_wake(void *ctx, unsigned int thread)
{
	struct sirq_lcore *lc = ctx;

	sirqd_wake(&lc->sthread[thread]);
}

/*
 * The caller waits for the BH lock: if sirqd or a softirq thread holds
 * it, lend it the caller's real-time class and priority until its run
 * ends, as a waiter on the kernel's local_lock (an rtmutex on RT) boosts
 * the owner. Any other holder (the dispatcher, an application thread in
 * a bottom-half section) runs in the class its owner gave it.
 */
static void
lcore_lock_wait(void *ctx, uintptr_t holder)
{
	struct sirq_lcore *lc = ctx;
	struct sched_param sp;
	struct sirqd *w = NULL;
	uint32_t running;
	int policy;

	if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 ||
	    (policy != SCHED_FIFO && policy != SCHED_RR))
		return;
	if (__atomic_load_n(&lc->worker.token, __ATOMIC_ACQUIRE) == holder) {
		w = &lc->worker;
	} else {
		running = __atomic_load_n(&lc->sthreads_running,
					  __ATOMIC_ACQUIRE);
		while (running != 0 && w == NULL) {
			unsigned int t = (unsigned int)__builtin_ctz(running);

			running &= running - 1;
			if (__atomic_load_n(&lc->sthread[t].token,
					    __ATOMIC_ACQUIRE) == holder)
				w = &lc->sthread[t];
		}
	}
	/* Lent only while it still holds the lock (sirqd_lend()). */
	if (w != NULL)
		sirqd_lend(w, policy, sp.sched_priority);
}

static void
lcore_kick(void *ctx)
{
	struct sirq_lcore *lc = ctx;

	if (lc->conf.mode == SIRQ_MODE_IRQ)
		sirq_irq_kick(&lc->irq);
}

/* Handlers of this lcore run on its threads only: they use its state. */
static bool
lcore_is_local(void *ctx)
{
	struct sirq_lcore *lc = ctx;

	return rte_lcore_id() == lc->lcore_id;
}

/*
 * Process context on the lcore's CPU: its own threads (the dispatcher
 * outside its "hardirq", sirqd outside a pass), or a thread without an
 * lcore id running on one of its CPUs (an application thread beside it).
 * Another lcore's thread is another CPU.
 */
static bool
lcore_in_task(void *ctx)
{
	struct sirq_lcore *lc = ctx;
	unsigned int self = rte_lcore_id();
	rte_cpuset_t cpus;
	int where;

	if (self == lc->lcore_id)
		return true;
	if (self != LCORE_ID_ANY)
		return false;
	where = sched_getcpu();
	cpus = rte_lcore_cpuset(lc->lcore_id);
	return where >= 0 && CPU_ISSET(where, &cpus);
}

/*
 * Only the lcore's own tasks take or wait for its bottom halves: its
 * threads (dispatcher, sirqd, softirq and NAPI threads run as the
 * lcore), and threads pinned within its CPUs, which the scheduler runs
 * beside the dispatcher as the kernel runs a CPU's tasks. Any other
 * thread is another CPU's: refused while the lcore runs, counted if it
 * takes the lock before (struct sirq_ops, remote_caller).
 */
static int
lcore_remote_caller(void *ctx)
{
	struct sirq_lcore *lc = ctx;
	rte_cpuset_t mine, cpus, both;

	if (rte_lcore_id() == lc->lcore_id)
		return 0;
	if (pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) == 0) {
		cpus = rte_lcore_cpuset(lc->lcore_id);
		CPU_AND(&both, &mine, &cpus);
		if (CPU_EQUAL(&both, &mine))
			return 0;
	}
	return sirq_calls_running(&lc->calls) ? -EXDEV : 1;
}

/*
 * No registry lock: telemetry commands hold it while they change
 * settings through a remote call. An entry freed meanwhile is DPDK heap
 * memory still mapped, and a lock freed with it is not ours.
 */
bool
sirq_lcore_caller_is_softirq(void)
{
	unsigned int self = rte_lcore_id(), i;
	struct sirq_lcore *lc;

	if (self < RTE_MAX_LCORE &&
	    __atomic_load_n(&lcores[self], __ATOMIC_ACQUIRE) != NULL)
		return true;
	for (i = 0; i < RTE_MAX_LCORE; i++) {
		lc = __atomic_load_n(&lcores[i], __ATOMIC_ACQUIRE);
		if (lc != NULL && sirq_exec_lock_is_mine(lc->cpu))
			return true;
	}
	return false;
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
	if (conf == NULL)
		return;
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

/* The NAPI limits, against the library's range table. */
static const char *
napi_why_invalid(const struct sirq_lcore_params *p)
{
	const struct sirq_param_range *r;

	r = sirq_param_range("napi_weight");
	if (p->napi_weight < r->min || p->napi_weight > r->max)
		return r->why;
	r = sirq_param_range("netdev_budget");
	if (p->netdev_budget < r->min || p->netdev_budget > r->max)
		return r->why;
	r = sirq_param_range("netdev_budget_us");
	if (p->netdev_budget_us < r->min || p->netdev_budget_us > r->max)
		return r->why;
	return NULL;
}

/*
 * Why @p p does not suit an lcore in @p mode whose dispatcher runs at
 * SCHED_FIFO @p irq_priority (irq mode), written into @p buf; NULL when
 * it does.
 */
static const char *
params_why_invalid(const struct sirq_lcore_params *p, const struct sirq_cpu *cpu,
		   enum sirq_mode mode, int irq_priority, char *buf, size_t len)
{
	const char *why = cpu != NULL ?
		sirq_cpu_params_why_invalid(cpu, &p->engine) :
		sirq_params_why_invalid(&p->engine);
	int lo = sched_get_priority_min(SCHED_FIFO);
	int hi = sched_get_priority_max(SCHED_FIFO);

	if (why == NULL)
		why = napi_why_invalid(p);
	if (why != NULL)
		snprintf(buf, len, "%s", why);
	else if (mode == SIRQ_MODE_IRQ && p->irq_tick_us == 0)
		snprintf(buf, len, "irq tick %u us", p->irq_tick_us);
	else if (p->worker_boost_priority != 0 &&
		 (p->worker_boost_priority < lo || p->worker_boost_priority > hi))
		snprintf(buf, len,
			 "worker boost priority %d not a SCHED_FIFO priority (%d..%d)",
			 p->worker_boost_priority, lo, hi);
	else if (mode == SIRQ_MODE_IRQ &&
		 p->worker_boost_priority >= irq_priority)
		snprintf(buf, len,
			 "worker boost priority %d must be below irq priority %d",
			 p->worker_boost_priority, irq_priority);
	else
		return NULL;
	return buf;
}

static void
params_from_conf(struct sirq_lcore_params *p, const struct sirq_lcore_conf *c)
{
	p->engine = c->params;
	p->napi_weight = c->napi_weight;
	p->netdev_budget = c->netdev_budget;
	p->netdev_budget_us = c->netdev_budget_us;
	p->irq_tick_us = c->irq_tick_us;
	p->worker_boost_priority = c->worker_boost_priority;
}

static int
check_conf(unsigned int lcore_id, const struct sirq_lcore_conf *c)
{
	struct sirq_lcore_params p;
	char why[128];

#define BAD(fmt, ...) do { \
		SIRQ_LOG(ERR, "lcore %u: " fmt, lcore_id, __VA_ARGS__); \
		return -EINVAL; \
	} while (0)

	if ((unsigned int)c->mode >= SIRQ_MODE_MAX)
		BAD("unknown mode %d", (int)c->mode);
	if (c->mode == SIRQ_MODE_IRQ &&
	    (c->irq_priority < sched_get_priority_min(SCHED_FIFO) ||
	     c->irq_priority > sched_get_priority_max(SCHED_FIFO)))
		BAD("irq priority %d not a SCHED_FIFO priority", c->irq_priority);
	params_from_conf(&p, c);
	if (params_why_invalid(&p, NULL, c->mode, c->irq_priority, why,
			       sizeof(why)) != NULL)
		BAD("%s", why);
	if (sirq_napi_params_check(&c->napi) != 0)
		BAD("NAPI settings: defer_hard_irqs %u with gro_flush_timeout %" PRIu64
		    " ns, irq_suspend_timeout %" PRIu64
		    " ns, threaded %u (a deferral needs its timeout; timeouts up to 1 s; threaded 0 disabled, 1 enabled, 2 busy-poll)",
		    c->napi.defer_hard_irqs, c->napi.gro_flush_timeout_ns,
		    c->napi.irq_suspend_timeout_ns, c->napi.threaded);
	if (c->qsbr != NULL && c->napi.threaded != SIRQ_NAPI_THREADED_DISABLED)
		BAD("NAPI threaded %s with conf.qsbr: a NAPI thread reports no quiescent state",
		    sirq_napi_threaded_name(c->napi.threaded));
	return 0;
#undef BAD
}

int
sirq_lcore_get_params(const struct sirq_lcore *lc, struct sirq_lcore_params *p)
{
	if (lc == NULL || p == NULL)
		return -EINVAL;
	/* The engine's copy is the live one: sirq_cpu_set_params() keeps it. */
	p->engine = sirq_cpu_conf(lc->cpu)->params;
	p->napi_weight = __atomic_load_n(&lc->conf.napi_weight, __ATOMIC_RELAXED);
	p->netdev_budget = __atomic_load_n(&lc->conf.netdev_budget,
					   __ATOMIC_RELAXED);
	p->netdev_budget_us = __atomic_load_n(&lc->conf.netdev_budget_us,
					      __ATOMIC_RELAXED);
	p->irq_tick_us = __atomic_load_n(&lc->conf.irq_tick_us, __ATOMIC_RELAXED);
	p->worker_boost_priority = __atomic_load_n(&lc->worker.pi_priority,
						   __ATOMIC_RELAXED);
	return 0;
}

const char *
sirq_lcore_params_why_invalid(const struct sirq_lcore *lc,
			      const struct sirq_lcore_params *p, char *buf,
			      size_t len)
{
	return params_why_invalid(p, lc->cpu, lc->conf.mode,
				  lc->conf.irq_priority, buf, len);
}

/* On the lcore, with its lock held (sirq_lcore_call()). */
static int
params_apply(struct sirq_lcore *lc, void *arg)
{
	const struct sirq_lcore_params *p = arg;
	int ret;

	ret = sirq_cpu_set_params(lc->cpu, &p->engine);
	if (ret == 0)
		ret = sirq_softnet_set_limits(&lc->rx.sd, p->netdev_budget,
					      p->netdev_budget_us,
					      p->napi_weight);
	if (ret != 0)
		return ret;
	lc->conf.params = p->engine;
	lc->rx.weight = p->napi_weight;
	__atomic_store_n(&lc->conf.napi_weight, p->napi_weight,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&lc->conf.netdev_budget, p->netdev_budget,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&lc->conf.netdev_budget_us, p->netdev_budget_us,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&lc->conf.irq_tick_us, p->irq_tick_us,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&lc->conf.worker_boost_priority,
			 p->worker_boost_priority, __ATOMIC_RELAXED);
	__atomic_store_n(&lc->worker.pi_priority, p->worker_boost_priority,
			 __ATOMIC_RELAXED);
	return 0;
}

int
sirq_lcore_set_params(struct sirq_lcore *lc, const struct sirq_lcore_params *p)
{
	struct sirq_lcore_params np;
	char why[128];
	int ret;

	if (lc == NULL || p == NULL) {
		SIRQ_LOG(ERR, "sirq_lcore_set_params: no %s (NULL)",
			 lc == NULL ? "lcore" : "parameters");
		return -EINVAL;
	}
	if (params_why_invalid(p, lc->cpu, lc->conf.mode, lc->conf.irq_priority,
			       why, sizeof(why)) != NULL) {
		SIRQ_LOG(ERR, "lcore %u: %s; parameters unchanged",
			 lc->lcore_id, why);
		return -EINVAL;
	}
	/*
	 * Applied on the lcore, between two handlers: no pass runs with half
	 * of them, and this thread's scheduling delays only this thread.
	 */
	np = *p;
	ret = sirq_lcore_call(lc, params_apply, &np);
	if (ret == -EDEADLK)
		SIRQ_LOG(ERR, "lcore %u: parameters unchanged: another lcore's handler or thread must not wait for it (sirq_lcore_call_async() does not)",
			 lc->lcore_id);
	if (ret == 0) {
		/* The new model's softirq threads, if the lcore runs. */
		pthread_mutex_lock(&lc->napi_set_lock);
		if (__atomic_load_n(&lc->napi_running, __ATOMIC_ACQUIRE))
			ret = sthreads_sync(lc, true);
		pthread_mutex_unlock(&lc->napi_set_lock);
		SIRQ_LOG(INFO, "lcore %u: policy %s, parameters changed",
			 lc->lcore_id, sirq_policy_name(p->engine.policy));
	}
	return ret;
}

int
sirq_thread_attr_check(const struct sirq_thread_attr *a, char *why, size_t len)
{
	const struct sirq_param_range *rt, *per;
	char buf[256];
	unsigned long pmin = 100, pmax = 4194304;	/* the kernel's defaults */
	FILE *f;

	if (why == NULL || len == 0) {
		why = buf;
		len = sizeof(buf);
	}
	why[0] = '\0';
	if (a == NULL) {
		snprintf(why, len, "no attributes (NULL)");
		return -EINVAL;
	}
	switch (a->policy) {
	case -1:
	case SCHED_OTHER:
		if (a->priority != 0 || a->runtime_us != 0 ||
		    a->deadline_us != 0 || a->period_us != 0)
			snprintf(why, len, "a fair class takes a slice only, no priority, runtime, deadline or period");
		else if (a->policy == -1 && a->slice_us != 0)
			snprintf(why, len, "the default class (-1) takes nothing");
		else if (a->slice_us != 0 &&
			 (a->slice_us < SIRQ_THREAD_SLICE_MIN_US ||
			  a->slice_us > SIRQ_THREAD_SLICE_MAX_US))
			snprintf(why, len, "slice %u us: %s", a->slice_us,
				 sirq_param_range("thread_slice_us")->why);
		break;
	case SCHED_FIFO:
	case SCHED_RR:
		if (a->priority < 1 || a->priority > 99)
			snprintf(why, len, "priority %d out of range (1..99 for SCHED_FIFO and SCHED_RR)",
				 a->priority);
		else if (a->slice_us != 0 || a->runtime_us != 0 ||
			 a->deadline_us != 0 || a->period_us != 0)
			snprintf(why, len, "a real-time class takes a priority only");
		break;
	case SCHED_DEADLINE:
		f = fopen("/proc/sys/kernel/sched_deadline_period_min_us", "r");
		if (f != NULL) {
			if (fscanf(f, "%lu", &pmin) != 1)
				pmin = 100;
			fclose(f);
		}
		f = fopen("/proc/sys/kernel/sched_deadline_period_max_us", "r");
		if (f != NULL) {
			if (fscanf(f, "%lu", &pmax) != 1)
				pmax = 4194304;
			fclose(f);
		}
		rt = sirq_param_range("thread_runtime_us");
		per = sirq_param_range("thread_period_us");
		if (a->priority != 0 || a->slice_us != 0)
			snprintf(why, len, "SCHED_DEADLINE takes a runtime, a deadline and a period only");
		else if (a->runtime_us < rt->min || a->runtime_us > rt->max)
			snprintf(why, len, "runtime %u us: %s", a->runtime_us,
				 rt->why);
		else if ((a->period_us < pmin || a->period_us > pmax) &&
			 pmin == per->min && pmax == per->max)
			snprintf(why, len, "period %u us: %s", a->period_us,
				 per->why);
		else if (a->period_us < pmin || a->period_us > pmax)
			snprintf(why, len, "period %u us out of range (%lu..%lu us: kernel.sched_deadline_period_min_us, _max_us)",
				 a->period_us, pmin, pmax);
		else if (a->deadline_us != 0 &&
			 (a->deadline_us < a->runtime_us ||
			  a->deadline_us > a->period_us))
			snprintf(why, len, "deadline %u us out of range (runtime %u..period %u us)",
				 a->deadline_us, a->runtime_us, a->period_us);
		else if (a->runtime_us > a->period_us)
			snprintf(why, len, "runtime %u us longer than the period %u us",
				 a->runtime_us, a->period_us);
		break;
	default:
		snprintf(why, len, "scheduling class %d is not SCHED_OTHER, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE",
			 a->policy);
		break;
	}
	return why[0] == '\0' ? 0 : -EINVAL;
}

/*
 * A running thread's new attributes, field by field: the thread reads
 * its class and reservation in its loop without the lock (sirqd_main()).
 */
static void
sched_attr_publish(struct sirqd *w, const struct sirq_thread_attr *a)
{
	__atomic_store_n(&w->sched.priority, a->priority, __ATOMIC_RELAXED);
	__atomic_store_n(&w->sched.slice_us, a->slice_us, __ATOMIC_RELAXED);
	__atomic_store_n(&w->sched.runtime_us, a->runtime_us, __ATOMIC_RELAXED);
	__atomic_store_n(&w->sched.deadline_us, a->deadline_us, __ATOMIC_RELAXED);
	__atomic_store_n(&w->sched.period_us, a->period_us, __ATOMIC_RELAXED);
	__atomic_store_n(&w->sched.policy, a->policy, __ATOMIC_RELAXED);
}

int
sirq_lcore_thread_attr(struct sirq_lcore *lc, unsigned int vec,
		       const struct sirq_thread_attr *a)
{
	char why[256];
	struct sirqd *w;
	int ret = 0;

	if (lc == NULL || vec >= SIRQ_MAX_VECTORS || a == NULL) {
		SIRQ_LOG(ERR, "sirq_lcore_thread_attr: %s",
			 lc == NULL ? "the lcore is NULL" : a == NULL ?
			 "no attributes (NULL)" : "bad vector");
		return -EINVAL;
	}
	if (sirq_thread_attr_check(a, why, sizeof(why)) != 0) {
		SIRQ_LOG(ERR, "lcore %u: vector %u: %s", lc->lcore_id, vec, why);
		return -EINVAL;
	}
	pthread_mutex_lock(&lc->napi_set_lock);
	lc->sthread_attr[vec] = *a;
	w = &lc->sthread[vec];
	if (a->policy >= 0 && (lc->sthreads_running & SIRQ_BIT(vec)) != 0) {
		pthread_mutex_lock(&w->pi_lock);
		if (sirq_sched_needs_setattr(a) ||
		    sirq_sched_needs_setattr(&w->sched)) {
			ret = sirq_sched_apply(__atomic_load_n(&w->tid,
							       __ATOMIC_ACQUIRE),
					       a);
		} else {
			struct sched_param sp = { .sched_priority = a->priority };

			ret = -pthread_setschedparam(w->thread_id, a->policy,
						     &sp);
		}
		if (ret == 0)
			sched_attr_publish(w, a);
		pthread_mutex_unlock(&w->pi_lock);
		deadline_holders_sync(lc);
	}
	pthread_mutex_unlock(&lc->napi_set_lock);
	if (ret != 0)
		SIRQ_LOG(WARNING, "lcore %u: vector %u: attributes not changed now (%s): %s",
			 lc->lcore_id, vec, strerror(-ret),
			 sirq_sched_refusal(a, ret));
	return ret;
}

int
sirq_lcore_thread_sched(struct sirq_lcore *lc, unsigned int vec, int policy,
			int priority)
{
	struct sirq_thread_attr a = { .policy = policy, .priority = priority };

	if (policy == SCHED_DEADLINE) {
		SIRQ_LOG(ERR, "sirq_lcore_thread_sched: SCHED_DEADLINE needs a runtime and a period: sirq_lcore_thread_attr()");
		return -EINVAL;
	}
	return sirq_lcore_thread_attr(lc, vec, &a);
}

/*
 * TIMER: the rte_timer list of this lcore, from whichever thread runs
 * the vector: sirqd runs it as the lcore, like the kernel's TIMER softirq
 * in ksoftirqd.
 */
static void
timer_action(struct sirq_cpu *cpu, void *arg)
{
	SIRQ_ASSERT_EXCLUSIVE(cpu, ((struct sirq_lcore *)arg)->lcore_id,
			      "rte_timer_manage");
	rte_timer_manage();
}

static void
lcore_release(struct sirq_lcore *lc)
{
	sirq_rx_free(&lc->rx);
	sirq_tx_free(&lc->tx);
	sirqd_fini(&lc->worker);
	for (unsigned int t = 0; t < SIRQ_MAX_VECTORS; t++)
		sirqd_fini(&lc->sthread[t]);
	sirq_irq_fini(&lc->irq);
	sirq_calls_fini(&lc->calls);
	rte_free(lc->cpu_mem);
	pthread_mutex_destroy(&lc->napi_set_lock);
	pthread_mutex_destroy(&lc->napi_set_serial);
	rte_free(lc);
}

static struct sirq_lcore *
lcore_create(unsigned int lcore_id, const struct sirq_lcore_conf *conf)
{
	struct sirq_cpu_conf cc;
	struct sirq_lcore *lc;
	char name[SIRQ_CPU_NAME_LEN];
	int socket, ret;

	/* EAL counts its lcores in rte_eal_init(): none before. */
	if (rte_lcore_count() == 0) {
		SIRQ_LOG(ERR, "sirq_lcore_create() before rte_eal_init()");
		rte_errno = ENODEV;
		return NULL;
	}
	if (conf == NULL) {
		SIRQ_LOG(ERR, "lcore %u: no configuration (NULL)", lcore_id);
		rte_errno = EINVAL;
		return NULL;
	}
	if (lcore_id >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore_id)) {
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
	lc->conf.worker_cpus = NULL;	/* not kept: the caller's string */
	lc->timer_ticks = -1;
	lc->worker.fd = -1;
	for (unsigned int t = 0; t < SIRQ_MAX_VECTORS; t++) {
		lc->sthread[t].fd = -1;
		lc->sthread_attr[t].policy = -1;
	}
	lc->irq.kick_fd = -1;
	pthread_mutex_init(&lc->napi_set_lock, NULL);
	pthread_mutex_init(&lc->napi_set_serial, NULL);

	if (sirq_tsc_ns_mult == 0)
		sirq_tsc_ns_mult = (uint64_t)(((unsigned __int128)SIRQ_NS_PER_SEC <<
					       SIRQ_TSC_NS_SHIFT) / rte_get_tsc_hz());

	snprintf(name, sizeof(name), "lcore%u", lcore_id);
	memset(&cc, 0, sizeof(cc));
	cc.name = name;
	cc.id = lcore_id;
	cc.params = conf->params;
	cc.ops.clock_ns = tsc_clock_ns;
	cc.ops.wake_worker = lcore_wake_worker;
	cc.ops.kick = lcore_kick;
	cc.ops.worker_hardirq = lcore_worker_hardirq;
	cc.ops.is_local = lcore_is_local;
	cc.ops.in_task = lcore_in_task;
	cc.ops.remote_caller = lcore_remote_caller;
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

	ret = sirq_calls_init(&lc->calls, lcore_id, socket);
	if (ret == 0)
		ret = sirqd_init(&lc->worker, lc->cpu, &lc->stats, lcore_id,
				 socket, conf);
	if (ret == 0)
		ret = sirq_irq_init(&lc->irq, lcore_id,
				    conf->mode == SIRQ_MODE_IRQ, conf->qsbr,
				    conf->qsbr_dispatcher_id);
	if (ret != 0) {
		rte_errno = -ret;
		goto fail;
	}

	lc->rx.cpu = lc->cpu;
	lc->rx.lc = lc;
	lc->rx.stats = &lc->stats;
	lc->rx.tx = &lc->tx;
	lc->rx.lcore_id = lcore_id;
	lc->rx.weight = conf->napi_weight;
	lc->rx.thread_polled = napi_thread_polled;
	lc->rx.thread_look = lcore_worker_hardirq;
	lc->rx.thread_polled_arg = lc;
	ret = sirq_rx_init(&lc->rx, conf->netdev_budget,
			   conf->netdev_budget_us);
	if (ret != 0) {
		SIRQ_LOG(ERR, "lcore %u: NAPI: %s", lcore_id, strerror(-ret));
		rte_errno = -ret;
		goto fail;
	}
	lc->tx.cpu = lc->cpu;
	lc->tx.stats = &lc->stats;
	lc->tx.lcore_id = lcore_id;
	lc->worker.idle = sirqd_went_idle;
	lc->worker.ran = conf->mode == SIRQ_MODE_IRQ ? irq_worker_ran : NULL;
	lc->worker.idle_arg = lc;

	ret = rte_timer_subsystem_init();
	if (ret != 0 && ret != -EALREADY) {
		SIRQ_LOG(ERR, "rte_timer_subsystem_init: %s", strerror(-ret));
		rte_errno = -ret;
		goto fail;
	}
	sirq_register_owned(lc->cpu, SIRQ_TIMER, timer_action, lc);
	sirq_register_owned(lc->cpu, SIRQ_NET_RX, sirq_net_rx_action, &lc->rx);
	sirq_register_owned(lc->cpu, SIRQ_NET_TX, sirq_net_tx_action, &lc->tx);
	/* The vectors an expedited_mask may name exist from here. */
	if (sirq_cpu_params_why_invalid(lc->cpu, &conf->params) != NULL) {
		SIRQ_LOG(ERR, "lcore %u: %s", lcore_id,
			 sirq_cpu_params_why_invalid(lc->cpu, &conf->params));
		rte_errno = EINVAL;
		goto fail;
	}
	/*
	 * The models' softirq threads (rt's ktimers, pushdown's thread per
	 * vector) start with the dispatcher, sthreads_sync(). TIMER, NET_RX
	 * and NET_TX stay under the BH lock: the rte_timer list, the mempool
	 * cache and the TX buffers are the lcore's, shared by its threads.
	 */
	if (conf->qsbr == NULL) {
		struct sirq_thread_ops tops = {
			.wake = lcore_thread_wake,
			.lock_wait = lcore_lock_wait,
			.ctx = lc,
		};

		sirq_thread_ops_set(lc->cpu, &tops);
	}

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
	lcore_release(lc);
	return NULL;
}

struct sirq_lcore *
sirq_lcore_create(unsigned int lcore_id, const struct sirq_lcore_conf *conf)
{
	struct sirq_lcore *lc = lcore_create(lcore_id, conf);

	/* DPDK's convention, and errno too for strerror(errno). */
	if (lc == NULL)
		errno = rte_errno;
	return lc;
}

int
sirq_lcore_add_rx_queue(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
			sirq_rx_fn_t fn, void *arg)
{
	struct rte_eth_dev_info info;
	int socket, ret;

	if (lc == NULL || fn == NULL) {
		SIRQ_LOG(ERR, "sirq_lcore_add_rx_queue: %s is NULL",
			 lc == NULL ? "the lcore" : "the Rx function");
		return -EINVAL;
	}
	if (!rte_eth_dev_is_valid_port(port) ||
	    rte_eth_dev_info_get(port, &info) != 0 ||
	    queue >= info.nb_rx_queues) {
		SIRQ_LOG(ERR, "lcore %u: no Rx queue %u on port %u",
			 lc->lcore_id, queue, port);
		return -EINVAL;
	}
	if (lc->rx.nb_napi >= SIRQ_LCORE_MAX_NAPI) {
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
	ret = sirq_rx_add_queue(&lc->rx, port, queue, fn, arg);
	if (ret == 0)
		ret = sirq_rx_napi_set(&lc->rx, (uint16_t)(lc->rx.nb_napi - 1),
				       &lc->conf.napi);
	return ret;
}

int
sirq_lcore_add_tx_queue(struct sirq_lcore *lc, uint16_t port, uint16_t queue)
{
	struct rte_eth_dev_info info;
	int ret;

	if (lc == NULL) {
		SIRQ_LOG(ERR, "sirq_lcore_add_tx_queue: the lcore is NULL");
		return -EINVAL;
	}
	if (!rte_eth_dev_is_valid_port(port) ||
	    rte_eth_dev_info_get(port, &info) != 0 ||
	    queue >= info.nb_tx_queues) {
		SIRQ_LOG(ERR, "lcore %u: no TX queue %u on port %u",
			 lc->lcore_id, queue, port);
		return -EINVAL;
	}
	ret = sirq_tx_add_queue(&lc->tx, port, queue, lc->socket);
	if (ret == -ENOSPC)
		SIRQ_LOG(ERR, "lcore %u: more than %u TX queues", lc->lcore_id,
			 SIRQ_LCORE_MAX_TXQ);
	return ret;
}

/*
 * The lcore's context: its execution lock is ours (in a handler, or with
 * bottom halves off) and we run as the lcore, whose mempool cache the
 * flush uses.
 */
static inline bool
in_handler_context(const struct sirq_lcore *lc)
{
	return sirq_exec_lock_is_mine(lc->cpu) &&
		rte_lcore_id() == lc->lcore_id;
}

int
sirq_tx(struct sirq_lcore *lc, unsigned int txq, struct rte_mbuf *m)
{
	if (unlikely(lc == NULL || txq >= lc->tx.nb_txq || m == NULL))
		return -EINVAL;
	if (unlikely(!in_handler_context(lc)))
		return -EPERM;
	sirq_txq_enqueue(&lc->tx, lc->tx.txq[txq], &m, 1);
	return 0;
}

int
sirq_tx_burst(struct sirq_lcore *lc, unsigned int txq, struct rte_mbuf **pkts,
	      uint16_t n)
{
	if (unlikely(lc == NULL || txq >= lc->tx.nb_txq ||
		     (pkts == NULL && n != 0)))
		return -EINVAL;
	if (unlikely(!in_handler_context(lc)))
		return -EPERM;
	sirq_txq_enqueue(&lc->tx, lc->tx.txq[txq], pkts, n);
	return n;
}

int
sirq_tx_tracked(struct sirq_lcore *lc, unsigned int txq, struct rte_mbuf *m,
		struct sirq_tx_tracker *t)
{
	struct sirq_txq *q;
	int ret;

	if (unlikely(lc == NULL || txq >= lc->tx.nb_txq || m == NULL ||
		     t == NULL))
		return -EINVAL;
	if (unlikely(!in_handler_context(lc)))
		return -EPERM;
	q = lc->tx.txq[txq];
	ret = sirq_txq_track(q, m, t);
	if (ret == 0)
		sirq_txq_enqueue(&lc->tx, q, &m, 1);
	return ret;
}

struct sirq_cpu *
sirq_lcore_cpu(struct sirq_lcore *lc)
{
	return lc != NULL ? lc->cpu : NULL;
}

unsigned int
sirq_lcore_id(const struct sirq_lcore *lc)
{
	return lc != NULL ? lc->lcore_id : RTE_MAX_LCORE;
}

/*
 * The timer "interrupt": is the first timer of the lcore's list due?
 * rte_timer_next_ticks() takes the list's spinlock, which sirqd holds
 * inside rte_timer_manage(): only the execution lock's holder looks, so
 * a SCHED_FIFO dispatcher never spins behind a preempted sirqd.
 */
static inline int64_t
hardirq_timer(struct sirq_lcore *lc)
{
	int64_t ticks = rte_timer_next_ticks();

	if (ticks == 0)
		sirq_raise_irqoff(lc->cpu, SIRQ_TIMER);
	return ticks;
}

/*
 * The "interrupts" that need the execution lock: the NAPI contexts'
 * timers (napi_watchdog()), a fetch from idle queues without descriptor
 * status, TX completions, the timer list.
 * Adds to @fired the ones that fired.
 */
static inline int64_t
hardirq_locked(struct sirq_lcore *lc, unsigned int *fired)
{
	int64_t ticks;

	*fired += sirq_softnet_timers(&lc->rx.sd);
	*fired += sirq_hardirq_rx_fetch(&lc->rx);
	if (lc->tx.nb_txq != 0 && sirq_hardirq_tx(&lc->tx))
		(*fired)++;
	ticks = hardirq_timer(lc);
	if (ticks == 0)
		(*fired)++;
	return ticks;
}

/*
 * sirqd, with the lock, before each pass: the interrupts that fire while
 * ksoftirqd runs, so that a queue or a timer that has work now is seen
 * without waiting for the dispatcher to get the lock.
 */
static void
lcore_worker_hardirq(void *ctx)
{
	struct sirq_lcore *lc = ctx;
	unsigned int fired;

	fired = sirq_hardirq_rx_desc(&lc->rx);
	sirq_calls_run(lc, &lc->calls);
	hardirq_locked(lc, &fired);
}

static inline void
rcu_quiescent(struct sirq_lcore *lc)
{
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_quiescent(lc->conf.qsbr, lc->conf.qsbr_dispatcher_id);
}

/*
 * One "interrupt" and its irq_exit(). Queues that report descriptor
 * status are looked at without the lock, as a NIC interrupts whatever
 * the CPU is doing; everything that uses the lcore's DPDK state waits for
 * the lock. When sirqd holds it, sirqd looks at those sources itself
 * before each pass.
 */
static enum sirq_irq_exit_result sirq_lcore_look(struct sirq_lcore *lc,
						 bool interrupted);

static enum sirq_irq_exit_result
sirq_lcore_iteration(struct sirq_lcore *lc)
{
	return sirq_lcore_look(lc, true);
}

/*
 * The same, in irq mode: with @interrupted false (no tick, no Rx
 * interrupt, no kick woke the dispatcher), a look at the queues that
 * finds no "interrupt" firing is not one, and takes no decision: the
 * kernel's irq_exit() comes only with an interrupt, and a NIC queue
 * whose NAPI is scheduled is masked.
 */
static enum sirq_irq_exit_result
sirq_lcore_look(struct sirq_lcore *lc, bool interrupted)
{
	enum sirq_irq_exit_result res;
	unsigned int fired;

	fired = sirq_hardirq_rx_desc(&lc->rx);
	if (unlikely(!sirq_irq_enter(lc->cpu))) {
		lc->timer_ticks = -1;
		lc->look_busy = true;
		sirq_irq_want_lock(&lc->irq);
		sirqd_lock_busy(&lc->worker);
		res = SIRQ_IRQ_EXIT_BUSY;
	} else {
		sirqd_lock_free(&lc->worker);
		sirq_calls_run(lc, &lc->calls);
		lc->timer_ticks = hardirq_locked(lc, &fired);
		lc->look_busy = false;
		if (interrupted || fired != 0) {
			res = sirq_irq_exit(lc->cpu);
		} else {
			sirq_irq_leave(lc->cpu);
			sirq_stat_add(&lc->stats.irq_quiet_looks, 1);
			res = SIRQ_IRQ_EXIT_IDLE;
		}
	}
	rcu_quiescent(lc);
	sirq_stat_add(&lc->stats.iterations, 1);
	return res;
}

/*
 * Poll mode, work left to a runnable sirqd (or sirqd in a pass) and no
 * application slice: the dispatcher has nothing to do until sirqd goes
 * idle, and, like the
 * kernel's idle task, it must not compete with sirqd for the CPU: a
 * fair-class dispatcher that yielded in a loop would take half of it. So
 * it sleeps until sirqd is about to sleep (sirqd_went_idle()) or a kick,
 * or until the policy may decide otherwise: at the next scheduler tick
 * (tick_hz) when it leaves the work to sirqd anyway (kicinski's windows
 * end on a tick), after POLL_WAIT_LOOK_NS when it would run the work
 * itself and a look may have to lend sirqd the CPU (sirqd_lock_busy()).
 * sirqd looks at the queues and the timers itself meanwhile.
 */
#define POLL_WAIT_LOOK_NS (1000 * SIRQ_NS_PER_US)

static uint64_t
poll_wait_ns(const struct sirq_lcore *lc)
{
	uint32_t hz = sirq_cpu_conf(lc->cpu)->params.tick_hz;
	uint64_t now, period;

	if (hz == 0 || sirq_inline_wanted(lc->cpu))
		return POLL_WAIT_LOOK_NS;
	period = SIRQ_NS_PER_SEC / hz;
	now = sirq_now_ns();
	return period - now % period;
}

static bool
poll_wait_for_sirqd(struct sirq_lcore *lc)
{
	bool wait;

	/* Pairs with sirqd's store of IDLE, then load of poll_waiting. */
	__atomic_store_n(&lc->poll_waiting, 1, __ATOMIC_SEQ_CST);
	wait = sirq_worker_state(lc->cpu) == SIRQ_WORKER_RUNNABLE &&
		!lcore_should_stop(lc);
	if (wait) {
		sirq_stat_add(&lc->stats.poll_waits, 1);
		if (lc->conf.qsbr != NULL)
			rte_rcu_qsbr_thread_offline(lc->conf.qsbr,
						    lc->conf.qsbr_dispatcher_id);
		sirq_irq_wait_kick(&lc->irq, poll_wait_ns(lc));
		if (lc->conf.qsbr != NULL)
			rte_rcu_qsbr_thread_online(lc->conf.qsbr,
						   lc->conf.qsbr_dispatcher_id);
	}
	__atomic_store_n(&lc->poll_waiting, 0, __ATOMIC_RELAXED);
	return wait;
}

/* sirqd found nothing to do: a waiting dispatcher polls again. */
static void
sirqd_went_idle(void *arg)
{
	struct sirq_lcore *lc = arg;

	if (__atomic_load_n(&lc->poll_waiting, __ATOMIC_SEQ_CST) != 0)
		sirq_irq_kick(&lc->irq);
}

static void
poll_loop(struct sirq_lcore *lc)
{
	enum sirq_irq_exit_result res;

	while (!lcore_should_stop(lc)) {
		res = sirq_lcore_iteration(lc);
		if (lc->conf.app_fn != NULL)
			lc->conf.app_fn(lc, lc->conf.app_arg);
		/*
		 * A pass of its own that left work to sirqd counts too: the
		 * kernel's idle task does not poll, so a flood that overran
		 * the limits once stays with ksoftirqd, whatever woke it,
		 * until ksoftirqd finds nothing.
		 */
		if (res == SIRQ_IRQ_EXIT_RAN && lc->conf.app_fn == NULL &&
		    sirq_worker_state(lc->cpu) == SIRQ_WORKER_RUNNABLE)
			res = SIRQ_IRQ_EXIT_DEFERRED;
		if (res != SIRQ_IRQ_EXIT_DEFERRED && res != SIRQ_IRQ_EXIT_BUSY)
			continue;
		if (lc->conf.app_fn == NULL && poll_wait_for_sirqd(lc))
			continue;
		if (res == SIRQ_IRQ_EXIT_BUSY || !sirq_need_resched(lc->cpu))
			/*
			 * Work left to a runnable sirqd and an application
			 * slice that does not want this CPU, or the lock
			 * held by sirqd or a bottom-half section: spinning
			 * would only keep its holder waiting for the
			 * scheduler, so give it the CPU now. While the
			 * application wants the CPU, sirqd waits: that is
			 * the scenario the policies differ on.
			 */
			sched_yield();
	}
}

/*
 * irq mode: the dispatcher runs at SCHED_FIFO and sleeps between
 * "interrupts" (sirq_irq.c sleeps and wakes it), so sirqd and the
 * application's threads on this CPU only run while it sleeps, as
 * ksoftirqd and user tasks do beside a hardirq. It wakes for an Rx
 * interrupt where the PMD has them (net_tap), a kick (a raise from
 * another thread), the tick, or the next rte_timer.
 */
static int
irq_setup(struct sirq_lcore *lc)
{
	uint16_t i;
	int ret;

	ret = sirq_irq_setup(&lc->irq);
	if (ret != 0)
		return ret;
	/* Rx interrupts where the PMD has them (sirq_rx_intr_start()). */
	for (i = 0; i < lc->rx.nb_napi; i++) {
		const struct sirq_napi *n = &lc->rx.napi[i];

		if (n->intr_fd < 0)
			continue;
		ret = sirq_irq_watch(&lc->irq, n->intr_fd, i);
		if (ret != 0)
			return ret;
	}
	sirq_irq_fifo(&lc->irq, lc->conf.irq_priority);
	SIRQ_LOG(INFO, "lcore %u: irq mode, %u Rx interrupt(s), tick %u us",
		 lc->lcore_id, lc->rx.nb_intr, lc->conf.irq_tick_us);
	return 0;
}

/*
 * Would a look find anything that no "interrupt" brings? Not when every
 * queue of the lcore either has its Rx interrupt armed or is masked
 * (sirq_rx_irq_quiet()), with the work of those NET_RX polls at its
 * runner, which the policy leaves it to: a runnable sirqd, or the
 * execution model's NET_RX thread; and no transmitted packet is tracked,
 * whose completion only a look sees. Then the dispatcher sleeps until
 * the next tick, a timer, a kick or an Rx interrupt: a kernel whose NIC
 * is masked while ksoftirqd polls it spends nothing in irq_exit() until
 * the tick either. When the policy would run the work itself (mainline,
 * kicinski past its window), the looks go on: they are what lends a
 * preempted sirqd the CPU (sirqd_lock_busy()), and at a look every tick
 * instead, the flood's reader took 39 % of the CPU under mainline where
 * it had 7 (docs/benchmarks.md, "The dispatcher's share of a flood").
 */
static bool
irq_looks_idle(struct sirq_lcore *lc)
{
	bool net_rx_has;
	int t;

	if (lc->rx.nb_napi == 0 || sirq_tx_tracking(&lc->tx) ||
	    !sirq_rx_irq_quiet(&lc->rx, &net_rx_has))
		return false;
	if (!net_rx_has)
		return true;
	/* The model's NET_RX thread, when attached, has the work alone. */
	t = sirq_thread_of(lc->cpu, SIRQ_NET_RX);
	if (t >= 0 && sirq_thread_state(lc->cpu, (unsigned int)t) !=
	    SIRQ_WORKER_PARKED)
		return sirq_thread_state(lc->cpu, (unsigned int)t) ==
			SIRQ_WORKER_RUNNABLE;
	return sirq_worker_state(lc->cpu) == SIRQ_WORKER_RUNNABLE &&
		!sirq_inline_wanted(lc->cpu);
}

/*
 * How long to sleep: until the next look (irq_tick_us), or, when no look
 * is needed, until the next tick (@next_tick; 0 with tick_hz 0, where
 * every look is a tick). sirqd wakes it sooner if a queue it gives back
 * needs looks again, or it goes idle (irq_worker_ran()).
 */
static uint64_t
irq_sleep_ns(struct sirq_lcore *lc, uint64_t next_tick)
{
	uint64_t look_ns = (uint64_t)__atomic_load_n(&lc->conf.irq_tick_us,
						    __ATOMIC_RELAXED) * SIRQ_NS_PER_US;
	uint64_t now;

	if (next_tick == 0 || !irq_looks_idle(lc))
		return look_ns;
	/* The flag, then the look again: pairs with irq_worker_ran(). */
	sirq_irq_tick_sleep_begin(&lc->irq);
	now = sirq_now_ns();
	if (!irq_looks_idle(lc) || next_tick <= now + look_ns) {
		sirq_irq_tick_sleep_cancel(&lc->irq);
		return look_ns;
	}
	sirq_stat_add(&lc->stats.irq_tick_sleeps, 1);
	return next_tick - now;
}

/*
 * sirqd, after each of its runs, in irq mode: a dispatcher sleeping until
 * the tick is woken once a look is needed again (a queue given back
 * without an Rx interrupt to bring its next packet, a tracked packet
 * sent) or sirqd went idle.
 */
static void
irq_worker_ran(void *arg)
{
	struct sirq_lcore *lc = arg;

	sirq_irq_napi_timer(&lc->irq, &lc->rx.sd);
	/* sirqd's run, then the flag: pairs with irq_sleep_ns(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!sirq_irq_tick_sleeping(&lc->irq) || irq_looks_idle(lc))
		return;
	sirq_irq_tick_sleep_end(&lc->irq);
}

/*
 * A NAPI thread or a busy poller let go of the execution lock after a
 * poll: a dispatcher asleep past a NAPI timer it armed wakes, one that
 * wants the lock back gets it (sirq_irq_lock_handback()).
 */
static void
napi_thread_polled(void *arg)
{
	struct sirq_lcore *lc = arg;

	sirq_irq_napi_timer(&lc->irq, &lc->rx.sd);
	sirq_irq_lock_handback(&lc->irq, lc->cpu);
}

/*
 * Sleep @sleep_ns at most: until an Rx interrupt, a kick, the next
 * timer as the last "hardirq" read it (none when sirqd held the lock:
 * sirqd looks at the timers itself before each pass), or the next NAPI
 * timer. True if an fd woke it.
 */
static bool
irq_sleep(struct sirq_lcore *lc, uint64_t sleep_ns)
{
	uint64_t napi_timer, rx_fired = 0, now = sirq_now_ns();
	bool woken;

	if (lc->timer_ticks > 0)
		sleep_ns = RTE_MIN(sleep_ns,
				   sirq_tsc_to_ns((uint64_t)lc->timer_ticks));
	/* The wake-up, then the timers: pairs with sirq_irq_napi_timer(). */
	sirq_irq_sleep_begin(&lc->irq, now + sleep_ns);
	napi_timer = sirq_softnet_next_timer(&lc->rx.sd);
	/*
	 * A deferred NAPI's re-poll (napi_watchdog()'s hrtimer). One already
	 * due is the next look's, unless the lock was busy: sirqd fires it
	 * before its next pass, and a FIFO dispatcher that did not sleep for
	 * it would keep sirqd off the CPU.
	 */
	if (napi_timer != 0) {
		if (napi_timer > now)
			sleep_ns = RTE_MIN(sleep_ns, napi_timer - now);
		else if (!lc->look_busy)
			sleep_ns = 0;
	}
	sirq_stat_add(&lc->stats.irq_sleeps, 1);
	woken = sirq_irq_sleep(&lc->irq, sleep_ns, &rx_fired);
	if (rx_fired != 0) {
		sirq_stat_add(&lc->stats.irq_rx_events,
			      (uint64_t)__builtin_popcountll(rx_fired));
		sirq_softnet_count_irqs(&lc->rx.sd, rx_fired);
	}
	return woken;
}

/*
 * The scheduler tick: every 1/tick_hz s the dispatcher decides again
 * whether or not a queue interrupted (the kernel's irq_exit() after the
 * tick, with the NIC masked while its NAPI is scheduled). tick_hz 0:
 * every look decides.
 */
static bool
irq_tick_due(struct sirq_lcore *lc, uint64_t *next_tick)
{
	uint32_t hz = sirq_cpu_conf(lc->cpu)->params.tick_hz;
	uint64_t now, period;

	if (hz == 0)
		return true;
	period = SIRQ_NS_PER_SEC / hz;
	now = sirq_now_ns();
	if (now < *next_tick && *next_tick - now <= period)
		return false;
	/* On the tick's grid; ticks missed while busy are not made up. */
	*next_tick = now - now % period + period;
	sirq_stat_add(&lc->stats.irq_ticks, 1);
	return true;
}

/*
 * Work is still found by fetching where the PMD has no descriptor
 * status, and interrupts are edge-triggered, so every wake-up looks at
 * every idle queue before sleeping again.
 */
static void
irq_loop(struct sirq_lcore *lc)
{
	enum sirq_irq_exit_result res;
	uint64_t next_tick = 0;
	bool woken = true;

	while (!lcore_should_stop(lc)) {
		bool tick = irq_tick_due(lc, &next_tick);

		res = sirq_lcore_look(lc, woken || tick);
		woken = false;
		/*
		 * Loop at once only for work of our own: pending again, or a
		 * timer that was due and ran here, whose next deadline the
		 * next "hardirq" reads. Work left to sirqd, or a lock held by
		 * sirqd or a bh-disabled thread, needs them to run, which a
		 * SCHED_FIFO loop would prevent.
		 */
		if (res != SIRQ_IRQ_EXIT_RAN ||
		    sirq_worker_state(lc->cpu) == SIRQ_WORKER_RUNNABLE ||
		    (sirq_pending(lc->cpu) == 0 && lc->timer_ticks != 0))
			woken = irq_sleep(lc, irq_sleep_ns(lc, next_tick));
	}
}

static int
irq_run(struct sirq_lcore *lc)
{
	int ret;

	ret = irq_setup(lc);
	if (ret == 0)
		irq_loop(lc);
	else
		SIRQ_LOG(ERR, "lcore %u: irq mode set-up: %s", lc->lcore_id,
			 strerror(-ret));
	sirq_irq_teardown(&lc->irq);
	return ret;
}

/*
 * After the last iteration, with sirqd gone: what it left runs here once
 * (the outermost bottom-half enable runs pending work), then what was
 * fetched and never polled is freed and what is buffered is sent; with
 * every queue idle and every buffer empty, NET_RX and NET_TX have
 * nothing left to do.
 */
static void
lcore_drain(struct sirq_lcore *lc)
{
	sirq_bh_disable(lc->cpu);
	sirq_bh_enable(lc->cpu);
	sirq_bh_disable(lc->cpu);
	sirq_rx_drain(&lc->rx);
	sirq_tx_drain(&lc->tx);
	sirq_pending_drop(lc->cpu, SIRQ_BIT(SIRQ_NET_RX) | SIRQ_BIT(SIRQ_NET_TX));
	sirq_bh_enable(lc->cpu);
}

/*
 * Does a running softirq thread have a reservation? Then a holder of the
 * lock may be throttled until its next period, and the lock's waiters
 * sleep instead of yielding. Under napi_set_lock.
 */
static void
deadline_holders_sync(struct sirq_lcore *lc)
{
	uint32_t running = lc->sthreads_running;
	bool dl = false;

	while (running != 0 && !dl) {
		unsigned int t = (unsigned int)__builtin_ctz(running);

		running &= running - 1;
		dl = lc->sthread[t].sched.policy == SCHED_DEADLINE;
	}
	sirq_cpu_lock_waits_sleep(lc->cpu, dl);
}

/*
 * Start the softirq threads the model wants and stop those it no longer
 * does: at the dispatcher's start and after a change of parameters.
 * Under napi_set_lock. A thread that cannot start leaves its vectors to
 * sirqd and the dispatcher (the engine runs a vector whose thread is not
 * attached as if the model had none); when the kernel refused its slice
 * or reservation, the errno is returned (the first), else 0.
 */
static int
sthreads_sync(struct sirq_lcore *lc, bool run)
{
	int err = 0;
	uint32_t want = run ? sirq_threads_wanted(lc->cpu) : 0;
	uint32_t stop = lc->sthreads_running & ~want;
	uint32_t start;
	struct sirq_lcore_conf conf;
	bool rt = lc->conf.params.policy == SIRQ_POLICY_RT;
	char name[16];

	/* Another model: its threads have other names and classes. */
	if (lc->sthreads_policy != lc->conf.params.policy)
		stop = lc->sthreads_running;
	lc->sthreads_policy = lc->conf.params.policy;

	if (lc->conf.qsbr != NULL) {
		if (want != 0)
			SIRQ_LOG(WARNING,
				 "lcore %u: policy %s without softirq threads: they would need QSBR ids of their own; sirqd runs their vectors",
				 lc->lcore_id, sirq_policy_name(lc->conf.params.policy));
		return 0;
	}
	while (stop != 0) {
		unsigned int t = (unsigned int)__builtin_ctz(stop);

		stop &= stop - 1;
		sirqd_stop(&lc->sthread[t]);
		__atomic_fetch_and(&lc->sthreads_running, ~SIRQ_BIT(t),
				   __ATOMIC_RELEASE);
	}
	start = want & ~lc->sthreads_running;
	conf = lc->conf;
	conf.worker_register = false;
	while (start != 0) {
		unsigned int t = (unsigned int)__builtin_ctz(start);
		struct sirqd *w = &lc->sthread[t];

		start &= start - 1;
		if (w->fd < 0 && sirqd_init(w, lc->cpu, &lc->stats,
					    lc->lcore_id, lc->socket,
					    &conf) != 0)
			continue;
		w->thread = (int)t;
		w->cpus = lc->worker.cpus;
		w->numa_node = lc->worker.numa_node;
		w->qsbr = NULL;
		w->idle = NULL;
		w->ran = lc->worker.ran;
		w->idle_arg = lc;
		memset(&w->sched, 0, sizeof(w->sched));
		if (lc->sthread_attr[t].policy >= 0) {
			w->sched = lc->sthread_attr[t];
		} else if (rt && t == SIRQ_TIMER) {
			/* ktimers/N: the lowest SCHED_FIFO priority (6.13). */
			w->sched.policy = SCHED_FIFO;
			w->sched.priority = 1;
		} else {
			w->sched.policy = SCHED_OTHER;
		}
		/*
		 * Attached first: a detached thread's first run would end it
		 * at once. A wake before it runs stays in its eventfd.
		 */
		if (sirq_thread_attach(lc->cpu, t) != 0) {
			sirqd_name(w, name, sizeof(name));
			SIRQ_LOG(ERR, "lcore %u: cannot attach %s",
				 lc->lcore_id, name);
			continue;
		}
		if (sirqd_start(w) != 0) {
			sirq_thread_detach(lc->cpu, t);
			/* Its slice or reservation refused: said, not hidden. */
			if (w->start_ret != 0 && err == 0)
				err = w->start_ret;
			continue;
		}
		__atomic_fetch_or(&lc->sthreads_running, SIRQ_BIT(t),
				  __ATOMIC_RELEASE);
	}
	deadline_holders_sync(lc);
	return err;
}

/*
 * The dispatcher's last acts: what other CPUs queued until now runs
 * here, later calls run on their callers; its RCU id goes offline.
 */
static void
lcore_main_end(struct sirq_lcore *lc)
{
	sirq_calls_close(lc);
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_thread_offline(lc->conf.qsbr,
					    lc->conf.qsbr_dispatcher_id);
}

int
sirq_lcore_main(void *arg)
{
	struct sirq_lcore *lc = arg;
	int ret;

	if (lc == NULL) {
		SIRQ_LOG(ERR, "sirq_lcore_main on lcore %u: no lcore (NULL)",
			 rte_lcore_id());
		return -EINVAL;
	}
	if (rte_lcore_id() != lc->lcore_id) {
		SIRQ_LOG(ERR, "sirq_lcore_main on lcore %u for lcore %u",
			 rte_lcore_id(), lc->lcore_id);
		return -EINVAL;
	}
	/* From here other CPUs' threads queue their calls (sirq_call.c). */
	sirq_calls_open(lc);
	/*
	 * The dispatcher's RCU id is online while it runs and offline once
	 * it returns, as sirqd's is while it is awake: a grace period then
	 * neither ends in its first iteration nor waits for it after the
	 * stop (rte_rcu_qsbr_synchronize() hung there when it was left to
	 * the application).
	 */
	if (lc->conf.qsbr != NULL)
		rte_rcu_qsbr_thread_online(lc->conf.qsbr,
					   lc->conf.qsbr_dispatcher_id);
	sirq_rx_start(&lc->rx);
	if (lc->conf.mode == SIRQ_MODE_IRQ)
		sirq_rx_intr_start(&lc->rx);
	/*
	 * Before sirqd, which may keep the lock busy from its first pass;
	 * under napi_set_lock, which a napi-set holds to start a thread.
	 */
	pthread_mutex_lock(&lc->napi_set_lock);
	sirq_bh_disable(lc->cpu);
	ret = sirq_rx_threads_start(&lc->rx);
	__atomic_store_n(&lc->napi_running, ret == 0, __ATOMIC_RELEASE);
	sirq_bh_enable(lc->cpu);
	pthread_mutex_unlock(&lc->napi_set_lock);
	if (ret != 0) {
		lcore_main_end(lc);
		return ret;
	}
	ret = sirqd_start(&lc->worker);
	if (ret != 0) {
		__atomic_store_n(&lc->napi_running, false, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&lc->napi_set_lock);
		sirq_rx_threads_stop(&lc->rx);
		pthread_mutex_unlock(&lc->napi_set_lock);
		lcore_main_end(lc);
		return ret;
	}
	pthread_mutex_lock(&lc->napi_set_lock);
	ret = sthreads_sync(lc, true);
	pthread_mutex_unlock(&lc->napi_set_lock);

	/* A softirq thread's attributes refused: no launch, said why. */
	if (ret != 0)
		SIRQ_LOG(ERR, "lcore %u: not launched: a softirq thread's scheduling attributes were refused (%s)",
			 lc->lcore_id, strerror(-ret));
	else if (lc->conf.mode == SIRQ_MODE_IRQ)
		ret = irq_run(lc);
	else
		poll_loop(lc);

	/*
	 * No lock for this one: sirqd may hold it for pass after pass under
	 * endless input. Busy pollers see it under the lock and leave the
	 * queues alone from their next poll on.
	 */
	__atomic_store_n(&lc->napi_running, false, __ATOMIC_SEQ_CST);
	/* Their vectors back to sirqd and the dispatcher first. */
	pthread_mutex_lock(&lc->napi_set_lock);
	sthreads_sync(lc, false);
	pthread_mutex_unlock(&lc->napi_set_lock);
	sirqd_stop(&lc->worker);
	/* No napi-set starts a thread behind this. */
	pthread_mutex_lock(&lc->napi_set_lock);
	sirq_rx_threads_stop(&lc->rx);
	pthread_mutex_unlock(&lc->napi_set_lock);
	lcore_drain(lc);
	lcore_main_end(lc);
	/* Ready to be launched again. */
	sirq_cpu_set_stopping(lc->cpu, false);
	__atomic_store_n(&lc->stop, 0, __ATOMIC_RELAXED);
	return ret;
}

/* NAPI settings: the timeouts at most this, as sirq_napi_params_check() says. */
#define NAPI_TIMEOUT_MAX_NS SIRQ_NS_PER_SEC

int
sirq_napi_params_check(const struct sirq_napi_params *p)
{
	if (p == NULL || p->gro_flush_timeout_ns > NAPI_TIMEOUT_MAX_NS ||
	    p->irq_suspend_timeout_ns > NAPI_TIMEOUT_MAX_NS ||
	    p->threaded >= SIRQ_NAPI_THREADED_MAX ||
	    (p->defer_hard_irqs != 0 && p->gro_flush_timeout_ns == 0))
		return -EINVAL;
	return 0;
}

unsigned int
sirq_napi_count(const struct sirq_lcore *lc)
{
	return lc != NULL ? lc->rx.nb_napi : 0;
}

int
sirq_napi_get(const struct sirq_lcore *lc, unsigned int napi_id,
	      struct sirq_napi_info *info)
{
	const struct sirq_softnet *sd;
	const struct sirq_napi_counters *c;
	uint64_t bit;

	if (lc == NULL || info == NULL || napi_id >= lc->rx.nb_napi)
		return -EINVAL;
	sd = &lc->rx.sd;
	c = &sd->counters[napi_id];
	bit = UINT64_C(1) << napi_id;
	memset(info, 0, sizeof(*info));
	info->id = napi_id;
	info->port = lc->rx.napi[napi_id].port;
	info->queue = lc->rx.napi[napi_id].queue;
	info->params = sd->cfg[napi_id];
	info->thread_tid = __atomic_load_n(&lc->rx.napi[napi_id].thread_tid,
					   __ATOMIC_ACQUIRE);
	info->scheduled = (__atomic_load_n(&sd->sched, __ATOMIC_RELAXED) &
			   bit) != 0;
	info->irq_masked = !info->scheduled &&
		(__atomic_load_n(&sd->irq_off, __ATOMIC_RELAXED) & bit) != 0;
	info->in_busy_poll = (__atomic_load_n(&sd->in_busy_poll,
					      __ATOMIC_RELAXED) & bit) != 0;
	info->deferred = __atomic_load_n(&c->deferred, __ATOMIC_RELAXED);
	info->watchdog = __atomic_load_n(&c->watchdog, __ATOMIC_RELAXED);
	info->busy_polls = __atomic_load_n(&c->busy_polls, __ATOMIC_RELAXED);
	info->busy_packets = __atomic_load_n(&c->busy_packets,
					     __ATOMIC_RELAXED);
	info->thread_polls = __atomic_load_n(&c->thread_polls,
					     __ATOMIC_RELAXED);
	info->packets = __atomic_load_n(&c->units, __ATOMIC_RELAXED);
	info->irqs = __atomic_load_n(&c->irqs, __ATOMIC_RELAXED);
	return 0;
}

struct napi_set_args {
	uint16_t idx;
	const struct sirq_napi_params *p;
};

/* Context no longer needs a thread it has, or needs one it lacks. */
#define NAPI_SET_NEEDS_THREAD ESRCH

/*
 * On the lcore (sirq_lcore_call()): the settings, if the thread they
 * need is there; a launch since the caller looked needs one started.
 */
static int
napi_set_apply(struct sirq_lcore *lc, void *arg)
{
	const struct napi_set_args *a = arg;
	bool running = __atomic_load_n(&lc->napi_running, __ATOMIC_ACQUIRE);

	if (running && a->p->threaded &&
	    !sirq_rx_napi_thread_running(&lc->rx, a->idx))
		return -NAPI_SET_NEEDS_THREAD;
	return sirq_rx_napi_apply(&lc->rx, a->idx, a->p, running);
}

int
sirq_napi_set(struct sirq_lcore *lc, unsigned int napi_id,
	      const struct sirq_napi_params *p)
{
	struct napi_set_args a = { .idx = (uint16_t)napi_id, .p = p };
	bool started = false;
	int ret = 0, tries;

	if (lc == NULL || napi_id >= lc->rx.nb_napi ||
	    sirq_napi_params_check(p) != 0)
		return -EINVAL;
	if (lc->conf.qsbr != NULL && p->threaded != SIRQ_NAPI_THREADED_DISABLED) {
		SIRQ_LOG(ERR, "lcore %u: NAPI %u: threaded %s refused with conf.qsbr: a NAPI thread reports no quiescent state",
			 lc->lcore_id, napi_id,
			 sirq_napi_threaded_name(p->threaded));
		return -EOPNOTSUPP;
	}
	/*
	 * One napi-set at a time. The dispatcher never takes this mutex, so
	 * a caller may wait for its call under it; napi_set_lock, which the
	 * dispatcher takes to start and stop threads, is held only around
	 * a thread's start or stop, never across the call.
	 */
	pthread_mutex_lock(&lc->napi_set_serial);
	for (tries = 0; tries < 2; tries++) {
		pthread_mutex_lock(&lc->napi_set_lock);
		if (p->threaded) {
			bool start = __atomic_load_n(&lc->napi_running,
						     __ATOMIC_ACQUIRE) &&
				!sirq_rx_napi_thread_running(&lc->rx, a.idx);

			ret = sirq_rx_napi_thread_prepare(&lc->rx, a.idx, start);
			started |= start && ret == 0;
		}
		pthread_mutex_unlock(&lc->napi_set_lock);
		if (ret != 0)
			break;
		ret = sirq_lcore_call(lc, napi_set_apply, &a);
		if (ret != -NAPI_SET_NEEDS_THREAD)
			break;
	}
	/* Refused: no thread left behind for it. */
	if (ret != 0 && started) {
		pthread_mutex_lock(&lc->napi_set_lock);
		/* Only napi-set changes it, and this one holds the serial mutex. */
		if (!lc->rx.sd.cfg[a.idx].threaded)
			sirq_rx_napi_thread_stop(&lc->rx, a.idx);
		pthread_mutex_unlock(&lc->napi_set_lock);
	}
	pthread_mutex_unlock(&lc->napi_set_serial);
	if (ret == -NAPI_SET_NEEDS_THREAD)
		ret = -EAGAIN;
	return ret;
}

/*
 * A busy poller runs on the lcore's CPU, outside any handler or
 * bh-disabled section: the lcore's own thread, or a thread without an
 * lcore id on its CPUs, which runs as the lcore while it holds the lock
 * (its handlers use the lcore's mempool cache and TX buffers, as sirqd
 * does). 0 with the id to restore in @self, or -EPERM (nothing changed).
 */
static int
busy_poll_enter(struct sirq_lcore *lc, unsigned int *self)
{
	*self = rte_lcore_id();
	if (!lcore_in_task(lc) || sirq_exec_lock_is_mine(lc->cpu))
		return -EPERM;
	if (*self == LCORE_ID_ANY)
		RTE_PER_LCORE(_lcore_id) = lc->lcore_id;
	return 0;
}

static inline void
busy_poll_leave(unsigned int self)
{
	RTE_PER_LCORE(_lcore_id) = self;
}

int
sirq_napi_busy_poll(struct sirq_lcore *lc, unsigned int napi_id,
		    uint16_t budget, bool prefer_busy_poll,
		    uint32_t busy_poll_us)
{
	uint64_t end = 0;
	unsigned int got = 0, work, self;
	bool owned = false;
	int ret;

	if (lc == NULL || napi_id >= lc->rx.nb_napi || budget == 0 ||
	    budget > SIRQ_NAPI_WEIGHT_MAX)
		return -EINVAL;
	ret = busy_poll_enter(lc, &self);
	if (ret != 0)
		return ret;
	if (busy_poll_us != 0)
		end = sirq_now_ns() + (uint64_t)busy_poll_us * SIRQ_NS_PER_US;
	/*
	 * napi_busy_loop(): bottom halves off for each poll only, so that
	 * the dispatcher's "hardirq" and what the polls raised run between.
	 */
	for (;;) {
		sirq_bh_disable(lc->cpu);
		if (sirq_unlikely(!__atomic_load_n(&lc->napi_running,
						   __ATOMIC_ACQUIRE))) {
			/* Stopped meanwhile: the drain resets the context. */
			sirq_bh_enable(lc->cpu);
			busy_poll_leave(self);
			return got != 0 ? (int)got : -EAGAIN;
		}
		if (!owned)
			owned = sirq_napi_busy_poll_start(&lc->rx.sd,
							  (uint16_t)napi_id,
							  prefer_busy_poll);
		work = owned ? sirq_napi_busy_poll_once(&lc->rx.sd,
							(uint16_t)napi_id,
							budget) : 0;
		sirq_bh_enable(lc->cpu);
		sirq_irq_lock_handback(&lc->irq, lc->cpu);
		got += work;
		if (work != 0 || end == 0 || sirq_now_ns() >= end ||
		    lcore_should_stop(lc))
			break;
		rte_pause();
	}
	if (owned) {
		sirq_bh_disable(lc->cpu);
		got += sirq_napi_busy_poll_stop(&lc->rx.sd, (uint16_t)napi_id,
						prefer_busy_poll, budget);
		sirq_bh_enable(lc->cpu);
		napi_thread_polled(lc);
	}
	busy_poll_leave(self);
	return (int)got;
}

static int
napi_irqs(struct sirq_lcore *lc, unsigned int napi_id, bool suspend)
{
	unsigned int self;
	int ret;

	if (lc == NULL || napi_id >= lc->rx.nb_napi)
		return -EINVAL;
	ret = busy_poll_enter(lc, &self);
	if (ret != 0)
		return ret;
	sirq_bh_disable(lc->cpu);
	if (!__atomic_load_n(&lc->napi_running, __ATOMIC_ACQUIRE))
		ret = -EAGAIN;
	else if (suspend)
		sirq_softnet_suspend_irqs(&lc->rx.sd, (uint16_t)napi_id);
	else
		sirq_softnet_resume_irqs(&lc->rx.sd, (uint16_t)napi_id);
	sirq_bh_enable(lc->cpu);
	sirq_irq_napi_timer(&lc->irq, &lc->rx.sd);
	busy_poll_leave(self);
	return ret;
}

int
sirq_napi_suspend_irqs(struct sirq_lcore *lc, unsigned int napi_id)
{
	return napi_irqs(lc, napi_id, true);
}

int
sirq_napi_resume_irqs(struct sirq_lcore *lc, unsigned int napi_id)
{
	return napi_irqs(lc, napi_id, false);
}

void
sirq_lcore_stop(struct sirq_lcore *lc)
{
	if (lc == NULL)
		return;
	__atomic_store_n(&lc->stop, 1, __ATOMIC_RELAXED);
	/* A pass under way ends at its next vector boundary. */
	sirq_cpu_set_stopping(lc->cpu, true);
	sirq_irq_kick(&lc->irq);
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
	struct sirq_stats es;
	unsigned int why;

	if (st == NULL)
		return;
	if (lc == NULL) {
		memset(st, 0, sizeof(*st));
		return;
	}
	sirq_counters_copy(st, &lc->stats, sizeof(*st));
	/* The engine counts sirqd's passes by how they ended. */
	sirq_stats_get(lc->cpu, &es);
	st->worker_passes = 0;
	for (why = 0; why < SIRQ_EXIT_MAX; why++)
		st->worker_passes += es.pass_exit[why][SIRQ_CTX_WORKER];
}

void
sirq_lcore_free(struct sirq_lcore *lc)
{
	if (lc == NULL)
		return;
	rte_spinlock_lock(&lcores_lock);
	__atomic_store_n(&lcores[lc->lcore_id], NULL, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&lcores_lock);
	lcore_release(lc);
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
