/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The scheduler: EEVDF as in Linux >= 6.6, reduced to what the policies
 * depend on, under a SCHED_FIFO class for the models' real-time threads
 * (sim.h says what is modelled).
 */

#include "sim.h"

/* sched_prio_to_weight[] of kernel/sched/core.c, nice -20 .. 19. */
static const uint32_t nice_to_weight[NICE_MAX - NICE_MIN + 1] = {
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
};

uint32_t
nice_weight(int nice)
{
	return nice_to_weight[nice - NICE_MIN];
}

static int64_t
calc_delta_fair(uint64_t ps, const struct task *t)
{
	return (int64_t)((unsigned __int128)ps * NICE_0_WEIGHT / t->weight);
}

/* A task of this run: application threads, the worker, softirq threads. */
void
sched_add_task(struct sim *s, int i)
{
	s->active[s->nb_active++] = i;
}

static bool
fair(const struct task *t)
{
	return t->prio == 0;
}

/* avg_vruntime(): the load-weighted mean vruntime of the runnable tasks. */
static int64_t
avg_vruntime(struct sim *s)
{
	__int128 sum = 0;
	int64_t load = 0;
	unsigned int k;

	for (k = 0; k < s->nb_active; k++) {
		const struct task *t = &s->task[s->active[k]];

		if (!t->runnable || !fair(t))
			continue;
		sum += (__int128)t->vruntime * t->weight;
		load += t->weight;
	}
	if (load == 0)
		return s->last_avg;
	s->last_avg = (int64_t)(sum / load);
	return s->last_avg;
}

static bool
eligible(const struct task *t, int64_t avg)
{
	return t->vruntime <= avg;
}

/*
 * The real-time class first: the runnable SCHED_FIFO task of the highest
 * priority, among equals the one runnable longest (a running one keeps
 * the CPU: FIFO has no slices). TASK_IDLE if there is none.
 */
static int
pick_fifo(const struct sim *s)
{
	int best = TASK_IDLE;
	unsigned int k;

	for (k = 0; k < s->nb_active; k++) {
		int i = s->active[k];
		const struct task *t = &s->task[i];

		if (!t->runnable || fair(t))
			continue;
		if (best == TASK_IDLE || t->prio > s->task[best].prio ||
		    (t->prio == s->task[best].prio &&
		     t->fifo_seq < s->task[best].fifo_seq))
			best = i;
	}
	return best;
}

/* pick_eevdf(): the eligible runnable task with the earliest deadline. */
static int
pick_eevdf(struct sim *s)
{
	int64_t avg = avg_vruntime(s);
	int best = TASK_IDLE;
	unsigned int k;

	if (s->curr != TASK_IDLE && s->task[s->curr].runnable &&
	    fair(&s->task[s->curr]) && s->task[s->curr].protect &&
	    eligible(&s->task[s->curr], avg))
		return s->curr;
	for (k = 0; k < s->nb_active; k++) {
		int i = s->active[k];
		const struct task *t = &s->task[i];

		if (!t->runnable || !fair(t) || !eligible(t, avg))
			continue;
		if (best == TASK_IDLE || t->deadline < s->task[best].deadline)
			best = i;
	}
	/* Rounding can leave nobody eligible: the least vruntime then. */
	for (k = 0; best == TASK_IDLE && k < s->nb_active; k++)
		if (s->task[s->active[k]].runnable &&
		    fair(&s->task[s->active[k]]))
			best = s->active[k];
	return best;
}

static int
pick_next(struct sim *s)
{
	int next = pick_fifo(s);

	return next != TASK_IDLE ? next : pick_eevdf(s);
}

void
schedule(struct sim *s)
{
	int next = pick_next(s);

	s->resched = false;
	if (next == s->curr)
		return;
	s->curr = next;
	if (next != TASK_IDLE && fair(&s->task[next]))
		s->task[next].protect = true;
}

/* CPU time of a task; fair-class time also moves its vruntime. */
void
charge(struct sim *s, int i, uint64_t ps, bool fair_time)
{
	struct task *t = &s->task[i];

	t->exec_ps += ps;
	if (fair_time)
		t->vruntime += calc_delta_fair(ps, t);
}

/*
 * update_deadline(), from update_curr(): the current task has used its
 * slice, give it the next one and reschedule. The kernel looks at the
 * scheduler tick and when tasks wake or sleep, not at every interrupt.
 * A SCHED_FIFO task has no slice.
 */
void
update_deadline(struct sim *s)
{
	struct task *t;

	if (s->curr == TASK_IDLE || !fair(&s->task[s->curr]))
		return;
	t = &s->task[s->curr];
	if (t->vruntime < t->deadline)
		return;
	t->deadline = t->vruntime + calc_delta_fair(s->c->slice_ps, t);
	t->protect = false;
	s->resched = true;
}

/*
 * A SCHED_FIFO task goes to the end of its priority's list and preempts
 * any fair task and any lower priority at once.
 */
static void
fifo_wake(struct sim *s, int i)
{
	struct task *t = &s->task[i];

	t->runnable = true;
	t->fifo_seq = ++s->fifo_seq;
	if (s->curr == TASK_IDLE || fair(&s->task[s->curr]) ||
	    !s->task[s->curr].runnable || s->task[s->curr].prio < t->prio)
		s->resched = true;
}

/*
 * place_entity() with PLACE_LAG: a waking task comes back at the average
 * minus the lag it left with (clamped, inflated by the load it joins),
 * with a full slice to its deadline. A waking task that the current one
 * no longer protects against, and that pick_eevdf() prefers, preempts.
 */
void
task_wake(struct sim *s, int i)
{
	struct task *t = &s->task[i];
	int64_t avg, load = 0, lag = t->vlag;
	unsigned int k;

	if (t->runnable)
		return;
	if (!fair(t)) {
		fifo_wake(s, i);
		return;
	}
	update_deadline(s);
	avg = avg_vruntime(s);
	for (k = 0; k < s->nb_active; k++) {
		const struct task *o = &s->task[s->active[k]];

		if (o->runnable && fair(o))
			load += o->weight;
	}
	if (load > 0)
		lag = lag * (load + t->weight) / load;
	t->vruntime = avg - lag;
	t->deadline = t->vruntime + calc_delta_fair(s->c->slice_ps, t);
	t->runnable = true;
	t->protect = false;
	if (s->curr == TASK_IDLE || pick_eevdf(s) == i)
		s->resched = true;
}

void
task_sleep(struct sim *s, int i)
{
	struct task *t = &s->task[i];
	int64_t avg, limit;

	if (!fair(t)) {
		t->runnable = false;
		if (i == s->curr)
			s->resched = true;
		return;
	}
	avg = avg_vruntime(s);
	/* The kernel's limit: two slices, at least a tick. */
	limit = calc_delta_fair(s->c->slice_ps * 2 > PS_PER_S /
				s->c->sched_hz ? s->c->slice_ps * 2 :
				PS_PER_S / s->c->sched_hz, t);
	t->vlag = avg - t->vruntime;
	if (t->vlag > limit)
		t->vlag = limit;
	if (t->vlag < -limit)
		t->vlag = -limit;
	t->runnable = false;
	t->protect = false;
	if (i == s->curr)
		s->resched = true;
}

/*
 * sched_yield(): yield_task_fair() moves the deadline one slice on; a
 * SCHED_FIFO task goes to the end of its priority's list.
 */
void
task_yield(struct sim *s, int i)
{
	struct task *t = &s->task[i];

	if (!fair(t)) {
		t->fifo_seq = ++s->fifo_seq;
		s->resched = true;
		return;
	}
	t->deadline += calc_delta_fair(s->c->slice_ps, t);
	t->protect = false;
	s->resched = true;
}
