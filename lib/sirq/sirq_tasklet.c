/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Tasklets, as in kernel/softirq.c: a function scheduled on a CPU's HI or
 * TASKLET vector, serialised against itself across all CPUs.
 *
 * Per-CPU lists are lock-free stacks: any thread pushes, the vector's
 * handler takes the whole stack at once and restores FIFO order.
 */

#include <errno.h>
#include <sched.h>

#include "sirq_private.h"

#define TASKLET_SCHED	UINT32_C(1)	/* on some CPU's list */
#define TASKLET_RUN	UINT32_C(2)	/* its function is running */
#define TASKLET_DEAD	UINT32_C(4)	/* killed: scheduling refused */
#define TASKLET_BH_SAFE	UINT32_C(8)	/* runs without the BH lock (pushdown) */

static const unsigned int list_vector[SIRQ_TASKLET_LIST_MAX] = {
	[SIRQ_TASKLET_LIST_HI] = SIRQ_HI,
	[SIRQ_TASKLET_LIST_NORMAL] = SIRQ_TASKLET,
};

static inline uint32_t
tasklet_state(const struct sirq_tasklet *t)
{
	return __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
}

static void
tasklet_push(struct sirq_cpu *cpu, enum sirq_tasklet_list l,
	     struct sirq_tasklet *t)
{
	struct sirq_tasklet *head = __atomic_load_n(&cpu->tasklets[l],
						    __ATOMIC_RELAXED);

	do {
		t->next = head;
	} while (!__atomic_compare_exchange_n(&cpu->tasklets[l], &head, t,
					      true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

void
sirq_tasklet_init(struct sirq_tasklet *t, sirq_tasklet_fn_t fn, void *arg)
{
	if (t == NULL)
		return;
	t->next = NULL;
	t->fn = fn;
	t->arg = arg;
	__atomic_store_n(&t->disable_count, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&t->state, 0, __ATOMIC_RELEASE);
}

static bool
tasklet_schedule(struct sirq_cpu *cpu, struct sirq_tasklet *t,
		 enum sirq_tasklet_list l)
{
	if (sirq_unlikely(cpu == NULL || t == NULL || t->fn == NULL))
		return false;
	/* A killed tasklet keeps SCHED set, so it is refused here too. */
	if (__atomic_fetch_or(&t->state, TASKLET_SCHED, __ATOMIC_ACQ_REL) &
	    TASKLET_SCHED)
		return false;
	tasklet_push(cpu, l, t);
	/* From a handler of this CPU nobody needs waking (raise_softirq_irqoff). */
	if (sirq_exec_lock_is_mine(cpu))
		sirq_raise_irqoff(cpu, list_vector[l]);
	else
		sirq_raise(cpu, list_vector[l]);
	return true;
}

bool
sirq_tasklet_schedule(struct sirq_cpu *cpu, struct sirq_tasklet *t)
{
	return tasklet_schedule(cpu, t, SIRQ_TASKLET_LIST_NORMAL);
}

bool
sirq_tasklet_hi_schedule(struct sirq_cpu *cpu, struct sirq_tasklet *t)
{
	return tasklet_schedule(cpu, t, SIRQ_TASKLET_LIST_HI);
}

static inline bool
tasklet_trylock(struct sirq_tasklet *t)
{
	return !(__atomic_fetch_or(&t->state, TASKLET_RUN, __ATOMIC_ACQUIRE) &
		 TASKLET_RUN);
}

static inline void
tasklet_unlock(struct sirq_tasklet *t)
{
	__atomic_fetch_and(&t->state, ~TASKLET_RUN, __ATOMIC_RELEASE);
}

static void
tasklet_unlock_wait(const struct sirq_tasklet *t)
{
	while (tasklet_state(t) & TASKLET_RUN)
		sched_yield();
}

/*
 * A tasklet's function. In a pushdown thread, which runs the tasklet
 * vectors without the BH lock, a tasklet not marked safe gets it around
 * its function, as the kernel kept the lock for code not yet converted.
 */
static inline void
tasklet_run(struct sirq_cpu *cpu, struct sirq_tasklet *t)
{
	bool lock = !(tasklet_state(t) & TASKLET_BH_SAFE) &&
		!sirq_exec_lock_is_mine(cpu);

	if (lock)
		sirq_exec_lock(cpu);
	t->fn(t, t->arg);
	if (lock)
		sirq_exec_unlock(cpu);
}

void
sirq_tasklet_set_bh_safe(struct sirq_tasklet *t, bool safe)
{
	if (t == NULL)
		return;
	if (safe)
		__atomic_fetch_or(&t->state, TASKLET_BH_SAFE, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&t->state, ~TASKLET_BH_SAFE,
				   __ATOMIC_RELEASE);
}

/*
 * tasklet_action_common(): run what is scheduled here; a tasklet that is
 * disabled, or running on another CPU, goes back on the list and the
 * vector is raised again.
 */
void
sirq_tasklet_action(struct sirq_cpu *cpu, void *arg)
{
	enum sirq_tasklet_list l = (enum sirq_tasklet_list)(uintptr_t)arg;
	struct sirq_tasklet *list, *fifo = NULL, *t;

	list = __atomic_exchange_n(&cpu->tasklets[l], NULL, __ATOMIC_ACQUIRE);
	while (list != NULL) {
		t = list;
		list = t->next;
		t->next = fifo;
		fifo = t;
	}

	while (fifo != NULL) {
		t = fifo;
		fifo = t->next;

		if (tasklet_trylock(t)) {
			if (__atomic_load_n(&t->disable_count,
					    __ATOMIC_ACQUIRE) == 0) {
				__atomic_fetch_and(&t->state, ~TASKLET_SCHED,
						   __ATOMIC_ACQ_REL);
				tasklet_run(cpu, t);
				tasklet_unlock(t);
				continue;
			}
			tasklet_unlock(t);
		}
		tasklet_push(cpu, l, t);
		sirq_raise_irqoff(cpu, list_vector[l]);
	}
}

void
sirq_tasklet_disable_nosync(struct sirq_tasklet *t)
{
	if (t == NULL)
		return;
	__atomic_fetch_add(&t->disable_count, 1, __ATOMIC_ACQ_REL);
}

void
sirq_tasklet_disable(struct sirq_tasklet *t)
{
	if (t == NULL)
		return;
	sirq_tasklet_disable_nosync(t);
	tasklet_unlock_wait(t);
}

int
sirq_tasklet_enable(struct sirq_tasklet *t)
{
	uint32_t n;

	if (t == NULL)
		return -EINVAL;
	n = __atomic_load_n(&t->disable_count, __ATOMIC_RELAXED);
	do {
		if (n == 0)
			return -EINVAL;
	} while (!__atomic_compare_exchange_n(&t->disable_count, &n, n - 1,
					      true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return 0;
}

void
sirq_tasklet_kill(struct sirq_tasklet *t)
{
	if (t == NULL)
		return;
	/* Wait for the pending run, then hold SCHED so nobody queues it. */
	while (__atomic_fetch_or(&t->state, TASKLET_SCHED, __ATOMIC_ACQ_REL) &
	       TASKLET_SCHED) {
		if (tasklet_state(t) & TASKLET_DEAD)
			return;
		sched_yield();
	}
	tasklet_unlock_wait(t);
	__atomic_fetch_or(&t->state, TASKLET_DEAD, __ATOMIC_RELEASE);
}

bool
sirq_tasklet_is_scheduled(const struct sirq_tasklet *t)
{
	return t != NULL &&
		(tasklet_state(t) & (TASKLET_SCHED | TASKLET_DEAD)) ==
		TASKLET_SCHED;
}
