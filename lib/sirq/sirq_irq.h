/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_IRQ_H
#define SIRQ_IRQ_H

/*
 * Internal to libsirq: irq mode, the dispatcher as a SCHED_FIFO thread
 * that sleeps until an "interrupt". Not installed.
 */

#include <stdint.h>

struct sirq_lcore;

struct sirq_irq {
	int kick_fd;			/* eventfd that wakes the dispatcher */
	int epoll_fd;
	/* The dispatcher sleeps until then (ns, sirq_now_ns()); 0: awake. */
	uint64_t sleep_until;
};

int sirq_irq_init(struct sirq_irq *irq, unsigned int lcore_id);
void sirq_irq_fini(struct sirq_irq *irq);
void sirq_irq_kick(struct sirq_irq *irq);
void sirq_irq_wait_kick(struct sirq_irq *irq, uint64_t timeout_ns);
int sirq_irq_run(struct sirq_lcore *lc);
void sirq_irq_worker_ran(void *arg);
void sirq_irq_napi_timer(struct sirq_lcore *lc);
void sirq_irq_lock_handback(struct sirq_lcore *lc);

#endif /* SIRQ_IRQ_H */
