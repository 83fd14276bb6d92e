/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_CALL_H
#define SIRQ_CALL_H

/*
 * Internal to libsirq: remote calls into an lcore (sirq_lcore_call()),
 * the user-space smp_call_function_single(). Another CPU's thread never
 * takes an lcore's execution lock while the lcore runs; it queues a
 * function, and whoever holds the lock at the lcore's next look (the
 * dispatcher, sirqd, a softirq or NAPI thread, all of them the lcore's
 * own) runs it. Not installed.
 */

#include <pthread.h>
#include <stdbool.h>

#include <rte_branch_prediction.h>
#include <rte_ring.h>

struct sirq_lcore;

struct sirq_calls {
	/* struct sirq_call pointers: any thread enqueues, the holder dequeues. */
	struct rte_ring *ring;
	/*
	 * "Running" for the callers: set at the start of sirq_lcore_main()
	 * and cleared at its end, under @lock; while it is clear a call
	 * runs on its caller, under @lock too, so a launch waits for it.
	 */
	pthread_mutex_t lock;
	bool open;
};

int sirq_calls_init(struct sirq_calls *q, unsigned int lcore_id, int socket);
/* At free: what is still queued fails with -ECANCELED. */
void sirq_calls_fini(struct sirq_calls *q);

/* The dispatcher, at the start and the end of sirq_lcore_main(). */
void sirq_calls_open(struct sirq_lcore *lc);
void sirq_calls_close(struct sirq_lcore *lc);

/* Is the lcore running for the callers (sirq_calls_open())? */
static inline bool
sirq_calls_running(const struct sirq_calls *q)
{
	return __atomic_load_n(&q->open, __ATOMIC_ACQUIRE);
}

void sirq_calls_run_queued(struct sirq_lcore *lc);

/* The holder of @lc's lock, at a look: run what is queued. */
static inline void
sirq_calls_run(struct sirq_lcore *lc, struct sirq_calls *q)
{
	if (unlikely(!rte_ring_empty(q->ring)))
		sirq_calls_run_queued(lc);
}

#endif /* SIRQ_CALL_H */
