/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Observability: the /sirq/ telemetry commands and the JSON report.
 *
 * Both walk the same visitors, so a counter added here shows up in
 * dpdk-telemetry.py and in the apps' JSON alike. Telemetry callbacks run
 * on the telemetry thread: they read through sirq_stats_get() and
 * sirq_lcore_stats_get() (atomic per counter) under the registry lock,
 * which keeps an lcore from being freed underneath them.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "sirq_compat.h"
#include "sirq_private.h"
#include "sirq_lcore_internal.h"

static const char *const mode_names[SIRQ_MODE_MAX] = {
	[SIRQ_MODE_POLL] = "poll",
	[SIRQ_MODE_IRQ] = "irq",
};

/* Sink of (name, value) pairs: a telemetry dict or a JSON object. */
typedef void (*emit_u64_t)(void *sink, const char *name, uint64_t v);

static void
visit_config(const struct sirq_lcore *lc, emit_u64_t emit, void *sink)
{
	const struct sirq_lcore_conf *c = &lc->conf;
	const struct sirq_params *p = &sirq_cpu_conf(lc->cpu)->params;

	emit(sink, "max_restart", p->max_restart);
	emit(sink, "max_time_ns", p->max_time_ns);
	emit(sink, "defer_window_ns", p->defer_window_ns);
	emit(sink, "overload_window_ns", p->overload_window_ns);
	emit(sink, "expedited_mask", p->expedited_mask);
	emit(sink, "tick_hz", p->tick_hz);
	emit(sink, "stall_threshold_ns", p->stall_threshold_ns);
	emit(sink, "napi_weight", c->napi_weight);
	emit(sink, "netdev_budget", c->netdev_budget);
	emit(sink, "netdev_budget_us", c->netdev_budget_us);
	emit(sink, "irq_tick_us", c->irq_tick_us);
	emit(sink, "irq_priority", (uint64_t)c->irq_priority);
	emit(sink, "rx_queues", lc->rx.nb_napi);
	emit(sink, "rx_queues_desc_status", lc->rx.nb_desc);
	emit(sink, "rx_queues_count", lc->rx.nb_count);
	emit(sink, "rx_queues_monitor", lc->rx.nb_monitor);
	emit(sink, "rx_queues_intr", lc->rx.nb_intr);
	emit(sink, "tx_queues", lc->tx.nb_txq);
	emit(sink, "tx_queues_done_cleanup", lc->tx.nb_done_cleanup);
	emit(sink, "tx_queues_refcount", lc->tx.nb_done_refcount);
	emit(sink, "worker_pi_priority", (uint64_t)c->worker_boost_priority);
	/* Every queue's NAPI settings at start; /sirq/napi has each one's now. */
	emit(sink, "napi_defer_hard_irqs", c->napi.defer_hard_irqs);
	emit(sink, "napi_gro_flush_timeout_ns", c->napi.gro_flush_timeout_ns);
	emit(sink, "napi_irq_suspend_timeout_ns", c->napi.irq_suspend_timeout_ns);
	/* netdev-genl's value: 0 disabled, 1 enabled, 2 busy-poll. */
	emit(sink, "napi_threaded", c->napi.threaded);
}

/*
 * The NAPI contexts' counters that sirq_napi_info has no room for, summed
 * over the lcore's contexts (/sirq/napi has each one's): polls by the
 * threads, of which busy polls (threaded busy-poll), and completions
 * that turned an interrupt back on. Racy reads, one counter at a time.
 */
static void
visit_napi_counters(const struct sirq_lcore *lc, emit_u64_t emit, void *sink)
{
	uint64_t thread = 0, busy = 0, unmasks = 0;
	uint16_t i;

	for (i = 0; i < lc->rx.nb_napi; i++) {
		const struct sirq_napi_counters *c = &lc->rx.sd.counters[i];

		thread += __atomic_load_n(&c->thread_polls, __ATOMIC_RELAXED);
		busy += __atomic_load_n(&c->thread_busy_polls,
					__ATOMIC_RELAXED);
		unmasks += __atomic_load_n(&c->irq_unmasks, __ATOMIC_RELAXED);
	}
	emit(sink, "napi_thread_polls", thread);
	emit(sink, "napi_thread_busy_polls", busy);
	emit(sink, "napi_irq_unmasks", unmasks);
}

static void
visit_counters(const struct sirq_lcore *lc, const struct sirq_stats *st,
	       emit_u64_t emit, void *sink)
{
	struct sirq_lcore_stats ls;
	char name[64];
	unsigned int i, c;

	sirq_lcore_stats_get(lc, &ls);
	emit(sink, "iterations", ls.iterations);
	emit(sink, "rx_packets", ls.rx_packets);
	emit(sink, "rx_polls", ls.rx_polls);
	emit(sink, "time_squeeze", ls.time_squeeze);
	emit(sink, "budget_exhausted", ls.budget_exhausted);
	emit(sink, "irq_sleeps", ls.irq_sleeps);
	emit(sink, "irq_rx_events", ls.irq_rx_events);
	emit(sink, "worker_passes", ls.worker_passes);
	emit(sink, "tx_packets", ls.tx_packets);
	emit(sink, "tx_bursts", ls.tx_bursts);
	emit(sink, "remote_calls", ls.remote_calls);
	emit(sink, "irq_ticks", ls.irq_ticks);
	emit(sink, "irq_quiet_looks", ls.irq_quiet_looks);
	emit(sink, "irq_tick_sleeps", ls.irq_tick_sleeps);
	emit(sink, "tx_dropped", ls.tx_dropped);
	emit(sink, "tx_completions", ls.tx_completions);
	emit(sink, "rx_dropped_at_stop", ls.rx_dropped_at_stop);
	emit(sink, "rx_sched_desc", ls.rx_sched_desc);
	emit(sink, "rx_sched_fetch", ls.rx_sched_fetch);
	emit(sink, "worker_pi_boosts", ls.worker_pi_boosts);
	emit(sink, "poll_waits", ls.poll_waits);
	emit(sink, "rx_sched_monitor", ls.rx_sched_monitor);
	emit(sink, "tx_done_cleanup_calls", ls.tx_done_cleanup_calls);
	emit(sink, "tx_done_cleanup_pkts", ls.tx_done_cleanup_pkts);
	emit(sink, "rx_intr_rearms", ls.rx_intr_rearms);
	emit(sink, "rx_intr_rearm_work", ls.rx_intr_rearm_work);
	emit(sink, "rx_sched_count", ls.rx_sched_count);
	visit_napi_counters(lc, emit, sink);

	for (i = 0; i < SIRQ_EXIT_MAX; i++)
		for (c = 0; c < SIRQ_CTX_MAX; c++) {
			snprintf(name, sizeof(name), "pass_%s_%s",
				 sirq_exit_name(i), sirq_ctx_name(c));
			emit(sink, name, st->pass_exit[i][c]);
		}
	for (i = 0; i < SIRQ_WAKE_MAX; i++) {
		snprintf(name, sizeof(name), "wakeup_%s", sirq_wake_name(i));
		emit(sink, name, st->wakeups[i]);
	}
	emit(sink, "worker_continuations", st->worker_continuations);
	emit(sink, "worker_wakeups_unused", st->worker_wakeups_unused);
	for (i = 0; i < SIRQ_WINDOW_MAX; i++) {
		snprintf(name, sizeof(name), "window_%s", sirq_window_name(i));
		emit(sink, name, st->windows_opened[i]);
	}
	emit(sink, "window_overrides", st->window_overrides);
	emit(sink, "windows_closed_idle", st->windows_closed_idle);
	emit(sink, "stale_windows_ignored", st->stale_windows_ignored);
	emit(sink, "deferred_to_worker", st->deferred_to_worker);
	emit(sink, "lock_busy", st->lock_busy);
	/* Waits for the execution lock: a waiter gets it within one vector. */
	emit(sink, "lock_waits", st->lock_wait.samples);
	emit(sink, "lock_wait_p99_ns", sirq_latency_quantile(&st->lock_wait, 0.99));
	emit(sink, "lock_wait_max_ns", st->lock_wait.max_ns);
	emit(sink, "lock_wait_stalls", st->lock_wait.stalls);
	emit(sink, "lock_wait_runs_max", st->lock_wait_runs_max);
	/* The execution models' threads' waits, apart from the application's. */
	emit(sink, "thread_lock_waits", st->thread_lock_wait.samples);
	emit(sink, "thread_lock_wait_max_ns", st->thread_lock_wait.max_ns);
	/* Another CPU's thread in the way: refused while the lcore runs. */
	emit(sink, "remote_hold_episodes", st->remote_hold.samples);
	emit(sink, "remote_hold_ns", st->remote_hold.sum_ns);
	emit(sink, "remote_hold_max_ns", st->remote_hold.max_ns);
	emit(sink, "remote_refused", st->remote_refused);
}

/* Vectors worth showing: the kernel's ten and any registered beyond. */
static bool
vector_shown(const struct sirq_stats *st, unsigned int v)
{
	return v < SIRQ_NR_KERNEL_VECTORS ||
		st->runs[v][SIRQ_CTX_INLINE] + st->runs[v][SIRQ_CTX_WORKER] != 0;
}

static void
visit_vector(const struct sirq_stats *st, unsigned int v, emit_u64_t emit,
	     void *sink)
{
	emit(sink, "runs_inline", st->runs[v][SIRQ_CTX_INLINE]);
	emit(sink, "runs_worker", st->runs[v][SIRQ_CTX_WORKER]);
	emit(sink, "time_ns_inline", st->time_ns[v][SIRQ_CTX_INLINE]);
	emit(sink, "time_ns_worker", st->time_ns[v][SIRQ_CTX_WORKER]);
}

static void
visit_latency(const struct sirq_latency *lat, emit_u64_t emit, void *sink)
{
	emit(sink, "samples", lat->samples);
	emit(sink, "mean_ns", lat->samples ? lat->sum_ns / lat->samples : 0);
	emit(sink, "p50_ns", sirq_latency_quantile(lat, 0.50));
	emit(sink, "p99_ns", sirq_latency_quantile(lat, 0.99));
	emit(sink, "p999_ns", sirq_latency_quantile(lat, 0.999));
	emit(sink, "max_ns", lat->max_ns);
	emit(sink, "stalls", lat->stalls);
}

/* Telemetry. */

static void
tel_emit(void *sink, const char *name, uint64_t v)
{
	sirq_tel_add_dict_uint(sink, name, v);
}

static int
parse_lcore_param(const char *params, unsigned int *lcore_id)
{
	char *end;
	unsigned long v;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	errno = 0;
	v = strtoul(params, &end, 10);
	if (errno != 0 || *end != '\0' || v >= RTE_MAX_LCORE)
		return -EINVAL;
	*lcore_id = (unsigned int)v;
	return 0;
}

/*
 * A command that fails answers with the reason, {"error": "..."}, where
 * a bare negative return would give the client only null.
 */
static int __rte_format_printf(2, 3)
tel_error(struct rte_tel_data *d, const char *fmt, ...)
{
	char why[RTE_TEL_MAX_STRING_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", why);
	return 0;
}

/* "LCORE" of a running lcore, under the registry lock; else the error. */
static struct sirq_lcore *
tel_lookup(const char *params, struct rte_tel_data *d)
{
	struct sirq_lcore *lc;
	unsigned int id;

	if (parse_lcore_param(params, &id) != 0) {
		tel_error(d, "parameter '%s' is not an lcore id (0..%u)",
			  params != NULL ? params : "", RTE_MAX_LCORE - 1);
		return NULL;
	}
	lc = sirq_lcore_lookup_locked(id);
	if (lc == NULL)
		tel_error(d, "lcore %u has no sirq_lcore", id);
	return lc;
}

/*
 * A vector's name as a telemetry key: DPDK's telemetry drops a key with
 * characters other than letters, digits and '_' without a word, so a
 * vector named "fwd-peak" would vanish from /sirq/softirqs.
 */
static const char *
tel_key(const char *name, char *buf, size_t len)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		buf[i] = isalnum((unsigned char)name[i]) ? name[i] : '_';
	buf[i] = '\0';
	return buf;
}

struct tel_walk {
	struct rte_tel_data *d;
};

static void
tel_softirqs_one(struct sirq_lcore *lc, void *arg)
{
	struct tel_walk *w = arg;
	struct rte_tel_data *per = rte_tel_data_alloc();
	struct sirq_stats st;
	char name[32], key[32];
	unsigned int v;

	if (per == NULL)
		return;
	sirq_stats_get(lc->cpu, &st);
	rte_tel_data_start_dict(per);
	for (v = 0; v < SIRQ_MAX_VECTORS; v++)
		if (vector_shown(&st, v))
			sirq_tel_add_dict_uint(per,
				tel_key(sirq_vector_name(lc->cpu, v), key,
					sizeof(key)),
				st.runs[v][SIRQ_CTX_INLINE] +
				st.runs[v][SIRQ_CTX_WORKER]);
	snprintf(name, sizeof(name), "lcore%u", lc->lcore_id);
	rte_tel_data_add_dict_container(w->d, name, per, 0);
}

static int
tel_softirqs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_walk w = { .d = d };

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	sirq_lcore_foreach(tel_softirqs_one, &w);
	return 0;
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct sirq_lcore *lc;
	struct sirq_stats st;

	RTE_SET_USED(cmd);
	sirq_lcore_registry_lock();
	lc = tel_lookup(params, d);
	if (lc != NULL) {
		sirq_stats_get(lc->cpu, &st);
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "policy",
			sirq_policy_name(sirq_cpu_conf(lc->cpu)->params.policy));
		visit_counters(lc, &st, tel_emit, d);
	}
	sirq_lcore_registry_unlock();
	return 0;
}

static int
tel_latency(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct sirq_lcore *lc;
	struct sirq_stats *st;
	char key[32];
	unsigned int v;

	RTE_SET_USED(cmd);
	st = malloc(sizeof(*st));
	if (st == NULL)
		return tel_error(d, "out of memory");
	sirq_lcore_registry_lock();
	lc = tel_lookup(params, d);
	if (lc != NULL) {
		sirq_stats_get(lc->cpu, st);
		rte_tel_data_start_dict(d);
		for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
			struct rte_tel_data *per;

			if (st->latency[v].samples == 0)
				continue;
			per = rte_tel_data_alloc();
			if (per == NULL)
				break;
			rte_tel_data_start_dict(per);
			visit_latency(&st->latency[v], tel_emit, per);
			rte_tel_data_add_dict_container(d,
				tel_key(sirq_vector_name(lc->cpu, v), key,
					sizeof(key)), per, 0);
		}
	}
	sirq_lcore_registry_unlock();
	free(st);
	return 0;
}

static void
tel_config_one(struct sirq_lcore *lc, void *arg)
{
	struct tel_walk *w = arg;
	struct rte_tel_data *per = rte_tel_data_alloc();
	char name[32];

	if (per == NULL)
		return;
	rte_tel_data_start_dict(per);
	rte_tel_data_add_dict_string(per, "policy",
		sirq_policy_name(sirq_cpu_conf(lc->cpu)->params.policy));
	rte_tel_data_add_dict_string(per, "mode", mode_names[lc->conf.mode]);
	visit_config(lc, tel_emit, per);
	snprintf(name, sizeof(name), "lcore%u", lc->lcore_id);
	rte_tel_data_add_dict_container(w->d, name, per, 0);
}

static int
tel_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_walk w = { .d = d };

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	rte_tel_data_start_dict(d);
	sirq_lcore_foreach(tel_config_one, &w);
	return 0;
}

/*
 * netdev-genl's napi-get reply, for one context: "mode" says who polls
 * it (softirq or threaded), "threaded" netdev-genl's napi-threaded.
 */
static void
tel_napi_dict(struct rte_tel_data *d, const struct sirq_lcore *lc,
	      const struct sirq_napi_info *n, unsigned int lcore_id)
{
	const struct sirq_napi_counters *c = &lc->rx.sd.counters[n->id];
	const char *threaded = sirq_napi_threaded_name(n->params.threaded);

	rte_tel_data_start_dict(d);
	sirq_tel_add_dict_uint(d, "lcore", lcore_id);
	sirq_tel_add_dict_uint(d, "id", n->id);
	sirq_tel_add_dict_uint(d, "port", n->port);
	sirq_tel_add_dict_uint(d, "queue", n->queue);
	rte_tel_data_add_dict_string(d, "mode",
				     n->params.threaded ? "threaded" : "softirq");
	rte_tel_data_add_dict_string(d, "threaded",
				     threaded != NULL ? threaded : "?");
	sirq_tel_add_dict_uint(d, "defer_hard_irqs",
			       n->params.defer_hard_irqs);
	sirq_tel_add_dict_uint(d, "gro_flush_timeout",
			       n->params.gro_flush_timeout_ns);
	sirq_tel_add_dict_uint(d, "irq_suspend_timeout",
			       n->params.irq_suspend_timeout_ns);
	rte_tel_data_add_dict_int(d, "pid", n->thread_tid);
	sirq_tel_add_dict_uint(d, "scheduled", n->scheduled);
	sirq_tel_add_dict_uint(d, "irq_masked", n->irq_masked);
	sirq_tel_add_dict_uint(d, "in_busy_poll", n->in_busy_poll);
	sirq_tel_add_dict_uint(d, "deferred", n->deferred);
	sirq_tel_add_dict_uint(d, "watchdog", n->watchdog);
	sirq_tel_add_dict_uint(d, "busy_polls", n->busy_polls);
	sirq_tel_add_dict_uint(d, "busy_packets", n->busy_packets);
	sirq_tel_add_dict_uint(d, "thread_polls", n->thread_polls);
	sirq_tel_add_dict_uint(d, "packets", n->packets);
	sirq_tel_add_dict_uint(d, "irqs", n->irqs);
	sirq_tel_add_dict_uint(d, "thread_busy_polls",
			       __atomic_load_n(&c->thread_busy_polls,
					       __ATOMIC_RELAXED));
	sirq_tel_add_dict_uint(d, "irq_unmasks",
			       __atomic_load_n(&c->irq_unmasks,
					       __ATOMIC_RELAXED));
}

/*
 * "LCORE[,ID][,key=value...]": the lcore, the context (-1: none given)
 * and where the settings start (NULL: none).
 */
static int
parse_napi_param(const char *params, unsigned int *lcore_id, long *napi_id,
		 const char **rest)
{
	char *end;
	unsigned long v;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	errno = 0;
	v = strtoul(params, &end, 10);
	if (errno != 0 || end == params || v >= RTE_MAX_LCORE ||
	    (*end != '\0' && *end != ','))
		return -EINVAL;
	*lcore_id = (unsigned int)v;
	*napi_id = -1;
	*rest = NULL;
	if (*end == '\0')
		return 0;
	params = end + 1;
	v = strtoul(params, &end, 10);
	if (errno != 0 || end == params || v >= SIRQ_LCORE_MAX_NAPI ||
	    (*end != '\0' && *end != ','))
		return -EINVAL;
	*napi_id = (long)v;
	if (*end == ',')
		*rest = end + 1;
	return 0;
}

/* napi-get: "LCORE" (every context of the lcore) or "LCORE,ID". */
static int
tel_napi(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	const char *rest;
	unsigned int lcore_id, i;
	long napi_id;

	RTE_SET_USED(cmd);
	if (parse_napi_param(params, &lcore_id, &napi_id, &rest) != 0 ||
	    rest != NULL)
		return tel_error(d, "parameters '%s': want LCORE or LCORE,NAPI_ID",
				 params != NULL ? params : "");
	sirq_lcore_registry_lock();
	lc = sirq_lcore_lookup_locked(lcore_id);
	if (lc == NULL) {
		tel_error(d, "lcore %u has no sirq_lcore", lcore_id);
	} else if (napi_id >= 0) {
		if (sirq_napi_get(lc, (unsigned int)napi_id, &info) == 0)
			tel_napi_dict(d, lc, &info, lcore_id);
		else
			tel_error(d, "lcore %u has no NAPI context %ld (it has %u)",
				  lcore_id, napi_id, sirq_napi_count(lc));
	} else {
		rte_tel_data_start_dict(d);
		for (i = 0; i < sirq_napi_count(lc); i++) {
			struct rte_tel_data *per = rte_tel_data_alloc();
			char name[16];

			if (per == NULL)
				break;
			sirq_napi_get(lc, i, &info);
			tel_napi_dict(per, lc, &info, lcore_id);
			snprintf(name, sizeof(name), "napi%u", i);
			rte_tel_data_add_dict_container(d, name, per, 0);
		}
	}
	sirq_lcore_registry_unlock();
	return 0;
}

/* An unsigned number, all of @s; -EINVAL for anything else. */
static int
parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || *v > max)
		return -EINVAL;
	return 0;
}

/* One "key=value" of napi-set into @p; else -EINVAL, the reason in @d. */
static int
napi_set_item(char *item, struct sirq_napi_params *p, struct rte_tel_data *d)
{
	char *eq = strchr(item, '=');
	uint64_t v;
	int t;

	if (eq == NULL) {
		tel_error(d, "'%s' is not key=value", item);
		return -EINVAL;
	}
	*eq = '\0';
	if (strcmp(item, "defer_hard_irqs") == 0 &&
	    parse_u64(eq + 1, UINT32_MAX, &v) == 0)
		p->defer_hard_irqs = (uint32_t)v;
	else if (strcmp(item, "gro_flush_timeout") == 0 &&
		 parse_u64(eq + 1, UINT64_MAX, &v) == 0)
		p->gro_flush_timeout_ns = v;
	else if (strcmp(item, "irq_suspend_timeout") == 0 &&
		 parse_u64(eq + 1, UINT64_MAX, &v) == 0)
		p->irq_suspend_timeout_ns = v;
	else if (strcmp(item, "threaded") == 0 &&
		 (t = sirq_napi_threaded_from_name(eq + 1)) >= 0)
		p->threaded = (uint8_t)t;
	else if (strcmp(item, "defer_hard_irqs") != 0 &&
		 strcmp(item, "gro_flush_timeout") != 0 &&
		 strcmp(item, "irq_suspend_timeout") != 0 &&
		 strcmp(item, "threaded") != 0) {
		tel_error(d, "unknown key '%s' (defer_hard_irqs, gro_flush_timeout, irq_suspend_timeout, threaded)",
			  item);
		return -EINVAL;
	} else if (strcmp(item, "threaded") == 0) {
		tel_error(d, "bad value '%s' for threaded (disabled, enabled, busy-poll; 0, 1)",
			  eq + 1);
		return -EINVAL;
	} else {
		tel_error(d, "bad value '%s' for %s", eq + 1, item);
		return -EINVAL;
	}
	return 0;
}

/*
 * napi-set: "LCORE,ID,key=value[,key=value...]", keys defer_hard_irqs,
 * gro_flush_timeout and irq_suspend_timeout (ns, as the kernel's) and
 * threaded (disabled, enabled or busy-poll, as netdev-genl's
 * napi-threaded; 0/1 and false/true still taken); what is not given
 * keeps its value. Replies with the
 * context as napi-get does.
 */
static int
tel_napi_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct sirq_napi_params p;
	struct sirq_napi_info info;
	struct sirq_lcore *lc;
	const char *rest;
	char buf[256], *item, *save = NULL;
	unsigned int lcore_id;
	long napi_id;
	int ret;

	RTE_SET_USED(cmd);
	if (parse_napi_param(params, &lcore_id, &napi_id, &rest) != 0 ||
	    napi_id < 0 || rest == NULL ||
	    (size_t)snprintf(buf, sizeof(buf), "%s", rest) >= sizeof(buf))
		return tel_error(d, "parameters '%s': want LCORE,NAPI_ID,key=value[,key=value...]",
				 params != NULL ? params : "");
	sirq_lcore_registry_lock();
	lc = sirq_lcore_lookup_locked(lcore_id);
	if (lc == NULL) {
		tel_error(d, "lcore %u has no sirq_lcore", lcore_id);
		goto out;
	}
	if (sirq_napi_get(lc, (unsigned int)napi_id, &info) != 0) {
		tel_error(d, "lcore %u has no NAPI context %ld", lcore_id,
			  napi_id);
		goto out;
	}
	p = info.params;
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save))
		if (napi_set_item(item, &p, d) != 0)
			goto out;
	ret = sirq_napi_set(lc, (unsigned int)napi_id, &p);
	if (ret == -EAGAIN)
		tel_error(d, "napi-set refused (%s): its thread could not start",
			  strerror(-ret));
	else if (ret == -EINVAL)
		tel_error(d, "napi-set refused (%s): a deferral needs its timeout, timeouts up to 1 s",
			  strerror(-ret));
	else if (ret != 0)
		tel_error(d, "napi-set refused: %s", strerror(-ret));
	else if (sirq_napi_get(lc, (unsigned int)napi_id, &info) == 0)
		tel_napi_dict(d, lc, &info, lcore_id);
out:
	sirq_lcore_registry_unlock();
	return 0;
}

/* The control plane: /sirq/params and /sirq/params_set, as sysctl. */

static void
tel_params_dict(struct rte_tel_data *d, const struct sirq_lcore *lc)
{
	struct sirq_lcore_params p;

	sirq_lcore_get_params(lc, &p);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "policy",
				     sirq_policy_name(p.engine.policy));
	rte_tel_data_add_dict_string(d, "mode", mode_names[lc->conf.mode]);
	tel_emit(d, "max_restart", p.engine.max_restart);
	tel_emit(d, "max_time_ns", p.engine.max_time_ns);
	tel_emit(d, "defer_window_ns", p.engine.defer_window_ns);
	tel_emit(d, "overload_window_ns", p.engine.overload_window_ns);
	tel_emit(d, "expedited_mask", p.engine.expedited_mask);
	tel_emit(d, "tick_hz", p.engine.tick_hz);
	tel_emit(d, "stall_threshold_ns", p.engine.stall_threshold_ns);
	tel_emit(d, "napi_weight", p.napi_weight);
	tel_emit(d, "netdev_budget", p.netdev_budget);
	tel_emit(d, "netdev_budget_us", p.netdev_budget_us);
	tel_emit(d, "irq_tick_us", p.irq_tick_us);
	tel_emit(d, "worker_boost_priority", (uint64_t)p.worker_boost_priority);
}

static void
tel_params_one(struct sirq_lcore *lc, void *arg)
{
	struct tel_walk *w = arg;
	struct rte_tel_data *per = rte_tel_data_alloc();
	char name[32];

	if (per == NULL)
		return;
	tel_params_dict(per, lc);
	snprintf(name, sizeof(name), "lcore%u", lc->lcore_id);
	rte_tel_data_add_dict_container(w->d, name, per, 0);
}

/* params: "LCORE", or nothing for every lcore. */
static int
tel_params(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tel_walk w = { .d = d };
	struct sirq_lcore *lc;

	RTE_SET_USED(cmd);
	if (params == NULL || *params == '\0') {
		rte_tel_data_start_dict(d);
		sirq_lcore_foreach(tel_params_one, &w);
		return 0;
	}
	sirq_lcore_registry_lock();
	lc = tel_lookup(params, d);
	if (lc != NULL)
		tel_params_dict(d, lc);
	sirq_lcore_registry_unlock();
	return 0;
}

/* One "key=value" of params_set into @p; NULL, or why not in @why. */
static const char *
params_set_item(char *item, struct sirq_lcore_params *p, char *why,
		size_t len)
{
	char *eq = strchr(item, '=');
	const char *key = item, *val;
	uint64_t v;
	int pol;

	if (eq == NULL) {
		snprintf(why, len, "'%s' is not key=value", item);
		return why;
	}
	*eq = '\0';
	val = eq + 1;
	if (strcmp(key, "policy") == 0) {
		pol = sirq_policy_from_name(val);
		if (pol < 0) {
			char names[128] = "";
			size_t at = 0;

			for (int i = 0; i < SIRQ_POLICY_MAX && at < sizeof(names); i++)
				at += (size_t)snprintf(names + at, sizeof(names) - at,
						       "%s%s", i ? ", " : "",
						       sirq_policy_name(i));
			snprintf(why, len, "unknown policy '%.32s' (%s)", val,
				 names);
			return why;
		}
		p->engine.policy = (enum sirq_policy_id)pol;
		return NULL;
	}
	/* The library's ranges (sirq_param_range()), the messages' too. */
#define R(name, field) \
	if (strcmp(key, name) == 0) { \
		const struct sirq_param_range *r = sirq_param_range(name); \
		if (parse_u64(val, r->max, &v) != 0 || v < r->min) { \
			snprintf(why, len, "bad value '%.32s' for %s: %s", \
				 val, key, r->why); \
			return why; \
		} \
		field = v; \
		return NULL; \
	}
#define U(name, field, max) \
	if (strcmp(key, name) == 0) { \
		if (parse_u64(val, max, &v) != 0) { \
			snprintf(why, len, "bad value '%.32s' for %s (0..%" PRIu64 ")", \
				 val, key, (uint64_t)(max)); \
			return why; \
		} \
		field = v; \
		return NULL; \
	}
	R("max_restart", p->engine.max_restart)
	R("max_time_ns", p->engine.max_time_ns)
	R("defer_window_ns", p->engine.defer_window_ns)
	R("overload_window_ns", p->engine.overload_window_ns)
	R("expedited_mask", p->engine.expedited_mask)
	R("tick_hz", p->engine.tick_hz)
	R("stall_threshold_ns", p->engine.stall_threshold_ns)
	R("napi_weight", p->napi_weight)
	R("netdev_budget", p->netdev_budget)
	R("netdev_budget_us", p->netdev_budget_us)
	U("irq_tick_us", p->irq_tick_us, UINT32_MAX)
	U("worker_boost_priority", p->worker_boost_priority, INT32_MAX)
#undef U
#undef R
	snprintf(why, len, "unknown key '%s'", key);
	return why;
}

/* Apply "key=value,..." to @lc; NULL, or why not in @why. */
static const char *
params_set_lcore(struct sirq_lcore *lc, const char *items, char *why,
		 size_t len)
{
	struct sirq_lcore_params p;
	char buf[512], *item, *save = NULL;
	const char *bad;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", items) >= sizeof(buf)) {
		snprintf(why, len, "parameters longer than %zu characters",
			 sizeof(buf) - 1);
		return why;
	}
	sirq_lcore_get_params(lc, &p);
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		bad = params_set_item(item, &p, why, len);
		if (bad != NULL)
			return bad;
	}
	bad = sirq_lcore_params_why_invalid(lc, &p, why, len);
	if (bad != NULL)
		return bad;
	if (sirq_lcore_set_params(lc, &p) != 0) {
		snprintf(why, len, "lcore %u refused the values", lc->lcore_id);
		return why;
	}
	return NULL;
}

struct params_set_walk {
	const char *items;
	const char *bad;
	char why[RTE_TEL_MAX_STRING_LEN];
};

static void
params_set_one(struct sirq_lcore *lc, void *arg)
{
	struct params_set_walk *w = arg;

	if (w->bad == NULL)
		w->bad = params_set_lcore(lc, w->items, w->why, sizeof(w->why));
}

/*
 * params_set: "LCORE|all,key=value[,key=value...]": the lcore's (or every
 * lcore's) parameters with these changed, applied under its execution
 * lock, as a sysctl write. Replies with what /sirq/params then shows.
 */
static int
tel_params_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct params_set_walk w = { .bad = NULL };
	struct tel_walk tw = { .d = d };
	struct sirq_lcore *lc;
	const char *comma;
	char target[16];

	RTE_SET_USED(cmd);
	comma = params != NULL ? strchr(params, ',') : NULL;
	if (comma == NULL || comma == params ||
	    (size_t)(comma - params) >= sizeof(target))
		return tel_error(d, "parameters '%s': want LCORE|all,key=value[,key=value...]",
				 params != NULL ? params : "");
	memcpy(target, params, (size_t)(comma - params));
	target[comma - params] = '\0';
	w.items = comma + 1;
	if (strcmp(target, "all") == 0) {
		sirq_lcore_foreach(params_set_one, &w);
		if (w.bad != NULL)
			return tel_error(d, "%s", w.bad);
		rte_tel_data_start_dict(d);
		sirq_lcore_foreach(tel_params_one, &tw);
		return 0;
	}
	sirq_lcore_registry_lock();
	lc = tel_lookup(target, d);
	if (lc != NULL) {
		w.bad = params_set_lcore(lc, w.items, w.why, sizeof(w.why));
		if (w.bad != NULL)
			tel_error(d, "%s", w.bad);
		else
			tel_params_dict(d, lc);
	}
	sirq_lcore_registry_unlock();
	return 0;
}

int
sirq_telemetry_register(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/sirq/softirqs", tel_softirqs,
		  "Handler runs per lcore and vector, like /proc/softirqs. No parameters." },
		{ "/sirq/stats", tel_stats,
		  "Engine and dispatcher counters of an lcore. Parameter: lcore id." },
		{ "/sirq/latency", tel_latency,
		  "Raise-to-run latency per vector of an lcore. Parameter: lcore id." },
		{ "/sirq/config", tel_config,
		  "Policy and parameters of every lcore. No parameters." },
		{ "/sirq/napi", tel_napi,
		  "NAPI contexts of an lcore, as netdev-genl napi-get. Parameters: lcore[,napi id]." },
		{ "/sirq/napi_set", tel_napi_set,
		  "napi-set. Params: lcore,id,key=value,... (defer_hard_irqs, gro_flush_timeout, irq_suspend_timeout, threaded)." },
		{ "/sirq/params", tel_params,
		  "Run-time parameters (policy, limits, budgets) of an lcore, or all. Parameter: [lcore id]." },
		{ "/sirq/params_set", tel_params_set,
		  "Change run-time parameters (keys as /sirq/params shows). Parameters: lcore|all,key=value,..." },
	};
	static bool done;
	unsigned int i;
	int ret;

	if (done)
		return 0;
	for (i = 0; i < RTE_DIM(cmds); i++) {
		ret = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn,
						 cmds[i].help);
		if (ret != 0) {
			SIRQ_LOG(ERR, "telemetry command %s: %s", cmds[i].cmd,
				 strerror(-ret));
			return ret;
		}
	}
	done = true;
	return 0;
}

/* JSON report. */

struct json_sink {
	FILE *f;
	const char *sep;
};

static void
json_emit(void *sink, const char *name, uint64_t v)
{
	struct json_sink *j = sink;

	fprintf(j->f, "%s\"%s\": %" PRIu64, j->sep, name, v);
	j->sep = ", ";
}

static void
json_object(FILE *f, const char *key, void (*body)(struct json_sink *j,
		const void *arg), const void *arg, const char *sep)
{
	struct json_sink j = { .f = f, .sep = "" };

	fprintf(f, "%s\"%s\": {", sep, key);
	body(&j, arg);
	fputc('}', f);
}

struct json_lcore {
	const struct sirq_lcore *lc;
	const struct sirq_stats *st;
	unsigned int v;
};

static void
json_config_body(struct json_sink *j, const void *arg)
{
	const struct json_lcore *x = arg;

	fprintf(j->f, "\"policy\": \"%s\", \"mode\": \"%s\"",
		sirq_policy_name(sirq_cpu_conf(x->lc->cpu)->params.policy),
		mode_names[x->lc->conf.mode]);
	j->sep = ", ";
	visit_config(x->lc, json_emit, j);
}

static void
json_counters_body(struct json_sink *j, const void *arg)
{
	const struct json_lcore *x = arg;

	visit_counters(x->lc, x->st, json_emit, j);
}

static void
json_vector_body(struct json_sink *j, const void *arg)
{
	const struct json_lcore *x = arg;
	const struct sirq_latency *lat = &x->st->latency[x->v];
	unsigned int b;

	visit_vector(x->st, x->v, json_emit, j);
	fprintf(j->f, ", \"latency\": {");
	j->sep = "";
	visit_latency(lat, json_emit, j);
	fprintf(j->f, ", \"hist_log2_ns\": [");
	for (b = 0; b < SIRQ_LAT_BUCKETS; b++)
		fprintf(j->f, "%s%" PRIu64, b ? ", " : "", lat->hist[b]);
	fprintf(j->f, "]}");
}

struct json_walk {
	FILE *f;
	unsigned int n;
	struct sirq_stats *st;
};

static void
json_lcore_one(struct sirq_lcore *lc, void *arg)
{
	struct json_walk *w = arg;
	struct json_lcore x = { .lc = lc, .st = w->st };
	unsigned int v;

	sirq_stats_get(lc->cpu, w->st);
	fprintf(w->f, "%s\n  {\"lcore\": %u, ", w->n++ ? "," : "",
		lc->lcore_id);
	json_object(w->f, "config", json_config_body, &x, "");
	json_object(w->f, "counters", json_counters_body, &x, ", ");
	fprintf(w->f, ", \"vectors\": {");
	for (v = 0; v < SIRQ_MAX_VECTORS; v++) {
		if (!vector_shown(w->st, v))
			continue;
		x.v = v;
		json_object(w->f, sirq_vector_name(lc->cpu, v),
			    json_vector_body, &x, v ? ", " : "");
	}
	fprintf(w->f, "}}");
}

int
sirq_stats_json(FILE *f)
{
	struct json_walk w = { .f = f };

	if (f == NULL)
		return -EINVAL;
	w.st = malloc(sizeof(*w.st));
	if (w.st == NULL)
		return -ENOMEM;
	fprintf(f, "{\"lcores\": [");
	sirq_lcore_foreach(json_lcore_one, &w);
	fprintf(f, "\n]}\n");
	free(w.st);
	return ferror(f) ? -EIO : 0;
}
