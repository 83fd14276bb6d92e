/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The scheduler: EEVDF as in Linux >= 6.6, reduced to what the policies
 * depend on (sim.h says what is modelled).
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

static bool
task_valid(const struct sim *s, int i)
{
	return i == TASK_WORKER || (i >= 0 && (uint32_t)i < s->c->app_threads);
}

/* avg_vruntime(): the load-weighted mean vruntime of the runnable tasks. */
static int64_t
avg_vruntime(struct sim *s)
{
	__int128 sum = 0;
	int64_t load = 0;
	int i;

	for (i = 0; i < NB_TASKS; i++) {
		if (!task_valid(s, i) || !s->task[i].runnable)
			continue;
		sum += (__int128)s->task[i].vruntime * s->task[i].weight;
		load += s->task[i].weight;
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

/* pick_eevdf(): the eligible runnable task with the earliest deadline. */
static int
pick_eevdf(struct sim *s)
{
	int64_t avg = avg_vruntime(s);
	int i, best = TASK_IDLE;

	if (s->curr != TASK_IDLE && s->task[s->curr].runnable &&
	    s->task[s->curr].protect && eligible(&s->task[s->curr], avg))
		return s->curr;
	for (i = 0; i < NB_TASKS; i++) {
		const struct task *t = &s->task[i];

		if (!task_valid(s, i) || !t->runnable || !eligible(t, avg))
			continue;
		if (best == TASK_IDLE || t->deadline < s->task[best].deadline)
			best = i;
	}
	/* Rounding can leave nobody eligible: the least vruntime then. */
	for (i = 0; best == TASK_IDLE && i < NB_TASKS; i++)
		if (task_valid(s, i) && s->task[i].runnable)
			best = i;
	return best;
}

void
schedule(struct sim *s)
{
	int next = pick_eevdf(s);

	s->resched = false;
	if (next == s->curr)
		return;
	s->curr = next;
	if (next != TASK_IDLE)
		s->task[next].protect = true;
}

/* CPU time of a task; fair-class time also moves its vruntime. */
void
charge(struct sim *s, int i, uint64_t ps, bool fair)
{
	struct task *t = &s->task[i];

	t->exec_ps += ps;
	if (fair)
		t->vruntime += calc_delta_fair(ps, t);
}

/*
 * update_deadline(), from update_curr(): the current task has used its
 * slice, give it the next one and reschedule. The kernel looks at the
 * scheduler tick and when tasks wake or sleep, not at every interrupt.
 */
void
update_deadline(struct sim *s)
{
	struct task *t;

	if (s->curr == TASK_IDLE)
		return;
	t = &s->task[s->curr];
	if (t->vruntime < t->deadline)
		return;
	t->deadline = t->vruntime + calc_delta_fair(s->c->slice_ps, t);
	t->protect = false;
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
	int j;

	update_deadline(s);
	avg = avg_vruntime(s);
	for (j = 0; j < NB_TASKS; j++)
		if (task_valid(s, j) && s->task[j].runnable)
			load += s->task[j].weight;
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
	int64_t avg = avg_vruntime(s);
	/* The kernel's limit: two slices, at least a tick. */
	int64_t limit = calc_delta_fair(s->c->slice_ps * 2 > PS_PER_S /
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

/* sched_yield(): yield_task_fair() moves the deadline one slice on. */
void
task_yield(struct sim *s, int i)
{
	struct task *t = &s->task[i];

	t->deadline += calc_delta_fair(s->c->slice_ps, t);
	t->protect = false;
	s->resched = true;
}

