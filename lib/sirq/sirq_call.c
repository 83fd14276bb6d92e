/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Remote calls into an lcore: the kernel's smp_call_function_single()
 * and irq_work_queue_on(), in user space.
 *
 * In the kernel only a CPU's own tasks wait for its bottom halves;
 * another CPU that must change what a CPU's softirqs use either uses RCU
 * or asks that CPU to make the change, which then runs there between
 * two handlers. A thread on another CPU that could take an lcore's
 * execution lock stopped the lcore for as long as its own scheduler
 * kept it waiting (a nice-19 control thread beside a busy loop: 4 s),
 * so such a thread is refused the lock (sirq_bh_disable(): -EXDEV) and
 * queues its function here instead. Whoever holds the lock at the
 * lcore's next look runs it: the dispatcher's look, or sirqd's, a
 * softirq thread's or a NAPI thread's before its pass, all of them the
 * lcore's own threads, running as the lcore. The caller's scheduling
 * then delays only the caller.
 */

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "sirq_lcore_internal.h"

/* struct sirq_call's state: where it is, and whether a waiter sleeps. */
enum {
	CALL_IDLE = 0,
	CALL_QUEUED = 1,
	CALL_DONE = 2,
	CALL_WHERE = 3,
	CALL_WAITER = 4,
};

/* Calls run per dequeue: a burst of the ring, on the stack. */
#define CALLS_BURST 16u

int
sirq_calls_init(struct sirq_calls *q, unsigned int lcore_id, int socket)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "sirq_calls_%u", lcore_id);
	/* Any thread queues; only the lock's holder dequeues. */
	q->ring = rte_ring_create(name, SIRQ_LCORE_CALLS_MAX, socket,
				  RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (q->ring == NULL) {
		SIRQ_LOG(ERR, "lcore %u: remote-call queue %s: %s", lcore_id,
			 name, rte_strerror(rte_errno));
		return -rte_errno;
	}
	pthread_mutex_init(&q->lock, NULL);
	q->open = false;
	return 0;
}

static void
futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/*
 * Done: the result, then the state, then the waiter's wake-up. Once the
 * state says done the call is its owner's again; a wake-up that reaches
 * memory already reused is a spurious one, which futex waiters expect.
 */
static void
call_complete(struct sirq_call *c, int result)
{
	uint32_t old;

	c->result = result;
	old = __atomic_exchange_n(&c->state, CALL_DONE, __ATOMIC_ACQ_REL);
	if (old & CALL_WAITER)
		futex_wake_all(&c->state);
}

void
sirq_calls_fini(struct sirq_calls *q)
{
	void *c;

	if (q->ring == NULL)
		return;
	/* Queued while the lcore was freed under it: nobody will run them. */
	while (rte_ring_sc_dequeue(q->ring, &c) == 0)
		call_complete(c, -ECANCELED);
	rte_ring_free(q->ring);
	q->ring = NULL;
	pthread_mutex_destroy(&q->lock);
}

/* With the lock held, as the lcore. */
static inline void
call_run(struct sirq_lcore *lc, struct sirq_call *c)
{
	int ret = c->fn(lc, c->arg);

	sirq_stat_add(&lc->stats.remote_calls, 1);
	call_complete(c, ret);
}

void
sirq_calls_run_queued(struct sirq_lcore *lc)
{
	void *burst[CALLS_BURST];
	unsigned int n, i, budget = SIRQ_LCORE_CALLS_MAX;

	SIRQ_ASSERT_EXCLUSIVE(lc->cpu, lc->lcore_id, "a remote call");
	/* At most a queue's worth: calls queued meanwhile wait a look. */
	while (budget > 0) {
		n = rte_ring_sc_dequeue_burst(lc->calls.ring, burst,
					      RTE_MIN(budget, CALLS_BURST),
					      NULL);
		if (n == 0)
			break;
		for (i = 0; i < n; i++)
			call_run(lc, burst[i]);
		budget -= n;
	}
}

/*
 * Run @c on the calling thread, bottom halves off, as the lcore: on one
 * of its own threads, or while its dispatcher does not run (under the
 * call mutex, so no launch starts meanwhile and no other thread uses the
 * lcore's mempool cache or timer list).
 */
static void
call_here(struct sirq_lcore *lc, struct sirq_call *c)
{
	unsigned int self = rte_lcore_id();
	int ret;

	ret = sirq_bh_disable(lc->cpu);
	if (ret != 0) {
		call_complete(c, ret);
		return;
	}
	RTE_PER_LCORE(_lcore_id) = lc->lcore_id;
	call_run(lc, c);
	RTE_PER_LCORE(_lcore_id) = self;
	sirq_bh_enable(lc->cpu);
}

void
sirq_calls_open(struct sirq_lcore *lc)
{
	pthread_mutex_lock(&lc->calls.lock);
	__atomic_store_n(&lc->calls.open, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lc->calls.lock);
}

/*
 * The dispatcher, before it returns: from here calls run on their
 * callers; what was queued until now runs here, on the lcore.
 */
void
sirq_calls_close(struct sirq_lcore *lc)
{
	pthread_mutex_lock(&lc->calls.lock);
	__atomic_store_n(&lc->calls.open, false, __ATOMIC_RELEASE);
	sirq_bh_disable(lc->cpu);
	sirq_calls_run_queued(lc);
	sirq_bh_enable(lc->cpu);
	pthread_mutex_unlock(&lc->calls.lock);
}

int
sirq_lcore_call_async(struct sirq_lcore *lc, struct sirq_call *c,
		      sirq_call_fn_t fn, void *arg)
{
	if (lc == NULL || c == NULL || fn == NULL) {
		SIRQ_LOG(ERR, "sirq_lcore_call_async: %s is NULL",
			 lc == NULL ? "the lcore" : c == NULL ?
			 "the call" : "the function");
		return -EINVAL;
	}
	c->fn = fn;
	c->arg = arg;
	c->result = 0;
	__atomic_store_n(&c->state, CALL_QUEUED, __ATOMIC_RELAXED);

	/* A handler of the lcore, or bottom halves off on it: now. */
	if (sirq_exec_lock_is_mine(lc->cpu)) {
		call_run(lc, c);
		return 0;
	}
	/* Its own threads wait for their own lock, as the kernel's do. */
	if (rte_lcore_id() == lc->lcore_id) {
		call_here(lc, c);
		return 0;
	}
	pthread_mutex_lock(&lc->calls.lock);
	if (!lc->calls.open) {
		call_here(lc, c);
		pthread_mutex_unlock(&lc->calls.lock);
		return 0;
	}
	if (rte_ring_mp_enqueue(lc->calls.ring, c) != 0) {
		pthread_mutex_unlock(&lc->calls.lock);
		__atomic_store_n(&c->state, CALL_IDLE, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	pthread_mutex_unlock(&lc->calls.lock);
	/* An irq-mode dispatcher, or one waiting for sirqd, may sleep. */
	sirq_irq_kick(&lc->irq);
	return 0;
}

bool
sirq_call_done(const struct sirq_call *c)
{
	return c != NULL &&
		(__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) & CALL_WHERE) ==
		CALL_DONE;
}

int
sirq_call_wait(struct sirq_call *c)
{
	uint32_t s;

	if (c == NULL)
		return -EINVAL;
	for (;;) {
		s = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		if ((s & CALL_WHERE) == CALL_DONE)
			return c->result;
		if ((s & CALL_WHERE) != CALL_QUEUED)
			return -EINVAL;		/* never given to a call */
		if (sirq_lcore_caller_is_softirq())
			return -EDEADLK;
		if (!(s & CALL_WAITER) &&
		    !__atomic_compare_exchange_n(&c->state, &s, s | CALL_WAITER,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		syscall(SYS_futex, &c->state, FUTEX_WAIT_PRIVATE,
			s | CALL_WAITER, NULL, NULL, 0);
	}
}

int
sirq_lcore_call(struct sirq_lcore *lc, sirq_call_fn_t fn, void *arg)
{
	struct sirq_call c;
	int ret;

	if (lc == NULL || fn == NULL) {
		SIRQ_LOG(ERR, "sirq_lcore_call: %s is NULL",
			 lc == NULL ? "the lcore" : "the function");
		return -EINVAL;
	}
	/* Two lcores that waited for each other would both stop. */
	if (!sirq_exec_lock_is_mine(lc->cpu) &&
	    rte_lcore_id() != lc->lcore_id && sirq_lcore_caller_is_softirq())
		return -EDEADLK;
	ret = sirq_lcore_call_async(lc, &c, fn, arg);
	if (ret != 0)
		return ret;
	return sirq_call_wait(&c);
}
