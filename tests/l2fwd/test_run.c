/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq under a flood: two net_null ports produce packets without
 * end. --duration must stop the run in every policy and mode, and the
 * books must balance at the end: what each port received was sent on its
 * pair or counted as dropped, everything handed to the lcore's TX queues
 * was sent or counted as refused, and every mbuf is back in its pool.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

ParameterizedTestParameters(l2fwd_run, flood_stops_at_duration_and_balances)
{
	static struct flood_case cases[] = {
		{ "mainline", "poll" }, { "ksoftirqd", "poll" },
		{ "kicinski", "poll" }, { "threaded", "poll" },
		{ "mainline", "irq" }, { "ksoftirqd", "irq" },
		{ "kicinski", "irq" }, { "threaded", "irq" },
	};

	return cr_make_param_array(struct flood_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct flood_case *c, l2fwd_run,
		  flood_stops_at_duration_and_balances)
{
	const char *report = l2t_path("report.json");
	uint64_t rx[2], tx[2], runts[2], link_drops[2];
	uint64_t lc_tx, lc_dropped;
	struct l2t_result r;
	struct l2t_argv a = { .argc = 0 };
	unsigned int p;
	json_t *j;

	l2t_eal_args(&a, l2t_env("L2FWD_SIRQ"));
	l2t_arg(&a, "--vdev=net_null0");
	l2t_arg(&a, "--vdev=net_null1");
	l2t_arg(&a, "--");
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "1");
	l2t_arg(&a, "-T");
	l2t_arg(&a, "0");
	l2t_arg(&a, "--policy");
	l2t_arg(&a, "%s", c->policy);
	l2t_arg(&a, "--mode");
	l2t_arg(&a, "%s", c->mode);
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", report);
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	/* Stopped by our SIGINT, it still reports: judge the books too. */
	cr_expect(!r.timed_out, "--policy %s --mode %s: --duration 1 did not "
		  "stop it within %d s (SIGINT did)", c->policy, c->mode,
		  STOP_DEADLINE_S);
	cr_assert(r.status == 0, "--policy %s --mode %s: exit code %d:\n%s%s",
		  c->policy, c->mode, r.status, l2t_app_lines(r.out),
		  l2t_app_lines(r.err));
	l2t_result_free(&r);

	j = l2t_report_load(report);
	for (p = 0; p < 2; p++) {
		json_t *jp = l2t_report_port(j, p);

		rx[p] = l2t_json_u64(jp, "rx");
		tx[p] = l2t_json_u64(jp, "tx");
		runts[p] = l2t_json_u64(jp, "runts");
		link_drops[p] = l2t_json_u64(jp, "link_down_drops");
	}
	for (p = 0; p < 2; p++) {
		cr_expect(rx[p] > 0, "--policy %s --mode %s: port %u received "
			  "nothing", c->policy, c->mode, p);
		cr_expect(rx[p] == tx[p ^ 1] + runts[p] + link_drops[p ^ 1],
			  "--policy %s --mode %s: port %u rx %" PRIu64 " != port %u "
			  "tx %" PRIu64 " + runts %" PRIu64 " + link-down drops %"
			  PRIu64, c->policy, c->mode, p, rx[p], p ^ 1, tx[p ^ 1],
			  runts[p], link_drops[p ^ 1]);
	}
	lc_tx = l2t_report_lcores_sum(j, "tx_packets");
	lc_dropped = l2t_report_lcores_sum(j, "tx_dropped");
	cr_expect(tx[0] + tx[1] == lc_tx + lc_dropped,
		  "--policy %s --mode %s: ports tx %" PRIu64 " != lcore tx_packets %"
		  PRIu64 " + tx_dropped %" PRIu64 ": packets left in TX buffers",
		  c->policy, c->mode, tx[0] + tx[1], lc_tx, lc_dropped);
	cr_expect(l2t_report_lcores_sum(j, "rx_packets") == rx[0] + rx[1],
		  "--policy %s --mode %s: lcore rx_packets %" PRIu64 " != ports rx %"
		  PRIu64, c->policy, c->mode,
		  l2t_report_lcores_sum(j, "rx_packets"), rx[0] + rx[1]);
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0,
		  "--policy %s --mode %s: mbufs_in_use %" PRIu64, c->policy,
		  c->mode, l2t_json_u64(j, "mbufs_in_use"));
	json_decref(j);
}
