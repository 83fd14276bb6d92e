/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * One simulated CPU: the engine's environment (clock, worker wake-up,
 * need_resched, the softirq threads' wake-up and lock wait), the
 * dispatcher, the application's threads, the worker, the models'
 * softirq threads, and the event loop that runs them in time order.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
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

/* A raise woke a softirq thread (idle to runnable in the engine). */
static void
sim_thread_wake(void *ctx, unsigned int thread)
{
	struct sim *s = ctx;
	int i = thread < SIRQ_MAX_VECTORS ? s->thread_task[thread] : TASK_IDLE;

	if (i == TASK_IDLE)
		return;
	s->task[i].wakeups++;
	task_wake(s, i);
}

/* Handler runs and time, in the context that runs them now. */
void
handler_account(struct sim *s, unsigned int vec, uint64_t t0)
{
	uint64_t ps = s->now - t0;

	if (s->ctx == TASK_IRQ) {
		s->irq_vec_runs[vec]++;
		s->irq_vec_ps[vec] += ps;
	} else if (s->ctx >= 0) {
		s->task[s->ctx].vec_runs[vec]++;
		s->task[s->ctx].vec_ps[vec] += ps;
	}
}

/*
 * The periodic timer, on TIMER: due every --timer-us, raised by the
 * first dispatcher tick at or after that (as the binding's tick looks at
 * its rte_timer list, or the kernel's at its timer wheel). Its handler
 * costs --timer-cost-ns; a run later than the next due time skips the
 * periods it missed.
 */
static void
timer_action(struct sirq_cpu *cpu, void *arg)
{
	struct sim *s = arg;
	uint64_t t0 = s->now, due = s->timer_raised_due;

	(void)cpu;
	if (due == TIME_NEVER)
		return;
	hist_add_linear(&s->lat_timer, t0 - due, 0, 1);
	s->now += s->c->timer_cost_ps;
	s->timer_runs++;
	due += s->c->timer_period_ps;
	while (due <= t0)
		due += s->c->timer_period_ps;
	s->timer_due = due;
	s->timer_raised_due = TIME_NEVER;
	handler_account(s, SIRQ_TIMER, t0);
}

static void
timer_poll(struct sim *s)
{
	if (s->timer_due > s->now)
		return;
	s->timer_raised_due = s->timer_due;
	s->timer_due = TIME_NEVER;
	sirq_raise_irqoff(s->cpu, SIRQ_TIMER);
}

/*
 * The BH lock. Only application threads hold it across simulated time
 * (their sections, through their agents: bh.c); the dispatcher, the
 * worker and the softirq threads take it for a pass or a round, which
 * the simulator runs at once. So a wait is one of a softirq thread's
 * rounds (or another application thread's section) finding a section
 * under way.
 */
static void app_bh_end(struct sim *s, int i, bool fair_time);
static void app_burst_done(struct sim *s, int i);

/* Tasks that found the lock held (SIRQ_WORKER_BUSY) run again now. */
static void
bh_release_waiters(struct sim *s)
{
	unsigned int k;

	for (k = 0; k < s->nb_active; k++) {
		int i = s->active[k];

		if (!s->task[i].bh_wait)
			continue;
		s->task[i].bh_wait = false;
		task_wake(s, i);
	}
}

/*
 * ops.lock_wait: the calling context waits for the BH lock that an
 * application thread's section holds. Priority inheritance, as the
 * rtmutex under PREEMPT_RT's BH lock has it: the holder runs at the
 * waiter's priority until it releases. The waiter was the task the
 * scheduler chose, so the holder runs now: the rest of its section
 * (SCHED_FIFO time if the waiter is a SCHED_FIFO thread), then its
 * sirq_bh_enable(), which hands the lock over. No hardirq is taken
 * meanwhile, as none is during a pass. Called on the waiter's OS thread
 * (the main one, or a waiting application thread's agent); the engine
 * looks at the lock again when this returns.
 */
static void
sim_lock_wait(void *ctx, uintptr_t holder)
{
	struct sim *s = ctx;
	int waiter = s->ctx, h = s->bh_holder;
	uint64_t t0 = s->now, rest;
	struct app_thread *a;
	bool fifo_waiter;

	(void)holder;
	s->lock_waits++;
	if (h == TASK_IDLE)
		return;		/* released already */
	fifo_waiter = waiter >= 0 && s->task[waiter].prio > 0;
	a = &s->app[h];
	rest = min_u64(a->bh_left_ps, a->left_ps);
	s->now += rest;
	charge(s, h, rest, !fifo_waiter);
	if (a->left_ps != TIME_NEVER)
		a->left_ps -= rest;
	a->bh_left_ps -= rest;
	app_bh_end(s, h, !fifo_waiter);
	if (a->left_ps == 0)
		app_burst_done(s, h);
	s->pi_ps += s->now - t0;
	if (waiter >= 0) {
		s->task[waiter].lock_waits++;
		s->task[waiter].lock_wait_ps += s->now - t0;
	}
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
	s->ctx = TASK_IRQ;
	if (s->c->timer_period_ps != 0)
		timer_poll(s);
	/* A scheduled context is NET_RX's: its "interrupt" is masked. */
	if (s->nic.ring.pkts > 0)
		sirq_napi_schedule(&s->softnet, s->nic.napi);
	if (sirq_irq_exit(s->cpu) == SIRQ_IRQ_EXIT_RAN)
		s->irq_passes++;
	s->ctx = TASK_IDLE;
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

/*
 * A section starts: sirq_bh_disable() on the thread's agent, which may
 * wait for another thread's section (sim_lock_wait()).
 */
static void
app_bh_start(struct sim *s, int i)
{
	struct app_thread *a = &s->app[i];
	int ctx = s->ctx;

	s->ctx = i;
	bh_agent_disable(a->agent);
	s->ctx = ctx;
	a->bh_in = true;
	a->bh_left_ps = s->c->app_bh_ps;
	a->bh_sections++;
	s->bh_holder = i;
}

/*
 * A section ends: sirq_bh_enable() on the agent, which runs what is
 * pending in the thread (the kernel's local_bh_enable()), charged to it;
 * whoever found the lock held may run again.
 */
static void
app_bh_end(struct sim *s, int i, bool fair_time)
{
	struct app_thread *a = &s->app[i];
	uint64_t t0 = s->now;
	int ctx = s->ctx;

	a->bh_in = false;
	a->bh_until_ps = s->c->app_bh_every_ps - s->c->app_bh_ps;
	s->bh_holder = TASK_IDLE;
	s->ctx = i;
	bh_agent_enable(a->agent);
	s->ctx = ctx;
	charge(s, i, s->now - t0, fair_time);
	bh_release_waiters(s);
}

static void
run_app(struct sim *s, int i)
{
	struct app_thread *a = &s->app[i];
	bool bh = s->c->app_bh_ps != 0;
	uint64_t q;

	if (bh && !a->bh_in && a->bh_until_ps == 0) {
		app_bh_start(s, i);
		return;
	}
	q = min_u64(next_event(s) - s->now, a->left_ps);
	if (bh)
		q = min_u64(q, a->bh_in ? a->bh_left_ps : a->bh_until_ps);
	s->now += q;
	charge(s, i, q, true);
	if (a->left_ps != TIME_NEVER)
		a->left_ps -= q;
	if (bh && a->bh_in)
		a->bh_left_ps -= q;
	else if (bh)
		a->bh_until_ps -= q;
	/* A burst that ends inside a section ends the section. */
	if (bh && a->bh_in && (a->bh_left_ps == 0 || a->left_ps == 0))
		app_bh_end(s, i, true);
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
	struct task *w = &s->task[TASK_WORKER];
	enum sirq_worker_status st;
	uint64_t t0 = s->now;

	if (sirqd)
		task_sleep(s, TASK_WORKER);
	s->ctx = TASK_WORKER;
	st = sirq_worker_run(s->cpu);
	s->ctx = TASK_IDLE;
	w->calls++;
	charge(s, TASK_WORKER, s->now - t0, !sirqd);
	/*
	 * An application thread's section holds the lock (the worker only
	 * tries it): asleep until the section ends, still runnable for the
	 * engine.
	 */
	if (st == SIRQ_WORKER_BUSY && s->bh_holder != TASK_IDLE) {
		w->bh_busy++;
		w->bh_wait = true;
		if (!sirqd)
			task_sleep(s, TASK_WORKER);
		return;
	}
	if (st == SIRQ_WORKER_SLEEP || st == SIRQ_WORKER_EXIT) {
		if (!sirqd)
			task_sleep(s, TASK_WORKER);
	} else if (sirqd) {
		task_wake(s, TASK_WORKER);
		task_yield(s, TASK_WORKER);
	}
}

/*
 * One call of sirq_thread_run() by a softirq thread: one round of its
 * vectors, charged as sirqd's passes are (fair time for a SCHED_OTHER
 * thread), less the time a wait for the BH lock lent its holder. Asked
 * back (SIRQ_WORKER_YIELD), it stays runnable and the scheduler decides
 * when it goes on (cond_resched(); a SCHED_FIFO thread keeps the CPU).
 */
static void
run_thread(struct sim *s, int i)
{
	struct task *t = &s->task[i];
	enum sirq_worker_status st;
	uint64_t t0 = s->now, pi0 = s->pi_ps;

	s->ctx = i;
	st = sirq_thread_run(s->cpu, s->thread_lead[i - TASK_THREAD0]);
	s->ctx = TASK_IDLE;
	t->calls++;
	charge(s, i, s->now - t0 - (s->pi_ps - pi0), t->prio == 0);
	if (st == SIRQ_WORKER_YIELD)
		return;
	if (st == SIRQ_WORKER_BUSY && s->bh_holder != TASK_IDLE) {
		t->bh_busy++;
		t->bh_wait = true;
	}
	task_sleep(s, i);
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
		} else if (s->curr >= TASK_THREAD0) {
			run_thread(s, s->curr);
		} else {
			run_app(s, s->curr);
		}
	}
}

/* A softirq thread of the model: a task named as the kernel names it. */
static int
add_thread(struct sim *s, unsigned int lead)
{
	const struct sim_conf *c = s->c;
	unsigned int k = s->nb_threads;
	int i = TASK_THREAD0 + (int)k;
	struct task *t = &s->task[i];
	char vec[16];
	unsigned int j;

	if (k == SIM_MAX_THREADS)
		return -ENOSPC;
	snprintf(vec, sizeof(vec), "%s", sirq_vector_name(s->cpu, lead));
	for (j = 0; vec[j] != '\0'; j++)
		vec[j] = (char)tolower((unsigned char)vec[j]);
	/* rt's one thread is 6.13's ktimers/N, SCHED_FIFO 1. */
	if (c->policy == SIRQ_POLICY_RT && lead == SIRQ_TIMER) {
		snprintf(t->name, sizeof(t->name), "ktimers/0");
		t->prio = SCHED_FIFO_PRIO_MIN;
	} else {
		snprintf(t->name, sizeof(t->name), "sirq-%s/0", vec);
		t->prio = 0;
	}
	if (c->thread_sched == THREAD_SCHED_OTHER)
		t->prio = 0;
	if (c->thread_sched == THREAD_SCHED_FIFO)
		t->prio = SCHED_FIFO_PRIO_MIN;
	t->weight = nice_weight(c->thread_nice);
	s->thread_lead[k] = lead;
	s->thread_task[lead] = i;
	s->nb_threads++;
	sched_add_task(s, i);
	return sirq_thread_attach(s->cpu, lead);
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
	struct sirq_thread_ops tops = {
		.wake = sim_thread_wake,
		.lock_wait = sim_lock_wait,
		.ctx = s,
	};
	uint32_t i, want;
	int napi, ret;

	memset(s, 0, sizeof(*s));
	s->c = c;
	s->start = SIM_EPOCH_PS;
	s->now = s->start;
	s->end = s->start + c->duration_ps;
	s->next_irq_tick = s->start;
	s->next_sched_tick = s->start;
	s->curr = TASK_IDLE;
	s->ctx = TASK_IDLE;
	s->bh_holder = TASK_IDLE;
	for (i = 0; i < SIRQ_MAX_VECTORS; i++)
		s->thread_task[i] = TASK_IDLE;
	s->timer_due = c->timer_period_ps != 0 ?
		s->start + c->timer_period_ps : TIME_NEVER;
	s->timer_raised_due = TIME_NEVER;

	s->nic.prng = c->seed;
	s->nic.dt_ps = c->rate_pps == 0 ? 0 :
		(PS_PER_S + c->rate_pps / 2) / c->rate_pps;
	s->nic.next_train = s->start + range_draw(&s->nic.prng, c->train_gap_ps);
	if (pktq_init(&s->nic.ring, c->ring) != 0 ||
	    pktq_init(&s->txbuf, (uint64_t)c->ring + SIRQ_TX_BURST) != 0)
		return -ENOMEM;

	for (i = 0; i < NB_TASKS; i++)
		s->task[i].weight = nice_weight(c->app_nice);
	for (i = 0; i < c->app_threads; i++) {
		struct app_thread *a = &s->app[i];

		snprintf(s->task[i].name, sizeof(s->task[i].name), "app/%u", i);
		sched_add_task(s, (int)i);
		/* One stream per thread, the same on every run. */
		a->prng = (c->seed ^ APP_SEED_SALT) + i;
		/* A steady load wants the CPU from the start. */
		a->next_wake = s->start +
			(app_steady(s) ? 0 : app_gap(s, a));
	}
	s->task[TASK_WORKER].weight = nice_weight(c->worker_nice);
	snprintf(s->task[TASK_WORKER].name, sizeof(s->task[TASK_WORKER].name),
		 "%s", c->worker == WORKER_SIRQD ? "sirqd/0" : "ksoftirqd/0");
	sched_add_task(s, TASK_WORKER);

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
	/*
	 * NET_RX needs no BH lock: its NAPI context is polled by one runner
	 * at a time and the TX queue has a lock of its own, as the kernel's
	 * converted NAPI path (local_lock_nested_bh()). The pushdown runs it
	 * beside a bottom-half section; the other models ignore the flag.
	 * NET_TX and TIMER take the lock.
	 */
	if (sirq_register_flags(s->cpu, SIRQ_NET_RX, net_rx_action, s, NULL,
				SIRQ_VEC_BH_SAFE) != 0 ||
	    sirq_register(s->cpu, SIRQ_NET_TX, net_tx_action, s, NULL) != 0 ||
	    sirq_register(s->cpu, SIRQ_TIMER, timer_action, s, NULL) != 0)
		return -EINVAL;
	sdc.cpu = s->cpu;
	if (sirq_softnet_init(&s->softnet, &sdc) != 0)
		return -EINVAL;
	napi = sirq_napi_add(&s->softnet, SIRQ_NAPI_WEIGHT_DEFAULT);
	if (napi < 0)
		return napi;
	s->nic.napi = (uint16_t)napi;

	/*
	 * The model's softirq threads, one task per bit of
	 * sirq_threads_wanted(). The ops go in whatever the model: their
	 * lock_wait is how a section's holder learns that another
	 * application thread waits for it.
	 */
	if (sirq_thread_ops_set(s->cpu, &tops) != 0)
		return -EINVAL;
	want = sirq_threads_wanted(s->cpu);
	while (want != 0) {
		unsigned int lead = (unsigned int)__builtin_ctz(want);

		want &= want - 1;
		ret = add_thread(s, lead);
		if (ret != 0)
			return ret;
	}
	if (c->app_bh_ps != 0) {
		for (i = 0; i < c->app_threads; i++) {
			s->app[i].agent = bh_agent_start(s->cpu);
			if (s->app[i].agent == NULL)
				return -errno;
		}
	}
	nic_arm_irq(s);
	return 0;
}

void
sim_fini(struct sim *s)
{
	uint32_t i;

	for (i = 0; i < APP_MAX_THREADS; i++) {
		bh_agent_stop(s->app[i].agent);
		s->app[i].agent = NULL;
	}
	if (s->cpu != NULL) {
		sirq_worker_park(s->cpu);
		sirq_cpu_free(s->cpu);
	}
	pktq_fini(&s->nic.ring);
	pktq_fini(&s->txbuf);
}
