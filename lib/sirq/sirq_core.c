/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The softirq engine: pending mask, the __do_softirq() loop, the worker
 * (ksoftirqd) state machine, bottom-half disabling, statistics.
 *
 * No DPDK here. Time, worker wake-ups and need_resched() come from
 * struct sirq_ops, so that the same code runs on an lcore, on a fake clock
 * in the unit tests and inside the simulator.
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sirq_private.h"
#include "sirq_trace.h"

#ifndef SIRQ_DEFAULT_POLICY
#define SIRQ_DEFAULT_POLICY SIRQ_POLICY_KICINSKI
#endif

#define NSEC_PER_SEC 1000000000ULL

static const char *const kernel_vector_names[SIRQ_NR_KERNEL_VECTORS] = {
	[SIRQ_HI] = "HI",
	[SIRQ_TIMER] = "TIMER",
	[SIRQ_NET_TX] = "NET_TX",
	[SIRQ_NET_RX] = "NET_RX",
	[SIRQ_BLOCK] = "BLOCK",
	[SIRQ_IRQ_POLL] = "IRQ_POLL",
	[SIRQ_TASKLET] = "TASKLET",
	[SIRQ_SCHED] = "SCHED",
	[SIRQ_HRTIMER] = "HRTIMER",
	[SIRQ_RCU] = "RCU",
};

static const char *const exit_names[SIRQ_EXIT_MAX] = {
	[SIRQ_EXIT_DRAINED] = "drained",
	[SIRQ_EXIT_RESTART] = "restart_limit",
	[SIRQ_EXIT_TIME] = "time_limit",
	[SIRQ_EXIT_NEED_RESCHED] = "need_resched",
	[SIRQ_EXIT_LOCK_WAITER] = "lock_waiter",
	[SIRQ_EXIT_STOP] = "stop",
};

static const char *const wake_names[SIRQ_WAKE_MAX] = {
	[SIRQ_WAKE_RESTART] = "restart_limit",
	[SIRQ_WAKE_TIME] = "time_limit",
	[SIRQ_WAKE_NEED_RESCHED] = "need_resched",
	[SIRQ_WAKE_HANDOFF] = "handoff",
	[SIRQ_WAKE_EXPLICIT] = "explicit",
	[SIRQ_WAKE_RAISE] = "raise",
	[SIRQ_WAKE_RECHECK] = "recheck",
	[SIRQ_WAKE_RUN] = "run",
};

static const char *const window_names[SIRQ_WINDOW_MAX] = {
	[SIRQ_WINDOW_DEFER] = "defer",
	[SIRQ_WINDOW_OVERLOAD] = "overload",
};

static const char *const ctx_names[SIRQ_CTX_MAX] = {
	[SIRQ_CTX_INLINE] = "inline",
	[SIRQ_CTX_WORKER] = "worker",
};

/* A unique address per thread: the execution lock's owner token. */
_Thread_local char sirq_thread_token SIRQ_TLS_IE;

/* A bounded round's end, sirq_private.h. */
_Thread_local struct sirq_round_limit sirq_round_limit SIRQ_TLS_IE;

const char *
sirq_exit_name(enum sirq_exit e)
{
	return (unsigned int)e < SIRQ_EXIT_MAX ? exit_names[e] : NULL;
}

const char *
sirq_wake_name(enum sirq_wake w)
{
	return (unsigned int)w < SIRQ_WAKE_MAX ? wake_names[w] : NULL;
}

const char *
sirq_window_name(enum sirq_window w)
{
	return (unsigned int)w < SIRQ_WINDOW_MAX ? window_names[w] : NULL;
}

const char *
sirq_ctx_name(enum sirq_ctx c)
{
	return (unsigned int)c < SIRQ_CTX_MAX ? ctx_names[c] : NULL;
}

const char *
sirq_vector_name(const struct sirq_cpu *cpu, unsigned int vec)
{
	if (cpu == NULL || vec >= SIRQ_MAX_VECTORS)
		return NULL;
	return cpu->action[vec].name;
}

void
sirq_params_default(struct sirq_params *p)
{
	if (p == NULL)
		return;
	memset(p, 0, sizeof(*p));
	p->policy = SIRQ_DEFAULT_POLICY;
	p->max_restart = SIRQ_MAX_RESTART_DEFAULT;
	p->max_time_ns = SIRQ_MAX_TIME_NS_DEFAULT;
	p->defer_window_ns = SIRQ_DEFER_WINDOW_NS_DEFAULT;
	p->overload_window_ns = SIRQ_OVERLOAD_WINDOW_NS_DEFAULT;
	p->expedited_mask = SIRQ_NOW_MASK_DEFAULT;
	p->tick_hz = SIRQ_TICK_HZ_DEFAULT;
	p->stall_threshold_ns = SIRQ_STALL_THRESHOLD_NS_DEFAULT;
}

/*
 * The caps, from the kernel's own values where it has them: a pass of
 * MAX_SOFTIRQ_TIME (2 ms) and MAX_SOFTIRQ_RESTART (10) rounds, NET_RX's
 * netdev_budget (300) and netdev_budget_usecs (2 ms). Each cap is far
 * above them and low enough that a pass, a window or a deadline stays
 * finite and its arithmetic exact: max_time_ns UINT64_MAX wrapped the
 * pass deadline (every pass ended on time_limit at once), and
 * max_restart UINT32_MAX with 10 s kept sirq_lcore_stop() waiting
 * 20 s. tick_hz keeps the options' old cap: 100 kHz jiffies are finer
 * than any tick Linux has, and 1 Hz rounds a 2 ms pass up to 1 s, the
 * cap of max_time_ns.
 */
#define RANGE(field, lo, hi, text, zero_means) \
	{ #field, lo, hi, text, #field " must be in " text, zero_means }

static const struct sirq_param_range param_ranges[] = {
	RANGE(max_restart, 1, 1000, "1..1000", NULL),
	RANGE(max_time_ns, 1000, NSEC_PER_SEC,
	      "1000..1000000000 ns (1 us..1 s)", NULL),
	RANGE(defer_window_ns, 0, 10 * NSEC_PER_SEC,
	      "0..10000000000 ns (0..10 s)",
	      "the window ends where it opens: the next irq exit runs the work itself"),
	RANGE(overload_window_ns, 0, 100 * NSEC_PER_SEC,
	      "0..100000000000 ns (0..100 s)",
	      "the window ends where it opens: the next irq exit runs the work itself"),
	RANGE(expedited_mask, 0, UINT32_MAX,
	      "0x0..0xffffffff, vectors with a handler only",
	      "no vector is expedited"),
	RANGE(tick_hz, 0, 100000, "0..100000 Hz",
	      "TSC-exact time, and a decision at every look in irq mode"),
	RANGE(stall_threshold_ns, 1000, 10 * NSEC_PER_SEC,
	      "1000..10000000000 ns (1 us..10 s)", NULL),
	/*
	 * Weight 1 forwarded a third of weight 64's rate on net_null (13.7
	 * against 42.3 Mpps, tests/lcore/test_params.c): below 8 a poll's
	 * fixed cost wedges a flooded lcore. 256: the binding's burst array
	 * (SIRQ_NAPI_WEIGHT_MAX).
	 */
	RANGE(napi_weight, 8, 256, "8..256", NULL),
	RANGE(netdev_budget, 1, 10000, "1..10000", NULL),
	RANGE(netdev_budget_us, 1, 100000, "1..100000 us (1 us..100 ms)",
	      NULL),
	/*
	 * A softirq thread's attributes (sirq_thread_attr_check()): an
	 * EEVDF slice (0 there: none), which the kernel clamps silently to
	 * this range; a SCHED_DEADLINE runtime, at most its period; the
	 * period, within kernel.sched_deadline_period_{min,max}_us, whose
	 * defaults these are (the check reads the kernel's).
	 */
	RANGE(thread_slice_us, 100, 100000, "100..100000 us (100 us..100 ms)",
	      NULL),
	RANGE(thread_runtime_us, 1, 4194304,
	      "1..4194304 us (1 us..the period)", NULL),
	RANGE(thread_period_us, 100, 4194304,
	      "100..4194304 us (kernel.sched_deadline_period_min_us.._max_us)",
	      NULL),
};
#undef RANGE
#define NB_RANGES (sizeof(param_ranges) / sizeof(param_ranges[0]))

const struct sirq_param_range *
sirq_param_ranges(unsigned int *nb)
{
	if (nb != NULL)
		*nb = (unsigned int)NB_RANGES;
	return param_ranges;
}

const char *
sirq_version(void)
{
	return SIRQ_VERSION_STRING;
}

const struct sirq_param_range *
sirq_param_range(const char *name)
{
	unsigned int i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < NB_RANGES; i++)
		if (strcmp(param_ranges[i].name, name) == 0)
			return &param_ranges[i];
	return NULL;
}

/* NULL when @v is inside @name's range, else the range's message. */
static const char *
out_of_range(const char *name, uint64_t v)
{
	const struct sirq_param_range *r = sirq_param_range(name);

	return v < r->min || v > r->max ? r->why : NULL;
}

const char *
sirq_params_why_invalid(const struct sirq_params *p)
{
	const char *why;

	if (p == NULL)
		return "no parameters (NULL)";
	if ((unsigned int)p->policy >= SIRQ_POLICY_MAX)
		return "unknown policy";
#define CHECK(field) \
	if ((why = out_of_range(#field, p->field)) != NULL) \
		return why
	CHECK(max_restart);
	CHECK(max_time_ns);
	CHECK(defer_window_ns);
	CHECK(overload_window_ns);
	CHECK(tick_hz);
	CHECK(stall_threshold_ns);
#undef CHECK
	return NULL;
}

/* The vectors that have a handler. */
static uint32_t
registered_mask(const struct sirq_cpu *cpu)
{
	uint32_t mask = 0;
	unsigned int v;

	for (v = 0; v < SIRQ_MAX_VECTORS; v++)
		if (__atomic_load_n(&cpu->action[v].handler,
				    __ATOMIC_ACQUIRE) != NULL)
			mask |= SIRQ_BIT(v);
	return mask;
}

const char *
sirq_cpu_params_why_invalid(const struct sirq_cpu *cpu,
			    const struct sirq_params *p)
{
	const char *why = sirq_params_why_invalid(p);

	if (why != NULL)
		return why;
	if (cpu == NULL)
		return "no CPU (NULL)";
	if ((p->expedited_mask & ~registered_mask(cpu)) != 0)
		return sirq_param_range("expedited_mask")->why;
	return NULL;
}

int
sirq_params_check(const struct sirq_params *p)
{
	return sirq_params_why_invalid(p) == NULL ? 0 : -EINVAL;
}

/* Time as the loop sees it: exact, or rounded down to a tick (jiffies). */
static inline uint64_t
sirq_jiffies(const struct sirq_cpu *cpu, uint64_t now)
{
	if (sirq_likely(cpu->tick_ns == 0))
		return now;
	return now - now % cpu->tick_ns;
}

/* A duration as the loop sees it: msecs_to_jiffies() rounds up. */
uint64_t
sirq_span(const struct sirq_cpu *cpu, uint64_t ns)
{
	uint64_t t = cpu->tick_ns;

	if (sirq_likely(t == 0))
		return ns;
	return (ns + t - 1) / t * t;
}

/* jiffies, for the policies. */
uint64_t
sirq_jiffies_now(const struct sirq_cpu *cpu)
{
	return sirq_jiffies(cpu, sirq_now(cpu));
}

static void update_threads(struct sirq_cpu *cpu);

static void
apply_params(struct sirq_cpu *cpu, const struct sirq_params *p)
{
	cpu->params = *p;
	cpu->policy = sirq_policies[p->policy];
	cpu->tick_ns = p->tick_hz ? NSEC_PER_SEC / p->tick_hz : 0;
	cpu->max_time_span = sirq_span(cpu, p->max_time_ns);
	memset(&cpu->pstate, 0, sizeof(cpu->pstate));
	if (cpu->policy->reset != NULL)
		cpu->policy->reset(cpu);
	update_threads(cpu);
}

size_t
sirq_cpu_memsize(void)
{
	return sizeof(struct sirq_cpu);
}

struct sirq_cpu *
sirq_cpu_init(void *mem, const struct sirq_cpu_conf *conf)
{
	struct sirq_cpu *cpu = mem;
	unsigned int v;

	if (mem == NULL || conf == NULL || conf->ops.clock_ns == NULL ||
	    ((uintptr_t)mem % SIRQ_CACHE_LINE) != 0 ||
	    sirq_params_check(&conf->params) != 0) {
		errno = EINVAL;
		return NULL;
	}

	memset(cpu, 0, sizeof(*cpu));
	cpu->conf = *conf;
	if (conf->name != NULL)
		snprintf(cpu->name, sizeof(cpu->name), "%s", conf->name);
	else
		snprintf(cpu->name, sizeof(cpu->name), "cpu%u", conf->id);
	cpu->conf.name = cpu->name;
	cpu->ops = conf->ops;
	apply_params(cpu, &conf->params);

	for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
		if (v < SIRQ_NR_KERNEL_VECTORS)
			snprintf(cpu->action[v].name, SIRQ_NAME_LEN, "%s",
				 kernel_vector_names[v]);
		else
			snprintf(cpu->action[v].name, SIRQ_NAME_LEN, "V%u", v);
	}
	cpu->action[SIRQ_HI].handler = sirq_tasklet_action;
	cpu->action[SIRQ_HI].arg = (void *)(uintptr_t)SIRQ_TASKLET_LIST_HI;
	cpu->action[SIRQ_TASKLET].handler = sirq_tasklet_action;
	cpu->action[SIRQ_TASKLET].arg =
		(void *)(uintptr_t)SIRQ_TASKLET_LIST_NORMAL;

	for (v = 0; v < SIRQ_MAX_VECTORS; v++)
		cpu->thread_state[v] = SIRQ_WORKER_PARKED;

	/* Without a way to wake it there is no worker: never wait for one. */
	cpu->worker_state = cpu->ops.wake_worker != NULL ?
		SIRQ_WORKER_IDLE : SIRQ_WORKER_PARKED;
	return cpu;
}

struct sirq_cpu *
sirq_cpu_create(const struct sirq_cpu_conf *conf)
{
	void *mem = NULL;
	struct sirq_cpu *cpu;

	if (posix_memalign(&mem, SIRQ_CACHE_LINE, sizeof(struct sirq_cpu)) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	cpu = sirq_cpu_init(mem, conf);
	if (cpu == NULL)
		free(mem);
	return cpu;
}

void
sirq_cpu_free(struct sirq_cpu *cpu)
{
	free(cpu);
}

const struct sirq_cpu_conf *
sirq_cpu_conf(const struct sirq_cpu *cpu)
{
	return cpu != NULL ? &cpu->conf : NULL;
}

/*
 * The execution lock: the softirq "big lock" of one CPU. Whoever holds it
 * is that CPU's softirq context. The dispatcher and sirqd only try it;
 * other threads (bottom halves, parameter changes) wait for it.
 *
 * A waiter gets the lock when the holder next drops it, as on PREEMPT_RT,
 * where a task blocked on the per-CPU BH lock (a local_lock, an rtmutex)
 * is handed the lock at the holder's unlock. Two rules give that here:
 * a pass drops the lock at the next vector boundary once a thread waits
 * (do_softirq()), and nobody who is not waiting takes a lock that
 * waiters want (exec_trylock()); waiters get it in the order they came.
 * Without the second, sirqd under a flood
 * took the lock back right after every pass and an application thread's
 * sirq_bh_disable() waited for seconds, 28.5 s at worst.
 */
static inline bool
exec_cas(struct sirq_cpu *cpu)
{
	uintptr_t unlocked = 0;

	return __atomic_compare_exchange_n(&cpu->lock_owner, &unlocked,
					   sirq_self_token(), false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/*
 * The pending vectors that the worker and the dispatcher run: all but
 * those of attached softirq threads.
 */
static inline uint32_t
local_pending(const struct sirq_cpu *cpu)
{
	return __atomic_load_n(&cpu->pending, __ATOMIC_SEQ_CST) &
		~__atomic_load_n(&cpu->thread_mask, __ATOMIC_RELAXED);
}

static inline bool
exec_trylock(struct sirq_cpu *cpu)
{
	if (sirq_unlikely(sirq_exec_lock_contended(cpu)))
		return false;
	return exec_cas(cpu);
}

/* Handler runs so far: a waiter counts those it waited for. */
static uint64_t
runs_so_far(const struct sirq_cpu *cpu)
{
	uint64_t n = 0;
	unsigned int v, c;

	for (v = 0; v < SIRQ_MAX_VECTORS; v++)
		for (c = 0; c < SIRQ_CTX_MAX; c++)
			n += sirq_load(&cpu->stats.runs[v][c]);
	return n;
}

static void record_hist(struct sirq_cpu *cpu, struct sirq_latency *lat,
			uint64_t ns);

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6	/* Linux's */
#endif

/* A waiting turn's sleep where yielding would not do (lock_wait_turn()). */
#define LOCK_WAIT_SLEEP_NS 20000

/*
 * One turn of a wait for the lock. sched_yield() lets the holder run.
 * It sleeps instead when the caller is a SCHED_DEADLINE task, whose yield
 * would give up the rest of its runtime until its next period, and when
 * a holder may be a throttled deadline thread (lock_waits_sleep), which
 * keeps the lock until its next period: yielding would burn that time.
 * @dl: -1 until the caller's class is asked, once per wait, and only
 * while the switch is off.
 */
static inline void
lock_wait_turn(struct sirq_cpu *cpu, int *dl)
{
	bool sleep = __atomic_load_n(&cpu->lock_waits_sleep, __ATOMIC_RELAXED);

	if (!sleep && *dl < 0)
		*dl = sched_getscheduler(0) == SCHED_DEADLINE;
	if (sleep || *dl > 0) {
		struct timespec ts = { .tv_nsec = LOCK_WAIT_SLEEP_NS };

		nanosleep(&ts, NULL);
	} else {
		sched_yield();
	}
}

void
sirq_cpu_lock_waits_sleep(struct sirq_cpu *cpu, bool on)
{
	__atomic_store_n(&cpu->lock_waits_sleep, on, __ATOMIC_RELAXED);
}

bool
sirq_cpu_lock_waits_sleeping(const struct sirq_cpu *cpu)
{
	return __atomic_load_n(&cpu->lock_waits_sleep, __ATOMIC_RELAXED) != 0;
}

void
sirq_cpu_round_limit(const struct sirq_cpu *cpu, uint64_t left_ns)
{
	sirq_round_limit.end_ns = left_ns == 0 ? 0 : sirq_now(cpu) + left_ns;
}

uint64_t
sirq_round_step_ns(void)
{
	return sirq_round_limit.step_ns;
}

/*
 * Take the lock, waiting in line if need be; the wait goes into @lat:
 * stats.lock_wait for the application's sections, stats.thread_lock_wait
 * for the library's own threads (the models' softirq threads, their
 * tasklets, attaching them), whose waits are many and of another kind.
 */
static void
exec_lock(struct sirq_cpu *cpu, struct sirq_latency *lat)
{
	uint64_t start, runs;
	uint32_t ticket;
	int dl = -1;

	if (exec_trylock(cpu))
		return;
	/* In line, and seen waiting: sirq_exec_lock_contended(). */
	ticket = __atomic_fetch_add(&cpu->lock_next, 1, __ATOMIC_SEQ_CST);
	start = sirq_now(cpu);
	runs = runs_so_far(cpu);
	/* The rtmutex's priority inheritance: the binding lends ours. */
	if (cpu->thread_ops.lock_wait != NULL)
		cpu->thread_ops.lock_wait(cpu->thread_ops.ctx,
					  sirq_exec_lock_owner(cpu));
	while (__atomic_load_n(&cpu->lock_served, __ATOMIC_ACQUIRE) != ticket ||
	       !exec_cas(cpu))
		lock_wait_turn(cpu, &dl);
	__atomic_store_n(&cpu->lock_served, ticket + 1, __ATOMIC_RELEASE);

	/* Ours now: the wait and what ran meanwhile, in the holder's stats. */
	record_hist(cpu, lat, sirq_now(cpu) - start);
	runs = runs_so_far(cpu) - runs;
	if (runs > cpu->stats.lock_wait_runs_max)
		__atomic_store_n(&cpu->stats.lock_wait_runs_max, runs,
				 __ATOMIC_RELAXED);
}

static inline void
exec_unlock(struct sirq_cpu *cpu)
{
	__atomic_store_n(&cpu->lock_owner, 0, __ATOMIC_RELEASE);
}

/*
 * The lock for a section of a thread that does not hold it yet
 * (sirq_bh_disable(), sirq_cpu_set_params()). Only a CPU's own tasks
 * wait for its bottom halves, as in the kernel: a thread on another CPU
 * is refused while this one runs (ops.remote_caller), since a nice-19
 * control thread beside a busy loop, slow to be scheduled, stopped a
 * flooded lcore for 4 s when it could wait for or hold the lock. One
 * that takes it while the CPU does not run is marked: work waiting
 * behind it later is counted (remote_hold_look()).
 */
static int
section_lock(struct sirq_cpu *cpu)
{
	int remote = cpu->ops.remote_caller != NULL ?
		cpu->ops.remote_caller(cpu->ops.ctx) : 0;

	if (sirq_unlikely(remote < 0)) {
		sirq_stat_add(&cpu->stats.remote_refused, 1);
		return remote;
	}
	if (remote > 0)
		__atomic_fetch_add(&cpu->remote_claims, 1, __ATOMIC_SEQ_CST);
	exec_lock(cpu, &cpu->stats.lock_wait);
	cpu->holder_remote = remote > 0;
	return 0;
}

static inline void
section_unlock(struct sirq_cpu *cpu)
{
	if (sirq_unlikely(cpu->holder_remote)) {
		cpu->holder_remote = false;
		__atomic_fetch_sub(&cpu->remote_claims, 1, __ATOMIC_RELEASE);
	}
	exec_unlock(cpu);
}

/*
 * The dispatcher's look, lock busy or got: an episode in which the CPU
 * could neither run its pending work nor look for more because another
 * CPU's thread held or waited for the lock (stats.remote_hold) opens at
 * the first look that sees one and closes at the first that gets the
 * lock or sees none.
 * A look is the fetch on PMDs without descriptor status: behind the
 * lock, the NIC's packets are not even pending yet.
 */
static void
remote_hold_look(struct sirq_cpu *cpu, bool busy)
{
	bool held = busy && __atomic_load_n(&cpu->remote_claims,
					    __ATOMIC_ACQUIRE) != 0;
	uint64_t now;

	if (held == (cpu->remote_since != 0))
		return;
	now = sirq_now(cpu);
	if (held) {
		cpu->remote_since = now != 0 ? now : 1;
		return;
	}
	record_hist(cpu, &cpu->stats.remote_hold, now - cpu->remote_since);
	cpu->remote_since = 0;
}

/* For the tasklets: the lock around an unsafe tasklet in a thread. */
void
sirq_exec_lock(struct sirq_cpu *cpu)
{
	exec_lock(cpu, &cpu->stats.thread_lock_wait);
}

void
sirq_exec_unlock(struct sirq_cpu *cpu)
{
	exec_unlock(cpu);
}


void
sirq_cpu_set_stopping(struct sirq_cpu *cpu, bool stopping)
{
	if (cpu != NULL)
		__atomic_store_n(&cpu->stopping, stopping, __ATOMIC_RELAXED);
}

int
sirq_cpu_set_params(struct sirq_cpu *cpu, const struct sirq_params *p)
{
	bool mine;

	if (cpu == NULL || sirq_cpu_params_why_invalid(cpu, p) != NULL)
		return -EINVAL;
	mine = sirq_exec_lock_is_mine(cpu);
	if (!mine) {
		int ret = section_lock(cpu);

		if (ret != 0)
			return ret;
	}
	apply_params(cpu, p);
	cpu->conf.params = *p;
	if (mine)
		return 0;
	section_unlock(cpu);
	/* A pass may have handed work over to this wait: the dispatcher's. */
	if (local_pending(cpu) != 0 && cpu->ops.kick != NULL)
		cpu->ops.kick(cpu->ops.ctx);
	return 0;
}

static void
set_action(struct sirq_cpu *cpu, unsigned int vec, sirq_handler_t handler,
	   void *arg, const char *name)
{
	struct sirq_action *a = &cpu->action[vec];

	a->arg = arg;
	if (name != NULL)
		snprintf(a->name, SIRQ_NAME_LEN, "%s", name);
	__atomic_store_n(&a->handler, handler, __ATOMIC_RELEASE);
}

/* A vector sirq_vector_alloc_flags() has claimed and not yet set up. */
static void
sirq_vector_claimed(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
}

/*
 * Registration changes what a running CPU may run: only its own tasks
 * may do it then, as only they take its lock. A thread on another CPU
 * (ops.remote_caller) is refused while the CPU runs; before and after,
 * any thread may.
 */
static bool
registry_refused(struct sirq_cpu *cpu)
{
	return cpu->ops.remote_caller != NULL &&
		cpu->ops.remote_caller(cpu->ops.ctx) < 0;
}

/* Take a vector without a handler for a registration under way. */
static bool
claim(struct sirq_cpu *cpu, unsigned int vec)
{
	sirq_handler_t none = NULL;

	return __atomic_compare_exchange_n(&cpu->action[vec].handler, &none,
					   sirq_vector_claimed, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static void
set_flags(struct sirq_cpu *cpu, unsigned int vec, uint32_t flags)
{
	if (flags & SIRQ_VEC_BH_SAFE)
		__atomic_fetch_or(&cpu->bh_safe, SIRQ_BIT(vec), __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&cpu->bh_safe, ~SIRQ_BIT(vec),
				   __ATOMIC_RELAXED);
}

int
sirq_register_flags(struct sirq_cpu *cpu, unsigned int vec,
		    sirq_handler_t handler, void *arg, const char *name,
		    uint32_t flags)
{
	if (cpu == NULL || vec >= SIRQ_MAX_VECTORS || handler == NULL ||
	    (flags & ~SIRQ_VEC_BH_SAFE) != 0)
		return -EINVAL;
	if (registry_refused(cpu))
		return -EBUSY;
	/*
	 * Claimed by a placeholder first, so that two registrations never
	 * share it; HI and TASKLET have the tasklets' handler from
	 * sirq_cpu_init(). Flags before the handler's store, which
	 * publishes the vector.
	 */
	if (!claim(cpu, vec))
		return -EBUSY;
	set_flags(cpu, vec, flags);
	set_action(cpu, vec, handler, arg, name);
	return 0;
}

int
sirq_register(struct sirq_cpu *cpu, unsigned int vec, sirq_handler_t handler,
	      void *arg, const char *name)
{
	return sirq_register_flags(cpu, vec, handler, arg, name, 0);
}

/* For the layer above the engine: a vector it runs itself (the binding's
 * TIMER, NET_RX, NET_TX), which sirq_unregister() then refuses. */
int
sirq_register_owned(struct sirq_cpu *cpu, unsigned int vec,
		    sirq_handler_t handler, void *arg)
{
	int ret = sirq_register(cpu, vec, handler, arg, NULL);

	if (ret == 0)
		cpu->owned |= SIRQ_BIT(vec);
	return ret;
}

int
sirq_vector_alloc_flags(struct sirq_cpu *cpu, sirq_handler_t handler,
			void *arg, const char *name, uint32_t flags)
{
	unsigned int vec;

	if (cpu == NULL || handler == NULL || (flags & ~SIRQ_VEC_BH_SAFE) != 0)
		return -EINVAL;
	if (registry_refused(cpu))
		return -EBUSY;
	/* The kernel's vectors stay theirs, even the ones nothing runs. */
	for (vec = SIRQ_NR_KERNEL_VECTORS; vec < SIRQ_MAX_VECTORS; vec++) {
		if (!claim(cpu, vec))
			continue;
		set_flags(cpu, vec, flags);
		set_action(cpu, vec, handler, arg, name);
		return (int)vec;
	}
	return -ENOSPC;
}

int
sirq_vector_alloc(struct sirq_cpu *cpu, sirq_handler_t handler, void *arg,
		  const char *name)
{
	return sirq_vector_alloc_flags(cpu, handler, arg, name, 0);
}

/*
 * Under the lock, so that no pass is between taking the bit and running
 * the handler; a handler of a running pass (the lock is its own) cannot
 * know which vector runs, so it is refused as "running".
 */
int
sirq_unregister(struct sirq_cpu *cpu, unsigned int vec)
{
	struct sirq_action *a;
	uint32_t bit;
	bool mine;
	int ret = 0;

	if (cpu == NULL || vec >= SIRQ_MAX_VECTORS)
		return -EINVAL;
	bit = SIRQ_BIT(vec);
	a = &cpu->action[vec];
	if (vec == SIRQ_HI || vec == SIRQ_TASKLET || (cpu->owned & bit) != 0)
		return -EBUSY;
	if (registry_refused(cpu))
		return -EBUSY;
	mine = sirq_exec_lock_is_mine(cpu);
	if (mine && __atomic_load_n(&cpu->serving, __ATOMIC_RELAXED))
		return -EBUSY;
	if (!mine) {
		ret = section_lock(cpu);
		if (ret != 0)
			return -EBUSY;
	}
	if (__atomic_load_n(&a->handler, __ATOMIC_ACQUIRE) == NULL)
		ret = -ENOENT;
	else if ((__atomic_load_n(&cpu->pending, __ATOMIC_SEQ_CST) & bit) ||
		 __atomic_load_n(&cpu->raise_ns[vec], __ATOMIC_ACQUIRE) != 0 ||
		 (__atomic_load_n(&cpu->thread_mask, __ATOMIC_SEQ_CST) & bit) ||
		 (__atomic_load_n(&cpu->unlocked_running, __ATOMIC_SEQ_CST) &
		  bit))
		ret = -EBUSY;
	else {
		__atomic_store_n(&a->handler, NULL, __ATOMIC_RELEASE);
		a->arg = NULL;
		set_flags(cpu, vec, 0);
		if (vec < SIRQ_NR_KERNEL_VECTORS)
			snprintf(a->name, SIRQ_NAME_LEN, "%s",
				 kernel_vector_names[vec]);
		else
			snprintf(a->name, SIRQ_NAME_LEN, "V%u", vec);
	}
	if (!mine)
		section_unlock(cpu);
	return ret;
}

int
sirq_vector_free(struct sirq_cpu *cpu, unsigned int vec)
{
	if (cpu == NULL || vec < SIRQ_NR_KERNEL_VECTORS ||
	    vec >= SIRQ_MAX_VECTORS)
		return -EINVAL;
	return sirq_unregister(cpu, vec);
}

/*
 * local_softirq_pending_clear() with the snapshot: take every bit but
 * those of the softirq threads and those a thread runs without the lock
 * right now (their runs must not overlap).
 */
static inline uint32_t
take_pending(struct sirq_cpu *cpu)
{
	uint32_t keep = __atomic_load_n(&cpu->thread_mask, __ATOMIC_RELAXED);

	if (sirq_likely(keep == 0))
		return __atomic_exchange_n(&cpu->pending, 0, __ATOMIC_ACQUIRE);
	keep |= __atomic_load_n(&cpu->unlocked_running, __ATOMIC_SEQ_CST);
	return __atomic_fetch_and(&cpu->pending, keep, __ATOMIC_ACQUIRE) & ~keep;
}

/* Forget the vectors of @mask: at stop, once their sources are drained. */
void
sirq_pending_drop(struct sirq_cpu *cpu, uint32_t mask)
{
	uint32_t dropped = __atomic_fetch_and(&cpu->pending, ~mask,
					      __ATOMIC_RELAXED) & mask;

	while (dropped != 0) {
		unsigned int vec = (unsigned int)__builtin_ctz(dropped);

		dropped &= dropped - 1;
		__atomic_store_n(&cpu->raise_ns[vec], 0, __ATOMIC_RELAXED);
	}
}

/*
 * The stamp is the vector's "raised since it last ran" state, and the
 * pending bit follows it: only the raise that puts a stamp where there
 * was none sets the bit. A raise that finds a stamp is covered by a run
 * still to come (the bit is set, or taken by a loop whose handler has
 * not started: it takes the stamp right before it runs the handler), so
 * every run has the stamp of the first raise since the last run, and
 * a raise between taking the bits and running the handler is neither
 * left without a stamp nor counted twice.
 */
static void wakeup_worker(struct sirq_cpu *cpu, enum sirq_wake why);
static void wakeup_thread(struct sirq_cpu *cpu, unsigned int thread);

/*
 * raise_softirq_irqoff(): outside interrupt context (no lock: not in a
 * hardirq, a pass or a bottom-half section) on the CPU itself, wake the
 * worker. A worker that cannot be woken leaves it to the dispatcher.
 */
static inline bool
raise_wakes_worker(struct sirq_cpu *cpu)
{
	return cpu->ops.in_task != NULL &&
		!sirq_exec_lock_is_mine(cpu) &&
		__atomic_load_n(&cpu->worker_state, __ATOMIC_RELAXED) !=
			SIRQ_WORKER_PARKED &&
		cpu->ops.in_task(cpu->ops.ctx);
}

static inline int
mark_pending(struct sirq_cpu *cpu, unsigned int vec, bool kick)
{
	uint64_t none = 0, now;
	uint32_t bit, old;

	if (sirq_unlikely(cpu == NULL || vec >= SIRQ_MAX_VECTORS ||
			  __atomic_load_n(&cpu->action[vec].handler,
					  __ATOMIC_RELAXED) == NULL))
		return -EINVAL;

	/*
	 * rt: a NIC interrupt's raise, pending already or not, has its irq
	 * thread run the pass; the repoll of a pass (serving) has not.
	 */
	if (sirq_unlikely(cpu->policy->irq_raise_mask & SIRQ_BIT(vec)) &&
	    !__atomic_load_n(&cpu->serving, __ATOMIC_RELAXED))
		__atomic_fetch_or(&cpu->irq_raised, SIRQ_BIT(vec),
				  __ATOMIC_RELAXED);
	if (__atomic_load_n(&cpu->raise_ns[vec], __ATOMIC_ACQUIRE) != 0)
		return 0;
	now = sirq_now(cpu);
	/* 0 means "no stamp": a clock at 0 stamps 1 ns instead. */
	if (!__atomic_compare_exchange_n(&cpu->raise_ns[vec], &none,
					 now != 0 ? now : 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;

	/* Before the bit: in the trace, no run of this raise precedes it. */
	SIRQ_TRACE_SOFTIRQ_RAISE(cpu, vec);
	bit = SIRQ_BIT(vec);
	old = __atomic_fetch_or(&cpu->pending, bit, __ATOMIC_SEQ_CST);
	/* A vector with a thread of its own: the raise wakes it, always. */
	if (sirq_unlikely(__atomic_load_n(&cpu->thread_mask, __ATOMIC_SEQ_CST) &
			  bit)) {
		wakeup_thread(cpu, __atomic_load_n(&cpu->thread_of[vec],
						   __ATOMIC_RELAXED));
		return 0;
	}
	if (!kick)
		return 0;
	if (raise_wakes_worker(cpu))
		wakeup_worker(cpu, SIRQ_WAKE_RAISE);
	else if (old == 0 && cpu->ops.kick != NULL)
		cpu->ops.kick(cpu->ops.ctx);
	return 0;
}

int
sirq_raise(struct sirq_cpu *cpu, unsigned int vec)
{
	return mark_pending(cpu, vec, true);
}

int
sirq_raise_irqoff(struct sirq_cpu *cpu, unsigned int vec)
{
	return mark_pending(cpu, vec, false);
}

uint32_t
sirq_pending(const struct sirq_cpu *cpu)
{
	if (cpu == NULL)
		return 0;
	return __atomic_load_n(&cpu->pending, __ATOMIC_RELAXED);
}

void
sirq_set_need_resched(struct sirq_cpu *cpu, bool want_cpu)
{
	if (cpu == NULL)
		return;
	__atomic_store_n(&cpu->need_resched, want_cpu ? 1 : 0,
			 __ATOMIC_RELAXED);
}

bool
sirq_need_resched(const struct sirq_cpu *cpu)
{
	if (cpu == NULL)
		return false;
	if (__atomic_load_n(&cpu->need_resched, __ATOMIC_RELAXED))
		return true;
	return cpu->ops.need_resched != NULL &&
		cpu->ops.need_resched(cpu->ops.ctx);
}

/*
 * The worker went from idle to runnable for @why: counted, and marked for
 * its next pass, which is then a woken one and not a continuation. Only
 * the thread that made the transition writes the mark before the worker
 * takes it, so the two never cross.
 */
static inline void
worker_became_runnable(struct sirq_cpu *cpu, enum sirq_wake why)
{
	sirq_stat_add_atomic(&cpu->stats.wakeups[why], 1);
	__atomic_store_n(&cpu->worker_woken, 1, __ATOMIC_SEQ_CST);
}

/* wakeup_softirqd(): only an idle worker is woken, once. */
static void
wakeup_worker(struct sirq_cpu *cpu, enum sirq_wake why)
{
	uint32_t idle = SIRQ_WORKER_IDLE;

	if (!__atomic_compare_exchange_n(&cpu->worker_state, &idle,
					 SIRQ_WORKER_RUNNABLE, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return;
	worker_became_runnable(cpu, why);
	SIRQ_TRACE_WORKER_WAKEUP(cpu, why);
	cpu->ops.wake_worker(cpu->ops.ctx);
}

void
sirq_worker_wakeup(struct sirq_cpu *cpu)
{
	if (cpu == NULL || cpu->ops.wake_worker == NULL)
		return;
	wakeup_worker(cpu, SIRQ_WAKE_EXPLICIT);
}


/* A sample into a log2 histogram, with its maximum and stall count. */
static void
record_hist(struct sirq_cpu *cpu, struct sirq_latency *lat, uint64_t ns)
{
	unsigned int b = ns < 2 ? 0 : 63 - (unsigned int)__builtin_clzll(ns);

	if (b >= SIRQ_LAT_BUCKETS)
		b = SIRQ_LAT_BUCKETS - 1;
	sirq_stat_add(&lat->samples, 1);
	sirq_stat_add(&lat->sum_ns, ns);
	sirq_stat_add(&lat->hist[b], 1);
	if (ns > lat->max_ns)
		__atomic_store_n(&lat->max_ns, ns, __ATOMIC_RELAXED);
	if (ns >= cpu->params.stall_threshold_ns)
		sirq_stat_add(&lat->stalls, 1);
}

/* Run one vector's handler at @start; returns the time it finished. */
static inline uint64_t
run_action(struct sirq_cpu *cpu, unsigned int vec, enum sirq_ctx ctx,
	   uint64_t start)
{
	struct sirq_action *a = &cpu->action[vec];
	sirq_handler_t handler;
	uint64_t raised, end;

	/*
	 * From here a raise stamps and sets the bit again: another run. A
	 * load and a store, not an exchange: a raise that lands between them
	 * finds the stamp, sets no bit, and is covered by this run, whose
	 * handler starts after the store, as one before the load would be.
	 */
	raised = __atomic_load_n(&cpu->raise_ns[vec], __ATOMIC_ACQUIRE);
	__atomic_store_n(&cpu->raise_ns[vec], 0, __ATOMIC_RELEASE);
	if (sirq_likely(raised != 0))
		record_hist(cpu, &cpu->stats.latency[vec],
			    start > raised ? start - raised : 0);

	/* A raise that crossed sirq_unregister(): nothing to run. */
	handler = __atomic_load_n(&a->handler, __ATOMIC_ACQUIRE);
	if (sirq_unlikely(handler == NULL))
		return start;
	SIRQ_TRACE_SOFTIRQ_ENTRY(cpu, vec, ctx);
	handler(cpu, a->arg);
	SIRQ_TRACE_SOFTIRQ_EXIT(cpu, vec, ctx);

	end = sirq_now(cpu);
	sirq_stat_add(&cpu->stats.runs[vec][ctx], 1);
	sirq_stat_add(&cpu->stats.time_ns[vec][ctx], end - start);
	return end;
}

static const enum sirq_wake wake_for_exit[SIRQ_EXIT_MAX] = {
	[SIRQ_EXIT_RESTART] = SIRQ_WAKE_RESTART,
	[SIRQ_EXIT_TIME] = SIRQ_WAKE_TIME,
	[SIRQ_EXIT_NEED_RESCHED] = SIRQ_WAKE_NEED_RESCHED,
};

/*
 * need_resched() as the pass's context sees it. The dispatcher's: a
 * thread other than the one it interrupted wants the CPU (the
 * application's flag or ops.need_resched). The worker's: the scheduler
 * wants the worker off the CPU (ops.worker_need_resched), which is not
 * the application's wish: the kernel marks ksoftirqd only to switch it
 * out, and an OS thread is switched out without being asked.
 */
static inline bool
ctx_need_resched(const struct sirq_cpu *cpu, enum sirq_ctx ctx)
{
	if (ctx == SIRQ_CTX_WORKER)
		return cpu->ops.worker_need_resched != NULL &&
			cpu->ops.worker_need_resched(cpu->ops.ctx);
	return sirq_need_resched(cpu);
}

static inline bool
need_resched_yields(struct sirq_cpu *cpu, enum sirq_ctx ctx, uint32_t pending)
{
	return ctx_need_resched(cpu, ctx) &&
		cpu->policy->need_resched_yields(cpu, ctx, pending);
}

/*
 * Work is pending again: restart, or why not. v6.1 and v6.5+:
 *	time_before(jiffies, end) && !need_resched() && --max_restart
 * The Dec 2022 patches take the limits first, so a last restart with
 * need_resched() set is an overload (100 ms), not a deferral (2 ms):
 *	time_is_before_eq_jiffies(end) || !--max_restart
 * SIRQ_EXIT_DRAINED here means "restart".
 */
static inline enum sirq_exit
restart_or_exit(struct sirq_cpu *cpu, enum sirq_ctx ctx, bool time_up,
		unsigned int *max_restart, uint32_t pending)
{
	if (time_up)
		return SIRQ_EXIT_TIME;
	if (cpu->policy->limits_before_need_resched) {
		if (--*max_restart == 0)
			return SIRQ_EXIT_RESTART;
		if (need_resched_yields(cpu, ctx, pending))
			return SIRQ_EXIT_NEED_RESCHED;
		return SIRQ_EXIT_DRAINED;
	}
	if (need_resched_yields(cpu, ctx, pending))
		return SIRQ_EXIT_NEED_RESCHED;
	if (--*max_restart == 0)
		return SIRQ_EXIT_RESTART;
	return SIRQ_EXIT_DRAINED;
}

/*
 * A thread waits for the lock, or the CPU is stopping: the pass ends at
 * this vector boundary. The snapshot's bits not yet run (@left) go back;
 * their stamps are still there, so neither a raise nor its latency is
 * lost. Whoever takes the lock runs them (sirq_bh_enable()), or the
 * dispatcher's next iteration does: it is not an overload, so no window
 * opens and no worker wakes. A stop comes first: a pass that would last
 * max_time_ns (up to 1 s) with a handler that raises itself again ends
 * after the run under way instead.
 */
static inline enum sirq_exit
hand_over(struct sirq_cpu *cpu, uint32_t left)
{
	if (left != 0)
		__atomic_fetch_or(&cpu->pending, left, __ATOMIC_RELEASE);
	if (local_pending(cpu) == 0)
		return SIRQ_EXIT_DRAINED;
	return __atomic_load_n(&cpu->stopping, __ATOMIC_RELAXED) ?
		SIRQ_EXIT_STOP : SIRQ_EXIT_LOCK_WAITER;
}

/*
 * One round: run the snapshot's bits lowest first. SIRQ_EXIT_DRAINED
 * when it ran them all, else why it stopped at a vector boundary.
 */
static inline enum sirq_exit
run_round(struct sirq_cpu *cpu, enum sirq_ctx ctx, uint32_t pending,
	  uint64_t *now)
{
	while (pending != 0) {
		unsigned int vec = (unsigned int)__builtin_ctz(pending);

		pending &= pending - 1;
		*now = run_action(cpu, vec, ctx, *now);
		if (sirq_unlikely(sirq_pass_cut(cpu)))
			return hand_over(cpu, pending);
	}
	return SIRQ_EXIT_DRAINED;
}

/*
 * __do_softirq(): snapshot and clear pending, run the set bits lowest
 * first, look again; restart while there is time, nobody wants the CPU
 * and restarts are left. Work still pending at the end goes to the worker,
 * with the reason. A thread waiting for the lock ends the pass at the next
 * vector boundary instead (hand_over()). Called with the lock held.
 */
static enum sirq_exit
do_softirq(struct sirq_cpu *cpu, enum sirq_ctx ctx, uint64_t now)
{
	uint64_t start = now, end = 0;
	unsigned int max_restart = cpu->params.max_restart;
	enum sirq_exit why;
	uint32_t pending;

	__atomic_store_n(&cpu->serving, true, __ATOMIC_RELAXED);
	pending = take_pending(cpu);
	for (;;) {
		why = run_round(cpu, ctx, pending, &now);
		if (sirq_unlikely(why != SIRQ_EXIT_DRAINED))
			break;
		pending = local_pending(cpu);
		if (pending == 0)
			break;
		/* The limit's jiffies only once there is more to do. */
		if (end == 0)
			end = sirq_jiffies(cpu, start) + cpu->max_time_span;
		why = restart_or_exit(cpu, ctx, sirq_jiffies(cpu, now) >= end,
				      &max_restart, pending);
		if (why != SIRQ_EXIT_DRAINED)
			break;
		pending = take_pending(cpu);
	}
	__atomic_store_n(&cpu->serving, false, __ATOMIC_RELAXED);

	sirq_stat_add(&cpu->stats.pass_exit[why][ctx], 1);
	SIRQ_TRACE_PASS_END(cpu, why, ctx);
	if (why != SIRQ_EXIT_DRAINED && why != SIRQ_EXIT_LOCK_WAITER &&
	    why != SIRQ_EXIT_STOP) {
		if (cpu->policy->work_left != NULL)
			cpu->policy->work_left(cpu, why,
					       sirq_jiffies(cpu, now));
		wakeup_worker(cpu, wake_for_exit[why]);
	}
	return why;
}

/*
 * invoke_softirq()/do_softirq(): with the lock held, either leave the
 * work to the worker as the policy says, or run a pass here.
 */
static enum sirq_irq_exit_result
run_or_defer(struct sirq_cpu *cpu, uint32_t pending, bool from_irq)
{
	uint64_t now = sirq_now(cpu);

	if (cpu->policy->worker_should_handle(cpu, pending,
					      sirq_jiffies(cpu, now),
					      from_irq)) {
		/* deferred: the worker may still be asleep. */
		wakeup_worker(cpu, SIRQ_WAKE_HANDOFF);
		return SIRQ_IRQ_EXIT_DEFERRED;
	}
	do_softirq(cpu, SIRQ_CTX_INLINE, now);
	return SIRQ_IRQ_EXIT_RAN;
}

bool
sirq_irq_enter(struct sirq_cpu *cpu)
{
	if (sirq_unlikely(cpu == NULL))
		return false;
	if (sirq_unlikely(sirq_exec_lock_is_mine(cpu)))
		return true;	/* bottom halves off here: handlers wait anyway */
	if (!exec_trylock(cpu)) {
		sirq_stat_add(&cpu->stats.lock_busy, 1);
		remote_hold_look(cpu, true);
		return false;
	}
	if (sirq_unlikely(cpu->remote_since != 0))
		remote_hold_look(cpu, false);
	cpu->hardirq = true;
	return true;
}

/*
 * The binding's "hardirq" looked and found that no interrupt fired: it
 * was not one. The lock of sirq_irq_enter() goes, with no irq_exit().
 */
void
sirq_irq_leave(struct sirq_cpu *cpu)
{
	if (!sirq_exec_lock_is_mine(cpu) || !cpu->hardirq)
		return;
	cpu->hardirq = false;
	exec_unlock(cpu);
}

/*
 * Is there pending work that the dispatcher would run itself now, rather
 * than leave to the worker? Any thread, no lock: a question for the
 * binding's priority inheritance, which lends the worker the CPU only
 * when the dispatcher is kept from work it would do (the kernel's passes
 * are not preemptible; a pass the policy would wait for anyway is not
 * hurried).
 */
bool
sirq_inline_wanted(const struct sirq_cpu *cpu)
{
	uint32_t pending = local_pending(cpu);

	if (pending == 0) {
		if (!__atomic_load_n(&cpu->serving, __ATOMIC_RELAXED))
			return false;
		/* A pass runs with the bits it took: its work, not expedited. */
		pending = ~cpu->params.expedited_mask;
	}
	return !cpu->policy->would_defer(cpu, pending, sirq_jiffies_now(cpu),
					 true);
}

/* With the lock held: the policy's choice, counted. */
static enum sirq_irq_exit_result
irq_exit_locked(struct sirq_cpu *cpu)
{
	uint32_t pending = local_pending(cpu);
	enum sirq_irq_exit_result res;

	if (pending == 0)
		return SIRQ_IRQ_EXIT_IDLE;
	res = run_or_defer(cpu, pending, true);
	/* This "interrupt"'s raises are decided on (rt_would_defer()). */
	if (cpu->policy->irq_raise_mask != 0)
		__atomic_store_n(&cpu->irq_raised, 0, __ATOMIC_RELAXED);
	if (res == SIRQ_IRQ_EXIT_DEFERRED)
		sirq_stat_add(&cpu->stats.deferred_to_worker, 1);
	return res;
}

enum sirq_irq_exit_result
sirq_irq_exit(struct sirq_cpu *cpu)
{
	enum sirq_irq_exit_result res;

	if (sirq_unlikely(cpu == NULL))
		return SIRQ_IRQ_EXIT_IDLE;
	if (sirq_exec_lock_is_mine(cpu)) {
		if (!cpu->hardirq)
			return SIRQ_IRQ_EXIT_BH_DISABLED;
		/* The lock of sirq_irq_enter(): the "hardirq" ends here. */
		cpu->hardirq = false;
		res = irq_exit_locked(cpu);
		exec_unlock(cpu);
		return res;
	}
	/* An open remote_hold episode closes at the next look that locks. */
	if (sirq_likely(local_pending(cpu) == 0))
		return SIRQ_IRQ_EXIT_IDLE;
	if (!exec_trylock(cpu)) {
		sirq_stat_add(&cpu->stats.lock_busy, 1);
		remote_hold_look(cpu, true);
		return SIRQ_IRQ_EXIT_BUSY;
	}
	if (sirq_unlikely(cpu->remote_since != 0))
		remote_hold_look(cpu, false);
	res = irq_exit_locked(cpu);
	exec_unlock(cpu);
	return res;
}

/*
 * The worker found nothing to do: close its window, go idle. A wake-up
 * that led to no pass is counted here, taken while the worker is still
 * runnable, when nobody else can mark it.
 */
static enum sirq_worker_status
worker_go_idle(struct sirq_cpu *cpu)
{
	uint32_t runnable = SIRQ_WORKER_RUNNABLE;

	if (__atomic_exchange_n(&cpu->worker_woken, 0, __ATOMIC_SEQ_CST) != 0)
		sirq_stat_add(&cpu->stats.worker_wakeups_unused, 1);
	if (!__atomic_compare_exchange_n(&cpu->worker_state, &runnable,
					 SIRQ_WORKER_IDLE, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return SIRQ_WORKER_EXIT;	/* parked meanwhile */

	if (cpu->policy->worker_idle != NULL)
		cpu->policy->worker_idle(cpu);

	/* Pairs with the dispatcher's raise-then-look: nobody sleeps on work. */
	if (local_pending(cpu) != 0) {
		uint32_t idle = SIRQ_WORKER_IDLE;

		if (__atomic_compare_exchange_n(&cpu->worker_state, &idle,
						SIRQ_WORKER_RUNNABLE, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED)) {
			worker_became_runnable(cpu, SIRQ_WAKE_RECHECK);
			return SIRQ_WORKER_YIELD;
		}
	}
	return SIRQ_WORKER_SLEEP;
}

enum sirq_worker_status
sirq_worker_run(struct sirq_cpu *cpu)
{
	enum sirq_worker_status st;
	uint32_t state;

	if (cpu == NULL)
		return SIRQ_WORKER_EXIT;
	state = __atomic_load_n(&cpu->worker_state, __ATOMIC_ACQUIRE);
	if (state == SIRQ_WORKER_PARKED)
		return SIRQ_WORKER_EXIT;
	if (state == SIRQ_WORKER_IDLE) {
		if (__atomic_compare_exchange_n(&cpu->worker_state, &state,
						SIRQ_WORKER_RUNNABLE, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			worker_became_runnable(cpu, SIRQ_WAKE_RUN);
		else if (state == SIRQ_WORKER_PARKED)
			return SIRQ_WORKER_EXIT;
	}

	/*
	 * The CPU is stopping: no new pass, as a CPU going down parks its
	 * ksoftirqd. What is pending stays for the stop's drain or the next
	 * launch; the worker sleeps until it is parked or woken again. Else a
	 * worker would go on with pass after pass of one handler each until
	 * its lcore's teardown parks it, as long as that takes.
	 */
	if (sirq_unlikely(__atomic_load_n(&cpu->stopping, __ATOMIC_RELAXED)))
		return SIRQ_WORKER_SLEEP;
	if (!exec_trylock(cpu))
		return SIRQ_WORKER_BUSY;
	if (cpu->ops.worker_hardirq != NULL)
		cpu->ops.worker_hardirq(cpu->ops.ctx);
	/*
	 * run_ksoftirqd(): a pass if work is pending. Then, as the smpboot
	 * thread's loop does, sleep at once if none is left, after the look
	 * at the sources that the next call would make first.
	 */
	if (local_pending(cpu) != 0) {
		/* Woken for this pass, or still pending after the last. */
		if (__atomic_exchange_n(&cpu->worker_woken, 0,
					__ATOMIC_SEQ_CST) == 0)
			sirq_stat_add(&cpu->stats.worker_continuations, 1);
		if (do_softirq(cpu, SIRQ_CTX_WORKER, sirq_now(cpu)) !=
		    SIRQ_EXIT_DRAINED) {
			st = SIRQ_WORKER_YIELD;
			goto out;
		}
		if (cpu->ops.worker_hardirq != NULL)
			cpu->ops.worker_hardirq(cpu->ops.ctx);
	}
	st = local_pending(cpu) == 0 ?
		worker_go_idle(cpu) : SIRQ_WORKER_YIELD;
out:
	exec_unlock(cpu);
	return st;
}

void
sirq_worker_park(struct sirq_cpu *cpu)
{
	if (cpu == NULL)
		return;
	__atomic_store_n(&cpu->worker_state, SIRQ_WORKER_PARKED,
			 __ATOMIC_SEQ_CST);
}

void
sirq_worker_unpark(struct sirq_cpu *cpu)
{
	uint32_t parked = SIRQ_WORKER_PARKED;

	if (cpu == NULL || cpu->ops.wake_worker == NULL)
		return;
	__atomic_compare_exchange_n(&cpu->worker_state, &parked,
				    SIRQ_WORKER_IDLE, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

enum sirq_worker_state
sirq_worker_state(const struct sirq_cpu *cpu)
{
	if (cpu == NULL)
		return SIRQ_WORKER_PARKED;
	return __atomic_load_n(&cpu->worker_state, __ATOMIC_ACQUIRE);
}

/*
 * Softirq threads: the threads of an execution model (SIRQ_POLICY_RT's
 * ktimers, SIRQ_POLICY_PUSHDOWN's thread per vector). A thread is known
 * by its lead vector; the model maps vectors to threads
 * (policy->thread_of), and a vector goes to its thread once the binding
 * has attached that thread. Raisers wake the thread (mark_pending()); the
 * worker and the dispatcher leave its bits alone (local_pending(),
 * take_pending()).
 */

/* The model's thread for @vec, attached or not; -1 for none. */
static inline int
model_thread_of(const struct sirq_cpu *cpu, unsigned int vec)
{
	if (cpu->policy->thread_of == NULL)
		return -1;
	return cpu->policy->thread_of(vec);
}

/*
 * Recompute which vectors go to which attached thread: at every change
 * of parameters, registrations aside, and of attachments. Called with
 * the lock held (or before the CPU runs). Pending bits that now belong
 * to a thread wake it; those that no longer do are the dispatcher's
 * (the caller kicks after the unlock).
 */
static void
update_threads(struct sirq_cpu *cpu)
{
	uint32_t attached = __atomic_load_n(&cpu->threads_attached,
					    __ATOMIC_RELAXED);
	uint32_t vecs[SIRQ_MAX_VECTORS] = { 0 };
	uint32_t mask = 0, pending;
	unsigned int v;

	for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
		int t = model_thread_of(cpu, v);

		if (t < 0 || (attached & SIRQ_BIT(t)) == 0)
			continue;
		mask |= SIRQ_BIT(v);
		vecs[t] |= SIRQ_BIT(v);
		__atomic_store_n(&cpu->thread_of[v], (uint8_t)t,
				 __ATOMIC_RELAXED);
	}
	for (v = 0; v < SIRQ_MAX_VECTORS; v++)
		__atomic_store_n(&cpu->thread_vecs[v], vecs[v],
				 __ATOMIC_RELAXED);
	__atomic_store_n(&cpu->thread_mask, mask, __ATOMIC_SEQ_CST);

	pending = __atomic_load_n(&cpu->pending, __ATOMIC_SEQ_CST) & mask;
	while (pending != 0) {
		v = (unsigned int)__builtin_ctz(pending);
		pending &= pending - 1;
		wakeup_thread(cpu, cpu->thread_of[v]);
	}
}

/* wakeup_softirqd() for a softirq thread: only an idle one, once. */
static void
wakeup_thread(struct sirq_cpu *cpu, unsigned int thread)
{
	uint32_t idle = SIRQ_WORKER_IDLE;

	if (!__atomic_compare_exchange_n(&cpu->thread_state[thread], &idle,
					 SIRQ_WORKER_RUNNABLE, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return;
	cpu->thread_ops.wake(cpu->thread_ops.ctx, thread);
}

/* Run @fn(cpu, arg) under the lock, as sirq_cpu_set_params() changes. */
static void
with_lock(struct sirq_cpu *cpu, void (*fn)(struct sirq_cpu *, uintptr_t),
	  uintptr_t arg)
{
	bool mine = sirq_exec_lock_is_mine(cpu);

	if (!mine)
		exec_lock(cpu, &cpu->stats.thread_lock_wait);
	fn(cpu, arg);
	if (mine)
		return;
	exec_unlock(cpu);
	if (local_pending(cpu) != 0 && cpu->ops.kick != NULL)
		cpu->ops.kick(cpu->ops.ctx);
}

static void
set_thread_ops(struct sirq_cpu *cpu, uintptr_t arg)
{
	const struct sirq_thread_ops *ops = (const void *)arg;
	unsigned int t;

	if (ops == NULL) {
		__atomic_store_n(&cpu->threads_attached, 0, __ATOMIC_RELAXED);
		for (t = 0; t < SIRQ_MAX_VECTORS; t++)
			__atomic_store_n(&cpu->thread_state[t],
					 SIRQ_WORKER_PARKED, __ATOMIC_SEQ_CST);
		update_threads(cpu);
		memset(&cpu->thread_ops, 0, sizeof(cpu->thread_ops));
		return;
	}
	cpu->thread_ops = *ops;
}

int
sirq_thread_ops_set(struct sirq_cpu *cpu, const struct sirq_thread_ops *ops)
{
	if (cpu == NULL || (ops != NULL && ops->wake == NULL))
		return -EINVAL;
	with_lock(cpu, set_thread_ops, (uintptr_t)ops);
	return 0;
}

uint32_t
sirq_threads_wanted(const struct sirq_cpu *cpu)
{
	uint32_t want = 0;
	unsigned int v;

	if (cpu == NULL)
		return 0;
	for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
		int t;

		if (__atomic_load_n(&cpu->action[v].handler,
				    __ATOMIC_ACQUIRE) == NULL)
			continue;
		t = model_thread_of(cpu, v);
		if (t >= 0)
			want |= SIRQ_BIT(t);
	}
	return want;
}

int
sirq_thread_of(const struct sirq_cpu *cpu, unsigned int vec)
{
	int t;

	if (cpu == NULL || vec >= SIRQ_MAX_VECTORS)
		return -EINVAL;
	t = model_thread_of(cpu, vec);
	return t >= 0 ? t : -ENOENT;
}

static void
attach_thread(struct sirq_cpu *cpu, uintptr_t thread)
{
	uint32_t parked = SIRQ_WORKER_PARKED;

	__atomic_compare_exchange_n(&cpu->thread_state[thread], &parked,
				    SIRQ_WORKER_IDLE, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_RELAXED);
	__atomic_fetch_or(&cpu->threads_attached, SIRQ_BIT(thread),
			  __ATOMIC_RELAXED);
	update_threads(cpu);
}

int
sirq_thread_attach(struct sirq_cpu *cpu, unsigned int thread)
{
	if (cpu == NULL || thread >= SIRQ_MAX_VECTORS ||
	    cpu->thread_ops.wake == NULL)
		return -EINVAL;
	with_lock(cpu, attach_thread, thread);
	return 0;
}

static void
detach_thread(struct sirq_cpu *cpu, uintptr_t thread)
{
	__atomic_fetch_and(&cpu->threads_attached, ~SIRQ_BIT(thread),
			   __ATOMIC_RELAXED);
	__atomic_store_n(&cpu->thread_state[thread], SIRQ_WORKER_PARKED,
			 __ATOMIC_SEQ_CST);
	update_threads(cpu);
}

int
sirq_thread_detach(struct sirq_cpu *cpu, unsigned int thread)
{
	if (cpu == NULL || thread >= SIRQ_MAX_VECTORS)
		return -EINVAL;
	with_lock(cpu, detach_thread, thread);
	/* A round without the lock may still run its vectors: let it end. */
	while (__atomic_load_n(&cpu->unlocked_running, __ATOMIC_SEQ_CST) &
	       __atomic_load_n(&cpu->thread_vecs[thread], __ATOMIC_RELAXED))
		sched_yield();
	return 0;
}

enum sirq_worker_state
sirq_thread_state(const struct sirq_cpu *cpu, unsigned int thread)
{
	if (cpu == NULL || thread >= SIRQ_MAX_VECTORS)
		return SIRQ_WORKER_PARKED;
	return __atomic_load_n(&cpu->thread_state[thread], __ATOMIC_ACQUIRE);
}

/*
 * One round of a thread's vectors under the lock: take them, run them
 * lowest first; a waiter gets the lock at the next vector boundary and
 * the bits not run go back.
 */
static void
thread_round_locked(struct sirq_cpu *cpu, unsigned int thread)
{
	uint32_t group, bits;
	uint64_t now;

	exec_lock(cpu, &cpu->stats.thread_lock_wait);
	/*
	 * The interrupts that fire while the thread holds the lock (the
	 * timer, a queue), as sirqd looks before its passes: nobody else
	 * can look while softirq threads keep the lock round after round.
	 */
	if (cpu->ops.worker_hardirq != NULL)
		cpu->ops.worker_hardirq(cpu->ops.ctx);
	/* The model may have changed while we waited. */
	group = __atomic_load_n(&cpu->thread_vecs[thread], __ATOMIC_RELAXED);
	bits = __atomic_fetch_and(&cpu->pending, ~group, __ATOMIC_ACQUIRE) &
		group;
	__atomic_store_n(&cpu->serving, true, __ATOMIC_RELAXED);
	now = sirq_now(cpu);
	while (bits != 0) {
		unsigned int vec = (unsigned int)__builtin_ctz(bits);

		bits &= bits - 1;
		now = run_action(cpu, vec, SIRQ_CTX_WORKER, now);
		if (bits != 0 && sirq_unlikely(sirq_exec_lock_contended(cpu))) {
			__atomic_fetch_or(&cpu->pending, bits, __ATOMIC_RELEASE);
			break;
		}
	}
	__atomic_store_n(&cpu->serving, false, __ATOMIC_RELAXED);
	exec_unlock(cpu);
}

/*
 * One round without the lock. The vectors are marked running first and
 * their ownership looked at after: a change of model (under the lock)
 * either is seen here, or sees the mark and leaves the vectors to us
 * until we clear it (take_pending()).
 */
static void
thread_round_unlocked(struct sirq_cpu *cpu, unsigned int thread,
		      uint32_t group)
{
	uint32_t bits;
	uint64_t now;

	__atomic_fetch_or(&cpu->unlocked_running, group, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cpu->thread_vecs[thread], __ATOMIC_SEQ_CST) !=
	    group)
		goto out;
	bits = __atomic_fetch_and(&cpu->pending, ~group, __ATOMIC_ACQUIRE) &
		group;
	now = sirq_now(cpu);
	while (bits != 0) {
		unsigned int vec = (unsigned int)__builtin_ctz(bits);

		bits &= bits - 1;
		now = run_action(cpu, vec, SIRQ_CTX_WORKER, now);
	}
out:
	__atomic_fetch_and(&cpu->unlocked_running, ~group, __ATOMIC_SEQ_CST);
	/* Ours no more while we ran: the dispatcher's now. */
	if (local_pending(cpu) & group && cpu->ops.kick != NULL)
		cpu->ops.kick(cpu->ops.ctx);
}

enum sirq_worker_status
sirq_thread_run(struct sirq_cpu *cpu, unsigned int thread)
{
	uint32_t *state, st, group, safe;

	if (cpu == NULL || thread >= SIRQ_MAX_VECTORS)
		return SIRQ_WORKER_EXIT;
	state = &cpu->thread_state[thread];
	st = __atomic_load_n(state, __ATOMIC_ACQUIRE);
	if (st == SIRQ_WORKER_PARKED)
		return SIRQ_WORKER_EXIT;
	if (st == SIRQ_WORKER_IDLE &&
	    !__atomic_compare_exchange_n(state, &st, SIRQ_WORKER_RUNNABLE,
					 false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED) &&
	    st == SIRQ_WORKER_PARKED)
		return SIRQ_WORKER_EXIT;
	/* Bottom halves off here: a softirq thread is another task. */
	if (sirq_exec_lock_is_mine(cpu))
		return SIRQ_WORKER_BUSY;

	group = __atomic_load_n(&cpu->thread_vecs[thread], __ATOMIC_RELAXED);
	if (__atomic_load_n(&cpu->pending, __ATOMIC_ACQUIRE) & group) {
		safe = cpu->policy->bh_safe(__atomic_load_n(&cpu->bh_safe,
							    __ATOMIC_RELAXED));
		if ((group & ~safe) != 0)
			thread_round_locked(cpu, thread);
		else
			thread_round_unlocked(cpu, thread, group);
	}

	/* More of ours pending: the scheduler decides when we go on. */
	group = __atomic_load_n(&cpu->thread_vecs[thread], __ATOMIC_RELAXED);
	if (__atomic_load_n(&cpu->pending, __ATOMIC_SEQ_CST) & group)
		return SIRQ_WORKER_YIELD;
	st = SIRQ_WORKER_RUNNABLE;
	if (!__atomic_compare_exchange_n(state, &st, SIRQ_WORKER_IDLE, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return SIRQ_WORKER_EXIT;	/* detached meanwhile */
	/* Pairs with the raiser's set-bit-then-wake: nobody sleeps on work. */
	if (__atomic_load_n(&cpu->pending, __ATOMIC_SEQ_CST) & group) {
		st = SIRQ_WORKER_IDLE;
		if (__atomic_compare_exchange_n(state, &st,
						SIRQ_WORKER_RUNNABLE, false,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return SIRQ_WORKER_YIELD;
	}
	return SIRQ_WORKER_SLEEP;
}

int
sirq_bh_disable(struct sirq_cpu *cpu)
{
	if (cpu == NULL)
		return -EINVAL;
	if (!sirq_exec_lock_is_mine(cpu)) {
		int ret = section_lock(cpu);

		if (ret != 0)
			return ret;
		cpu->bh_took_lock = true;
	}
	cpu->bh_depth++;
	return 0;
}

int
sirq_bh_enable(struct sirq_cpu *cpu)
{
	uint32_t pending;
	bool local;

	if (cpu == NULL)
		return -EINVAL;
	if (!sirq_exec_lock_is_mine(cpu) || cpu->bh_depth == 0)
		return -EPERM;
	/*
	 * Nested, or the lock was the holder's before the section: a pass
	 * (a handler's section), a "hardirq" (a remote call on the
	 * dispatcher), the worker before its pass, a tasklet's thread. The
	 * kernel runs no softirq at a local_bh_enable() in interrupt or
	 * softirq context; that holder runs the pending work when it lets
	 * go, and lets go of the lock itself. (No pass runs while a section
	 * that took the lock is open: irq_exit() answers BH_DISABLED, the
	 * worker cannot take the lock, and the enable below clears the
	 * flag before its own pass.)
	 */
	if (--cpu->bh_depth > 0 || !cpu->bh_took_lock)
		return 0;
	cpu->bh_took_lock = false;

	/*
	 * Outermost enable outside any pass: the kernel's do_softirq(), for
	 * this CPU's own threads. Another thread has none of the CPU's
	 * per-CPU state to run handlers with: the dispatcher gets the work.
	 */
	pending = local_pending(cpu);
	local = cpu->ops.is_local == NULL || cpu->ops.is_local(cpu->ops.ctx);
	if (pending != 0 && local)
		run_or_defer(cpu, pending, false);
	section_unlock(cpu);
	if (pending != 0 && !local && cpu->ops.kick != NULL)
		cpu->ops.kick(cpu->ops.ctx);
	return 0;
}

void
sirq_stats_get(const struct sirq_cpu *cpu, struct sirq_stats *st)
{
	if (st == NULL)
		return;
	if (cpu == NULL) {
		memset(st, 0, sizeof(*st));
		return;
	}
	sirq_counters_copy(st, &cpu->stats, sizeof(*st));
}

void
sirq_stats_reset(struct sirq_cpu *cpu)
{
	uint64_t *c;
	size_t i;

	if (cpu == NULL)
		return;
	c = (uint64_t *)&cpu->stats;
	for (i = 0; i < sizeof(cpu->stats) / sizeof(uint64_t); i++)
		__atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
}

uint64_t
sirq_latency_quantile(const struct sirq_latency *lat, double q)
{
	uint64_t rank, seen = 0;
	unsigned int b;

	if (lat == NULL || lat->samples == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	rank = (uint64_t)(q * (double)lat->samples + 0.5);
	if (rank == 0)
		rank = 1;
	for (b = 0; b < SIRQ_LAT_BUCKETS; b++) {
		seen += lat->hist[b];
		if (seen >= rank) {
			uint64_t upper = b + 1 < 64 ? (2ULL << b) - 1 : UINT64_MAX;

			if (b == SIRQ_LAT_BUCKETS - 1 || upper > lat->max_ns)
				return lat->max_ns;
			return upper;
		}
	}
	return lat->max_ns;
}
