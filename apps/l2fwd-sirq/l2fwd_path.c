/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The packet path of l2fwd-sirq: what NET_RX does with a burst. Called
 * through the NAPI context's function pointer, so living in its own file
 * costs nothing; it lets the fuzz targets feed it packets made of bytes.
 */

#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "l2fwd.h"

static inline void
count(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/*
 * The 12 bytes every packet of a burst gets: the destination
 * 02:00:00:00:00:<dst port>, as l2fwd writes it, then the sending port's
 * own address. Made once a burst and held in two registers, so that a
 * packet costs two stores.
 */
struct burst_macs {
	uint64_t head;			/* bytes 0-7 */
	uint32_t tail;			/* bytes 8-11 */
};

static inline struct burst_macs
burst_macs(uint16_t dst, const struct rte_ether_addr *src)
{
	struct rte_ether_addr macs[2] = { 0 };
	struct burst_macs b;

	macs[0].addr_bytes[0] = 0x02;
	macs[0].addr_bytes[5] = (uint8_t)dst;
	rte_ether_addr_copy(src, &macs[1]);
	memcpy(&b.head, macs, sizeof(b.head));
	memcpy(&b.tail, (const uint8_t *)macs + sizeof(b.head), sizeof(b.tail));
	return b;
}

static inline void
write_macs(struct rte_mbuf *m, struct burst_macs b)
{
	uint8_t *eth = rte_pktmbuf_mtod(m, uint8_t *);

	memcpy(eth, &b.head, sizeof(b.head));
	memcpy(eth + sizeof(b.head), &b.tail, sizeof(b.tail));
}

void
l2fwd_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	 struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct l2fwd_path *f = arg;
	uint16_t dst = f->ports[port].dst;
	unsigned int txq = (unsigned int)f->txq_of_port[dst], i, out = 0;
	bool rewrite = f->mac_updating;
	struct burst_macs macs;

	RTE_SET_USED(queue);
	count(&f->port[port].rx, n);
	if (unlikely(!__atomic_load_n(&f->ports[dst].link_up, __ATOMIC_RELAXED))) {
		rte_pktmbuf_free_bulk(pkts, n);
		count(&f->port[dst].link_down_drops, n);
		return;
	}
	macs = burst_macs(dst, &f->ports[dst].mac);
	/* Rewritten in place; runts are dropped and the rest close ranks. */
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		/* A runt has no header to rewrite: dropped, never touched. */
		if (unlikely(rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN)) {
			rte_pktmbuf_free(m);
			continue;
		}
		if (rewrite)
			write_macs(m, macs);
		pkts[out++] = m;
	}
	if (unlikely(out != n))
		count(&f->port[port].runts, n - out);
	/*
	 * One burst to the TX buffer: one context check and one raise, not
	 * one per packet. In a NET_RX handler it is always taken.
	 */
	if (likely(sirq_tx_burst(lc, txq, pkts, (uint16_t)out) == (int)out))
		count(&f->port[dst].tx, out);
	else
		rte_pktmbuf_free_bulk(pkts, out);
	/* The socket's wake-up of a busy-polling application asleep. */
	if (unlikely(f->busy != NULL))
		l2fwd_busy_wake(f->busy);
}
