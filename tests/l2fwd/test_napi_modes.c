/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The per-NAPI modes of l2fwd-sirq ([napi]: --napi-threaded,
 * --napi-defer-hard-irqs with --gro-flush-timeout-us,
 * --irq-suspend-timeout-us) and its epoll-like application (--busy-poll,
 * --busy-poll-us, --busy-poll-budget, --prefer-busy-poll) under a flood:
 * two net_null ports produce packets without end, on lcore 0, under the
 * build's default policy.
 *
 * In both modes, every combination must stop at --duration and on SIGINT
 * with exit code 0, forward both ways, and give every mbuf back to its
 * pool. A NAPI thread or a busy poller that always has work must not keep
 * the stop waiting. A deferral without its timeout is refused when the
 * lcore is created, naming both values, and the refusal leaves nothing
 * behind.
 */

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "l2t.h"

#define DURATION_S 1
/*
 * How long a one-second run may take before it counts as not stopping:
 * EAL start and stop take about a second here; ten times the run is a
 * hang detector, not a speed requirement (as in test_run.c).
 */
#define STOP_DEADLINE_S 10
/*
 * The report's elapsed_s past --duration: a starvation detector, not a
 * speed requirement. The control timer that ends the run fires every
 * 100 ms (CONTROL_PERIOD_MS) and the stop drains a few rings; 2 s is
 * twenty periods. When the NAPI threads kept the lock from the TIMER
 * vector, --duration 1 ran 2.6 to 12.9 s.
 */
#define LATE_STOP_S 2.0
/* Long enough for the flood to be under way at every thread. */
#define FLOOD_BEFORE_SIGINT_MS 1000
#define START_DEADLINE_S 10
#define SIGINT_EXIT_DEADLINE_S 10
#define OPTS_LEN 192

struct napi_case {
	char mode[8];
	char opts[OPTS_LEN];	/* l2fwd-sirq options, blank-separated */
};

static void
suite_fini(void)
{
	l2t_cleanup();
}

TestSuite(l2fwd_napi_modes, .fini = suite_fini, .timeout = 60);

/* Append the blank-separated options of @opts. */
static void
add_opts(struct l2t_argv *a, const char *opts)
{
	char buf[OPTS_LEN], *o, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", opts);
	for (o = strtok_r(buf, " ", &save); o != NULL;
	     o = strtok_r(NULL, " ", &save))
		l2t_arg(a, "%s", o);
}

/*
 * l2fwd-sirq on two net_null ports in @c's mode with its options, on
 * lcore 0, its report to @report; @label gets "--mode M OPTS".
 */
static void
napi_flood_args(struct l2t_argv *a, const struct napi_case *c,
		const char *report, char *label, size_t len)
{
	l2t_null_flood_args(a, "-l", "0", report);
	l2t_arg(a, "--mode");
	l2t_arg(a, "%s", c->mode);
	add_opts(a, c->opts);
	snprintf(label, len, "--mode %s %s", c->mode, c->opts);
}

#define NAPI_THREADED "--napi-threaded"
#define NAPI_DEFERRED "--napi-defer-hard-irqs 100 --gro-flush-timeout-us 20"
#define BUSY_POLL_SUSPENDED "--busy-poll --prefer-busy-poll " \
	"--busy-poll-budget 64 --napi-defer-hard-irqs 100 " \
	"--gro-flush-timeout-us 20 --irq-suspend-timeout-us 20000"
#define BUSY_POLL_SPINNING "--busy-poll --busy-poll-us 1000 --prefer-busy-poll"

ParameterizedTestParameters(l2fwd_napi_modes,
			    flood_stops_at_duration_forwards_both_ways_and_leaks_no_mbuf)
{
	static struct napi_case cases[] = {
		{ "irq", NAPI_THREADED }, { "irq", NAPI_DEFERRED },
		{ "irq", BUSY_POLL_SUSPENDED }, { "irq", BUSY_POLL_SPINNING },
		{ "poll", NAPI_THREADED }, { "poll", NAPI_DEFERRED },
		{ "poll", BUSY_POLL_SUSPENDED }, { "poll", BUSY_POLL_SPINNING },
	};

	return cr_make_param_array(struct napi_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct napi_case *c, l2fwd_napi_modes,
		  flood_stops_at_duration_forwards_both_ways_and_leaks_no_mbuf)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;
	char label[256];
	unsigned int p;
	double elapsed;
	json_t *j;

	napi_flood_args(&a, c, report, label, sizeof(label));
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "%d", DURATION_S);
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	/* Stopped by our SIGINT, it still reports: judge the books too. */
	cr_expect(!r.timed_out, "%s: --duration %d did not stop it within "
		  "%d s (SIGINT did)", label, DURATION_S, STOP_DEADLINE_S);
	cr_assert(r.status == 0, "%s: exit code %d:\n%s%s", label, r.status,
		  l2t_app_lines(r.out), l2t_app_lines(r.err));
	l2t_result_free(&r);

	j = l2t_report_load(report);
	for (p = 0; p < 2; p++) {
		json_t *jp = l2t_report_port(j, p);

		cr_expect(l2t_json_u64(jp, "rx") > 0,
			  "%s: port %u received nothing", label, p);
		cr_expect(l2t_json_u64(jp, "tx") > 0,
			  "%s: port %u sent nothing", label, p);
	}
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0,
		  "%s: mbufs_in_use %" PRIu64, label,
		  l2t_json_u64(j, "mbufs_in_use"));
	elapsed = json_number_value(json_object_get(j, "elapsed_s"));
	cr_expect(elapsed <= DURATION_S + LATE_STOP_S,
		  "%s: --duration %d, but the report says the run lasted "
		  "%.3f s", label, DURATION_S, elapsed);
	json_decref(j);

	l2t_expect_books_balance(report, label);
}

/*
 * SIGINT in the middle of a flood, without --duration: a NAPI thread, or
 * a busy poller, that always has work must not keep the stop waiting (an
 * earlier version hung there). Exit code 0 within a generous deadline,
 * "signal 2, stopping", and every mbuf back in its pool.
 */
ParameterizedTestParameters(l2fwd_napi_modes,
			    sigint_under_a_flood_stops_it_with_no_mbuf_leaked)
{
	static struct napi_case cases[] = {
		{ "irq", NAPI_THREADED }, { "irq", "--busy-poll" },
		{ "poll", NAPI_THREADED },
	};

	return cr_make_param_array(struct napi_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct napi_case *c, l2fwd_napi_modes,
		  sigint_under_a_flood_stops_it_with_no_mbuf_leaked)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc p = { .name = "l2fwd-sirq" };
	char label[256];
	int status;
	json_t *j;

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	napi_flood_args(&a, c, report, label, sizeof(label));
	l2t_proc_start(&p, "l2fwd-sirq", &a);
	l2t_proc_expect(&p, "lcore 0 forwards", START_DEADLINE_S);
	usleep(FLOOD_BEFORE_SIGINT_MS * 1000);

	cr_assert(kill(p.pid, SIGINT) == 0);
	status = l2t_proc_wait(&p, SIGINT_EXIT_DEADLINE_S);
	cr_assert(status == 0, "%s: exit code %d after SIGINT:\n%s", label,
		  status, l2t_app_lines(p.buf));
	cr_expect(strstr(p.buf, "signal 2, stopping") != NULL,
		  "%s: no 'signal 2, stopping' in:\n%s", label,
		  l2t_app_lines(p.buf));
	l2t_proc_reap(&p);

	j = l2t_report_load(report);
	cr_expect(l2t_json_u64(j, "mbufs_in_use") == 0,
		  "%s: mbufs_in_use %" PRIu64 " after SIGINT", label,
		  l2t_json_u64(j, "mbufs_in_use"));
	json_decref(j);
	l2t_expect_books_balance(report, label);
}

/*
 * A deferral without its timeout is a usage error, refused before EAL
 * starts (app_common_check()): exit code 2, one line naming both
 * options and the value given, no forwarding, no report.
 */
Test(l2fwd_napi_modes, napi_defer_hard_irqs_without_a_timeout_is_refused_naming_both)
{
	const char *report = l2t_path("report.json");
	struct l2t_argv a = { .argc = 0 };
	struct l2t_result r;
	struct stat st;

	l2t_null_flood_args(&a, "-l", "0", report);
	l2t_arg(&a, "--napi-defer-hard-irqs");
	l2t_arg(&a, "5");
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "%d", DURATION_S);
	l2t_run_for(&a, STOP_DEADLINE_S, &r);
	cr_expect(!r.timed_out, "refused, it did not end within %d s",
		  STOP_DEADLINE_S);
	cr_expect(r.status == 2,
		  "--napi-defer-hard-irqs 5 alone: exit code %d, not 2 (usage)",
		  r.status);
	cr_expect(strstr(r.err, "--napi-defer-hard-irqs 5") != NULL &&
		  strstr(r.err, "--gro-flush-timeout-us") != NULL,
		  "the refusal does not name both options:\n%s",
		  l2t_app_lines(r.err));
	cr_expect(strstr(r.err, "EAL:") == NULL && strstr(r.out, "EAL:") == NULL,
		  "EAL started before the refusal:\n%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "forwards") == NULL, "forwarding started:\n%s",
		  l2t_app_lines(r.out));
	cr_expect(stat(report, &st) != 0, "a report was written");
	l2t_result_free(&r);
}

/*
 * The same refusal under valgrind, which meson finds (SKIP without it):
 * no block lost from libsirq or the application's code, and standard
 * input, output and error still open at exit. The lost blocks of DPDK's
 * own drivers (mlx5's constructors, EAL's threads) are not ours: a
 * record counts when one of its frames is in libsirq or in the binary,
 * other than main() and app_start(), which call rte_eal_init().
 */
static bool
valgrind_record_is_ours(const char *rec, size_t len, const char *binary)
{
	const char *line = rec, *end = rec + len;
	char in_binary[600];

	snprintf(in_binary, sizeof(in_binary), "(in %s)", binary);
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl != NULL ? (size_t)(nl - line) : (size_t)(end - line);
		char buf[1024];

		snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
		line += n + 1;
		/* Objects, then functions and files when there is debug info. */
		if (strstr(buf, "libsirq") != NULL ||
		    strstr(buf, "sirq_") != NULL ||
		    strstr(buf, "l2fwd_") != NULL)
			return true;
		if (strstr(buf, in_binary) != NULL &&
		    strstr(buf, ": main (") == NULL &&
		    strstr(buf, ": app_start (") == NULL)
			return true;
	}
	return false;
}

/* The definitely lost records of @log that are ours, for messages. */
static void
valgrind_our_leaks(const char *log, const char *binary, char *out, size_t len)
{
	const char *rec = log;
	size_t n = 0;

	out[0] = '\0';
	while ((rec = strstr(rec, "are definitely lost in loss record")) != NULL) {
		/* A record ends at its blank "==PID== " line. */
		const char *start = rec, *stop = strstr(rec, "== \n");

		while (start > log && start[-1] != '\n')
			start--;
		if (stop == NULL)
			stop = rec + strlen(rec);
		if (valgrind_record_is_ours(start, (size_t)(stop - start),
					    binary) && n + 1 < len) {
			snprintf(out + n, len - n, "%.*s\n",
				 (int)(stop - start), start);
			n = strlen(out);
		}
		rec = stop;
	}
}

struct refusal_case {
	char opts[OPTS_LEN];
};

ParameterizedTestParameters(l2fwd_napi_modes,
			    the_refusal_at_lcore_creation_leaks_nothing_under_valgrind)
{
	/*
	 * The lcore is refused by sirq_lcore_create() (a lent priority not
	 * below the dispatcher's), after EAL and the ports: the clean-up
	 * path. The busy pollers are set up after the lcore: none started,
	 * and none may be freed (a static entry's fd 0 is standard input).
	 */
	static struct refusal_case cases[] = {
		{ "--mode irq --worker-boost 60 --irq-priority 50" },
		{ "--mode irq --worker-boost 60 --irq-priority 50 --busy-poll" },
	};

	return cr_make_param_array(struct refusal_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct refusal_case *c, l2fwd_napi_modes,
		  the_refusal_at_lcore_creation_leaks_nothing_under_valgrind)
{
	const char *valgrind = getenv("L2T_VALGRIND");
	const char *report = l2t_path("report.json");
	char log_path[512], leaks[8192], *log;
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc p;
	const char *fds;
	unsigned int open_fds, std_fds;
	int status;
	FILE *f;
	long size;

	if (valgrind == NULL || valgrind[0] == '\0')
		cr_skip_test("valgrind not found by meson, or a sanitizer build");
	snprintf(log_path, sizeof(log_path), "%s", l2t_path("valgrind.log"));
	l2t_arg(&a, "%s", valgrind);
	l2t_arg(&a, "--leak-check=full");
	l2t_arg(&a, "--track-fds=yes");
	l2t_arg(&a, "--log-file=%s", log_path);
	l2t_null_flood_args(&a, "-l", "0", report);
	/* l2t_null_flood_args() starts with the binary: it follows valgrind's. */
	add_opts(&a, c->opts);
	l2t_arg(&a, "--duration");
	l2t_arg(&a, "%d", DURATION_S);
	/* Started as a l2t_proc: its stdin is a pipe, open from the start. */
	l2t_proc_start(&p, "valgrind l2fwd-sirq", &a);
	status = l2t_proc_wait(&p, 6 * STOP_DEADLINE_S);
	cr_expect(status != 0 && status < 128, "%s under valgrind: exit "
		  "code %d:\n%s", c->opts, status, l2t_app_lines(p.buf));
	l2t_proc_reap(&p);

	f = fopen(log_path, "r");
	cr_assert(f != NULL, "no valgrind log %s", log_path);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	log = calloc(1, (size_t)size + 1);
	cr_assert(log != NULL && fread(log, 1, (size_t)size, f) == (size_t)size);
	fclose(f);

	valgrind_our_leaks(log, l2t_env("L2FWD_SIRQ"), leaks, sizeof(leaks));
	cr_expect(leaks[0] == '\0', "%s: blocks lost by libsirq or "
		  "l2fwd-sirq:\n%s", c->opts, leaks);
	fds = strstr(log, "FILE DESCRIPTORS: ");
	cr_assert(fds != NULL, "no FILE DESCRIPTORS line in %s", log_path);
	cr_assert(sscanf(fds, "FILE DESCRIPTORS: %u open (%u std)", &open_fds,
			 &std_fds) == 2, "cannot read: %.60s", fds);
	cr_expect(std_fds == 3, "%s: %u of stdin, stdout and stderr open at "
		  "exit: the refused run closed a descriptor it does not own",
		  c->opts, std_fds);
	free(log);
}
