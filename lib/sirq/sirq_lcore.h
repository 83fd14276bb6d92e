/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_LCORE_H
#define SIRQ_LCORE_H

/*
 * Internal to libsirq: the per-lcore state of the DPDK binding. Each part
 * owns its types in its own header (NAPI, TX, sirqd, irq mode); this one
 * puts them together. Not installed.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_lcore.h>

#include "sirq.h"
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
	/* That "hardirq" found the execution lock busy. */
	bool look_busy;
	/*
	 * ... and wants it: a NAPI thread or busy poller that lets go of it
	 * kicks the dispatcher and yields (sirq_irq_lock_handback()).
	 */
	uint32_t lock_wanted;
	/* napi-set against the stop: the threads start and stop under it. */
	pthread_mutex_t napi_set_lock;

	struct sirq_rx rx;
	struct sirq_tx tx;
	struct sirqd worker;
	struct sirq_irq irq;

	/* Poll mode: the dispatcher waits for sirqd to go idle. */
	uint32_t poll_waiting;
	/* irq mode: the dispatcher sleeps until the tick (irq_looks_idle()). */
	uint32_t irq_tick_sleep;
	/*
	 * Between the start and the stop of sirq_lcore_main(): set under the
	 * lock, cleared without it; busy polls and napi-set read it under it.
	 */
	bool napi_running;

	struct sirq_lcore_conf conf;
	struct sirq_lcore_stats stats __rte_cache_aligned;
};

enum sirq_irq_exit_result sirq_lcore_iteration(struct sirq_lcore *lc);
enum sirq_irq_exit_result sirq_lcore_look(struct sirq_lcore *lc,
					  bool interrupted);

static inline bool
sirq_lcore_should_stop(const struct sirq_lcore *lc)
{
	return __atomic_load_n(&lc->stop, __ATOMIC_RELAXED) != 0;
}

/* Why @p p does not suit @p lc, in @p buf; NULL when it does. */
const char *sirq_lcore_params_why_invalid(const struct sirq_lcore *lc,
					  const struct sirq_lcore_params *p,
					  char *buf, size_t len);

void sirq_lcore_foreach(void (*fn)(struct sirq_lcore *lc, void *arg),
			void *arg);
void sirq_lcore_registry_lock(void);
void sirq_lcore_registry_unlock(void);
struct sirq_lcore *sirq_lcore_lookup_locked(unsigned int lcore_id);

#endif /* SIRQ_LCORE_H */
