/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * More lcores than CPUs (issues 12 and 14): eight lcores on the first two
 * CPUs, each with its dispatcher and its sirqd, two net_null ports of
 * four Rx queues each (one queue per lcore), a flood for a few seconds,
 * then SIGINT. l2fwd-sirq must stop within a deadline with exit code 0,
 * every lcore must have forwarded, the books must balance and every mbuf
 * must be back in its pool.
 *
 * With libsirq's sirqd boosted to SCHED_FIFO for its passes (the default
 * of --worker-boost before the rewrite of issue 12) this run can
 * livelock: boosted sirqd threads spin in the mempool ring on an entry
 * that a preempted fair-class thread holds, and after SIGINT every
 * dispatcher waits in pthread_join() for its sirqd. The defaults are
 * tested as they are; the second test shows the rest of the path with
 * the boost off.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "l2t.h"

#define MANY_LCORES "(0-7)@(0,1)"
#define NB_LCORES 8
#define RXQ_PER_PORT "4"
/* Long enough for every lcore and sirqd to be deep in the flood. */
#define FLOOD_S 3
/* EAL start takes about a second here; a hang detector, not a speed. */
#define START_DEADLINE_S 10
#define STOP_DEADLINE_S 10

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_lcores, .fini = suite_fini, .timeout = 60);

/* Flood with @extra options after the defaults, SIGINT, judge. */
static void
flood_then_sigint(const char *const *extra, const char *label)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc p;
	json_t *j, *l;
	size_t i;
	int status;

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_null_flood_args(&a, "--lcores", MANY_LCORES, report);
	l2t_arg(&a, "--rxq");
	l2t_arg(&a, RXQ_PER_PORT);
	for (; *extra != NULL; extra++)
		l2t_arg(&a, "%s", *extra);
	l2t_proc_start(&p, "l2fwd-sirq", &a);
	l2t_proc_expect(&p, "lcore 7 forwards", START_DEADLINE_S);
	sleep(FLOOD_S);

	cr_assert(kill(p.pid, SIGINT) == 0);
	status = l2t_proc_wait(&p, STOP_DEADLINE_S);
	cr_assert(status == 0, "%s: exit code %d after SIGINT:\n%s", label,
		  status, l2t_app_lines(p.buf));
	cr_expect(strstr(p.buf, "signal 2, stopping") != NULL,
		  "%s: no 'signal 2, stopping' in:\n%s", label,
		  l2t_app_lines(p.buf));
	l2t_proc_reap(&p);

	l2t_expect_books_balance(report, label);
	j = l2t_report_load(report);
	cr_expect(json_array_size(json_object_get(j, "lcores")) == NB_LCORES,
		  "%s: %zu forwarding lcores, %d expected", label,
		  json_array_size(json_object_get(j, "lcores")), NB_LCORES);
	json_array_foreach(json_object_get(j, "lcores"), i, l)
		cr_expect(l2t_json_u64(l, "rx_packets") > 0,
			  "%s: lcore %" PRIu64 " forwarded nothing", label,
			  l2t_json_u64(l, "lcore"));
	json_decref(j);
}

Test(l2fwd_lcores, eight_lcores_on_two_cpus_stop_on_sigint_with_the_books_balanced)
{
	const char *extra[] = { NULL };

	flood_then_sigint(extra, "--lcores '" MANY_LCORES "' -- --rxq 4");
}

Test(l2fwd_lcores, eight_lcores_on_two_cpus_without_worker_boost_stop_on_sigint)
{
	const char *extra[] = { "--worker-boost", "0", NULL };

	flood_then_sigint(extra, "--lcores '" MANY_LCORES "' -- --rxq 4 --worker-boost 0");
}
