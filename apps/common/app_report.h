/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_APP_REPORT_H
#define SIRQ_APP_REPORT_H

/*
 * The JSON report of the applications: per port and lcore rates and
 * drops, the stall figures benchmarks compare (NET_RX raise-to-run p99,
 * max, stalls >= threshold per second), the app load's progress, mbufs
 * still out of their pools, and libsirq's own counters (sirq_stats_json).
 * Written to --report FILE (replaced atomically) or stdout.
 */

#include <stdint.h>
#include <stdio.h>

#include <rte_config.h>

#include <sirq.h>

#include "app_load.h"
#include "app_opts.h"

struct report_lcore {
	struct sirq_lcore *lc;
	const struct app_load *load;	/* NULL without --app-load */
};

struct report_port {
	uint16_t port;
	uint64_t rx;
	uint64_t tx;
	uint64_t runts;
	uint64_t link_down_drops;
	/* The PMD's (rte_eth_stats), at the report or at the port's close. */
	uint64_t imissed;
	uint64_t ierrors;
	uint64_t rx_nombuf;
};

struct report_ctx {
	const char *prog;
	const char *path;		/* "" for stdout */
	uint64_t start_ns;
	const struct app_common *common;
	unsigned int nb_lcores;
	struct report_lcore lcores[RTE_MAX_LCORE];
	unsigned int nb_ports;
	struct report_port ports[RTE_MAX_ETHPORTS];
	uint64_t mbufs_in_use;
	/* Optional: the application's own object, as "<extra_name>": {...}. */
	const char *extra_name;
	void (*extra_json)(FILE *f, const void *arg);
	const void *extra_arg;
	/* Optional: a second one, "<extra2_name>": {...}, after the first. */
	const char *extra2_name;
	void (*extra2_json)(FILE *f, const void *arg);
	const void *extra2_arg;
};

/* 0, or -errno with a message on stderr. */
int report_write(const struct report_ctx *r);

#endif /* SIRQ_APP_REPORT_H */
