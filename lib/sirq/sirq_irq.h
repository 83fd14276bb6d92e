/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_IRQ_H
#define SIRQ_IRQ_H

/*
 * Internal to libsirq: the dispatcher's "interrupt line", how it sleeps
 * and who wakes it: the kick eventfd (a raise from another thread, a
 * stop, sirqd going idle), in irq mode the epoll set of the kick and the
 * Rx interrupts, the SCHED_FIFO priority, and the wake-ups that threads
 * owe a sleeping dispatcher (a NAPI timer armed sooner than its sleep
 * ends, the execution lock let go of while it wants it back). Not
 * installed.
 *
 * It knows nothing of lcores, queues or policies: what to look at and
 * how long to sleep is the dispatcher's (sirq_lcore.c, both loops).
 * It sits below every other room of the binding: it includes none of
 * their headers, only the engine's (the execution lock, the NAPI
 * timers).
 */

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "sirq_napi_core.h"
#include "sirq_private.h"

struct rte_rcu_qsbr;

struct sirq_irq {
	int kick_fd;			/* eventfd that wakes the dispatcher */
	int epoll_fd;			/* irq mode: kick and Rx interrupts */
	unsigned int lcore_id;		/* for logs */
	/*
	 * irq mode: the dispatcher sleeps at SCHED_FIFO, so a kick preempts
	 * whoever runs at once; poll mode: it is a fair-class thread.
	 */
	bool fifo;
	/* The dispatcher sleeps until then (ns, sirq_now_ns()); 0: awake. */
	uint64_t sleep_until;
	/*
	 * irq mode: the dispatcher sleeps until the scheduler tick, because
	 * no look was needed; whoever makes one needed again wakes it
	 * (sirq_irq_tick_sleep_end()).
	 */
	uint32_t tick_sleep;
	/*
	 * The dispatcher's last look found the execution lock busy and
	 * wants it: a NAPI thread or busy poller that lets go of it kicks
	 * the dispatcher and yields (sirq_irq_lock_handback()).
	 */
	uint32_t lock_wanted;
	/* The dispatcher's RCU reader, offline while it sleeps; optional. */
	struct rte_rcu_qsbr *qsbr;
	unsigned int qsbr_id;
	/* irq mode: the dispatcher's scheduling before sirq_irq_setup(). */
	int saved_policy;
	struct sched_param saved_param;
};

int sirq_irq_init(struct sirq_irq *irq, unsigned int lcore_id, bool fifo,
		  struct rte_rcu_qsbr *qsbr, unsigned int qsbr_id);
void sirq_irq_fini(struct sirq_irq *irq);
void sirq_irq_kick(struct sirq_irq *irq);
void sirq_irq_wait_kick(struct sirq_irq *irq, uint64_t timeout_ns);

/* irq mode's set-up, in this order, and its undoing. */
int sirq_irq_setup(struct sirq_irq *irq);
int sirq_irq_watch(struct sirq_irq *irq, int fd, uint32_t tag);
void sirq_irq_fifo(struct sirq_irq *irq, int priority);
void sirq_irq_teardown(struct sirq_irq *irq);

void sirq_irq_sleep_begin(struct sirq_irq *irq, uint64_t until);
bool sirq_irq_sleep(struct sirq_irq *irq, uint64_t sleep_ns,
		    uint64_t *rx_fired);

void sirq_irq_napi_timer(struct sirq_irq *irq, const struct sirq_softnet *sd);
void sirq_irq_lock_handback(struct sirq_irq *irq, const struct sirq_cpu *cpu);

/* The dispatcher's look found the execution lock busy: it wants it back. */
static inline void
sirq_irq_want_lock(struct sirq_irq *irq)
{
	__atomic_store_n(&irq->lock_wanted, 1, __ATOMIC_RELAXED);
}

/*
 * irq mode: the dispatcher is about to sleep until the tick. The flag,
 * then its look again: pairs with the fence of sirq_irq_tick_sleep_end()'s
 * caller.
 */
static inline void
sirq_irq_tick_sleep_begin(struct sirq_irq *irq)
{
	__atomic_store_n(&irq->tick_sleep, 1, __ATOMIC_SEQ_CST);
}

/* ... and does not after all: its second look found work. */
static inline void
sirq_irq_tick_sleep_cancel(struct sirq_irq *irq)
{
	__atomic_store_n(&irq->tick_sleep, 0, __ATOMIC_RELAXED);
}

/* Does the dispatcher sleep until the tick (a racy look)? */
static inline bool
sirq_irq_tick_sleeping(const struct sirq_irq *irq)
{
	return __atomic_load_n(&irq->tick_sleep, __ATOMIC_RELAXED) != 0;
}

/* A look is needed again: a dispatcher sleeping until the tick wakes. */
static inline void
sirq_irq_tick_sleep_end(struct sirq_irq *irq)
{
	if (__atomic_exchange_n(&irq->tick_sleep, 0, __ATOMIC_RELAXED) != 0)
		sirq_irq_kick(irq);
}

#endif /* SIRQ_IRQ_H */
