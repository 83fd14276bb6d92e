/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The library's range table through l2fwd-sirq's command line and INI
 * file: every tunable outside its range is refused, before EAL, with
 * the library's own message (sirq_param_range()->why), whichever way
 * the value came in. The API and telemetry: tests/lcore/test_params.c.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <sirq.h>

#include "l2t.h"

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_ranges, .fini = suite_fini, .timeout = 120);

/*
 * The options that set a library tunable, the unit they take, and for
 * a softirq thread's attributes the value around the number.
 */
static const struct {
	const char *opt;
	const char *param;
	uint64_t ns_per_unit;	/* 1000 for the _us options, else 1 */
	bool hex;
	const char *pre, *post;	/* around the number; NULL: nothing */
} opts[] = {
	{ "max-restart", "max_restart", 1, false, NULL, NULL },
	{ "max-time-us", "max_time_ns", 1000, false, NULL, NULL },
	{ "defer-window-us", "defer_window_ns", 1000, false, NULL, NULL },
	{ "overload-window-us", "overload_window_ns", 1000, false, NULL, NULL },
	{ "tick-hz", "tick_hz", 1, false, NULL, NULL },
	{ "expedited-mask", "expedited_mask", 1, true, NULL, NULL },
	{ "stall-threshold-us", "stall_threshold_ns", 1000, false, NULL, NULL },
	{ "napi-weight", "napi_weight", 1, false, NULL, NULL },
	{ "netdev-budget", "netdev_budget", 1, false, NULL, NULL },
	{ "netdev-budget-us", "netdev_budget_us", 1, false, NULL, NULL },
	{ "softirq-thread-sched", "thread_slice_us", 1, false,
	  "net_rx=fair:slice=", NULL },
	{ "softirq-thread-sched", "thread_runtime_us", 1, false,
	  "net_rx=deadline:", "/4194304" },
	{ "softirq-thread-sched", "thread_period_us", 1, false,
	  "net_rx=deadline:1/", NULL },
};

/*
 * The period's range is the kernel's (kernel.sched_deadline_period_*):
 * the table has its defaults, and the refusal says the table's words
 * only where the kernel has them.
 */
static bool
kernel_has_default_periods(void)
{
	const struct sirq_param_range *r = sirq_param_range("thread_period_us");
	unsigned long lo = 0, hi = 0;
	FILE *f;

	f = fopen("/proc/sys/kernel/sched_deadline_period_min_us", "r");
	if (f == NULL || fscanf(f, "%lu", &lo) != 1)
		lo = 0;
	if (f != NULL)
		fclose(f);
	f = fopen("/proc/sys/kernel/sched_deadline_period_max_us", "r");
	if (f == NULL || fscanf(f, "%lu", &hi) != 1)
		hi = 0;
	if (f != NULL)
		fclose(f);
	return lo == r->min && hi == r->max;
}

/* Run l2fwd-sirq with @args after "--"; its result in @r. */
static void
run(const char *const *args, struct l2t_result *r)
{
	struct l2t_argv a = { .argc = 0 };

	l2t_eal_args(&a, l2t_env("L2FWD_SIRQ"));
	l2t_arg(&a, "--vdev=net_null0");
	l2t_arg(&a, "--vdev=net_null1");
	l2t_arg(&a, "--");
	for (; *args != NULL; args++)
		l2t_arg(&a, "%s", *args);
	l2t_run(&a, r);
}

static void
expect_refused_with(const char *const *args, const char *how,
		    const char *why)
{
	struct l2t_result r;

	run(args, &r);
	cr_expect(r.status == 2, "%s: exit code %d, expected 2", how, r.status);
	cr_expect(strstr(r.err, why) != NULL, "%s: no '%s' in stderr:\n%s",
		  how, why, r.err);
	l2t_result_free(&r);
}

/* @v in the option's unit, on the command line and in an INI file. */
static void
refuse_both_ways(unsigned int i, uint64_t v)
{
	const struct sirq_param_range *r = sirq_param_range(opts[i].param);
	char value[64], opt[64], ini[160], how[192];
	const char *cli[] = { opt, value, NULL };
	const char *cfg[] = { "--config", l2t_path("range.ini"), NULL };

	cr_assert(r != NULL, "%s", opts[i].param);
	snprintf(value, sizeof(value), opts[i].hex ? "%s0x%" PRIx64 "%s" :
		 "%s%" PRIu64 "%s", opts[i].pre ? opts[i].pre : "", v,
		 opts[i].post ? opts[i].post : "");
	snprintf(opt, sizeof(opt), "--%s", opts[i].opt);
	snprintf(how, sizeof(how), "%s %s", opt, value);
	expect_refused_with(cli, how, r->why);

	snprintf(ini, sizeof(ini), "[sirq]\n%s = %s\n", opts[i].opt, value);
	l2t_write_file(l2t_path("range.ini"), ini);
	snprintf(how, sizeof(how), "INI %s = %s", opts[i].opt, value);
	expect_refused_with(cfg, how, r->why);
}

Test(l2fwd_ranges, every_value_outside_its_range_is_refused_with_the_librarys_range)
{
	unsigned int nb, i, n = 0;

	unsigned int skipped = 0;

	sirq_param_ranges(&nb);
	cr_assert_eq(nb, sizeof(opts) / sizeof(opts[0]),
		     "an option for every tunable of the table");
	for (i = 0; i < nb; i++) {
		const struct sirq_param_range *r = sirq_param_range(opts[i].param);
		uint64_t u = opts[i].ns_per_unit;
		/* The smallest and largest the option can express. */
		uint64_t lo = (r->min + u - 1) / u, hi = r->max / u;

		if (strcmp(opts[i].param, "thread_period_us") == 0 &&
		    !kernel_has_default_periods()) {
			cr_log_warn("the kernel's deadline periods are not its defaults: thread_period_us not checked");
			skipped = 2;
			continue;
		}

		if (lo > 0) {
			refuse_both_ways(i, lo - 1);
			n++;
		}
		refuse_both_ways(i, hi + 1);
		n++;
	}
	/*
	 * Below: max_restart, max_time, stall, napi_weight, the budgets, the
	 * slice, the runtime and the period; above: all 13.
	 */
	cr_assert_eq(n + skipped, 9 + 13);
}

/*
 * The mask's range is the vectors the lcore has: SCHED (0x80) has no
 * handler on a DPDK lcore. Refused when the lcore is created, in the
 * library's words.
 */
Test(l2fwd_ranges, an_expedited_mask_naming_a_vector_without_a_handler_is_refused)
{
	const char *args[] = { "--expedited-mask", "0x80", "--duration", "1",
			       NULL };
	struct l2t_result r;

	run(args, &r);
	cr_expect(r.status != 0, "exit code %d", r.status);
	cr_expect(strstr(r.err, sirq_param_range("expedited_mask")->why) != NULL,
		  "stderr:\n%s", r.err);
	l2t_result_free(&r);
}
