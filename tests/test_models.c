/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The execution models beside the policies: rt (PREEMPT_RT before 6.18:
 * softirqs in the thread that enables bottom halves, the NIC's irq
 * thread, ktimers and ksoftirqd, all under the per-CPU BH lock) and
 * pushdown (Weisbecker; RT since 6.18: a thread per vector, safe vectors
 * without the BH lock, no restart or time limit). Fake clock; real
 * threads only where one must wait for the BH lock while another holds
 * it.
 */

#include <errno.h>
#include <string.h>

#include "harness.h"
#include "sirq_private.h"

/* The binding's side of the softirq threads: wakes and lock waits. */
struct threads {
	unsigned int wakes[SIRQ_MAX_VECTORS];
	unsigned int lock_waits;
	uintptr_t holder;		/* the holder named by the last wait */
};

static void
count_thread_wake(void *ctx, unsigned int thread)
{
	struct threads *t = ctx;

	__atomic_fetch_add(&t->wakes[thread], 1, __ATOMIC_RELAXED);
}

static void
count_lock_wait(void *ctx, uintptr_t holder)
{
	struct threads *t = ctx;

	__atomic_store_n(&t->holder, holder, __ATOMIC_RELAXED);
	__atomic_fetch_add(&t->lock_waits, 1, __ATOMIC_RELEASE);
}

static void
threads_attach(struct harness *h, struct threads *t)
{
	struct sirq_thread_ops ops = {
		.wake = count_thread_wake,
		.lock_wait = count_lock_wait,
		.ctx = t,
	};
	uint32_t want;

	memset(t, 0, sizeof(*t));
	cr_assert(eq(int, sirq_thread_ops_set(h->cpu, &ops), 0));
	want = sirq_threads_wanted(h->cpu);
	while (want != 0) {
		unsigned int th = (unsigned int)__builtin_ctz(want);

		want &= want - 1;
		cr_assert(eq(int, sirq_thread_attach(h->cpu, th), 0));
	}
}

/* Act as softirq thread @th until it sleeps; the number of calls. */
static unsigned int
thread_run_until_sleep(struct harness *h, unsigned int th, unsigned int max)
{
	unsigned int n = 0;

	while (n < max) {
		n++;
		if (sirq_thread_run(h->cpu, th) != SIRQ_WORKER_YIELD)
			break;
	}
	return n;
}

static void
nop_handler(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
}

static uint64_t
passes(const struct sirq_stats *st, enum sirq_ctx ctx)
{
	uint64_t n = 0;
	unsigned int e;

	for (e = 0; e < SIRQ_EXIT_MAX; e++)
		n += st->pass_exit[e][ctx];
	return n;
}

Test(models, names_round_trip)
{
	static const char *const names[] = { "rt", "pushdown",
					     "pushdown-locked" };
	static const enum sirq_policy_id ids[] = { SIRQ_POLICY_RT,
		SIRQ_POLICY_PUSHDOWN, SIRQ_POLICY_PUSHDOWN_LOCKED };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		cr_expect(eq(str, (char *)sirq_policy_name(ids[i]),
			     (char *)names[i]));
		cr_expect(eq(int, sirq_policy_from_name(names[i]), (int)ids[i]));
	}
}

/*
 * invoke_softirq() on PREEMPT_RT: a vector raised in hard interrupt
 * context is never run at its exit; ksoftirqd is woken.
 */
Test(models, rt_hardirq_exit_runs_nothing_and_wakes_ksoftirqd)
{
	struct harness h;
	struct probe *app;

	harness_init(&h, SIRQ_POLICY_RT);
	app = probe_register(&h, VEC_APP0);
	cr_assert(eq(int, sirq_raise_irqoff(h.cpu, VEC_APP0), 0));
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_expect(eq(u32, app->runs, 0));
	cr_expect(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_HANDOFF], 1));
	worker_run_until_sleep(&h, 10);
	cr_expect(eq(u32, app->runs, 1));
	cr_expect(eq(u64, stats(&h)->runs[VEC_APP0][SIRQ_CTX_WORKER], 1));
	harness_fini(&h);
}

/*
 * The NIC's forced-threaded handler raises NET_RX with bottom halves off;
 * its local_bh_enable() runs __do_softirq() on everything pending, in
 * the irq thread: the dispatcher's pass, not ksoftirqd's.
 */
Test(models, rt_net_rx_runs_in_the_irq_thread_with_all_pending)
{
	struct harness h;
	struct probe *rx, *app;

	harness_init(&h, SIRQ_POLICY_RT);
	rx = probe_register(&h, SIRQ_NET_RX);
	app = probe_register(&h, VEC_APP0);
	sirq_raise_irqoff(h.cpu, VEC_APP0);
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_expect(eq(u32, rx->runs, 1));
	cr_expect(eq(u32, app->runs, 1));
	cr_expect(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	cr_expect(eq(u32, h.wakes, 0));
	harness_fini(&h);
}

/*
 * The irq thread runs at SCHED_FIFO 50: a fair-class task that wants the
 * CPU does not end its pass (no need_resched() for it); the restart
 * limit does, and the rest goes to ksoftirqd. Mainline, in the hardirq's
 * exit, yields to the same task after one round.
 */
Test(models, rt_irq_thread_pass_ignores_a_fair_task_and_keeps_the_limits)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_RT);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	h.app_wants_cpu = true;
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);
	cr_expect(eq(u32, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	cr_expect(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 1));
	cr_expect(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_RESTART], 1));
	harness_fini(&h);

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	h.app_wants_cpu = true;
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);
	cr_expect(eq(u32, rx->runs, 1));
	cr_expect(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

/*
 * A pass that hit its limits leaves NET_RX pending for NAPI's repoll and
 * wakes ksoftirqd; the NIC's interrupt stays masked, so no irq thread
 * runs again: the next irq_exit() without a raise of its own leaves the
 * repoll to ksoftirqd. A new interrupt's raise runs the pass again.
 */
Test(models, rt_irq_thread_runs_only_what_its_interrupt_raised)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_RT);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_expect(eq(u32, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	cr_expect(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_RESTART], 1));

	/* A tick: nothing raised, NET_RX pending from the repoll. */
	cr_assert(ne(u32, sirq_pending(h.cpu) & SIRQ_BIT(SIRQ_NET_RX), 0));
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_expect(eq(u32, rx->runs, SIRQ_MAX_RESTART_DEFAULT),
		  "the repoll ran at irq exit");
	cr_expect(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_INLINE],
		     SIRQ_MAX_RESTART_DEFAULT));

	/* Another interrupt of the NIC: its irq thread runs a pass. */
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_expect(eq(u32, rx->runs, 2 * SIRQ_MAX_RESTART_DEFAULT));
	harness_fini(&h);
}

/* The irq thread's pass ends at MAX_SOFTIRQ_TIME, 2 ms, on exact time. */
Test(models, rt_irq_thread_pass_ends_at_2ms)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_RT);
	struct harness h;
	struct probe *rx;

	p.tick_hz = 0;
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = US(300);
	p.max_restart = 100;
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), 0));
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);
	/* Rounds at 0, 300, ..., 1800 us start; the one ending at 2.1 ms is the last. */
	cr_expect(eq(u32, rx->runs, 7));
	cr_expect(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	cr_expect(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_TIME], 1));
	harness_fini(&h);
}

/*
 * RT's __local_bh_enable_ip() has no ksoftirqd_running() test: a task's
 * outermost enable runs what is pending even with ksoftirqd runnable,
 * where the ksoftirqd policy (4.9 .. 6.4, non-RT) leaves it.
 */
Test(models, rt_bh_enable_runs_pending_in_the_task_with_ksoftirqd_runnable)
{
	enum sirq_policy_id pol[] = { SIRQ_POLICY_RT, SIRQ_POLICY_KSOFTIRQD };
	unsigned int expect_runs[] = { 1, 0 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct harness h;
		struct probe *app;

		harness_init(&h, pol[i]);
		app = probe_register(&h, VEC_APP0);
		sirq_worker_wakeup(h.cpu);
		sirq_bh_disable(h.cpu);
		sirq_raise(h.cpu, VEC_APP0);
		cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
		cr_expect(eq(u32, app->runs, expect_runs[i]),
			  "%s", sirq_policy_name(pol[i]));
		harness_fini(&h);
	}
}

/*
 * 6.13's ktimers/N: TIMER and HRTIMER are raised into their own thread,
 * which the raise wakes; the dispatcher's exit leaves them alone even
 * when the irq thread runs a pass for NET_RX.
 */
Test(models, rt_timer_runs_in_ktimers_never_in_the_irq_thread)
{
	struct harness h;
	struct threads t;
	struct probe *timer, *hrtimer, *rx;

	harness_init(&h, SIRQ_POLICY_RT);
	timer = probe_register(&h, SIRQ_TIMER);
	hrtimer = probe_register(&h, SIRQ_HRTIMER);
	rx = probe_register(&h, SIRQ_NET_RX);
	cr_expect(eq(u32, sirq_threads_wanted(h.cpu), SIRQ_BIT(SIRQ_TIMER)));
	cr_expect(eq(int, sirq_thread_of(h.cpu, SIRQ_HRTIMER), SIRQ_TIMER));
	cr_expect(eq(int, sirq_thread_of(h.cpu, SIRQ_NET_RX), -ENOENT));
	threads_attach(&h, &t);

	sirq_raise_irqoff(h.cpu, SIRQ_TIMER);
	sirq_raise_irqoff(h.cpu, SIRQ_HRTIMER);
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(u32, t.wakes[SIRQ_TIMER], 1));
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_expect(eq(u32, rx->runs, 1));
	cr_expect(eq(u32, timer->runs, 0));
	cr_expect(eq(u32, hrtimer->runs, 0));
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));

	thread_run_until_sleep(&h, SIRQ_TIMER, 10);
	cr_expect(eq(u32, timer->runs, 1));
	cr_expect(eq(u32, hrtimer->runs, 1));
	cr_expect(eq(u64, stats(&h)->runs[SIRQ_TIMER][SIRQ_CTX_WORKER], 1));
	cr_expect(eq(int, sirq_thread_state(h.cpu, SIRQ_TIMER), SIRQ_WORKER_IDLE));
	cr_expect(eq(u32, h.wakes, 0), "sirqd not involved");
	harness_fini(&h);
}

/* Weisbecker's pushdown: the raise wakes the vector's own thread. */
Test(models, pushdown_raise_wakes_the_vectors_thread_only)
{
	struct harness h;
	struct threads t;
	struct probe *rx, *timer;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	rx = probe_register(&h, SIRQ_NET_RX);
	timer = probe_register(&h, SIRQ_TIMER);
	cr_expect(eq(u32, sirq_threads_wanted(h.cpu),
		     SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(SIRQ_TASKLET) |
		     SIRQ_BIT(SIRQ_TIMER) | SIRQ_BIT(SIRQ_NET_RX)));
	threads_attach(&h, &t);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(u32, t.wakes[SIRQ_NET_RX], 1));
	cr_expect(eq(u32, t.wakes[SIRQ_TIMER], 0));
	cr_expect(eq(u32, h.kicks, 0));
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	cr_expect(eq(u32, rx->runs, 0));
	thread_run_until_sleep(&h, SIRQ_NET_RX, 10);
	cr_expect(eq(u32, rx->runs, 1));
	cr_expect(eq(u32, timer->runs, 0));
	/* A second raise while it sleeps wakes it again, once. */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(u32, t.wakes[SIRQ_NET_RX], 2));
	harness_fini(&h);
}

/*
 * No 2 ms / 10-restart heuristic under the pushdown: a vector that
 * raises itself forever is run one round per call, and its thread is
 * asked back each time; no pass ends on a limit and nothing is handed
 * to ksoftirqd. How long it runs is the scheduler's business.
 */
Test(models, pushdown_has_no_restart_or_time_limit)
{
	struct harness h;
	struct threads t;
	struct probe *rx;
	unsigned int i;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = MS(1);
	threads_attach(&h, &t);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	for (i = 0; i < 50; i++)
		cr_assert(eq(int, sirq_thread_run(h.cpu, SIRQ_NET_RX),
			     SIRQ_WORKER_YIELD));
	cr_expect(eq(u32, rx->runs, 50));
	cr_expect(eq(u64, passes(stats(&h), SIRQ_CTX_WORKER), 0));
	cr_expect(eq(u64, passes(stats(&h), SIRQ_CTX_INLINE), 0));
	cr_expect(eq(u32, h.wakes, 0));
	rx->reraise = 0;
	thread_run_until_sleep(&h, SIRQ_NET_RX, 10);
	cr_expect(eq(int, sirq_thread_state(h.cpu, SIRQ_NET_RX),
		     SIRQ_WORKER_IDLE));
	harness_fini(&h);
}

/* A thread that runs one softirq thread's round, then stops. */
struct runner {
	struct harness *h;
	unsigned int thread;
	pthread_t tid;
	unsigned int done;
	enum sirq_worker_status st;
};

static void *
runner_main(void *arg)
{
	struct runner *r = arg;

	r->st = sirq_thread_run(r->h->cpu, r->thread);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
runner_start(struct runner *r, struct harness *h, unsigned int thread)
{
	memset(r, 0, sizeof(*r));
	r->h = h;
	r->thread = thread;
	cr_assert(eq(int, pthread_create(&r->tid, NULL, runner_main, r), 0));
}

/*
 * A vector that moved to a lock of its own (local_lock_nested_bh())
 * runs in its thread while another task holds the BH lock.
 */
Test(models, pushdown_safe_vector_runs_while_the_bh_lock_is_held)
{
	struct harness h;
	struct threads t;
	struct runner r;
	struct probe *safe;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	safe = probe_register_flags(&h, VEC_APP0, SIRQ_VEC_BH_SAFE);
	threads_attach(&h, &t);
	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, VEC_APP0);
	runner_start(&r, &h, VEC_APP0);
	cr_expect(wait_flag(&r.done, SEC(10)));
	cr_expect(eq(u32, safe->runs, 1));
	cr_expect(eq(u32, t.lock_waits, 0));
	cr_expect(eq(int, sirq_bh_enable(h.cpu), 0));
	pthread_join(r.tid, NULL);
	harness_fini(&h);
}

/*
 * An unsafe vector's thread takes the BH lock: it waits for the task
 * holding it, lends that task its priority (the rtmutex's inheritance:
 * ops.lock_wait names the holder), and runs once the lock is dropped.
 */
static void
unsafe_waits_for_the_lock(enum sirq_policy_id policy, unsigned int vec,
			  uint32_t flags)
{
	struct harness h;
	struct threads t;
	struct runner r;
	struct probe *p;

	harness_init(&h, policy);
	p = probe_register_flags(&h, vec, flags);
	threads_attach(&h, &t);
	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, vec);
	runner_start(&r, &h, (unsigned int)sirq_thread_of(h.cpu, vec));
	cr_assert(wait_flag(&t.lock_waits, SEC(10)));
	cr_expect(eq(u64, (uint64_t)__atomic_load_n(&t.holder, __ATOMIC_RELAXED),
		     (uint64_t)sirq_self_token()), "the holder is named");
	cr_expect(eq(u32, p->runs, 0));
	cr_expect(eq(u32, r.done, 0));
	cr_expect(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_expect(wait_flag(&r.done, SEC(10)));
	pthread_join(r.tid, NULL);
	cr_expect(eq(u32, p->runs, 1));
	cr_expect(eq(u32, t.lock_waits, 1));
	/* The thread's wait is the library's, not the application's. */
	stats(&h);
	cr_expect(eq(u64, h.st.thread_lock_wait.samples, 1));
	cr_expect(eq(u64, h.st.lock_wait.samples, 0));
	harness_fini(&h);
}

Test(models, pushdown_unsafe_vector_waits_and_lends_priority_to_the_holder)
{
	unsafe_waits_for_the_lock(SIRQ_POLICY_PUSHDOWN, VEC_APP1, 0);
}

static void
count_safe_run(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	__atomic_fetch_add((unsigned int *)arg, 1, __ATOMIC_RELEASE);
}

/* sirq_vector_alloc_flags(): a BH-safe vector of one's own in one call. */
Test(models, pushdown_runs_an_allocated_bh_safe_vector_beside_a_bh_section)
{
	unsigned int runs = 0;
	struct harness h;
	struct threads t;
	struct runner r;
	int vec;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	vec = sirq_vector_alloc_flags(h.cpu, count_safe_run, &runs, "safe",
				      SIRQ_VEC_BH_SAFE);
	cr_assert(vec >= (int)SIRQ_NR_KERNEL_VECTORS);
	threads_attach(&h, &t);
	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, (unsigned int)vec);
	runner_start(&r, &h, (unsigned int)sirq_thread_of(h.cpu,
							   (unsigned int)vec));
	cr_expect(wait_flag(&r.done, SEC(10)));
	cr_expect(eq(u32, __atomic_load_n(&runs, __ATOMIC_ACQUIRE), 1));
	cr_expect(eq(u32, t.lock_waits, 0));
	cr_expect(eq(int, sirq_bh_enable(h.cpu), 0));
	pthread_join(r.tid, NULL);
	harness_fini(&h);
}

/* The first step of the pushdown (and CONFIG_PREEMPT_RT_NEEDS_BH_LOCK):
 * every thread holds the BH lock, safe or not. */
Test(models, pushdown_locked_takes_the_bh_lock_for_safe_vectors_too)
{
	unsafe_waits_for_the_lock(SIRQ_POLICY_PUSHDOWN_LOCKED, VEC_APP1,
				  SIRQ_VEC_BH_SAFE);
}

/* ktimers, like every RT softirq context before 6.18, holds the BH lock. */
Test(models, rt_ktimers_waits_for_the_bh_lock)
{
	struct harness h;
	struct threads t;
	struct runner r;
	struct probe *timer;

	harness_init(&h, SIRQ_POLICY_RT);
	timer = probe_register(&h, SIRQ_TIMER);
	threads_attach(&h, &t);
	sirq_bh_disable(h.cpu);
	sirq_raise(h.cpu, SIRQ_TIMER);
	runner_start(&r, &h, SIRQ_TIMER);
	cr_assert(wait_flag(&t.lock_waits, SEC(10)));
	cr_expect(eq(u32, timer->runs, 0));
	cr_expect(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_expect(wait_flag(&r.done, SEC(10)));
	pthread_join(r.tid, NULL);
	cr_expect(eq(u32, timer->runs, 1));
	harness_fini(&h);
}

/*
 * Tasklets under the pushdown: the TASKLET thread runs without the BH
 * lock, a tasklet marked safe runs beside a bottom-half section, an
 * unmarked one gets the lock around its function.
 */
Test(models, pushdown_tasklets_take_the_bh_lock_per_tasklet)
{
	struct harness h;
	struct threads t;
	struct runner r;
	struct tprobe safe, unsafe;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	threads_attach(&h, &t);
	tprobe_init(&safe, &h, SIRQ_MAX_VECTORS + 1);
	tprobe_init(&unsafe, &h, SIRQ_MAX_VECTORS + 2);
	sirq_tasklet_set_bh_safe(&safe.t, true);
	/* Scheduled in this order, run in this order: unsafe comes second. */
	cr_assert(sirq_tasklet_schedule(h.cpu, &safe.t));
	cr_assert(sirq_tasklet_schedule(h.cpu, &unsafe.t));
	cr_expect(eq(u32, t.wakes[SIRQ_TASKLET], 1));
	sirq_bh_disable(h.cpu);
	runner_start(&r, &h, SIRQ_TASKLET);
	cr_assert(wait_flag(&t.lock_waits, SEC(10)));
	cr_expect(eq(u32, safe.runs, 1));
	cr_expect(eq(u32, unsafe.runs, 0));
	cr_expect(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_expect(wait_flag(&r.done, SEC(10)));
	pthread_join(r.tid, NULL);
	cr_expect(eq(u32, unsafe.runs, 1));
	harness_fini(&h);
}

/* Safe vectors mean nothing to the other models: ktimers locks anyway. */
Test(models, rt_ignores_the_safe_flag)
{
	unsafe_waits_for_the_lock(SIRQ_POLICY_RT, SIRQ_HRTIMER, SIRQ_VEC_BH_SAFE);
}

/*
 * A model change at run time: the pushdown's pending vector goes back to
 * the dispatcher under mainline (kicked, run at its next exit), and the
 * thread finds nothing of its own.
 */
Test(models, switching_to_a_policy_gives_pending_work_back_to_the_dispatcher)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct harness h;
	struct threads t;
	struct probe *rx;
	unsigned int kicks;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	rx = probe_register(&h, SIRQ_NET_RX);
	threads_attach(&h, &t);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	kicks = h.kicks;
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), 0));
	cr_expect(eq(u32, h.kicks, kicks + 1));
	cr_expect(eq(int, sirq_thread_run(h.cpu, SIRQ_NET_RX), SIRQ_WORKER_SLEEP));
	cr_expect(eq(u32, rx->runs, 0));
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_expect(eq(u32, rx->runs, 1));

	/* And back: the next raise is the thread's again. */
	p.policy = SIRQ_POLICY_PUSHDOWN;
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), 0));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	thread_run_until_sleep(&h, SIRQ_NET_RX, 10);
	cr_expect(eq(u32, rx->runs, 2));
	harness_fini(&h);
}

/* Without softirq threads the pushdown is deferred: all to sirqd. */
Test(models, pushdown_without_threads_defers_to_the_worker)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	worker_run_until_sleep(&h, 10);
	cr_expect(eq(u32, rx->runs, 1));
	harness_fini(&h);
}

/* A detached thread leaves its loop; its vectors go back to sirqd. */
Test(models, detached_thread_exits_and_its_vectors_go_to_the_worker)
{
	struct harness h;
	struct threads t;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	rx = probe_register(&h, SIRQ_NET_RX);
	threads_attach(&h, &t);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_thread_detach(h.cpu, SIRQ_NET_RX), 0));
	cr_expect(eq(int, sirq_thread_run(h.cpu, SIRQ_NET_RX), SIRQ_WORKER_EXIT));
	cr_expect(eq(int, sirq_thread_state(h.cpu, SIRQ_NET_RX), SIRQ_WORKER_PARKED));
	cr_expect(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	worker_run_until_sleep(&h, 10);
	cr_expect(eq(u32, rx->runs, 1));
	harness_fini(&h);
}

/* A thread with bottom halves off on itself cannot run: it says so. */
Test(models, thread_run_with_bottom_halves_off_is_busy)
{
	struct harness h;
	struct threads t;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	rx = probe_register(&h, SIRQ_NET_RX);
	threads_attach(&h, &t);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_bh_disable(h.cpu);
	cr_expect(eq(int, sirq_thread_run(h.cpu, SIRQ_NET_RX), SIRQ_WORKER_BUSY));
	cr_expect(eq(u32, rx->runs, 0));
	sirq_bh_enable(h.cpu);
	thread_run_until_sleep(&h, SIRQ_NET_RX, 10);
	cr_expect(eq(u32, rx->runs, 1));
	harness_fini(&h);
}

Test(models, misuse_is_refused)
{
	struct sirq_thread_ops no_wake = { 0 };
	struct harness h;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN);
	cr_expect(eq(int, sirq_thread_attach(h.cpu, SIRQ_NET_RX), -EINVAL),
		  "attach before the ops");
	cr_expect(eq(int, sirq_thread_ops_set(h.cpu, &no_wake), -EINVAL));
	cr_expect(eq(int, sirq_thread_ops_set(NULL, NULL), -EINVAL));
	cr_expect(eq(int, sirq_thread_attach(h.cpu, SIRQ_MAX_VECTORS), -EINVAL));
	cr_expect(eq(int, sirq_thread_run(h.cpu, SIRQ_MAX_VECTORS),
		     SIRQ_WORKER_EXIT));
	cr_expect(eq(int, sirq_thread_run(NULL, 0), SIRQ_WORKER_EXIT));
	cr_expect(eq(int, sirq_thread_of(h.cpu, SIRQ_MAX_VECTORS), -EINVAL));
	cr_expect(eq(u32, sirq_threads_wanted(NULL), 0));
	cr_expect(eq(int, sirq_register_flags(h.cpu, VEC_APP0, NULL, NULL,
					      NULL, 0), -EINVAL));
	cr_expect(eq(int, sirq_register_flags(h.cpu, VEC_APP0,
					      nop_handler, NULL,
					      NULL, 2), -EINVAL), "unknown flag");
	cr_expect(eq(int, sirq_thread_state(h.cpu, SIRQ_NET_RX), SIRQ_WORKER_PARKED));
	sirq_tasklet_set_bh_safe(NULL, true);
	harness_fini(&h);
}

/*
 * The timer interrupt fires while a softirq thread holds the BH lock
 * round after round (a flooded NET_RX thread): its round looks at the
 * sources first, as ksoftirqd's pass does, so TIMER is raised and its
 * own thread woken. Without the look nobody could see the timer due.
 */
static void
timer_fires(struct harness *h)
{
	sirq_raise_irqoff(h->cpu, SIRQ_TIMER);
	h->on_hardirq_look = NULL;
}

Test(models, pushdown_locked_round_looks_at_the_timer_interrupt_first)
{
	struct harness h;
	struct threads t;
	struct probe *rx, *timer;

	harness_init(&h, SIRQ_POLICY_PUSHDOWN_LOCKED);
	rx = probe_register(&h, SIRQ_NET_RX);
	timer = probe_register(&h, SIRQ_TIMER);
	threads_attach(&h, &t);
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), 0));
	cr_expect(eq(u32, t.wakes[SIRQ_NET_RX], 1));
	h.on_hardirq_look = timer_fires;
	thread_run_until_sleep(&h, SIRQ_NET_RX, 10);
	cr_expect(eq(u32, rx->runs, 1));
	cr_expect(ge(u32, h.hardirq_looks, 1));
	cr_expect(eq(u32, t.wakes[SIRQ_TIMER], 1), "the timer's thread was not woken");
	cr_expect(eq(u32, timer->runs, 0), "TIMER ran in NET_RX's thread");
	thread_run_until_sleep(&h, SIRQ_TIMER, 10);
	cr_expect(eq(u32, timer->runs, 1));
	harness_fini(&h);
}
