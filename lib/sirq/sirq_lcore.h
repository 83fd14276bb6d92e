/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_LCORE_H
#define SIRQ_LCORE_H

/*
 * Internal to libsirq: the per-lcore state of the DPDK binding, shared by
 * sirq_lcore.c and sirq_telemetry.c. Not installed.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_lcore.h>
#include <rte_log.h>

#include "sirq.h"

extern int sirq_logtype;
#define SIRQ_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, sirq_logtype, "sirq: " fmt "\n", ##__VA_ARGS__)

/* Largest NAPI weight: the size of the poll's burst array on the stack. */
#define SIRQ_NAPI_WEIGHT_MAX 256

/* One Rx queue: the NAPI context. */
struct sirq_napi {
	uint16_t port;
	uint16_t queue;
	uint16_t weight;
	uint16_t nb_staged;		/* fetched by the "hardirq" */
	uint16_t staged_pos;		/* consumed by NET_RX */
	/*
	 * NAPI_STATE_SCHED: set by the dispatcher's "hardirq" when a fetch
	 * found packets, cleared by NET_RX at napi_complete. It hands the
	 * queue and its staging array from one side to the other.
	 */
	bool scheduled;
	sirq_rx_fn_t fn;
	void *arg;
	struct rte_mbuf *staged[SIRQ_STAGE_SIZE];
};

/* A tracked packet in flight: we hold one reference until the PMD drops its. */
struct sirq_tx_inflight {
	struct rte_mbuf *m;
	struct sirq_tx_tracker *tracker;
	uint32_t len;
};

/* One TX queue: the buffer NET_TX flushes, and the completions to watch. */
struct sirq_txq {
	uint16_t port;
	uint16_t queue;
	uint16_t nb_buffered;
	struct rte_mbuf *buffer[SIRQ_TX_BURST];
	/*
	 * Tracked packets, oldest first. Written under the execution lock;
	 * the "hardirq" only peeks at the oldest (a stale peek at worst
	 * raises NET_TX once for nothing).
	 */
	uint32_t inflight_head;
	uint32_t inflight_tail;
	struct sirq_tx_inflight inflight[SIRQ_TX_TRACK_MAX];
};

struct sirq_lcore {
	struct sirq_cpu *cpu;
	void *cpu_mem;
	unsigned int lcore_id;
	int socket;
	uint32_t stop;

	/*
	 * Queues newly scheduled by the "hardirq", a bit per NAPI index; NET_RX
	 * moves them to its poll list (the kernel splices sd->poll_list with
	 * irqs off; this is that splice without the irq-off).
	 */
	uint64_t napi_ready;
	/* The poll list, a ring of NAPI indexes; NET_RX (lock holder) only. */
	uint16_t poll_head;
	uint16_t poll_len;
	uint16_t poll_list[SIRQ_LCORE_MAX_NAPI];
	uint16_t nb_napi;
	struct sirq_napi napi[SIRQ_LCORE_MAX_NAPI];

	uint16_t nb_txq;
	struct sirq_txq *txq[SIRQ_LCORE_MAX_TXQ];

	struct sirq_lcore_conf conf;
	rte_cpuset_t worker_cpus;
	pthread_t worker;
	bool worker_running;
	int worker_boost;		/* sirqd only: 0 once refused */
	bool worker_boosted;		/* sirqd only: SCHED_FIFO now */
	uint64_t worker_boost_since;	/* sirqd only: TSC */
	uint64_t worker_resched_tsc;	/* WORKER_RESCHED_NS in TSC */
	int worker_fd;			/* eventfd the worker sleeps on */
	int kick_fd;			/* eventfd that wakes an irq dispatcher */
	int epoll_fd;			/* irq mode */
	unsigned int nb_rx_intr;	/* irq mode: queues with interrupts */

	struct sirq_lcore_stats stats __rte_cache_aligned;
};

void sirq_net_rx_action(struct sirq_cpu *cpu, void *arg);
void sirq_net_tx_action(struct sirq_cpu *cpu, void *arg);
void sirq_hardirq_tx(struct sirq_lcore *lc);
void sirq_lcore_txq_free(struct sirq_lcore *lc);
void sirq_lcore_tx_drain(struct sirq_lcore *lc);

void sirq_lcore_foreach(void (*fn)(struct sirq_lcore *lc, void *arg),
			void *arg);
void sirq_lcore_registry_lock(void);
void sirq_lcore_registry_unlock(void);
struct sirq_lcore *sirq_lcore_lookup_locked(unsigned int lcore_id);

#endif /* SIRQ_LCORE_H */
