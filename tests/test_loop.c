/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The __do_softirq() loop: snapshot and clear pending, run the set bits
 * lowest first, look again, restart while now < start + max_time, nobody
 * needs the CPU and restarts are left (checked in that order).
 *
 * All on the mainline policy, which never defers, so that only the loop
 * decides; the fake clock stands still unless a handler does work.
 */

#include "harness.h"

Test(loop, irq_exit_with_nothing_pending_is_idle_and_runs_nothing)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	cr_assert(eq(uint, rx->runs, 0));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 0));
	harness_fini(&h);
}

Test(loop, raised_vector_runs_once_inline_and_the_pass_drains)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	cr_assert(eq(int, sirq_raise(h.cpu, SIRQ_NET_RX), 0));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u32, sirq_pending(h.cpu), 0));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(uint, h.wakes, 0));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_IDLE));
	harness_fini(&h);
}

Test(loop, pending_vectors_run_lowest_bit_first)
{
	struct harness h;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, VEC_APP2);
	probe_register(&h, SIRQ_NET_RX);
	probe_register(&h, SIRQ_SCHED);
	probe_register(&h, SIRQ_TIMER);

	/* Raised in an order that is neither ascending nor descending. */
	sirq_raise(h.cpu, SIRQ_SCHED);
	sirq_raise(h.cpu, VEC_APP2);
	sirq_raise(h.cpu, SIRQ_TIMER);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, h.nlog, 4));
	cr_assert(eq(uint, h.log[0], SIRQ_TIMER));
	cr_assert(eq(uint, h.log[1], SIRQ_NET_RX));
	cr_assert(eq(uint, h.log[2], SIRQ_SCHED));
	cr_assert(eq(uint, h.log[3], VEC_APP2));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(loop, vector_raised_by_a_handler_runs_in_the_next_restart_not_the_same_sweep)
{
	struct harness h;
	struct probe *tx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	probe_register(&h, SIRQ_TIMER);
	tx = probe_register(&h, SIRQ_NET_TX);
	probe_register(&h, SIRQ_NET_RX);
	probe_register(&h, SIRQ_BLOCK);

	/*
	 * Sweep 1 has the snapshot {NET_TX, BLOCK}; NET_TX raises TIMER
	 * (lower) and NET_RX (between the two): both wait for sweep 2,
	 * which again goes lowest first.
	 */
	tx->raise_once = SIRQ_BIT(SIRQ_TIMER) | SIRQ_BIT(SIRQ_NET_RX);
	sirq_raise(h.cpu, SIRQ_NET_TX);
	sirq_raise(h.cpu, SIRQ_BLOCK);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	cr_assert(eq(uint, h.nlog, 4));
	cr_assert(eq(uint, h.log[0], SIRQ_NET_TX));
	cr_assert(eq(uint, h.log[1], SIRQ_BLOCK));
	cr_assert(eq(uint, h.log[2], SIRQ_TIMER));
	cr_assert(eq(uint, h.log[3], SIRQ_NET_RX));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(loop, self_raising_handler_runs_max_restart_times_on_a_frozen_clock)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));

	cr_assert(eq(uint, rx->runs, SIRQ_MAX_RESTART_DEFAULT));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_NET_RX][SIRQ_CTX_INLINE], 10));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 0));
	/* The work left goes to the worker, woken once, with the reason. */
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_RESTART], 1));
	cr_assert(eq(int, sirq_worker_state(h.cpu), SIRQ_WORKER_RUNNABLE));
	harness_fini(&h);
}

Test(loop, handler_raising_itself_nine_times_drains_in_the_tenth_sweep)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = SIRQ_MAX_RESTART_DEFAULT - 1;

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 10));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 0));
	cr_assert(eq(uint, h.wakes, 0));
	harness_fini(&h);
}

Test(loop, max_restart_parameter_bounds_the_sweeps)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct harness h;
	struct probe *rx;

	p.max_restart = 3;
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 3));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(loop, handler_using_max_time_ends_the_pass_with_time_limit)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = SIRQ_MAX_TIME_NS_DEFAULT;	/* 2 ms */

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, clock_now(&h), T0 + MS(2)));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_TIME], 1));
	cr_assert(eq(uint, h.wakes, 1));
	harness_fini(&h);
}

Test(loop, pass_restarts_while_one_ns_of_max_time_is_left)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = MS(2) - 1;

	/* Run 1 ends at T0 + 2 ms - 1 ns: restart; run 2 ends past the end. */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 2));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(loop, max_time_parameter_bounds_the_pass)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct harness h;
	struct probe *rx;

	p.max_time_ns = US(500);
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = US(100);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 5));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(loop, need_resched_flag_ends_a_pass_that_has_work_left)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	sirq_set_need_resched(h.cpu, true);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 1));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_NEED_RESCHED], 1));
	cr_assert(eq(uint, h.wakes, 1));
	harness_fini(&h);
}

Test(loop, need_resched_callback_ends_a_pass_like_the_flag)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	h.app_wants_cpu = true;		/* ops.need_resched, flag clear */
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 1));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(loop, cleared_need_resched_flag_no_longer_ends_passes)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	sirq_set_need_resched(h.cpu, true);
	sirq_set_need_resched(h.cpu, false);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 10));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(loop, need_resched_does_not_end_a_pass_that_drained)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);

	sirq_set_need_resched(h.cpu, true);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 1));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 0));
	cr_assert(eq(uint, h.wakes, 0));
	harness_fini(&h);
}

Test(loop, time_limit_is_checked_before_need_resched)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = MS(2);

	sirq_set_need_resched(h.cpu, true);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 0));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_TIME], 1));
	harness_fini(&h);
}

Test(loop, need_resched_is_checked_before_the_restart_limit)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct harness h;
	struct probe *rx;

	p.max_restart = 1;	/* the first look would also end on restarts */
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	sirq_set_need_resched(h.cpu, true);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_NEED_RESCHED][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 0));
	harness_fini(&h);
}

Test(loop, time_limit_is_checked_before_the_restart_limit)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct harness h;
	struct probe *rx;

	p.max_restart = 1;
	harness_init_params(&h, &p, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = MS(2);

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_TIME][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 0));
	harness_fini(&h);
}

Test(loop, handler_time_is_accounted_per_vector_and_context)
{
	struct harness h;
	struct probe *tx, *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tx = probe_register(&h, SIRQ_NET_TX);
	rx = probe_register(&h, SIRQ_NET_RX);
	tx->work_ns = US(300);
	rx->work_ns = US(50);

	sirq_raise(h.cpu, SIRQ_NET_TX);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	stats(&h);
	cr_assert(eq(u64, h.st.time_ns[SIRQ_NET_TX][SIRQ_CTX_INLINE], US(300)));
	cr_assert(eq(u64, h.st.time_ns[SIRQ_NET_RX][SIRQ_CTX_INLINE], US(50)));
	cr_assert(eq(u64, h.st.time_ns[SIRQ_NET_RX][SIRQ_CTX_WORKER], 0));
	harness_fini(&h);
}

Test(loop, pass_that_ends_with_work_left_does_not_wake_a_runnable_worker_again)
{
	struct harness h;
	struct probe *rx;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 20));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 2));
	cr_assert(eq(uint, h.wakes, 1));
	cr_assert(eq(u64, h.st.wakeups[SIRQ_WAKE_RESTART], 1));
	harness_fini(&h);
}

/*
 * sirq_lcore_stop() on a pass that could last 1 s: the largest accepted
 * max_time_ns and max_restart, a handler that raises itself again, 1 ms
 * per run. The stop lands in the fifth run; the pass ends at that run's
 * boundary, not 995 runs later.
 */
static void
stop_in_fifth_run(struct probe *p)
{
	if (p->runs == 5)
		sirq_cpu_set_stopping(p->h->cpu, true);
}

/* 1000 runs would overflow the run log: keep it empty. */
static void
forget_run(struct probe *p)
{
	p->h->nlog = 0;
}

Test(loop, a_stop_ends_a_one_second_pass_at_the_next_vector_boundary)
{
	struct sirq_params prm = harness_params(SIRQ_POLICY_KICINSKI);
	const struct sirq_param_range *rt = sirq_param_range("max_time_ns");
	const struct sirq_param_range *rr = sirq_param_range("max_restart");
	struct harness h;
	struct probe *rx;

	prm.max_time_ns = rt->max;
	prm.max_restart = (unsigned int)rr->max;
	prm.tick_hz = 0;
	harness_init_params(&h, &prm, HARNESS_FAKE_CLOCK);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->reraise = PROBE_FOREVER;
	rx->work_ns = MS(1);
	rx->hook = stop_in_fifth_run;

	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, rx->runs, 5));
	cr_assert(eq(u64, clock_now(&h), T0 + MS(5)));
	stats(&h);
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_STOP][SIRQ_CTX_INLINE], 1));
	/* Not an overload: the work stays pending, nobody is woken. */
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(uint, h.wakes, 0));
	cr_assert(eq(u64, h.st.windows_opened[SIRQ_WINDOW_OVERLOAD], 0));
	cr_assert(eq(str, (char *)sirq_exit_name(SIRQ_EXIT_STOP), "stop"));

	/* Running again: the next pass is the full one, 1000 rounds. */
	rx->hook = forget_run;
	rx->work_ns = MS(1) - 1;
	sirq_cpu_set_stopping(h.cpu, false);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, rx->runs, 5 + 1000));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_RESTART][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

/* A stop set before the pass: it runs one handler and ends. */
Test(loop, a_pass_begun_while_stopping_runs_one_handler)
{
	struct harness h;
	struct probe *a, *b;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	a = probe_register(&h, SIRQ_TIMER);
	b = probe_register(&h, SIRQ_NET_RX);
	sirq_cpu_set_stopping(h.cpu, true);
	sirq_raise(h.cpu, SIRQ_TIMER);
	sirq_raise(h.cpu, SIRQ_NET_RX);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, a->runs, 1));
	cr_assert(eq(uint, b->runs, 0));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_NET_RX)));
	cr_assert(eq(u64, stats(&h)->pass_exit[SIRQ_EXIT_STOP][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}
