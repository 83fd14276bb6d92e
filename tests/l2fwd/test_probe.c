/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq --probe timer=P,tasklet=Q (the mixed scenario of
 * bench/policy-lab.sh): the lcore's TIMER vector is raised every P and
 * its TASKLET vector every Q, as the report's per-vector run counts
 * show, and the probe's own books agree with them. Rates are judged
 * with lenient bounds (LO of the periods at least, 10 % over at most):
 * the CPUs are shared, but a probe that does not fire, or fires at
 * half or twice its period, fails (checked with the period doubled: a
 * LO of 0.5 let that pass). The bad values are in test_cli.c.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "l2t.h"

#define STOP_DEADLINE_S 20
#define RUN_S "2"
/* The control timer's rate (l2fwd-sirq's CONTROL_PERIOD_MS, 100 ms). */
#define CONTROL_PER_S 10.0
/* The least share of the periods a rate may reach. */
#define LO 0.75

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_probe, .fini = suite_fini, .timeout = 60);

/*
 * l2fwd-sirq on lcore 0, irq mode, mainline, for RUN_S seconds: quiet
 * ports (net_null with no-rx=1) unless @flood, then the flood scenario's
 * receiver; @probe as --probe unless NULL.
 */
static json_t *
run_probe(const char *probe, bool flood)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;

	l2t_eal_args(&a, l2t_env("L2FWD_SIRQ"));
	l2t_arg(&a, "--vdev=net_null0%s", flood ? "" : ",no-rx=1");
	l2t_arg(&a, "--vdev=net_null1%s", flood ? "" : ",no-rx=1");
	l2t_arg(&a, "--");
	l2t_arg(&a, "-T");
	l2t_arg(&a, "0");
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", report);
	l2t_arg(&a, "--mode");
	l2t_arg(&a, "irq");
	l2t_arg(&a, "--policy");
	l2t_arg(&a, "mainline");
	if (flood) {
		l2t_arg(&a, "--receiver");
		l2t_arg(&a, "proto=1us,app=1us,rcvbuf=256,threads=1");
	}
	if (probe != NULL) {
		l2t_arg(&a, "--probe");
		l2t_arg(&a, "%s", probe);
	}
	l2t_arg(&a, "--duration");
	l2t_arg(&a, RUN_S);
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	cr_assert(r.status == 0 && !r.timed_out, "--probe %s: exit code %d%s:\n%s%s",
		  probe ? probe : "(none)", r.status,
		  r.timed_out ? " (did not stop at --duration)" : "",
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	if (probe != NULL)
		cr_expect(strstr(r.out, "probe: timer every") != NULL,
			  "no 'probe: timer every' line:\n%s", l2t_app_lines(r.out));
	l2t_result_free(&r);
	return l2t_report_load(report);
}

static json_t *
vector(json_t *j, const char *name)
{
	json_t *lc = json_array_get(json_object_get(json_object_get(j, "sirq"),
						    "lcores"), 0);
	json_t *v = json_object_get(json_object_get(lc, "vectors"), name);

	cr_assert(json_is_object(v), "the report has no vector %s", name);
	return v;
}

static uint64_t
vector_runs(json_t *j, const char *name)
{
	json_t *v = vector(j, name);

	return l2t_json_u64(v, "runs_inline") + l2t_json_u64(v, "runs_worker");
}

static uint64_t
vector_samples(json_t *j, const char *name)
{
	return l2t_json_u64(json_object_get(vector(j, name), "latency"),
			    "samples");
}

static json_t *
probe_of(json_t *j)
{
	json_t *p = json_object_get(j, "probe");

	cr_assert(json_is_array(p) && json_array_size(p) == 1,
		  "the report has no \"probe\" array of one lcore");
	return json_array_get(p, 0);
}

static double
elapsed(json_t *j)
{
	return json_real_value(json_object_get(j, "elapsed_s"));
}

/* @n within [lo, hi] x what @period_ms gives over the run. */
static void
expect_rate(const char *what, uint64_t n, json_t *j, double period_ms,
	    double lo, double hi, double extra)
{
	double periods = elapsed(j) * 1000.0 / period_ms;

	cr_expect(n >= lo * periods && n <= hi * periods + extra,
		  "%s: %" PRIu64 " in %.2f s, expected %.0f..%.0f (a period of %.1f ms)",
		  what, n, elapsed(j), lo * periods, hi * periods + extra,
		  period_ms);
}

/* The probe's books and the vectors' counts agree. */
static void
expect_books(json_t *j)
{
	json_t *p = probe_of(j);
	uint64_t runs = l2t_json_u64(p, "tasklet_runs");

	cr_expect(vector_runs(j, "TASKLET") == runs,
		  "TASKLET ran %" PRIu64 " times, the probe's tasklet %" PRIu64,
		  vector_runs(j, "TASKLET"), runs);
	cr_expect(vector_samples(j, "TASKLET") == vector_runs(j, "TASKLET"),
		  "TASKLET: %" PRIu64 " latency samples for %" PRIu64 " runs",
		  vector_samples(j, "TASKLET"), vector_runs(j, "TASKLET"));
	cr_expect(vector_samples(j, "TIMER") == vector_runs(j, "TIMER"),
		  "TIMER: %" PRIu64 " latency samples for %" PRIu64 " runs",
		  vector_samples(j, "TIMER"), vector_runs(j, "TIMER"));
	/* Scheduled at most once per run: the last may still be pending. */
	cr_expect(runs <= l2t_json_u64(p, "tasklet_scheduled") &&
		  runs + 1 >= l2t_json_u64(p, "tasklet_scheduled"),
		  "tasklet scheduled %" PRIu64 " times, ran %" PRIu64,
		  l2t_json_u64(p, "tasklet_scheduled"), runs);
}

/* One timer every 2 ms raises TIMER and schedules the tasklet. */
Test(l2fwd_probe, timer_and_tasklet_are_raised_every_period)
{
	json_t *j = run_probe("timer=2ms,tasklet=2ms", false), *p = probe_of(j);

	cr_expect(l2t_json_u64(p, "timer_ns") == 2000000);
	cr_expect(l2t_json_u64(p, "tasklet_ns") == 2000000);
	cr_expect_str_eq(json_string_value(json_object_get(p, "tasklet_source")),
			 "timer");
	expect_rate("probe timer_fires", l2t_json_u64(p, "timer_fires"), j, 2,
		    LO, 1.1, 0);
	/* TIMER: the probe's runs and the control timer's 10 a second. */
	expect_rate("TIMER runs", vector_runs(j, "TIMER"), j, 2, LO, 1.1,
		    elapsed(j) * CONTROL_PER_S + 2);
	expect_rate("TASKLET runs", vector_runs(j, "TASKLET"), j, 2, LO, 1.1, 0);
	cr_expect(l2t_json_u64(p, "tasklet_scheduled") +
		  l2t_json_u64(p, "tasklet_already_scheduled") ==
		  l2t_json_u64(p, "timer_fires"),
		  "every timer run schedules the tasklet or finds it scheduled");
	expect_books(j);
	json_decref(j);
}

/* The tasklet on its own timer, ten times as often as the probe's timer. */
Test(l2fwd_probe, tasklet_on_a_period_of_its_own)
{
	json_t *j = run_probe("timer=10ms,tasklet=1ms", false), *p = probe_of(j);

	cr_expect_str_eq(json_string_value(json_object_get(p, "tasklet_source")),
			 "tasklet_timer");
	expect_rate("probe timer_fires", l2t_json_u64(p, "timer_fires"), j, 10,
		    LO, 1.1, 0);
	expect_rate("TASKLET runs", vector_runs(j, "TASKLET"), j, 1, LO, 1.1, 0);
	/* The tasklet's timer raises TIMER too: 1 ms, 10 ms and 100 ms. */
	expect_rate("TIMER runs", vector_runs(j, "TIMER"), j, 1, LO, 1.1,
		    elapsed(j) * (100 + CONTROL_PER_S) + 2);
	expect_books(j);
	json_decref(j);
}

/* A timer alone: TIMER every 1 ms, no tasklet. */
Test(l2fwd_probe, timer_alone_schedules_no_tasklet)
{
	json_t *j = run_probe("timer=1ms", false), *p = probe_of(j);

	cr_expect(l2t_json_u64(p, "tasklet_ns") == 0);
	expect_rate("TIMER runs", vector_runs(j, "TIMER"), j, 1, LO, 1.1,
		    elapsed(j) * CONTROL_PER_S + 2);
	cr_expect(vector_runs(j, "TASKLET") == 0, "TASKLET ran %" PRIu64 " times",
		  vector_runs(j, "TASKLET"));
	json_decref(j);
}

/* Without --probe: no tasklet, TIMER only for the control timer. */
Test(l2fwd_probe, without_the_probe_only_the_control_timer)
{
	json_t *j = run_probe(NULL, false);

	cr_expect(json_object_get(j, "probe") == NULL,
		  "a \"probe\" object without --probe");
	cr_expect(vector_runs(j, "TASKLET") == 0, "TASKLET ran %" PRIu64 " times",
		  vector_runs(j, "TASKLET"));
	expect_rate("TIMER runs", vector_runs(j, "TIMER"), j, 100, LO, 1.1, 2);
	json_decref(j);
}

/*
 * Under the flood (NET_RX on the same lcore): the probe still fires, its
 * deadlines run or are counted as skipped, and its books hold.
 */
Test(l2fwd_probe, under_a_flood_every_deadline_is_run_or_counted)
{
	json_t *j = run_probe("timer=5ms,tasklet=5ms", true), *p = probe_of(j);

	cr_expect(vector_runs(j, "NET_RX") > 0, "NET_RX never ran");
	cr_expect(vector_runs(j, "TASKLET") > 0, "TASKLET never ran");
	expect_rate("probe timer deadlines (fired + missed)",
		    l2t_json_u64(p, "timer_fires") + l2t_json_u64(p, "timer_missed"),
		    j, 5, LO, 1.1, 0);
	expect_books(j);
	json_decref(j);
}
