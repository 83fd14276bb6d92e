/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Results: one JSON object per run (the format bench/policy_plots.py
 * reads, documented there), and a table row set per (scenario, tick_hz).
 */

#include <inttypes.h>
#include <string.h>

#include "sim.h"

/* Percentiles reported, and their JSON names. */
static const struct {
	double q;
	const char *key;
} quantiles[] = {
	{ 0.50, "p50_us" },
	{ 0.99, "p99_us" },
	{ 0.999, "p999_us" },
};
#define NB_QUANTILES (sizeof(quantiles) / sizeof(quantiles[0]))

void
collect(struct result *r, const struct sim *s)
{
	uint32_t i;

	memset(r, 0, sizeof(*r));
	r->c = s->c;
	sirq_stats_get(s->cpu, &r->st);
	r->lat_rx = s->lat_rx;
	r->lat_tx = s->lat_tx;
	r->seconds = (double)s->c->duration_ps / PS_PER_S;
	r->arrived = s->nic.arrived;
	r->processed = s->rx_processed;
	r->dropped = s->nic.dropped;
	r->tx_flushed = s->tx_flushed;
	r->tx_dropped = s->tx_dropped;
	r->time_squeeze = s->time_squeeze;
	for (i = 0; i < s->c->app_threads; i++) {
		r->app_ps += s->task[i].exec_ps;
		r->app_bursts += s->app[i].bursts;
	}
	r->worker_ps = s->task[TASK_WORKER].exec_ps;
	r->irq_ps = s->irq_ps;
	r->idle_ps = s->idle_ps;
}

static double
share(const struct result *r, uint64_t ps)
{
	return (double)ps / (double)r->c->duration_ps;
}

static double
us(uint64_t ns)
{
	return (double)ns / NS_PER_US;
}

static const char *const worker_names[] = {
	[WORKER_SIRQD] = "sirqd",
	[WORKER_KERNEL] = "kernel",
};

static void
json_latency(FILE *f, const char *name, const struct hist *h, bool more)
{
	unsigned int q, b;
	bool first = true;

	fprintf(f, "\"%s\": {\"samples\": %" PRIu64, name, h->samples);
	for (q = 0; q < NB_QUANTILES; q++)
		fprintf(f, ", \"%s\": %.3f", quantiles[q].key,
			us(hist_quantile(h, quantiles[q].q)));
	fprintf(f, ", \"max_us\": %.3f, \"mean_us\": %.3f, \"hist_ns\": [",
		us(h->max_ns), h->samples ? h->sum_ns / (double)h->samples /
		NS_PER_US : 0.0);
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (h->count[b] == 0)
			continue;
		fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", first ? "" : ", ",
			min_u64(hist_upper(b) - 1, h->max_ns), h->count[b]);
		first = false;
	}
	fprintf(f, "]}%s", more ? ", " : "");
}

void
json_run(FILE *f, const struct result *r, bool more)
{
	const struct sim_conf *c = r->c;
	const struct sirq_stats *st = &r->st;
	unsigned int k;

	fprintf(f, "  {\"scenario\": \"%s\", \"policy\": \"%s\", \"tick_hz\": %u"
		", \"duration_s\": %.3f,\n", c->scenario,
		sirq_policy_name(c->policy), c->tick_hz, r->seconds);
	fprintf(f, "   \"stalls\": %" PRIu64 ", \"stalls_per_s\": %.3f"
		", \"net_rx_raise_to_run_max_us\": %.3f,\n",
		st->latency[SIRQ_NET_RX].stalls,
		(double)st->latency[SIRQ_NET_RX].stalls / r->seconds,
		us(st->latency[SIRQ_NET_RX].max_ns));
	fprintf(f, "   \"latency\": {");
	json_latency(f, "NET_RX", &r->lat_rx, true);
	json_latency(f, "NET_TX", &r->lat_tx, false);
	fprintf(f, "},\n");
	fprintf(f, "   \"app\": {\"cpu_share\": %.5f, \"work_units\": %" PRIu64
		", \"work_units_per_s\": %.1f, \"bursts\": %" PRIu64 "},\n",
		share(r, r->app_ps), r->app_ps / APP_WORK_UNIT_PS,
		(double)(r->app_ps / APP_WORK_UNIT_PS) / r->seconds,
		r->app_bursts);
	fprintf(f, "   \"cpu\": {\"app\": %.5f, \"worker\": %.5f, \"inline\": %.5f"
		", \"idle\": %.5f},\n", share(r, r->app_ps),
		share(r, r->worker_ps), share(r, r->irq_ps), share(r, r->idle_ps));
	fprintf(f, "   \"packets\": {\"arrived\": %" PRIu64 ", \"processed\": %"
		PRIu64 ", \"dropped\": %" PRIu64 ", \"tx_flushed\": %" PRIu64
		", \"tx_dropped\": %" PRIu64 ", \"time_squeeze\": %" PRIu64
		"}, \"mpps\": %.4f,\n", r->arrived, r->processed, r->dropped,
		r->tx_flushed, r->tx_dropped, r->time_squeeze,
		(double)r->processed / r->seconds / 1e6);
	fprintf(f, "   \"wakeups\": {");
	for (k = 0; k < SIRQ_WAKE_MAX; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "",
			sirq_wake_name(k), st->wakeups[k]);
	fprintf(f, "},\n   \"windows\": {");
	for (k = 0; k < SIRQ_WINDOW_MAX; k++)
		fprintf(f, "\"opened_%s\": %" PRIu64 ", ", sirq_window_name(k),
			st->windows_opened[k]);
	fprintf(f, "\"overrides\": %" PRIu64 ", \"stale_ignored\": %" PRIu64
		", \"closed_idle\": %" PRIu64 "},\n", st->window_overrides,
		st->stale_windows_ignored, st->windows_closed_idle);
	fprintf(f, "   \"deferred_to_worker\": %" PRIu64 ", \"pass_exit\": {",
		st->deferred_to_worker);
	for (k = 0; k < SIRQ_EXIT_MAX; k++)
		fprintf(f, "%s\"%s\": [%" PRIu64 ", %" PRIu64 "]", k ? ", " : "",
			sirq_exit_name(k), st->pass_exit[k][SIRQ_CTX_INLINE],
			st->pass_exit[k][SIRQ_CTX_WORKER]);
	fprintf(f, "}}%s\n", more ? "," : "");
}

void
json_conf(FILE *f, const struct sim_conf *c)
{
	fprintf(f, "{\"rate_pps\": %" PRIu64 ", \"pkt_size\": %u"
		", \"offered_gbps\": %.3f, \"train_pkts\": [%" PRIu64 ", %" PRIu64
		"], \"train_gap_us\": [%.1f, %.1f], \"cost_ns\": %.3f"
		", \"poll_cost_ns\": %.3f, \"ring\": %u, \"irq_tick_us\": %.1f"
		", \"rx_irq_us\": %.1f, \"sched_hz\": %u, \"slice_us\": %.1f"
		", \"worker\": \"%s\", \"worker_nice\": %d, \"app_threads\": %u"
		", \"app_hold_us\": %.1f, \"app_period_us\": %.1f"
		", \"app_random\": %s, \"app_nice\": %d, \"seed\": %" PRIu64 "}",
		c->rate_pps, c->pkt_size,
		(double)c->rate_pps * (c->pkt_size + ETH_WIRE_OVERHEAD) *
		BITS_PER_BYTE / 1e9, c->train_pkts.min, c->train_pkts.max,
		(double)c->train_gap_ps.min / PS_PER_US,
		(double)c->train_gap_ps.max / PS_PER_US,
		(double)c->cost_ps / PS_PER_NS,
		(double)c->poll_cost_ps / PS_PER_NS, c->ring,
		(double)c->irq_tick_ps / PS_PER_US,
		(double)c->rx_irq_ps / PS_PER_US, c->sched_hz,
		(double)c->slice_ps / PS_PER_US, worker_names[c->worker],
		c->worker_nice, c->app_threads,
		(double)c->app_hold_ps / PS_PER_US,
		(double)c->app_period_ps / PS_PER_US,
		c->app_random ? "true" : "false", c->app_nice, c->seed);
}

/* One table: a row per metric, a column per policy. */
void
print_table(const struct result *const *res, unsigned int n)
{
	static const char *const rows[] = {
		"stalls/s (>= 8 ms)", "NET_RX p50 us", "NET_RX p99 us",
		"NET_RX p99.9 us", "NET_RX max us", "NET_TX p99 us",
		"NET_TX max us", "app CPU %", "app units/s (M)", "worker CPU %",
		"inline CPU %", "Mpps processed", "dropped %",
		"wake need_resched", "wake restart_limit", "wake time_limit",
		"wake handoff", "windows defer", "windows overload",
		"window overrides", "stale windows",
	};
	unsigned int r, i;

	printf("%-20s", "");
	for (i = 0; i < n; i++)
		printf(" %11s", sirq_policy_name(res[i]->c->policy));
	printf("\n");
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		printf("%-20s", rows[r]);
		for (i = 0; i < n; i++) {
			const struct result *x = res[i];
			const struct sirq_stats *st = &x->st;
			double v[] = {
				(double)st->latency[SIRQ_NET_RX].stalls / x->seconds,
				us(hist_quantile(&x->lat_rx, 0.5)),
				us(hist_quantile(&x->lat_rx, 0.99)),
				us(hist_quantile(&x->lat_rx, 0.999)),
				us(x->lat_rx.max_ns),
				us(hist_quantile(&x->lat_tx, 0.99)),
				us(x->lat_tx.max_ns),
				100 * share(x, x->app_ps),
				(double)(x->app_ps / APP_WORK_UNIT_PS) /
					x->seconds / 1e6,
				100 * share(x, x->worker_ps),
				100 * share(x, x->irq_ps),
				(double)x->processed / x->seconds / 1e6,
				x->arrived ? 100.0 * (double)x->dropped /
					(double)x->arrived : 0.0,
				(double)st->wakeups[SIRQ_WAKE_NEED_RESCHED],
				(double)st->wakeups[SIRQ_WAKE_RESTART],
				(double)st->wakeups[SIRQ_WAKE_TIME],
				(double)st->wakeups[SIRQ_WAKE_HANDOFF],
				(double)st->windows_opened[SIRQ_WINDOW_DEFER],
				(double)st->windows_opened[SIRQ_WINDOW_OVERLOAD],
				(double)st->window_overrides,
				(double)st->stale_windows_ignored,
			};

			printf(" %11.*f", r == 0 || (r >= 7 && r <= 12) ? 2 :
			       r < 7 ? 1 : 0, v[r]);
		}
		printf("\n");
	}
	printf("\n");
}

