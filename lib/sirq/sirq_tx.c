/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Transmit, and TX completion.
 *
 * The kernel transmits inside the NAPI poll: dev_queue_xmit() from the
 * stack, or XDP's redirect, whose flush at the end of the poll rings the
 * doorbell once (xdp_do_flush()). NET_TX is not how packets leave; it
 * runs qdisc reschedules and frees skbs completed in irq context. So
 * here: what a NAPI poll sends is buffered and handed to the PMD at the
 * poll's end, one burst per queue; a send anywhere else (a tasklet, a
 * timer, bottom halves off) goes to the PMD at once. NET_TX only
 * completes.
 *
 * The completion is learnt from the mbuf itself, which works with any
 * PMD: a tracked packet carries one extra reference of ours on every
 * segment; when the PMD has let go of it (sent and freed, or dropped)
 * the head's count is back to ours alone. The "hardirq" looks at the
 * oldest tracked packet of each queue, like a TX-completion interrupt;
 * NET_TX then releases what completed, updates the senders' trackers and
 * schedules their tasklets (TCP small queues).
 *
 * PMDs free sent mbufs lazily, when they next need descriptors (virtio:
 * once fewer than its free threshold are left), so without more traffic
 * a tracked packet may wait there long after it left. Where the PMD has
 * rte_eth_tx_done_cleanup() (most NIC PMDs and net_vhost; not virtio nor
 * the other vdevs in 22.11), NET_TX has it free what the NIC is done
 * with while a tracked packet waits, as a NIC driver's NAPI poll cleans
 * its TX ring on the TX-completion interrupt. TX descriptor status is
 * not used: it counts descriptors from the ring's tail, which PMDs round
 * to their RS threshold and spend one or more of per packet, so it cannot
 * say that a given packet's descriptor is done.
 */

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "sirq_dpdk.h"
#include "sirq_tx.h"

/*
 * How often a queue's PMD is asked to clean while a tracked packet waits
 * in it: the TX interrupt moderation of a NIC, here ice's default
 * (ICE_DFLT_TX_ITR, 50 us, about 20 000 interrupts/s). A cleanup that
 * finds nothing done costs a descriptor read, and an irq-mode dispatcher
 * must not loop on one without sleeping.
 */
#define SIRQ_TX_CLEANUP_INTERVAL_NS (50 * SIRQ_NS_PER_US)

int
sirq_tx_add_queue(struct sirq_tx *tx, uint16_t port, uint16_t queue,
		  int socket)
{
	struct sirq_txq *q;

	if (tx->nb_txq >= SIRQ_LCORE_MAX_TXQ)
		return -ENOSPC;
	q = rte_zmalloc_socket("sirq_txq", sizeof(*q), RTE_CACHE_LINE_SIZE,
			       socket);
	if (q == NULL)
		return -ENOMEM;
	q->port = port;
	q->queue = queue;
	q->index = tx->nb_txq;
	tx->txq[tx->nb_txq] = q;
	return tx->nb_txq++;
}

/* Have the PMD free every mbuf the NIC is done with (free_cnt 0: all). */
static int
txq_done_cleanup(struct sirq_tx *tx, struct sirq_txq *q)
{
	int ret;

	SIRQ_ASSERT_EXCLUSIVE(tx->cpu, tx->lcore_id, "TX done cleanup");
	ret = rte_eth_tx_done_cleanup(q->port, q->queue, 0);
	q->cleanup_ns = sirq_now_ns();
	if (ret >= 0) {
		sirq_stat_add(&tx->stats->tx_done_cleanup_calls, 1);
		sirq_stat_add(&tx->stats->tx_done_cleanup_pkts, (uint64_t)ret);
	}
	return ret;
}

int
sirq_tx_queue_cleanup(uint16_t port, uint16_t queue)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0 || queue >= info.nb_tx_queues)
		return -EINVAL;
	return rte_eth_tx_done_cleanup(port, queue, 0) >= 0;
}

/*
 * The first flush of a queue asks its PMD: cleanup or refcount? (NET_TX
 * need not run: a burst that fills the buffer is flushed at once.)
 */
static void
txq_probe_done(struct sirq_tx *tx, struct sirq_txq *q)
{
	if (txq_done_cleanup(tx, q) >= 0) {
		q->done = SIRQ_TXQ_DONE_CLEANUP;
		tx->nb_done_cleanup++;
	} else {
		q->done = SIRQ_TXQ_DONE_REFCOUNT;
		tx->nb_done_refcount++;
	}
	SIRQ_LOG(DEBUG, "lcore %u: port %u TX queue %u: completion by %s",
		 tx->lcore_id, q->port, q->queue,
		 q->done == SIRQ_TXQ_DONE_CLEANUP ? "tx_done_cleanup" : "refcount");
}

/* Hand the buffer to the PMD; what it refuses is dropped and counted. */
static void
txq_send(struct sirq_tx *tx, struct sirq_txq *q, struct rte_mbuf **pkts,
	 uint16_t n)
{
	uint16_t sent;

	SIRQ_ASSERT_EXCLUSIVE(tx->cpu, tx->lcore_id, "TX flush");
	if (unlikely(q->done == SIRQ_TXQ_DONE_UNKNOWN))
		txq_probe_done(tx, q);
	sent = rte_eth_tx_burst(q->port, q->queue, pkts, n);
	sirq_stat_add(&tx->stats->tx_bursts, 1);
	sirq_stat_add(&tx->stats->tx_packets, sent);
	if (unlikely(sent < n)) {
		sirq_stat_add(&tx->stats->tx_dropped, n - sent);
		rte_pktmbuf_free_bulk(&pkts[sent], n - sent);
	}
}

static void
txq_flush(struct sirq_tx *tx, struct sirq_txq *q)
{
	if (q->nb_buffered == 0)
		return;
	txq_send(tx, q, q->buffer, q->nb_buffered);
	q->nb_buffered = 0;
}

/*
 * Buffer @n packets, handing every full buffer to the PMD on the way.
 * In a NAPI poll the rest waits for the poll's end; elsewhere it goes now.
 * A burst of a buffer's worth or more that finds the buffer empty goes
 * to the PMD as it is, in one call: what the buffer would hand it, less
 * the copy and one doorbell per SIRQ_TX_BURST (a NAPI poll of weight 64
 * is one burst: one doorbell, as the poll's end would ring).
 */
void
sirq_txq_enqueue(struct sirq_tx *tx, struct sirq_txq *q,
		 struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t done = 0, room;

	if (q->nb_buffered == 0 && n >= SIRQ_TX_BURST) {
		txq_send(tx, q, pkts, n);
		return;
	}

	while (done < n) {
		room = RTE_MIN((uint16_t)(SIRQ_TX_BURST - q->nb_buffered),
			       (uint16_t)(n - done));
		memcpy(&q->buffer[q->nb_buffered], &pkts[done],
		       room * sizeof(pkts[0]));
		q->nb_buffered += room;
		done += room;
		if (q->nb_buffered == SIRQ_TX_BURST)
			txq_flush(tx, q);
	}
	if (q->nb_buffered == 0)
		return;
	if (tx->in_poll)
		tx->dirty |= UINT64_C(1) << q->index;
	else
		txq_flush(tx, q);
}

/* A NAPI poll starts: its sends wait for its end. */
void
sirq_tx_poll_begin(struct sirq_tx *tx)
{
	tx->in_poll = true;
}

/* The poll's end: one burst per queue it sent to (xdp_do_flush()). */
void
sirq_tx_poll_end(struct sirq_tx *tx)
{
	uint64_t dirty = tx->dirty;

	tx->in_poll = false;
	tx->dirty = 0;
	while (dirty != 0) {
		txq_flush(tx, tx->txq[__builtin_ctzll(dirty)]);
		dirty &= dirty - 1;
	}
}

static inline uint32_t
inflight_count(const struct sirq_txq *q)
{
	return __atomic_load_n(&q->inflight_tail, __ATOMIC_ACQUIRE) -
		__atomic_load_n(&q->inflight_head, __ATOMIC_ACQUIRE);
}

/* Account @m to @t until the PMD lets go of it; the caller enqueues it. */
int
sirq_txq_track(struct sirq_txq *q, struct rte_mbuf *m,
	       struct sirq_tx_tracker *t)
{
	struct sirq_tx_inflight *f;

	if (inflight_count(q) >= SIRQ_TX_TRACK_MAX)
		return -ENOBUFS;

	/* Our reference on every segment: the PMD frees only its own. */
	rte_pktmbuf_refcnt_update(m, 1);
	f = &q->inflight[q->inflight_tail % SIRQ_TX_TRACK_MAX];
	f->m = m;
	f->tracker = t;
	f->len = rte_pktmbuf_pkt_len(m);
	t->inflight_pkts++;
	t->inflight_bytes += f->len;
	__atomic_store_n(&q->inflight_tail, q->inflight_tail + 1,
			 __ATOMIC_RELEASE);
	return 0;
}

/*
 * Every segment back to our reference alone: PMDs that free a chain one
 * descriptor at a time may hold its tail longer than its head. A segment
 * the PMD has let go of keeps its next pointer while we hold it.
 */
static inline bool
released_by_pmd(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (rte_mbuf_refcnt_read(m) != 1)
			return false;
	return true;
}

/* May the PMD of @q, holding a tracked packet, be asked to clean again? */
static inline bool
txq_cleanup_due(const struct sirq_txq *q)
{
	return q->done == SIRQ_TXQ_DONE_CLEANUP &&
		sirq_now_ns() - q->cleanup_ns >= SIRQ_TX_CLEANUP_INTERVAL_NS;
}

/* Is a sent packet tracked on any queue? Any thread: a peek. */
bool
sirq_tx_tracking(const struct sirq_tx *tx)
{
	uint16_t i;

	for (i = 0; i < tx->nb_txq; i++)
		if (inflight_count(tx->txq[i]) != 0)
			return true;
	return false;
}

/*
 * The TX-completion "interrupt", under the lock: is the oldest tracked
 * packet released, or is it time to have the PMD free what the NIC sent?
 */
bool
sirq_hardirq_tx(struct sirq_tx *tx)
{
	uint16_t i;

	for (i = 0; i < tx->nb_txq; i++) {
		struct sirq_txq *q = tx->txq[i];
		uint32_t head;

		if (inflight_count(q) == 0)
			continue;
		head = __atomic_load_n(&q->inflight_head, __ATOMIC_ACQUIRE);
		if (released_by_pmd(q->inflight[head % SIRQ_TX_TRACK_MAX].m) ||
		    txq_cleanup_due(q)) {
			sirq_raise_irqoff(tx->cpu, SIRQ_NET_TX);
			return true;
		}
	}
	return false;
}

/* Release the completed packets of a queue, oldest first. */
static void
txq_complete(struct sirq_tx *tx, struct sirq_txq *q)
{
	if (q->inflight_head != q->inflight_tail &&
	    !released_by_pmd(q->inflight[q->inflight_head %
					 SIRQ_TX_TRACK_MAX].m) &&
	    txq_cleanup_due(q))
		txq_done_cleanup(tx, q);
	while (q->inflight_head != q->inflight_tail) {
		struct sirq_tx_inflight *f =
			&q->inflight[q->inflight_head % SIRQ_TX_TRACK_MAX];
		struct sirq_tx_tracker *t = f->tracker;

		if (!released_by_pmd(f->m))
			break;
		rte_pktmbuf_free(f->m);
		t->inflight_pkts--;
		t->inflight_bytes -= f->len;
		t->completed_pkts++;
		t->completed_bytes += f->len;
		sirq_stat_add(&tx->stats->tx_completions, 1);
		__atomic_store_n(&q->inflight_head, q->inflight_head + 1,
				 __ATOMIC_RELEASE);
		if (t->tasklet != NULL)
			sirq_tasklet_schedule(tx->cpu, t->tasklet);
	}
}

/*
 * net_tx_action(): complete what has left. Nothing is buffered outside a
 * NAPI poll, so there is nothing to flush.
 */
void
sirq_net_tx_action(struct sirq_cpu *cpu, void *arg)
{
	struct sirq_tx *tx = arg;
	uint16_t i;

	SIRQ_ASSERT_EXCLUSIVE(cpu, tx->lcore_id, "NET_TX");
	for (i = 0; i < tx->nb_txq; i++)
		txq_complete(tx, tx->txq[i]);
}

/* At stop: send what is buffered (a poll cut short leaves none today). */
void
sirq_tx_drain(struct sirq_tx *tx)
{
	uint16_t i;

	for (i = 0; i < tx->nb_txq; i++)
		txq_flush(tx, tx->txq[i]);
}

/* At free: what the dispatcher left buffered or in flight goes back. */
void
sirq_tx_free(struct sirq_tx *tx)
{
	uint16_t i;

	for (i = 0; i < tx->nb_txq; i++) {
		struct sirq_txq *q = tx->txq[i];

		rte_pktmbuf_free_bulk(q->buffer, q->nb_buffered);
		while (q->inflight_head != q->inflight_tail) {
			rte_pktmbuf_free(q->inflight[q->inflight_head %
						     SIRQ_TX_TRACK_MAX].m);
			q->inflight_head++;
		}
		rte_free(q);
		tx->txq[i] = NULL;
	}
	tx->nb_txq = 0;
}
