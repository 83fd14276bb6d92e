/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * NAPI's accounting (sirq_napi_core.c) on the fake clock: napi_schedule,
 * napi_poll and net_rx_action as net/core/dev.c (v6.1) orders them. Each
 * test names the kernel line it holds the core to.
 *
 * The driver is a table of backlogs: a poll of context i takes
 * min(backlog[i], weight) packets, logs i, and advances the clock by
 * cost_ns per packet. net_rx_action is called directly, as NET_RX's
 * handler would, with NET_RX's pending bit cleared first so that a raise
 * by the run is seen.
 */

#include <errno.h>
#include <string.h>

#include "harness.h"
#include "sirq_napi_core.h"

#define WEIGHT 64
#define BUDGET 300			/* netdev_budget */
#define BUDGET_USECS 2000		/* netdev_budget_usecs */
#define UNREACHED_BUDGET 1000000

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
