/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_APP_MAIN_H
#define SIRQ_APP_MAIN_H

/*
 * The start of an application's main(), shared by l2fwd-sirq and
 * tcp-echo: its own options first, so that nothing starts on a bad one,
 * then EAL, then the signals every libsirq application answers:
 * SIGINT/SIGTERM stop every dispatcher (sirq_lcore_stop_all()) and are
 * remembered in app_quit_signal; SIGUSR1 asks for a report.
 */

#include <signal.h>
#include <stdint.h>

#include "app_opts.h"

/* The last SIGINT or SIGTERM received, 0 if none. */
extern volatile sig_atomic_t app_quit_signal;
/* Set by SIGUSR1; the application's control timer clears it. */
extern volatile sig_atomic_t app_report_requested;

/*
 * Parse the application's options (those after "--", or none; a lone
 * "--version" counts as one of them) with
 * @parse (called with argv[0] and them), initialise EAL with the
 * arguments before "--", install the handlers. Returns 0, @parse's
 * non-zero result, or 1 after a message if EAL failed.
 */
int app_start(const char *prog, int argc, char **argv,
	      int (*parse)(int argc, char **argv));

/*
 * What the control timer of an application does every period: write the
 * report SIGUSR1 asked for (@report), print the statistics line (@stats)
 * when @period_s seconds (0: never) have passed since @last_stats_ns,
 * and stop every dispatcher once --duration has passed since @start_ns.
 */
void app_control(const struct app_common *c, uint64_t start_ns,
		 uint32_t period_s, uint64_t last_stats_ns,
		 void (*report)(void), void (*stats)(void));

#endif /* SIRQ_APP_MAIN_H */
