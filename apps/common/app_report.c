/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	struct sirq_lcore_params lp;
	struct sirq_lcore_stats ls;
	struct sirq_napi_info napi;
	uint64_t stalls = 0;
	unsigned int v;

	sirq_stats_get(sirq_lcore_cpu(rl->lc), st);
	sirq_lcore_stats_get(rl->lc, &ls);
	for (v = 0; v < SIRQ_MAX_VECTORS; v++)
		stalls += st->latency[v].stalls;
	sirq_lcore_get_params(rl->lc, &lp);
	fprintf(f, "{\"lcore\": %u, \"policy\": \"%s\", \"rx_packets\": %" PRIu64
		", \"rx_pps\": %.1f, \"tx_packets\": %" PRIu64
		", \"tx_pps\": %.1f, \"tx_dropped\": %" PRIu64
		", \"rx_dropped_at_stop\": %" PRIu64
		", \"time_squeeze\": %" PRIu64
		", \"net_rx_p50_ns\": %" PRIu64 ", \"net_rx_p99_ns\": %" PRIu64
		", \"net_rx_max_ns\": %" PRIu64 ", \"net_rx_stalls\": %" PRIu64
		", \"net_rx_stalls_per_s\": %.3f, \"stalls_all_vectors\": %" PRIu64
		", \"napi\": [", sirq_lcore_id(rl->lc),
		sirq_policy_name(lp.engine.policy), ls.rx_packets,
		per_second(ls.rx_packets, secs), ls.tx_packets,
		per_second(ls.tx_packets, secs), ls.tx_dropped,
		ls.rx_dropped_at_stop, ls.time_squeeze,
		sirq_latency_quantile(rx, 0.50), sirq_latency_quantile(rx, 0.99),
		rx->max_ns, rx->stalls, per_second(rx->stalls, secs), stalls);
	/* Each Rx queue's share: the RSS spread, the interrupts per queue. */
	for (v = 0; sirq_napi_get(rl->lc, v, &napi) == 0; v++)
		fprintf(f, "%s{\"id\": %u, \"port\": %u, \"queue\": %u, "
			"\"packets\": %" PRIu64 ", \"irqs\": %" PRIu64 "}",
			v ? ", " : "", napi.id, napi.port, napi.queue,
			napi.packets, napi.irqs);
	fprintf(f, "]}");
}

static int
report_to(FILE *f, const struct report_ctx *r)
{
	const struct sirq_lcore_conf *c = &r->common->lcore;
	double secs = (double)(app_now_ns() - r->start_ns) / 1e9;
	struct sirq_stats *st = malloc(sizeof(*st));
	struct sirq_lcore_params now;
	unsigned int i;

	if (st == NULL)
		return -ENOMEM;
	/*
	 * "policy" is the one in force (/sirq/params_set may have changed
	 * it): the first lcore's, each lcore's own in "lcores";
	 * "configured_policy" is the command line's and the INI file's.
	 */
	now.engine = c->params;
	if (r->nb_lcores > 0)
		sirq_lcore_get_params(r->lcores[0].lc, &now);
	fprintf(f, "{\"app\": \"%s\", \"elapsed_s\": %.3f, \"policy\": \"%s\", "
		"\"configured_policy\": \"%s\", "
		"\"mode\": \"%s\", \"stall_threshold_ns\": %" PRIu64 ",\n",
		r->prog, secs, sirq_policy_name(now.engine.policy),
		sirq_policy_name(c->params.policy),
		c->mode == SIRQ_MODE_IRQ ? "irq" : "poll",
		now.engine.stall_threshold_ns);
	fprintf(f, " \"ports\": [");
	for (i = 0; i < r->nb_ports; i++) {
		const struct report_port *p = &r->ports[i];

		fprintf(f, "%s{\"port\": %u, \"rx\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"runts\": %" PRIu64 ", \"link_down_drops\": %" PRIu64
			", \"imissed\": %" PRIu64 ", \"ierrors\": %" PRIu64
			", \"rx_nombuf\": %" PRIu64
			", \"rx_pps\": %.1f, \"tx_pps\": %.1f}", i ? ", " : "",
			p->port, p->rx, p->tx, p->runts, p->link_down_drops,
			p->imissed, p->ierrors, p->rx_nombuf,
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

/*
 * Write @r's report over @target, a regular file or nothing yet: into a
 * temporary file of the same directory, renamed over it, so that readers
 * never see half a report. The file keeps its mode; a new one gets
 * 0666 less the umask.
 */
static int
report_replace(const struct report_ctx *r, const char *target)
{
	char tmp[PATH_MAX];
	struct stat st;
	mode_t mode, mask;
	FILE *f;
	int fd, ret;

	if (stat(target, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return -EEXIST;	/* became something else meanwhile */
		mode = st.st_mode & 07777;
	} else {
		mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", target) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) != 0 || (f = fdopen(fd, "w")) == NULL) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	ret = report_to(f, r);
	if (fclose(f) != 0 && ret == 0)
		ret = -EIO;
	if (ret == 0 && rename(tmp, target) != 0)
		ret = -errno;
	if (ret != 0)
		unlink(tmp);
	return ret;
}

int
report_write(const struct report_ctx *r)
{
	char *real;
	int ret;

	if (r->path == NULL || r->path[0] == '\0') {
		ret = report_to(stdout, r);
		fflush(stdout);
		return ret;
	}
	/* A symlink stays one: the file it points at is replaced. */
	real = realpath(r->path, NULL);
	ret = report_replace(r, real != NULL ? real : r->path);
	free(real);
	if (ret == -EEXIST)
		fprintf(stderr, "%s: --report %s: no longer a regular file; not written\n",
			r->prog, r->path);
	else if (ret != 0)
		fprintf(stderr, "%s: --report %s: %s\n", r->prog, r->path,
			strerror(-ret));
	return ret;
}
