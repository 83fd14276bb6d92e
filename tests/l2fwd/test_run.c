/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq under a flood: two net_null ports produce packets without
 * end. --duration must stop the run in every policy and mode, and the
 * books must balance at the end: what each port received was sent on its
 * pair or counted as dropped, everything handed to the lcore's TX queues
 * was sent or counted as refused, and every mbuf is back in its pool.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "l2t.h"

/*
 * How long a one-second run may take before it counts as not stopping:
 * EAL start and stop take about a second here; ten times the run is a
 * hang detector, not a speed requirement.
 */
#define STOP_DEADLINE_S 10

struct flood_case {
	char policy[16];
	char mode[8];
};

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_run, .fini = suite_fini, .timeout = 60);

/*
 * l2fwd-sirq on two net_null ports under @policy and @mode, on lcore 0,
 * its report to @report; @label gets "--policy P --mode M" for messages.
 */
static void
flood_args(struct l2t_argv *a, const char *policy, const char *mode,
	   const char *report, char *label, size_t len)
{
	l2t_null_flood_args(a, "-l", "0", report);
	l2t_arg(a, "--policy");
	l2t_arg(a, "%s", policy);
	l2t_arg(a, "--mode");
	l2t_arg(a, "%s", mode);
	snprintf(label, len, "--policy %s --mode %s", policy, mode);
}

/* Every policy in both modes. */
static struct criterion_test_params
every_policy_and_mode(void)
{
	static struct flood_case cases[] = {
		{ "mainline", "poll" }, { "ksoftirqd", "poll" },
		{ "kicinski", "poll" }, { "deferred", "poll" },
		{ "mainline", "irq" }, { "ksoftirqd", "irq" },
		{ "kicinski", "irq" }, { "deferred", "irq" },
	};

	return cr_make_param_array(struct flood_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTestParameters(l2fwd_run, flood_stops_at_duration_and_balances)
{
	return every_policy_and_mode();
}

ParameterizedTest(struct flood_case *c, l2fwd_run,
		  flood_stops_at_duration_and_balances)
{
	const char *report = l2t_path("report.json");
	struct l2t_result r;
	struct l2t_argv a = { .argc = 0 };
	char label[64];

	flood_args(&a, c->policy, c->mode, report, label, sizeof(label));
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "1");
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	/* Stopped by our SIGINT, it still reports: judge the books too. */
	cr_expect(!r.timed_out, "--policy %s --mode %s: --duration 1 did not "
		  "stop it within %d s (SIGINT did)", c->policy, c->mode,
		  STOP_DEADLINE_S);
	cr_assert(r.status == 0, "--policy %s --mode %s: exit code %d:\n%s%s",
		  c->policy, c->mode, r.status, l2t_app_lines(r.out),
		  l2t_app_lines(r.err));
	l2t_result_free(&r);

	l2t_expect_books_balance(report, label);
}

/*
 * At start, one line a port says what the PMD gives libsirq and which
 * fallback it uses. net_null has none of it: no descriptor status,
 * queue count or monitor condition (its queues are fetched), no Rx
 * interrupt (irq mode wakes on its tick), no tx_done_cleanup (completion
 * by refcount), no LSC interrupt. The line must agree with the paths
 * the lcore then took, as its report counts them.
 */
ParameterizedTestParameters(l2fwd_run, start_line_names_each_ports_paths)
{
	static struct flood_case cases[] = {
		{ "kicinski", "poll" }, { "kicinski", "irq" },
	};

	return cr_make_param_array(struct flood_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct flood_case *c, l2fwd_run,
		  start_line_names_each_ports_paths)
{
	const char *report = l2t_path("report.json");
	const bool irq = strcmp(c->mode, "irq") == 0;
	struct l2t_result r;
	struct l2t_argv a = { .argc = 0 };
	char label[64], line[512];
	unsigned int port;
	json_t *j, *cfg;

	flood_args(&a, c->policy, c->mode, report, label, sizeof(label));
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "1");
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	cr_assert(r.status == 0 && !r.timed_out, "%s: exit code %d:\n%s%s",
		  label, r.status, l2t_app_lines(r.out), l2t_app_lines(r.err));
	for (port = 0; port < 2; port++) {
		cr_assert(l2t_port_paths(r.out, port, line, sizeof(line)) != NULL,
			  "%s: no start line for port %u:\n%s", label, port,
			  l2t_app_lines(r.out));
		cr_log_info("%s", line);
		cr_expect(strstr(line, "(net_null): Rx work: fetch (the fallback:") != NULL,
			  "%s: %s", label, line);
		cr_expect(strstr(line, irq ?
				 "Rx interrupts: none (the fallback: irq mode wakes on its tick)" :
				 "Rx interrupts: not asked (poll mode)") != NULL,
			  "%s: %s", label, line);
		cr_expect(strstr(line, "TX done: refcount (the fallback: no tx_done_cleanup)") != NULL,
			  "%s: %s", label, line);
		cr_expect(strstr(line, "link: polled (the fallback: no LSC interrupt)") != NULL,
			  "%s: %s", label, line);
	}
	l2t_result_free(&r);

	/* What the lcore found, at its start and first flush. */
	j = l2t_report_load(report);
	cfg = json_object_get(json_array_get(json_object_get(
		json_object_get(j, "sirq"), "lcores"), 0), "config");
	cr_assert(json_is_object(cfg), "%s: no sirq.lcores[0].config", label);
	cr_expect(l2t_json_u64(cfg, "rx_queues") == 2 &&
		  l2t_json_u64(cfg, "rx_queues_desc_status") == 0 &&
		  l2t_json_u64(cfg, "rx_queues_count") == 0 &&
		  l2t_json_u64(cfg, "rx_queues_monitor") == 0,
		  "%s: a net_null queue was not fetched", label);
	cr_expect(l2t_json_u64(cfg, "rx_queues_intr") == 0,
		  "%s: net_null has an Rx interrupt", label);
	cr_expect(l2t_json_u64(cfg, "tx_queues_done_cleanup") == 0 &&
		  l2t_json_u64(cfg, "tx_queues_refcount") == 2,
		  "%s: net_null's TX completion is not by refcount", label);
	json_decref(j);
}

/*
 * A flood with nothing else on the CPU: sirqd shares it with the
 * dispatcher alone, so no vector should wait 8 ms (the patch's stall)
 * under any policy or mode. With the old inline-only TIMER, every due
 * timer waited for the dispatcher and stalled 40 ms and more.
 */
ParameterizedTestParameters(l2fwd_run, a_flood_alone_makes_no_vector_wait_8ms)
{
	return every_policy_and_mode();
}

ParameterizedTest(struct flood_case *c, l2fwd_run,
		  a_flood_alone_makes_no_vector_wait_8ms)
{
	const char *report = l2t_path("report.json");
	struct l2t_result r;
	struct l2t_argv a = { .argc = 0 };
	char label[64];
	json_t *j;

	flood_args(&a, c->policy, c->mode, report, label, sizeof(label));
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "2");
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	cr_assert(r.status == 0 && !r.timed_out, "%s: exit code %d:\n%s%s",
		  label, r.status, l2t_app_lines(r.out), l2t_app_lines(r.err));
	l2t_result_free(&r);

	j = l2t_report_load(report);
	cr_expect(l2t_report_lcores_sum(j, "rx_packets") > 0,
		  "%s: nothing forwarded", label);
	cr_expect(l2t_report_lcores_sum(j, "stalls_all_vectors") == 0,
		  "%s: %" PRIu64 " raise-to-run waits >= 8 ms", label,
		  l2t_report_lcores_sum(j, "stalls_all_vectors"));
	json_decref(j);
}

/*
 * SIGINT and SIGTERM in the middle of a flood, with the app load beside
 * the dispatcher: a clean exit (code 0, "signal N, stopping"), a report
 * whose books balance, every mbuf back in its pool.
 */
struct signal_case {
	int sig;
	char policy[16];
	char mode[8];
};

/* Long enough for the flood to be under way at every lcore. */
#define FLOOD_BEFORE_SIGNAL_MS 500
#define SIGNAL_EXIT_DEADLINE_S 10

ParameterizedTestParameters(l2fwd_run, signal_during_a_flood_exits_cleanly)
{
	static struct signal_case cases[] = {
		{ SIGINT, "kicinski", "poll" }, { SIGTERM, "kicinski", "poll" },
		{ SIGINT, "ksoftirqd", "irq" }, { SIGTERM, "deferred", "irq" },
	};

	return cr_make_param_array(struct signal_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct signal_case *c, l2fwd_run,
		  signal_during_a_flood_exits_cleanly)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc p = { .name = "l2fwd-sirq" };
	char stopping[64], label[64];
	int status;

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	flood_args(&a, c->policy, c->mode, report, label, sizeof(label));
	l2t_arg(&a, "--app-load");
	l2t_arg(&a, "hold=2ms,period=10ms");
	l2t_proc_start(&p, "l2fwd-sirq", &a);
	l2t_proc_expect(&p, "forwards", SIGNAL_EXIT_DEADLINE_S);
	usleep(FLOOD_BEFORE_SIGNAL_MS * 1000);

	cr_assert(kill(p.pid, c->sig) == 0);
	status = l2t_proc_wait(&p, SIGNAL_EXIT_DEADLINE_S);
	cr_assert(status == 0, "%s: exit code %d:\n%s", strsignal(c->sig),
		  status, l2t_app_lines(p.buf));
	snprintf(stopping, sizeof(stopping), "signal %d, stopping", c->sig);
	cr_expect(strstr(p.buf, stopping) != NULL, "%s: no '%s' in:\n%s",
		  strsignal(c->sig), stopping, l2t_app_lines(p.buf));
	l2t_proc_reap(&p);
	l2t_expect_books_balance(report, label);
}
