/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_report.h"

static double
per_second(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0.0;
}

static void
report_lcore(FILE *f, const struct report_lcore *rl, double secs,
	     struct sirq_stats *st)
{
	const struct sirq_latency *rx = &st->latency[SIRQ_NET_RX];
	struct sirq_lcore_stats ls;
	uint64_t stalls = 0;
	unsigned int v;

	sirq_stats_get(sirq_lcore_cpu(rl->lc), st);
	sirq_lcore_stats_get(rl->lc, &ls);
	for (v = 0; v < SIRQ_MAX_VECTORS; v++)
		stalls += st->latency[v].stalls;
	fprintf(f, "{\"lcore\": %u, \"rx_packets\": %" PRIu64
		", \"rx_pps\": %.1f, \"tx_packets\": %" PRIu64
		", \"tx_pps\": %.1f, \"tx_dropped\": %" PRIu64
		", \"rx_dropped_at_stop\": %" PRIu64
		", \"time_squeeze\": %" PRIu64
		", \"net_rx_p50_ns\": %" PRIu64 ", \"net_rx_p99_ns\": %" PRIu64
		", \"net_rx_max_ns\": %" PRIu64 ", \"net_rx_stalls\": %" PRIu64
		", \"net_rx_stalls_per_s\": %.3f, \"stalls_all_vectors\": %" PRIu64
		"}", sirq_lcore_id(rl->lc), ls.rx_packets,
		per_second(ls.rx_packets, secs), ls.tx_packets,
		per_second(ls.tx_packets, secs), ls.tx_dropped,
		ls.rx_dropped_at_stop, ls.time_squeeze,
		sirq_latency_quantile(rx, 0.50), sirq_latency_quantile(rx, 0.99),
		rx->max_ns, rx->stalls, per_second(rx->stalls, secs), stalls);
}

static int
report_to(FILE *f, const struct report_ctx *r)
{
	const struct sirq_lcore_conf *c = &r->common->lcore;
	double secs = (double)(app_now_ns() - r->start_ns) / 1e9;
	struct sirq_stats *st = malloc(sizeof(*st));
	unsigned int i;

	if (st == NULL)
		return -ENOMEM;
	fprintf(f, "{\"app\": \"%s\", \"elapsed_s\": %.3f, \"policy\": \"%s\", "
		"\"mode\": \"%s\", \"stall_threshold_ns\": %" PRIu64 ",\n",
		r->prog, secs, sirq_policy_name(c->params.policy),
		c->mode == SIRQ_MODE_IRQ ? "irq" : "poll",
		c->params.stall_threshold_ns);
	fprintf(f, " \"ports\": [");
	for (i = 0; i < r->nb_ports; i++) {
		const struct report_port *p = &r->ports[i];

		fprintf(f, "%s{\"port\": %u, \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"runts\": %" PRIu64 ", \"link_down_drops\": %" PRIu64
			", \"rx_pps\": %.1f, \"tx_pps\": %.1f}", i ? ", " : "",
			p->port, p->rx, p->tx, p->runts, p->link_down_drops,
			per_second(p->rx, secs), per_second(p->tx, secs));
	}
	fprintf(f, "],\n \"lcores\": [");
	for (i = 0; i < r->nb_lcores; i++) {
		fprintf(f, "%s", i ? ",\n  " : "");
		report_lcore(f, &r->lcores[i], secs, st);
	}
	fprintf(f, "],\n \"app_load\": [");
	for (i = 0; i < r->nb_lcores; i++) {
		if (r->lcores[i].load == NULL)
			continue;
		fprintf(f, "%s", i ? ", " : "");
		app_load_json(f, r->lcores[i].load, app_now_ns() - r->start_ns);
	}
	fprintf(f, "],\n \"mbufs_in_use\": %" PRIu64 ",\n", r->mbufs_in_use);
	if (r->extra_json != NULL) {
		fprintf(f, " \"%s\": ", r->extra_name);
		r->extra_json(f, r->extra_arg);
		fprintf(f, ",\n");
	}
	if (r->extra2_json != NULL) {
		fprintf(f, " \"%s\": ", r->extra2_name);
		r->extra2_json(f, r->extra2_arg);
		fprintf(f, ",\n");
	}
	fprintf(f, " \"sirq\": ");
	free(st);
	if (sirq_stats_json(f) != 0)
		return -EIO;
	fprintf(f, "}\n");
	return ferror(f) ? -EIO : 0;
}

int
report_write(const struct report_ctx *r)
{
	char tmp[APP_STR_LEN + 8];
	FILE *f;
	int ret;

	if (r->path == NULL || r->path[0] == '\0') {
		ret = report_to(stdout, r);
		fflush(stdout);
		return ret;
	}
	/* Readers never see half a report: write aside, then rename. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", r->path);
	f = fopen(tmp, "w");
	if (f == NULL) {
		fprintf(stderr, "%s: --report %s: %s\n", r->prog, r->path,
			strerror(errno));
		return -errno;
	}
	ret = report_to(f, r);
	if (fclose(f) != 0 && ret == 0)
		ret = -EIO;
	if (ret == 0 && rename(tmp, r->path) != 0)
		ret = -errno;
	if (ret != 0)
		fprintf(stderr, "%s: --report %s: %s\n", r->prog, r->path,
			strerror(-ret));
	return ret;
}
