/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NAPI's accounting (sirq_napi_core.c) on the fake clock: napi_schedule,
 * napi_poll and net_rx_action as net/core/dev.c (v6.1) orders them, and
 * the per-NAPI modes of 6.13 (napi_defer_hard_irqs and gro_flush_timeout,
 * irq_suspend_timeout, busy polling with prefer_busy_poll, threaded NAPI)
 * and 6.19's threaded busy polling.
 * Each test names the kernel line it holds the core to.
 *
 * The driver is a table of backlogs: a poll of context i takes
 * min(backlog[i], weight) packets, logs i, and advances the clock by
 * cost_ns per packet. net_rx_action is called directly, as NET_RX's
 * handler would, with NET_RX's pending bit cleared first so that a raise
 * by the run is seen. The contexts' hrtimers are run by calling
 * sirq_softnet_timers() at an exact time, as a "hardirq" would.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "harness.h"
#include "sirq_napi_core.h"

#define WEIGHT 64
#define BUDGET 300			/* netdev_budget */
#define BUDGET_USECS 2000		/* netdev_budget_usecs */
#define UNREACHED_BUDGET 1000000

/*
 * The per-NAPI settings of the tests of deferral and suspension: the
 * values of Documentation/networking/napi.rst's irq suspension example
 * (gro_flush_timeout 50 us, irq_suspend_timeout 20 ms), with two empty
 * polls before the interrupt is back.
 */
#define DEFER_HARD_IRQS 2
#define GRO_FLUSH_TIMEOUT US(50)
#define IRQ_SUSPEND_TIMEOUT MS(20)
/* The busy poller's budget: BUSY_POLL_BUDGET, epoll's default. */
#define BUSY_POLL_BUDGET 8

struct driver {
	struct harness h;
	struct sirq_softnet sd;
	uint64_t time_squeeze;
	uint64_t budget_exhausted;
	unsigned int backlog[SIRQ_NAPI_MAX];
	uint64_t cost_ns;		/* per packet */
	/* While polling context schedule_from, schedule context schedule_idx. */
	int schedule_from;
	uint16_t schedule_idx;
	unsigned int polls;
	/*
	 * The device adds late[i] packets to context i's source while its
	 * interrupt is off (during the poll), so no interrupt comes for
	 * them: only the look after the re-arm finds them.
	 */
	unsigned int late[SIRQ_NAPI_MAX];
	unsigned int rearms[SIRQ_NAPI_MAX];
	unsigned int wakes[SIRQ_NAPI_MAX];	/* its thread woken */
};

static unsigned int
driver_poll(void *ctx, uint16_t idx, uint16_t weight)
{
	struct driver *d = ctx;
	unsigned int work = d->backlog[idx] < weight ? d->backlog[idx] : weight;

	cr_assert(sirq_napi_is_scheduled(&d->sd, idx),
		  "context %u polled while not scheduled", idx);
	d->polls++;
	harness_log(&d->h, idx);
	d->backlog[idx] -= work;
	clock_advance(&d->h, work * d->cost_ns);
	if (d->schedule_from == (int)idx) {
		d->schedule_from = -1;
		cr_assert(sirq_napi_schedule(&d->sd, d->schedule_idx));
	}
	return work;
}

static bool
driver_rearm(void *ctx, uint16_t idx)
{
	struct driver *d = ctx;

	cr_assert(not(sirq_napi_is_scheduled(&d->sd, idx)),
		  "context %u re-armed before napi_complete_done()", idx);
	d->rearms[idx]++;
	d->backlog[idx] += d->late[idx];
	d->late[idx] = 0;
	return d->backlog[idx] != 0;
}

static void
driver_wake_thread(void *ctx, uint16_t idx)
{
	struct driver *d = ctx;

	cr_assert(sirq_napi_is_scheduled(&d->sd, idx),
		  "context %u's thread woken while not scheduled", idx);
	d->wakes[idx]++;
}

static void
driver_init_params(struct driver *d, const struct sirq_params *p,
		   unsigned int budget, unsigned int nb_napi)
{
	struct sirq_softnet_conf conf;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	harness_init_params(&d->h, p, HARNESS_FAKE_CLOCK);
	probe_register(&d->h, SIRQ_NET_RX);	/* NET_RX can be raised */
	d->schedule_from = -1;
	conf = (struct sirq_softnet_conf){
		.cpu = d->h.cpu,
		.budget = budget,
		.budget_usecs = BUDGET_USECS,
		.poll = driver_poll,
		.rearm = driver_rearm,
		.wake_thread = driver_wake_thread,
		.poll_ctx = d,
		.time_squeeze = &d->time_squeeze,
		.budget_exhausted = &d->budget_exhausted,
	};
	cr_assert(eq(int, sirq_softnet_init(&d->sd, &conf), 0));
	for (i = 0; i < nb_napi; i++)
		cr_assert(eq(int, sirq_napi_add(&d->sd, WEIGHT), (int)i));
}

static void
driver_init(struct driver *d, unsigned int nb_napi)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);

	driver_init_params(d, &p, BUDGET, nb_napi);
}

/* Contexts 0..n-1 with ten polls' worth of packets each, scheduled in order. */
static void
schedule_full(struct driver *d, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		d->backlog[i] = 10 * WEIGHT;
		sirq_napi_schedule(&d->sd, (uint16_t)i);
	}
}

static bool
net_rx_pending(const struct driver *d)
{
	return (sirq_pending(d->h.cpu) & SIRQ_BIT(SIRQ_NET_RX)) != 0;
}

/* One NET_RX run; returns whether it raised NET_RX again. */
static bool
net_rx_action(struct driver *d)
{
	sirq_pending_drop(d->h.cpu, SIRQ_BIT(SIRQ_NET_RX));
	d->h.nlog = 0;
	sirq_softnet_rx_action(&d->sd);
	return net_rx_pending(d);
}

/* The run's poll order is @n contexts, in the log. */
static void
expect_polled(const struct driver *d, const unsigned int *order,
	      unsigned int n)
{
	unsigned int i;

	cr_assert(eq(uint, d->h.nlog, n), "%u polls, want %u", d->h.nlog, n);
	for (i = 0; i < n; i++)
		cr_assert(eq(uint, d->h.log[i], order[i]),
			  "poll %u: context %u, want %u", i, d->h.log[i],
			  order[i]);
}

static void
expect_no_poll(const struct driver *d)
{
	cr_assert(eq(uint, d->h.nlog, 0), "%u polls, want none", d->h.nlog);
}

#define EXPECT_POLLED(d, ...) do { \
		static const unsigned int order_[] = { __VA_ARGS__ }; \
		expect_polled((d), order_, sizeof(order_) / sizeof(order_[0])); \
	} while (0)

static void
driver_fini(struct driver *d)
{
	harness_fini(&d->h);
}

/* napi_schedule(): napi_schedule_prep() lets one caller schedule it. */
Test(napi, napi_schedule_marks_the_context_once_and_raises_net_rx)
{
	struct driver d;

	driver_init(&d, 1);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(sirq_napi_schedule(&d.sd, 0));
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(net_rx_pending(&d));
	cr_assert(not(sirq_napi_schedule(&d.sd, 0)), "already scheduled");
	cr_assert(eq(uint, d.h.kicks, 0), "raised irqoff: no kick");
	driver_fini(&d);
}

/*
 * napi_poll(): if (likely(work < weight)) return work; the driver
 * completed it: NAPI_STATE_SCHED is clear, it is on no list and nothing
 * raises NET_RX.
 */
Test(napi, a_napi_completing_is_not_repolled)
{
	struct driver d;

	driver_init(&d, 1);
	d.backlog[0] = WEIGHT - 1;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(not(net_rx_action(&d)), "nothing left: NET_RX not raised");
	EXPECT_POLLED(&d, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(not(net_rx_action(&d)));
	expect_no_poll(&d);
	/* Its "interrupt" is on again: the next one schedules it. */
	cr_assert(sirq_napi_schedule(&d.sd, 0));
	cr_assert(eq(u64, d.time_squeeze, 0));
	driver_fini(&d);
}

/*
 * virtnet_poll() -> virtqueue_napi_complete(): the interrupt is turned
 * on again only once the context has completed, and a poll that used
 * its whole weight is not completed, so it is not re-armed.
 */
Test(napi, a_napi_is_rearmed_after_napi_complete_done_and_only_then)
{
	struct driver d;

	driver_init(&d, 1);
	d.backlog[0] = WEIGHT + 10;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(net_rx_action(&d), "a full poll: repolled");
	cr_assert(eq(uint, d.rearms[0], 0), "still scheduled: not re-armed");
	cr_assert(not(net_rx_action(&d)));
	cr_assert(eq(uint, d.rearms[0], 1), "completed: re-armed once");
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	driver_fini(&d);
}

/*
 * virtqueue_napi_complete(): if (unlikely(virtqueue_poll(vq, opaque)))
 * virtqueue_napi_schedule(napi, vq). Packets the device added while the
 * poll ran, with the interrupt off, bring no interrupt: the look after
 * the re-arm schedules the context again, and the next run polls them.
 * Without it they would wait for the next packet's interrupt.
 */
Test(napi, work_that_came_while_the_interrupt_was_off_is_scheduled_at_rearm)
{
	struct driver d;

	driver_init(&d, 1);
	d.backlog[0] = 5;
	d.late[0] = 3;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(net_rx_action(&d), "found at the re-arm: NET_RX raised");
	EXPECT_POLLED(&d, 0);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.backlog[0], 0), "the 3 late packets were polled");
	cr_assert(eq(uint, d.rearms[0], 2));
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	driver_fini(&d);
}

/*
 * napi_poll(): a poll that used its whole weight goes on the repoll list
 * (list_add_tail(&n->poll_list, repoll)), still scheduled, and NET_RX is
 * raised for it (if (!list_empty(&sd->poll_list)) __raise_softirq_irqoff).
 * It is polled once per run: the repoll list is not the list being
 * walked, so 100 packets take two runs, 64 then 36, and no squeeze.
 */
Test(napi, napi_poll_using_its_whole_weight_is_repolled)
{
	struct driver d;

	driver_init(&d, 1);
	d.backlog[0] = 100;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(net_rx_action(&d), "repoll: NET_RX raised again");
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.backlog[0], 100 - WEIGHT));
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(not(sirq_napi_schedule(&d.sd, 0)), "still masked");

	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.backlog[0], 0));
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(eq(u64, d.time_squeeze, 0), "the list ran empty, no squeeze");
	driver_fini(&d);
}

/*
 * A poll of exactly its weight is a full poll, even if the queue is empty
 * after it: the driver cannot know, the next run finds out (work == 0).
 */
Test(napi, napi_poll_of_exactly_its_weight_is_repolled_once_more)
{
	struct driver d;

	driver_init(&d, 1);
	d.backlog[0] = WEIGHT;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(net_rx_action(&d));
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	driver_fini(&d);
}

/*
 * list_splice_init(&sd->poll_list, &list) at the start: a context
 * scheduled while the run polls is on sd->poll_list, not on the list
 * being walked, so it waits for the next run (which its napi_schedule
 * raised).
 */
Test(napi, a_napi_scheduled_during_net_rx_action_waits_for_the_next_run)
{
	struct driver d;

	driver_init(&d, 2);
	d.backlog[0] = 10;
	d.backlog[1] = 10;
	d.schedule_from = 0;
	d.schedule_idx = 1;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(net_rx_action(&d), "raised by napi_schedule(1)");
	EXPECT_POLLED(&d, 0);
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 1);
	driver_fini(&d);
}

/*
 * The end of net_rx_action():
 *	list_splice_tail_init(&sd->poll_list, &list);
 *	list_splice_tail(&repoll, &list);
 * what was scheduled while the run polled goes before the contexts that
 * used their whole weight. Context 0 is full; context 1 is scheduled
 * during 0's poll: the next run polls 1, then 0.
 */
Test(napi, net_rx_action_polls_newly_scheduled_before_the_repoll_list)
{
	struct driver d;

	driver_init(&d, 2);
	d.backlog[0] = 10 * WEIGHT;
	d.backlog[1] = 10;
	d.schedule_from = 0;
	d.schedule_idx = 1;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0);
	cr_assert(net_rx_action(&d), "0 still has work");
	EXPECT_POLLED(&d, 1, 0);
	driver_fini(&d);
}

/*
 * Contexts scheduled between two runs come after all of the list the
 * last run left (sd->poll_list is appended to by napi_schedule()): here
 * after the repoll list.
 */
Test(napi, napi_scheduled_between_runs_goes_after_the_repoll_list)
{
	struct driver d;

	driver_init(&d, 2);
	d.backlog[0] = 10;
	d.backlog[1] = 10 * WEIGHT;
	sirq_napi_schedule(&d.sd, 1);

	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 1);
	sirq_napi_schedule(&d.sd, 0);
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 1, 0);
	driver_fini(&d);
}

/*
 * if (unlikely(budget <= 0 || ...)) { sd->time_squeeze++; break; }
 * The budget is checked after each poll: six full contexts, weight 64,
 * budget 300: five polls (320 packets) and the squeeze; NET_RX raised.
 */
Test(napi, net_rx_action_budget_exhausted_counts_time_squeeze)
{
	struct driver d;

	driver_init(&d, 6);
	schedule_full(&d, 6);

	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0, 1, 2, 3, 4);
	cr_assert(eq(u64, d.time_squeeze, 1));
	cr_assert(eq(u64, d.budget_exhausted, 1));
	driver_fini(&d);
}

/*
 * list_splice_tail(&repoll, &list); list_splice(&list, &sd->poll_list):
 * the contexts a squeezed run did not reach are polled first next time,
 * then the repoll list in its order.
 */
Test(napi, net_rx_action_puts_the_napis_it_did_not_reach_first)
{
	struct driver d;

	driver_init(&d, 6);
	schedule_full(&d, 6);

	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0, 1, 2, 3, 4);
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 5, 0, 1, 2, 3);
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 4, 5, 0, 1, 2);
	cr_assert(eq(u64, d.time_squeeze, 3));
	driver_fini(&d);
}

/*
 * Partial polls count against the budget too: budget -= napi_poll().
 * Ten contexts of 40 packets: 40 * 7 = 280, the eighth poll reaches 320.
 */
Test(napi, net_rx_action_charges_partial_polls_to_the_budget)
{
	struct driver d;
	unsigned int i;

	driver_init(&d, 10);
	for (i = 0; i < 10; i++) {
		d.backlog[i] = 40;
		sirq_napi_schedule(&d.sd, (uint16_t)i);
	}

	cr_assert(net_rx_action(&d), "two contexts not reached");
	EXPECT_POLLED(&d, 0, 1, 2, 3, 4, 5, 6, 7);
	cr_assert(eq(u64, d.budget_exhausted, 1));
	for (i = 0; i < 8; i++)
		cr_assert(not(sirq_napi_is_scheduled(&d.sd, (uint16_t)i)));
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 8, 9);
	driver_fini(&d);
}

/*
 * time_after_eq(jiffies, time_limit), time_limit = start +
 * netdev_budget_usecs: a poll that ends exactly 2000 us after the start
 * stops the run. 1 ms per poll (full polls of 64 packets at 15625 ns),
 * a budget never reached: two polls, the squeeze, not by the budget.
 */
Test(napi, net_rx_action_time_limit_counts_time_squeeze)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct driver d;

	driver_init_params(&d, &p, UNREACHED_BUDGET, 5);
	d.cost_ns = MS(1) / WEIGHT;
	schedule_full(&d, 5);

	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0, 1);
	cr_assert(eq(u64, clock_now(&d.h), T0 + US(BUDGET_USECS)));
	cr_assert(eq(u64, d.time_squeeze, 1));
	cr_assert(eq(u64, d.budget_exhausted, 0));
	driver_fini(&d);
}

/*
 * Not the kernel's: its time_limit = jiffies + usecs_to_jiffies(2000)
 * is one 4 ms jiffy at HZ=250, which would stop a run that starts 3 ms
 * into a jiffy after the 1 ms poll that crosses into the next one. The
 * core keeps netdev_budget_usecs on the exact clock whatever tick_hz
 * the softirq loop uses: two polls, 2000 us.
 */
Test(napi, net_rx_action_time_limit_is_exact_at_tick_hz_250)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct driver d;

	p.tick_hz = 250;
	driver_init_params(&d, &p, UNREACHED_BUDGET, 5);
	d.cost_ns = MS(1) / WEIGHT;
	schedule_full(&d, 5);
	clock_set(&d.h, T0 + MS(3));

	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0, 1);
	cr_assert(eq(u64, clock_now(&d.h), T0 + MS(3) + US(BUDGET_USECS)));
	cr_assert(eq(u64, d.time_squeeze, 1));
	driver_fini(&d);
}

/*
 * Not the kernel's: a thread whose CPU time is bounded (a SCHED_DEADLINE
 * softirq thread's runtime left, sirq_cpu_round_limit()) ends the run
 * before a poll that its last poll's time says would end past the bound,
 * where the kernel would throttle it mid-poll holding the lock. Full
 * polls of 64 us: with 192 us left the third ends exactly at the bound
 * and is made, the fourth is not; the rest stays scheduled, NET_RX
 * raised again, and the step (64 us) is left for the thread.
 */
Test(napi, a_bounded_round_ends_before_a_poll_that_would_pass_its_bound)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct driver d;

	driver_init_params(&d, &p, UNREACHED_BUDGET, 5);
	d.cost_ns = US(1);
	schedule_full(&d, 5);

	sirq_cpu_round_limit(d.h.cpu, US(192));
	cr_assert(net_rx_action(&d), "work left: NET_RX raised again");
	EXPECT_POLLED(&d, 0, 1, 2);
	cr_assert(eq(u64, clock_now(&d.h), T0 + US(192)));
	cr_assert(eq(u64, sirq_round_step_ns(), US(64)));
	cr_assert(eq(u64, d.time_squeeze, 1));
	cr_assert(eq(u64, d.budget_exhausted, 0));

	/* One nanosecond less: the third poll would pass it. */
	sirq_cpu_round_limit(d.h.cpu, US(192) - 1);
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 3, 4);
	cr_assert(eq(u64, d.time_squeeze, 2));

	/* Unbounded again: every context on the list, 320 us. */
	sirq_cpu_round_limit(d.h.cpu, 0);
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0, 1, 2, 3, 4);
	cr_assert(eq(u64, d.time_squeeze, 2));
	driver_fini(&d);
}

/*
 * The first poll of a bounded round is always made, however little is
 * left: the thread asks for a round only when one step fits
 * (sirq_worker.c), and a run must make progress.
 */
Test(napi, a_bounded_round_makes_its_first_poll)
{
	struct sirq_params p = harness_params(SIRQ_POLICY_MAINLINE);
	struct driver d;

	driver_init_params(&d, &p, UNREACHED_BUDGET, 2);
	d.cost_ns = US(1);
	schedule_full(&d, 2);

	sirq_cpu_round_limit(d.h.cpu, US(10));
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(u64, clock_now(&d.h), T0 + US(64)));
	sirq_cpu_round_limit(d.h.cpu, 0);
	driver_fini(&d);
}

/*
 * if (list_empty(&list)) { if (list_empty(&repoll)) goto end; break; }
 * The list running empty is no squeeze, with or without repolls.
 */
Test(napi, net_rx_action_that_polls_everything_counts_no_squeeze)
{
	struct driver d;
	unsigned int i;

	driver_init(&d, 4);
	for (i = 0; i < 4; i++) {
		d.backlog[i] = i % 2 == 0 ? 10 * WEIGHT : 10;
		sirq_napi_schedule(&d.sd, (uint16_t)i);
	}

	cr_assert(net_rx_action(&d), "0 and 2 repolled");
	EXPECT_POLLED(&d, 0, 1, 2, 3);
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0, 2);
	cr_assert(eq(u64, d.time_squeeze, 0));
	driver_fini(&d);
}

/* A run with nothing scheduled polls nothing and raises nothing. */
Test(napi, net_rx_action_with_an_empty_list_does_nothing)
{
	unsigned int reads;
	struct driver d;

	driver_init(&d, 2);
	reads = d.h.clock_reads;
	cr_assert(not(net_rx_action(&d)));
	expect_no_poll(&d);
	cr_assert(eq(uint, d.h.clock_reads - reads, 1),
		  "the time limit's read only");
	driver_fini(&d);
}

Test(napi, reset_leaves_every_napi_idle_and_the_lists_empty)
{
	struct driver d;

	driver_init(&d, 2);
	d.backlog[0] = 10 * WEIGHT;
	sirq_napi_schedule(&d.sd, 0);
	cr_assert(net_rx_action(&d));
	sirq_napi_schedule(&d.sd, 1);

	sirq_softnet_reset(&d.sd);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 1)));
	cr_assert(not(net_rx_action(&d)));
	expect_no_poll(&d);
	driver_fini(&d);
}

Test(napi, init_and_add_refuse_what_net_rx_action_cannot_run)
{
	struct sirq_softnet sd;
	struct sirq_softnet_conf conf;
	struct driver d;
	unsigned int i;

	driver_init(&d, 0);
	conf = (struct sirq_softnet_conf){
		.cpu = d.h.cpu,
		.budget = BUDGET,
		.budget_usecs = BUDGET_USECS,
		.poll = driver_poll,
		.time_squeeze = &d.time_squeeze,
		.budget_exhausted = &d.budget_exhausted,
	};
	conf.budget = 0;
	cr_assert(eq(int, sirq_softnet_init(&sd, &conf), -EINVAL));
	conf.budget = BUDGET;
	conf.budget_usecs = 0;
	cr_assert(eq(int, sirq_softnet_init(&sd, &conf), -EINVAL));
	conf.budget_usecs = BUDGET_USECS;
	conf.poll = NULL;
	cr_assert(eq(int, sirq_softnet_init(&sd, &conf), -EINVAL));
	conf.poll = driver_poll;
	cr_assert(eq(int, sirq_softnet_init(&sd, &conf), 0));

	cr_assert(eq(int, sirq_napi_add(&sd, 0), -EINVAL), "weight 0");
	for (i = 0; i < SIRQ_NAPI_MAX; i++)
		cr_assert(eq(int, sirq_napi_add(&sd, WEIGHT), (int)i));
	cr_assert(eq(int, sirq_napi_add(&sd, WEIGHT), -ENOSPC));
	driver_fini(&d);
}

/*
 * The per-NAPI modes of 6.13: napi_complete_done() with defer_hard_irqs,
 * gro_flush_timeout and irq_suspend_timeout, napi_watchdog(), __napi_poll()
 * under prefer_busy_poll, napi_busy_loop() and busy_poll_stop(),
 * napi_suspend_irqs() and napi_resume_irqs(), threaded NAPI.
 */

static void
napi_set(struct driver *d, uint16_t idx, uint32_t defer_hard_irqs,
	 uint64_t gro_flush_timeout_ns, uint64_t irq_suspend_timeout_ns)
{
	struct sirq_napi_params cfg = {
		.defer_hard_irqs = defer_hard_irqs,
		.gro_flush_timeout_ns = gro_flush_timeout_ns,
		.irq_suspend_timeout_ns = irq_suspend_timeout_ns,
	};

	cr_assert(eq(int, sirq_napi_set_cfg(&d->sd, idx, &cfg), 0));
}

/* Context @idx's interrupt stays masked while it is idle. */
static bool
irq_off(const struct driver *d, uint16_t idx)
{
	return (d->sd.irq_off & (UINT64_C(1) << idx)) != 0;
}

/* NAPI_STATE_PREFER_BUSY_POLL. */
static bool
prefers_busy_poll(const struct driver *d, uint16_t idx)
{
	return (d->sd.prefer_busy_poll & (UINT64_C(1) << idx)) != 0;
}

/*
 * The next timer is due at @deadline, exactly: nothing expires 1 ns
 * before, one timer at @deadline, where the clock is left.
 */
static void
expect_timer_fires_at(struct driver *d, uint64_t deadline)
{
	cr_assert(eq(u64, sirq_softnet_next_timer(&d->sd), deadline),
		  "next timer at %" PRIu64 ", want %" PRIu64,
		  sirq_softnet_next_timer(&d->sd), deadline);
	clock_set(&d->h, deadline - 1);
	cr_assert(eq(uint, sirq_softnet_timers(&d->sd), 0),
		  "a timer expired 1 ns before its deadline");
	clock_set(&d->h, deadline);
	cr_assert(eq(uint, sirq_softnet_timers(&d->sd), 1),
		  "no timer expired at its deadline");
}

/*
 * napi_complete_done():
 *	if (work_done) n->defer_hard_irqs_count = napi_get_defer_hard_irqs(n);
 *	if (ret && n->defer_hard_irqs_count > 0) {
 *		n->defer_hard_irqs_count--;
 *		timeout = napi_get_gro_flush_timeout(n);
 *		if (timeout) ret = false;
 *	}
 *	... if (timeout) hrtimer_start(&n->timer, ...);
 * defer_hard_irqs 2, gro_flush_timeout 50 us: the poll that found work
 * completes with the interrupt still masked (the driver does not re-arm
 * it) and napi_watchdog() schedules the context 50 us later; the first
 * empty poll defers again, the second turns the interrupt back on and
 * arms nothing.
 */
Test(napi, defer_hard_irqs_repolls_at_gro_flush_timeout_then_rearms)
{
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);
	d.backlog[0] = 10;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)), "completed");
	cr_assert(eq(uint, d.rearms[0], 0), "deferred: not re-armed");
	cr_assert(irq_off(&d, 0));

	expect_timer_fires_at(&d, T0 + GRO_FLUSH_TIMEOUT);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(net_rx_pending(&d), "__napi_schedule_irqoff() raised NET_RX");
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.rearms[0], 0), "first empty poll: still deferred");
	cr_assert(irq_off(&d, 0));

	expect_timer_fires_at(&d, T0 + 2 * GRO_FLUSH_TIMEOUT);
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.rearms[0], 1), "second empty poll: re-armed");
	cr_assert(not(irq_off(&d, 0)));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0), "no timer armed");
	cr_assert(eq(u64, d.sd.counters[0].deferred, 2));
	cr_assert(eq(u64, d.sd.counters[0].watchdog, 2));
	driver_fini(&d);
}

/*
 * A context nobody configured (napi_get_defer_hard_irqs() and
 * napi_get_gro_flush_timeout() 0) is v6.1: napi_complete_done() keeps
 * timeout 0 and returns true, so the driver re-arms at every completion,
 * with work or without, and no hrtimer is ever started.
 */
Test(napi, default_settings_rearm_at_every_completion_and_arm_no_timer)
{
	static const unsigned int found[] = { 10, 0, 0, 3 };
	struct driver d;
	unsigned int i;

	driver_init(&d, 1);
	for (i = 0; i < 4; i++) {
		d.backlog[0] = found[i];
		sirq_napi_schedule(&d.sd, 0);
		cr_assert(not(net_rx_action(&d)));
		EXPECT_POLLED(&d, 0);
		cr_assert(eq(uint, d.rearms[0], i + 1), "completion %u", i);
		cr_assert(not(irq_off(&d, 0)));
		cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0),
			  "completion %u armed a timer", i);
	}
	clock_advance(&d.h, SEC(1));
	cr_assert(eq(uint, sirq_softnet_timers(&d.sd), 0));
	cr_assert(eq(u64, d.sd.counters[0].deferred, 0));
	driver_fini(&d);
}

/*
 * napi_complete_done(): if (work_done) { if (n->gro_bitmask) timeout =
 * napi_get_gro_flush_timeout(n); ... }: without defer_hard_irqs,
 * gro_flush_timeout only times the flush of held GRO packets, and
 * libsirq has no GRO (gro_bitmask is always 0). The interrupt is back at
 * the completion and no timer is armed.
 */
Test(napi, gro_flush_timeout_without_defer_hard_irqs_arms_nothing)
{
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, 0, GRO_FLUSH_TIMEOUT, 0);
	d.backlog[0] = 10;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.rearms[0], 1));
	cr_assert(not(irq_off(&d, 0)));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0));
	clock_advance(&d.h, GRO_FLUSH_TIMEOUT);
	cr_assert(eq(uint, sirq_softnet_timers(&d.sd), 0));
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	driver_fini(&d);
}

/*
 * napi_complete_done(): if (work_done) n->defer_hard_irqs_count =
 * napi_get_defer_hard_irqs(n); — the count is of empty polls in a row.
 * Work, empty, work, empty, empty (the packets arrive while the
 * interrupt is masked): the third poll restarts the count, so the
 * interrupt is back only at the fifth, not at the third.
 */
Test(napi, work_restarts_the_defer_hard_irqs_count)
{
	static const unsigned int found[] = { 10, 0, 7, 0, 0 };
	struct driver d;
	unsigned int i;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);
	sirq_napi_schedule(&d.sd, 0);
	for (i = 0; i < 5; i++) {
		if (i > 0)
			expect_timer_fires_at(&d, clock_now(&d.h) +
					      GRO_FLUSH_TIMEOUT);
		d.backlog[0] = found[i];
		cr_assert(not(net_rx_action(&d)));
		EXPECT_POLLED(&d, 0);
		cr_assert(eq(uint, d.rearms[0], i == 4 ? 1 : 0),
			  "completion %u: %u re-arms", i, d.rearms[0]);
	}
	cr_assert(not(irq_off(&d, 0)));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0));
	driver_fini(&d);
}

/*
 * irq suspension (6.13, Documentation/networking/napi.rst): while the
 * application's busy poll finds events, the interrupt stays masked and
 * NET_RX never runs for the context. busy_poll_stop() with prefer:
 * timeout = napi_get_irq_suspend_timeout(napi) ... hrtimer_start();
 * skip_schedule = true; then ep_poll() finds events and
 * napi_suspend_irqs() pushes the hrtimer out to irq_suspend_timeout
 * again. When the application stops polling, the timer is the safety
 * net: napi_watchdog() schedules the context exactly irq_suspend_timeout
 * after the last suspend, and from that completion on the deferral
 * (defer_hard_irqs, gro_flush_timeout) decides as usual.
 *
 * The application runs every 1 ms for 100 ms; 10 packets arrive while it
 * holds the context (an interrupt would find it scheduled): 8 for its
 * busy poll, 2 for busy_poll_stop()'s last poll. Then it stops and 5
 * packets arrive with the interrupt masked.
 */
Test(napi, a_suspended_irq_stays_off_while_busy_polls_find_events)
{
	uint64_t last_suspend = 0, expiry;
	unsigned int ms, work, last;
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT,
		 IRQ_SUSPEND_TIMEOUT);

	for (ms = 0; ms < 100; ms++) {
		clock_set(&d.h, T0 + MS(ms));
		d.h.nlog = 0;
		cr_assert(eq(uint, sirq_softnet_timers(&d.sd), 0),
			  "%u ms: the suspend timer expired", ms);
		cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, true),
			  "%u ms: not taken", ms);
		d.backlog[0] += 10;
		work = sirq_napi_busy_poll_once(&d.sd, 0, BUSY_POLL_BUDGET);
		last = sirq_napi_busy_poll_stop(&d.sd, 0, true,
						BUSY_POLL_BUDGET);
		if (work + last != 0) {
			sirq_softnet_suspend_irqs(&d.sd, 0);
			last_suspend = clock_now(&d.h);
		}

		cr_assert(eq(uint, work, BUSY_POLL_BUDGET));
		cr_assert(eq(uint, last, 2),
			  "busy_poll_stop()'s poll took the rest");
		EXPECT_POLLED(&d, 0, 0);
		cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
		cr_assert(irq_off(&d, 0), "%u ms: interrupt on", ms);
		cr_assert(eq(uint, d.rearms[0], 0), "%u ms: re-armed", ms);
		cr_assert(not(net_rx_pending(&d)), "%u ms: NET_RX raised", ms);
		cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd),
			     last_suspend + IRQ_SUSPEND_TIMEOUT),
			  "%u ms: the timer was not pushed out", ms);
	}
	cr_assert(eq(u64, last_suspend, T0 + MS(99)));
	cr_assert(eq(u64, d.sd.counters[0].watchdog, 0));

	clock_set(&d.h, T0 + MS(100));
	d.backlog[0] = 5;
	expiry = last_suspend + IRQ_SUSPEND_TIMEOUT;
	expect_timer_fires_at(&d, expiry);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(net_rx_pending(&d));

	/* A completion with work: the deferral, its count from the top. */
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.backlog[0], 0));
	cr_assert(eq(uint, d.rearms[0], 0), "deferred");
	cr_assert(irq_off(&d, 0));
	expect_timer_fires_at(&d, expiry + GRO_FLUSH_TIMEOUT);
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.rearms[0], 0), "first empty poll: still deferred");
	expect_timer_fires_at(&d, expiry + 2 * GRO_FLUSH_TIMEOUT);
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.rearms[0], 1), "second empty poll: interrupt on");
	cr_assert(not(irq_off(&d, 0)));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0));
	driver_fini(&d);
}

/*
 * napi_complete_done():
 *	if (napi_prefer_busy_poll(n)) {
 *		timeout = napi_get_irq_suspend_timeout(n);
 *		if (timeout) ret = false;
 *	}
 *	if (ret && n->defer_hard_irqs_count > 0) { ... }
 * How suspension starts: a busy poller found the context held by NET_RX
 * and marked it; NET_RX's completion then keeps the interrupt masked for
 * irq_suspend_timeout, not gro_flush_timeout, and consumes no deferral:
 * the count its work set stays whole, so once the timer has brought the
 * context back, two empty polls are deferred and the third re-arms.
 */
Test(napi, prefer_busy_poll_completion_masks_for_irq_suspend_timeout)
{
	uint64_t expiry;
	struct driver d;
	unsigned int i;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT,
		 IRQ_SUSPEND_TIMEOUT);
	d.backlog[0] = 10;
	sirq_napi_schedule(&d.sd, 0);
	cr_assert(not(sirq_napi_busy_poll_start(&d.sd, 0, true)),
		  "NET_RX has it");

	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)), "completed");
	cr_assert(not(prefers_busy_poll(&d, 0)));
	cr_assert(eq(uint, d.rearms[0], 0), "suspended: not re-armed");
	cr_assert(irq_off(&d, 0));

	expiry = T0 + IRQ_SUSPEND_TIMEOUT;
	for (i = 0; i < 3; i++) {
		expect_timer_fires_at(&d, expiry);
		cr_assert(not(net_rx_action(&d)));
		EXPECT_POLLED(&d, 0);
		cr_assert(eq(uint, d.rearms[0], i == 2 ? 1 : 0),
			  "empty poll %u: %u re-arms", i + 1, d.rearms[0]);
		expiry += GRO_FLUSH_TIMEOUT;
	}
	cr_assert(not(irq_off(&d, 0)));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0));
	driver_fini(&d);
}

/*
 * napi_suspend_irqs(): if (timeout) hrtimer_start(...);
 * napi_resume_irqs(): if (napi_get_irq_suspend_timeout(napi)) {
 * local_bh_disable(); napi_schedule(napi); local_bh_enable(); }.
 * The busy poll found nothing: a suspended context is scheduled now, not
 * at its timer. Without irq_suspend_timeout neither does anything.
 */
Test(napi, napi_resume_irqs_schedules_only_a_napi_with_irq_suspend_timeout)
{
	struct driver d;

	driver_init(&d, 2);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT,
		 IRQ_SUSPEND_TIMEOUT);
	napi_set(&d, 1, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);

	sirq_softnet_suspend_irqs(&d.sd, 1);
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0));
	sirq_softnet_resume_irqs(&d.sd, 1);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 1)));
	cr_assert(not(net_rx_pending(&d)));

	sirq_softnet_suspend_irqs(&d.sd, 0);
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd),
		     T0 + IRQ_SUSPEND_TIMEOUT));
	sirq_softnet_resume_irqs(&d.sd, 0);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(net_rx_pending(&d));
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	driver_fini(&d);
}

/*
 * napi_busy_loop(): a context NET_RX holds (NAPIF_STATE_SCHED) is not
 * taken; with prefer_busy_poll it is marked:
 *	if (flags & NAPI_F_PREFER_BUSY_POLL)
 *		set_bit(NAPI_STATE_PREFER_BUSY_POLL, &napi->state);
 * and NET_RX stands aside: __napi_poll():
 *	if (napi_prefer_busy_poll(n)) {
 *		if (napi_complete_done(n, work)) napi_schedule(n);
 *		return work;
 *	}
 * a full-weight poll completes it instead of repolling it, and
 * napi_complete_done() (irq_suspend_timeout 0, work found) defers its
 * interrupt under gro_flush_timeout, for the busy poller to take.
 * Without prefer NET_RX keeps it on its repoll list.
 */
Test(napi, busy_poll_with_prefer_makes_net_rx_complete_a_full_napi)
{
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);
	d.backlog[0] = 10 * WEIGHT;
	sirq_napi_schedule(&d.sd, 0);

	cr_assert(not(sirq_napi_busy_poll_start(&d.sd, 0, false)),
		  "NET_RX has it");
	cr_assert(not(prefers_busy_poll(&d, 0)));
	cr_assert(net_rx_action(&d), "without prefer: repolled");
	EXPECT_POLLED(&d, 0);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));

	cr_assert(not(sirq_napi_busy_poll_start(&d.sd, 0, true)),
		  "NET_RX has it");
	cr_assert(prefers_busy_poll(&d, 0));
	cr_assert(not(net_rx_action(&d)), "with prefer: not repolled");
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.backlog[0], 8 * WEIGHT), "two full polls");
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)), "completed");
	cr_assert(not(prefers_busy_poll(&d, 0)),
		  "napi_complete_done() clears the mark");
	cr_assert(eq(uint, d.rearms[0], 0), "deferred: not re-armed");
	cr_assert(irq_off(&d, 0));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd),
		     T0 + GRO_FLUSH_TIMEOUT));
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, true),
		  "the busy poller takes it now");
	driver_fini(&d);
}

/*
 * napi_complete_done(): if (unlikely(n->state & (NAPIF_STATE_NPSVC |
 * NAPIF_STATE_IN_BUSY_POLL))) return false; — the busy poller's own
 * polls do not complete the context, however little they find: it stays
 * scheduled (an interrupt finds it taken) until busy_poll_stop(), whose
 * last poll ("All we really want here is to re-enable device
 * interrupts") completes it; without prefer nothing is deferred and the
 * driver re-arms.
 */
Test(napi, a_busy_polled_napi_is_completed_only_by_busy_poll_stop)
{
	struct driver d;

	driver_init(&d, 1);
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, false));
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(not(net_rx_pending(&d)), "the poller's, not NET_RX's");
	d.backlog[0] = 5;
	cr_assert(eq(uint, sirq_napi_busy_poll_once(&d.sd, 0,
						    BUSY_POLL_BUDGET), 5));
	cr_assert(eq(uint, sirq_napi_busy_poll_once(&d.sd, 0,
						    BUSY_POLL_BUDGET), 0));
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0), "not completed");
	cr_assert(eq(uint, d.rearms[0], 0));
	cr_assert(not(sirq_napi_schedule(&d.sd, 0)),
		  "an interrupt finds it taken");

	cr_assert(eq(uint, sirq_napi_busy_poll_stop(&d.sd, 0, false,
						    BUSY_POLL_BUDGET), 0));
	EXPECT_POLLED(&d, 0, 0, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)), "completed");
	cr_assert(eq(uint, d.rearms[0], 1));
	cr_assert(not(irq_off(&d, 0)));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0));
	cr_assert(not(net_rx_pending(&d)));
	driver_fini(&d);
}

/*
 * busy_poll_stop() with prefer: napi->defer_hard_irqs_count =
 * napi_get_defer_hard_irqs(napi); if (napi->defer_hard_irqs_count)
 * timeout = napi_get_gro_flush_timeout(napi); if (timeout) {
 * hrtimer_start(...); skip_schedule = true; } — before the last poll.
 * A last poll that used its whole budget does not complete, and
 * __busy_poll_stop(napi, true) only clears NAPI_STATE_SCHED: the context
 * is idle with its interrupt still masked and NET_RX not raised, until
 * napi_watchdog(). 100 ns a packet tells the timer's start (at the call)
 * from the end of the last poll.
 */
Test(napi, busy_poll_stop_with_prefer_leaves_a_full_napi_masked_under_its_timer)
{
	struct driver d;
	uint64_t stop;

	driver_init(&d, 1);
	d.cost_ns = 100;
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, true));
	d.backlog[0] = 100;
	cr_assert(eq(uint, sirq_napi_busy_poll_once(&d.sd, 0,
						    BUSY_POLL_BUDGET),
		     BUSY_POLL_BUDGET));

	stop = clock_now(&d.h);
	cr_assert(eq(uint, sirq_napi_busy_poll_stop(&d.sd, 0, true,
						    BUSY_POLL_BUDGET),
		     BUSY_POLL_BUDGET), "the last poll used its whole budget");
	cr_assert(eq(u64, clock_now(&d.h), stop + BUSY_POLL_BUDGET * 100));
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)), "idle");
	cr_assert(irq_off(&d, 0), "masked");
	cr_assert(eq(uint, d.rearms[0], 0));
	cr_assert(not(net_rx_pending(&d)), "skip_schedule: NET_RX not raised");

	expect_timer_fires_at(&d, stop + GRO_FLUSH_TIMEOUT);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(net_rx_pending(&d));
	driver_fini(&d);
}

/*
 * busy_poll_stop() without prefer: no timer; if (rc == budget)
 * __busy_poll_stop(napi, false) -> __napi_schedule(napi): a full last
 * poll leaves the context scheduled, for NET_RX.
 */
Test(napi, busy_poll_stop_without_prefer_hands_a_full_napi_to_net_rx)
{
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, false));
	d.backlog[0] = 100;
	cr_assert(eq(uint, sirq_napi_busy_poll_once(&d.sd, 0,
						    BUSY_POLL_BUDGET),
		     BUSY_POLL_BUDGET));

	cr_assert(eq(uint, sirq_napi_busy_poll_stop(&d.sd, 0, false,
						    BUSY_POLL_BUDGET),
		     BUSY_POLL_BUDGET), "the last poll used its whole budget");
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(net_rx_pending(&d), "__napi_schedule() raised NET_RX");
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0));
	cr_assert(net_rx_action(&d), "a full poll: repolled");
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.backlog[0], 100 - 2 * BUSY_POLL_BUDGET - WEIGHT));
	driver_fini(&d);
}

/*
 * ____napi_schedule(): if (test_bit(NAPI_STATE_THREADED, &napi->state))
 * { ... wake_up_process(thread); return; } — not on the poll list, no
 * NET_RX. napi_threaded_poll_loop(): __napi_poll(napi, &repoll) again
 * while it used its whole weight (repoll); a poll under its weight
 * completes it, and napi_thread_wait() sleeps while it is not scheduled.
 */
Test(napi, a_threaded_napi_is_polled_by_its_thread_not_by_net_rx)
{
	struct sirq_napi_params threaded = { .threaded = true };
	struct driver d;

	driver_init(&d, 1);
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &threaded), 0));
	d.backlog[0] = 2 * WEIGHT + 10;

	cr_assert(sirq_napi_schedule(&d.sd, 0));
	cr_assert(eq(uint, d.wakes[0], 1), "its thread woken");
	cr_assert(not(net_rx_pending(&d)), "NET_RX not raised");
	cr_assert(not(net_rx_action(&d)));
	expect_no_poll(&d);
	cr_assert(not(sirq_napi_schedule(&d.sd, 0)), "already scheduled");
	cr_assert(eq(uint, d.wakes[0], 1), "woken once");

	cr_assert(sirq_napi_threaded_poll(&d.sd, 0), "64: poll again");
	cr_assert(sirq_napi_threaded_poll(&d.sd, 0), "64: poll again");
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)), "10: completed");
	EXPECT_POLLED(&d, 0, 0, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(eq(uint, d.rearms[0], 1));
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)), "idle");
	cr_assert(eq(uint, d.h.nlog, 3), "not polled while idle");
	cr_assert(not(net_rx_pending(&d)));
	cr_assert(eq(u64, d.sd.counters[0].thread_polls, 3));
	driver_fini(&d);
}

/*
 * napi-set on libsirq's terms: a threaded context needs a thread to
 * wake (the kernel creates it, napi_kthread_create(), before it sets
 * NAPI_STATE_THREADED), an unknown context has no settings. A scheduled
 * context changes poller without a poll lost or run twice: NET_RX hands
 * one on its list to the thread when it comes to it (the kernel waits
 * for the next napi_schedule(), which a context under a constant flood
 * never reaches), and one its thread was woken for goes back to NET_RX
 * at once, the thread's next look finding it not its own. Settings
 * other than threaded change any time.
 */
Test(napi, napi_set_cfg_changes_the_poller_of_a_scheduled_context_once)
{
	struct sirq_napi_params threaded = { .threaded = true };
	struct sirq_napi_params deferred = {
		.defer_hard_irqs = DEFER_HARD_IRQS,
		.gro_flush_timeout_ns = GRO_FLUSH_TIMEOUT,
	};
	struct sirq_softnet_conf conf;
	struct sirq_softnet sd;
	struct driver d;

	driver_init(&d, 1);
	conf = (struct sirq_softnet_conf){
		.cpu = d.h.cpu,
		.budget = BUDGET,
		.budget_usecs = BUDGET_USECS,
		.poll = driver_poll,
		.rearm = driver_rearm,
		.poll_ctx = &d,
		.time_squeeze = &d.time_squeeze,
		.budget_exhausted = &d.budget_exhausted,
	};
	cr_assert(eq(int, sirq_softnet_init(&sd, &conf), 0));
	cr_assert(eq(int, sirq_napi_add(&sd, WEIGHT), 0));
	cr_assert(eq(int, sirq_napi_set_cfg(&sd, 0, &threaded), -EINVAL),
		  "no wake_thread");
	cr_assert(eq(int, sirq_napi_set_cfg(&sd, 0, &deferred), 0));

	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 1, &deferred), -EINVAL),
		  "no context 1");

	/* A flood: every poll takes the whole weight, never completes. */
	d.backlog[0] = 100 * WEIGHT;
	sirq_napi_schedule(&d.sd, 0);
	cr_assert(net_rx_action(&d), "repolled");
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &threaded), 0),
		  "NET_RX has it, under a flood for good");
	cr_assert(eq(uint, d.wakes[0], 0), "not the thread's before NET_RX lets it go");
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)),
		  "a spurious wake-up polled NET_RX's context");
	cr_assert(not(net_rx_action(&d)), "NET_RX kept it");
	expect_no_poll(&d);
	cr_assert(eq(uint, d.wakes[0], 1), "its thread not woken");
	cr_assert(sirq_napi_threaded_poll(&d.sd, 0), "the thread's now");
	cr_assert(eq(uint, d.h.nlog, 1));

	/* Back: its thread has it, NET_RX takes it as it is. */
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &deferred), 0),
		  "its thread has it");
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(net_rx_pending(&d), "NET_RX not raised for it");
	d.h.nlog = 0;
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)), "the thread polled NET_RX's");
	expect_no_poll(&d);
	cr_assert(net_rx_action(&d), "repolled");
	EXPECT_POLLED(&d, 0);

	/* There and back before NET_RX came to it: on its list once. */
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &threaded), 0));
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &deferred), 0));
	cr_assert(net_rx_action(&d));
	EXPECT_POLLED(&d, 0);
	cr_assert(eq(uint, d.wakes[0], 1), "woken for a context NET_RX kept");

	/* Idle: the next schedule wakes the thread. */
	d.backlog[0] = 0;
	cr_assert(not(net_rx_action(&d)), "completed");
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &threaded), 0), "idle");
	cr_assert(sirq_napi_schedule(&d.sd, 0));
	cr_assert(eq(uint, d.wakes[0], 2));
	driver_fini(&d);
}

/*
 * Threaded busy polling (6.19, c18d4b190a46), napi_threaded_poll():
 *	if (want_busy_poll != in_busy_poll)
 *		assign_bit(NAPI_STATE_IN_BUSY_POLL, &napi->state, want_busy_poll);
 *	napi_threaded_poll_loop(napi, want_busy_poll);
 * With IN_BUSY_POLL, napi_complete_done() returns false whatever the
 * poll found: the context is never completed, its interrupt never
 * re-armed, NET_RX never raised, and the thread polls again at once.
 * Back to enabled, the next poll that finds less than the weight
 * completes it and re-arms the interrupt, as threaded NAPI does.
 */
Test(napi, threaded_busy_poll_polls_without_end_and_never_rearms)
{
	struct sirq_napi_params busy = {
		.threaded = SIRQ_NAPI_THREADED_BUSY_POLL,
	};
	struct sirq_napi_params enabled = {
		.threaded = SIRQ_NAPI_THREADED_ENABLED,
	};
	struct driver d;
	unsigned int i;

	driver_init(&d, 1);
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &busy), 0));
	cr_assert(sirq_napi_schedule(&d.sd, 0));
	cr_assert(eq(uint, d.wakes[0], 1), "its thread woken");
	/* Empty, partial and full polls alike: none completes it. */
	for (i = 0; i < 1000; i++) {
		d.backlog[0] = i % 3 == 0 ? 0 : i % 3 == 1 ? WEIGHT / 2 :
			2 * WEIGHT;
		d.h.nlog = 0;	/* the run log holds 256 polls */
		cr_assert(sirq_napi_threaded_poll(&d.sd, 0),
			  "poll %u: not polled again", i);
		cr_assert(sirq_napi_is_scheduled(&d.sd, 0),
			  "poll %u: completed", i);
		cr_assert(sirq_napi_thread_busy(&d.sd, 0));
		cr_assert(d.sd.in_busy_poll & 1, "poll %u: not IN_BUSY_POLL", i);
	}
	cr_assert(eq(uint, d.polls, 1000));
	cr_assert(eq(uint, d.rearms[0], 0), "re-armed %u times while busy polled",
		  d.rearms[0]);
	cr_assert(eq(u64, d.sd.counters[0].irq_unmasks, 0));
	cr_assert(eq(u64, d.sd.counters[0].thread_busy_polls, 1000));
	cr_assert(eq(u64, d.sd.counters[0].thread_polls, 1000));
	cr_assert(not(net_rx_pending(&d)), "NET_RX raised");
	cr_assert(eq(uint, d.wakes[0], 1), "woken again");
	cr_assert(not(sirq_napi_schedule(&d.sd, 0)), "an interrupt scheduled it");
	/* The application's busy poller finds it held. */
	cr_assert(not(sirq_napi_busy_poll_start(&d.sd, 0, false)));

	/* Enabled again: the next poll under the weight completes it. */
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &enabled), 0),
		  "busy-poll to enabled keeps the thread: taken at any time");
	d.backlog[0] = 2 * WEIGHT;
	cr_assert(sirq_napi_threaded_poll(&d.sd, 0), "full: poll again");
	cr_assert(not(sirq_napi_thread_busy(&d.sd, 0)));
	cr_assert(not(d.sd.in_busy_poll & 1), "IN_BUSY_POLL left set");
	cr_assert(eq(uint, d.rearms[0], 0));
	cr_assert(sirq_napi_threaded_poll(&d.sd, 0), "full: poll again");
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)), "empty: completed");
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(eq(uint, d.rearms[0], 1), "completed: re-armed once");
	cr_assert(eq(u64, d.sd.counters[0].irq_unmasks, 1));
	cr_assert(eq(u64, d.sd.counters[0].thread_busy_polls, 1000));
	cr_assert(eq(u64, d.sd.counters[0].thread_polls, 1003));

	/* Busy-poll again, while idle: it starts at the next scheduling. */
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &busy), 0));
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)), "idle: not polled");
	cr_assert(eq(u64, d.sd.counters[0].thread_polls, 1003));
	cr_assert(sirq_napi_schedule(&d.sd, 0));
	cr_assert(sirq_napi_threaded_poll(&d.sd, 0));
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(eq(uint, d.rearms[0], 1));
	driver_fini(&d);
}

/*
 * A busy-polled context is never idle, so a napi-set to disabled cannot
 * wait for it to be: NET_RX takes it over as it is, scheduled, its
 * thread lets it go (not its own any more: no poll), and NET_RX's first
 * completion re-arms the interrupt. A context its thread was only woken
 * for is handed over the same way.
 */
Test(napi, threaded_busy_poll_set_to_disabled_hands_the_context_to_net_rx)
{
	struct sirq_napi_params busy = {
		.threaded = SIRQ_NAPI_THREADED_BUSY_POLL,
	};
	struct sirq_napi_params disabled = { 0 };
	struct driver d;

	driver_init(&d, 1);
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &busy), 0));
	cr_assert(sirq_napi_schedule(&d.sd, 0));
	d.backlog[0] = 10;
	cr_assert(sirq_napi_threaded_poll(&d.sd, 0));
	cr_assert(sirq_napi_threaded_poll(&d.sd, 0));
	cr_assert(eq(uint, d.rearms[0], 0));
	cr_assert(not(net_rx_pending(&d)));

	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &disabled), 0),
		  "a busy-polled context refused: it is never idle");
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0), "handed over scheduled");
	cr_assert(not(sirq_napi_thread_busy(&d.sd, 0)));
	cr_assert(not(d.sd.in_busy_poll & 1));
	cr_assert(net_rx_pending(&d), "NET_RX not raised for it");
	d.h.nlog = 0;
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)), "the thread polled NET_RX's");
	expect_no_poll(&d);
	d.backlog[0] = 5;
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(eq(uint, d.rearms[0], 1), "NET_RX's completion re-armed it");

	/* Threaded and scheduled, not busy polled: handed over the same way. */
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &busy), 0));
	busy.threaded = SIRQ_NAPI_THREADED_ENABLED;
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &busy), 0));
	cr_assert(sirq_napi_schedule(&d.sd, 0));
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &disabled), 0));
	cr_assert(net_rx_pending(&d));
	d.h.nlog = 0;
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)));
	expect_no_poll(&d);
	cr_assert(not(net_rx_action(&d)));
	EXPECT_POLLED(&d, 0);
	driver_fini(&d);
}

/*
 * NAPI_STATE_SCHED_THREADED: the thread polls only what was scheduled
 * for it. A context an application's busy poller took is that poller's,
 * even with threaded set, and stays so in busy-poll mode.
 */
Test(napi, the_thread_leaves_a_context_an_application_busy_polls)
{
	struct sirq_napi_params busy = {
		.threaded = SIRQ_NAPI_THREADED_BUSY_POLL,
	};
	struct driver d;

	driver_init(&d, 1);
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &busy), 0));
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, false), "the owner");
	cr_assert(not(sirq_napi_threaded_poll(&d.sd, 0)));
	expect_no_poll(&d);
	cr_assert(not(sirq_napi_thread_busy(&d.sd, 0)));
	cr_assert(eq(u64, d.sd.counters[0].thread_polls, 0));
	sirq_napi_busy_poll_stop(&d.sd, 0, false, BUSY_POLL_BUDGET);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(eq(uint, d.rearms[0], 1));
	driver_fini(&d);
}

/* netdev-genl's names; the boolean's spellings; nothing else. */
Test(napi, napi_threaded_names_and_values)
{
	static const char *const bad[] = {
		"", "busy", "busy_poll", "Enabled", "3", "-1", "on", " 1", "1 ",
	};
	struct sirq_napi_params p = { .threaded = SIRQ_NAPI_THREADED_MAX };
	struct driver d;
	unsigned int i;

	cr_assert(eq(str, (char *)sirq_napi_threaded_name(SIRQ_NAPI_THREADED_DISABLED),
		     "disabled"));
	cr_assert(eq(str, (char *)sirq_napi_threaded_name(SIRQ_NAPI_THREADED_ENABLED),
		     "enabled"));
	cr_assert(eq(str, (char *)sirq_napi_threaded_name(SIRQ_NAPI_THREADED_BUSY_POLL),
		     "busy-poll"));
	cr_assert(sirq_napi_threaded_name(SIRQ_NAPI_THREADED_MAX) == NULL);
	cr_assert(sirq_napi_threaded_name((enum sirq_napi_threaded)-1) == NULL);
	for (i = 0; i < SIRQ_NAPI_THREADED_MAX; i++)
		cr_assert(eq(int, sirq_napi_threaded_from_name(
				     sirq_napi_threaded_name(i)), (int)i));
	cr_assert(eq(int, sirq_napi_threaded_from_name("0"), 0));
	cr_assert(eq(int, sirq_napi_threaded_from_name("1"), 1));
	cr_assert(eq(int, sirq_napi_threaded_from_name("2"), 2));
	cr_assert(eq(int, sirq_napi_threaded_from_name("false"), 0));
	cr_assert(eq(int, sirq_napi_threaded_from_name("true"), 1));
	cr_assert(eq(int, sirq_napi_threaded_from_name("no"), 0));
	cr_assert(eq(int, sirq_napi_threaded_from_name("yes"), 1));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(eq(int, sirq_napi_threaded_from_name(bad[i]), -EINVAL),
			  "'%s' taken", bad[i]);
	cr_assert(eq(int, sirq_napi_threaded_from_name(NULL), -EINVAL));

	/* The field's old type: true is enabled. */
	cr_assert(eq(int, (int)(uint8_t)true, SIRQ_NAPI_THREADED_ENABLED));
	cr_assert(eq(sz, sizeof(p.threaded), sizeof(bool)));

	driver_init(&d, 1);
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &p), -EINVAL),
		  "threaded %u taken", p.threaded);
	p.threaded = 255;
	cr_assert(eq(int, sirq_napi_set_cfg(&d.sd, 0, &p), -EINVAL));
	cr_assert(eq(u8, d.sd.cfg[0].threaded, 0), "changed all the same");
	driver_fini(&d);
}

/*
 * napi_watchdog(): if (!napi_disable_pending(napi) &&
 * !test_and_set_bit(NAPI_STATE_SCHED, &napi->state)) {
 * clear_bit(NAPI_STATE_PREFER_BUSY_POLL, &napi->state);
 * __napi_schedule_irqoff(napi); }. A second busy poller that could not
 * take the context marked it; the owner's busy_poll_stop() left it idle
 * and masked under the timer (skip_schedule clears NAPI_STATE_SCHED
 * only). The timer schedules it with the mark cleared, so NET_RX keeps a
 * full context on its repoll list instead of completing it.
 */
Test(napi, napi_watchdog_clears_prefer_busy_poll_of_the_napi_it_schedules)
{
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, true), "the owner");
	cr_assert(not(sirq_napi_busy_poll_start(&d.sd, 0, true)),
		  "a second poller");
	cr_assert(prefers_busy_poll(&d, 0));
	d.backlog[0] = 10 * WEIGHT;
	cr_assert(eq(uint, sirq_napi_busy_poll_stop(&d.sd, 0, true,
						    BUSY_POLL_BUDGET),
		     BUSY_POLL_BUDGET), "a full last poll");
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(irq_off(&d, 0));
	cr_assert(prefers_busy_poll(&d, 0),
		  "__busy_poll_stop() keeps the mark");

	expect_timer_fires_at(&d, T0 + GRO_FLUSH_TIMEOUT);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(not(prefers_busy_poll(&d, 0)), "cleared by the watchdog");
	cr_assert(eq(u64, d.sd.counters[0].watchdog, 1));
	cr_assert(net_rx_action(&d), "a full poll: repolled");
	EXPECT_POLLED(&d, 0);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0),
		  "not completed: no deferral");
	driver_fini(&d);
}

/*
 * napi_watchdog(): test_and_set_bit(NAPI_STATE_SCHED) fails on a context
 * someone holds, here a busy poller that took it while its deferral
 * timer was armed: the hrtimer expires (HRTIMER_NORESTART) and schedules
 * nothing, the owner keeps the context, and a second poller's
 * PREFER_BUSY_POLL mark stays (its clear_bit() is under the same if).
 */
Test(napi, napi_watchdog_does_not_schedule_a_napi_already_scheduled_but_expires)
{
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT, 0);
	d.backlog[0] = 10;
	sirq_napi_schedule(&d.sd, 0);
	cr_assert(not(net_rx_action(&d)));
	cr_assert(irq_off(&d, 0), "deferred");

	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, false), "the owner");
	cr_assert(not(sirq_napi_busy_poll_start(&d.sd, 0, true)),
		  "a second poller");
	expect_timer_fires_at(&d, T0 + GRO_FLUSH_TIMEOUT);
	cr_assert(not(net_rx_pending(&d)), "not scheduled again");
	cr_assert(eq(u64, d.sd.counters[0].watchdog, 0));
	cr_assert(prefers_busy_poll(&d, 0), "the second poller's mark stays");
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd), 0), "expired");
	cr_assert(eq(uint, sirq_softnet_timers(&d.sd), 0), "once");
	cr_assert(not(net_rx_action(&d)));
	expect_no_poll(&d);
	cr_assert(sirq_napi_is_scheduled(&d.sd, 0), "still the owner's");
	driver_fini(&d);
}

/*
 * __napi_busy_loop(): the cmpxchg that takes an idle context sets
 * NAPIF_STATE_IN_BUSY_POLL | NAPIF_STATE_SCHED, nothing else;
 *	if (flags & NAPI_F_PREFER_BUSY_POLL)
 *		set_bit(NAPI_STATE_PREFER_BUSY_POLL, &napi->state);
 * is on the paths that fail to take it (goto count), to make whoever
 * holds the context (NET_RX, the timer's schedule) stand aside.
 */
Test(napi, busy_poll_marks_prefer_busy_poll_only_when_it_cannot_take_it)
{
	struct driver d;

	driver_init(&d, 2);
	sirq_napi_schedule(&d.sd, 1);
	cr_assert(not(sirq_napi_busy_poll_start(&d.sd, 1, true)));
	cr_assert(prefers_busy_poll(&d, 1), "held by NET_RX: marked");
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, true));
	cr_assert(not(prefers_busy_poll(&d, 0)),
		  "taken by the poller: not marked");
	driver_fini(&d);
}

/*
 * busy_poll_stop() with prefer and irq_suspend_timeout: the hrtimer is
 * started at irq_suspend_timeout and napi->defer_hard_irqs_count is not
 * touched (only when irq_suspend_timeout is 0). Its last poll completes
 * through the driver's napi_complete_done(), where
 * napi_prefer_busy_poll(n) is false (the poller took the context, it
 * did not mark it): an empty last poll with no deferral left returns
 * true and the driver turns its interrupt back on; the hrtimer stays
 * armed (napi_complete_done() starts none and cancels none).
 */
Test(napi, busy_poll_stop_empty_last_poll_rearms_when_no_deferral_is_left)
{
	struct driver d;

	driver_init(&d, 1);
	napi_set(&d, 0, DEFER_HARD_IRQS, GRO_FLUSH_TIMEOUT,
		 IRQ_SUSPEND_TIMEOUT);
	cr_assert(sirq_napi_busy_poll_start(&d.sd, 0, true));
	d.backlog[0] = BUSY_POLL_BUDGET;
	cr_assert(eq(uint, sirq_napi_busy_poll_once(&d.sd, 0,
						    BUSY_POLL_BUDGET),
		     BUSY_POLL_BUDGET));

	cr_assert(eq(uint, sirq_napi_busy_poll_stop(&d.sd, 0, true,
						    BUSY_POLL_BUDGET), 0));
	EXPECT_POLLED(&d, 0, 0);
	cr_assert(not(sirq_napi_is_scheduled(&d.sd, 0)));
	cr_assert(eq(uint, d.rearms[0], 1),
		  "napi_complete_done() returned true: the driver re-arms");
	cr_assert(not(irq_off(&d, 0)));
	cr_assert(eq(u64, sirq_softnet_next_timer(&d.sd),
		     T0 + IRQ_SUSPEND_TIMEOUT),
		  "busy_poll_stop()'s hrtimer stays armed");
	driver_fini(&d);
}
