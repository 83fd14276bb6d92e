/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Results: one JSON object per run (the format bench/policy_plots.py
 * reads, documented there), and a table row set per (scenario, tick_hz).
 */

#include <inttypes.h>
#include <math.h>
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
		r->app_bh_sections += s->app[i].bh_sections;
		for (unsigned int v = 0; v < SIRQ_MAX_VECTORS; v++)
			r->app_softirq_ps += s->task[i].vec_ps[v];
	}
	r->worker_ps = s->task[TASK_WORKER].exec_ps;
	r->irq_ps = s->irq_ps;
	r->idle_ps = s->idle_ps;
	r->in_ring = s->nic.ring.pkts;
	r->tx_pending = s->txbuf.pkts;
	memcpy(r->task, s->task, sizeof(r->task));
	r->nb_threads = s->nb_threads;
	memcpy(r->thread_lead, s->thread_lead, sizeof(r->thread_lead));
	for (i = 0; i < s->nb_threads; i++) {
		r->threads_ps += s->task[TASK_THREAD0 + i].exec_ps;
		for (unsigned int v = 0; v < SIRQ_MAX_VECTORS; v++)
			if (sirq_thread_of(s->cpu, v) == (int)s->thread_lead[i])
				r->thread_vecs[i] |= SIRQ_BIT(v);
	}
	memcpy(r->irq_vec_runs, s->irq_vec_runs, sizeof(r->irq_vec_runs));
	memcpy(r->irq_vec_ps, s->irq_vec_ps, sizeof(r->irq_vec_ps));
	r->irq_passes = s->irq_passes;
	r->lock_waits = s->lock_waits;
	r->timer_runs = s->timer_runs;
	r->lat_timer = s->lat_timer;
	for (i = 0; i < SIRQ_MAX_VECTORS; i++) {
		const char *n = sirq_vector_name(s->cpu, i);

		snprintf(r->vec_name[i], sizeof(r->vec_name[i]), "%s",
			 n != NULL ? n : "?");
	}
}

static double
share(const struct result *r, uint64_t ps)
{
	return (double)ps / (double)r->c->duration_ps;
}

/*
 * The application's own work: its CPU time less the handlers it ran at
 * its sirq_bh_enable() (softirqs run in the task, not its progress).
 */
static uint64_t
app_work_ps(const struct result *r)
{
	return r->app_ps - r->app_softirq_ps;
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

static const char *const thread_sched_names[] = {
	[THREAD_SCHED_MODEL] = "model",
	[THREAD_SCHED_OTHER] = "other",
	[THREAD_SCHED_FIFO] = "fifo",
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

/* The vectors the simulator registers, in the kernel's order. */
static const unsigned int sim_vecs[] = { SIRQ_TIMER, SIRQ_NET_TX, SIRQ_NET_RX };
#define NB_SIM_VECS (sizeof(sim_vecs) / sizeof(sim_vecs[0]))

static void
json_handler_runs(FILE *f, const struct result *r, const uint64_t *runs)
{
	unsigned int k;

	fprintf(f, "\"handler_runs\": {");
	for (k = 0; k < NB_SIM_VECS; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "",
			r->vec_name[sim_vecs[k]], runs[sim_vecs[k]]);
	fprintf(f, "}");
}

static const char *
sched_name(const struct task *t)
{
	return t->prio > 0 ? "fifo" : "other";
}

static void
json_threads(FILE *f, const struct result *r)
{
	unsigned int k, v;

	fprintf(f, "   \"threads\": [");
	for (k = 0; k < r->nb_threads; k++) {
		const struct task *t = &r->task[TASK_THREAD0 + k];
		bool first = true;

		fprintf(f, "%s\n    {\"name\": \"%s\", \"lead\": \"%s\", "
			"\"vectors\": [", k ? "," : "", t->name,
			r->vec_name[r->thread_lead[k]]);
		for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
			if (!(r->thread_vecs[k] & SIRQ_BIT(v)))
				continue;
			fprintf(f, "%s\"%s\"", first ? "" : ", ", r->vec_name[v]);
			first = false;
		}
		fprintf(f, "], \"sched\": \"%s\", \"prio\": %d, \"nice\": %d"
			", \"cpu\": %.5f, \"cpu_ms\": %.3f, \"calls\": %" PRIu64
			", \"wakeups\": %" PRIu64 ", ", sched_name(t), t->prio,
			t->prio > 0 ? 0 : r->c->thread_nice, share(r, t->exec_ps),
			(double)t->exec_ps / PS_PER_MS, t->calls, t->wakeups);
		json_handler_runs(f, r, t->vec_runs);
		fprintf(f, ", \"lock_waits\": %" PRIu64 ", \"lock_wait_ms\": %.3f"
			", \"bh_busy\": %" PRIu64 "}", t->lock_waits,
			(double)t->lock_wait_ps / PS_PER_MS, t->bh_busy);
	}
	fprintf(f, "%s],\n", r->nb_threads ? "\n   " : "");
}

void
json_run(FILE *f, const struct result *r, bool more)
{
	const struct sim_conf *c = r->c;
	const struct sirq_stats *st = &r->st;
	const struct task *w = &r->task[TASK_WORKER];
	bool irq_thread = c->policy == SIRQ_POLICY_RT;
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
		", \"work_units_per_s\": %.1f, \"bursts\": %" PRIu64
		", \"softirq_share\": %.5f, \"bh_sections\": %" PRIu64 "},\n",
		share(r, r->app_ps), app_work_ps(r) / APP_WORK_UNIT_PS,
		(double)(app_work_ps(r) / APP_WORK_UNIT_PS) / r->seconds,
		r->app_bursts, share(r, r->app_softirq_ps), r->app_bh_sections);
	fprintf(f, "   \"cpu\": {\"app\": %.5f, \"worker\": %.5f, \"inline\": %.5f"
		", \"threads\": %.5f, \"idle\": %.5f},\n", share(r, r->app_ps),
		share(r, r->worker_ps), share(r, r->irq_ps),
		share(r, r->threads_ps), share(r, r->idle_ps));
	/*
	 * Under rt the dispatcher's pass is the NIC's forced-threaded
	 * handler, irq/N at SCHED_FIFO 50; elsewhere the hardirq's exit.
	 */
	fprintf(f, "   \"inline\": {\"as\": \"%s\", \"sched\": \"%s\", "
		"\"prio\": %d, \"cpu\": %.5f, \"passes\": %" PRIu64 ", ",
		irq_thread ? "irq/sim-rx" : "hardirq",
		irq_thread ? "fifo" : "irq",
		irq_thread ? SCHED_FIFO_PRIO_IRQ : 0, share(r, r->irq_ps),
		r->irq_passes);
	json_handler_runs(f, r, r->irq_vec_runs);
	fprintf(f, ", \"lock_busy\": %" PRIu64 "},\n", st->lock_busy);
	fprintf(f, "   \"worker\": {\"name\": \"%s\", \"cpu\": %.5f"
		", \"calls\": %" PRIu64 ", ", w->name, share(r, r->worker_ps),
		w->calls);
	json_handler_runs(f, r, w->vec_runs);
	fprintf(f, ", \"bh_busy\": %" PRIu64 "},\n", w->bh_busy);
	json_threads(f, r);
	fprintf(f, "   \"bh_lock\": {\"waits\": %" PRIu64 ", \"wait_p99_us\": %.3f"
		", \"wait_max_us\": %.3f, \"lock_wait_calls\": %" PRIu64
		", \"wait_runs_max\": %" PRIu64 "},\n", st->lock_wait.samples,
		us(sirq_latency_quantile(&st->lock_wait, 0.99)),
		us(st->lock_wait.max_ns), r->lock_waits, st->lock_wait_runs_max);
	fprintf(f, "   \"timer\": {\"period_us\": %.1f, \"runs\": %" PRIu64
		", \"late_p50_us\": %.3f, \"late_p99_us\": %.3f"
		", \"late_max_us\": %.3f, \"raise_to_run_p99_us\": %.3f"
		", \"raise_to_run_max_us\": %.3f},\n",
		(double)c->timer_period_ps / PS_PER_US, r->timer_runs,
		us(hist_quantile(&r->lat_timer, 0.5)),
		us(hist_quantile(&r->lat_timer, 0.99)), us(r->lat_timer.max_ns),
		us(sirq_latency_quantile(&st->latency[SIRQ_TIMER], 0.99)),
		us(st->latency[SIRQ_TIMER].max_ns));
	fprintf(f, "   \"packets\": {\"arrived\": %" PRIu64 ", \"processed\": %"
		PRIu64 ", \"dropped\": %" PRIu64 ", \"in_ring\": %" PRIu64
		", \"tx_flushed\": %" PRIu64 ", \"tx_dropped\": %" PRIu64
		", \"tx_pending\": %" PRIu64 ", \"time_squeeze\": %" PRIu64
		"}, \"mpps\": %.4f,\n", r->arrived, r->processed, r->dropped,
		r->in_ring, r->tx_flushed, r->tx_dropped, r->tx_pending,
		r->time_squeeze, (double)r->processed / r->seconds / 1e6);
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
		", \"app_random\": %s, \"app_nice\": %d, \"app_bh_us\": %.1f"
		", \"app_bh_every_us\": %.1f, \"thread_sched\": \"%s\""
		", \"thread_nice\": %d, \"timer_us\": %.1f"
		", \"timer_cost_ns\": %.3f, \"seed\": %" PRIu64 "}",
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
		c->app_random ? "true" : "false", c->app_nice,
		(double)c->app_bh_ps / PS_PER_US,
		(double)c->app_bh_every_ps / PS_PER_US,
		thread_sched_names[c->thread_sched], c->thread_nice,
		(double)c->timer_period_ps / PS_PER_US,
		(double)c->timer_cost_ps / PS_PER_NS, c->seed);
}

/* Handler runs of @vec in the softirq threads, and in all contexts. */
static void
vec_runs(const struct result *x, unsigned int vec, uint64_t *threads,
	 uint64_t *all)
{
	unsigned int k;

	*threads = 0;
	for (k = 0; k < x->nb_threads; k++)
		*threads += x->task[TASK_THREAD0 + k].vec_runs[vec];
	*all = x->st.runs[vec][SIRQ_CTX_INLINE] + x->st.runs[vec][SIRQ_CTX_WORKER];
}

/* Percentage of @vec's runs that were a softirq thread's; NAN: none ran. */
static double
thread_pct(const struct result *x, unsigned int vec)
{
	uint64_t thr, all;

	vec_runs(x, vec, &thr, &all);
	return all ? 100.0 * (double)thr / (double)all : NAN;
}

static uint64_t
thread_wakeups(const struct result *x)
{
	uint64_t n = 0;
	unsigned int k;

	for (k = 0; k < x->nb_threads; k++)
		n += x->task[TASK_THREAD0 + k].wakeups;
	return n;
}

/* A table's rows: label and decimals; the values in row_value(). */
static const struct {
	const char *label;
	int prec;
} rows[] = {
	{ "stalls/s (>= 8 ms)", 2 }, { "NET_RX p50 us", 1 },
	{ "NET_RX p99 us", 1 }, { "NET_RX p99.9 us", 1 },
	{ "NET_RX max us", 1 }, { "NET_TX p99 us", 1 },
	{ "NET_TX max us", 1 }, { "app CPU %", 2 }, { "app units/s (M)", 2 },
	{ "worker CPU %", 2 }, { "inline CPU %", 2 }, { "Mpps processed", 2 },
	{ "dropped %", 2 }, { "wake need_resched", 0 },
	{ "wake restart_limit", 0 }, { "wake time_limit", 0 },
	{ "wake handoff", 0 }, { "windows defer", 0 },
	{ "windows overload", 0 }, { "window overrides", 0 },
	{ "stale windows", 0 }, { "threads CPU %", 2 },
	{ "thread wakeups", 0 }, { "NET_RX in thread %", 1 },
	{ "TIMER in thread %", 1 }, { "TIMER late p99 us", 1 },
	{ "BH lock waits", 0 },
};
#define NB_ROWS (sizeof(rows) / sizeof(rows[0]))

/* Row @r of result @x; NAN prints as "-". */
static double
row_value(const struct result *x, unsigned int r)
{
	const struct sirq_stats *st = &x->st;

	switch (r) {
	case 0: return (double)st->latency[SIRQ_NET_RX].stalls / x->seconds;
	case 1: return us(hist_quantile(&x->lat_rx, 0.5));
	case 2: return us(hist_quantile(&x->lat_rx, 0.99));
	case 3: return us(hist_quantile(&x->lat_rx, 0.999));
	case 4: return us(x->lat_rx.max_ns);
	case 5: return us(hist_quantile(&x->lat_tx, 0.99));
	case 6: return us(x->lat_tx.max_ns);
	case 7: return 100 * share(x, x->app_ps);
	case 8: return (double)(app_work_ps(x) / APP_WORK_UNIT_PS) /
		x->seconds / 1e6;
	case 9: return 100 * share(x, x->worker_ps);
	case 10: return 100 * share(x, x->irq_ps);
	case 11: return (double)x->processed / x->seconds / 1e6;
	case 12: return x->arrived ? 100.0 * (double)x->dropped /
		(double)x->arrived : 0.0;
	case 13: return (double)st->wakeups[SIRQ_WAKE_NEED_RESCHED];
	case 14: return (double)st->wakeups[SIRQ_WAKE_RESTART];
	case 15: return (double)st->wakeups[SIRQ_WAKE_TIME];
	case 16: return (double)st->wakeups[SIRQ_WAKE_HANDOFF];
	case 17: return (double)st->windows_opened[SIRQ_WINDOW_DEFER];
	case 18: return (double)st->windows_opened[SIRQ_WINDOW_OVERLOAD];
	case 19: return (double)st->window_overrides;
	case 20: return (double)st->stale_windows_ignored;
	case 21: return 100 * share(x, x->threads_ps);
	case 22: return (double)thread_wakeups(x);
	case 23: return thread_pct(x, SIRQ_NET_RX);
	case 24: return thread_pct(x, SIRQ_TIMER);
	case 25: return x->c->timer_period_ps ?
		us(hist_quantile(&x->lat_timer, 0.99)) : NAN;
	case 26: return (double)st->lock_wait.samples;
	default: return NAN;
	}
}

/* One table: a row per metric, a column per policy. */
void
print_table(const struct result *const *res, unsigned int n)
{
	int w = 11;
	unsigned int r, i;

	for (i = 0; i < n; i++) {
		int len = (int)strlen(sirq_policy_name(res[i]->c->policy));

		if (len > w)
			w = len;
	}
	printf("%-20s", "");
	for (i = 0; i < n; i++)
		printf(" %*s", w, sirq_policy_name(res[i]->c->policy));
	printf("\n");
	for (r = 0; r < NB_ROWS; r++) {
		printf("%-20s", rows[r].label);
		for (i = 0; i < n; i++) {
			double v = row_value(res[i], r);

			if (isnan(v))
				printf(" %*s", w, "-");
			else
				printf(" %*.*f", w, rows[r].prec, v);
		}
		printf("\n");
	}
	printf("\n");
}
