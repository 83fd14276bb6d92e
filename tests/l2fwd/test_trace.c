/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The sirq.* trace points tell the same story as the counters.
 *
 * l2fwd-sirq floods two net_null ports from two lcores for half a second
 * with EAL's --trace=sirq.*, saves the CTF trace at exit (SIGINT), and
 * babeltrace2 reads it back. Counted per lcore, every
 * kind of event must equal the report's counter of the same thing:
 *  - sirq.softirq.entry and .exit per vector and context: runs_inline /
 *    runs_worker of that vector;
 *  - sirq.pass.end per reason and context: pass_<reason>_<context>;
 *  - sirq.worker.wakeup per reason: wakeup_<reason>;
 *  - sirq.window.open per kind: window_<kind>;
 *  - sirq.window.override: window_overrides;
 *  - sirq.softirq.raise per vector: the latency samples of the vector
 *    (each run takes the stamp of the raise that made it pending), plus
 *    at most two stamps no run took: one dropped when the lcore stopped,
 *    one raised after that.
 * The app load beside the dispatcher makes need_resched deferrals, so
 * handlers run in both contexts and the kicinski windows open.
 *
 * The trace buffers are in discard mode and large enough for the run; a
 * full buffer would drop events and fails the test with that message,
 * not a miscount. Without babeltrace2 (Debian: babeltrace2) the test
 * exits 77, which meson shows as SKIP. $BABELTRACE2 names another
 * reader: Debian 13's babeltrace2 2.1.1 aborts on DPDK's CTF, and the
 * Debian 13 leg (scripts/test-debian.sh trixie) reads it with babeltrace 1.5.
 */

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "l2t.h"

/*
 * The flood, after both lcores started. Half a second of it here writes
 * about 12.5 MB of events into each sirqd's buffer (1.5 million events
 * in all, which babeltrace2 prints in about 2 s): TRACE_BUFSZ_MB leaves
 * room for a machine five times faster.
 */
#define FLOOD_MS 500
#define START_DEADLINE_S 10
#define STOP_DEADLINE_S 10
#define APP_LOAD "hold=2ms,period=10ms"
/*
 * Per thread that traces: each lcore, each sirqd, and EAL's interrupt
 * and multi-process threads, whose buffers EAL allocates at start.
 */
#define TRACE_BUFSZ_MB 64
/*
 * EAL takes the buffers from its heap first (then malloc): under
 * --no-huge, room for the four it allocates at start and the mbufs.
 */
#define TRACE_EAL_MEMORY_MB "512"
/*
 * A channel file is the stream header and the used part of the buffer;
 * discard mode refuses an event that would reach the end, so a file
 * within the largest event of the end may have refused some.
 */
#define TRACE_STREAM_HEADER_SZ 56
#define TRACE_EVENT_MAX_SZ 32

#define NB_LCORE_IDS 2		/* -l 0,1 */
#define NB_VECTORS 32
#define NB_CTX 2
#define NB_EXIT 6
#define NB_WAKE 6
#define NB_WINDOW 2
/* At most this many raises no run took: see the top of the file. */
#define RAISES_NOT_RUN_MAX 2

/* The report's names, in the order of the enums the events carry. */
static const char *const vector_names[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
	"SCHED", "HRTIMER", "RCU",
};
#define NB_NAMED_VECTORS (sizeof(vector_names) / sizeof(vector_names[0]))
static const char *const ctx_names[NB_CTX] = { "inline", "worker" };
static const char *const exit_names[NB_EXIT] = {
	"drained", "restart_limit", "time_limit", "need_resched", "lock_waiter",
	"stop",
};
static const char *const wake_names[NB_WAKE] = {
	"restart_limit", "time_limit", "need_resched", "handoff", "explicit", "raise",
};
static const char *const window_names[NB_WINDOW] = { "defer", "overload" };

struct trace_counts {
	uint64_t raise[NB_LCORE_IDS][NB_VECTORS];
	uint64_t entry[NB_LCORE_IDS][NB_VECTORS][NB_CTX];
	uint64_t exit[NB_LCORE_IDS][NB_VECTORS][NB_CTX];
	uint64_t pass_end[NB_LCORE_IDS][NB_EXIT][NB_CTX];
	uint64_t wakeup[NB_LCORE_IDS][NB_WAKE];
	uint64_t window_open[NB_LCORE_IDS][NB_WINDOW];
	uint64_t window_override[NB_LCORE_IDS];
	uint64_t events;
};

static char trace_dir[PATH_MAX];

static int
remove_entry(const char *path, const struct stat *st, int flag,
	     struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void
suite_fini(void)
{
	/* The trace is a directory of directories: l2t_cleanup() is flat. */
	if (trace_dir[0] != '\0' && getenv("L2T_KEEP") == NULL)
		nftw(trace_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	l2t_cleanup();
}

TestSuite(l2fwd_trace, .fini = suite_fini, .timeout = 120);

/* $BABELTRACE2, or babeltrace2 on $PATH; NULL if neither. */
static const char *
find_babeltrace2(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("BABELTRACE2"), *dirs = getenv("PATH");
	const char *p, *end;

	if (env != NULL && env[0] != '\0')
		return access(env, X_OK) == 0 ? env : NULL;
	for (p = dirs != NULL ? dirs : "/usr/bin:/bin"; *p != '\0'; p = end) {
		end = strchrnul(p, ':');
		snprintf(path, sizeof(path), "%.*s/babeltrace2", (int)(end - p), p);
		if (access(path, X_OK) == 0)
			return path;
		if (*end == ':')
			end++;
	}
	return NULL;
}

/*
 * "key = value" of the event's payload: the last { ... } of a line of
 * babeltrace2's text output. Integers come in their CTF base (hex).
 */
static bool
payload_u64(const char *line, const char *key, uint64_t *v)
{
	const char *payload = strrchr(line, '{'), *p;
	size_t n = strlen(key);
	char *end;

	if (payload == NULL)
		return false;
	for (p = payload; (p = strstr(p, key)) != NULL; p += n) {
		if ((p[-1] != ' ' && p[-1] != '{') || strncmp(p + n, " = ", 3) != 0)
			continue;
		errno = 0;
		*v = strtoull(p + n + 3, &end, 0);
		return errno == 0 && end != p + n + 3;
	}
	return false;
}

/* Count one line; false if it is a sirq event we cannot read. */
static bool
count_line(struct trace_counts *c, const char *line)
{
	const char *name = strstr(line, " sirq.");
	uint64_t cpu, vec = 0, ctx = 0, why = 0;
	char event[32];

	if (name == NULL || sscanf(name + 1, "%31[a-z_.]:", event) != 1)
		return true;
	c->events++;
	if (!payload_u64(line, "cpu", &cpu) || cpu >= NB_LCORE_IDS)
		return false;
	if (strcmp(event, "sirq.softirq.raise") == 0) {
		if (!payload_u64(line, "vec", &vec) || vec >= NB_VECTORS)
			return false;
		c->raise[cpu][vec]++;
	} else if (strcmp(event, "sirq.softirq.entry") == 0) {
		if (!payload_u64(line, "vec", &vec) || vec >= NB_VECTORS ||
		    !payload_u64(line, "ctx", &ctx) || ctx >= NB_CTX)
			return false;
		c->entry[cpu][vec][ctx]++;
	} else if (strcmp(event, "sirq.softirq.exit") == 0) {
		if (!payload_u64(line, "vec", &vec) || vec >= NB_VECTORS ||
		    !payload_u64(line, "ctx", &ctx) || ctx >= NB_CTX)
			return false;
		c->exit[cpu][vec][ctx]++;
	} else if (strcmp(event, "sirq.pass.end") == 0) {
		if (!payload_u64(line, "reason", &why) || why >= NB_EXIT ||
		    !payload_u64(line, "ctx", &ctx) || ctx >= NB_CTX)
			return false;
		c->pass_end[cpu][why][ctx]++;
	} else if (strcmp(event, "sirq.worker.wakeup") == 0) {
		if (!payload_u64(line, "reason", &why) || why >= NB_WAKE)
			return false;
		c->wakeup[cpu][why]++;
	} else if (strcmp(event, "sirq.window.open") == 0) {
		if (!payload_u64(line, "kind", &why) || why >= NB_WINDOW ||
		    !payload_u64(line, "end_ns", &vec))
			return false;
		c->window_open[cpu][why]++;
	} else if (strcmp(event, "sirq.window.override") == 0) {
		c->window_override[cpu]++;
	} else {
		return false;
	}
	return true;
}

/* babeltrace2 @dir, counted. */
static void
read_trace(const char *babeltrace2, const char *dir, struct trace_counts *c)
{
	char cmd[2 * PATH_MAX], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int status;

	snprintf(cmd, sizeof(cmd), "'%s' '%s'", babeltrace2, dir);
	f = popen(cmd, "r");
	cr_assert(f != NULL, "popen %s: %s", cmd, strerror(errno));
	while (getline(&line, &cap, f) > 0)
		cr_assert(count_line(c, line), "unexpected sirq event: %s", line);
	free(line);
	status = pclose(f);
	cr_assert(status == 0, "%s: exit status %d", cmd, status);
}

/*
 * The session directory EAL made under @dir (<prefix>-<date>), and no
 * channel file within one event of its buffer's end.
 */
static void
check_trace_saved(const char *dir, char *session, size_t len)
{
	const long long full = TRACE_STREAM_HEADER_SZ +
		(long long)TRACE_BUFSZ_MB * 1024 * 1024 - TRACE_EVENT_MAX_SZ;
	char path[PATH_MAX + 300];
	unsigned int files = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	d = opendir(dir);
	cr_assert(d != NULL, "no trace directory %s: %s", dir, strerror(errno));
	session[0] = '\0';
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, l2t_last_prefix(),
			    strlen(l2t_last_prefix())) == 0)
			cr_assert((size_t)snprintf(session, len, "%s/%s", dir,
						   e->d_name) < len);
	closedir(d);
	cr_assert(session[0] != '\0', "EAL saved no trace under %s", dir);

	d = opendir(session);
	cr_assert(d != NULL, "%s: %s", session, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "channel", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", session, e->d_name);
		cr_assert(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
		cr_assert(st.st_size < full, "%s: %lld bytes, its %d MB trace "
			  "buffer is full and events were dropped: raise "
			  "TRACE_BUFSZ_MB", path, (long long)st.st_size,
			  TRACE_BUFSZ_MB);
		files++;
	}
	closedir(d);
	cr_assert(files > 0, "no channel files in %s", session);
}

static json_t *
report_lcore(json_t *report, unsigned int lcore)
{
	json_t *lcores = json_object_get(json_object_get(report, "sirq"),
					 "lcores"), *l;
	size_t i;

	cr_assert(json_is_array(lcores), "report has no sirq.lcores[]");
	json_array_foreach(lcores, i, l)
		if (l2t_json_u64(l, "lcore") == lcore)
			return l;
	return NULL;
}

/* The events of lcore @lc against its counters in @jl. */
static void
compare_lcore(const struct trace_counts *c, unsigned int lc, json_t *jl)
{
	json_t *counters = json_object_get(jl, "counters");
	json_t *vectors = json_object_get(jl, "vectors");
	char key[64];
	unsigned int v, x, k;

	for (v = 0; v < NB_NAMED_VECTORS; v++) {
		json_t *jv = json_object_get(vectors, vector_names[v]);
		uint64_t samples;

		cr_assert(jv != NULL, "lcore %u: no vector %s", lc,
			  vector_names[v]);
		for (x = 0; x < NB_CTX; x++) {
			uint64_t runs;

			snprintf(key, sizeof(key), "runs_%s", ctx_names[x]);
			runs = l2t_json_u64(jv, key);
			cr_expect(c->entry[lc][v][x] == runs,
				  "lcore %u %s: %" PRIu64 " sirq.softirq.entry "
				  "ctx=%u, %s %" PRIu64, lc, vector_names[v],
				  c->entry[lc][v][x], x, key, runs);
			cr_expect(c->exit[lc][v][x] == runs,
				  "lcore %u %s: %" PRIu64 " sirq.softirq.exit "
				  "ctx=%u, %s %" PRIu64, lc, vector_names[v],
				  c->exit[lc][v][x], x, key, runs);
		}
		samples = l2t_json_u64(json_object_get(jv, "latency"),
				       "samples");
		cr_expect(c->raise[lc][v] >= samples &&
			  c->raise[lc][v] <= samples + RAISES_NOT_RUN_MAX,
			  "lcore %u %s: %" PRIu64 " sirq.softirq.raise, "
			  "%" PRIu64 " latency samples", lc, vector_names[v],
			  c->raise[lc][v], samples);
	}
	for (k = 0; k < NB_EXIT; k++)
		for (x = 0; x < NB_CTX; x++) {
			uint64_t n;

			snprintf(key, sizeof(key), "pass_%s_%s", exit_names[k],
				 ctx_names[x]);
			n = l2t_json_u64(counters, key);
			cr_expect(c->pass_end[lc][k][x] == n,
				  "lcore %u: %" PRIu64 " sirq.pass.end reason=%u "
				  "ctx=%u, %s %" PRIu64, lc, c->pass_end[lc][k][x],
				  k, x, key, n);
		}
	for (k = 0; k < NB_WAKE; k++) {
		uint64_t n;

		snprintf(key, sizeof(key), "wakeup_%s", wake_names[k]);
		n = l2t_json_u64(counters, key);
		cr_expect(c->wakeup[lc][k] == n, "lcore %u: %" PRIu64
			  " sirq.worker.wakeup reason=%u, %s %" PRIu64, lc,
			  c->wakeup[lc][k], k, key, n);
	}
	for (k = 0; k < NB_WINDOW; k++) {
		uint64_t n;

		snprintf(key, sizeof(key), "window_%s", window_names[k]);
		n = l2t_json_u64(counters, key);
		cr_expect(c->window_open[lc][k] == n, "lcore %u: %" PRIu64
			  " sirq.window.open kind=%u, %s %" PRIu64, lc,
			  c->window_open[lc][k], k, key, n);
	}
	cr_expect(c->window_override[lc] ==
		  l2t_json_u64(counters, "window_overrides"),
		  "lcore %u: %" PRIu64 " sirq.window.override, "
		  "window_overrides %" PRIu64, lc, c->window_override[lc],
		  l2t_json_u64(counters, "window_overrides"));
}

Test(l2fwd_trace, event_counts_equal_the_report_counters)
{
	const char *babeltrace2 = find_babeltrace2();
	const char *report = l2t_path("report.json");
	struct trace_counts *c = calloc(1, sizeof(*c));
	struct l2t_argv a = { .argc = 0 };
	struct l2t_proc p = { .name = "l2fwd-sirq" };
	char session[PATH_MAX];
	unsigned int lc;
	int status;
	json_t *j;

	cr_assert(babeltrace2 != NULL);	/* main() skips without it */
	cr_assert(c != NULL);
	snprintf(trace_dir, sizeof(trace_dir), "%s", l2t_path("trace"));

	l2t_arg(&a, "%s", l2t_env("L2T_STDBUF"));
	l2t_arg(&a, "-oL");
	l2t_eal_args_lcores(&a, l2t_env("L2FWD_SIRQ"), "-l", "0,1");
	/* The last -m counts. */
	l2t_arg(&a, "-m");
	l2t_arg(&a, TRACE_EAL_MEMORY_MB);
	l2t_arg(&a, "--vdev=net_null0");
	l2t_arg(&a, "--vdev=net_null1");
	l2t_arg(&a, "--trace=sirq.*");
	l2t_arg(&a, "--trace-dir=%s", trace_dir);
	l2t_arg(&a, "--trace-bufsz=%dM", TRACE_BUFSZ_MB);
	l2t_arg(&a, "--trace-mode=discard");
	l2t_arg(&a, "--");
	l2t_arg(&a, "-T");
	l2t_arg(&a, "0");
	l2t_arg(&a, "--report");
	l2t_arg(&a, "%s", report);
	l2t_arg(&a, "--app-load");
	l2t_arg(&a, APP_LOAD);
	l2t_proc_start(&p, "l2fwd-sirq", &a);
	l2t_proc_expect(&p, "lcore 1 forwards", START_DEADLINE_S);
	usleep(FLOOD_MS * 1000);
	cr_assert(kill(p.pid, SIGINT) == 0);
	status = l2t_proc_wait(&p, STOP_DEADLINE_S);
	cr_assert(status == 0, "exit code %d:\n%s", status,
		  l2t_app_lines(p.buf));
	l2t_proc_reap(&p);

	check_trace_saved(trace_dir, session, sizeof(session));
	read_trace(babeltrace2, session, c);
	cr_log_info("%" PRIu64 " sirq events in %s", c->events, session);

	j = l2t_report_load(report);
	for (lc = 0; lc < NB_LCORE_IDS; lc++) {
		json_t *jl = report_lcore(j, lc);

		cr_assert(jl != NULL, "report has no lcore %u", lc);
		cr_expect(c->entry[lc][3][0] + c->entry[lc][3][1] > 0,
			  "lcore %u: no NET_RX run traced", lc);
		compare_lcore(c, lc, jl);
	}
	json_decref(j);
	free(c);
}

/* meson's SKIP (77) when there is nothing to read the trace with. */
int
main(int argc, char **argv)
{
	struct criterion_test_set *tests;
	int ret = 0;

	if (find_babeltrace2() == NULL) {
		printf("SKIP: babeltrace2 not found (Debian: apt-get install "
		       "babeltrace2); the sirq.* trace is not checked\n");
		return 77;
	}
	tests = criterion_initialize();
	if (criterion_handle_args(argc, argv, true))
		ret = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return ret;
}
