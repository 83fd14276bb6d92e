/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * bench_tool: what the kernel lab's tools (udp-flood, udp-sink, cpu-hog,
 * netrx-probe) share: option values with errors naming the bad one, CPU
 * pinning, the SIGINT/SIGTERM stop flag, clocks, the CPU work step and
 * the JSON output file. Plain C, no DPDK, no libsirq.
 *
 * Each tool defines bench_prog (its name), the prefix of every message.
 */

#ifndef BENCH_TOOL_H
#define BENCH_TOOL_H

#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define BENCH_EXIT_USAGE 2
#define BENCH_NS_PER_S UINT64_C(1000000000)

/* Defined by each tool: "udp-flood", ... */
extern const char bench_prog[];

/* Set by SIGINT and SIGTERM once bench_catch_signals() ran. */
extern volatile sig_atomic_t bench_stop;
void bench_catch_signals(void);

uint64_t bench_clock_ns(clockid_t id);
/* Sleeps until @t ns of CLOCK_MONOTONIC. */
void bench_sleep_until(uint64_t t);

/* @steps multiply-adds the compiler keeps (a few ns each). */
void bench_work(uint64_t steps);

/*
 * A decimal value of option --@name in [@min, @max]; otherwise
 * "PROG: --NAME: bad value 'V' (MIN..MAX)" on stderr and -1.
 */
int bench_parse_u64(const char *name, const char *v, uint64_t min, uint64_t max,
		    uint64_t *out);
int bench_parse_u32(const char *name, const char *v, uint32_t min, uint32_t max,
		    uint32_t *out);
/* --cpu N: 0..CPU_SETSIZE - 1. */
int bench_parse_cpu(const char *v, int *cpu);
/* IP:PORT of option --@name. */
int bench_parse_ipv4_port(const char *name, const char *v, struct sockaddr_in *sa);

/* The options every tool has, last in its getopt_long() table. */
#define BENCH_COMMON_OPTIONS \
	{ "cpu", required_argument, NULL, 'c' }, \
	{ "json", required_argument, NULL, 'j' }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ NULL, 0, NULL, 0 }

/*
 * The command line against @lo: @tool_option(c, optarg) takes a tool's own
 * options (0, -1 said on stderr, or 1: not one of them); then --cpu N
 * (@cpu), --json FILE (@json), --help (prints @usage, exits 0). 0, or -1
 * said on stderr: a bad value, a bad option, an argument that is not one.
 */
int bench_parse_args(int argc, char **argv, const struct option *lo,
		     int (*tool_option)(int c, const char *arg),
		     void (*usage)(void), int *cpu, const char **json);

/* Pins the calling thread (and the threads it creates) to @cpu. */
int bench_pin(int cpu);

/* The --json file, stdout without one; NULL (said on stderr) if it fails. */
FILE *bench_json_open(const char *path);
void bench_json_close(FILE *f);

#endif /* BENCH_TOOL_H */
