/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_TEST_HARNESS_H
#define SIRQ_TEST_HARNESS_H

/*
 * Test harness for the libsirq engine: one CPU on a fake clock that the
 * test sets and that handlers advance to simulate work, a worker whose
 * wake-ups are counted, and "probe" handlers that record what ran, in
 * which order, and can raise again or use up time.
 *
 * The test thread plays every role (dispatcher and worker) unless a test
 * starts real threads; sirq_worker_run() is then called by the test where
 * the worker thread would get the CPU.
 */

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

#include <criterion/criterion.h>
/*
 * Criterion 2.4.1's C gt() passes on equality (it is !lt()): write
 * ne(..., 0) or a plain comparison instead.
 */
#include <criterion/new/assert.h>

#include "sirq_engine.h"

#define US(x) ((uint64_t)(x) * 1000ULL)
#define MS(x) ((uint64_t)(x) * 1000ULL * 1000ULL)
#define SEC(x) ((uint64_t)(x) * 1000ULL * 1000ULL * 1000ULL)

/*
 * Fake time starts here. One second is a whole number of ticks at every
 * tick_hz the tests use (100, 250): T0 is itself a tick boundary.
 */
#define T0 SEC(1)

/* Vectors free for applications. */
#define VEC_APP0 SIRQ_NR_KERNEL_VECTORS
#define VEC_APP1 (SIRQ_NR_KERNEL_VECTORS + 1)
#define VEC_APP2 (SIRQ_NR_KERNEL_VECTORS + 2)
#define VEC_APP3 (SIRQ_NR_KERNEL_VECTORS + 3)

/* probe.reraise: raise itself again on every run. */
#define PROBE_FOREVER UINT32_MAX

/* Length of the run-order log. */
#define HARNESS_LOG_LEN 256

/* Options of harness_init_params(). */
enum harness_flags {
	HARNESS_FAKE_CLOCK = 0,
	HARNESS_REAL_CLOCK = 1 << 0,	/* CLOCK_MONOTONIC instead */
	HARNESS_NO_WORKER = 1 << 1,	/* ops.wake_worker = NULL */
};

struct harness;
struct probe;

/* Extra action of a probe handler, run after the probe's bookkeeping. */
typedef void (*probe_hook_t)(struct probe *p);

/* A registered vector whose handler records its runs. */
struct probe {
	struct harness *h;
	unsigned int vec;
	unsigned int runs;		/* handler calls */
	uint32_t reraise;		/* raise itself again this many times */
	uint64_t work_ns;		/* fake clock advance per run */
	uint32_t raise_once;		/* vectors to raise on the first run */
	probe_hook_t hook;
	void *hook_arg;
};

struct harness {
	struct sirq_cpu *cpu;
	uint64_t now;			/* the fake clock, ns */
	unsigned int clock_reads;	/* ops.clock_ns calls, fake or real */
	unsigned int wakes;		/* ops.wake_worker calls */
	unsigned int kicks;		/* ops.kick calls */
	bool app_wants_cpu;		/* what ops.need_resched answers */
	bool sched_marks_worker;	/* what ops.worker_need_resched answers */
	bool in_task;			/* what ops.in_task answers */
	int remote_caller;		/* what ops.remote_caller answers */
	/*
	 * Called once, from inside the next read of the fake clock: lets a
	 * test land an event (a raise) at an exact point inside the engine.
	 */
	void (*on_next_clock_read)(struct harness *h);
	/* ops.worker_hardirq: looks at the sources, with the lock held. */
	unsigned int hardirq_looks;
	void (*on_hardirq_look)(struct harness *h);

	/* Vectors (probes) and tasklet ids (tasklet_log) in run order. */
	unsigned int log[HARNESS_LOG_LEN];
	unsigned int nlog;

	struct probe probe[SIRQ_MAX_VECTORS];
	struct sirq_stats st;

	/* Real worker thread (harness_worker_start). */
	sem_t worker_sem;
	pthread_t worker_thread;
	bool worker_started;
};

/*
 * A tasklet that records its runs in the harness log (as @c id; use ids
 * >= SIRQ_MAX_VECTORS to tell them from vectors) and can schedule itself
 * again from its function.
 */
struct tprobe {
	struct sirq_tasklet t;
	struct harness *h;
	unsigned int id;
	unsigned int runs;
	uint32_t reschedule;		/* schedule itself again this many times */
	bool hi;			/* reschedule with sirq_tasklet_hi_schedule */
	bool resched_ret;		/* what the last reschedule returned */
};

void tprobe_init(struct tprobe *tp, struct harness *h, unsigned int id);

/* Default parameters with @p policy. */
struct sirq_params harness_params(enum sirq_policy_id policy);

/* One CPU with default parameters, @p policy, a worker and a fake clock at T0. */
void harness_init(struct harness *h, enum sirq_policy_id policy);
void harness_init_params(struct harness *h, const struct sirq_params *p,
			 unsigned int flags);
/* Stops the worker thread if started and frees the CPU. */
void harness_fini(struct harness *h);

/* The fake clock. */
void clock_set(struct harness *h, uint64_t ns);
void clock_advance(struct harness *h, uint64_t ns);
uint64_t clock_now(const struct harness *h);

/* CLOCK_MONOTONIC in ns. */
uint64_t monotonic_ns(void);

/* Register a probe handler on @p vec. */
struct probe *probe_register(struct harness *h, unsigned int vec);
/* The same with sirq_register_flags()'s @p flags (SIRQ_VEC_BH_SAFE). */
struct probe *probe_register_flags(struct harness *h, unsigned int vec,
				   uint32_t flags);

/* Fresh snapshot of the counters. */
const struct sirq_stats *stats(struct harness *h);

/*
 * Act as the worker thread until it goes idle: call sirq_worker_run()
 * until SIRQ_WORKER_SLEEP (at most @p max_calls). Returns the number of
 * softirq passes the worker ran (its pass_exit counters).
 */
unsigned int worker_run_until_sleep(struct harness *h, unsigned int max_calls);

/* Append @p id to the run-order log. */
void harness_log(struct harness *h, unsigned int id);

/*
 * A real worker thread: waits on a semaphore that ops.wake_worker posts,
 * then calls sirq_worker_run() until it says SLEEP. Stopped (parked and
 * joined) by harness_worker_stop() or harness_fini().
 */
void harness_worker_start(struct harness *h);
void harness_worker_stop(struct harness *h);

/*
 * Helpers for tests with real threads: spin (yielding) until *flag is
 * non-zero, at most @p timeout_ns of real time. Returns whether it was.
 */
bool wait_flag(const unsigned int *flag, uint64_t timeout_ns);

#endif /* SIRQ_TEST_HARNESS_H */
