/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef L2FWD_SIRQ_H
#define L2FWD_SIRQ_H

/*
 * The parts of l2fwd-sirq that need no running EAL: its options, the
 * --portmap parser and the per-packet path of NET_RX. main.c wires them
 * to ports and lcores; the fuzz targets (tests/fuzz) call them directly.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_config.h>
#include <rte_ether.h>

#include <sirq.h>

#include "app_opts.h"
#include "l2fwd_busy.h"
#include "l2fwd_probe.h"
#include "l2fwd_receiver.h"

#define L2FWD_PROG "l2fwd-sirq"
#define L2FWD_MAX_RX_PER_LCORE 16
#define L2FWD_STATS_PERIOD_DEFAULT 10

struct l2fwd_opts {
	uint64_t portmask;
	uint32_t queues_per_lcore;
	uint16_t rxq_per_port;
	uint32_t period_s;
	bool mac_updating;
	bool promiscuous;	/* -P: taken, every port is anyway */
	char portmap[APP_STR_LEN];
	struct l2fwd_receiver_spec receiver;	/* --receiver */
	struct l2fwd_busy_spec busy;		/* --busy-poll */
	struct l2fwd_probe_spec probe;		/* --probe */
};

/* The l2fwd options (section [l2fwd]), for app_opts_parse(). */
extern const struct app_opt l2fwd_opts_table[];
extern const size_t l2fwd_nb_opts;

/* l2fwd's defaults: ports 0 and 1, one Rx queue each, stats every 10 s. */
void l2fwd_opts_defaults(struct l2fwd_opts *o);

/* One port as the forwarding path sees it. */
struct l2fwd_port {
	bool enabled;
	bool link_up;
	uint16_t dst;
	struct rte_ether_addr mac;
};

/*
 * Parse "(0,1)(2,3)" into @ports (RTE_MAX_ETHPORTS entries): pairs them
 * and enables both. 0, or -EINVAL after one line on stderr naming the
 * bad pair.
 */
int l2fwd_parse_portmap(const char *s, struct l2fwd_port *ports);

/*
 * Packet counters of one port, kept per forwarding lcore: several lcores
 * may receive from (RSS) or send to the same port, and each lcore's
 * counters have one writer at a time, whoever runs its handlers.
 */
struct l2fwd_counters {
	uint64_t rx;
	uint64_t tx;
	uint64_t runts;
	uint64_t link_down_drops;
};

/* What the packet path of one forwarding lcore reads and counts. */
struct l2fwd_path {
	const struct l2fwd_port *ports;		/* RTE_MAX_ETHPORTS entries */
	bool mac_updating;
	int txq_of_port[RTE_MAX_ETHPORTS];	/* sirq_tx() index per port */
	struct l2fwd_busy *busy;		/* --busy-poll: woken by NET_RX */
	struct l2fwd_counters port[RTE_MAX_ETHPORTS];
};

/*
 * NET_RX (a sirq_rx_fn_t, @arg a struct l2fwd_path): forward a burst of
 * one queue to the paired port, rewriting the MAC addresses. Runts and
 * packets for a port whose link is down are freed and counted.
 */
void l2fwd_rx(struct sirq_lcore *lc, uint16_t port, uint16_t queue,
	      struct rte_mbuf **pkts, uint16_t n, void *arg);

#endif /* L2FWD_SIRQ_H */
