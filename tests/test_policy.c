/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The overload policies: who runs pending work while the worker is
 * runnable, and for how long the kicinski windows respect it.
 *
 * Each test spells out the fake clock: T0 is where it starts, windows are
 * checked 1 ns before and exactly at their end.
 */

#include <errno.h>

#include "harness.h"

/*
 * A pass at @t that yields to need_resched while NET_RX, which raises
 * itself forever, is still pending: the worker is woken and, under
 * kicinski, a defer window opens at @t. need_resched is cleared again.
 */
static struct probe *
need_resched_deferral_at(struct harness *h, uint64_t t)
{
	struct probe *rx = probe_register(h, SIRQ_NET_RX);

	rx->reraise = PROBE_FOREVER;
	clock_set(h, t);
	sirq_set_need_resched(h->cpu, true);
	cr_assert(eq(int, sirq_raise(h->cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(int, sirq_irq_exit(h->cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(h)->pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(int, sirq_worker_state(h->cpu), SIRQ_WORKER_RUNNABLE));
	sirq_set_need_resched(h->cpu, false);
	return rx;
}

/* As above, but the pass at @t ends on the restart limit. */
static struct probe *
restart_exhaustion_at(struct harness *h, uint64_t t)
{
	struct probe *rx = probe_register(h, SIRQ_NET_RX);

	rx->reraise = PROBE_FOREVER;
	clock_set(h, t);
	cr_assert(eq(int, sirq_raise(h->cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(int, sirq_irq_exit(h->cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	cr_assert(eq(u64, stats(h)->pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(int, sirq_worker_state(h->cpu), SIRQ_WORKER_RUNNABLE));
	return rx;
}

/* A TASKLET tasklet that schedules itself forever, run with need_resched set. */
static void
self_rescheduling_tasklet_with_need_resched(struct harness *h,
					    struct tprobe *tp)
{
	tprobe_init(tp, h, 100);
	tp->reschedule = PROBE_FOREVER;
	sirq_set_need_resched(h->cpu, true);
	cr_assert(sirq_tasklet_schedule(h->cpu, &tp->t));
	cr_assert(eq(int, sirq_irq_exit(h->cpu), SIRQ_IRQ_EXIT_RAN));
}

/* Before patch 3: need_resched yields even to expedited-only work. */
static void
need_resched_ends_the_loop_with_only_expedited_pending(enum sirq_policy_id policy)
{
	struct harness h;
	struct tprobe tp;

	harness_init(&h, policy);
	self_rescheduling_tasklet_with_need_resched(&h, &tp);

	cr_assert(eq(uint, tp.runs, 1));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

/* mainline: Linux >= 6.5 */

Test(mainline, runs_pending_work_inline_while_the_worker_is_runnable)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = restart_exhaustion_at(&h, T0);

	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 20));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 20));
	cr_assert(eq(u64, h.st.deferred_to_worker, 0));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	harness_fini(&h);
}

Test(mainline, need_resched_ends_the_loop_with_only_expedited_work_pending)
{
	need_resched_ends_the_loop_with_only_expedited_pending(SIRQ_POLICY_MAINLINE);
}

/* ksoftirqd: Linux 4.9 .. 6.4 */

Test(ksoftirqd, runs_pending_work_inline_while_the_worker_is_idle)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

Test(ksoftirqd, leaves_everything_to_a_runnable_worker)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(uint, h.wakes, 1));

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));

	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(u64, stats(&h)->deferred_to_worker, 1));
	cr_assert(eq(uint, h.wakes, 1));	/* already runnable: no new wake */
	harness_fini(&h);
}

Test(ksoftirqd, pending_expedited_vector_runs_the_whole_loop_inline)
{
	struct harness h;
	struct probe *rx;
	struct tprobe tp;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	tprobe_init(&tp, &h, 100);
	sirq_worker_wakeup(h.cpu);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_tasklet_schedule(h.cpu, &tp.t);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	/* The kernel does not split the mask: NET_RX runs here too. */
	cr_assert(eq(uint, tp.runs, 1));
	cr_assert(eq(uint, rx->runs, 1));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.deferred_to_worker, 0));
	harness_fini(&h);
}

Test(ksoftirqd, never_takes_the_work_back_however_long_the_worker_waits)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = restart_exhaustion_at(&h, T0);

	clock_set(&h, T0 + SEC(1));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, rx->runs, 10));
	stats(&h);
	cr_assert(eq(u64, h.st.window_overrides, 0));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_OVERLOAD], 0));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_DEFER], 0));
	harness_fini(&h);
}

Test(ksoftirqd, configured_expedited_mask_decides_what_runs_inline)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KSOFTIRQD);
	struct harness h;
	struct probe *rx;
	struct tprobe tp;

	p.expedited_mask = SIRQ_BIT(SIRQ_NET_RX);
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	tprobe_init(&tp, &h, 100);
	sirq_worker_wakeup(h.cpu);

	/* TASKLET is no longer expedited ... */
	sirq_tasklet_schedule(h.cpu, &tp.t);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, tp.runs, 0));

	/* ... NET_RX is. */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(uint, tp.runs, 1));
	harness_fini(&h);
}

Test(ksoftirqd, need_resched_ends_the_loop_with_only_expedited_work_pending)
{
	need_resched_ends_the_loop_with_only_expedited_pending(SIRQ_POLICY_KSOFTIRQD);
}

/* kicinski: the Dec 2022 patches */

Test(kicinski, need_resched_deferral_respects_the_worker_for_2ms)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = need_resched_deferral_at(&h, T0);
	stats(&h);
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_DEFER], 1));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_OVERLOAD], 0));

	clock_set(&h, T0 + MS(2) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->window_overrides, 0));

	clock_set(&h, T0 + MS(2));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1 + SIRQ_MAX_RESTART_DEFAULT));
	stats(&h);
	cr_assert(eq(u64, h.st.window_overrides, 1));
	cr_assert(eq(u64, h.st.deferred_to_worker, 1));
	harness_fini(&h);
}

Test(kicinski, restart_exhaustion_respects_the_worker_for_100ms)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = restart_exhaustion_at(&h, T0);
	stats(&h);
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_OVERLOAD], 1));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_DEFER], 0));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_RESTART], 1));

	clock_set(&h, T0 + MS(100) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, rx->runs, 10));

	clock_set(&h, T0 + MS(100));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 20));
	cr_assert(eq(u64, stats(&h)->window_overrides, 1));
	harness_fini(&h);
}

/* need_resched() comes up during the last of the ten restarts. */
static void
want_cpu_on_tenth_run(struct probe *p)
{
	if (p->runs == SIRQ_MAX_RESTART_DEFAULT)
		p->h->app_wants_cpu = true;
}

static enum sirq_exit
exit_of_a_pass_whose_last_restart_sees_need_resched(enum sirq_policy_id pol,
						    struct harness *h)
{
	struct probe *rx;
	enum sirq_exit e;

	harness_init(h, pol);
	rx = probe_register(h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->hook = want_cpu_on_tenth_run;
	sirq_raise(h->cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h->cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	stats(h);
	for (e = 0; e < SIRQ_EXIT_MAX; e++)
		if (h->st.pass_exit[e][SIRQ_CTX_INLINE] != 0)
			return e;
	return SIRQ_EXIT_MAX;
}

Test(kicinski, last_restart_with_need_resched_is_an_overload_not_a_deferral)
{
	struct harness h;

	/* time_is_before_eq_jiffies(end) || !--max_restart comes first */
	cr_assert(eq(int, exit_of_a_pass_whose_last_restart_sees_need_resched(
			     SIRQ_POLICY_KICINSKI, &h), SIRQ_EXIT_RESTART));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_OVERLOAD], 1));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_DEFER], 0));
	harness_fini(&h);
}

Test(ksoftirqd, last_restart_with_need_resched_ends_on_need_resched)
{
	struct harness h;

	/* time_before(jiffies, end) && !need_resched() && --max_restart */
	cr_assert(eq(int, exit_of_a_pass_whose_last_restart_sees_need_resched(
			     SIRQ_POLICY_KSOFTIRQD, &h), SIRQ_EXIT_NEED_RESCHED));
	harness_fini(&h);
}

Test(mainline, last_restart_with_need_resched_ends_on_need_resched)
{
	struct harness h;

	cr_assert(eq(int, exit_of_a_pass_whose_last_restart_sees_need_resched(
			     SIRQ_POLICY_MAINLINE, &h), SIRQ_EXIT_NEED_RESCHED));
	harness_fini(&h);
}

Test(kicinski, time_exhaustion_opens_an_overload_window_from_the_pass_end)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = MS(2);

	/* The pass starts at T0 and ends at T0 + 2 ms on the time limit. */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_OVERLOAD], 1));

	clock_set(&h, T0 + MS(102) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, rx->runs, 1));

	clock_set(&h, T0 + MS(102));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 2));
	harness_fini(&h);
}

Test(kicinski, configured_window_lengths_are_used)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KICINSKI);
	struct harness h;

	p.defer_window_ns = MS(5);
	p.overload_window_ns = MS(30);
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	need_resched_deferral_at(&h, T0);

	clock_set(&h, T0 + MS(5) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	clock_set(&h, T0 + MS(5));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	/* That pass hit the restart limit at T0 + 5 ms: a 30 ms window. */
	cr_assert(eq(u64, stats(&h)->windows_opened[SIRQ_WINDOW_OVERLOAD], 1));
	clock_set(&h, T0 + MS(35) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	clock_set(&h, T0 + MS(35));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	harness_fini(&h);
}

Test(kicinski, window_override_is_counted_once_per_window)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = need_resched_deferral_at(&h, T0);
	rx->reraise = 0;	/* the pass that takes the work back drains */

	clock_set(&h, T0 + MS(2));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(u64, stats(&h)->window_overrides, 1));

	/* The worker is still runnable, but no window is open any more. */
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	clock_advance(&h, US(10));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(u64, stats(&h)->window_overrides, 1));
	harness_fini(&h);
}

Test(kicinski, runnable_worker_without_a_window_is_not_respected)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

Test(kicinski, expedited_vector_runs_inline_inside_an_open_window)
{
	struct harness h;
	struct tprobe tp;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	need_resched_deferral_at(&h, T0);
	tprobe_init(&tp, &h, 100);

	clock_set(&h, T0 + MS(1));
	sirq_tasklet_schedule(h.cpu, &tp.t);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, tp.runs, 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(kicinski, need_resched_does_not_end_the_loop_with_only_expedited_work_pending)
{
	struct harness h;
	struct tprobe tp;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	self_rescheduling_tasklet_with_need_resched(&h, &tp);

	cr_assert(eq(uint, tp.runs, SIRQ_MAX_RESTART_DEFAULT));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 0));
	harness_fini(&h);
}

Test(kicinski, need_resched_ends_the_loop_when_other_work_is_pending_too)
{
	struct harness h;
	struct probe *rx;
	struct tprobe tp;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	sirq_raise(h.cpu, SIRQ_NET_RX);
	self_rescheduling_tasklet_with_need_resched(&h, &tp);

	cr_assert(eq(uint, tp.runs, 1));
	cr_assert(eq(uint, rx->runs, 1));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_DEFER], 1));
	harness_fini(&h);
}

Test(kicinski, worker_draining_before_the_deadline_closes_the_window)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = need_resched_deferral_at(&h, T0);	/* window until T0 + 2 ms */
	rx->reraise = 0;

	clock_set(&h, T0 + MS(2) - 1);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	cr_assert(eq(uint, rx->runs, 2));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_IDLE));
	cr_assert(eq(u64, stats(&h)->windows_closed_idle, 1));
	harness_fini(&h);
}

Test(kicinski, worker_woken_explicitly_after_idle_is_not_given_the_stale_window)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = need_resched_deferral_at(&h, T0);	/* window until T0 + 2 ms */
	rx->reraise = 0;
	clock_set(&h, T0 + US(500));
	worker_run_until_sleep(&h, 10);
	cr_assert(eq(u64, stats(&h)->windows_closed_idle, 1));

	/* Woken for something else while the old deadline is still ahead. */
	clock_set(&h, T0 + MS(1));
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	cr_assert(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_EXPLICIT], 1));
	sirq_raise(h.cpu, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 3));
	stats(&h);
	cr_assert(eq(u64, h.st.stale_windows_ignored, 1));
	cr_assert(eq(u64, h.st.window_overrides, 0));
	harness_fini(&h);
}

Test(kicinski, worker_draining_at_the_deadline_closes_no_window_early)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = need_resched_deferral_at(&h, T0);	/* window until T0 + 2 ms */
	rx->reraise = 0;

	clock_set(&h, T0 + MS(2));
	worker_run_until_sleep(&h, 10);
	cr_assert(eq(u64, stats(&h)->windows_closed_idle, 0));

	sirq_worker_wakeup(h.cpu);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(u64, stats(&h)->stale_windows_ignored, 0));
	harness_fini(&h);
}

Test(kicinski, worker_runs_deferred_work_in_worker_context)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = need_resched_deferral_at(&h, T0);
	rx->reraise = 0;

	clock_set(&h, T0 + MS(1));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, worker_run_until_sleep(&h, 10), 1));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_WORKER], 1));
	harness_fini(&h);
}

/*
 * __do_softirq() in ksoftirqd: need_resched() is TIF_NEED_RESCHED of
 * ksoftirqd itself, set by the scheduler to switch it out. An application
 * that would like the CPU does not end the worker's pass; only the
 * restart limit does.
 */
Test(ksoftirqd, need_resched_in_ksoftirqd_is_the_schedulers_not_the_applications)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	sirq_set_need_resched(h.cpu, true);
	h.app_wants_cpu = true;
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	cr_assert(eq(uint, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_WORKER], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_WORKER], 0));
	harness_fini(&h);
}

/*
 * The scheduler marks ksoftirqd (patch 2's need_resched() in its
 * __do_softirq()): the pass ends after the first round, and under the
 * patch the defer window (2 ms) opens from the worker's pass too.
 */
Test(kicinski, the_schedulers_mark_on_ksoftirqd_ends_its_pass_and_opens_the_defer_window)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	clock_set(&h, T0);
	h.sched_marks_worker = true;
	sirq_worker_wakeup(h.cpu);
	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_YIELD));
	cr_assert(eq(uint, rx->runs, 1));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_WORKER], 1));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_DEFER], 1));
	/* Inside the window the dispatcher leaves the work to the worker. */
	clock_set(&h, T0 + MS(2) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	harness_fini(&h);
}

Test(kicinski, set_params_closes_an_open_window)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KICINSKI);
	struct harness h;
	struct probe *rx;

	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = need_resched_deferral_at(&h, T0);
	rx->reraise = 0;

	clock_set(&h, T0 + MS(1));
	cr_assert(eq(int, sirq_cpu_set_params(h.cpu, &p), 0));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 2));
	harness_fini(&h);
}

/* deferred: every vector in the worker */

Test(deferred, irq_exit_hands_pending_work_to_an_idle_worker)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_DEFERRED);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));

	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	stats(&h);
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_HANDOFF], 1));
	cr_assert(eq(u64, h.st.deferred_to_worker, 1));
	harness_fini(&h);
}

Test(deferred, runnable_worker_is_not_woken_again)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_DEFERRED);
	probe_register(&h, SIRQ_NET_RX);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(u64, stats(&h)->deferred_to_worker, 2));
	harness_fini(&h);
}

Test(deferred, every_handler_runs_in_the_worker_even_expedited_ones)
{
	struct harness h;
	struct probe *rx;
	struct tprobe tp;

	harness_init(&h, SIRQ_POLICY_DEFERRED);
	rx = probe_register(&h, SIRQ_NET_RX);
	tprobe_init(&tp, &h, 100);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_tasklet_schedule(h.cpu, &tp.t);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, tp.runs, 0));

	cr_assert(eq(uint, worker_run_until_sleep(&h, 10), 1));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(uint, tp.runs, 1));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 1));
	cr_assert(eq(u64, h.st.runs[SIRQ_TASKLET][SIRQ_CTX_WORKER], 1));
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 0));
	cr_assert(eq(u64, h.st.runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 0));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_WORKER], 1));
	harness_fini(&h);
}

Test(deferred, without_a_worker_runs_inline)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_DEFERRED);
	struct harness h;
	struct probe *rx;

	harness_init_params(&h, &p, HARNESS_NO_WORKER);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

/* No worker (ops.wake_worker NULL): nothing to defer to. */

Test(no_worker, every_policy_runs_leftovers_inline_on_the_next_irq_exit)
{
	enum sirq_policy_id pol;

	for (pol = 0; pol < SIRQ_POLICY_MAX; pol++) {
		struct sirq_params p = harness_params(pol);
		struct harness h;
		struct probe *rx;

		harness_init_params(&h, &p, HARNESS_NO_WORKER);
		rx = probe_register(&h, SIRQ_NET_RX);
		rx->reraise = PROBE_FOREVER;

		sirq_raise(h.cpu, SIRQ_NET_RX);
		cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN),
			  "policy %s", sirq_policy_name(pol));
		cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN),
			  "policy %s", sirq_policy_name(pol));
		cr_assert(eq(uint, rx->runs, 20), "policy %s",
			  sirq_policy_name(pol));
		cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_PARKED));
		cr_assert(eq(u64, stats(&h)->wakeups[SIRQ_WAKE_RESTART], 0));
		harness_fini(&h);
	}
}

/* No vector escapes the policy: TIMER waits for a runnable worker too */

Test(no_escape, timer_is_left_to_a_runnable_worker_under_ksoftirqd)
{
	struct harness h;
	struct probe *timer;

	harness_init(&h, SIRQ_POLICY_KSOFTIRQD);
	timer = probe_register(&h, SIRQ_TIMER);
	sirq_worker_wakeup(h.cpu);

	sirq_raise(h.cpu, SIRQ_TIMER);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	cr_assert(eq(uint, timer->runs, 0));
	cr_assert(eq(uint, worker_run_until_sleep(&h, 10), 1));
	cr_assert(eq(uint, timer->runs, 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_TIMER][SIRQ_CTX_WORKER], 1));
	harness_fini(&h);
}

/* sirq_irq_enter(): the "hardirq" holds the execution lock */

Test(irq_enter, holds_the_lock_until_irq_exit_so_the_worker_waits)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_worker_wakeup(h.cpu);

	cr_assert(sirq_irq_enter(h.cpu));
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_BUSY));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	/* Released: the worker gets the lock, finds nothing, sleeps. */
	cr_assert(eq(int, sirq_worker_run(h.cpu), SIRQ_WORKER_SLEEP));
	harness_fini(&h);
}

Test(irq_enter, with_nothing_pending_irq_exit_only_releases_the_lock)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	cr_assert(sirq_irq_enter(h.cpu));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	sirq_bh_disable(h.cpu);		/* would wait forever if still held */
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	harness_fini(&h);
}

static void *
hold_bh_until_released(void *arg)
{
	struct sirq_cpu **cpu = arg;
	struct sirq_cpu *c = *cpu;

	sirq_bh_disable(c);
	__atomic_store_n(cpu, NULL, __ATOMIC_RELEASE);
	while (__atomic_load_n(cpu, __ATOMIC_ACQUIRE) == NULL)
		sched_yield();
	sirq_bh_enable(c);
	return NULL;
}

Test(irq_enter, fails_and_counts_lock_busy_while_another_thread_holds_it)
{
	struct harness h;
	struct sirq_cpu *handoff;
	pthread_t thr;

	harness_init(&h, SIRQ_POLICY_KICINSKI);
	handoff = h.cpu;
	cr_assert(eq(int, pthread_create(&thr, NULL, hold_bh_until_released,
					 &handoff), 0));
	while (__atomic_load_n(&handoff, __ATOMIC_ACQUIRE) != NULL)
		sched_yield();

	cr_assert(not(sirq_irq_enter(h.cpu)));
	cr_assert(eq(u64, stats(&h)->lock_busy, 1));

	__atomic_store_n(&handoff, h.cpu, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(thr, NULL), 0));
	cr_assert(sirq_irq_enter(h.cpu));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	harness_fini(&h);
}

Test(irq_enter, with_bottom_halves_off_on_this_thread_leaves_work_to_bh_enable)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	sirq_bh_disable(h.cpu);
	cr_assert(sirq_irq_enter(h.cpu));
	sirq_raise_irqoff(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_BH_DISABLED));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(int, sirq_bh_enable(h.cpu), 0));
	cr_assert(eq(uint, rx->runs, 1));
	harness_fini(&h);
}

/* tick_hz: jiffies rounding, msecs_to_jiffies() rounding up */

Test(tick, at_250hz_a_defer_window_opened_at_5ms_ends_at_8ms)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KICINSKI);
	struct harness h;

	p.tick_hz = 250;	/* 4 ms ticks: 5 ms reads as 4 ms, 2 ms as 4 ms */
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	need_resched_deferral_at(&h, T0 + MS(5));

	clock_set(&h, T0 + US(7900));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	clock_set(&h, T0 + MS(8) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	clock_set(&h, T0 + MS(8));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	harness_fini(&h);
}

Test(tick, with_exact_time_a_defer_window_opened_at_5ms_ends_at_7ms)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_KICINSKI);	/* tick_hz 0 */
	need_resched_deferral_at(&h, T0 + MS(5));

	clock_set(&h, T0 + MS(7) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	clock_set(&h, T0 + MS(7));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	harness_fini(&h);
}

Test(tick, at_250hz_max_time_lasts_until_the_tick_after_start_plus_2ms)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct harness h;
	struct probe *rx;

	p.tick_hz = 250;
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = US(2500);

	/*
	 * Start 5 ms (jiffies 4 ms), end 4 + 4 = 8 ms: run 1 ends at 7.5 ms
	 * (jiffies 4 ms, restart), run 2 at 10 ms (jiffies 8 ms, stop).
	 */
	clock_set(&h, T0 + MS(5));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 2));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(tick, with_exact_time_max_time_ends_the_pass_2ms_after_start)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = US(2500);

	clock_set(&h, T0 + MS(5));
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(tick, at_100hz_a_2ms_window_lasts_a_whole_10ms_tick)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_KICINSKI);
	struct harness h;

	p.tick_hz = 100;
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	need_resched_deferral_at(&h, T0 + MS(10));	/* on a tick */

	clock_set(&h, T0 + MS(20) - 1);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_DEFERRED));
	clock_set(&h, T0 + MS(20));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	harness_fini(&h);
}
