/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_LCORE_INTERNAL_H
#define SIRQ_LCORE_INTERNAL_H

/*
 * Internal to libsirq: struct sirq_lcore, the per-lcore state of the
 * DPDK binding, whose public face is the opaque handle of sirq.h. Not
 * installed; the name leaves sirq_lcore.h to the public binding header.
 *
 * Each room of the binding owns its types in its own header, and this
 * one puts them together; the rooms below include none of it. From the
 * bottom up:
 *  - sirq_dpdk.h: log, clock, SIRQ_ASSERT_EXCLUSIVE() (engine below);
 *  - sirq_irq.h: how the dispatcher sleeps and is woken;
 *  - sirq_tx.h: TX queues and completion;
 *  - sirq_worker.h: sirqd, which reports back through its idle and ran
 *    callbacks;
 *  - sirq_napi.h: the Rx queues (it flushes TX at the end of a poll),
 *    whose threads report back through thread_polled.
 * sirq_lcore.c, the dispatcher, calls down into all of them and is
 * called back only through those callbacks; sirq_telemetry.c reads
 * lcores from above.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_lcore.h>

#include "sirq_lcore.h"
#include "sirq_call.h"
#include "sirq_dpdk.h"
#include "sirq_irq.h"
#include "sirq_napi.h"
#include "sirq_tx.h"
#include "sirq_worker.h"

struct sirq_lcore {
	struct sirq_cpu *cpu;
	void *cpu_mem;
	unsigned int lcore_id;
	int socket;
	uint32_t stop;
	/*
	 * rte_timer_next_ticks() as the dispatcher's last "hardirq" read
	 * it, for the irq-mode sleep; -1: none, or not read (lock busy).
	 */
	int64_t timer_ticks;
	/*
	 * That "hardirq" found the execution lock busy (and said it wants
	 * it: sirq_irq_want_lock()).
	 */
	bool look_busy;
	/* napi-set against the stop: the threads start and stop under it. */
	pthread_mutex_t napi_set_lock;
	/*
	 * One napi-set at a time, across its remote call: the dispatcher
	 * never takes it, so a caller waiting under it cannot stop it.
	 */
	pthread_mutex_t napi_set_serial;

	struct sirq_rx rx;
	struct sirq_tx tx;
	struct sirqd worker;
	/*
	 * The execution model's softirq threads (ktimers/N under rt, a
	 * sirq-<vector>/N per vector under pushdown), by lead vector; each
	 * initialised at its first start (fd >= 0), closed at free only:
	 * a raise may still write to its eventfd while it stops.
	 */
	struct sirqd sthread[SIRQ_MAX_VECTORS];
	uint32_t sthreads_running;	/* under napi_set_lock */
	/* The model they were started for. */
	enum sirq_policy_id sthreads_policy;
	/* Their class and priority by lead vector; -1: the model's default. */
	/* sirq_lcore_thread_attr()'s, per lead vector; policy -1: default. */
	struct sirq_thread_attr sthread_attr[SIRQ_MAX_VECTORS];
	struct sirq_irq irq;

	/* Poll mode: the dispatcher waits for sirqd to go idle. */
	uint32_t poll_waiting;
	/*
	 * Between the start and the stop of sirq_lcore_main(): set under the
	 * lock, cleared without it; busy polls and napi-set read it under it.
	 */
	bool napi_running;
	/* Remote calls (sirq_lcore_call()), run by whoever holds the lock. */
	struct sirq_calls calls;

	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats stats __rte_cache_aligned;
};

/* Why @p p does not suit @p lc, in @p buf; NULL when it does. */
const char *sirq_lcore_params_why_invalid(const struct sirq_lcore *lc,
					  const struct sirq_lcore_params *p,
					  char *buf, size_t len);

/* The registry of lcores, for telemetry and the JSON report. */
void sirq_lcore_foreach(void (*fn)(struct sirq_lcore *lc, void *arg),
			void *arg);
void sirq_lcore_registry_lock(void);
void sirq_lcore_registry_unlock(void);
struct sirq_lcore *sirq_lcore_lookup_locked(unsigned int lcore_id);

/*
 * Is the calling thread an lcore's own (dispatcher, sirqd, softirq or
 * NAPI thread), or in a handler or bottom-half section of one? Such a
 * thread must not wait for another lcore: both could wait for each other.
 */
bool sirq_lcore_caller_is_softirq(void);

#endif /* SIRQ_LCORE_INTERNAL_H */
