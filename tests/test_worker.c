/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The deferred worker (sirqd, the kernel's ksoftirqd): IDLE -> RUNNABLE
 * only through a wake-up (ops.wake_worker called once per transition),
 * one pass per sirq_worker_run(), back to IDLE when it finds nothing.
 * The test thread plays the worker thread.
 */

#include "harness.h"

Test(worker, with_a_wake_callback_starts_idle)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_IDLE));
	harness_fini(&h);
}

Test(worker, without_a_wake_callback_starts_parked_and_stays_parked)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KSOFTIRQD);
	struct harness h;

	harness_init_params(&h, &p, HARNESS_NO_WORKER);
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_PARKED));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_EXIT));

	sirq_worker_unpark(h.cpu);
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_PARKED));
	harness_fini(&h);
}

Test(worker, wakeup_of_an_idle_worker_calls_wake_worker_exactly_once)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	sirq_worker_wakeup(h.cpu);
	sirq_worker_wakeup(h.cpu);

	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	stats(&h);
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_EXPLICIT], 1));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_RESTART], 0));
	harness_fini(&h);
}

Test(worker, finding_nothing_pending_goes_idle_and_sleeps)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	sirq_worker_wakeup(h.cpu);

	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_IDLE));

	/* Idle again, so the next wake-up is a new transition. */
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(uint, h.wakes, 2));
	harness_fini(&h);
}

/*
 * run_ksoftirqd() runs one pass; the smpboot loop then sleeps at once when
 * ksoftirqd_should_run() finds nothing pending.
 */
Test(worker, runs_one_pass_in_worker_context_then_sleeps_if_it_drained)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = 2;
	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	cr_assert(eq(uint, rx->runs, 3));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_IDLE));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 3));
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 0));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_WORKER], 1));
	harness_fini(&h);
}

Test(worker, pass_is_bounded_by_the_restart_limit_like_an_inline_pass)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	cr_assert(eq(uint, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_WORKER], 1));
	/* Already runnable: the worker is not woken by its own pass. */
	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_RESTART], 0));
	harness_fini(&h);
}

/*
 * A stopping CPU's worker begins no pass, as a CPU going down parks its
 * ksoftirqd: the work stays pending for the stop's drain or the next
 * launch. Running again, the next call makes the whole pass.
 */
Test(worker, a_stopping_cpus_worker_begins_no_pass)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	sirq_cpu_set_stopping(h.cpu, true);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_STOP][SIRQ_CTX_WORKER], 0));

	sirq_cpu_set_stopping(h.cpu, false);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	cr_assert(eq(uint, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	harness_fini(&h);
}

Test(worker, run_without_a_wakeup_still_does_pending_work)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	/* A spurious wake-up of the thread: IDLE, but work is pending. */
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 1));
	cr_assert(eq(uint, h.wakes, 0));
	harness_fini(&h);
}

static unsigned int raises_in_hook;
static const struct probe *idle_probe;
static unsigned int reads_after_last_run;

/*
 * After the pass's last handler (the probe's second run) the worker reads
 * the clock twice: the handler's end, then going idle with a window open.
 * The raise lands in the second: between the look at pending and the sleep.
 */
static void
raise_net_rx_while_going_idle(struct harness *h)
{
	if (idle_probe->runs < 2 || ++reads_after_last_run < 2) {
		h->on_next_clock_read = raise_net_rx_while_going_idle;
		return;
	}
	raises_in_hook++;
	sirq_raise(h->cpu, SIRQ_NET_RX);
}

Test(worker, raise_landing_while_the_worker_goes_idle_keeps_it_runnable)
{
	enum sirq_worker_status st;
	struct harness h;
	struct probe *rx;

	/* A kicinski window is open, so going idle reads the clock. */
	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = 1;
	sirq_set_need_resched(h.cpu, true);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);			/* defer window until T0 + 2 ms */
	sirq_set_need_resched(h.cpu, false);

	/*
	 * The worker's pass drains and it goes idle; a raise from another
	 * thread lands between its look at pending and its sleep.
	 */
	idle_probe = rx;
	h.on_next_clock_read = raise_net_rx_while_going_idle;
	st = sirq_worker_run(h.cpu);
	if (raises_in_hook == 0)
		cr_skip("going idle no longer reads the clock: no hook point");

	cr_assert(eq(int, st, SIRQ_WORKER_YIELD));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	/* Runnable again without a wake-up from the raise: a recheck. */
	cr_assert(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_RECHECK], 1));
	cr_assert(eq(uint, worker_run_until_sleep(&h, 10), 1));
	cr_assert(eq(uint, rx->runs, 3));
	/* Two passes: the hand-off's and the recheck's, neither continued. */
	cr_assert(eq(u64, stats(&h)->worker_continuations, 0));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_HANDOFF], 0));
	harness_fini(&h);
}

/* The worker's passes, and what the counters say started them. */
static uint64_t
worker_passes(const struct sirq_stats *st)
{
	uint64_t n = 0;
	unsigned int e;

	for (e = 0; e < SIRQ_EXIT_MAX; e++)
		n += st->pass_exit[e][SIRQ_CTX_WORKER];
	return n;
}

static uint64_t
passes_explained(const struct sirq_stats *st)
{
	uint64_t n = 0;
	unsigned int w;

	for (w = 0; w < SIRQ_WAKE_MAX; w++)
		n += st->wakeups[w];
	return n - st->worker_wakeups_unused + st->worker_continuations;
}

/*
 * Every pass of the worker is the first after a wake-up (by reason) or a
 * continuation: run_ksoftirqd() again because work was still pending
 * after the last. A wake-up that finds the work gone starts none. The
 * sum holds at every step; mainline runs the work inline meanwhile,
 * whatever the worker's state (d15121be7485).
 */
Test(worker, every_pass_is_the_first_after_a_wakeup_or_a_continuation)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	clock_set(&h, T0);

	/* An inline pass hits the restart limit: one wake-up. */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_RESTART], 1));
	cr_assert(eq(u64, worker_passes(&h.st), 0));
	cr_assert(eq(u64, passes_explained(&h.st), 1), "woken, no pass yet");

	/* Three passes, each leaving work: one woken, two continued. */
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	stats(&h);
	cr_assert(eq(u64, worker_passes(&h.st), 3));
	cr_assert(eq(u64, h.st.worker_continuations, 2));
	cr_assert(eq(u64, passes_explained(&h.st), worker_passes(&h.st)));

	/* The dispatcher's interrupt between two passes runs the work. */
	rx->reraise = 0;
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_INLINE],
		     SIRQ_MAX_RESTART_DEFAULT + 1));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	/* ... so the worker finds nothing and sleeps: no pass, no count. */
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	stats(&h);
	cr_assert(eq(u64, worker_passes(&h.st), 3));
	cr_assert(eq(u64, h.st.worker_wakeups_unused, 0));
	cr_assert(eq(u64, passes_explained(&h.st), 3));

	/* Woken explicitly, the work already gone: an unused wake-up. */
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	stats(&h);
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_EXPLICIT], 1));
	cr_assert(eq(u64, h.st.worker_wakeups_unused, 1));
	cr_assert(eq(u64, passes_explained(&h.st), 3));

	/* Run while idle with work pending (its thread's first call). */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	stats(&h);
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_RUN], 1));
	cr_assert(eq(u64, worker_passes(&h.st), 4));
	cr_assert(eq(u64, h.st.worker_continuations, 2));
	cr_assert(eq(u64, passes_explained(&h.st), 4));
	cr_assert(eq(uint, h.wakes, 2), "RESTART and EXPLICIT called wake_worker");
	harness_fini(&h);
}

struct lock_holder {
	struct sirq_cpu *cpu;
	unsigned int held;
	unsigned int release;
	int enable_ret;
};

static void *
hold_bh_disabled(void *arg)
{
	struct lock_holder *lh = arg;

	sirq_bh_disable(lh->cpu);
	__atomic_store_n(&lh->held, 1, __ATOMIC_RELEASE);
	wait_flag(&lh->release, SEC(10));
	lh->enable_ret = sirq_bh_enable(lh->cpu);
	return NULL;
}

Test(worker, run_returns_busy_while_another_thread_holds_the_exec_lock)
{
	struct lock_holder lh = { 0 };
	struct harness h;
	struct probe *rx;
	pthread_t thr;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	lh.cpu = h.cpu;
	cr_assert(eq(int, pthread_create(&thr, NULL, hold_bh_disabled, &lh), 0));
	cr_assert(wait_flag(&lh.held, SEC(10)));

	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_BUSY));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));

	__atomic_store_n(&lh.release, 1, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(thr, NULL), 0));
	cr_assert(eq(int, lh.enable_ret, 0));

	/* The enable deferred to the runnable worker, which now runs it. */
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

Test(worker, parked_worker_exits_and_is_never_woken)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	sirq_worker_park(h.cpu);
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_PARKED));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_EXIT));

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);			/* restart limit: work left */
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(uint, h.wakes, 0));
	stats(&h);
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_RESTART], 0));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_EXPLICIT], 0));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_EXIT));
	cr_assert(eq(uint, rx->runs, 10));
	harness_fini(&h);
}

Test(worker, parking_a_runnable_worker_makes_its_next_run_exit)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);

	sirq_worker_park(h.cpu);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_EXIT));
	cr_assert(eq(uint, rx->runs, 0));

	/* ... and the dispatcher stops waiting for it. */
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

Test(worker, unparked_worker_is_idle_and_can_be_woken_again)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	sirq_worker_park(h.cpu);
	sirq_worker_unpark(h.cpu);
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_IDLE));

	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	harness_fini(&h);
}

/*
 * raise_softirq_irqoff(): "if (!in_interrupt() && should_wake_ksoftirqd())
 * wakeup_softirqd();". A raise in process context on the CPU wakes the
 * worker and kicks nobody; under ksoftirqd the next irq_exit() then
 * leaves the work to it.
 */
Test(worker, raise_softirq_in_process_context_wakes_ksoftirqd)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	h.in_task = true;
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(uint, h.kicks, 0));
	cr_assert(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_RAISE], 1));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, worker_run_until_sleep(&h, 10), 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 1));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

/*
 * in_interrupt(): a raise in the hardirq (or a pass, or with bottom halves
 * off) wakes nobody; the irq_exit() that follows runs it.
 */
Test(worker, raise_softirq_in_interrupt_context_leaves_it_to_irq_exit)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	h.in_task = true;	/* the thread's, but it holds the lock */
	cr_assert(sirq_irq_enter(h.cpu));
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(uint, h.wakes, 0));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

/* Another CPU's thread cannot raise here; it interrupts (the kick, an IPI). */
Test(worker, raise_from_another_cpu_kicks_and_wakes_nobody)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	probe_register(&h, SIRQ_NET_RX);
	h.in_task = false;
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(uint, h.kicks, 1));
	cr_assert(eq(uint, h.wakes, 0));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	harness_fini(&h);
}
