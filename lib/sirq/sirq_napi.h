/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_NAPI_H
#define SIRQ_NAPI_H

/*
 * Internal to libsirq: an lcore's Rx queues as NAPI contexts, and
 * net_rx_action(). Not installed.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_power_intrinsics.h>

#include "sirq_lcore.h"
#include "sirq_napi_core.h"
#include "sirq_tx.h"

/* Largest NAPI weight: the size of the poll's burst array on the stack. */
#define SIRQ_NAPI_WEIGHT_MAX 256

/*
 * How the "hardirq" learns that an idle queue has work: enum sirq_rx_work
 * of the public header, under the names the paths below use.
 */
enum sirq_napi_irq {
	/*
	 * rte_eth_rx_descriptor_status() says whether the next descriptor
	 * is done: no packet moves and no mbuf is allocated, so any thread
	 * may look, with or without the execution lock.
	 */
	SIRQ_NAPI_IRQ_DESC = SIRQ_RX_WORK_DESC,
	/*
	 * No descriptor status, but rte_eth_rx_queue_count(): done
	 * descriptors counted without taking them (vmxnet3). Read-only like
	 * descriptor status, so any thread may look.
	 */
	SIRQ_NAPI_IRQ_COUNT = SIRQ_RX_WORK_COUNT,
	/*
	 * Neither, but rte_eth_get_monitor_addr(): the word the
	 * PMD's next Rx descriptor is written to, and the test that says it
	 * was (virtio: the used ring's index; only PMDs whose condition is
	 * exact, see sirq_napi.c). Read like descriptor status, by any
	 * thread; the condition is taken again by NET_RX at napi_complete(),
	 * since it names the next descriptor.
	 */
	SIRQ_NAPI_IRQ_MONITOR = SIRQ_RX_WORK_MONITOR,
	/*
	 * The PMD cannot tell (net_null, net_ring, net_memif, net_tap,
	 * net_pcap): the queue is fetched into the staging array, which
	 * allocates from the lcore's mempool cache, so only the execution
	 * lock's holder may do it.
	 */
	SIRQ_NAPI_IRQ_FETCH = SIRQ_RX_WORK_FETCH,
};

/*
 * One Rx queue: the NAPI context's driver side. Its scheduling (the
 * NAPI_STATE_SCHED bit, the poll list, the weight) is the engine's
 * (sirq_napi_core.h), under the same index: while the queue is
 * scheduled its "interrupt" is masked and only NET_RX polls it, whoever
 * runs NET_RX.
 */
struct sirq_napi {
	uint16_t port;
	uint16_t queue;
	uint16_t nb_staged;		/* fetched by the "hardirq" */
	uint16_t staged_pos;		/* consumed by NET_RX */
	enum sirq_napi_irq irq;
	sirq_rx_fn_t fn;
	void *arg;
	/*
	 * SIRQ_NAPI_IRQ_MONITOR: the condition as of the last poll and the
	 * word it named before that poll's burst, written by NET_RX before
	 * napi_complete() publishes them; monitor_by_value: work is any
	 * change of that word; monitor_fire: look no further, poll.
	 */
	struct rte_power_monitor_cond pmc;
	uint64_t monitor_before;
	bool monitor_by_value;
	bool monitor_fire;
	/*
	 * irq mode: the queue's Rx interrupt (rte_eth_dev_rx_intr_*), -1
	 * without one; intr_ctl: the PMD turns it on and off (net_tap's
	 * fires whatever it is told); intr_on: it is on. Written by the
	 * lock holder: off at the first poll after the queue is scheduled,
	 * on again when it completes.
	 */
	int intr_fd;
	bool intr_ctl;
	bool intr_on;
	/*
	 * Threaded NAPI: the context's thread, "napi/<lcore>-<idx>", which
	 * sleeps on thread_fd (an eventfd written by whoever schedules the
	 * context); thread_tid for napi-get; -1 without a thread.
	 */
	pthread_t thread;
	int thread_fd;
	int thread_tid;
	bool thread_running;
	uint32_t thread_stop;
	struct sirq_rx *rx;
	struct rte_mbuf *staged[SIRQ_STAGE_SIZE];
};

/*
 * The Rx side of one lcore: its queues, and the engine's NAPI
 * accounting (newly-scheduled mask, poll list, budgets) that NET_RX
 * runs over them.
 */
struct sirq_rx {
	struct sirq_softnet sd;
	struct sirq_cpu *cpu;
	struct sirq_lcore *lc;		/* handed to the rx functions */
	struct sirq_lcore_stats *stats;
	struct sirq_tx *tx;		/* flushed at the end of each poll */
	unsigned int lcore_id;
	uint16_t weight;
	uint16_t nb_napi;
	uint16_t nb_desc;		/* queues with SIRQ_NAPI_IRQ_DESC */
	uint16_t nb_count;		/* queues with SIRQ_NAPI_IRQ_COUNT */
	uint16_t nb_monitor;		/* queues with SIRQ_NAPI_IRQ_MONITOR */
	uint16_t nb_intr;		/* queues with an Rx interrupt fd */
	/*
	 * Called by a NAPI thread each time it has let go of the execution
	 * lock after a poll, bottom halves on again: the dispatcher may want
	 * the lock back, or be asleep past a NAPI timer the poll armed. The
	 * lcore sets it; NAPI knows nothing of how the dispatcher sleeps.
	 */
	void (*thread_polled)(void *arg);
	/*
	 * Called by a NAPI thread with the lock held, before each poll: the
	 * "interrupts" that fire meanwhile (the timer, the queues), which a
	 * thread polling round after round would otherwise keep everyone
	 * from looking at. Optional; the same argument.
	 */
	void (*thread_look)(void *arg);
	void *thread_polled_arg;
	struct sirq_napi napi[SIRQ_LCORE_MAX_NAPI];
};

int sirq_rx_init(struct sirq_rx *rx, unsigned int budget,
		 unsigned int budget_us);
int sirq_rx_add_queue(struct sirq_rx *rx, uint16_t port, uint16_t queue,
		      sirq_rx_fn_t fn, void *arg);
void sirq_rx_start(struct sirq_rx *rx);
unsigned int sirq_rx_intr_start(struct sirq_rx *rx);
unsigned int sirq_hardirq_rx_desc(struct sirq_rx *rx);
unsigned int sirq_hardirq_rx_fetch(struct sirq_rx *rx);
void sirq_net_rx_action(struct sirq_cpu *cpu, void *arg);
bool sirq_rx_irq_quiet(const struct sirq_rx *rx, bool *net_rx_has);
int sirq_rx_napi_set(struct sirq_rx *rx, uint16_t idx,
		     const struct sirq_napi_params *p);
int sirq_rx_napi_thread_prepare(struct sirq_rx *rx, uint16_t idx, bool start);
int sirq_rx_napi_apply(struct sirq_rx *rx, uint16_t idx,
		       const struct sirq_napi_params *p, bool running);
bool sirq_rx_napi_thread_running(const struct sirq_rx *rx, uint16_t idx);
void sirq_rx_napi_thread_stop(struct sirq_rx *rx, uint16_t idx);
int sirq_rx_threads_start(struct sirq_rx *rx);
void sirq_rx_threads_stop(struct sirq_rx *rx);
void sirq_rx_drain(struct sirq_rx *rx);
void sirq_rx_free(struct sirq_rx *rx);

#endif /* SIRQ_NAPI_H */
