/* SPDX-License-Identifier: BSD-3-Clause */

/* --probe: a periodic timer and a periodic tasklet on each lcore. */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "app_opts.h"
#include "l2fwd_probe.h"

#define NS_PER_SEC 1000000000ULL

void
l2fwd_probe_spec_default(struct l2fwd_probe_spec *s)
{
	memset(s, 0, sizeof(*s));
}

static int
probe_item(void *spec, const char *key, const char *val, char *err,
	   size_t len)
{
	struct l2fwd_probe_spec *s = spec;
	uint64_t *field, ns;

	if (strcmp(key, "timer") == 0)
		field = &s->timer_ns;
	else if (strcmp(key, "tasklet") == 0)
		field = &s->tasklet_ns;
	else
		goto bad;
	if (val == NULL || *val == '\0')
		goto bad;
	if (app_parse_duration_ns(val, &ns) == 0 &&
	    ns >= L2FWD_PROBE_PERIOD_MIN_NS && ns <= L2FWD_PROBE_PERIOD_MAX_NS) {
		*field = ns;
		return 0;
	}
	snprintf(err, len, "--probe: bad %s '%s' (10us..10s)", key, val);
	return -1;
bad:
	snprintf(err, len, "--probe: bad item '%s%s%s'", key,
		 val != NULL ? "=" : "", val != NULL ? val : "");
	return -1;
}

int
l2fwd_probe_parse(const char *text, struct l2fwd_probe_spec *s, char *err,
		  size_t len)
{
	struct l2fwd_probe_spec n = { .enabled = true };
	int ret;

	if (strcmp(text, "on") == 0) {
		n.timer_ns = n.tasklet_ns = L2FWD_PROBE_PERIOD_DEFAULT_NS;
		*s = n;
		return 0;
	}
	ret = app_spec_parse("--probe", text, probe_item, &n, err, len);
	if (ret < 0)
		return -1;
	if (ret > 0) {
		l2fwd_probe_spec_default(s);
		return 0;
	}
	if (n.timer_ns == 0 && n.tasklet_ns == 0) {
		snprintf(err, len, "--probe: bad value '%s' (timer=P and/or tasklet=Q, on or off)",
			 text);
		return -1;
	}
	*s = n;
	return 0;
}

static void
add(uint64_t *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/* TASKLET: the probe's run. */
static void
probe_tasklet(struct sirq_tasklet *t, void *arg)
{
	struct l2fwd_probe *p = arg;

	RTE_SET_USED(t);
	add(&p->tasklet_runs);
}

/* In TIMER: schedule the tasklet, which raises TASKLET. */
static void
schedule_tasklet(struct l2fwd_probe *p)
{
	if (sirq_tasklet_schedule(sirq_lcore_cpu(p->lc), &p->tasklet))
		add(&p->tasklet_scheduled);
	else
		add(&p->tasklet_already);
}

/*
 * hrtimer_forward(): re-arm @t at its next deadline on its grid (@period
 * ticks from @*deadline, the one that just passed) that is still ahead;
 * the deadlines skipped meanwhile are overruns, counted in @missed. An
 * rte_timer PERIODICAL would instead re-arm at the passed deadline plus
 * one period, in the past when it ran late, and fire back to back: its
 * lateness would grow with the backlog and TIMER would be raised at
 * whatever rate TIMER runs.
 */
static void
forward(struct l2fwd_probe *p, struct rte_timer *t, uint64_t *deadline,
	uint64_t period, uint64_t now, uint64_t *missed, rte_timer_cb_t fn)
{
	uint64_t next = *deadline + period;

	if (next <= now) {
		uint64_t skip = (now - next) / period + 1;

		__atomic_store_n(missed, __atomic_load_n(missed, __ATOMIC_RELAXED) +
				 skip, __ATOMIC_RELAXED);
		next += skip * period;
	}
	*deadline = next;
	rte_timer_reset(t, next - now, SINGLE, p->lcore_id, fn, p);
}

/* The lateness of a timer's run, from its deadline to now. */
static void
record_lateness(struct l2fwd_probe *p, uint64_t deadline, uint64_t now)
{
	uint64_t ns = 0;
	unsigned int b = 0;

	if (now > deadline)
		ns = (uint64_t)((double)(now - deadline) * (double)NS_PER_SEC /
				(double)rte_get_timer_hz());
	if (ns != 0)
		b = RTE_MIN(63u - (unsigned int)__builtin_clzll(ns),
			    SIRQ_LAT_BUCKETS - 1u);
	add(&p->late_hist[b]);
	if (ns > __atomic_load_n(&p->late_max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&p->late_max_ns, ns, __ATOMIC_RELAXED);
}

/* TIMER: timer=P, and the tasklet when its period is the same. */
static void
probe_timer(struct rte_timer *t, void *arg)
{
	struct l2fwd_probe *p = arg;
	uint64_t now = rte_get_timer_cycles();

	record_lateness(p, p->timer_deadline, now);
	add(&p->timer_fires);
	if (p->spec.tasklet_ns == p->spec.timer_ns)
		schedule_tasklet(p);
	forward(p, t, &p->timer_deadline, p->timer_period, now,
		&p->timer_missed, probe_timer);
}

/* TIMER: the tasklet's own timer (tasklet=Q, Q != P). */
static void
probe_tasklet_timer(struct rte_timer *t, void *arg)
{
	struct l2fwd_probe *p = arg;

	schedule_tasklet(p);
	forward(p, t, &p->tasklet_deadline, p->tasklet_period,
		rte_get_timer_cycles(), &p->tasklet_missed, probe_tasklet_timer);
}

void
l2fwd_probe_init(struct l2fwd_probe *p, const struct l2fwd_probe_spec *s,
		 struct sirq_lcore *lc, unsigned int lcore_id)
{
	memset(p, 0, sizeof(*p));
	p->spec = *s;
	p->lc = lc;
	p->lcore_id = lcore_id;
	rte_timer_init(&p->timer);
	rte_timer_init(&p->tasklet_timer);
	sirq_tasklet_init(&p->tasklet, probe_tasklet, p);
}

static uint64_t
ns_to_ticks(uint64_t ns)
{
	uint64_t t = (uint64_t)((double)ns * (double)rte_get_timer_hz() /
				(double)NS_PER_SEC);

	return t != 0 ? t : 1;
}

int
l2fwd_probe_start(struct l2fwd_probe *p)
{
	uint64_t now = rte_get_timer_cycles();
	int ret = 0;

	if (!p->spec.enabled)
		return 0;
	p->timer_period = ns_to_ticks(p->spec.timer_ns);
	p->tasklet_period = ns_to_ticks(p->spec.tasklet_ns);
	if (p->spec.timer_ns != 0) {
		p->timer_deadline = now + p->timer_period;
		ret = rte_timer_reset(&p->timer, p->timer_period, SINGLE,
				      p->lcore_id, probe_timer, p);
	}
	if (ret == 0 && p->spec.tasklet_ns != 0 &&
	    p->spec.tasklet_ns != p->spec.timer_ns) {
		p->tasklet_deadline = now + p->tasklet_period;
		ret = rte_timer_reset(&p->tasklet_timer, p->tasklet_period,
				      SINGLE, p->lcore_id, probe_tasklet_timer, p);
	}
	p->armed = true;
	return ret;
}

void
l2fwd_probe_stop(struct l2fwd_probe *p)
{
	if (!p->armed)
		return;
	rte_timer_stop_sync(&p->timer);
	rte_timer_stop_sync(&p->tasklet_timer);
	p->armed = false;
}

void
l2fwd_probe_json(FILE *f, const struct l2fwd_probe *p)
{
	unsigned int b;

	fprintf(f, "{\"lcore\": %u, \"timer_ns\": %" PRIu64
		", \"tasklet_ns\": %" PRIu64 ", \"tasklet_source\": \"%s\""
		", \"timer_fires\": %" PRIu64 ", \"tasklet_scheduled\": %" PRIu64
		", \"tasklet_already_scheduled\": %" PRIu64
		", \"tasklet_runs\": %" PRIu64 ", \"timer_missed\": %" PRIu64
		", \"tasklet_missed\": %" PRIu64 ", \"timer_late_max_ns\": %" PRIu64
		", \"timer_late_hist_log2_ns\": [", p->lcore_id,
		p->spec.timer_ns, p->spec.tasklet_ns,
		p->spec.tasklet_ns == 0 ? "none" :
		p->spec.tasklet_ns == p->spec.timer_ns ? "timer" : "tasklet_timer",
		__atomic_load_n(&p->timer_fires, __ATOMIC_RELAXED),
		__atomic_load_n(&p->tasklet_scheduled, __ATOMIC_RELAXED),
		__atomic_load_n(&p->tasklet_already, __ATOMIC_RELAXED),
		__atomic_load_n(&p->tasklet_runs, __ATOMIC_RELAXED),
		__atomic_load_n(&p->timer_missed, __ATOMIC_RELAXED),
		__atomic_load_n(&p->tasklet_missed, __ATOMIC_RELAXED),
		__atomic_load_n(&p->late_max_ns, __ATOMIC_RELAXED));
	for (b = 0; b < SIRQ_LAT_BUCKETS; b++)
		fprintf(f, "%s%" PRIu64, b ? ", " : "",
			__atomic_load_n(&p->late_hist[b], __ATOMIC_RELAXED));
	fprintf(f, "]}");
}
