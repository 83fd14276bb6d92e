/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * One simulated CPU: the engine's environment (clock, worker wake-up,
 * need_resched), the dispatcher, the application's threads, the worker,
 * and the event loop that runs them in time order.
 */

#include <errno.h>
#include <string.h>

#include "sim.h"

/*
 * The engine's environment.
 */
static uint64_t
sim_clock_ns(void *ctx)
{
	return ((const struct sim *)ctx)->now / PS_PER_NS;
}

static void
sim_wake_worker(void *ctx)
{
	struct sim *s = ctx;

	task_wake(s, TASK_WORKER);
}

static bool
sim_need_resched(void *ctx)
{
	return ((const struct sim *)ctx)->app_runnable > 0;
}

/*
 * The dispatcher: a hardirq on top of whatever runs, then irq_exit().
 */
static uint64_t
next_irq(const struct sim *s)
{
	uint64_t t = s->next_irq_tick;

	if (s->nic.irq_armed)
		t = min_u64(t, s->nic.irq_at);
	return t;
}

static void
dispatcher_irq(struct sim *s)
{
	uint64_t t0 = s->now;

	if (s->nic.irq_armed && s->nic.irq_at <= s->now)
		s->nic.irq_armed = false;	/* NAPI masks it until complete */
	nic_sync(s);
	/* A scheduled context is NET_RX's: its "interrupt" is masked. */
	if (s->nic.ring.pkts > 0)
		sirq_napi_schedule(&s->softnet, s->nic.napi);
	sirq_irq_exit(s->cpu);
	s->irq_ps += s->now - t0;
	if (s->next_irq_tick <= s->now)
		s->next_irq_tick = s->now + s->c->irq_tick_ps;
}

/*
 * The application's threads.
 */
static uint64_t
app_gap(struct sim *s, struct app_thread *a)
{
	if (!s->c->app_random)
		return s->c->app_period_ps;
	return prng_next(&a->prng) % (2 * s->c->app_period_ps + 1);
}

static bool
app_steady(const struct sim *s)
{
	return s->c->app_hold_ps >= s->c->app_period_ps;
}

static void
app_wake_due(struct sim *s)
{
	uint32_t i;

	for (i = 0; i < s->c->app_threads; i++) {
		struct app_thread *a = &s->app[i];

		if (s->task[i].runnable || a->next_wake > s->now)
			continue;
		a->left_ps = app_steady(s) ? TIME_NEVER : s->c->app_hold_ps;
		a->bursts++;
		s->app_runnable++;
		task_wake(s, (int)i);
	}
}

static uint64_t
app_next_wake(const struct sim *s)
{
	uint64_t t = TIME_NEVER;
	uint32_t i;

	for (i = 0; i < s->c->app_threads; i++)
		if (!s->task[i].runnable)
			t = min_u64(t, s->app[i].next_wake);
	return t;
}

/* Its burst is done: sleep to the next point of its schedule. */
static void
app_burst_done(struct sim *s, int i)
{
	struct app_thread *a = &s->app[i];

	if (a->next_wake < s->now)
		a->next_wake = s->now;
	a->next_wake += app_gap(s, a);
	s->app_runnable--;
	task_sleep(s, i);
}

/*
 * The loop: events in time order. Hardirqs first, then the scheduler
 * tick, then the current task until the next event.
 */
static uint64_t
next_event(const struct sim *s)
{
	uint64_t t = min_u64(next_irq(s), s->next_sched_tick);

	t = min_u64(t, app_next_wake(s));
	return min_u64(t, s->end);
}

static void
run_app(struct sim *s, int i)
{
	struct app_thread *a = &s->app[i];
	uint64_t q = next_event(s) - s->now;

	q = min_u64(q, a->left_ps);
	s->now += q;
	charge(s, i, q, true);
	if (a->left_ps != TIME_NEVER)
		a->left_ps -= q;
	if (a->left_ps == 0)
		app_burst_done(s, i);
}

/*
 * One call of sirq_worker_run() on the CPU. sirqd runs the pass boosted
 * to SCHED_FIFO: the fair class dequeues it (keeping its lag) and places
 * it again afterwards, and the pass does not move its vruntime; then it
 * calls sched_yield(). The kernel's ksoftirqd runs the pass as fair time
 * and calls cond_resched(), which switches only if the scheduler asked.
 */
static void
run_worker(struct sim *s)
{
	bool sirqd = s->c->worker == WORKER_SIRQD;
	enum sirq_worker_status st;
	uint64_t t0 = s->now;

	if (sirqd)
		task_sleep(s, TASK_WORKER);
	st = sirq_worker_run(s->cpu);
	charge(s, TASK_WORKER, s->now - t0, !sirqd);
	if (st == SIRQ_WORKER_SLEEP || st == SIRQ_WORKER_EXIT) {
		if (!sirqd)
			task_sleep(s, TASK_WORKER);
	} else if (sirqd) {
		task_wake(s, TASK_WORKER);
		task_yield(s, TASK_WORKER);
	}
}

void
sim_run(struct sim *s)
{
	while (s->now < s->end) {
		app_wake_due(s);
		if (s->now >= next_irq(s)) {
			dispatcher_irq(s);
			continue;
		}
		if (s->now >= s->next_sched_tick) {
			update_deadline(s);	/* scheduler_tick() */
			s->next_sched_tick += PS_PER_S / s->c->sched_hz;
			continue;
		}
		if (s->resched || s->curr == TASK_IDLE)
			schedule(s);
		if (s->curr == TASK_IDLE) {
			uint64_t t = next_event(s);

			s->idle_ps += t - s->now;
			s->now = t;
		} else if (s->curr == TASK_WORKER) {
			run_worker(s);
		} else {
			run_app(s, s->curr);
		}
	}
}

int
sim_init(struct sim *s, const struct sim_conf *c)
{
	struct sirq_cpu_conf conf = { .name = "sim" };
	struct sirq_softnet_conf sdc = {
		.budget = SIRQ_NETDEV_BUDGET_DEFAULT,
		.budget_usecs = SIRQ_NETDEV_BUDGET_US_DEFAULT,
		.poll = nic_napi_poll,
		.poll_ctx = s,
		.time_squeeze = &s->time_squeeze,
		.budget_exhausted = &s->budget_exhausted,
	};
	uint32_t i;
	int napi;

	memset(s, 0, sizeof(*s));
	s->c = c;
	s->start = SIM_EPOCH_PS;
	s->now = s->start;
	s->end = s->start + c->duration_ps;
	s->next_irq_tick = s->start;
	s->next_sched_tick = s->start;
	s->curr = TASK_IDLE;

	s->nic.prng = c->seed;
	s->nic.dt_ps = c->rate_pps == 0 ? 0 :
		(PS_PER_S + c->rate_pps / 2) / c->rate_pps;
	s->nic.next_train = s->start + range_draw(&s->nic.prng, c->train_gap_ps);
	if (pktq_init(&s->nic.ring, c->ring) != 0 ||
	    pktq_init(&s->txbuf, (uint64_t)c->ring + SIRQ_TX_BURST) != 0)
		return -ENOMEM;

	for (i = 0; i < NB_TASKS; i++)
		s->task[i].weight = nice_weight(c->app_nice);
	s->task[TASK_WORKER].weight = nice_weight(c->worker_nice);
	s->task[TASK_WORKER].name = "worker";
	for (i = 0; i < c->app_threads; i++) {
		struct app_thread *a = &s->app[i];

		s->task[i].name = "app";
		/* One stream per thread, the same on every run. */
		a->prng = (c->seed ^ APP_SEED_SALT) + i;
		/* A steady load wants the CPU from the start. */
		a->next_wake = s->start +
			(app_steady(s) ? 0 : app_gap(s, a));
	}

	sirq_params_default(&conf.params);
	conf.params.policy = c->policy;
	conf.params.tick_hz = c->tick_hz;
	conf.ops.clock_ns = sim_clock_ns;
	conf.ops.wake_worker = sim_wake_worker;
	conf.ops.need_resched = sim_need_resched;
	conf.ops.ctx = s;
	s->cpu = sirq_cpu_create(&conf);
	if (s->cpu == NULL)
		return -errno;
	if (sirq_register(s->cpu, SIRQ_NET_RX, net_rx_action, s, NULL) != 0 ||
	    sirq_register(s->cpu, SIRQ_NET_TX, net_tx_action, s, NULL) != 0)
		return -EINVAL;
	sdc.cpu = s->cpu;
	if (sirq_softnet_init(&s->softnet, &sdc) != 0)
		return -EINVAL;
	napi = sirq_napi_add(&s->softnet, SIRQ_NAPI_WEIGHT_DEFAULT);
	if (napi < 0)
		return napi;
	s->nic.napi = (uint16_t)napi;
	nic_arm_irq(s);
	return 0;
}

void
sim_fini(struct sim *s)
{
	if (s->cpu != NULL) {
		sirq_worker_park(s->cpu);
		sirq_cpu_free(s->cpu);
	}
	pktq_fini(&s->nic.ring);
	pktq_fini(&s->txbuf);
}

