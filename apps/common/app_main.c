/* SPDX-License-Identifier: BSD-3-Clause */

#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <sirq.h>

#include "app_main.h"

volatile sig_atomic_t app_quit_signal;
volatile sig_atomic_t app_report_requested;

static void
on_quit(int sig)
{
	app_quit_signal = sig;
	sirq_lcore_stop_all();
}

static void
on_usr1(int sig)
{
	RTE_SET_USED(sig);
	app_report_requested = 1;
}

int
app_start(const char *prog, int argc, char **argv,
	  int (*parse)(int argc, char **argv))
{
	int dashes, ret;

	for (dashes = 1; dashes < argc && strcmp(argv[dashes], "--") != 0; dashes++)
		;
	if (dashes < argc) {
		/* The options after "--", with the program's name before them. */
		argv[dashes] = argv[0];
		ret = parse(argc - dashes, argv + dashes);
		argv[dashes] = (char *)"--";
	} else {
		char *none[] = { argv[0], NULL };

		ret = parse(1, none);
	}
	if (ret != 0)
		return ret;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "%s: EAL initialisation failed: %s\n", prog,
			rte_strerror(rte_errno));
		return 1;
	}
	signal(SIGINT, on_quit);
	signal(SIGTERM, on_quit);
	signal(SIGUSR1, on_usr1);
	return 0;
}
