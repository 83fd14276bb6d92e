/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * l2fwd-sirq as an operator runs it, under a net_null flood, with
 * telemetry as dpdk-telemetry.py speaks it (the socket of the process's
 * runtime directory): what a run-time change does, and what the report
 * taken after it says.
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "l2t.h"

#define START_DEADLINE_S 60
#define EXIT_DEADLINE_S 30
#define TEL_REPLY_MAX 16384
/* The flood's packets the NAPI thread must receive to count as its poller. */
#define THREAD_PACKETS 100000
#define HANDOVER_DEADLINE_S 20

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_operator, .fini = suite_fini, .timeout = 120);

/* A telemetry connection to the process of the last prefix. */
static int
tel_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[80], hello[1024];
	int fd;

	l2t_runtime_dir(l2t_last_prefix(), dir, sizeof(dir));
	cr_assert((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
				   "%.80s/dpdk_telemetry.v2", dir) <
		  sizeof(sun.sun_path), "runtime directory %s too long", dir);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	cr_assert(fd >= 0);
	cr_assert(connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0,
		  "telemetry %s: %s", sun.sun_path, strerror(errno));
	/* The greeting: version, pid, max_output_len. */
	cr_assert(read(fd, hello, sizeof(hello)) > 0);
	return fd;
}

/* @cmd's reply: the object under the command's name (or "error"). */
static json_t *
tel_call(int fd, const char *cmd)
{
	static char buf[TEL_REPLY_MAX];
	json_error_t jerr;
	json_t *j, *v;
	char name[128];
	ssize_t n;

	cr_assert(write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd));
	n = read(fd, buf, sizeof(buf) - 1);
	cr_assert(n > 0, "%s: no reply", cmd);
	buf[n] = '\0';
	j = json_loads(buf, 0, &jerr);
	cr_assert(j != NULL, "%s: not JSON: %s", cmd, buf);
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(cmd, ","), cmd);
	v = json_object_get(j, name);
	cr_assert(v != NULL, "%s: %s", cmd, buf);
	json_incref(v);
	json_decref(j);
	return v;
}

/* l2fwd-sirq on two null ports, lcore 0, its report at @report. */
static void
start_flood(struct l2t_proc *p, const char *report)
{
	struct l2t_argv a = { .argc = 0 };

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_null_flood_args(&a, "-l", "0", report);
	l2t_proc_start(p, "l2fwd-sirq", &a);
	l2t_proc_expect(p, "lcore 0 forwards", START_DEADLINE_S);
}

static void
stop(struct l2t_proc *p)
{
	int status;

	cr_assert(kill(p->pid, SIGTERM) == 0);
	status = l2t_proc_wait(p, EXIT_DEADLINE_S);
	cr_expect(status == 0, "exit code %d after SIGTERM:\n%s", status,
		  l2t_app_lines(p->buf));
	l2t_proc_reap(p);
}

/*
 * A queue under a constant flood is never idle. /sirq/napi_set
 * threaded=enabled was refused every time ("the context is scheduled
 * ... try again"), and the refused request left a napi/0-0 thread that
 * /sirq/napi showed beside "mode": "softirq". Now the change is taken at
 * once and applied when NET_RX next comes to the context: its thread
 * polls it, counted by the library (thread_polls), and back to disabled
 * NET_RX has it again.
 */
Test(l2fwd_operator, napi_set_threaded_is_applied_under_a_flood)
{
	const char *report = l2t_path("report.json");
	struct l2t_proc p = { .name = "l2fwd-sirq" };
	json_t *r, *ctx;
	uint64_t polls = 0, t0, t1;
	time_t end;
	int fd;

	start_flood(&p, report);
	fd = tel_connect();
	ctx = tel_call(fd, "/sirq/napi,0,0");
	cr_expect_str_eq(l2t_json_str(ctx, "mode"), "softirq");
	json_decref(ctx);

	r = tel_call(fd, "/sirq/napi_set,0,0,threaded=enabled");
	cr_assert(json_object_get(r, "error") == NULL && !json_is_null(r),
		  "napi_set refused under a flood: %s",
		  json_dumps(r, JSON_COMPACT));
	cr_expect_str_eq(l2t_json_str(r, "mode"), "threaded");
	cr_expect_gt(json_integer_value(json_object_get(r, "pid")), 0);
	json_decref(r);
	/* Its thread polls the flood: the library counts its polls. */
	end = time(NULL) + HANDOVER_DEADLINE_S;
	while (polls < THREAD_PACKETS / 64 && time(NULL) < end) {
		usleep(100 * 1000);
		ctx = tel_call(fd, "/sirq/napi,0,0");
		polls = (uint64_t)json_integer_value(json_object_get(ctx, "thread_polls"));
		json_decref(ctx);
	}
	cr_expect_geq(polls, THREAD_PACKETS / 64,
		      "napi/0-0 polled %" PRIu64 " times in %d s", polls,
		      HANDOVER_DEADLINE_S);

	r = tel_call(fd, "/sirq/napi_set,0,0,threaded=disabled");
	cr_assert(json_object_get(r, "error") == NULL, "back refused: %s",
		  json_dumps(r, JSON_COMPACT));
	cr_expect_str_eq(l2t_json_str(r, "mode"), "softirq");
	json_decref(r);
	/* NET_RX has it: the thread's count stops where it was. */
	ctx = tel_call(fd, "/sirq/napi,0,0");
	t0 = (uint64_t)json_integer_value(json_object_get(ctx, "thread_polls"));
	json_decref(ctx);
	usleep(300 * 1000);
	ctx = tel_call(fd, "/sirq/napi,0,0");
	t1 = (uint64_t)json_integer_value(json_object_get(ctx, "thread_polls"));
	json_decref(ctx);
	cr_expect_eq(t1, t0, "its thread polled %" PRIu64 " times after disabled",
		     t1 - t0);
	close(fd);
	stop(&p);
	l2t_expect_books_balance(report, "napi_set under a flood");
}

/*
 * The report's top-level policy is the one in force: after
 * /sirq/params_set,all,policy=mainline a report taken with SIGUSR1
 * said the configured "kicinski". The configured one keeps its own key.
 */
Test(l2fwd_operator, report_says_the_policy_in_force_after_params_set)
{
	const char *report = l2t_path("report.json");
	const char *configured = l2t_env("L2T_DEFAULT_POLICY");
	const char *other = strcmp(configured, "mainline") == 0 ? "ksoftirqd" :
		"mainline";
	struct l2t_proc p = { .name = "l2fwd-sirq" };
	char cmd[128];
	json_t *r, *j;
	int fd;

	start_flood(&p, report);
	fd = tel_connect();
	snprintf(cmd, sizeof(cmd), "/sirq/params_set,all,policy=%s", other);
	r = tel_call(fd, cmd);
	cr_assert(json_object_get(r, "error") == NULL, "%s: %s", cmd,
		  json_dumps(r, JSON_COMPACT));
	json_decref(r);
	close(fd);

	j = l2t_report_request(&p, report, START_DEADLINE_S);
	cr_expect_str_eq(l2t_json_str(j, "policy"), other);
	cr_expect_str_eq(l2t_json_str(j, "configured_policy"), configured);
	cr_expect_str_eq(l2t_json_str(json_array_get(json_object_get(j, "lcores"), 0),
				  "policy"), other);
	/* The PMD's drop counters beside the forwarder's, per port. */
	cr_expect(json_is_integer(json_object_get(l2t_report_port(j, 0), "imissed")));
	cr_expect(json_is_integer(json_object_get(l2t_report_port(j, 0), "rx_nombuf")));
	json_decref(j);
	stop(&p);
}

/*
 * The report's directory checked at start can still go during the run:
 * the report is not written, and the exit code says so (1), where it
 * said 0 after a full run. The message names the option and the cause.
 */
Test(l2fwd_operator, a_report_that_cannot_be_written_at_exit_exits_1)
{
	char dir[512], report[600], want[800];
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc p = { .name = "l2fwd-sirq" };
	int status;

	snprintf(dir, sizeof(dir), "%s", l2t_path("gone"));
	cr_assert(mkdir(dir, 0755) == 0 || errno == EEXIST);
	snprintf(report, sizeof(report), "%s/r.json", dir);
	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_null_flood_args(&a, "-l", "0", report);
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "2");
	l2t_proc_start(&p, "l2fwd-sirq", &a);
	l2t_proc_expect(&p, "lcore 0 forwards", START_DEADLINE_S);
	cr_assert(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
	status = l2t_proc_wait(&p, EXIT_DEADLINE_S);
	cr_expect(status == 1, "exit code %d with its report lost:\n%s", status,
		  l2t_app_lines(p.buf));
	snprintf(want, sizeof(want), "--report %s: No such file or directory",
		 report);
	cr_expect(strstr(p.buf, want) != NULL, "no '%s' in:\n%s", want,
		  l2t_app_lines(p.buf));
	l2t_proc_reap(&p);
}
