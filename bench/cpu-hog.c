/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * cpu-hog: the application load of the lab's stall scenario, without DPDK,
 * for the kernel lab. The same threads as --app-load of l2fwd-sirq and
 * tcp-echo in irq mode (apps/common/app_load.c, load_thread()): N threads
 * pinned to one CPU at SCHED_OTHER; each sleeps until its next burst (gaps
 * uniform in [0, 2 period] from a fixed seed with --random, else exactly
 * one period), then keeps the CPU for --hold of its own CPU time. Prints
 * one JSON object at the end: bursts, work units and the CPU share the
 * threads got.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_random.h"
#include "bench_tool.h"

#define PROG "cpu-hog"
#define NS_PER_S BENCH_NS_PER_S
#define NS_PER_MS UINT64_C(1000000)
#define MAX_THREADS 16
/* One work unit: the computation of app_load.c's work_unit(). */
#define WORK_UNIT_STEPS 256

struct opts {
	uint32_t threads;
	uint64_t hold_ns;
	uint64_t period_ns;
	bool random;
	uint64_t seed;
	uint32_t duration_s;
	int cpu;
	const char *json;
};

/* The defaults of the policy lab's stall scenario (bench/policy-lab.sh). */
static struct opts o = {
	.threads = 6,
	.hold_ns = 10 * NS_PER_MS,
	.period_ns = 40 * NS_PER_MS,
	.random = true,
	.seed = 1,
	.duration_s = 10,
	.cpu = -1,
};

const char bench_prog[] = PROG;
static uint64_t work_units, busy_ns, bursts;
static uint32_t next_stream;

static uint64_t
work_for(uint64_t ns)
{
	uint64_t end = bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns, units = 0;

	do {
		bench_work(WORK_UNIT_STEPS);
		units++;
	} while (bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	return units;
}

static void *
hog(void *arg)
{
	uint64_t rng = o.seed ^ ((uint64_t)o.cpu << 32) ^
		__atomic_fetch_add(&next_stream, 1, __ATOMIC_RELAXED);
	uint64_t end = *(uint64_t *)arg, next = bench_clock_ns(CLOCK_MONOTONIC);

	while (!bench_stop) {
		next += o.random ? app_random(&rng) % (2 * o.period_ns + 1) : o.period_ns;
		if (next >= end)
			break;
		bench_sleep_until(next);
		if (bench_stop)
			break;
		__atomic_fetch_add(&bursts, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&work_units, work_for(o.hold_ns), __ATOMIC_RELAXED);
		__atomic_fetch_add(&busy_ns, o.hold_ns, __ATOMIC_RELAXED);
		if (bench_clock_ns(CLOCK_MONOTONIC) > next)
			next = bench_clock_ns(CLOCK_MONOTONIC);
	}
	return NULL;
}

static void
usage(void)
{
	printf("Usage: " PROG " --cpu N [options]\n"
	       "Threads on CPU N that each keep it for --hold at moments --period apart\n"
	       "(the application load of the lab's stall scenario, as --app-load of\n"
	       "l2fwd-sirq in irq mode); a JSON object of their progress at the end.\n"
	       "  --cpu N          CPU of every thread (required)\n"
	       "  --threads N      1..%u (default: 6)\n"
	       "  --hold MS        CPU time kept per burst, ms (default: 10)\n"
	       "  --period MS      mean gap between a thread's bursts, ms (default: 40)\n"
	       "  --fixed          gaps of exactly one period (default: random, uniform\n"
	       "                   in [0, 2 period], seeded)\n"
	       "  --seed N         (default: 1)\n"
	       "  --duration S     seconds to run (default: 10)\n"
	       "  --json FILE      the JSON object here instead of stdout\n"
	       "  --help           this text\n", MAX_THREADS);
}

static int
tool_option(int c, const char *arg)
{
	uint64_t v = 0;
	int ret = 0;

	switch (c) {
	case 'n':
		ret = bench_parse_u64("threads", arg, 1, MAX_THREADS, &v);
		o.threads = (uint32_t)v;
		break;
	case 'H':
		ret = bench_parse_u64("hold", arg, 1, 10000, &v);
		o.hold_ns = v * NS_PER_MS;
		break;
	case 'p':
		ret = bench_parse_u64("period", arg, 1, 100000, &v);
		o.period_ns = v * NS_PER_MS;
		break;
	case 'f':
		o.random = false;
		break;
	case 's':
		ret = bench_parse_u64("seed", arg, 0, UINT32_MAX, &o.seed);
		break;
	case 't':
		ret = bench_parse_u64("duration", arg, 1, 86400, &v);
		o.duration_s = (uint32_t)v;
		break;
	default:
		return 1;
	}
	return ret;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "threads", required_argument, NULL, 'n' },
		{ "hold", required_argument, NULL, 'H' },
		{ "period", required_argument, NULL, 'p' },
		{ "fixed", no_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 't' },
		BENCH_COMMON_OPTIONS,
	};

	if (bench_parse_args(argc, argv, lo, tool_option, usage, &o.cpu,
			     &o.json) != 0)
		return -1;
	if (o.cpu < 0) {
		fprintf(stderr, PROG ": --cpu is required; see --help\n");
		return -1;
	}
	if (o.hold_ns > o.period_ns) {
		fprintf(stderr, PROG ": --hold %" PRIu64 " ms is longer than --period %"
			PRIu64 " ms\n", o.hold_ns / NS_PER_MS, o.period_ns / NS_PER_MS);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	uint64_t start, end;
	double secs;
	FILE *out;
	uint32_t i;
	int ret;

	if (parse_args(argc, argv) != 0)
		return BENCH_EXIT_USAGE;
	/* Threads inherit it. */
	if (bench_pin(o.cpu) != 0)
		return 1;
	bench_catch_signals();
	start = bench_clock_ns(CLOCK_MONOTONIC);
	end = start + (uint64_t)o.duration_s * NS_PER_S;
	for (i = 0; i < o.threads; i++) {
		ret = pthread_create(&t[i], NULL, hog, &end);
		if (ret != 0) {
			fprintf(stderr, PROG ": thread %u: %s\n", i, strerror(ret));
			return 1;
		}
		pthread_setname_np(t[i], "cpu-hog");
	}
	for (i = 0; i < o.threads; i++)
		pthread_join(t[i], NULL);
	secs = (double)(bench_clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	out = bench_json_open(o.json);
	if (out == NULL)
		return 1;
	fprintf(out, "{\"cpu\": %d, \"threads\": %u, \"hold_ms\": %" PRIu64
		", \"period_ms\": %" PRIu64 ", \"random\": %s, \"seconds\": %.3f"
		", \"bursts\": %" PRIu64 ", \"work_units\": %" PRIu64
		", \"work_units_per_s\": %.1f, \"cpu_share\": %.4f}\n",
		o.cpu, o.threads, o.hold_ns / NS_PER_MS, o.period_ns / NS_PER_MS,
		o.random ? "true" : "false", secs, bursts, work_units,
		(double)work_units / secs, (double)busy_ns / 1e9 / secs);
	bench_json_close(out);
	return 0;
}
