/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_APP_CPU_H
#define SIRQ_APP_CPU_H

/*
 * Where an lcore's CPU goes: the CPU time of the threads that run its
 * work, as top -H splits it. The dispatcher (the lcore's EAL thread),
 * sirqd/N, the execution models' softirq threads (ktimers/N,
 * sirq-<vector>/N) and the threaded NAPI contexts' napi/N-I. The
 * library's threads are found by name in /proc/self/task: they start
 * and stop with the lcore and the model, and a thread gone keeps its
 * last sample, so that a split over a window stays whole.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The CPU time of each party since the lcore started; at_ns 0: none. */
struct app_cpu_split {
	uint64_t at_ns;		/* CLOCK_MONOTONIC of the sample */
	uint64_t dispatcher_ns;	/* since it entered sirq_lcore_main() */
	uint64_t sirqd_ns;
	uint64_t softirq_ns;	/* ktimers/N, sirq-<vector>/N */
	uint64_t napi_ns;	/* napi/N-I */
};

/* Library threads of one lcore remembered, those gone included. */
#define APP_CPU_MAX_THREADS 64

enum app_cpu_kind {
	APP_CPU_SIRQD,
	APP_CPU_SOFTIRQ,
	APP_CPU_NAPI,
};

struct app_cpu {
	unsigned int lcore_id;
	clockid_t dispatcher_clock;
	uint64_t dispatcher_base_ns;
	bool dispatcher_known;
	struct {
		pid_t tid;
		enum app_cpu_kind kind;
		uint64_t ns;	/* its last sample: kept once it is gone */
	} thread[APP_CPU_MAX_THREADS];
	unsigned int nb_threads;
};

/* Before the lcore is launched. */
void app_cpu_init(struct app_cpu *c, unsigned int lcore_id);

/*
 * On the dispatcher's thread, as it enters sirq_lcore_main(): its CPU
 * clock and where it starts.
 */
void app_cpu_dispatcher_started(struct app_cpu *c);

/*
 * Sample every party into @s (totals since the start). From one thread
 * at a time; reads /proc/self/task, a few hundred microseconds: not for
 * a handler's fast path.
 */
void app_cpu_sample(struct app_cpu *c, struct app_cpu_split *s);

/* A CPU-time clock's reading in ns; false if the thread is gone. */
bool app_cpu_clock_ns(clockid_t clock, uint64_t *ns);

/* The share of one CPU @ns is over @window_ns, in percent. */
double app_cpu_percent(uint64_t ns, uint64_t window_ns);

#endif /* SIRQ_APP_CPU_H */
