/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_APP_OPTS_H
#define SIRQ_APP_OPTS_H

/*
 * Options of the libsirq applications, shared by l2fwd-sirq and tcp-echo.
 *
 * One table per application describes every option once: its long name
 * (also its key in the INI file), where its value goes, its range and its
 * help. The same table drives the command line (getopt_long), the INI
 * file (rte_cfgfile: --config FILE) and --help, so the three cannot
 * disagree. The command line overrides the file. Any bad value or unknown
 * key is one line on stderr naming the option and the value, and exit
 * code 2 (APP_EXIT_USAGE); nothing starts.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sirq.h>

#include "app_load.h"

#define APP_EXIT_USAGE 2
#define APP_ERR_LEN 256

enum app_opt_kind {
	APP_OPT_U16,
	APP_OPT_U32,
	APP_OPT_U64,
	APP_OPT_INT,
	APP_OPT_US,		/* microseconds into a uint64_t of ns */
	APP_OPT_HEX32,		/* a mask, hexadecimal with or without 0x */
	APP_OPT_HEX64,
	APP_OPT_FLAG_ON,	/* no argument: sets a bool */
	APP_OPT_FLAG_OFF,	/* no argument: clears a bool */
	APP_OPT_POLICY,
	APP_OPT_MODE,
	APP_OPT_STRING,		/* copied into a char[APP_STR_LEN] */
	APP_OPT_CUSTOM,		/* parse() does it */
	APP_OPT_DEPRECATED,	/* no argument, no effect: help is the warning */
	APP_OPT_FLAG_U8,	/* no argument: sets a uint8_t to max */
	APP_OPT_NAPI_THREADED,	/* disabled | enabled | busy-poll, a uint8_t */
};

#define APP_STR_LEN 256

struct app_opt {
	const char *name;	/* --name and the INI key */
	int short_name;		/* 0 if none */
	const char *section;	/* INI section */
	enum app_opt_kind kind;
	size_t offset;		/* into the table's configuration struct */
	uint64_t min;		/* numeric kinds: inclusive range */
	uint64_t max;
	const char *arg;	/* argument name for --help, e.g. "N" */
	const char *help;
	/* APP_OPT_CUSTOM: parse @value into @conf; message into @err. */
	int (*parse)(void *conf, const char *value, char *err, size_t len);
	/* APP_OPT_CUSTOM: the default, for --help. */
	const char *custom_default;
};

/* --softirq-thread-sched: a softirq thread's class, by lead vector. */
#define APP_MAX_THREAD_SCHED 8
struct app_thread_sched {
	unsigned int vec;
	struct sirq_thread_attr attr;	/* sirq_lcore_thread_attr()'s */
};

/* What every application has: the libsirq knobs, the load, the run. */
struct app_common {
	struct sirq_lcore_conf lcore;	/* worker_cpus points at worker_cpus[] */
	char worker_cpus[APP_STR_LEN];
	struct app_load_spec load;
	char report_path[APP_STR_LEN];
	char config_path[APP_STR_LEN];
	char preset[APP_STR_LEN];	/* a name: <presets dir>/NAME.ini */
	uint32_t duration_s;		/* 0: until SIGINT/SIGTERM */
	struct app_thread_sched thread_sched[APP_MAX_THREAD_SCHED];
	unsigned int nb_thread_sched;
	bool help;
	bool version;
};

/*
 * Give a new lcore the --softirq-thread-sched classes. 0, or -1 after a
 * message naming the vector.
 */
int app_thread_sched_apply(const char *prog, const struct app_common *c,
			   struct sirq_lcore *lc);

/* The options of struct app_common, for an application's table. */
extern const struct app_opt app_common_opts[];
extern const size_t app_common_nb_opts;

/* Defaults: the kernel's values, poll mode, no load, no report. */
void app_common_defaults(struct app_common *c);

/*
 * What the options allow one by one but not together, checked before EAL
 * starts: the NAPI settings (sirq_napi_params_check()). 0, or
 * APP_EXIT_USAGE after one line on stderr naming the options and values.
 */
int app_common_check(const char *prog, const struct app_common *c);

/*
 * Parse the application's options (after EAL's, without "--"): first the
 * INI file named by --config, if any, then the command line over it.
 * @tables/@confs: parallel arrays of option tables and the structs their
 * offsets point into. Returns 0, or APP_EXIT_USAGE after printing one
 * line that names the option and the value.
 */
struct app_opt_table {
	const struct app_opt *opts;
	size_t nb;
	void *conf;
};

int app_opts_parse(const char *prog, int argc, char **argv,
		   const struct app_opt_table *tables, size_t nb_tables);

/*
 * --version: "PROG VERSION (libsirq VERSION, DPDK VERSION)" on stdout,
 * the library's and DPDK's as the process links them.
 */
void app_print_version(const char *prog);

/* --help: every option with its argument, default and meaning. */
void app_opts_usage(const char *prog, const char *synopsis,
		    const struct app_opt_table *tables, size_t nb_tables);

/* Parse a number with an optional unit (us, ms, s) into nanoseconds. */
int app_parse_duration_ns(const char *s, uint64_t *ns);

/* One "key" or "key=value" item of a spec; @val is NULL without '='. */
typedef int (*app_spec_item_fn)(void *spec, const char *key, const char *val,
				char *err, size_t len);

/*
 * Parse a spec such as "hold=10ms,period=50ms,random" for the option
 * @opt: each comma-separated item goes to @item ("on" alone is skipped).
 * Returns 1 for "off", 0 when every item was taken, -1 with a message in
 * @err otherwise.
 */
int app_spec_parse(const char *opt, const char *text, app_spec_item_fn item,
		   void *spec, char *err, size_t len);

#endif /* SIRQ_APP_OPTS_H */
