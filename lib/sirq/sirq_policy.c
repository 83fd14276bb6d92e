/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The overload policies: who runs pending work while the worker (sirqd,
 * the kernel's ksoftirqd) is runnable. Each is the decision of one kernel
 * version; adding a policy means adding one struct here.
 */

#include <errno.h>
#include <string.h>

#include "sirq_private.h"
#include "sirq_trace.h"

static bool
need_resched_always_yields(const struct sirq_cpu *cpu, enum sirq_ctx ctx,
			   uint32_t pending)
{
	(void)cpu;
	(void)ctx;
	(void)pending;
	return true;
}

/*
 * Linux >= 6.5. d15121be7485 reverted "Let ksoftirqd do its job": the
 * dispatcher runs pending work whenever it has the lock, whatever the
 * worker's state; the worker gets what a pass leaves after the restart
 * and time limits, and keeps it while it never finds the queue empty.
 */
static bool
mainline_would_defer(const struct sirq_cpu *cpu, uint32_t pending,
		     uint64_t now_j, bool from_irq)
{
	(void)cpu;
	(void)from_irq;
	(void)pending;
	(void)now_j;
	return false;
}

static bool
mainline_should_handle(struct sirq_cpu *cpu, uint32_t pending, uint64_t now_j,
		       bool from_irq)
{
	return mainline_would_defer(cpu, pending, now_j, from_irq);
}

/*
 * Linux 4.9 .. 6.4, 4cd13c21b207 "softirq: Let ksoftirqd do its job":
 * while the worker is runnable, it handles everything unless an expedited
 * vector is pending, in which case the whole loop runs here (the kernel
 * does not split the mask).
 */
static bool
ksoftirqd_would_defer(const struct sirq_cpu *cpu, uint32_t pending,
		      uint64_t now_j, bool from_irq)
{
	(void)now_j;
	(void)from_irq;
	if (pending & cpu->params.expedited_mask)
		return false;
	return sirq_worker_runnable(cpu);
}

static bool
ksoftirqd_should_handle(struct sirq_cpu *cpu, uint32_t pending, uint64_t now_j,
			bool from_irq)
{
	return ksoftirqd_would_defer(cpu, pending, now_j, from_irq);
}

/*
 * kicinski's window: the patch's overload_limit, set when a pass leaves
 * work (2 ms after a need_resched deferral, 100 ms after exhaustion).
 */
static void
kicinski_window_open(struct sirq_cpu *cpu, enum sirq_window kind,
		     uint64_t now_j)
{
	uint64_t len = kind == SIRQ_WINDOW_DEFER ?
		cpu->params.defer_window_ns : cpu->params.overload_window_ns;

	/* Read without the lock by kicinski_would_defer(). */
	__atomic_store_n(&cpu->pstate.kicinski.window_end,
			 now_j + sirq_span(cpu, len), __ATOMIC_RELAXED);
	cpu->pstate.kicinski.stale_end = 0;
	sirq_stat_add(&cpu->stats.windows_opened[kind], 1);
	SIRQ_TRACE_WINDOW_OPEN(cpu, kind, cpu->pstate.kicinski.window_end);
}

/* kicinski's decision without its side effects: inside an open window. */
static bool
kicinski_would_defer(const struct sirq_cpu *cpu, uint32_t pending,
		     uint64_t now_j, bool from_irq)
{
	uint64_t end = __atomic_load_n(&cpu->pstate.kicinski.window_end,
				       __ATOMIC_RELAXED);

	(void)from_irq;
	if (pending & cpu->params.expedited_mask)
		return false;
	return sirq_worker_runnable(cpu) && end != 0 && now_j < end;
}

/*
 * The Dec 2022 patches: as ksoftirqd, but a runnable worker is respected
 * only until the window opened by the last deferral ends (2 ms after a
 * need_resched deferral, 100 ms after exhaustion). A worker that the
 * scheduler does not run can then stall the queues for at most that long.
 */
static bool
kicinski_should_handle(struct sirq_cpu *cpu, uint32_t pending, uint64_t now_j,
		       bool from_irq)
{
	struct sirq_kicinski_state *k = &cpu->pstate.kicinski;

	(void)from_irq;
	if (pending & cpu->params.expedited_mask)
		return false;
	if (!sirq_worker_runnable(cpu))
		return false;

	if (k->window_end == 0) {
		/*
		 * The worker went idle since the last window and was woken
		 * for something else: the old limit no longer describes it.
		 */
		if (now_j < k->stale_end)
			sirq_stat_add(&cpu->stats.stale_windows_ignored, 1);
		return false;
	}
	if (now_j < k->window_end)
		return true;

	/* The window is over: take the work back, once per window. */
	__atomic_store_n(&k->window_end, 0, __ATOMIC_RELAXED);
	sirq_stat_add(&cpu->stats.window_overrides, 1);
	SIRQ_TRACE_WINDOW_OVERRIDE(cpu);
	return false;
}

/*
 * Patch 3: HI and TASKLET would be run right away by the next irq_exit()
 * anyway, so yielding to need_resched() while only they are pending just
 * adds a worker wake-up.
 */
static bool
kicinski_need_resched_yields(const struct sirq_cpu *cpu, enum sirq_ctx ctx,
			     uint32_t pending)
{
	(void)ctx;
	return (pending & ~cpu->params.expedited_mask) != 0;
}

static void
kicinski_work_left(struct sirq_cpu *cpu, enum sirq_exit why, uint64_t now_j)
{
	kicinski_window_open(cpu, why == SIRQ_EXIT_NEED_RESCHED ?
			     SIRQ_WINDOW_DEFER : SIRQ_WINDOW_OVERLOAD, now_j);
}

/*
 * A drained worker must not keep deferring the dispatcher: the limit was
 * about a worker that had work (the stale-limit remark in the review of
 * the patches).
 */
static void
kicinski_worker_idle(struct sirq_cpu *cpu)
{
	struct sirq_kicinski_state *k = &cpu->pstate.kicinski;

	if (k->window_end == 0)
		return;
	if (sirq_jiffies_now(cpu) < k->window_end) {
		k->stale_end = k->window_end;
		sirq_stat_add(&cpu->stats.windows_closed_idle, 1);
	}
	__atomic_store_n(&k->window_end, 0, __ATOMIC_RELAXED);
}

/*
 * deferred: the dispatcher only notices and raises; every handler runs in
 * the worker, with the kernel's limits. Neither PREEMPT_RT nor threaded
 * NAPI (see sirq.h): the far end of "let ksoftirqd do its job". A parked worker (or none at all)
 * leaves the dispatcher to do it, as the kernel migrates the work of a
 * CPU going down.
 */
static bool
deferred_would_defer(const struct sirq_cpu *cpu, uint32_t pending,
		     uint64_t now_j, bool from_irq)
{
	(void)pending;
	(void)from_irq;
	(void)now_j;
	return __atomic_load_n(&cpu->worker_state, __ATOMIC_ACQUIRE) !=
		SIRQ_WORKER_PARKED;
}

static bool
deferred_should_handle(struct sirq_cpu *cpu, uint32_t pending, uint64_t now_j,
		       bool from_irq)
{
	return deferred_would_defer(cpu, pending, now_j, from_irq);
}

/*
 * PREEMPT_RT before 6.18 (kernel/softirq.c's CONFIG_PREEMPT_RT variant).
 * invoke_softirq() never runs a vector at hard interrupt exit: it wakes
 * ksoftirqd. A NIC's handler is forced into a thread, irq/N-name at
 * SCHED_FIFO 50, that runs with bottom halves off; its napi_schedule()
 * raises NET_RX there, and the thread's local_bh_enable() runs
 * __do_softirq() on everything pending, with the usual limits and yield
 * to ksoftirqd. The dispatcher stands for both: at its irq_exit() it
 * runs the pass itself only when this "interrupt" raised NET_RX or
 * NET_TX (the threaded handler's raise), and wakes sirqd for anything
 * else, NAPI's repoll of a pass that hit its limits included. A local
 * bottom-half enable runs what is pending in the task that enables, as
 * RT's __local_bh_enable_ip() does (no ksoftirqd_running() test there).
 */
static bool
rt_would_defer(const struct sirq_cpu *cpu, uint32_t pending, uint64_t now_j,
	       bool from_irq)
{
	(void)now_j;
	(void)pending;
	/*
	 * Only an interrupt's own raise puts its irq thread in a pass. NET_RX
	 * still pending from a pass that hit its limits is NAPI's repoll:
	 * the NIC's interrupt stays masked, so no irq thread runs, and the
	 * work is ksoftirqd's.
	 */
	if (!from_irq || __atomic_load_n(&cpu->irq_raised, __ATOMIC_RELAXED) != 0)
		return false;
	return __atomic_load_n(&cpu->worker_state, __ATOMIC_ACQUIRE) !=
		SIRQ_WORKER_PARKED;
}

static bool
rt_should_handle(struct sirq_cpu *cpu, uint32_t pending, uint64_t now_j,
		 bool from_irq)
{
	return rt_would_defer(cpu, pending, now_j, from_irq);
}

/*
 * The irq thread is SCHED_FIFO: a fair-class task wanting the CPU sets
 * no need_resched() on it, so its pass runs to the limits. sirqd's
 * passes yield to the scheduler as ksoftirqd's do.
 */
static bool
rt_need_resched_yields(const struct sirq_cpu *cpu, enum sirq_ctx ctx,
		       uint32_t pending)
{
	(void)cpu;
	(void)pending;
	return ctx == SIRQ_CTX_WORKER;
}

/* 6.13's ktimers/N (49a17639508c): TIMER and HRTIMER in a thread. */
static int
rt_thread_of(unsigned int vec)
{
	return (SIRQ_BIT(vec) & SIRQ_RT_KTIMERS_MASK) != 0 ? SIRQ_TIMER : -1;
}

static uint32_t
no_vector_safe(uint32_t safe)
{
	(void)safe;
	return 0;
}

/*
 * Weisbecker's pushdown: every vector in its own thread. Whatever is
 * left without a thread (none attached for it) goes to sirqd, as under
 * deferred.
 */
static int
pushdown_thread_of(unsigned int vec)
{
	return (int)vec;
}

/*
 * The registered safe vectors, and the tasklet vectors, whose action
 * takes the lock per tasklet (sirq_tasklet_action()).
 */
static uint32_t
pushdown_bh_safe(uint32_t safe)
{
	return safe | SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(SIRQ_TASKLET);
}

static const struct sirq_policy policy_mainline = {
	.name = "mainline",
	.worker_should_handle = mainline_should_handle,
	.would_defer = mainline_would_defer,
	.need_resched_yields = need_resched_always_yields,
};

static const struct sirq_policy policy_ksoftirqd = {
	.name = "ksoftirqd",
	.worker_should_handle = ksoftirqd_should_handle,
	.would_defer = ksoftirqd_would_defer,
	.need_resched_yields = need_resched_always_yields,
};

static const struct sirq_policy policy_kicinski = {
	.name = "kicinski",
	.limits_before_need_resched = true,
	.worker_should_handle = kicinski_should_handle,
	.would_defer = kicinski_would_defer,
	.need_resched_yields = kicinski_need_resched_yields,
	.work_left = kicinski_work_left,
	.worker_idle = kicinski_worker_idle,
};

static const struct sirq_policy policy_deferred = {
	.name = "deferred",
	.worker_should_handle = deferred_should_handle,
	.would_defer = deferred_would_defer,
	.need_resched_yields = need_resched_always_yields,
};

static const struct sirq_policy policy_rt = {
	.name = "rt",
	.worker_should_handle = rt_should_handle,
	.would_defer = rt_would_defer,
	.need_resched_yields = rt_need_resched_yields,
	.thread_of = rt_thread_of,
	.bh_safe = no_vector_safe,
	.irq_raise_mask = SIRQ_RT_IRQ_THREAD_MASK,
};

static const struct sirq_policy policy_pushdown = {
	.name = "pushdown",
	.worker_should_handle = deferred_should_handle,
	.would_defer = deferred_would_defer,
	.need_resched_yields = need_resched_always_yields,
	.thread_of = pushdown_thread_of,
	.bh_safe = pushdown_bh_safe,
};

static const struct sirq_policy policy_pushdown_locked = {
	.name = "pushdown-locked",
	.worker_should_handle = deferred_should_handle,
	.would_defer = deferred_would_defer,
	.need_resched_yields = need_resched_always_yields,
	.thread_of = pushdown_thread_of,
	.bh_safe = no_vector_safe,
};

const struct sirq_policy *const sirq_policies[SIRQ_POLICY_MAX] = {
	[SIRQ_POLICY_MAINLINE] = &policy_mainline,
	[SIRQ_POLICY_KSOFTIRQD] = &policy_ksoftirqd,
	[SIRQ_POLICY_KICINSKI] = &policy_kicinski,
	[SIRQ_POLICY_DEFERRED] = &policy_deferred,
	[SIRQ_POLICY_RT] = &policy_rt,
	[SIRQ_POLICY_PUSHDOWN] = &policy_pushdown,
	[SIRQ_POLICY_PUSHDOWN_LOCKED] = &policy_pushdown_locked,
};

const char *
sirq_policy_name(enum sirq_policy_id id)
{
	if ((unsigned int)id >= SIRQ_POLICY_MAX)
		return NULL;
	return sirq_policies[id]->name;
}

int
sirq_policy_from_name(const char *name)
{
	unsigned int i;

	if (name == NULL)
		return -EINVAL;
	for (i = 0; i < SIRQ_POLICY_MAX; i++)
		if (strcmp(name, sirq_policies[i]->name) == 0)
			return (int)i;
	/* The name "deferred" had until issue 13, kept for configurations. */
	if (strcmp(name, "threaded") == 0)
		return SIRQ_POLICY_DEFERRED;
	return -EINVAL;
}
