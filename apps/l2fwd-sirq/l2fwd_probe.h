/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef L2FWD_PROBE_H
#define L2FWD_PROBE_H

/*
 * --probe timer=1ms,tasklet=1ms: latency probes on each forwarding
 * lcore, for the mixed scenario of bench/policy-lab.sh (TIMER and
 * tasklets while NET_RX is flooded on the same lcore).
 *
 *   timer=P    a periodic rte_timer on the lcore, every P: the lcore's
 *              TIMER vector is raised every P (the dispatcher raises it
 *              when it finds the deadline passed, or sirqd before its
 *              next pass), and the report's TIMER latency is that
 *              raise-to-run.
 *   tasklet=Q  a tasklet (sirq_tasklet_schedule()) scheduled every Q on
 *              the lcore's TASKLET vector, from an rte_timer callback:
 *              the timer of timer=P when Q = P, a timer of its own
 *              otherwise. The source is thus TIMER, not TASKLET, and the
 *              report's TASKLET latency counts from the schedule (the
 *              raise of TASKLET) to the tasklet's run, with nothing of
 *              TIMER's own delay in it. Nothing else in l2fwd-sirq
 *              schedules tasklets, so TASKLET's runs are the probe's.
 *
 * TIMER's raise is when the binding notices the deadline passed (the
 * dispatcher's "hardirq" look, or sirqd's before each pass), which
 * needs the execution lock: the wait for it is before the raise, not in
 * TIMER's raise-to-run. The report adds the timer's lateness, from its
 * deadline (rte_timer's expire) to its callback: the kernel's timer
 * latency, raise wait and raise-to-run together (timer_late_*).
 *
 * The timers keep to their grid as hrtimer_forward() does: a run that
 * comes late re-arms at the next deadline still ahead, and the deadlines
 * skipped are counted (timer_missed, tasklet_missed), so TIMER is raised
 * every P at most and a late run's lateness is its own, not a backlog's.
 *
 * A tasklet still scheduled when its next period comes is not scheduled
 * again (tasklet_schedule() semantics): its raise time stays the first
 * one, and the report counts the period as "tasklet_already_scheduled".
 * Either item alone is allowed; "on" is timer=1ms,tasklet=1ms.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_timer.h>

#include <sirq.h>

#define L2FWD_PROBE_DEFAULT_TEXT "off"
#define L2FWD_PROBE_PERIOD_DEFAULT_NS 1000000ULL	/* "on": 1 ms */
#define L2FWD_PROBE_PERIOD_MIN_NS 10000ULL		/* 10 us */
#define L2FWD_PROBE_PERIOD_MAX_NS 10000000000ULL	/* 10 s */

struct l2fwd_probe_spec {
	bool enabled;
	uint64_t timer_ns;	/* 0: no timer probe */
	uint64_t tasklet_ns;	/* 0: no tasklet probe */
};

struct l2fwd_probe {
	struct l2fwd_probe_spec spec;
	struct sirq_lcore *lc;
	unsigned int lcore_id;
	bool armed;
	struct rte_timer timer;		/* timer=P (and tasklet=P) */
	struct rte_timer tasklet_timer;	/* tasklet=Q, Q != P */
	struct sirq_tasklet tasklet;
	/* Written in TIMER and TASKLET on the lcore, read by anyone. */
	uint64_t timer_fires;		/* the timer=P callback's runs */
	uint64_t tasklet_scheduled;	/* schedules that raised TASKLET */
	uint64_t tasklet_already;	/* periods that found it scheduled */
	uint64_t tasklet_runs;
	/* timer=P: deadline to callback, log2 buckets of ns as sirq_latency. */
	uint64_t late_hist[SIRQ_LAT_BUCKETS];
	uint64_t late_max_ns;
	/* Periods whose deadline passed before the previous run (overruns). */
	uint64_t timer_missed;
	uint64_t tasklet_missed;
	/* The timers' grids, in rte_timer ticks; only their callbacks write. */
	uint64_t timer_period, timer_deadline;
	uint64_t tasklet_period, tasklet_deadline;
};

void l2fwd_probe_spec_default(struct l2fwd_probe_spec *s);

/*
 * Parse "timer=1ms,tasklet=500us", "on" or "off" into @s. 0, or -1 with
 * a message naming --probe, the item and the value in @err.
 */
int l2fwd_probe_parse(const char *text, struct l2fwd_probe_spec *s,
		      char *err, size_t len);

/* Prepare the probe of lcore @lcore_id (its dispatcher @lc). */
void l2fwd_probe_init(struct l2fwd_probe *p, const struct l2fwd_probe_spec *s,
		      struct sirq_lcore *lc, unsigned int lcore_id);
/* Arm its timers on the lcore: 0 or -errno. */
int l2fwd_probe_start(struct l2fwd_probe *p);
/* Stop its timers (after the lcore stopped); idempotent. */
void l2fwd_probe_stop(struct l2fwd_probe *p);
/* The report's object for this lcore. */
void l2fwd_probe_json(FILE *f, const struct l2fwd_probe *p);

#endif /* L2FWD_PROBE_H */
