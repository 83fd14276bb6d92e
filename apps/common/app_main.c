/* SPDX-License-Identifier: BSD-3-Clause */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <sirq.h>

#include "app_load.h"
#include "app_main.h"

#define NS_PER_SEC 1000000000ULL

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

static int
on_signal(int sig, void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
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
	} else if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		/* What a packager or a supervisor asks first: not EAL's. */
		char *version[] = { argv[0], argv[1], NULL };

		ret = parse(2, version);
	} else {
		char *none[] = { argv[0], NULL };

		ret = parse(1, none);
	}
	if (ret != 0)
		return ret;

	if (rte_eal_init(argc, argv) < 0) {
		/* A second process on one --file-prefix left rte_errno 0. */
		fprintf(stderr, "%s: EAL initialisation failed: %s\n", prog,
			rte_errno != 0 ? rte_strerror(rte_errno) :
			"see EAL's messages above (a --file-prefix in use by another process?)");
		return 1;
	}
	/*
	 * sigaction, not signal(): no SA_RESETHAND whatever the libc.
	 * SIGPIPE ignored: a vhost-user or memif peer that goes away closes
	 * the socket under the PMD, which must see EPIPE, not end the run
	 * without a report.
	 */
	if (on_signal(SIGINT, on_quit) != 0 || on_signal(SIGTERM, on_quit) != 0 ||
	    on_signal(SIGUSR1, on_usr1) != 0 || on_signal(SIGPIPE, SIG_IGN) != 0) {
		fprintf(stderr, "%s: sigaction: %s\n", prog, strerror(errno));
		rte_eal_cleanup();
		return 1;
	}
	return 0;
}

void
app_control(const struct app_common *c, uint64_t start_ns, uint32_t period_s,
	    uint64_t last_stats_ns, void (*report)(void), void (*stats)(void))
{
	uint64_t now = app_now_ns();

	if (app_report_requested) {
		app_report_requested = 0;
		report();
	}
	if (period_s != 0 && now - last_stats_ns >= period_s * NS_PER_SEC)
		stats();
	if (c->duration_s != 0 && now - start_ns >= c->duration_s * NS_PER_SEC)
		sirq_lcore_stop_all();
}
