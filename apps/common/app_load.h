/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_APP_LOAD_H
#define SIRQ_APP_LOAD_H

/*
 * --app-load: a reproducible "user-space process" sharing each forwarding
 * lcore, for the two scenarios of docs/design.md.
 *
 * Every period it wants the CPU and keeps it for `hold` (10 ms every
 * 50 ms by default; with `random`, the gaps are drawn uniformly between
 * 0 and twice the period from a fixed seed). hold = period is a steady
 * load (the flood scenario).
 *  - poll mode: the application's slice on the lcore. While it wants the
 *    CPU, each slice does `chunk` of work and need_resched is set; the
 *    dispatcher runs between slices, as interrupts would.
 *  - irq mode: `threads` real threads pinned to the lcore's CPU at
 *    SCHED_OTHER (with `nice`); need_resched is set while two or more
 *    of them are in a burst: one runs, another is runnable and waits for
 *    the CPU, which is what the scheduler's TIF_NEED_RESCHED says of
 *    the task an interrupt lands on (issue 13: one thread running alone
 *    wants to keep the CPU, it does not ask for it).
 * With `quiet` the load never sets need_resched: a batch job that is
 * runnable but does not ask for the CPU, as the task an interrupt lands
 * on in the kernel has need_resched() clear unless the scheduler wants
 * it off the CPU (the UDP receiver of the 2016 flood problem).
 * Progress is counted in work units (a fixed computation) and CPU time.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sirq.h>

#define APP_LOAD_MAX_THREADS 16

struct app_load_spec {
	bool enabled;
	uint64_t hold_ns;
	uint64_t period_ns;
	uint64_t chunk_ns;	/* poll mode: work per slice */
	bool random;
	bool quiet;		/* never sets need_resched */
	uint32_t threads;	/* irq mode */
	int nice;		/* irq mode */
	uint64_t slice_ns;	/* irq mode: the threads' EEVDF slice, 0 = the kernel's */
	uint64_t seed;
};

void app_load_spec_default(struct app_load_spec *s);

/*
 * Parse "hold=10ms,period=50ms,random,quiet,threads=3,nice=0,slice=3ms,chunk=50us,seed=1"
 * (any subset, any order) over @s. "off" disables. 0 or -1 with a message
 * naming the bad item in @err.
 */
int app_load_parse(const char *text, struct app_load_spec *s, char *err,
		   size_t len);

/* One lcore's load. */
struct app_load {
	struct app_load_spec spec;
	struct sirq_cpu *cpu;
	unsigned int lcore_id;
	enum sirq_mode mode;
	uint64_t rng;
	uint64_t start_ns;

	/* poll mode: owned by the lcore's thread */
	bool wanting;
	uint64_t hold_until_ns;
	uint64_t next_burst_ns;

	/* irq mode */
	pthread_t thread[APP_LOAD_MAX_THREADS];
	uint32_t nb_threads;
	uint32_t in_burst;	/* threads in a burst now */
	uint32_t next_stream;	/* PRNG stream of the next thread */
	uint32_t stop;
	uint64_t slice_taken_ns;	/* the slice the kernel reports back */

	/* progress, read by the report */
	uint64_t work_units;
	uint64_t busy_ns;	/* CPU time spent on work */
	uint64_t bursts;
};

void app_load_init(struct app_load *l, const struct app_load_spec *spec,
		   struct sirq_cpu *cpu, unsigned int lcore_id,
		   enum sirq_mode mode);

/* poll mode: the sirq_app_fn_t of the lcore (arg: struct app_load). */
void app_load_slice(struct sirq_lcore *lc, void *arg);

/* irq mode: start and stop the threads. 0 or negative errno. */
int app_load_start(struct app_load *l);
void app_load_stop(struct app_load *l);

/* The JSON object of one lcore's load, over @elapsed_ns. */
void app_load_json(FILE *f, const struct app_load *l, uint64_t elapsed_ns);

uint64_t app_now_ns(void);

#endif /* SIRQ_APP_LOAD_H */
