/* SPDX-License-Identifier: BSD-3-Clause */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sched.h>
#include <strings.h>

#include <rte_cfgfile.h>
#include <rte_common.h>
#include <rte_version.h>

#include "app_opts.h"

#define NS_PER_US UINT64_C(1000)
#define MAX_OPTS 96
#define CFG_MAX_SECTIONS 16

#define COMMON(field) offsetof(struct app_common, field)
#define LCORE(field) offsetof(struct app_common, lcore.field)
#define PARAM(field) offsetof(struct app_common, lcore.params.field)
/* min and max of an option that sets a library tunable: opt_bounds(). */
#define LIB 0

static int
parse_app_load(void *conf, const char *value, char *err, size_t len)
{
	struct app_common *c = conf;

	return app_load_parse(value, &c->load, err, len);
}

/* The kernel's vector names (SIRQ_HI..SIRQ_RCU), for the options. */
static const char *const kernel_vectors[] = {
	"hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet",
	"sched", "hrtimer", "rcu",
};

/* A whole number 0..UINT32_MAX of @s, up to @stop (or the end). */
static int
parse_u32(const char *s, char stop, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || v > UINT32_MAX || *end != stop)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * CLASS of --softirq-thread-sched into @a: other | fair[:slice=US] |
 * fifo:PRIO | rr:PRIO | deadline:RUNTIME/PERIOD[/DEADLINE] (us). The
 * ranges are the library's (sirq_thread_attr_check()).
 */
static int
parse_thread_class(char *cls, const char *vec, struct sirq_thread_attr *a,
		   char *err, size_t len)
{
	char *colon = strchr(cls, ':'), *arg = NULL, *slash;
	char why[256];
	long v;

	memset(a, 0, sizeof(*a));
	if (colon != NULL) {
		*colon = '\0';
		arg = colon + 1;
	}
	if (strcmp(cls, "other") == 0 || strcmp(cls, "fair") == 0) {
		a->policy = SCHED_OTHER;
		if (arg != NULL &&
		    (strncmp(arg, "slice=", 6) != 0 ||
		     parse_u32(arg + 6, '\0', &a->slice_us) != 0)) {
			snprintf(err, len, "--softirq-thread-sched: %s=%s: '%s' is not slice=US", vec, cls, arg);
			return -EINVAL;
		}
	} else if (strcmp(cls, "fifo") == 0 || strcmp(cls, "rr") == 0) {
		char *end;

		a->policy = strcmp(cls, "fifo") == 0 ? SCHED_FIFO : SCHED_RR;
		errno = 0;
		v = arg == NULL ? 0 : strtol(arg, &end, 10);
		if (arg == NULL || *arg == '\0' || *end != '\0' || errno != 0) {
			snprintf(err, len, "--softirq-thread-sched: bad priority '%s' for %s (1..99)",
				 arg == NULL ? "" : arg, vec);
			return -EINVAL;
		}
		a->priority = v > 1000 ? 1000 : v < -1000 ? -1000 : (int)v;
	} else if (strcmp(cls, "deadline") == 0) {
		a->policy = SCHED_DEADLINE;
		slash = arg == NULL ? NULL : strchr(arg, '/');
		if (slash == NULL || parse_u32(arg, '/', &a->runtime_us) != 0 ||
		    (strchr(slash + 1, '/') == NULL ?
		     parse_u32(slash + 1, '\0', &a->period_us) :
		     parse_u32(slash + 1, '/', &a->period_us) != 0 ||
		     parse_u32(strchr(slash + 1, '/') + 1, '\0',
			       &a->deadline_us)) != 0) {
			snprintf(err, len, "--softirq-thread-sched: %s=deadline:%s is not deadline:RUNTIME/PERIOD[/DEADLINE] (us)",
				 vec, arg == NULL ? "" : arg);
			return -EINVAL;
		}
	} else {
		snprintf(err, len, "--softirq-thread-sched: unknown class '%s' for %s (other, fair:slice=US, fifo:PRIO, rr:PRIO, deadline:RUNTIME/PERIOD[/DEADLINE])",
			 cls, vec);
		return -EINVAL;
	}
	if (sirq_thread_attr_check(a, why, sizeof(why)) != 0) {
		snprintf(err, len, "--softirq-thread-sched: %s: %s", vec, why);
		return -EINVAL;
	}
	return 0;
}

/*
 * --softirq-thread-sched VEC=CLASS,...: VEC a kernel vector's name
 * (timer, net_rx, ...) or a number; CLASS as parse_thread_class() takes.
 */
static int
parse_thread_sched(void *conf, const char *value, char *err, size_t len)
{
	struct app_common *c = conf;
	char buf[APP_STR_LEN], *save = NULL, *item;
	unsigned int n = 0;

	if (strlen(value) >= sizeof(buf)) {
		snprintf(err, len, "--softirq-thread-sched: too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", value);
	if (strcmp(buf, "default") == 0) {
		c->nb_thread_sched = 0;
		return 0;
	}
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		struct app_thread_sched *t = &c->thread_sched[n];
		char *eq = strchr(item, '='), *end;
		long v;
		size_t i;

		if (n == APP_MAX_THREAD_SCHED) {
			snprintf(err, len, "--softirq-thread-sched: more than %d vectors", APP_MAX_THREAD_SCHED);
			return -EINVAL;
		}
		if (eq == NULL) {
			snprintf(err, len, "--softirq-thread-sched: '%s' is not VEC=CLASS", item);
			return -EINVAL;
		}
		*eq = '\0';
		for (i = 0; i < RTE_DIM(kernel_vectors); i++)
			if (strcasecmp(item, kernel_vectors[i]) == 0)
				break;
		if (i < RTE_DIM(kernel_vectors)) {
			t->vec = (unsigned int)i;
		} else {
			errno = 0;
			v = strtol(item, &end, 10);
			if (*item == '\0' || *end != '\0' || errno != 0 || v < 0 ||
			    v >= SIRQ_MAX_VECTORS) {
				snprintf(err, len, "--softirq-thread-sched: unknown vector '%s' (hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu, or 0..%d)",
					 item, SIRQ_MAX_VECTORS - 1);
				return -EINVAL;
			}
			t->vec = (unsigned int)v;
		}
		if (parse_thread_class(eq + 1, item, &t->attr, err, len) != 0)
			return -EINVAL;
		n++;
	}
	c->nb_thread_sched = n;
	return 0;
}

int
app_thread_sched_apply(const char *prog, const struct app_common *c,
		       struct sirq_lcore *lc)
{
	unsigned int i;

	for (i = 0; i < c->nb_thread_sched; i++) {
		const struct app_thread_sched *t = &c->thread_sched[i];

		if (sirq_lcore_thread_attr(lc, t->vec, &t->attr) != 0) {
			fprintf(stderr, "%s: --softirq-thread-sched: vector %u refused\n",
				prog, t->vec);
			return -1;
		}
	}
	return 0;
}

const struct app_opt app_common_opts[] = {
	{ "config", 0, "run", APP_OPT_STRING, COMMON(config_path), 0, 0,
	  "FILE", "read options from an INI file; the command line overrides it (unset: built-in defaults)",
	  NULL, NULL },
	{ "preset", 0, "run", APP_OPT_STRING, COMMON(preset), 0, 0,
	  "NAME", "read NAME.ini of the presets directory (listed below) first; --config and the command line override it (unset: no preset)",
	  NULL, NULL },
	{ "report", 0, "run", APP_OPT_STRING, COMMON(report_path), 0, 0,
	  "FILE", "write the JSON report here at exit and on SIGUSR1 (unset: stdout at exit)",
	  NULL, NULL },
	{ "duration", 0, "run", APP_OPT_U32, COMMON(duration_s), 0, UINT32_MAX,
	  "S", "stop after S seconds; 0 runs until SIGINT/SIGTERM", NULL, NULL },
	{ "app-load", 0, "run", APP_OPT_CUSTOM, 0, 0, 0, "SPEC",
	  "a process sharing each forwarding lcore: hold=10ms,period=50ms[,random][,threads=3][,nice=0][,slice=3ms][,chunk=50us][,seed=1], or off",
	  parse_app_load, "off" },
	{ "help", 'h', "run", APP_OPT_FLAG_ON, COMMON(help), 0, 0, NULL,
	  "this text", NULL, NULL },
	{ "version", 0, "run", APP_OPT_FLAG_ON, COMMON(version), 0, 0, NULL,
	  "the program's, libsirq's and DPDK's versions", NULL, NULL },
	{ "policy", 0, "sirq", APP_OPT_POLICY, PARAM(policy), 0, 0,
	  "NAME", "mainline | ksoftirqd | kicinski | deferred (the overload policies) | rt | pushdown | pushdown-locked (the execution models: softirq threads the scheduler runs)", NULL, NULL },
	{ "softirq-thread-sched", 0, "sirq", APP_OPT_CUSTOM, 0, 0, 0,
	  "VEC=CLASS,...",
	  "rt and pushdown: the class of the softirq thread led by VEC (timer, net_rx, ... or a number): other (fair), fair:slice=100..100000 (us, EEVDF, Linux 6.12+), fifo:1..99, rr:1..99 or deadline:RUNTIME/PERIOD[/DEADLINE] (us; its CPU needs an exclusive cpuset, or kernel.sched_rt_runtime_us=-1), e.g. net_rx=fifo:10 or net_rx=deadline:500/4000 (default: ktimers fifo:1, the others other); a real-time thread under a flood keeps the CPU from everything below it",
	  parse_thread_sched, "default" },
	{ "mode", 0, "sirq", APP_OPT_MODE, LCORE(mode), 0, 0, "MODE",
	  "poll (busy-poll) | irq (SCHED_FIFO, sleeps until Rx or a tick)",
	  NULL, NULL },
	{ "max-restart", 0, "sirq", APP_OPT_U32, PARAM(max_restart), LIB, LIB,
	  "N", "passes of the softirq loop before deferring (MAX_SOFTIRQ_RESTART)",
	  NULL, NULL },
	{ "max-time-us", 0, "sirq", APP_OPT_US, PARAM(max_time_ns), LIB, LIB,
	  "US", "time of the softirq loop before deferring (MAX_SOFTIRQ_TIME)",
	  NULL, NULL },
	{ "defer-window-us", 0, "sirq", APP_OPT_US, PARAM(defer_window_ns), LIB,
	  LIB, "US", "kicinski: worker window after a need_resched deferral",
	  NULL, NULL },
	{ "overload-window-us", 0, "sirq", APP_OPT_US, PARAM(overload_window_ns),
	  LIB, LIB, "US", "kicinski: worker window after the loop ran out",
	  NULL, NULL },
	{ "tick-hz", 0, "sirq", APP_OPT_U32, PARAM(tick_hz), LIB, LIB, "HZ",
	  "jiffies of 1/N s, and irq mode's tick (HZ); 0: TSC-exact time, a decision at every look", NULL, NULL },
	{ "expedited-mask", 0, "sirq", APP_OPT_HEX32, PARAM(expedited_mask),
	  LIB, LIB, "MASK", "vectors that never wait for the worker (SOFTIRQ_NOW_MASK)",
	  NULL, NULL },
	{ "stall-threshold-us", 0, "sirq", APP_OPT_US, PARAM(stall_threshold_ns),
	  LIB, LIB, "US", "raise-to-run latency counted as a stall", NULL, NULL },
	{ "napi-weight", 0, "sirq", APP_OPT_U16, LCORE(napi_weight), LIB, LIB,
	  "N", "packets per queue per NAPI poll", NULL, NULL },
	{ "netdev-budget", 0, "sirq", APP_OPT_U16, LCORE(netdev_budget), LIB,
	  LIB, "N", "packets per NET_RX run", NULL, NULL },
	{ "netdev-budget-us", 0, "sirq", APP_OPT_U32, LCORE(netdev_budget_us),
	  LIB, LIB, "US", "time per NET_RX run", NULL, NULL },
	{ "worker-cpus", 0, "sirq", APP_OPT_STRING, COMMON(worker_cpus), 0, 0,
	  "LIST", "CPUs of each sirqd, e.g. 2-3,6 (unset: the CPUs of its lcore)",
	  NULL, NULL },
	{ "worker-boost", 0, "sirq", APP_OPT_INT, LCORE(worker_boost_priority),
	  0, 99, "PRIO", "SCHED_FIFO priority lent to a sirqd preempted in a pass; 0: never",
	  NULL, NULL },
	/*
	 * Was rte_thread_register() for sirqd: a mempool cache of its own at
	 * the price of DPDK multi-process. Kept so that old command lines
	 * and INI files still run.
	 */
	{ "worker-lcore-id", 0, "sirq", APP_OPT_DEPRECATED, 0, 0, 0, NULL,
	  "deprecated, does nothing: sirqd now runs as the lcore it serves, with its mempool cache, by default",
	  NULL, NULL },
	{ "irq-tick-us", 0, "sirq", APP_OPT_U32, LCORE(irq_tick_us), 1, 1000000,
	  "US", "irq mode: longest sleep without an interrupt", NULL, NULL },
	{ "irq-priority", 0, "sirq", APP_OPT_INT, LCORE(irq_priority), 1, 99,
	  "PRIO", "irq mode: SCHED_FIFO priority of the dispatcher", NULL, NULL },
	{ "napi-defer-hard-irqs", 0, "napi", APP_OPT_U32,
	  LCORE(napi.defer_hard_irqs), 0, 1000000, "N",
	  "every Rx queue: empty polls with the interrupt left off, re-polled every --gro-flush-timeout-us (napi_defer_hard_irqs)",
	  NULL, NULL },
	{ "gro-flush-timeout-us", 0, "napi", APP_OPT_US,
	  LCORE(napi.gro_flush_timeout_ns), 0, 1000000, "US",
	  "every Rx queue: the deferred re-poll's delay (gro_flush_timeout)",
	  NULL, NULL },
	{ "irq-suspend-timeout-us", 0, "napi", APP_OPT_US,
	  LCORE(napi.irq_suspend_timeout_ns), 0, 1000000, "US",
	  "every Rx queue: interrupts stay off this long past each busy poll that found packets (irq_suspend_timeout); 0: none",
	  NULL, NULL },
	{ "napi-threaded", 0, "napi", APP_OPT_FLAG_U8, LCORE(napi.threaded), 0,
	  SIRQ_NAPI_THREADED_ENABLED, NULL,
	  "every Rx queue polled by its own thread napi/LCORE-ID, not by NET_RX (threaded NAPI); the same as --napi-threaded-mode enabled",
	  NULL, NULL },
	{ "napi-threaded-mode", 0, "napi", APP_OPT_NAPI_THREADED,
	  LCORE(napi.threaded), 0, 0, "MODE",
	  "every Rx queue: disabled (NET_RX polls it) | enabled (threaded NAPI) | busy-poll (its thread polls it without end, interrupt never re-armed: threaded busy polling, Linux 6.19)",
	  NULL, NULL },
};

const size_t app_common_nb_opts = RTE_DIM(app_common_opts);

void
app_common_defaults(struct app_common *c)
{
	memset(c, 0, sizeof(*c));
	sirq_lcore_conf_default(&c->lcore);
	app_load_spec_default(&c->load);
}

/* "0-1,4" for a set of CPUs, for messages. */
static void
cpus_text(const cpu_set_t *set, char *buf, size_t len)
{
	size_t at = 0;
	int cpu, first;

	buf[0] = '\0';
	for (cpu = 0; cpu < CPU_SETSIZE && at < len; cpu++) {
		if (!CPU_ISSET(cpu, set))
			continue;
		for (first = cpu; cpu + 1 < CPU_SETSIZE && CPU_ISSET(cpu + 1, set);)
			cpu++;
		at += (size_t)snprintf(buf + at, len - at, first == cpu ?
				       "%s%d" : "%s%d-%d", at ? "," : "",
				       first, cpu);
	}
}

/*
 * --worker-cpus: every CPU of the list is one this process may run on
 * (before EAL pins the main thread, its affinity is the process's).
 * sirqd failed to start on a CPU that does not exist, and the run ended
 * at once with exit code 0.
 */
static int
check_worker_cpus(const char *prog, const char *list)
{
	char buf[APP_STR_LEN], avail_text[128], *item, *save = NULL;
	cpu_set_t avail;
	unsigned int lo, hi, cpu;
	int n;

	if (list[0] == '\0')
		return 0;
	if (sched_getaffinity(0, sizeof(avail), &avail) != 0)
		return 0;	/* the library checks again when sirqd starts */
	cpus_text(&avail, avail_text, sizeof(avail_text));
	snprintf(buf, sizeof(buf), "%s", list);
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		n = 0;
		if (sscanf(item, "%u-%u%n", &lo, &hi, &n) != 2 || item[n] != '\0') {
			n = 0;
			if (sscanf(item, "%u%n", &lo, &n) != 1 || item[n] != '\0') {
				fprintf(stderr, "%s: --worker-cpus %s: '%s' is not a CPU or a range (e.g. 2-3,6)\n",
					prog, list, item);
				return APP_EXIT_USAGE;
			}
			hi = lo;
		}
		for (cpu = lo; cpu <= hi; cpu++)
			if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &avail)) {
				fprintf(stderr, "%s: --worker-cpus %s: CPU %u does not exist or is not ours (CPUs %s)\n",
					prog, list, cpu, avail_text);
				return APP_EXIT_USAGE;
			}
	}
	return 0;
}

/*
 * --report: a regular file, a symlink to one, or nothing yet, in a
 * directory this process can write. It wrote FILE.tmp and renamed it over
 * FILE: a copy of /dev/null became a regular file, a symlink a file of
 * its own, and a missing directory was found only at the end of the run.
 */
static int
check_report_path(const char *prog, const char *path)
{
	char dir[APP_STR_LEN], *slash, *real = NULL;
	const char *target = path;
	struct stat st;
	int ret = 0;

	if (path[0] == '\0')
		return 0;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		real = realpath(path, NULL);
		if (real == NULL || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "%s: --report %s: a symlink to %s, not to a regular file; refused\n",
				prog, path, real != NULL ? real : "nothing that exists");
			free(real);
			return APP_EXIT_USAGE;
		}
		target = real;
	} else if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: --report %s: exists and is not a regular file (%s); refused\n",
			prog, path, S_ISCHR(st.st_mode) ? "a character device" :
			S_ISDIR(st.st_mode) ? "a directory" :
			S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
		return APP_EXIT_USAGE;
	}
	snprintf(dir, sizeof(dir), "%s", target);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (access(dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "%s: --report %s: cannot write in %s: %s\n",
			prog, path, dir, strerror(errno));
		ret = APP_EXIT_USAGE;
	}
	free(real);
	return ret;
}

int
app_common_check(const char *prog, const struct app_common *c)
{
	const struct sirq_napi_params *n = &c->lcore.napi;
	int ret;

	/* The options' ranges keep the timeouts within 1 s: only this is left. */
	if (sirq_napi_params_check(n) != 0) {
		fprintf(stderr, "%s: --napi-defer-hard-irqs %u needs --gro-flush-timeout-us (%" PRIu64
			" now): the deferred re-poll's delay\n", prog,
			n->defer_hard_irqs, n->gro_flush_timeout_ns / NS_PER_US);
		return APP_EXIT_USAGE;
	}
	ret = check_worker_cpus(prog, c->worker_cpus);
	if (ret == 0)
		ret = check_report_path(prog, c->report_path);
	return ret;
}

int
app_parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 }, { "", 1000 },	/* bare: microseconds */
	};
	unsigned long long v;
	unsigned int i;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -EINVAL;
	for (i = 0; i < (unsigned int)RTE_DIM(units); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		if (v > UINT64_MAX / units[i].mult)
			return -ERANGE;
		*ns = v * units[i].mult;
		return 0;
	}
	return -EINVAL;
}

/* An option without an argument on the command line. */
static bool
opt_is_flag(const struct app_opt *o)
{
	return o->kind == APP_OPT_FLAG_ON || o->kind == APP_OPT_FLAG_OFF ||
		o->kind == APP_OPT_FLAG_U8 || o->kind == APP_OPT_DEPRECATED;
}

/*
 * A flag's value: none on the command line (on); in the INI file
 * yes/1/true or no/0/false, as the docs say. 1, 0, or -1 for anything
 * else ("mac-updating = no" was refused as "takes no value").
 */
static int
flag_value(const char *value)
{
	if (value == NULL || strcmp(value, "1") == 0 ||
	    strcmp(value, "yes") == 0 || strcmp(value, "true") == 0)
		return 1;
	if (strcmp(value, "0") == 0 || strcmp(value, "no") == 0 ||
	    strcmp(value, "false") == 0)
		return 0;
	return -1;
}

/* "mainline | ksoftirqd | ...": the names a bad --policy is told. */
static void
policy_names(char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < SIRQ_POLICY_MAX && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i ? " | " : "", sirq_policy_name(i));
}

static int
parse_unsigned(const char *s, int base, uint64_t *v)
{
	unsigned long long n;
	char *end;

	/* strtoull() skips blanks and then takes a sign: " -1" is 2^64 - 1. */
	if (!isxdigit((unsigned char)*s) ||
	    (base == 10 && !isdigit((unsigned char)*s)))
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	*v = n;
	return 0;
}

/*
 * The options that set a library tunable take its range from the
 * library's table (sirq_param_range()), and say it in the library's
 * words: one range, one message, whichever way the value comes in.
 */
static const struct {
	const char *opt;
	const char *param;
} lib_params[] = {
	{ "max-restart", "max_restart" },
	{ "max-time-us", "max_time_ns" },
	{ "defer-window-us", "defer_window_ns" },
	{ "overload-window-us", "overload_window_ns" },
	{ "tick-hz", "tick_hz" },
	{ "expedited-mask", "expedited_mask" },
	{ "stall-threshold-us", "stall_threshold_ns" },
	{ "napi-weight", "napi_weight" },
	{ "netdev-budget", "netdev_budget" },
	{ "netdev-budget-us", "netdev_budget_us" },
};

static const struct sirq_param_range *
opt_lib_range(const struct app_opt *o)
{
	size_t i;

	for (i = 0; i < RTE_DIM(lib_params); i++)
		if (strcmp(lib_params[i].opt, o->name) == 0)
			return sirq_param_range(lib_params[i].param);
	return NULL;
}

/* An option's inclusive range, in its own unit (us for APP_OPT_US). */
static void
opt_bounds(const struct app_opt *o, uint64_t *lo, uint64_t *hi)
{
	const struct sirq_param_range *r = opt_lib_range(o);

	*lo = o->min;
	*hi = o->max;
	if (r == NULL)
		return;
	*lo = r->min;
	*hi = r->max;
	if (o->kind == APP_OPT_US) {
		*lo = (r->min + NS_PER_US - 1) / NS_PER_US;
		*hi = r->max / NS_PER_US;
	}
}

/* Set one option from its text; a message naming it and the value. */
static int
opt_set(const char *prog, const struct app_opt *o, void *conf,
	const char *value, char *err, size_t len)
{
	const struct sirq_param_range *r = opt_lib_range(o);
	char *field = (char *)conf + o->offset;
	uint64_t v = 0, lo, hi;
	long long iv;
	char *end;
	int id;

	opt_bounds(o, &lo, &hi);

	switch (o->kind) {
	case APP_OPT_FLAG_ON:
	case APP_OPT_FLAG_OFF:
		if ((id = flag_value(value)) < 0)
			break;
		*(bool *)field = (o->kind == APP_OPT_FLAG_ON) == (id == 1);
		return 0;
	case APP_OPT_FLAG_U8:
		if ((id = flag_value(value)) < 0)
			break;
		*(uint8_t *)field = id == 1 ? (uint8_t)o->max : 0;
		return 0;
	case APP_OPT_NAPI_THREADED:
		id = sirq_napi_threaded_from_name(value);
		if (id < 0) {
			snprintf(err, len, "--%s: bad value '%s' (disabled | enabled | busy-poll)",
				 o->name, value);
			return -1;
		}
		*(uint8_t *)field = (uint8_t)id;
		return 0;
	case APP_OPT_DEPRECATED:
		if ((id = flag_value(value)) < 0)
			break;
		if (id == 1)
			fprintf(stderr, "%s: --%s is %s\n", prog, o->name,
				o->help);
		return 0;
	case APP_OPT_POLICY:
		id = sirq_policy_from_name(value);
		if (id < 0) {
			char names[160];

			policy_names(names, sizeof(names));
			snprintf(err, len, "--%s: bad value '%s' (%s)", o->name,
				 value, names);
			return -1;
		}
		*(enum sirq_policy_id *)field = (enum sirq_policy_id)id;
		return 0;
	case APP_OPT_MODE:
		if (strcmp(value, "poll") == 0)
			*(enum sirq_mode *)field = SIRQ_MODE_POLL;
		else if (strcmp(value, "irq") == 0)
			*(enum sirq_mode *)field = SIRQ_MODE_IRQ;
		else {
			snprintf(err, len, "--%s: bad value '%s' (poll | irq)",
				 o->name, value);
			return -1;
		}
		return 0;
	case APP_OPT_STRING:
		if (strlen(value) >= APP_STR_LEN)
			break;
		strcpy(field, value);
		return 0;
	case APP_OPT_CUSTOM:
		return o->parse(conf, value, err, len) == 0 ? 0 : -1;
	case APP_OPT_INT:
		errno = 0;
		iv = strtoll(value, &end, 0);
		if (errno != 0 || *end != '\0' || *value == '\0' ||
		    iv < (long long)o->min || iv > (long long)o->max)
			break;
		*(int *)field = (int)iv;
		return 0;
	case APP_OPT_US:
		if (parse_unsigned(value, 10, &v) != 0 || v < lo || v > hi)
			break;
		*(uint64_t *)field = v * NS_PER_US;
		return 0;
	default:
		if (parse_unsigned(value, o->kind == APP_OPT_HEX32 ||
				   o->kind == APP_OPT_HEX64 ? 16 : 10, &v) != 0 ||
		    v < lo || v > hi)
			break;
		if (o->kind == APP_OPT_U16)
			*(uint16_t *)field = (uint16_t)v;
		else if (o->kind == APP_OPT_U32 || o->kind == APP_OPT_HEX32)
			*(uint32_t *)field = (uint32_t)v;
		else
			*(uint64_t *)field = v;
		return 0;
	}
	if (opt_is_flag(o))
		snprintf(err, len, "--%s: bad value '%s' (yes | no | 1 | 0 | true | false)",
			 o->name, value);
	else if (r != NULL)
		snprintf(err, len, "--%s: bad value '%s': %s", o->name, value,
			 r->why);
	else if (o->min != 0 || o->max != 0)
		snprintf(err, len, "--%s: bad value '%s' (%" PRIu64 "..%" PRIu64 ")",
			 o->name, value, o->min, o->max);
	else
		snprintf(err, len, "--%s: bad value '%s'", o->name, value);
	return -1;
}

static const struct app_opt *
find_opt(const struct app_opt_table *tables, size_t nb, const char *section,
	 const char *name, void **conf)
{
	size_t t, i;

	for (t = 0; t < nb; t++)
		for (i = 0; i < tables[t].nb; i++) {
			const struct app_opt *o = &tables[t].opts[i];

			if (strcmp(o->name, name) == 0 &&
			    (section == NULL || strcmp(o->section, section) == 0)) {
				*conf = tables[t].conf;
				return o;
			}
		}
	return NULL;
}

/*
 * The line of the @nth (from 0) "key =" of [@section] in @path, or with
 * @key NULL of the @nth "[section]" header, for messages that name both
 * places; 0 if not found. rte_cfgfile keeps no line numbers.
 */
static unsigned int
config_line(const char *path, const char *section, const char *key,
	    unsigned int nth)
{
	char line[512], cur[CFG_NAME_LEN] = "";
	unsigned int no = 0, found = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *end;
		bool hit;

		no++;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '[') {
			end = strchr(p, ']');
			if (end == NULL)
				continue;
			snprintf(cur, sizeof(cur), "%.*s", (int)(end - p - 1),
				 p + 1);
			hit = key == NULL && strcmp(cur, section) == 0;
		} else {
			if (key == NULL || strcmp(cur, section) != 0 ||
			    strncmp(p, key, strlen(key)) != 0)
				continue;
			p += strlen(key);
			while (*p == ' ' || *p == '\t')
				p++;
			hit = *p == '=';
		}
		if (hit && found++ == nth)
			break;
	}
	fclose(f);
	return found > nth ? no : 0;
}

/*
 * What the file says twice: a section (rte_cfgfile would read only the
 * first), a key in one section, or two keys that set one field
 * (mac-updating and no-mac-updating). Each was taken silently, the last
 * one winning, or the first. APP_EXIT_USAGE after naming both places.
 */
static int
check_config_twice(const char *prog, const char *path, struct rte_cfgfile *cfg,
		   char sections[][CFG_NAME_LEN], int nb_sec,
		   const struct app_opt_table *tables, size_t nb)
{
	struct {
		const struct app_opt *o;
		void *conf;
		int sec;
		const char *name;
	} seen[MAX_OPTS];
	struct rte_cfgfile_entry e[MAX_OPTS];
	unsigned int nb_seen = 0;
	int s, t, i, j, n;

	for (s = 0; s < nb_sec; s++)
		for (t = 0; t < s; t++)
			if (strcmp(sections[s], sections[t]) == 0) {
				fprintf(stderr, "%s: %s: [%s] appears twice (lines %u and %u); give each option once\n",
					prog, path, sections[s],
					config_line(path, sections[s], NULL, 0),
					config_line(path, sections[s], NULL, 1));
				return APP_EXIT_USAGE;
			}
	for (s = 0; s < nb_sec; s++) {
		n = rte_cfgfile_section_entries(cfg, sections[s], e, MAX_OPTS);
		for (i = 0; i < n; i++) {
			const struct app_opt *o;
			void *conf;

			for (j = 0; j < i; j++)
				if (strcmp(e[i].name, e[j].name) == 0) {
					fprintf(stderr, "%s: %s: '%s' given twice in [%s] (lines %u and %u)\n",
						prog, path, e[i].name, sections[s],
						config_line(path, sections[s], e[i].name, 0),
						config_line(path, sections[s], e[i].name, 1));
					return APP_EXIT_USAGE;
				}
			o = find_opt(tables, nb, sections[s], e[i].name, &conf);
			/* Unknown keys: load_config() names them. */
			if (o == NULL || o->kind == APP_OPT_CUSTOM ||
			    o->kind == APP_OPT_DEPRECATED)
				continue;
			for (j = 0; j < (int)nb_seen; j++)
				if (seen[j].conf == conf &&
				    seen[j].o->offset == o->offset) {
					fprintf(stderr, "%s: %s: '%s' (line %u) and '%s' (line %u) set the same thing; keep one\n",
						prog, path, seen[j].name,
						config_line(path, sections[seen[j].sec],
							 seen[j].name, 0),
						o->name,
						config_line(path, sections[s], o->name, 0));
					return APP_EXIT_USAGE;
				}
			if (nb_seen < MAX_OPTS) {
				seen[nb_seen].o = o;
				seen[nb_seen].conf = conf;
				seen[nb_seen].sec = s;
				seen[nb_seen].name = o->name;
				nb_seen++;
			}
		}
	}
	return 0;
}

/* Every key of the INI file, over the defaults. */
static int
load_config(const char *prog, const char *path,
	    const struct app_opt_table *tables, size_t nb)
{
	char *sections[CFG_MAX_SECTIONS];
	char names[CFG_MAX_SECTIONS][CFG_NAME_LEN];
	char err[APP_ERR_LEN];
	struct rte_cfgfile *cfg;
	int nb_sec, s, rc = 0;
	struct stat st;

	/*
	 * A regular file only: rte_cfgfile_load() reads a character device
	 * such as /dev/zero or /dev/full, or a FIFO, without end (found by
	 * fuzz_app_cli).
	 */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: --config: '%s' is not a regular file\n",
			prog, path);
		return APP_EXIT_USAGE;
	}
	cfg = rte_cfgfile_load(path, 0);
	if (cfg == NULL) {
		/* rte_cfgfile refuses a key before the first [section]. */
		if (access(path, R_OK) == 0)
			fprintf(stderr, "%s: --config: '%s' is not an INI file rte_cfgfile can parse (a key before the first [section], or a line over 324 bytes)\n",
				prog, path);
		else
			fprintf(stderr, "%s: --config: cannot read '%s': %s\n",
				prog, path, strerror(errno));
		return APP_EXIT_USAGE;
	}
	for (s = 0; s < CFG_MAX_SECTIONS; s++)
		sections[s] = names[s];
	nb_sec = rte_cfgfile_sections(cfg, sections, CFG_MAX_SECTIONS);
	if (nb_sec > CFG_MAX_SECTIONS) {
		fprintf(stderr, "%s: %s: more than %d sections\n", prog, path,
			CFG_MAX_SECTIONS);
		rc = APP_EXIT_USAGE;
		nb_sec = 0;
	}
	if (rc == 0)
		rc = check_config_twice(prog, path, cfg, names, nb_sec, tables, nb);
	for (s = 0; s < nb_sec && rc == 0; s++) {
		int n = rte_cfgfile_section_num_entries(cfg, sections[s]);
		struct rte_cfgfile_entry *e;
		int i;

		if (n <= 0)
			continue;
		e = calloc((size_t)n, sizeof(*e));
		if (e == NULL) {
			rc = APP_EXIT_USAGE;
			break;
		}
		n = rte_cfgfile_section_entries(cfg, sections[s], e, n);
		for (i = 0; i < n; i++) {
			const struct app_opt *o;
			void *conf;

			o = find_opt(tables, nb, sections[s], e[i].name, &conf);
			if (o == NULL || strcmp(o->name, "config") == 0 ||
			    strcmp(o->name, "preset") == 0 ||
			    strcmp(o->name, "help") == 0 ||
			    strcmp(o->name, "version") == 0) {
				fprintf(stderr, "%s: %s: unknown key '%s' in [%s]\n",
					prog, path, e[i].name, sections[s]);
				rc = APP_EXIT_USAGE;
				break;
			}
			if (opt_set(prog, o, conf, e[i].value, err,
				    sizeof(err)) != 0) {
				fprintf(stderr, "%s: %s: [%s] %s\n", prog, path,
					sections[s], err);
				rc = APP_EXIT_USAGE;
				break;
			}
		}
		free(e);
	}
	rte_cfgfile_close(cfg);
	return rc;
}

static size_t
build_longopts(const struct app_opt_table *tables, size_t nb,
	       struct option *lo, char *shortopts, size_t shortlen)
{
	size_t t, i, n = 0, sl = 0;

	for (t = 0; t < nb; t++)
		for (i = 0; i < tables[t].nb && n < MAX_OPTS; i++, n++) {
			const struct app_opt *o = &tables[t].opts[i];
			bool flag = opt_is_flag(o);

			lo[n].name = o->name;
			lo[n].has_arg = flag ? no_argument : required_argument;
			lo[n].flag = NULL;
			lo[n].val = 256 + (int)n;
			if (o->short_name != 0 && sl + 3 < shortlen) {
				shortopts[sl++] = (char)o->short_name;
				if (!flag)
					shortopts[sl++] = ':';
			}
		}
	shortopts[sl] = '\0';
	memset(&lo[n], 0, sizeof(lo[n]));
	return n;
}

static const struct app_opt *
opt_by_index(const struct app_opt_table *tables, size_t nb, size_t idx,
	     void **conf)
{
	size_t t;

	for (t = 0; t < nb; t++) {
		if (idx < tables[t].nb) {
			*conf = tables[t].conf;
			return &tables[t].opts[idx];
		}
		idx -= tables[t].nb;
	}
	return NULL;
}

static const struct app_opt *
opt_by_short(const struct app_opt_table *tables, size_t nb, int c, void **conf)
{
	size_t t, i;

	for (t = 0; t < nb; t++)
		for (i = 0; i < tables[t].nb; i++)
			if (tables[t].opts[i].short_name == c) {
				*conf = tables[t].conf;
				return &tables[t].opts[i];
			}
	return NULL;
}

/*
 * Where presets are: $SIRQ_PRESET_DIR if set, else the installed
 * directory, then the source tree's config/presets (a build run where it
 * was built). The build sets both (apps/common/meson.build).
 */
#ifndef APP_PRESET_DIR
#define APP_PRESET_DIR "/usr/share/libsirq/presets"
#endif
#ifndef APP_PRESET_SRC_DIR
#define APP_PRESET_SRC_DIR ""
#endif

static size_t
preset_dirs(const char *dirs[2])
{
	const char *env = getenv("SIRQ_PRESET_DIR");
	size_t n = 0;

	if (env != NULL && env[0] != '\0') {
		dirs[n++] = env;
		return n;
	}
	dirs[n++] = APP_PRESET_DIR;
	if (APP_PRESET_SRC_DIR[0] != '\0')
		dirs[n++] = APP_PRESET_SRC_DIR;
	return n;
}

/* A preset's name: letters, digits, '-' and '_', so never a path. */
static bool
preset_name_ok(const char *name)
{
	size_t i;

	if (name[0] == '\0' || strlen(name) > 64)
		return false;
	for (i = 0; name[i] != '\0'; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '-' &&
		    name[i] != '_')
			return false;
	return true;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The presets there are, "a b c" (or "none"), for --help and errors. */
static void
preset_list(char *buf, size_t len)
{
	char names[16][72];
	const char *dirs[2];
	size_t nd = preset_dirs(dirs), d, n = 0, i, off = 0;

	for (d = 0; d < nd; d++) {
		struct dirent *e;
		DIR *dir = opendir(dirs[d]);

		if (dir == NULL)
			continue;
		while ((e = readdir(dir)) != NULL && n < RTE_DIM(names)) {
			size_t l = strlen(e->d_name);

			if (l <= 4 || l - 4 >= sizeof(names[0]) ||
			    strcmp(e->d_name + l - 4, ".ini") != 0)
				continue;
			memcpy(names[n], e->d_name, l - 4);
			names[n][l - 4] = '\0';
			if (!preset_name_ok(names[n]))
				continue;
			for (i = 0; i < n && strcmp(names[i], names[n]) != 0; i++)
				;
			if (i == n)	/* once, when in both directories */
				n++;
		}
		closedir(dir);
	}
	qsort(names, n, sizeof(names[0]), name_cmp);
	buf[0] = '\0';
	for (i = 0; i < n && off + strlen(names[i]) + 2 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? " " : "", names[i]);
	if (off == 0)
		snprintf(buf, len, "none");
}

/* @name's file in the first directory that has it; APP_EXIT_USAGE if none. */
static int
preset_path(const char *prog, const char *name, char *path, size_t len)
{
	const char *dirs[2];
	char list[APP_STR_LEN];
	size_t nd = preset_dirs(dirs), d;
	struct stat st;

	if (!preset_name_ok(name)) {
		fprintf(stderr, "%s: --preset: '%s' is not a preset name (letters, digits, '-' and '_'; a file goes to --config)\n",
			prog, name);
		return APP_EXIT_USAGE;
	}
	for (d = 0; d < nd; d++) {
		if ((size_t)snprintf(path, len, "%s/%s.ini", dirs[d], name) >= len)
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	preset_list(list, sizeof(list));
	fprintf(stderr, "%s: --preset: no preset '%s' in %s%s%s (presets: %s)\n",
		prog, name, dirs[0], nd > 1 ? " or " : "", nd > 1 ? dirs[1] : "",
		list);
	return APP_EXIT_USAGE;
}

int
app_opts_parse(const char *prog, int argc, char **argv,
	       const struct app_opt_table *tables, size_t nb)
{
	struct option lo[MAX_OPTS + 1];
	char shortopts[2 * MAX_OPTS + 1];
	char err[APP_ERR_LEN];
	const char *config = NULL, *preset = NULL;
	int c, rc;

	build_longopts(tables, nb, lo, shortopts, sizeof(shortopts));

	/*
	 * --config first, so that the command line overrides the file; found
	 * as getopt sees it: abbreviated ("--conf=F") or as the value of
	 * another option ("--report --config") a string compare gets it
	 * wrong. Errors are reported by the second pass. optind = 0 resets
	 * glibc's getopt completely, also after a parse that stopped in the
	 * middle of grouped short options.
	 */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		const struct app_opt *o;
		void *conf;

		if (c < 256)
			continue;
		o = opt_by_index(tables, nb, (size_t)(c - 256), &conf);
		if (o != NULL && strcmp(o->name, "config") == 0)
			config = optarg;
		if (o != NULL && strcmp(o->name, "preset") == 0)
			preset = optarg;
	}
	/* The preset, then --config over it, then the command line. */
	if (preset != NULL) {
		char path[PATH_MAX];

		rc = preset_path(prog, preset, path, sizeof(path));
		if (rc == 0)
			rc = load_config(prog, path, tables, nb);
		if (rc != 0)
			return rc;
	}
	if (config != NULL) {
		rc = load_config(prog, config, tables, nb);
		if (rc != 0)
			return rc;
	}

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		const struct app_opt *o;
		void *conf = NULL;

		if (c == '?' || c == ':') {
			if (optopt != 0 && optopt < 256)
				fprintf(stderr, "%s: bad option '-%c'%s; see --help\n",
					prog, optopt, c == ':' ? " (needs a value)" : "");
			else
				fprintf(stderr, "%s: bad option '%s'; see --help\n",
					prog, argv[optind - 1]);
			return APP_EXIT_USAGE;
		}
		o = c >= 256 ? opt_by_index(tables, nb, (size_t)(c - 256), &conf) :
			opt_by_short(tables, nb, c, &conf);
		if (o == NULL ||
		    opt_set(prog, o, conf, optarg, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s: %s\n", prog,
				o == NULL ? "unknown option" : err);
			return APP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'; see --help\n",
			prog, argv[optind]);
		return APP_EXIT_USAGE;
	}
	return 0;
}

/* The current (default) value of an option, as text. */
static void
opt_value(const struct app_opt *o, const void *conf, char *buf, size_t len)
{
	const char *field = (const char *)conf + o->offset;

	switch (o->kind) {
	case APP_OPT_U16:
		snprintf(buf, len, "%u", *(const uint16_t *)field);
		break;
	case APP_OPT_U32:
		snprintf(buf, len, "%u", *(const uint32_t *)field);
		break;
	case APP_OPT_U64:
		snprintf(buf, len, "%" PRIu64, *(const uint64_t *)field);
		break;
	case APP_OPT_INT:
		snprintf(buf, len, "%d", *(const int *)field);
		break;
	case APP_OPT_US:
		snprintf(buf, len, "%" PRIu64,
			 *(const uint64_t *)field / NS_PER_US);
		break;
	case APP_OPT_HEX32:
		snprintf(buf, len, "0x%x", *(const uint32_t *)field);
		break;
	case APP_OPT_HEX64:
		snprintf(buf, len, "0x%" PRIx64, *(const uint64_t *)field);
		break;
	case APP_OPT_POLICY:
		snprintf(buf, len, "%s",
			 sirq_policy_name(*(const enum sirq_policy_id *)field));
		break;
	case APP_OPT_MODE:
		snprintf(buf, len, "%s", *(const enum sirq_mode *)field ==
			 SIRQ_MODE_IRQ ? "irq" : "poll");
		break;
	case APP_OPT_NAPI_THREADED:
		snprintf(buf, len, "%s",
			 sirq_napi_threaded_name(*(const uint8_t *)field));
		break;
	case APP_OPT_STRING:
		/* Unset strings: the help text says what that means. */
		snprintf(buf, len, "%s", field);
		break;
	case APP_OPT_CUSTOM:
		snprintf(buf, len, "%s", o->custom_default);
		break;
	default:
		/* Flags: the text says what they do. */
		buf[0] = '\0';
		break;
	}
}

void
app_print_version(const char *prog)
{
	printf("%s %s (libsirq %s, %s)\n", prog, SIRQ_APP_VERSION,
	       sirq_version(), rte_version());
}

void
app_opts_usage(const char *prog, const char *synopsis,
	       const struct app_opt_table *tables, size_t nb)
{
	const char *section = "";
	char def[64], opt[64], range[64];
	size_t t, i;

	printf("Usage: %s [EAL options] -- %s\n", prog, synopsis);
	for (t = 0; t < nb; t++)
		for (i = 0; i < tables[t].nb; i++) {
			const struct app_opt *o = &tables[t].opts[i];

			if (strcmp(o->section, section) != 0) {
				section = o->section;
				printf("\n[%s]\n", section);
			}
			if (o->short_name != 0)
				snprintf(opt, sizeof(opt), "-%c, --%s%s%s",
					 o->short_name, o->name, o->arg ? " " : "",
					 o->arg ? o->arg : "");
			else
				snprintf(opt, sizeof(opt), "    --%s%s%s", o->name,
					 o->arg ? " " : "", o->arg ? o->arg : "");
			opt_value(o, tables[t].conf, def, sizeof(def));
			range[0] = '\0';
			if (opt_lib_range(o) != NULL) {
				uint64_t lo, hi;

				opt_bounds(o, &lo, &hi);
				snprintf(range, sizeof(range),
					 o->kind == APP_OPT_HEX32 ?
					 " (range: 0x%" PRIx64 "..0x%" PRIx64 ")" :
					 " (range: %" PRIu64 "..%" PRIu64 ")", lo, hi);
			}
			/*
			 * help2man parts an option from its text at two spaces
			 * not followed by '-': an option that fills the column,
			 * or a text that starts with "--", gets a line of its
			 * own and its text the line below, indented.
			 */
			if (strlen(opt) >= 32 || o->help[0] == '-')
				printf("  %s\n%35s", opt, "");
			else
				printf("  %-32s ", opt);
			printf("%s%s%s%s%s\n", o->help,
			       def[0] != '\0' ? " (default: " : "", def,
			       def[0] != '\0' ? ")" : "", range);
		}
	printf("\nEvery option can also be given in the INI file of --config,\n"
	       "as \"name = value\" in its [section]; the command line wins.\n");
	{
		const char *dirs[2];
		char list[APP_STR_LEN];

		preset_dirs(dirs);
		/* The installed directory only: help2man makes the man page. */
		preset_list(list, sizeof(list));
		printf("Presets (--preset NAME; NAME.ini in %s): %s.\n",
		       dirs[0], list);
	}
}

int
app_spec_parse(const char *opt, const char *text, app_spec_item_fn item,
	       void *spec, char *err, size_t len)
{
	char buf[APP_STR_LEN], *it, *save = NULL;

	if (strcmp(text, "off") == 0)
		return 1;
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, len, "%s: spec too long", opt);
		return -1;
	}
	strcpy(buf, text);
	for (it = strtok_r(buf, ",", &save); it != NULL;
	     it = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(it, '=');

		if (eq != NULL)
			*eq++ = '\0';
		if (strcmp(it, "on") == 0 && eq == NULL)
			continue;
		if (item(spec, it, eq, err, len) != 0)
			return -1;
	}
	return 0;
}
