/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_TX_H
#define SIRQ_TX_H

/*
 * Internal to libsirq: an lcore's TX queues, their buffers and the TX
 * completion of tracked packets. Not installed.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sirq_lcore.h"

/* A tracked packet in flight: we hold one reference until the PMD drops its. */
struct sirq_tx_inflight {
	struct rte_mbuf *m;
	struct sirq_tx_tracker *tracker;
	uint32_t len;
};

/* How a TX queue's tracked packets are seen to complete. */
enum sirq_txq_done {
	/* Not asked yet: the queue's first flush asks the PMD. */
	SIRQ_TXQ_DONE_UNKNOWN = 0,
	/*
	 * The PMD has rte_eth_tx_done_cleanup(): NET_TX has it free what
	 * the NIC is done with while a tracked packet waits, so that the
	 * refcount drops when the packet left, not when the PMD next
	 * needs descriptors.
	 */
	SIRQ_TXQ_DONE_CLEANUP,
	/* It has not (-ENOTSUP): the refcount drops when the PMD frees. */
	SIRQ_TXQ_DONE_REFCOUNT,
};

/*
 * One TX queue: the buffer a NAPI poll fills and flushes at its end, and
 * the completions to watch.
 */
struct sirq_txq {
	uint16_t port;
	uint16_t queue;
	uint16_t index;			/* in struct sirq_tx's txq[] */
	uint16_t nb_buffered;
	enum sirq_txq_done done;
	uint64_t cleanup_ns;		/* last rte_eth_tx_done_cleanup() */
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

/* The TX side of one lcore. */
struct sirq_tx {
	struct sirq_cpu *cpu;
	struct sirq_lcore_stats *stats;
	unsigned int lcore_id;
	uint16_t nb_txq;
	uint16_t nb_done_cleanup;	/* queues with SIRQ_TXQ_DONE_CLEANUP */
	uint16_t nb_done_refcount;	/* queues with SIRQ_TXQ_DONE_REFCOUNT */
	/*
	 * A NAPI poll is running: its sends are buffered, and the poll's
	 * end hands each buffer it filled (@dirty, a bit per queue) to the
	 * PMD in one burst. Lock holder only.
	 */
	bool in_poll;
	uint64_t dirty;
	struct sirq_txq *txq[SIRQ_LCORE_MAX_TXQ];
};

int sirq_tx_add_queue(struct sirq_tx *tx, uint16_t port, uint16_t queue,
		      int socket);
void sirq_txq_enqueue(struct sirq_tx *tx, struct sirq_txq *q,
		      struct rte_mbuf **pkts, uint16_t n);
int sirq_txq_track(struct sirq_txq *q, struct rte_mbuf *m,
		   struct sirq_tx_tracker *t);
void sirq_tx_poll_begin(struct sirq_tx *tx);
bool sirq_tx_tracking(const struct sirq_tx *tx);
void sirq_tx_poll_end(struct sirq_tx *tx);
bool sirq_hardirq_tx(struct sirq_tx *tx);
void sirq_net_tx_action(struct sirq_cpu *cpu, void *arg);
void sirq_tx_drain(struct sirq_tx *tx);
void sirq_tx_free(struct sirq_tx *tx);

#endif /* SIRQ_TX_H */
