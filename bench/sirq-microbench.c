/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Dispatcher cost, in cycles and nanoseconds, next to a direct call:
 *  - call:          a direct (non-inlined) call of an empty handler;
 *  - irq_exit-idle: sirq_irq_exit() with nothing pending, the cost the
 *                   poll-mode dispatcher pays on every empty iteration;
 *  - raise+run:     sirq_raise_irqoff() then sirq_irq_exit() running the
 *                   same empty handler: one "hardirq" raise to handler,
 *                   with latency and time accounting on.
 * Each is the median of several rounds of many iterations.
 *
 * The engine's sirq.* trace points (-Dtracepoints=true) are in the last
 * case four times (raise, handler entry and exit, pass end) and disabled
 * unless EAL enables them: `--eal --no-huge --no-pci --trace=sirq.*`
 * hands what follows --eal to rte_eal_init(), to time them enabled.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_trace.h>
#include <rte_trace_point.h>

#include <sirq.h>

#define ITERATIONS	2000000u	/* per round: long enough to hide rdtsc */
#define ROUNDS		9u		/* odd, for a true median */
#define CALIBRATE_NS	100000000ull	/* 100 ms to measure the TSC rate */

static double tsc_per_ns;
static uint64_t ns_mult;		/* ns = tsc * ns_mult >> NS_SHIFT */
#define NS_SHIFT 24

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
calibrate_tsc(void)
{
	uint64_t t0 = mono_ns(), c0 = __rdtsc(), t1;

	do {
		t1 = mono_ns();
	} while (t1 - t0 < CALIBRATE_NS);
	tsc_per_ns = (double)(__rdtsc() - c0) / (double)(t1 - t0);
	ns_mult = (uint64_t)((double)(1u << NS_SHIFT) / tsc_per_ns);
}

/* The engine's clock as a binding would provide it: TSC, multiply, shift. */
static uint64_t
tsc_clock_ns(void *ctx)
{
	(void)ctx;
	return (uint64_t)(((unsigned __int128)__rdtsc() * ns_mult) >> NS_SHIFT);
}

static void
wake_nobody(void *ctx)
{
	(void)ctx;
}

static unsigned long handler_runs;

static __attribute__((noinline)) void
empty_handler(struct sirq_cpu *cpu, void *arg)
{
	(void)cpu;
	(void)arg;
	handler_runs++;
	__asm__ volatile("" ::: "memory");
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum bench_case { CASE_CALL, CASE_IDLE, CASE_RAISE_RUN, CASE_MAX };

static const char *const case_names[CASE_MAX] = {
	[CASE_CALL] = "direct call",
	[CASE_IDLE] = "irq_exit, nothing pending",
	[CASE_RAISE_RUN] = "raise + irq_exit + handler",
};

static double
round_cycles(struct sirq_cpu *cpu, enum bench_case c)
{
	void (*volatile fn)(struct sirq_cpu *, void *) = empty_handler;
	uint64_t start;
	unsigned int i;

	start = __rdtsc();
	for (i = 0; i < ITERATIONS; i++) {
		switch (c) {
		case CASE_CALL:
			fn(cpu, NULL);
			break;
		case CASE_IDLE:
			sirq_irq_exit(cpu);
			break;
		case CASE_RAISE_RUN:
			sirq_raise_irqoff(cpu, SIRQ_NET_RX);
			sirq_irq_exit(cpu);
			break;
		default:
			break;
		}
	}
	return (double)(__rdtsc() - start) / ITERATIONS;
}

/* "not compiled", "disabled" or "enabled": the sirq.* trace points. */
static const char *
tracepoints_state(void)
{
	rte_trace_point_t *tp = rte_trace_point_lookup("sirq.softirq.entry");

	if (tp == NULL)
		return "not compiled";
	return rte_trace_point_is_enabled(tp) ? "enabled" : "disabled";
}

static void
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--json FILE] [--eal EAL-ARGS...]\n", prog);
}

int
main(int argc, char **argv)
{
	struct sirq_cpu_conf conf = { .name = "bench" };
	double cycles[CASE_MAX], r[ROUNDS];
	const char *json = NULL;
	struct sirq_cpu *cpu;
	unsigned int c, k;
	bool eal = false;
	int i;
	FILE *f;

	for (i = 1; i < argc && !eal; i++) {
		if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
			json = argv[++i];
		} else if (strcmp(argv[i], "--eal") == 0) {
			/* EAL's argv: the program's name, then what follows. */
			argv[i] = argv[0];
			if (rte_eal_init(argc - i, argv + i) < 0) {
				fprintf(stderr, "sirq-microbench: EAL initialisation failed: %s\n",
					rte_strerror(rte_errno));
				return 1;
			}
			eal = true;
		} else {
			usage(argv[0]);
			return 2;
		}
	}

	calibrate_tsc();
	sirq_params_default(&conf.params);
	conf.ops.clock_ns = tsc_clock_ns;
	conf.ops.wake_worker = wake_nobody;
	cpu = sirq_cpu_create(&conf);
	if (cpu == NULL || sirq_register(cpu, SIRQ_NET_RX, empty_handler,
					 NULL, NULL) != 0) {
		fprintf(stderr, "sirq-microbench: engine set-up failed: %s\n",
			strerror(errno));
		return 1;
	}

	for (c = 0; c < CASE_MAX; c++) {
		round_cycles(cpu, (enum bench_case)c);	/* warm up */
		for (k = 0; k < ROUNDS; k++)
			r[k] = round_cycles(cpu, (enum bench_case)c);
		qsort(r, ROUNDS, sizeof(r[0]), cmp_double);
		cycles[c] = r[ROUNDS / 2];
	}

	printf("TSC %.3f GHz, %u rounds x %u iterations, median; "
	       "sirq.* trace points %s\n", tsc_per_ns, ROUNDS, ITERATIONS,
	       tracepoints_state());
	printf("%-28s %10s %10s %8s\n", "case", "cycles", "ns", "x call");
	for (c = 0; c < CASE_MAX; c++)
		printf("%-28s %10.1f %10.2f %8.1f\n", case_names[c], cycles[c],
		       cycles[c] / tsc_per_ns, cycles[c] / cycles[CASE_CALL]);

	if (json != NULL) {
		f = fopen(json, "w");
		if (f == NULL) {
			fprintf(stderr, "sirq-microbench: cannot write %s: %s\n",
				json, strerror(errno));
			return 1;
		}
		fprintf(f, "{\"tsc_ghz\": %.4f, \"tracepoints\": \"%s\", "
			"\"cases\": {", tsc_per_ns, tracepoints_state());
		for (c = 0; c < CASE_MAX; c++)
			fprintf(f, "%s\"%s\": {\"cycles\": %.2f, \"ns\": %.3f}",
				c ? ", " : "", case_names[c], cycles[c],
				cycles[c] / tsc_per_ns);
		fprintf(f, "}}\n");
		fclose(f);
	}
	sirq_cpu_free(cpu);
	if (eal)
		rte_eal_cleanup();	/* saves the trace, if any */
	return handler_runs > 0 ? 0 : 1;
}
