/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: the command line of l2fwd-sirq (app_opts_parse() over
 * the l2fwd and common option tables, as main.c calls it, then the
 * --portmap parser on what it accepted).
 *
 * Input: the arguments after "--", one per line ('\n'), at most MAX_ARGS,
 * each in its own heap buffer so that a read past an argument is seen.
 * An option that names a file (--config) reads it: run with stdin on
 * /dev/null. Oracle: a command line that parses leaves engine parameters
 * that sirq_params_check() accepts, and an app load with hold <= period.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "app_opts.h"
#include "l2fwd.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct app_common common;
static struct l2fwd_opts opts;
static struct l2fwd_port ports[RTE_MAX_ETHPORTS];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct app_opt_table tables[] = {
		{ l2fwd_opts_table, l2fwd_nb_opts, &opts },
		{ app_common_opts, app_common_nb_opts, &common },
	};
	char *argv[MAX_ARGS + 2];
	int argc = 0, i;
	size_t pos = 0;

	argv[argc++] = strdup(L2FWD_PROG);
	while (pos < size && argc <= MAX_ARGS) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = nl != NULL ? (size_t)(nl - (data + pos)) : size - pos;
		char *arg = malloc(len + 1);

		if (arg == NULL)
			abort();
		memcpy(arg, data + pos, len);
		arg[len] = '\0';
		argv[argc++] = arg;
		pos += len + 1;
	}
	argv[argc] = NULL;

	app_common_defaults(&common);
	l2fwd_opts_defaults(&opts);
	memset(ports, 0, sizeof(ports));
	if (app_opts_parse(L2FWD_PROG, argc, argv, tables, RTE_DIM(tables)) == 0) {
		if (sirq_params_check(&common.lcore.params) != 0) {
			fprintf(stderr, "accepted options give bad engine parameters\n");
			abort();
		}
		if (common.load.enabled &&
		    common.load.hold_ns > common.load.period_ns) {
			fprintf(stderr, "accepted an app load with hold > period\n");
			abort();
		}
		if (opts.portmap[0] != '\0')
			l2fwd_parse_portmap(opts.portmap, ports);
	}

	for (i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
