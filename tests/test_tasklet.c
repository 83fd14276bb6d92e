/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Tasklets on HI and TASKLET: scheduled once until they run, FIFO per
 * list, disable/enable, kill, and never concurrent with themselves.
 */

#include <errno.h>
#include <sched.h>
#include <time.h>

#include "harness.h"

/* Tasklet ids in the run log, apart from vector numbers. */
#define TL_A 101
#define TL_B 102
#define TL_C 103

/* Grace period in which a wrongly non-blocking call would have returned. */
#define GRACE_NS MS(50)

Test(tasklet, schedule_returns_true_once_and_false_while_still_scheduled)
{
	struct harness h;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);

	cr_assert(not(sirq_tasklet_is_scheduled(&a.t)));
	cr_assert(sirq_tasklet_schedule(h.cpu, &a.t));
	cr_assert(sirq_tasklet_is_scheduled(&a.t));
	cr_assert(not(sirq_tasklet_schedule(h.cpu, &a.t)));
	cr_assert(not(sirq_tasklet_hi_schedule(h.cpu, &a.t)));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_TASKLET)));

	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_RAN));
	cr_assert(eq(uint, a.runs, 1));
	cr_assert(not(sirq_tasklet_is_scheduled(&a.t)));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 1));

	/* Ran: it can be scheduled again. */
	cr_assert(sirq_tasklet_schedule(h.cpu, &a.t));
	harness_fini(&h);
}

Test(tasklet, schedule_from_another_thread_kicks_the_dispatcher)
{
	struct harness h;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);

	sirq_tasklet_schedule(h.cpu, &a.t);
	cr_assert(eq(uint, h.kicks, 1));
	harness_fini(&h);
}

static void
schedule_tasklet_from_handler(struct probe *p)
{
	struct tprobe *tp = p->hook_arg;

	cr_assert(sirq_tasklet_schedule(p->h->cpu, &tp->t));
}

Test(tasklet, schedule_from_a_handler_of_the_cpu_does_not_kick)
{
	struct harness h;
	struct probe *rx;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);
	rx = probe_register(&h, SIRQ_NET_RX);
	rx->hook = schedule_tasklet_from_handler;
	rx->hook_arg = &a;

	sirq_raise(h.cpu, SIRQ_NET_RX);
	cr_assert(eq(uint, h.kicks, 1));
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, h.kicks, 1));	/* the raise above, only */
	cr_assert(eq(uint, a.runs, 1));		/* next sweep of the same pass */
	harness_fini(&h);
}

Test(tasklet, hi_scheduled_tasklet_runs_on_hi_before_tasklet_vector_ones)
{
	struct harness h;
	struct tprobe a, b;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);
	tprobe_init(&b, &h, TL_B);

	sirq_tasklet_schedule(h.cpu, &a.t);
	sirq_tasklet_hi_schedule(h.cpu, &b.t);
	cr_assert(eq(u32, sirq_pending(h.cpu),
		     SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(SIRQ_TASKLET)));
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, h.nlog, 2));
	cr_assert(eq(uint, h.log[0], TL_B));
	cr_assert(eq(uint, h.log[1], TL_A));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_HI][SIRQ_CTX_INLINE], 1));
	cr_assert(eq(u64, h.st.runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(tasklet, tasklets_on_one_list_run_in_the_order_they_were_scheduled)
{
	struct harness h;
	struct tprobe a, b, c;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);
	tprobe_init(&b, &h, TL_B);
	tprobe_init(&c, &h, TL_C);

	sirq_tasklet_schedule(h.cpu, &b.t);
	sirq_tasklet_schedule(h.cpu, &c.t);
	sirq_tasklet_schedule(h.cpu, &a.t);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, h.nlog, 3));
	cr_assert(eq(uint, h.log[0], TL_B));
	cr_assert(eq(uint, h.log[1], TL_C));
	cr_assert(eq(uint, h.log[2], TL_A));
	cr_assert(eq(u64, stats(&h)->runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(tasklet, tasklet_scheduling_itself_from_its_function_runs_in_the_next_restart)
{
	struct harness h;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);
	a.reschedule = 1;

	sirq_tasklet_schedule(h.cpu, &a.t);
	sirq_irq_exit(h.cpu);

	cr_assert(a.resched_ret);	/* no longer "scheduled" while running */
	cr_assert(eq(uint, a.runs, 2));
	cr_assert(not(sirq_tasklet_is_scheduled(&a.t)));
	stats(&h);
	cr_assert(eq(u64, h.st.runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 2));
	cr_assert(eq(u64, h.st.pass_exit[SIRQ_EXIT_DRAINED][SIRQ_CTX_INLINE], 1));
	harness_fini(&h);
}

Test(tasklet, disabled_tasklet_stays_scheduled_and_runs_after_enable)
{
	struct harness h;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);

	sirq_tasklet_disable(&a.t);
	cr_assert(sirq_tasklet_schedule(h.cpu, &a.t));
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, a.runs, 0));
	cr_assert(sirq_tasklet_is_scheduled(&a.t));
	cr_assert(eq(u32, sirq_pending(h.cpu), SIRQ_BIT(SIRQ_TASKLET)));

	cr_assert(eq(int, sirq_tasklet_enable(&a.t), 0));
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, a.runs, 1));
	cr_assert(not(sirq_tasklet_is_scheduled(&a.t)));
	harness_fini(&h);
}

Test(tasklet, disable_nests_and_the_last_enable_lets_it_run)
{
	struct harness h;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);

	sirq_tasklet_disable(&a.t);
	sirq_tasklet_disable_nosync(&a.t);
	sirq_tasklet_schedule(h.cpu, &a.t);

	cr_assert(eq(int, sirq_tasklet_enable(&a.t), 0));
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, a.runs, 0));

	cr_assert(eq(int, sirq_tasklet_enable(&a.t), 0));
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, a.runs, 1));
	harness_fini(&h);
}

Test(tasklet, disabled_tasklet_does_not_hold_up_the_others_on_its_list)
{
	struct harness h;
	struct tprobe a, b;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);
	tprobe_init(&b, &h, TL_B);

	sirq_tasklet_disable(&a.t);
	sirq_tasklet_schedule(h.cpu, &a.t);
	sirq_tasklet_schedule(h.cpu, &b.t);
	sirq_irq_exit(h.cpu);

	cr_assert(eq(uint, a.runs, 0));
	cr_assert(eq(uint, b.runs, 1));
	harness_fini(&h);
}

Test(tasklet, enable_of_a_tasklet_that_is_not_disabled_returns_einval)
{
	struct harness h;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);
	cr_assert(eq(int, sirq_tasklet_enable(&a.t), -EINVAL));

	sirq_tasklet_disable(&a.t);
	cr_assert(eq(int, sirq_tasklet_enable(&a.t), 0));
	cr_assert(eq(int, sirq_tasklet_enable(&a.t), -EINVAL));
	harness_fini(&h);
}

Test(tasklet, killed_tasklet_refuses_scheduling)
{
	struct harness h;
	struct tprobe a;

	harness_init(&h, SIRQ_POLICY_MAINLINE);
	tprobe_init(&a, &h, TL_A);
	sirq_tasklet_schedule(h.cpu, &a.t);
	sirq_irq_exit(h.cpu);
	cr_assert(eq(uint, a.runs, 1));

	sirq_tasklet_kill(&a.t);
	cr_assert(not(sirq_tasklet_schedule(h.cpu, &a.t)));
	cr_assert(not(sirq_tasklet_hi_schedule(h.cpu, &a.t)));
	cr_assert(not(sirq_tasklet_is_scheduled(&a.t)));
	cr_assert(eq(u32, sirq_pending(h.cpu), 0));
	cr_assert(eq(int, sirq_irq_exit(h.cpu), SIRQ_IRQ_EXIT_IDLE));
	cr_assert(eq(uint, a.runs, 1));

	/* Killing twice is harmless; init revives it. */
	sirq_tasklet_kill(&a.t);
	tprobe_init(&a, &h, TL_A);
	cr_assert(sirq_tasklet_schedule(h.cpu, &a.t));
	harness_fini(&h);
}

/*
 * A tasklet whose function blocks until released, run by a dispatcher
 * thread, and a third thread calling kill or disable meanwhile.
 */
struct blocking_tasklet {
	struct harness h;
	struct sirq_tasklet t;
	unsigned int started;		/* the function is running */
	unsigned int release;		/* let the function return */
	unsigned int runs;
	unsigned int call_entered;	/* kill/disable called */
	unsigned int call_returned;	/* kill/disable returned */
	unsigned int returned_while_running;
	bool use_kill;
};

static void
blocking_fn(struct sirq_tasklet *t, void *arg)
{
	struct blocking_tasklet *bt = arg;

	(void)t;
	__atomic_store_n(&bt->started, 1, __ATOMIC_RELEASE);
	wait_flag(&bt->release, SEC(10));
	bt->returned_while_running =
		__atomic_load_n(&bt->call_returned, __ATOMIC_ACQUIRE);
	__atomic_fetch_add(&bt->runs, 1, __ATOMIC_RELEASE);
}

static void *
dispatch_once(void *arg)
{
	struct blocking_tasklet *bt = arg;

	sirq_irq_exit(bt->h.cpu);
	return NULL;
}

static void *
kill_or_disable(void *arg)
{
	struct blocking_tasklet *bt = arg;

	__atomic_store_n(&bt->call_entered, 1, __ATOMIC_RELEASE);
	if (bt->use_kill)
		sirq_tasklet_kill(&bt->t);
	else
		sirq_tasklet_disable(&bt->t);
	__atomic_store_n(&bt->call_returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Runs the scenario; returns with both threads joined. */
static void
call_while_tasklet_runs(struct blocking_tasklet *bt, bool use_kill)
{
	pthread_t dispatcher, caller;

	bt->use_kill = use_kill;
	sirq_tasklet_init(&bt->t, blocking_fn, bt);
	cr_assert(sirq_tasklet_schedule(bt->h.cpu, &bt->t));
	cr_assert(eq(int, pthread_create(&dispatcher, NULL, dispatch_once, bt), 0));
	cr_assert(wait_flag(&bt->started, SEC(10)));

	cr_assert(eq(int, pthread_create(&caller, NULL, kill_or_disable, bt), 0));
	cr_assert(wait_flag(&bt->call_entered, SEC(10)));
	/* It must not return while the function runs. */
	cr_assert(not(wait_flag(&bt->call_returned, GRACE_NS)));

	__atomic_store_n(&bt->release, 1, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(dispatcher, NULL), 0));
	cr_assert(eq(int, pthread_join(caller, NULL), 0));
	cr_assert(eq(uint, bt->returned_while_running, 0));
	cr_assert(eq(uint, bt->call_returned, 1));
	cr_assert(eq(uint, bt->runs, 1));
}

Test(tasklet, kill_waits_until_the_running_function_returns)
{
	struct blocking_tasklet bt = { 0 };

	harness_init(&bt.h, SIRQ_POLICY_MAINLINE);
	call_while_tasklet_runs(&bt, true);

	cr_assert(not(sirq_tasklet_schedule(bt.h.cpu, &bt.t)));
	cr_assert(eq(int, sirq_irq_exit(bt.h.cpu), SIRQ_IRQ_EXIT_IDLE));
	cr_assert(eq(uint, bt.runs, 1));
	harness_fini(&bt.h);
}

Test(tasklet, disable_waits_until_the_running_function_returns)
{
	struct blocking_tasklet bt = { 0 };

	harness_init(&bt.h, SIRQ_POLICY_MAINLINE);
	call_while_tasklet_runs(&bt, false);

	/* Disabled, not dead: scheduling works, running waits for enable. */
	__atomic_store_n(&bt.release, 1, __ATOMIC_RELEASE);
	cr_assert(sirq_tasklet_schedule(bt.h.cpu, &bt.t));
	sirq_irq_exit(bt.h.cpu);
	cr_assert(eq(uint, bt.runs, 1));
	cr_assert(eq(int, sirq_tasklet_enable(&bt.t), 0));
	sirq_irq_exit(bt.h.cpu);
	cr_assert(eq(uint, bt.runs, 2));
	harness_fini(&bt.h);
}

/*
 * Two CPUs, each with its dispatcher thread calling sirq_irq_exit() in a
 * loop. The tasklet, while it runs on one CPU, schedules itself on the
 * other one and keeps running until that CPU's dispatcher has started a
 * pass (its clock was read) and a little longer: the other CPU finds it
 * scheduled but still running on every hand-over. Bounded by a number of
 * runs and by time.
 */
#define PINGPONG_RUNS 10000
#define PINGPONG_TIME_NS SEC(3)
#define PINGPONG_WAIT_NS US(200)	/* for the other CPU to start a pass */

struct pingpong {
	struct sirq_tasklet t;
	unsigned int running;		/* inside the function now */
	unsigned int overlaps;		/* found running on entry */
	unsigned int stop;		/* no more hand-overs; threads exit */
	uint64_t runs;
	uint64_t scheduled;		/* schedule calls that returned true */
};

struct pingpong_cpu {
	struct harness h;
	struct pingpong *pp;
	struct pingpong_cpu *other;
	pthread_t thread;
};

/* The CPU whose dispatcher runs on this thread. */
static _Thread_local struct pingpong_cpu *this_cpu;

static void
pingpong_fn(struct sirq_tasklet *t, void *arg)
{
	struct pingpong *pp = arg;
	struct harness *other;
	unsigned int reads;
	uint64_t start;

	if (__atomic_exchange_n(&pp->running, 1, __ATOMIC_ACQ_REL) != 0)
		__atomic_fetch_add(&pp->overlaps, 1, __ATOMIC_RELAXED);
	if (this_cpu != NULL && !__atomic_load_n(&pp->stop, __ATOMIC_ACQUIRE)) {
		other = &this_cpu->other->h;
		reads = __atomic_load_n(&other->clock_reads, __ATOMIC_ACQUIRE);
		if (sirq_tasklet_schedule(other->cpu, t))
			__atomic_fetch_add(&pp->scheduled, 1, __ATOMIC_RELAXED);
		start = monotonic_ns();
		while (__atomic_load_n(&other->clock_reads, __ATOMIC_ACQUIRE) ==
		       reads && monotonic_ns() - start < PINGPONG_WAIT_NS)
			sched_yield();	/* in case both threads share a core */
	}
	start = monotonic_ns();
	while (monotonic_ns() - start < US(2))
		;
	__atomic_fetch_add(&pp->runs, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&pp->running, 0, __ATOMIC_RELEASE);
}

static void *
pingpong_dispatcher(void *arg)
{
	struct pingpong_cpu *pc = arg;

	this_cpu = pc;
	while (!__atomic_load_n(&pc->pp->stop, __ATOMIC_ACQUIRE))
		if (sirq_irq_exit(pc->h.cpu) == SIRQ_IRQ_EXIT_IDLE)
			sched_yield();
	return NULL;
}

Test(tasklet, never_runs_concurrently_with_itself_when_scheduled_on_two_cpus)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct pingpong pp = { 0 };
	static const struct timespec poll_interval = { .tv_nsec = 1000000 };
	struct pingpong_cpu pc[2];
	uint64_t deadline;
	unsigned int i, rounds;

	sirq_tasklet_init(&pp.t, pingpong_fn, &pp);
	for (i = 0; i < 2; i++) {
		harness_init_params(&pc[i].h, &p,
				    HARNESS_REAL_CLOCK | HARNESS_NO_WORKER);
		pc[i].pp = &pp;
		pc[i].other = &pc[1 - i];
	}
	cr_assert(sirq_tasklet_schedule(pc[0].h.cpu, &pp.t));
	pp.scheduled = 1;
	for (i = 0; i < 2; i++)
		cr_assert(eq(int, pthread_create(&pc[i].thread, NULL,
						 pingpong_dispatcher, &pc[i]), 0));

	deadline = monotonic_ns() + PINGPONG_TIME_NS;
	while (__atomic_load_n(&pp.runs, __ATOMIC_ACQUIRE) < PINGPONG_RUNS &&
	       monotonic_ns() < deadline)
		nanosleep(&poll_interval, NULL);	/* leave both cores to them */
	__atomic_store_n(&pp.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		cr_assert(eq(int, pthread_join(pc[i].thread, NULL), 0));

	/* The last hand-over may still be pending: drain from here. */
	for (rounds = 0; rounds < 1000; rounds++) {
		if (sirq_pending(pc[0].h.cpu) == 0 &&
		    sirq_pending(pc[1].h.cpu) == 0)
			break;
		sirq_irq_exit(pc[0].h.cpu);
		sirq_irq_exit(pc[1].h.cpu);
	}

	cr_log_info("%llu runs", (unsigned long long)pp.runs);
	cr_assert(eq(uint, pp.overlaps, 0), "ran concurrently with itself");
	cr_assert(eq(u64, pp.runs, pp.scheduled), "a scheduled run was lost");
	cr_assert(not(sirq_tasklet_is_scheduled(&pp.t)));
	/* At least one hand-over happened, so both CPUs ran it. */
	cr_assert(ne(u64, stats(&pc[0].h)->runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 0));
	cr_assert(ne(u64, stats(&pc[1].h)->runs[SIRQ_TASKLET][SIRQ_CTX_INLINE], 0));
	for (i = 0; i < 2; i++)
		harness_fini(&pc[i].h);
}
