/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: the packet path of l2fwd-sirq (l2fwd_rx() in NET_RX
 * context, then NET_TX through sirq_tx()) on packets made of bytes.
 *
 * EAL runs once, on lcore 0 with two net_ring ports; each of
 * them loops its TX back onto its own Rx ring, so what l2fwd-sirq sends
 * is read back and compared with what it was given. The lcore is created
 * but never launched: the input runs between sirq_bh_disable() and
 * sirq_bh_enable(), whose outermost enable runs NET_TX inline, as a
 * dispatcher pass would.
 *
 * Input: one flags byte, then packets, each a 4-byte header (length in
 * two bytes, segment count, length of the first segment) and its bytes
 * (zeros once the input runs out). Oracles, each an abort():
 *  - every mbuf is back in the pool after the input;
 *  - the books balance: rx = tx + runts + link-down drops;
 *  - what came out is what went in, in order, same length and segments,
 *    with only the two MAC addresses rewritten (unless mac_updating is
 *    off); runts (first segment < 14 bytes) and packets for a port whose
 *    link is down do not come out.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <sirq.h>

#include "l2fwd.h"

#define NB_PORTS 2
#define POOL_SIZE 1023			/* > BURST_MAX * SEGS_MAX */
#define RING_DESC 512
#define BURST_MAX 64			/* the NAPI weight: one poll */
#define SEGS_MAX 6
#define SEG_ROOM 2048			/* RTE_MBUF_DEFAULT_DATAROOM */
#define PKT_MAX (SEGS_MAX * SEG_ROOM)
#define HDR_BYTES 4

/* Flags byte. */
#define F_MAC_UPDATING	0x01
#define F_LINK_UP0	0x02
#define F_LINK_UP1	0x04
#define F_FROM_PORT1	0x08

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rte_mempool *pool;
static struct sirq_lcore *lc;
static struct l2fwd_port ports[RTE_MAX_ETHPORTS];
static struct l2fwd_path path;

/* Bytes of each packet given, to compare with what comes out. */
static uint8_t sent_bytes[BURST_MAX][PKT_MAX];

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_l2fwd_packet: %s\n", what);
	abort();
}

static void
port_start(uint16_t port)
{
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, RING_DESC, SOCKET_ID_ANY, NULL,
				   pool) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, RING_DESC, SOCKET_ID_ANY, NULL) != 0 ||
	    rte_eth_dev_start(port) != 0)
		fail("port start");
	rte_eth_macaddr_get(port, &ports[port].mac);
}

/* Leave no /var/run/dpdk/<prefix> behind (--in-memory needs hugepages). */
static void
remove_runtime_dir(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rte_eal_get_runtime_dir());
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", rte_eal_get_runtime_dir());
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char prefix[64];
	char *eal[] = {
		(*argv)[0], (char *)"-l", (char *)"0", (char *)"--no-huge",
		(char *)"-m", (char *)"128", (char *)"--no-pci",
		prefix, (char *)"--log-level=*:error",
		(char *)"--no-telemetry",
		(char *)"--vdev=net_ring0", (char *)"--vdev=net_ring1",
	};
	struct sirq_lcore_conf conf;
	uint16_t p;

	(void)argc;
	snprintf(prefix, sizeof(prefix), "--file-prefix=fuzz-l2fwd-%d",
		 (int)getpid());
	if (rte_eal_init((int)RTE_DIM(eal), eal) < 0)
		fail(rte_strerror(rte_errno));
	atexit(remove_runtime_dir);
	pool = rte_pktmbuf_pool_create("fuzz_pool", POOL_SIZE, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		fail("mbuf pool");
	for (p = 0; p < NB_PORTS; p++)
		port_start(p);

	sirq_lcore_conf_default(&conf);
	lc = sirq_lcore_create(rte_lcore_id(), &conf);
	if (lc == NULL)
		fail("sirq_lcore_create");
	memset(path.txq_of_port, 0xff, sizeof(path.txq_of_port));
	for (p = 0; p < NB_PORTS; p++) {
		ports[p].enabled = true;
		ports[p].dst = p ^ 1;
		path.txq_of_port[p] = sirq_lcore_add_tx_queue(lc, p, 0);
		if (path.txq_of_port[p] < 0)
			fail("sirq_lcore_add_tx_queue");
	}
	path.ports = ports;
	return 0;
}

/* A packet of @len bytes in @nb_segs segments, the first @first long. */
static struct rte_mbuf *
build_packet(const uint8_t *bytes, uint32_t len, unsigned int nb_segs,
	     uint32_t first)
{
	struct rte_mbuf *head = NULL, *m;
	uint32_t off = 0, seg_len;
	unsigned int s;
	char *p;

	for (s = 0; s < nb_segs; s++) {
		if (s == 0)
			seg_len = first;
		else if (s == nb_segs - 1)
			seg_len = len - off;
		else
			seg_len = (len - first) / (nb_segs - 1);
		m = rte_pktmbuf_alloc(pool);
		if (m == NULL)
			fail("pool empty: a leak in an earlier input");
		p = rte_pktmbuf_append(m, (uint16_t)seg_len);
		if (p == NULL)
			fail("segment larger than a buffer");
		memcpy(p, bytes + off, seg_len);
		off += seg_len;
		if (head == NULL)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			fail("chain");
	}
	return head;
}

static void
check_packet(struct rte_mbuf *m, const uint8_t *want, uint32_t len,
	     unsigned int nb_segs, uint16_t dst, bool mac_updating)
{
	uint8_t got[PKT_MAX], expect[RTE_ETHER_HDR_LEN];
	const uint8_t *p;

	if (rte_pktmbuf_pkt_len(m) != len || m->nb_segs != nb_segs)
		fail("length or segments changed");
	p = rte_pktmbuf_read(m, 0, len, got);
	if (p == NULL)
		fail("unreadable packet");
	if (mac_updating) {
		memset(expect, 0, RTE_ETHER_ADDR_LEN);
		expect[0] = 0x02;
		expect[5] = (uint8_t)dst;
		memcpy(expect + RTE_ETHER_ADDR_LEN, &ports[dst].mac,
		       RTE_ETHER_ADDR_LEN);
		if (memcmp(p, expect, 2 * RTE_ETHER_ADDR_LEN) != 0)
			fail("MAC addresses not rewritten");
		if (memcmp(p + 2 * RTE_ETHER_ADDR_LEN,
			   want + 2 * RTE_ETHER_ADDR_LEN,
			   len - 2 * RTE_ETHER_ADDR_LEN) != 0)
			fail("payload changed");
	} else if (memcmp(p, want, len) != 0) {
		fail("frame changed without mac updating");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *pkts[BURST_MAX], *out[BURST_MAX], *stray;
	uint32_t lens[BURST_MAX], forwarded[BURST_MAX];
	unsigned int segs[BURST_MAX];
	struct l2fwd_counters before[NB_PORTS], *c;
	struct sirq_cpu *cpu = sirq_lcore_cpu(lc);
	uint16_t n = 0, nb_fwd = 0, got = 0, src, dst, i;
	uint8_t flags;
	size_t pos = 1;

	if (size < 1)
		return 0;
	flags = data[0];
	path.mac_updating = (flags & F_MAC_UPDATING) != 0;
	ports[0].link_up = (flags & F_LINK_UP0) != 0;
	ports[1].link_up = (flags & F_LINK_UP1) != 0;
	src = (flags & F_FROM_PORT1) != 0 ? 1 : 0;
	dst = ports[src].dst;

	while (pos + HDR_BYTES <= size && n < BURST_MAX) {
		unsigned int nb_segs = 1 + data[pos + 2] % SEGS_MAX;
		uint32_t len = (((uint32_t)data[pos] << 8) | data[pos + 1]) %
			(nb_segs * SEG_ROOM + 1);
		uint32_t first = nb_segs == 1 ? len :
			RTE_MIN(len, (uint32_t)data[pos + 3]);
		size_t avail;

		/* The other segments, remainder in the last, fit a buffer. */
		if (nb_segs > 1)
			len = RTE_MIN(len, first + (nb_segs - 1) *
				      (SEG_ROOM - SEGS_MAX));
		pos += HDR_BYTES;
		avail = RTE_MIN((size_t)len, size - pos);
		memset(sent_bytes[n], 0, len);
		memcpy(sent_bytes[n], data + pos, avail);
		pos += avail;
		pkts[n] = build_packet(sent_bytes[n], len, nb_segs, first);
		lens[n] = len;
		segs[n] = pkts[n]->nb_segs;
		if (ports[dst].link_up && first >= RTE_ETHER_HDR_LEN)
			forwarded[nb_fwd++] = n;
		n++;
	}
	if (n == 0)
		return 0;

	memcpy(before, path.port, sizeof(before));
	sirq_bh_disable(cpu);
	l2fwd_rx(lc, src, 0, pkts, n, &path);
	if (sirq_bh_enable(cpu) != 0)
		fail("bh enable");

	/* net_ring: port dst's TX came back on its own Rx queue. */
	while (got < BURST_MAX) {
		uint16_t k = rte_eth_rx_burst(dst, 0, out + got,
					      BURST_MAX - got);

		if (k == 0)
			break;
		got += k;
	}
	if (rte_eth_rx_burst(src, 0, &stray, 1) != 0)
		fail("a packet went back out of the port it came in on");
	if (got != nb_fwd)
		fail("not every packet that should leave left");
	for (i = 0; i < got; i++) {
		uint16_t k = forwarded[i];

		check_packet(out[i], sent_bytes[k], lens[k], segs[k], dst,
			     path.mac_updating);
		rte_pktmbuf_free(out[i]);
	}

	c = path.port;
	if (c[src].rx - before[src].rx !=
	    (c[dst].tx - before[dst].tx) + (c[src].runts - before[src].runts) +
	    (c[dst].link_down_drops - before[dst].link_down_drops) ||
	    c[src].rx - before[src].rx != n)
		fail("the books do not balance");
	if (rte_mempool_in_use_count(pool) != 0)
		fail("mbufs leaked");
	return 0;
}
