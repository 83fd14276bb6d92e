/* SPDX-License-Identifier: BSD-3-Clause */

#include "bench_tool.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <inttypes.h>
#include <sched.h>
#include <string.h>

/* One work step: a multiply-add the compiler keeps. */
#define LCG_MUL 6364136223846793005ULL
#define LCG_ADD 1442695040888963407ULL

volatile sig_atomic_t bench_stop;
static _Thread_local volatile uint64_t work_sink;

static void
on_signal(int sig)
{
	(void)sig;
	bench_stop = 1;
}

void
bench_catch_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

uint64_t
bench_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * BENCH_NS_PER_S + (uint64_t)ts.tv_nsec;
}

void
bench_sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / BENCH_NS_PER_S),
		.tv_nsec = (long)(t % BENCH_NS_PER_S),
	};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

void
bench_work(uint64_t steps)
{
	uint64_t x = work_sink;

	while (steps-- != 0)
		x = x * LCG_MUL + LCG_ADD;
	work_sink = x;
}

int
bench_parse_u64(const char *name, const char *v, uint64_t min, uint64_t max,
		uint64_t *out)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || *v == '\0' || *v == '-' ||
	    n < min || n > max) {
		fprintf(stderr, "%s: --%s: bad value '%s' (%" PRIu64 "..%" PRIu64 ")\n",
			bench_prog, name, v, min, max);
		return -1;
	}
	*out = n;
	return 0;
}

int
bench_parse_u32(const char *name, const char *v, uint32_t min, uint32_t max,
		uint32_t *out)
{
	uint64_t n;

	if (bench_parse_u64(name, v, min, max, &n) != 0)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

int
bench_parse_cpu(const char *v, int *cpu)
{
	uint32_t n;

	if (bench_parse_u32("cpu", v, 0, CPU_SETSIZE - 1, &n) != 0)
		return -1;
	*cpu = (int)n;
	return 0;
}

int
bench_parse_ipv4_port(const char *name, const char *v, struct sockaddr_in *sa)
{
	char buf[64], port_name[64], *colon;
	uint32_t port;

	if (strlen(v) >= sizeof(buf) || (colon = strrchr(strcpy(buf, v), ':')) == NULL) {
		fprintf(stderr, "%s: --%s: bad value '%s' (IP:PORT)\n", bench_prog,
			name, v);
		return -1;
	}
	*colon = '\0';
	if (inet_pton(AF_INET, buf, &sa->sin_addr) != 1) {
		fprintf(stderr, "%s: --%s: bad address '%s' in '%s'\n", bench_prog,
			name, buf, v);
		return -1;
	}
	snprintf(port_name, sizeof(port_name), "%s port", name);
	if (bench_parse_u32(port_name, colon + 1, 1, UINT16_MAX, &port) != 0)
		return -1;
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return 0;
}

static int
common_option(int c, char **argv, void (*usage)(void), int *cpu,
	      const char **json)
{
	switch (c) {
	case 'c':
		return bench_parse_cpu(optarg, cpu);
	case 'j':
		*json = optarg;
		return 0;
	case 'h':
		usage();
		exit(0);
	default:
		fprintf(stderr, "%s: bad option '%s'; see --help\n", bench_prog,
			argv[optind - 1]);
		return -1;
	}
}

int
bench_parse_args(int argc, char **argv, const struct option *lo,
		 int (*tool_option)(int c, const char *arg),
		 void (*usage)(void), int *cpu, const char **json)
{
	int c, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1 && ret == 0) {
		ret = tool_option(c, optarg);
		if (ret == 1)
			ret = common_option(c, argv, usage, cpu, json);
	}
	if (ret != 0)
		return -1;
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'; see --help\n",
			bench_prog, argv[optind]);
		return -1;
	}
	return 0;
}

int
bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		fprintf(stderr, "%s: --cpu %d: %s\n", bench_prog, cpu, strerror(errno));
		return -1;
	}
	return 0;
}

FILE *
bench_json_open(const char *path)
{
	FILE *f;

	if (path == NULL)
		return stdout;
	f = fopen(path, "w");
	if (f == NULL)
		fprintf(stderr, "%s: --json %s: %s\n", bench_prog, path, strerror(errno));
	return f;
}

void
bench_json_close(FILE *f)
{
	if (f != stdout)
		fclose(f);
}
