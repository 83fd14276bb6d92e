/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * libFuzzer target: the INI file of l2fwd-sirq (--config FILE), read by
 * DPDK's rte_cfgfile and applied through the option tables by
 * app_opts_parse(), exactly as "l2fwd-sirq ... -- --config FILE" does.
 *
 * Input: the file's bytes. They go into a memfd, opened by path
 * (/proc/self/fd/N) so that rte_cfgfile_load() reads a real file.
 * Oracle: a file that loads leaves engine parameters that
 * sirq_params_check() accepts.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>

#include "app_opts.h"
#include "l2fwd.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct app_common common;
static struct l2fwd_opts opts;
static int ini_fd = -1;
static char ini_path[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ini_fd = memfd_create("fuzz.ini", MFD_CLOEXEC);
	if (ini_fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(ini_path, sizeof(ini_path), "/proc/self/fd/%d", ini_fd);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct app_opt_table tables[] = {
		{ l2fwd_opts_table, l2fwd_nb_opts, &opts },
		{ app_common_opts, app_common_nb_opts, &common },
	};
	char *argv[] = { strdup(L2FWD_PROG), strdup("--config"),
			 strdup(ini_path), NULL };

	if (ftruncate(ini_fd, 0) != 0 ||
	    pwrite(ini_fd, data, size, 0) != (ssize_t)size)
		abort();

	app_common_defaults(&common);
	l2fwd_opts_defaults(&opts);
	if (app_opts_parse(L2FWD_PROG, 3, argv, tables, RTE_DIM(tables)) == 0 &&
	    sirq_params_check(&common.lcore.params) != 0) {
		fprintf(stderr, "accepted file gives bad engine parameters\n");
		abort();
	}
	free(argv[0]);
	free(argv[1]);
	free(argv[2]);
	return 0;
}
