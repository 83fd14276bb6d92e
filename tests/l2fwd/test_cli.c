/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The command line and the INI file of l2fwd-sirq.
 *
 * A bad option, value or key is one line on stderr that names it and the
 * value, exit code 2, and nothing started: EAL never ran (its runtime
 * directory for the run's --file-prefix does not exist, it printed
 * nothing). Only the portmask needs the ports EAL found, so its errors
 * come after EAL, but before any port or lcore starts. --config applies
 * first, the command line over it; the example configs in config/ load.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "l2t.h"

#define PROG "l2fwd-sirq: "
#define MAX_HELP_OPTS 64
#define NB_INPUT_FRAMES 4

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_cli, .fini = suite_fini, .timeout = 60);

/* Where and how run_app_with() runs l2fwd-sirq; zero: as run_app(). */
struct app_run {
	const char *lcore_opt;		/* "-l" or "--lcores"; NULL: -l 0 */
	const char *lcores;
	const char *const *eal;		/* more EAL arguments, NULL-ended */
	unsigned int rxq_per_port;	/* rx_pcap files per port; 0: one */
};

/*
 * l2fwd-sirq on two net_pcap ports replaying NB_INPUT_FRAMES frames on
 * each Rx queue (one TX queue each), then "--" and @args (NULL-ended).
 * Finite input: runs end at --duration in every mode.
 */
static void
run_app_with(const struct app_run *how, const char *const *args,
	     struct l2t_result *r)
{
	static const uint8_t frame[60] = { 0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0,
					   0, 0, 0x02, 0x08, 0x00 };
	struct l2t_frames in;
	struct l2t_argv a = { .argc = 0 };
	const char *const *e;
	unsigned int nb_rx = how->rxq_per_port ? how->rxq_per_port : 1;
	unsigned int p, q, i;

	memset(&in, 0, sizeof(in));
	for (i = 0; i < NB_INPUT_FRAMES; i++)
		l2t_frames_add(&in, frame, sizeof(frame));
	if (how->lcore_opt != NULL)
		l2t_eal_args_lcores(&a, l2t_env("L2FWD_SIRQ"), how->lcore_opt,
				    how->lcores);
	else
		l2t_eal_args(&a, l2t_env("L2FWD_SIRQ"));
	for (e = how->eal; e != NULL && *e != NULL; e++)
		l2t_arg(&a, "%s", *e);
	for (p = 0; p < 2; p++) {
		char name[32], vdev[L2T_ARG_LEN];
		size_t n;

		snprintf(vdev, sizeof(vdev), "net_pcap%u", p);
		for (q = 0; q < nb_rx; q++) {
			snprintf(name, sizeof(name), "in%u.%u.pcap", p, q);
			l2t_pcap_write(l2t_path(name), &in);
			n = strlen(vdev);
			snprintf(vdev + n, sizeof(vdev) - n, ",rx_pcap=%s",
				 l2t_path(name));
		}
		snprintf(name, sizeof(name), "out%u.pcap", p);
		n = strlen(vdev);
		snprintf(vdev + n, sizeof(vdev) - n, ",tx_pcap=%s", l2t_path(name));
		l2t_arg(&a, "--vdev=%s", vdev);
	}
	l2t_frames_free(&in);
	l2t_arg(&a, "--");
	for (; *args != NULL; args++)
		l2t_arg(&a, "%s", *args);
	l2t_run(&a, r);
}

static void
run_app(const char *const *args, struct l2t_result *r)
{
	static const struct app_run on_lcore_0;

	run_app_with(&on_lcore_0, args, r);
}

static bool
eal_ran(void)
{
	char dir[512];
	struct stat st;

	l2t_runtime_dir(l2t_last_prefix(), dir, sizeof(dir));
	return stat(dir, &st) == 0;
}

/*
 * Exit code 2 and exactly @line on stderr; nothing on stdout; EAL never
 * started.
 */
static void
expect_refused(const char *const *args, const char *line)
{
	struct l2t_result r;
	char want[512];

	run_app(args, &r);
	snprintf(want, sizeof(want), "%s\n", line);
	cr_expect(r.status == 2, "exit code %d, expected 2 for: %s", r.status,
		  line);
	cr_expect_str_eq(r.err, want, "stderr:\n%s\nexpected:\n%s", r.err, want);
	cr_expect_str_empty(r.out, "stdout not empty:\n%s", r.out);
	cr_expect(!eal_ran(), "EAL started (%s exists) before refusing: %s",
		  l2t_last_prefix(), line);
	l2t_result_free(&r);
}

Test(l2fwd_cli, unknown_long_option_is_refused_before_eal)
{
	const char *args[] = { "--turbo", "--duration", "1", NULL };

	expect_refused(args, PROG "bad option '--turbo'; see --help");
}

Test(l2fwd_cli, unknown_short_option_is_refused_before_eal)
{
	const char *args[] = { "-z", NULL };

	expect_refused(args, PROG "bad option '-z'; see --help");
}

Test(l2fwd_cli, stray_argument_is_refused_before_eal)
{
	const char *args[] = { "--duration", "1", "fast", NULL };

	expect_refused(args, PROG "unexpected argument 'fast'; see --help");
}

Test(l2fwd_cli, unknown_policy_is_refused_before_eal)
{
	const char *args[] = { "--policy", "fifo", NULL };

	expect_refused(args, PROG "--policy: bad value 'fifo' "
		       "(mainline | ksoftirqd | kicinski | deferred | rt | pushdown | pushdown-locked)");
}

Test(l2fwd_cli, unknown_mode_is_refused_before_eal)
{
	const char *args[] = { "--mode", "interrupt", NULL };

	expect_refused(args, PROG "--mode: bad value 'interrupt' (poll | irq)");
}

Test(l2fwd_cli, napi_weight_zero_is_refused_before_eal)
{
	const char *args[] = { "--napi-weight", "0", NULL };

	expect_refused(args, PROG "--napi-weight: bad value '0': napi_weight must be in 8..256");
}

Test(l2fwd_cli, napi_weight_above_256_is_refused_before_eal)
{
	const char *args[] = { "--napi-weight=257", NULL };

	expect_refused(args, PROG "--napi-weight: bad value '257': napi_weight must be in 8..256");
}

/* [napi] and --busy-poll: each bad value named with its option and range. */
struct bad_value {
	char opt[32];
	char value[16];
	char range[16];
};

ParameterizedTestParameters(l2fwd_cli, napi_or_busy_poll_bad_value_is_refused_before_eal)
{
	static struct bad_value cases[] = {
		{ "--busy-poll-budget", "0", "1..256" },
		{ "--busy-poll-budget", "257", "1..256" },
		{ "--busy-poll-us", "1000001", "0..1000000" },
		{ "--gro-flush-timeout-us", "2000000", "0..1000000" },
		{ "--irq-suspend-timeout-us", "1000001", "0..1000000" },
		{ "--napi-defer-hard-irqs", "abc", "0..1000000" },
		{ "--napi-defer-hard-irqs", "-1", "0..1000000" },
	};

	return cr_make_param_array(struct bad_value, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_value *c, l2fwd_cli,
		  napi_or_busy_poll_bad_value_is_refused_before_eal)
{
	const char *args[] = { c->opt, c->value, NULL };
	char line[128];

	snprintf(line, sizeof(line), PROG "%s: bad value '%s' (%s)", c->opt,
		 c->value, c->range);
	expect_refused(args, line);
}

/*
 * The options that take a list of items (--probe, --softirq-thread-sched):
 * the bad item, value or range named.
 */
struct bad_item {
	char opt[32];
	char value[40];
	char line[200];
};

ParameterizedTestParameters(l2fwd_cli, bad_item_of_a_list_is_refused_before_eal)
{
	static struct bad_item cases[] = {
		{ "--probe", "timer=0", "--probe: bad timer '0' (10us..10s)" },
		{ "--probe", "timer=5us", "--probe: bad timer '5us' (10us..10s)" },
		{ "--probe", "tasklet=11s", "--probe: bad tasklet '11s' (10us..10s)" },
		{ "--probe", "tasklet=1h", "--probe: bad tasklet '1h' (10us..10s)" },
		{ "--probe", "timer=", "--probe: bad item 'timer='" },
		{ "--probe", "timer=1ms,hrtimer=1ms", "--probe: bad item 'hrtimer=1ms'" },
		{ "--probe", "fast", "--probe: bad item 'fast'" },
		{ "--softirq-thread-sched", "timer=fifo", "--softirq-thread-sched: bad priority '' for timer (1..99)" },
		{ "--softirq-thread-sched", "net_rx=rr:100", "--softirq-thread-sched: net_rx: priority 100 out of range (1..99 for SCHED_FIFO and SCHED_RR)" },
		{ "--softirq-thread-sched", "net_rx=other:3", "--softirq-thread-sched: net_rx=other: '3' is not slice=US" },
		{ "--softirq-thread-sched", "timer=idle", "--softirq-thread-sched: unknown class 'idle' for timer (other, fair:slice=US, fifo:PRIO, rr:PRIO, deadline:RUNTIME/PERIOD[/DEADLINE])" },
		{ "--softirq-thread-sched", "net_rx=fifo:x", "--softirq-thread-sched: bad priority 'x' for net_rx (1..99)" },
		{ "--softirq-thread-sched", "32=other", "--softirq-thread-sched: unknown vector '32' (hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu, or 0..31)" },
		{ "--softirq-thread-sched", "fast", "--softirq-thread-sched: 'fast' is not VEC=CLASS" },
		{ "--softirq-thread-sched", "net_rx=fair:slice=99", "--softirq-thread-sched: net_rx: slice 99 us: thread_slice_us must be in 100..100000 us (100 us..100 ms)" },
		{ "--softirq-thread-sched", "net_rx=fair:slice=100001", "--softirq-thread-sched: net_rx: slice 100001 us: thread_slice_us must be in 100..100000 us (100 us..100 ms)" },
		{ "--softirq-thread-sched", "net_rx=fair:slice=", "--softirq-thread-sched: net_rx=fair: 'slice=' is not slice=US" },
		{ "--softirq-thread-sched", "net_rx=fair:slice=-5", "--softirq-thread-sched: net_rx=fair: 'slice=-5' is not slice=US" },
		{ "--softirq-thread-sched", "net_rx=deadline:0/4000", "--softirq-thread-sched: net_rx: runtime 0 us: thread_runtime_us must be in 1..4194304 us (1 us..the period)" },
		{ "--softirq-thread-sched", "net_rx=deadline:5000/4000", "--softirq-thread-sched: net_rx: runtime 5000 us longer than the period 4000 us" },
		{ "--softirq-thread-sched", "net_rx=deadline:500/4000/300", "--softirq-thread-sched: net_rx: deadline 300 us out of range (runtime 500..period 4000 us)" },
		{ "--softirq-thread-sched", "net_rx=deadline:500/4000/5000", "--softirq-thread-sched: net_rx: deadline 5000 us out of range (runtime 500..period 4000 us)" },
		{ "--softirq-thread-sched", "net_rx=deadline:500", "--softirq-thread-sched: net_rx=deadline:500 is not deadline:RUNTIME/PERIOD[/DEADLINE] (us)" },
		{ "--softirq-thread-sched", "net_rx=deadline:500/x", "--softirq-thread-sched: net_rx=deadline:500/x is not deadline:RUNTIME/PERIOD[/DEADLINE] (us)" },
		{ "--softirq-thread-sched", "net_rx=deadline:500/4000/", "--softirq-thread-sched: net_rx=deadline:500/4000/ is not deadline:RUNTIME/PERIOD[/DEADLINE] (us)" },
	};

	return cr_make_param_array(struct bad_item, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_item *c, l2fwd_cli,
		  bad_item_of_a_list_is_refused_before_eal)
{
	const char *args[] = { c->opt, c->value, NULL };
	char line[256];

	snprintf(line, sizeof(line), PROG "%s", c->line);
	expect_refused(args, line);
}

Test(l2fwd_cli, max_time_us_not_a_number_is_refused_before_eal)
{
	const char *args[] = { "--max-time-us", "abc", NULL };

	expect_refused(args, PROG "--max-time-us: bad value 'abc': max_time_ns must be in 1000..1000000000 ns (1 us..1 s)");
}

Test(l2fwd_cli, negative_count_is_refused_before_eal)
{
	const char *args[] = { "--max-restart", "-1", NULL };

	expect_refused(args, PROG "--max-restart: bad value '-1': max_restart must be in 1..1000");
}

Test(l2fwd_cli, portmask_not_hexadecimal_is_refused_before_eal)
{
	const char *args[] = { "-p", "0xg", NULL };

	expect_refused(args, PROG "--portmask: bad value '0xg' "
		       "(1..18446744073709551615)");
}

/* strtoull() would skip the blank and wrap the sign: all 64 bits set. */
Test(l2fwd_cli, portmask_with_a_blank_and_a_sign_is_refused_before_eal)
{
	const char *args[] = { "-p", " -1", NULL };

	expect_refused(args, PROG "--portmask: bad value ' -1' "
		       "(1..18446744073709551615)");
}

Test(l2fwd_cli, app_load_unknown_item_is_refused_before_eal)
{
	const char *args[] = { "--app-load", "hold=2ms,burst=3", NULL };

	expect_refused(args, PROG "--app-load: bad item 'burst=3'");
}

Test(l2fwd_cli, app_load_bad_duration_is_refused_before_eal)
{
	const char *args[] = { "--app-load", "hold=2parsecs", NULL };

	expect_refused(args, PROG "--app-load: bad hold '2parsecs'");
}

Test(l2fwd_cli, app_load_hold_longer_than_period_is_refused_before_eal)
{
	const char *args[] = { "--app-load", "hold=20ms,period=10ms", NULL };

	expect_refused(args, PROG "--app-load: hold 20000 us longer than "
		       "period 10000 us");
}

Test(l2fwd_cli, app_load_slice_out_of_the_kernels_range_is_refused_before_eal)
{
	const char *small[] = { "--app-load", "hold=2ms,slice=50us", NULL };
	const char *large[] = { "--app-load", "hold=2ms,slice=101ms", NULL };

	expect_refused(small, PROG "--app-load: bad slice '50us' (100us..100ms)");
	expect_refused(large, PROG "--app-load: bad slice '101ms' (100us..100ms)");
}

/* --receiver: each bad item named with its value (and its range). */
struct bad_receiver {
	char spec[48];
	char line[96];
};

ParameterizedTestParameters(l2fwd_cli, receiver_bad_value_is_refused_before_eal)
{
	static struct bad_receiver cases[] = {
		{ "proto=2parsecs", "--receiver: bad proto '2parsecs' (0..10ms)" },
		{ "app=11ms", "--receiver: bad app '11ms' (0..10ms)" },
		{ "app=-1us", "--receiver: bad app '-1us' (0..10ms)" },
		{ "rcvbuf=0", "--receiver: bad rcvbuf '0' (1..1048576 packets)" },
		{ "rcvbuf=64k", "--receiver: bad rcvbuf '64k' (1..1048576 packets)" },
		{ "threads=17", "--receiver: bad threads '17' (1..16)" },
		{ "nice=x", "--receiver: bad nice 'x' (-20..19)" },
		{ "proto=1us,sockets=2", "--receiver: bad item 'sockets=2'" },
		{ "rcvbuf", "--receiver: bad item 'rcvbuf'" },
	};

	return cr_make_param_array(struct bad_receiver, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_receiver *c, l2fwd_cli,
		  receiver_bad_value_is_refused_before_eal)
{
	const char *args[] = { "--receiver", c->spec, NULL };
	char line[128];

	snprintf(line, sizeof(line), PROG "%s", c->line);
	expect_refused(args, line);
}

Test(l2fwd_cli, receiver_bad_value_in_config_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("bad.ini"));
	l2t_write_file(path, "[l2fwd]\nreceiver = rcvbuf=64,threads=0\n");
	snprintf(line, sizeof(line), PROG "%s: [l2fwd] --receiver: bad threads "
		 "'0' (1..16)", path);
	expect_refused(args, line);
}

/* Read without end, it would hang the parser (fuzz_app_cli found it). */
Test(l2fwd_cli, config_that_is_a_device_is_refused_before_eal)
{
	const char *args[] = { "--config", "/dev/zero", NULL };

	expect_refused(args, PROG "--config: '/dev/zero' is not a regular file");
}

Test(l2fwd_cli, missing_config_file_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("absent.ini"));
	snprintf(line, sizeof(line), PROG "--config: cannot read '%s': "
		 "No such file or directory", path);
	expect_refused(args, line);
}

Test(l2fwd_cli, config_unknown_key_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("typo.ini"));
	l2t_write_file(path, "[sirq]\npolicy = mainline\nnapi-wieght = 32\n");
	snprintf(line, sizeof(line), PROG "%s: unknown key 'napi-wieght' in [sirq]",
		 path);
	expect_refused(args, line);
}

Test(l2fwd_cli, config_key_in_the_wrong_section_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("section.ini"));
	l2t_write_file(path, "[l2fwd]\npolicy = mainline\n");
	snprintf(line, sizeof(line), PROG "%s: unknown key 'policy' in [l2fwd]",
		 path);
	expect_refused(args, line);
}

Test(l2fwd_cli, config_bad_value_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("bad.ini"));
	l2t_write_file(path, "[sirq]\nmode = poll\nnapi-weight = 0\n");
	snprintf(line, sizeof(line), PROG "%s: [sirq] --napi-weight: bad value "
		 "'0': napi_weight must be in 8..256", path);
	expect_refused(args, line);
}

Test(l2fwd_cli, config_napi_bad_value_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("bad.ini"));
	l2t_write_file(path, "[napi]\nnapi-defer-hard-irqs = 100\n"
		       "gro-flush-timeout-us = 2000000\n");
	snprintf(line, sizeof(line), PROG "%s: [napi] --gro-flush-timeout-us: "
		 "bad value '2000000' (0..1000000)", path);
	expect_refused(args, line);
}

/* napi-threaded-mode: netdev-genl's three names; anything else named. */
Test(l2fwd_cli, napi_threaded_mode_bad_value_is_refused_before_eal)
{
	const char *args[] = { "--napi-threaded-mode", "busy", NULL };

	expect_refused(args, PROG "--napi-threaded-mode: bad value 'busy' "
		       "(disabled | enabled | busy-poll)");
}

Test(l2fwd_cli, config_napi_threaded_mode_bad_value_is_refused_before_eal)
{
	char path[512], line[700];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("bad.ini"));
	l2t_write_file(path, "[napi]\nnapi-threaded-mode = 3\n");
	snprintf(line, sizeof(line), PROG "%s: [napi] --napi-threaded-mode: "
		 "bad value '3' (disabled | enabled | busy-poll)", path);
	expect_refused(args, line);
}

Test(l2fwd_cli, config_busy_poll_bad_value_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("bad.ini"));
	l2t_write_file(path, "[l2fwd]\nbusy-poll = yes\nbusy-poll-budget = 257\n");
	snprintf(line, sizeof(line), PROG "%s: [l2fwd] --busy-poll-budget: "
		 "bad value '257' (1..256)", path);
	expect_refused(args, line);
}

/* The NAPI keys have their own section, as the busy-poll keys [l2fwd]. */
Test(l2fwd_cli, config_napi_key_outside_napi_is_refused_before_eal)
{
	char path[512], line[600];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("section.ini"));
	l2t_write_file(path, "[sirq]\nnapi-threaded = yes\n");
	snprintf(line, sizeof(line), PROG "%s: unknown key 'napi-threaded' in "
		 "[sirq]", path);
	expect_refused(args, line);
}

Test(l2fwd_cli, config_bad_value_is_refused_even_when_the_command_line_sets_it)
{
	char path[512], line[800];
	const char *args[] = { "--config", path, "--policy", "mainline", NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("bad.ini"));
	l2t_write_file(path, "[sirq]\npolicy = fifo\n");
	snprintf(line, sizeof(line), PROG "%s: [sirq] --policy: bad value 'fifo' "
		 "(mainline | ksoftirqd | kicinski | deferred | rt | pushdown | pushdown-locked)", path);
	expect_refused(args, line);
}

/* getopt takes "--conf" for --config: so must the file's loading. */
Test(l2fwd_cli, abbreviated_config_option_reads_the_file)
{
	char path[512], opt[600], line[800];
	const char *args[] = { opt, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("bad.ini"));
	l2t_write_file(path, "[sirq]\npolicy = fifo\n");
	snprintf(opt, sizeof(opt), "--conf=%s", path);
	snprintf(line, sizeof(line), PROG "%s: [sirq] --policy: bad value 'fifo' "
		 "(mainline | ksoftirqd | kicinski | deferred | rt | pushdown | pushdown-locked)", path);
	expect_refused(args, line);
}

/* "--config" as the value of --report names the report, not a file to read. */
Test(l2fwd_cli, config_as_the_value_of_another_option_is_not_read)
{
	const char *args[] = { "--report", "--config", "--turbo", NULL };

	expect_refused(args, PROG "bad option '--turbo'; see --help");
}

/*
 * The portmask is checked against the ports EAL found: EAL runs, but
 * l2fwd-sirq stops before starting any port or lcore, with no report.
 */
static void
expect_portmask_refused(const char *mask, const char *line)
{
	char report[512];
	const char *args[] = { "-p", mask, "--duration", "1", "-T", "0",
			       "--report", report, NULL };
	struct l2t_result r;
	struct stat st;

	snprintf(report, sizeof(report), "%s", l2t_path("report.json"));
	run_app(args, &r);
	cr_expect(r.status == 2, "-p %s: exit code %d, expected 2:\n%s%s", mask,
		  r.status, l2t_app_lines(r.out), l2t_app_lines(r.err));
	cr_expect_str_eq(l2t_app_lines(r.err), line, "-p %s: stderr:\n%s",
			 mask, l2t_app_lines(r.err));
	/* The control case of expect_refused()'s "EAL never ran". */
	cr_expect(eal_ran(), "-p %s: no runtime directory for %s although EAL "
		  "ran", mask, l2t_last_prefix());
	cr_expect(strstr(r.out, "forwards") == NULL,
		  "-p %s: forwarding started:\n%s", mask, r.out);
	cr_expect(stat(report, &st) != 0, "-p %s: a report was written", mask);
	l2t_result_free(&r);
}

/* What follows a refused portmask: the ports EAL found (l2fwd's "possible"). */
#define PORTS_FOUND PROG "port 0: net_pcap0\n" PROG "port 1: net_pcap1\n" \
	PROG "EAL found 2 port(s): -p 0x3 names them all\n"

Test(l2fwd_cli, odd_portmask_is_refused)
{
	expect_portmask_refused("0x1", PROG "-p 0x1: 1 ports enabled, need an "
				"even number >= 2\n" PORTS_FOUND);
}

Test(l2fwd_cli, portmask_without_any_port_is_refused)
{
	expect_portmask_refused("0xc", PROG "-p 0xc: port 2 is not a port\n"
				PORTS_FOUND);
}

/* Two ports exist; a mask of three must not quietly become 0x3. */
Test(l2fwd_cli, portmask_naming_a_missing_port_is_refused)
{
	expect_portmask_refused("0x7", PROG "-p 0x7: port 2 is not a port\n"
				PORTS_FOUND);
}

/*
 * A vdev that failed to probe (net_af_packet without iface=) left the
 * ports renumbered: "port 1 is not a port" named the wrong port and not
 * the device. The list says which --vdev became no port.
 */
Test(l2fwd_cli, a_vdev_that_failed_to_probe_is_named)
{
	static const char *const eal[] = { "--vdev=net_af_packet7", NULL };
	const struct app_run how = { .eal = eal };
	const char *args[] = { "-p", "0x7", "--duration", "1", "-T", "0", NULL };
	struct l2t_result r;

	run_app_with(&how, args, &r);
	cr_expect(r.status == 2, "exit code %d:\n%s", r.status, r.err);
	/* After EAL's own "vdev_probe(): failed to initialize ...". */
	cr_expect(strstr(r.err, "\n" PROG "-p 0x7: port 2 is not a port\n"
			 PORTS_FOUND PROG "--vdev net_af_packet7 did not probe: "
			 "no port (EAL's messages above say why)\n") != NULL,
		  "stderr:\n%s", r.err);
	l2t_result_free(&r);
}

/*
 * A pair that never closes: sscanf() converts both numbers and stops
 * before %n, whose variable was used uninitialised (found by the app_cli
 * fuzz target, tests/fuzz/corpus/app_cli/regress-portmap-unclosed-pair).
 */
Test(l2fwd_cli, portmap_with_an_unclosed_pair_is_refused)
{
	const char *args[] = { "--portmap", "(0,1", "--duration", "1", "-T",
			       "0", NULL };
	struct l2t_result r;

	run_app(args, &r);
	cr_expect(r.status == 2, "exit code %d, expected 2:\n%s%s", r.status,
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	cr_expect_str_eq(l2t_app_lines(r.err),
			 PROG "--portmap: bad pair at '(0,1'\n",
			 "stderr:\n%s", l2t_app_lines(r.err));
	cr_expect(strstr(r.out, "forwards") == NULL, "forwarding started:\n%s",
		  r.out);
	l2t_result_free(&r);
}

/* An option of --help: name, and whether it takes a value. */
struct help_opt {
	char name[64];
	bool takes_value;
	char def[64];		/* "" if the line shows none */
	bool unset_explained;	/* "(unset: ...)" instead of a default */
};

/* Every "--name" line of the usage text. */
static unsigned int
parse_help(const char *text, struct help_opt *opts, unsigned int max)
{
	const char *line = text;
	unsigned int n = 0;

	while (*line != '\0' && n < max) {
		const char *end = strchr(line, '\n'), *o, *d;
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line += len + (end != NULL);
		/* A long option's text is on the line below, indented. */
		if (strncmp(line, "                                   ", 35) == 0) {
			const char *next = strchr(line, '\n');
			size_t nlen = next ? (size_t)(next - line) : strlen(line);
			size_t at = strlen(buf);

			snprintf(buf + at, sizeof(buf) - at, " %.*s",
				 (int)(nlen - 35), line + 35);
			line += nlen + (next != NULL);
		}
		/* "  -p, --portmask MASK ..." or "      --rxq N ..." */
		if (strncmp(buf, "  -", 3) != 0 && strncmp(buf, "      --", 8) != 0)
			continue;
		o = strstr(buf, "--") + 2;
		memset(&opts[n], 0, sizeof(opts[n]));
		sscanf(o, "%63[a-z0-9-]", opts[n].name);
		o += strlen(opts[n].name);
		/* " ARG" in capitals follows an option that takes a value. */
		opts[n].takes_value = o[0] == ' ' && o[1] >= 'A' && o[1] <= 'Z';
		d = strstr(buf, "(default: ");
		if (d != NULL)
			sscanf(d, "(default: %63[^)])", opts[n].def);
		opts[n].unset_explained = strstr(buf, "(unset: ") != NULL;
		n++;
	}
	return n;
}

static const struct help_opt *
find_help_opt(const struct help_opt *opts, unsigned int n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

/*
 * The options and defaults of the issue and DESIGN.md (kernel values).
 * "": a string unset by default, whose help says what unset means.
 */
static const struct {
	const char *name;
	const char *def;	/* NULL: a flag; "@" the build's policy */
} expected_opts[] = {
	{ "portmask", "0x3" }, { "queues", "0" }, { "rxq", "1" },
	{ "period", "10" }, { "mac-updating", NULL },
	{ "no-mac-updating", NULL }, { "promiscuous", NULL }, { "portmap", "" },
	{ "receiver", "off" },
	{ "config", "" }, { "report", "" }, { "duration", "0" },
	{ "app-load", "off" }, { "help", NULL }, { "version", NULL },
	{ "policy", "@" },
	{ "mode", "poll" }, { "max-restart", "10" }, { "max-time-us", "2000" },
	{ "defer-window-us", "2000" }, { "overload-window-us", "100000" },
	{ "tick-hz", "250" }, { "expedited-mask", "0x41" },
	{ "stall-threshold-us", "8000" }, { "napi-weight", "64" },
	{ "netdev-budget", "300" }, { "netdev-budget-us", "2000" },
	{ "worker-cpus", "" }, { "worker-boost", "1" },
	{ "irq-tick-us", "100" }, { "irq-priority", "50" },
	/* [napi]: all 0/off is v6.1's NAPI. */
	{ "napi-defer-hard-irqs", "0" }, { "gro-flush-timeout-us", "0" },
	{ "irq-suspend-timeout-us", "0" }, { "napi-threaded", NULL },
	{ "napi-threaded-mode", "disabled" },
	/* The epoll-like application; the kernel's BUSY_POLL_BUDGET. */
	{ "busy-poll", NULL }, { "busy-poll-us", "0" },
	{ "busy-poll-budget", "8" }, { "prefer-busy-poll", NULL },
};

static unsigned int
help_options(const char *flag, struct help_opt *opts)
{
	const char *args[] = { "--napi-weight", "9", flag, NULL };
	struct l2t_result r;
	unsigned int n;

	run_app(args, &r);
	cr_assert(r.status == 0, "%s: exit code %d:\n%s", flag, r.status, r.err);
	cr_expect_str_empty(r.err, "%s: stderr:\n%s", flag, r.err);
	cr_expect(!eal_ran(), "%s started EAL", flag);
	cr_assert(strstr(r.out, "Usage: l2fwd-sirq [EAL options] -- ") == r.out,
		  "%s: no usage line:\n%s", flag, r.out);
	n = parse_help(r.out, opts, MAX_HELP_OPTS);
	l2t_result_free(&r);
	return n;
}

Test(l2fwd_cli, help_lists_every_option_with_its_default)
{
	struct help_opt opts[MAX_HELP_OPTS];
	const char *policy = l2t_env("L2T_DEFAULT_POLICY");
	unsigned int n, i;

	/* --napi-weight 9 before it: help shows defaults, not what was set. */
	n = help_options("--help", opts);
	for (i = 0; i < sizeof(expected_opts) / sizeof(expected_opts[0]); i++) {
		const struct help_opt *o = find_help_opt(opts, n,
							 expected_opts[i].name);
		const char *def = expected_opts[i].def;

		cr_expect(o != NULL, "--help does not list --%s",
			  expected_opts[i].name);
		if (o == NULL)
			continue;
		if (def != NULL && strcmp(def, "@") == 0)
			def = policy;
		cr_expect_str_eq(o->def, def != NULL ? def : "",
				 "--%s: default '%s', expected '%s'", o->name,
				 o->def, def != NULL ? def : "(none: a flag)");
	}
	/*
	 * Also any option added later: one with a value shows its default,
	 * or says what leaving it unset means.
	 */
	for (i = 0; i < n; i++)
		cr_expect(!opts[i].takes_value || opts[i].def[0] != '\0' ||
			  opts[i].unset_explained,
			  "--help: --%s takes a value but shows no default",
			  opts[i].name);
}

Test(l2fwd_cli, short_help_is_the_same)
{
	struct help_opt a[MAX_HELP_OPTS], b[MAX_HELP_OPTS];
	unsigned int na = help_options("--help", a), nb = help_options("-h", b);

	cr_expect(na == nb && memcmp(a, b, sizeof(a[0]) * na) == 0,
		  "-h and --help differ");
}

/* config/l2fwd-sirq.ini mentions every option of --help but four. */
Test(l2fwd_cli, example_config_documents_every_option)
{
	struct help_opt opts[MAX_HELP_OPTS];
	char path[512], key[80], *text;
	unsigned int n, i;
	FILE *f;
	long size;

	n = help_options("--help", opts);
	snprintf(path, sizeof(path), "%s/l2fwd-sirq.ini",
		 l2t_env("L2T_CONFIG_DIR"));
	f = fopen(path, "r");
	cr_assert(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)size + 1);
	cr_assert(text != NULL && fread(text, 1, (size_t)size, f) == (size_t)size);
	fclose(f);
	for (i = 0; i < n; i++) {
		/* Not keys: the file itself, a preset, --help and --version. */
		if (strcmp(opts[i].name, "config") == 0 ||
		    strcmp(opts[i].name, "preset") == 0 ||
		    strcmp(opts[i].name, "help") == 0 ||
		    strcmp(opts[i].name, "version") == 0)
			continue;
		snprintf(key, sizeof(key), "\n%.63s = ", opts[i].name);
		if (strstr(text, key) != NULL)
			continue;
		snprintf(key, sizeof(key), "\n; %.63s = ", opts[i].name);
		cr_expect(strstr(text, key) != NULL, "%s does not mention --%s",
			  path, opts[i].name);
	}
	free(text);
}

/* Run with @args (and a --duration) on the pcap ports; the report. */
static json_t *
run_and_report(const char *const *args)
{
	char report[512];
	const char *all[24];
	struct l2t_result r;
	unsigned int n = 0;
	json_t *j;

	snprintf(report, sizeof(report), "%s", l2t_path("report.json"));
	remove(report);
	for (; *args != NULL && n < 18; args++)
		all[n++] = *args;
	all[n++] = "-T";
	all[n++] = "0";
	all[n++] = "--report";
	all[n++] = report;
	all[n] = NULL;
	run_app(all, &r);
	cr_assert(r.status == 0, "exit code %d:\n%s%s", r.status,
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	l2t_result_free(&r);
	j = l2t_report_load(report);
	return j;
}

static json_t *
lcore_config(json_t *report)
{
	json_t *c = json_object_get(json_array_get(json_object_get(
		json_object_get(report, "sirq"), "lcores"), 0), "config");

	cr_assert(json_is_object(c), "report has no sirq.lcores[0].config");
	return c;
}

/*
 * The file's values apply (its duration ends the run: without it the run
 * would never end), and the command line wins over the file, key by key.
 */
Test(l2fwd_cli, config_applies_and_the_command_line_overrides_it)
{
	char path[512];
	const char *file_only[] = { "--config", path, NULL };
	/* "threaded": the name of "deferred" until issue 13, still taken. */
	const char *overridden[] = { "--policy", "threaded", "--config", path,
				     NULL };
	json_t *j;

	snprintf(path, sizeof(path), "%s", l2t_path("good.ini"));
	l2t_write_file(path, "; a comment\n[run]\nduration = 1\n\n"
		       "[sirq]\npolicy = mainline\nnapi-weight = 32\n"
		       "max-restart = 7\n");

	j = run_and_report(file_only);
	cr_expect_str_eq(l2t_json_str(j, "policy"), "mainline");
	cr_expect(l2t_json_u64(lcore_config(j), "napi_weight") == 32);
	cr_expect(l2t_json_u64(lcore_config(j), "max_restart") == 7);
	json_decref(j);

	/* --policy before --config: still the command line that wins. */
	j = run_and_report(overridden);
	cr_expect_str_eq(l2t_json_str(j, "policy"), "deferred",
			 "the command line did not override the file");
	cr_expect_str_eq(l2t_json_str(lcore_config(j), "policy"), "deferred");
	cr_expect(l2t_json_u64(lcore_config(j), "napi_weight") == 32,
		  "the file's other keys were lost");
	cr_expect(l2t_json_u64(lcore_config(j), "max_restart") == 7);
	json_decref(j);
}

/*
 * [napi] from the file reaches every lcore (its config in the report,
 * in the kernel's units: ns), and the command line wins key by key.
 */
Test(l2fwd_cli, config_napi_keys_apply_and_the_command_line_overrides_them)
{
	char path[512];
	const char *file_only[] = { "--config", path, NULL };
	const char *overridden[] = { "--config", path, "--gro-flush-timeout-us",
				     "50", NULL };
	json_t *j, *c;

	snprintf(path, sizeof(path), "%s", l2t_path("napi.ini"));
	l2t_write_file(path, "[run]\nduration = 1\n\n[napi]\n"
		       "napi-defer-hard-irqs = 100\ngro-flush-timeout-us = 20\n"
		       "irq-suspend-timeout-us = 20000\nnapi-threaded = yes\n");

	j = run_and_report(file_only);
	c = lcore_config(j);
	cr_expect(l2t_json_u64(c, "napi_defer_hard_irqs") == 100);
	cr_expect(l2t_json_u64(c, "napi_gro_flush_timeout_ns") == 20000);
	cr_expect(l2t_json_u64(c, "napi_irq_suspend_timeout_ns") == 20000000);
	cr_expect(l2t_json_u64(c, "napi_threaded") == 1);
	/* Threaded, the queues still forward. */
	cr_expect(l2t_json_u64(l2t_report_port(j, 1), "tx") == NB_INPUT_FRAMES,
		  "napi-threaded = yes: did not forward");
	json_decref(j);

	j = run_and_report(overridden);
	c = lcore_config(j);
	cr_expect(l2t_json_u64(c, "napi_gro_flush_timeout_ns") == 50000,
		  "the command line did not override the file");
	cr_expect(l2t_json_u64(c, "napi_defer_hard_irqs") == 100,
		  "the file's other keys were lost");
	cr_expect(l2t_json_u64(c, "napi_irq_suspend_timeout_ns") == 20000000);
	cr_expect(l2t_json_u64(c, "napi_threaded") == 1);
	json_decref(j);
}

static json_t *
lcore_counters(json_t *report)
{
	json_t *c = json_object_get(json_array_get(json_object_get(
		json_object_get(report, "sirq"), "lcores"), 0), "counters");

	cr_assert(json_is_object(c), "report has no sirq.lcores[0].counters");
	return c;
}

/*
 * [napi] napi-threaded-mode = busy-poll: every queue busy polled by its
 * thread; the report says 2 (netdev-genl's value), the threads' busy
 * polls and no interrupt turned back on. The command line's
 * --napi-threaded (enabled) overrides it.
 */
Test(l2fwd_cli, config_napi_threaded_busy_poll_forwards_and_never_unmasks)
{
	char path[512];
	const char *file_only[] = { "--config", path, NULL };
	const char *overridden[] = { "--config", path, "--napi-threaded", NULL };
	json_t *j, *c;

	snprintf(path, sizeof(path), "%s", l2t_path("busy-thread.ini"));
	l2t_write_file(path, "[run]\nduration = 1\n\n[napi]\n"
		       "napi-threaded-mode = busy-poll\n");
	j = run_and_report(file_only);
	c = lcore_config(j);
	cr_expect(l2t_json_u64(c, "napi_threaded") == 2);
	cr_expect(l2t_json_u64(l2t_report_port(j, 0), "tx") == NB_INPUT_FRAMES,
		  "napi-threaded-mode = busy-poll: did not forward");
	cr_expect(l2t_json_u64(l2t_report_port(j, 1), "tx") == NB_INPUT_FRAMES);
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0);
	c = lcore_counters(j);
	cr_expect(l2t_json_u64(c, "napi_thread_busy_polls") > 0);
	cr_expect(l2t_json_u64(c, "napi_irq_unmasks") == 0,
		  "%" PRIu64 " interrupts turned back on while busy polled",
		  l2t_json_u64(c, "napi_irq_unmasks"));
	json_decref(j);

	j = run_and_report(overridden);
	c = lcore_config(j);
	cr_expect(l2t_json_u64(c, "napi_threaded") == 1,
		  "--napi-threaded did not override the file");
	json_decref(j);
}

/*
 * The busy-poll keys of [l2fwd] load and the run forwards with them. The
 * report does not show them (nor the busy pollers' counters): only that
 * the file was taken and the application thread did no harm is checked.
 */
Test(l2fwd_cli, config_busy_poll_keys_load_and_the_run_forwards)
{
	char path[512];
	const char *args[] = { "--config", path, NULL };
	json_t *j;

	snprintf(path, sizeof(path), "%s", l2t_path("busy.ini"));
	l2t_write_file(path, "[run]\nduration = 1\n\n[l2fwd]\nbusy-poll = yes\n"
		       "busy-poll-us = 50\nbusy-poll-budget = 16\n"
		       "prefer-busy-poll = yes\n");
	j = run_and_report(args);
	cr_expect(l2t_json_u64(l2t_report_port(j, 0), "tx") == NB_INPUT_FRAMES);
	cr_expect(l2t_json_u64(l2t_report_port(j, 1), "tx") == NB_INPUT_FRAMES);
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0);
	json_decref(j);
}

/* The example: every active key is a default. */
Test(l2fwd_cli, example_config_loads_with_the_defaults)
{
	char path[512];
	const char *args[] = { "--config", path, "--duration", "1", NULL };
	json_t *j, *c;

	snprintf(path, sizeof(path), "%s/l2fwd-sirq.ini",
		 l2t_env("L2T_CONFIG_DIR"));
	j = run_and_report(args);
	c = lcore_config(j);
	cr_expect_str_eq(l2t_json_str(j, "policy"), l2t_env("L2T_DEFAULT_POLICY"));
	cr_expect_str_eq(l2t_json_str(j, "mode"), "poll");
	cr_expect(l2t_json_u64(c, "max_restart") == 10);
	cr_expect(l2t_json_u64(c, "max_time_ns") == 2000000);
	cr_expect(l2t_json_u64(c, "defer_window_ns") == 2000000);
	cr_expect(l2t_json_u64(c, "overload_window_ns") == 100000000);
	cr_expect(l2t_json_u64(c, "expedited_mask") == 0x41);
	cr_expect(l2t_json_u64(c, "tick_hz") == 250);
	cr_expect(l2t_json_u64(c, "stall_threshold_ns") == 8000000);
	cr_expect(l2t_json_u64(c, "napi_weight") == 64);
	cr_expect(l2t_json_u64(c, "netdev_budget") == 300);
	cr_expect(l2t_json_u64(c, "netdev_budget_us") == 2000);
	cr_expect(l2t_json_u64(c, "irq_tick_us") == 100);
	cr_expect(l2t_json_u64(c, "irq_priority") == 50);
	cr_expect(l2t_json_u64(c, "napi_defer_hard_irqs") == 0);
	cr_expect(l2t_json_u64(c, "napi_gro_flush_timeout_ns") == 0);
	cr_expect(l2t_json_u64(c, "napi_irq_suspend_timeout_ns") == 0);
	cr_expect(l2t_json_u64(c, "napi_threaded") == 0);
	cr_expect(json_array_size(json_object_get(j, "app_load")) == 0);
	/* portmask = 0x3: both ports forward. */
	cr_expect(l2t_json_u64(l2t_report_port(j, 0), "tx") == NB_INPUT_FRAMES);
	cr_expect(l2t_json_u64(l2t_report_port(j, 1), "tx") == NB_INPUT_FRAMES);
	json_decref(j);
}

struct scenario {
	char file[32];
	uint64_t hold_us;
	uint64_t period_us;
};

ParameterizedTestParameters(l2fwd_cli, scenario_config_loads)
{
	static struct scenario s[] = {
		{ "stall-scenario.ini", 10000, 50000 },
		{ "flood-scenario.ini", 50000, 50000 },
	};

	return cr_make_param_array(struct scenario, s, sizeof(s) / sizeof(s[0]));
}

ParameterizedTest(struct scenario *s, l2fwd_cli, scenario_config_loads)
{
	char path[512];
	const char *args[] = { "--config", path, "--duration", "1", NULL };
	json_t *j, *load;

	snprintf(path, sizeof(path), "%s/%s", l2t_env("L2T_CONFIG_DIR"), s->file);
	j = run_and_report(args);
	cr_expect_str_eq(l2t_json_str(j, "mode"), "irq", "%s", s->file);
	cr_expect_str_eq(l2t_json_str(j, "policy"), "kicinski", "%s", s->file);
	load = json_array_get(json_object_get(j, "app_load"), 0);
	cr_assert(json_is_object(load), "%s: no app_load in the report", s->file);
	cr_expect(l2t_json_u64(load, "hold_us") == s->hold_us, "%s", s->file);
	cr_expect(l2t_json_u64(load, "period_us") == s->period_us, "%s", s->file);
	cr_expect(l2t_json_u64(load, "threads") == 3, "%s", s->file);
	cr_expect(l2t_json_u64(l2t_report_port(j, 1), "tx") == NB_INPUT_FRAMES,
		  "%s: did not forward", s->file);
	json_decref(j);
}

/*
 * slice= asks the kernel for the application threads' EEVDF slice
 * (sched_setattr's sched_runtime, Linux 6.12+): the report says what
 * was asked, and the threads say nothing when the kernel took it.
 */
Test(l2fwd_cli, app_load_slice_is_taken_by_the_kernel_and_reported)
{
	char report[512];
	const char *args[] = { "--mode", "irq", "--app-load",
		"hold=2ms,period=10ms,threads=2,slice=3ms", "--duration", "1",
		"-T", "0", "--report", report, NULL };
	struct l2t_result r;
	json_t *j, *load;

	snprintf(report, sizeof(report), "%s", l2t_path("report.json"));
	remove(report);
	run_app(args, &r);
	cr_assert(r.status == 0, "exit code %d:\n%s", r.status,
		  l2t_app_lines(r.err));
	if (strstr(r.err, "not taken") != NULL) {
		l2t_result_free(&r);
		cr_skip_test("this kernel has no per-task slice (before 6.12)");
	}
	cr_expect(strstr(r.err, "app-load: slice") == NULL, "%s",
		  l2t_app_lines(r.err));
	l2t_result_free(&r);
	j = l2t_report_load(report);
	load = json_array_get(json_object_get(j, "app_load"), 0);
	cr_assert(json_is_object(load), "no app_load in the report");
	cr_expect(l2t_json_u64(load, "slice_us") == 3000);
	cr_expect(l2t_json_u64(load, "slice_taken_us") == 3000,
		  "the kernel did not keep the threads' slice");
	cr_expect(l2t_json_u64(load, "bursts") > 0);
	json_decref(j);
}

/*
 * --worker-lcore-id is deprecated: accepted on the command line and in
 * the INI file, one line on stderr saying so, and the run goes on.
 */
#define WORKER_LCORE_ID_DEPRECATED PROG "--worker-lcore-id is deprecated, " \
	"does nothing: sirqd now runs as the lcore it serves, with its " \
	"mempool cache, by default\n"

static void
expect_deprecated_and_run(const char *const *args, const char *label)
{
	struct l2t_result r;

	run_app(args, &r);
	cr_expect(r.status == 0, "%s: exit code %d:\n%s%s", label, r.status,
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	cr_expect_str_eq(l2t_app_lines(r.err), WORKER_LCORE_ID_DEPRECATED,
			 "%s: stderr:\n%s", label, l2t_app_lines(r.err));
	cr_expect(strstr(r.out, "forwards") != NULL, "%s: did not forward:\n%s",
		  label, r.out);
	l2t_result_free(&r);
}

Test(l2fwd_cli, worker_lcore_id_is_accepted_and_says_it_is_deprecated)
{
	const char *args[] = { "--worker-lcore-id", "--duration", "1", "-T",
			       "0", NULL };

	expect_deprecated_and_run(args, "--worker-lcore-id");
}

Test(l2fwd_cli, worker_lcore_id_in_a_config_file_is_accepted_and_deprecated)
{
	char path[512];
	const char *args[] = { "--config", path, "--duration", "1", "-T", "0",
			       NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("old.ini"));
	l2t_write_file(path, "[sirq]\nworker-lcore-id = yes\n");
	expect_deprecated_and_run(args, "worker-lcore-id = yes");
}

/*
 * The mbuf pool's ops, printed at start: DPDK's default where every
 * forwarding lcore has CPUs of its own, ring_mt_rts where two share one,
 * and always what EAL's --mbuf-pool-ops-name says if it is given.
 */
static void
expect_pool_ops(const struct app_run *how, const char *const *args,
		const char *line)
{
	struct l2t_result r;

	run_app_with(how, args, &r);
	cr_assert(r.status == 0, "exit code %d:\n%s%s", r.status,
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	cr_expect(strstr(r.out, line) != NULL, "no '%s' in:\n%s", line,
		  l2t_app_lines(r.out));
	cr_expect(strstr(r.out, "lcore 1 forwards") != NULL,
		  "lcore 1 does not forward:\n%s", l2t_app_lines(r.out));
	l2t_result_free(&r);
}

static const char *const one_second[] = { "--duration", "1", "-T", "0", NULL };

Test(l2fwd_cli, mbuf_pool_ops_are_the_default_when_lcores_have_their_own_cpus)
{
	const struct app_run how = { .lcore_opt = "-l", .lcores = "0,1" };

	expect_pool_ops(&how, one_second, PROG "mbuf pool ops ring_mp_mc "
			"(default: no two lcores share a CPU)\n");
}

Test(l2fwd_cli, mbuf_pool_ops_are_ring_mt_rts_when_two_lcores_share_a_cpu)
{
	const struct app_run how = { .lcore_opt = "--lcores", .lcores = "0@0,1@0" };

	expect_pool_ops(&how, one_second, PROG "mbuf pool ops ring_mt_rts "
			"(lcores 0 and 1 share CPUs)\n");
}

Test(l2fwd_cli, mbuf_pool_ops_are_ring_mt_rts_when_sirqd_threads_share_worker_cpus)
{
	const struct app_run how = { .lcore_opt = "-l", .lcores = "0,1" };
	const char *args[] = { "--worker-cpus", "0", "--duration", "1", "-T",
			       "0", NULL };

	expect_pool_ops(&how, args, PROG "mbuf pool ops ring_mt_rts "
			"(--worker-cpus puts 2 sirqd threads on the same CPUs)\n");
}

Test(l2fwd_cli, eal_mbuf_pool_ops_name_wins_over_the_choice)
{
	const char *eal[] = { "--mbuf-pool-ops-name", "ring_mt_hts", NULL };
	const struct app_run how = { .lcore_opt = "--lcores",
				     .lcores = "0@0,1@0", .eal = eal };

	expect_pool_ops(&how, one_second, PROG "mbuf pool ops ring_mt_hts "
			"(EAL --mbuf-pool-ops-name)\n");
}

/*
 * A port gets one TX queue per lcore that transmits to it. net_pcap with
 * two rx_pcap and one tx_pcap has two Rx queues and one TX queue: with
 * --rxq 2 on four lcores, two lcores poll port 0 and both would transmit
 * on port 1. Refused before any port starts, naming the limit and the
 * way out; and the way out (-q 2) runs.
 */
Test(l2fwd_cli, too_few_tx_queues_for_the_lcores_is_refused_with_the_way_out)
{
	const struct app_run how = { .lcore_opt = "--lcores",
				     .lcores = "0@0,1@1,2@0,3@1",
				     .rxq_per_port = 2 };
	const char *refused[] = { "--rxq", "2", "--duration", "1", "-T", "0",
				  NULL };
	const char *way_out[] = { "--rxq", "2", "-q", "2", "--duration", "1",
				  "-T", "0", NULL };
	struct l2t_result r;

	run_app_with(&how, refused, &r);
	cr_expect(r.status == 2, "exit code %d, expected 2:\n%s%s", r.status,
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	cr_expect_str_eq(l2t_app_lines(r.err), PROG "port 0 has 1 TX queue(s) "
			 "and 2 lcores transmit to it, one queue each: use -q 2 "
			 "(one lcore polls each port) or fewer lcores\n",
			 "stderr:\n%s", l2t_app_lines(r.err));
	cr_expect(strstr(r.out, "forwards") == NULL, "forwarding started:\n%s",
		  r.out);
	l2t_result_free(&r);

	run_app_with(&how, way_out, &r);
	cr_expect(r.status == 0, "-q 2: exit code %d:\n%s%s", r.status,
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	cr_expect(strstr(r.out, "lcore 0 forwards 2 queue(s)") != NULL &&
		  strstr(r.out, "lcore 1 forwards 2 queue(s)") != NULL,
		  "-q 2: not one lcore per port:\n%s", l2t_app_lines(r.out));
	l2t_result_free(&r);
}

/*
 * An operator's supervisor trusts the exit code: what cannot work is
 * refused before EAL with exit 2 and the option named, not found after
 * the run (or never) with exit 0.
 */
Test(l2fwd_cli, worker_cpus_that_do_not_exist_are_refused_before_eal)
{
	const char *args[] = { "--worker-cpus", "1000-1001", NULL };
	struct l2t_result r;

	run_app(args, &r);
	cr_expect(r.status == 2, "exit code %d", r.status);
	cr_expect(strstr(r.err, PROG "--worker-cpus 1000-1001: CPU 1000 does not exist or is not ours (CPUs ") != NULL,
		  "stderr:\n%s", r.err);
	cr_expect(!eal_ran(), "EAL started before refusing");
	l2t_result_free(&r);
}

Test(l2fwd_cli, a_report_in_a_missing_directory_is_refused_before_eal)
{
	const char *args[] = { "--report", "/nonexistent-sirq-dir/r.json", NULL };

	expect_refused(args, PROG "--report /nonexistent-sirq-dir/r.json: "
		       "cannot write in /nonexistent-sirq-dir: No such file or directory");
}

/* A copy of /dev/null (mknod c 1 3) stays a device; so does its symlink. */
Test(l2fwd_cli, a_report_on_a_device_or_a_symlink_to_one_is_refused)
{
	char dev[512], link[512], line[1200];
	const char *on_dev[] = { "--report", dev, NULL };
	const char *on_link[] = { "--report", link, NULL };
	struct stat st;

	snprintf(dev, sizeof(dev), "%s", l2t_path("null-copy"));
	snprintf(link, sizeof(link), "%s", l2t_path("report-link.json"));
	remove(dev);
	remove(link);
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) != 0)
		cr_skip_test("mknod: %s (needs root)", strerror(errno));
	cr_assert(symlink(dev, link) == 0);

	snprintf(line, sizeof(line), PROG "--report %s: exists and is not a "
		 "regular file (a character device); refused", dev);
	expect_refused(on_dev, line);
	snprintf(line, sizeof(line), PROG "--report %s: a symlink to %s, not "
		 "to a regular file; refused", link, dev);
	expect_refused(on_link, line);
	cr_assert(lstat(dev, &st) == 0 && S_ISCHR(st.st_mode),
		  "the device was replaced");
	cr_assert(lstat(link, &st) == 0 && S_ISLNK(st.st_mode),
		  "the symlink was replaced");
	remove(link);
	remove(dev);
}

/* A symlink to a regular file stays a symlink; the file gets the report. */
Test(l2fwd_cli, a_report_through_a_symlink_replaces_the_file_it_points_at)
{
	char file[512], link[512];
	const char *args[] = { "-T", "0", "--duration", "1", "--report", link,
			       NULL };
	struct l2t_result r;
	struct stat st;
	json_t *j;

	snprintf(file, sizeof(file), "%s", l2t_path("real-report.json"));
	snprintf(link, sizeof(link), "%s", l2t_path("report-link2.json"));
	remove(link);
	l2t_write_file(file, "old\n");
	cr_assert(chmod(file, 0640) == 0);
	cr_assert(symlink(file, link) == 0);
	run_app(args, &r);
	cr_assert(r.status == 0, "exit code %d:\n%s", r.status, r.err);
	l2t_result_free(&r);
	cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode),
		  "the symlink was replaced by a file");
	cr_expect(stat(file, &st) == 0 && (st.st_mode & 07777) == 0640,
		  "the file's mode is %o", st.st_mode & 07777);
	j = l2t_report_load(file);
	cr_expect(json_object_get(j, "sirq") != NULL, "no report in %s", file);
	json_decref(j);
	remove(link);
	remove(file);
}

/*
 * "(0,0)": port 0 sends back what it receives (testpmd's loop topology,
 * the one-link set-up of bench/pktgen-bench.sh); port 1, in -p but in no
 * pair, is left alone. Paired in port order, out1.pcap would hold port
 * 0's frames and out0.pcap port 1's.
 */
Test(l2fwd_cli, portmap_a_port_paired_with_itself_sends_back_what_it_receives)
{
	const char *args[] = { "--portmap", "(0,0)", "--duration", "1", NULL };
	struct l2t_frames out0, out1;
	json_t *j, *ports;

	j = run_and_report(args);
	ports = json_object_get(j, "ports");
	cr_assert(json_array_size(ports) == 1, "%zu ports in the report, expected port 0 alone",
		  json_array_size(ports));
	cr_expect(json_integer_value(json_object_get(json_array_get(ports, 0), "rx")) ==
			  NB_INPUT_FRAMES &&
		  json_integer_value(json_object_get(json_array_get(ports, 0), "tx")) ==
			  NB_INPUT_FRAMES,
		  "port 0 did not receive and send back %d frames", NB_INPUT_FRAMES);
	json_decref(j);
	memset(&out0, 0, sizeof(out0));
	memset(&out1, 0, sizeof(out1));
	l2t_pcap_read(l2t_path("out0.pcap"), &out0);
	l2t_pcap_read(l2t_path("out1.pcap"), &out1);
	cr_expect(out0.n == NB_INPUT_FRAMES, "port 0 sent %zu frames, expected %d", out0.n,
		  NB_INPUT_FRAMES);
	cr_expect(out1.n == 0, "port 1, in no pair, sent %zu frames", out1.n);
	l2t_frames_free(&out0);
	l2t_frames_free(&out1);
}

/* The docs say flags take yes/1/true and no/0/false in the INI file. */
Test(l2fwd_cli, config_flag_no_turns_the_flag_off)
{
	char path[512];
	const char *args[] = { "--config", path, NULL };
	struct l2t_frames out;
	json_t *j;

	snprintf(path, sizeof(path), "%s", l2t_path("flags.ini"));
	l2t_write_file(path, "[run]\nduration = 1\n[l2fwd]\nmac-updating = no\n");
	j = run_and_report(args);
	json_decref(j);
	/* Not rewritten: the frames leave with the MACs they came with. */
	memset(&out, 0, sizeof(out));
	l2t_pcap_read(l2t_path("out1.pcap"), &out);
	cr_assert(out.n > 0, "nothing forwarded");
	cr_expect(memcmp(out.f[0].data + 6, "\x02\0\0\0\0\x02", 6) == 0,
		  "the source MAC was rewritten");
	l2t_frames_free(&out);
}

Test(l2fwd_cli, config_flag_with_another_word_is_refused_with_the_words)
{
	char path[512], line[700];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("flags.ini"));
	l2t_write_file(path, "[l2fwd]\nmac-updating = maybe\n");
	snprintf(line, sizeof(line), PROG "%s: [l2fwd] --mac-updating: bad "
		 "value 'maybe' (yes | no | 1 | 0 | true | false)", path);
	expect_refused(args, line);
}

Test(l2fwd_cli, config_key_before_any_section_is_named_as_such)
{
	char path[512], line[900];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("nosection.ini"));
	l2t_write_file(path, "duration = 1\n[run]\n");
	snprintf(line, sizeof(line), PROG "--config: '%s' is not an INI file "
		 "rte_cfgfile can parse (a key before the first [section], or "
		 "a line over 324 bytes)", path);
	expect_refused(args, line);
}

/* A config file of @text; refused with @msg after "PROG PATH: ". */
static void
expect_config_refused(const char *text, const char *msg)
{
	char path[512], line[1200];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("twice.ini"));
	l2t_write_file(path, text);
	snprintf(line, sizeof(line), PROG "%s: %s", path, msg);
	expect_refused(args, line);
}

/* The last of two values won, or the first: neither is what was meant. */
Test(l2fwd_cli, config_key_given_twice_is_refused_with_both_lines)
{
	expect_config_refused("[sirq]\nmax-restart = 5\n; again\nmax-restart = 7\n",
			      "'max-restart' given twice in [sirq] (lines 2 and 4)");
}

Test(l2fwd_cli, config_keys_that_contradict_are_refused_with_both_lines)
{
	expect_config_refused("[l2fwd]\nmac-updating = yes\n\nno-mac-updating = yes\n",
			      "'mac-updating' (line 2) and 'no-mac-updating' (line 4) set the same thing; keep one");
	expect_config_refused("[napi]\nnapi-threaded = yes\nnapi-threaded-mode = busy-poll\n",
			      "'napi-threaded' (line 2) and 'napi-threaded-mode' (line 3) set the same thing; keep one");
}

/* rte_cfgfile reads only the first of two sections of one name. */
Test(l2fwd_cli, config_section_given_twice_is_refused_with_both_lines)
{
	expect_config_refused("[sirq]\nmax-restart = 5\n[run]\nduration = 1\n[sirq]\ntick-hz = 100\n",
			      "[sirq] appears twice (lines 1 and 5); give each option once");
}

/* "l2fwd-sirq X (libsirq Y, DPDK Z)", before EAL, with or without "--". */
static void
expect_version(const char *const *argv)
{
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;
	const char *const *e;

	l2t_arg(&a, "%s", l2t_env("L2FWD_SIRQ"));
	for (e = argv; *e != NULL; e++)
		l2t_arg(&a, "%s", *e);
	l2t_run(&a, &r);
	cr_expect(r.status == 0, "%s: exit code %d:\n%s", argv[0], r.status,
		  r.err);
	cr_expect(strncmp(r.out, "l2fwd-sirq ", 11) == 0 &&
		  strstr(r.out, " (libsirq ") != NULL &&
		  strstr(r.out, ", DPDK ") != NULL &&
		  strchr(r.out, '\n') == r.out + strlen(r.out) - 1,
		  "%s: stdout '%s'", argv[0], r.out);
	cr_expect_str_empty(r.err, "stderr:\n%s", r.err);
	l2t_result_free(&r);
}

Test(l2fwd_cli, version_names_the_program_the_library_and_dpdk)
{
	static const char *const after[] = { "--", "--version", NULL };
	static const char *const alone[] = { "--version", NULL };

	expect_version(after);
	expect_version(alone);
}

/* DPDK l2fwd's command lines carry -P: taken, the run forwards. */
Test(l2fwd_cli, l2fwd_promiscuous_flag_is_taken)
{
	const char *args[] = { "-P", "--duration", "1", NULL };
	json_t *j = run_and_report(args);

	cr_expect_gt(l2t_json_u64(l2t_report_port(j, 1), "tx"), 0,
		     "-P: nothing forwarded");
	json_decref(j);
}

/*
 * Too few lcores for -q: the message gives the counts it was made of
 * (it said "not enough lcores for 1 queue(s) per lcore").
 */
Test(l2fwd_cli, too_few_lcores_for_the_queues_names_the_counts)
{
	const struct app_run how = { .rxq_per_port = 2 };
	const char *args[] = { "-q", "1", "--rxq", "2", "--duration", "1",
			       "-T", "0", NULL };
	struct l2t_result r;

	run_app_with(&how, args, &r);
	cr_expect(r.status == 2, "exit code %d:\n%s", r.status, r.err);
	cr_expect_str_eq(l2t_app_lines(r.err),
			 PROG "4 Rx queue(s) (--rxq 2 on 2 port(s)) at 1 per "
			 "lcore (-q) need 4 lcore(s); EAL has 1 (-l)\n",
			 "stderr:\n%s", r.err);
	l2t_result_free(&r);
}

/*
 * The total line's rate of a statistics line, "rx N (RATE, ...": the
 * line after @after, or NULL.
 */
static const char *
total_rate(const char *out, const char **after, uint64_t *rx)
{
	const char *t = strstr(*after, "\ntotal:   rx ");
	unsigned long long n;
	const char *open;

	if (t == NULL)
		return NULL;
	*after = t + 1;
	cr_assert(sscanf(t, "\ntotal:   rx %llu", &n) == 1, "%s", out);
	*rx = n;
	open = strchr(t, '(');
	cr_assert(open != NULL, "%s", out);
	return open + 1;
}

/*
 * The statistics line's rate is the rate since the last line: once the
 * pcap files are played (at once), the next line says 0 pps, where the
 * average since the start went on printing a falling, non-zero rate.
 */
Test(l2fwd_cli, statistics_rate_falls_to_zero_the_line_after_traffic_stops)
{
	const char *args[] = { "-T", "1", "--duration", "4", NULL };
	const char *at, *rate;
	struct l2t_result r;
	uint64_t rx = 0, first = 0;
	unsigned int lines = 0, zero = 0;

	run_app(args, &r);
	cr_assert(r.status == 0, "exit code %d:\n%s", r.status, r.err);
	at = r.out;
	while ((rate = total_rate(r.out, &at, &rx)) != NULL) {
		if (lines++ == 0) {
			first = rx;
			continue;
		}
		/* Nothing more came in: every later line says 0. */
		cr_expect_eq(rx, first, "more packets after the first line:\n%s",
			     r.out);
		cr_expect(strncmp(rate, "0 pps, ", 7) == 0,
			  "line %u: rate '%.20s' after traffic stopped:\n%s",
			  lines, rate, r.out);
		zero += strncmp(rate, "0 pps, ", 7) == 0;
	}
	cr_expect_eq(first, 2 * NB_INPUT_FRAMES, "first line: %" PRIu64
		     " packets:\n%s", first, r.out);
	cr_expect_geq(lines, 3, "%u statistics lines in 4 s:\n%s", lines, r.out);
	cr_expect_geq(zero, 2);
	/* Each port's link and the PMD's counters; each lcore's policy. */
	cr_expect(strstr(r.out, "imissed 0 ierrors 0 rx_nombuf 0") != NULL,
		  "%s", r.out);
	cr_expect(strstr(r.out, "lcore  0: ") != NULL, "%s", r.out);
	cr_expect(strstr(r.out, "CPU since the last line: dispatcher ") != NULL,
		  "%s", r.out);
	/* At start: each port's MAC, link and pair, as l2fwd prints them. */
	cr_expect(strstr(r.out, PROG "port 0 (net_pcap0): MAC ") != NULL &&
		  strstr(r.out, "; forwards to port 1\n") != NULL, "%s", r.out);
	cr_expect(strstr(r.out, "port 0 rxq 0 -> port 1 txq 0, port 1 rxq 0 -> port 0 txq 0\n") != NULL,
		  "%s", r.out);
	l2t_result_free(&r);
}

/* A presets directory of our own for the test (SIRQ_PRESET_DIR). */
static const char *
preset_dir(void)
{
	static char dir[512];
	char path[600];

	snprintf(dir, sizeof(dir), "%s", l2t_path("presets"));
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/quiet-a.ini", dir);
	l2t_write_file(path, "[run]\nduration = 1\n\n[sirq]\npolicy = mainline\n"
		       "napi-weight = 32\nmax-restart = 7\n");
	snprintf(path, sizeof(path), "%s/b_2.ini", dir);
	l2t_write_file(path, "[sirq]\npolicy = kicinski\n");
	snprintf(path, sizeof(path), "%s/not a name.ini", dir);
	l2t_write_file(path, "[sirq]\npolicy = kicinski\n");
	setenv("SIRQ_PRESET_DIR", dir, 1);
	return dir;
}

Test(l2fwd_cli, unknown_preset_is_refused_naming_the_ones_there)
{
	const char *args[] = { "--preset", "nosuch", NULL };
	char line[1200];

	snprintf(line, sizeof(line), PROG "--preset: no preset 'nosuch' in %s "
		 "(presets: b_2 quiet-a)", preset_dir());
	expect_refused(args, line);
}

Test(l2fwd_cli, preset_name_that_is_a_path_is_refused_before_eal)
{
	const char *args[] = { "--preset", "../quiet-a", NULL };

	preset_dir();
	expect_refused(args, PROG "--preset: '../quiet-a' is not a preset name "
		       "(letters, digits, '-' and '_'; a file goes to --config)");
}

Test(l2fwd_cli, preset_key_in_a_config_file_is_refused)
{
	char path[512], line[700];
	const char *args[] = { "--config", path, NULL };

	snprintf(path, sizeof(path), "%s", l2t_path("nested.ini"));
	l2t_write_file(path, "[run]\npreset = quiet-a\n");
	snprintf(line, sizeof(line), PROG "%s: unknown key 'preset' in [run]",
		 path);
	expect_refused(args, line);
}

/*
 * The preset first, --config over it, the command line over both, key
 * by key: the preset's duration ends the run, its max-restart stays, the
 * file's napi-weight wins over the preset's, the command line's policy
 * over both.
 */
Test(l2fwd_cli, preset_applies_under_config_and_the_command_line)
{
	char path[512];
	const char *preset_only[] = { "--preset", "quiet-a", NULL };
	const char *all[] = { "--policy", "deferred", "--config", path,
			      "--preset", "quiet-a", NULL };
	json_t *j;

	preset_dir();
	snprintf(path, sizeof(path), "%s", l2t_path("over.ini"));
	l2t_write_file(path, "[sirq]\nnapi-weight = 16\n");

	j = run_and_report(preset_only);
	cr_expect_str_eq(l2t_json_str(j, "policy"), "mainline");
	cr_expect(l2t_json_u64(lcore_config(j), "napi_weight") == 32);
	cr_expect(l2t_json_u64(lcore_config(j), "max_restart") == 7);
	json_decref(j);

	j = run_and_report(all);
	cr_expect_str_eq(l2t_json_str(j, "policy"), "deferred");
	cr_expect(l2t_json_u64(lcore_config(j), "napi_weight") == 16,
		  "--config did not override the preset");
	cr_expect(l2t_json_u64(lcore_config(j), "max_restart") == 7,
		  "the preset's other keys were lost");
	json_decref(j);
}

/*
 * The shipped preset, found by name in the source tree's config/presets
 * (no SIRQ_PRESET_DIR): its model and mode apply; its reservation is
 * overridden here, as the kernel admits it only on a CPU that is a root
 * domain of its own (test l2fwd_deadline_cpuset runs one). --help names it.
 */
Test(l2fwd_cli, shipped_preset_loads_by_name_and_help_lists_it)
{
	const char *args[] = { "--preset", "net-rx-reserved",
			       "--softirq-thread-sched", "net_rx=other",
			       "--duration", "1", NULL };
	const char *help[] = { "--help", NULL };
	struct l2t_result r;
	json_t *j;

	unsetenv("SIRQ_PRESET_DIR");
	j = run_and_report(args);
	cr_expect_str_eq(l2t_json_str(j, "policy"), "pushdown");
	cr_expect_str_eq(l2t_json_str(lcore_config(j), "mode"), "irq");
	json_decref(j);

	run_app(help, &r);
	cr_expect(r.status == 0);
	cr_expect(strstr(r.out, "Presets (--preset NAME") != NULL &&
		  strstr(r.out, "net-rx-reserved") != NULL,
		  "--help does not list the shipped preset:\n%s", r.out);
	l2t_result_free(&r);
}
