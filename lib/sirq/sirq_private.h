/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_PRIVATE_H
#define SIRQ_PRIVATE_H

/*
 * Internal to libsirq: the per-CPU state and the policy interface.
 * Not installed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sirq_engine.h"

#define SIRQ_CACHE_LINE 64
#define SIRQ_NAME_LEN 16
#define SIRQ_CPU_NAME_LEN 32

#define sirq_likely(x) __builtin_expect(!!(x), 1)
#define sirq_unlikely(x) __builtin_expect(!!(x), 0)

/* Tasklet lists: index 0 feeds HI, index 1 feeds TASKLET. */
enum sirq_tasklet_list {
	SIRQ_TASKLET_LIST_HI = 0,
	SIRQ_TASKLET_LIST_NORMAL,
	SIRQ_TASKLET_LIST_MAX,
};

struct sirq_action {
	sirq_handler_t handler;
	void *arg;
	char name[SIRQ_NAME_LEN];
};

/* kicinski's window (sirq_policy.c). */
struct sirq_kicinski_state {
	uint64_t window_end;		/* overload_limit; 0 = no window open */
	uint64_t stale_end;		/* of a window closed by the worker going idle */
};

/*
 * One CPU. Data is CPU local, as in kernel/softirq.c: the first cache line
 * is what raisers on other threads touch; everything after it is owned by
 * the holder of the execution lock (dispatcher or worker), except the
 * worker state and the wake-up counters, which are atomics.
 */
struct sirq_cpu {
	/* Written by any raising thread. */
	uint32_t pending;
	uint32_t need_resched;
	uint32_t worker_state;			/* enum sirq_worker_state */
	/*
	 * Set with every idle-to-runnable transition, taken by the worker's
	 * next pass or by its going idle: which passes were woken and which
	 * continued (stats.worker_continuations).
	 */
	uint32_t worker_woken;
	struct sirq_tasklet *tasklets[SIRQ_TASKLET_LIST_MAX];
	/*
	 * Vectors that go to an attached softirq thread under the model,
	 * and the thread (lead vector) of each: written under the lock,
	 * read by raisers.
	 */
	uint32_t thread_mask;
	uint8_t thread_of[SIRQ_MAX_VECTORS];

	/* First raise since the vector last ran; 0 = none recorded. */
	uint64_t raise_ns[SIRQ_MAX_VECTORS] __attribute__((aligned(SIRQ_CACHE_LINE)));

	/*
	 * Softirq threads (sirq_thread_*()): state per thread, by lead
	 * vector (enum sirq_worker_state; parked = not attached), which
	 * raisers move from idle to runnable; the vectors of each; the
	 * attached ones; the vectors a thread runs without the BH lock right
	 * now (do_softirq() leaves them alone).
	 */
	uint32_t thread_state[SIRQ_MAX_VECTORS] __attribute__((aligned(SIRQ_CACHE_LINE)));
	uint32_t thread_vecs[SIRQ_MAX_VECTORS];
	uint32_t threads_attached;
	uint32_t unlocked_running;
	struct sirq_thread_ops thread_ops;

	/* Execution lock: token of the owning thread, 0 when free. */
	uintptr_t lock_owner __attribute__((aligned(SIRQ_CACHE_LINE)));
	/* sirq_bh_disable() nesting of the lock owner. */
	unsigned int bh_depth;
	/*
	 * The outermost sirq_bh_disable() took the lock; false when it found
	 * the lock held already (a "hardirq", the worker, a tasklet's
	 * thread), whose holder lets go of it and runs what is pending.
	 */
	bool bh_took_lock;
	/* A pass of the loop is running on the lock owner (in_serving_softirq). */
	bool serving;
	/*
	 * The policy's irq_raise_mask vectors raised outside a pass since
	 * the last irq_exit(), by a "hardirq" (under rt the NIC's interrupt,
	 * whose threaded handler runs the pass); a handler's own raise
	 * (NAPI's repoll) is not one. Consumed by irq_exit().
	 */
	uint32_t irq_raised;
	/*
	 * Threads waiting for the lock, in line: each takes the next ticket
	 * and gets the lock in ticket order; lock_served is the ticket whose
	 * turn it is. Nobody waits when the two are equal.
	 */
	uint32_t lock_next;
	uint32_t lock_served;
	/*
	 * A holder of the lock may be throttled for the rest of its period
	 * (the binding runs a SCHED_DEADLINE softirq thread): waiting turns
	 * sleep instead of yielding, so that a wait does not burn the CPU
	 * the others need until the holder's next period.
	 */
	uint32_t lock_waits_sleep;
	/*
	 * sirq_cpu_set_stopping(): every pass ends at its next vector
	 * boundary, as for a lock waiter. Beside the tickets: the pass reads
	 * them together, one cache line.
	 */
	bool stopping;
	/*
	 * Threads on another CPU (ops.remote_caller) holding or waiting for
	 * the lock: none while the CPU runs, which refuses them; one that
	 * took the lock before stops the CPU for as long as it keeps it,
	 * and the dispatcher counts that time (stats.remote_hold) from
	 * remote_since, its first look that found the lock so taken.
	 * holder_remote: the holder is one of them (its unlock drops it).
	 */
	uint32_t remote_claims;
	bool holder_remote;
	uint64_t remote_since;

	/* The policy's own state (struct sirq_policy's hooks own it). */
	union {
		struct sirq_kicinski_state kicinski;
	} pstate;

	/* The lock was taken by sirq_irq_enter(); sirq_irq_exit() drops it. */
	bool hardirq;

	const struct sirq_policy *policy;
	uint64_t tick_ns;			/* 0 = exact time */
	uint64_t max_time_span;			/* params.max_time_ns, in ticks */
	struct sirq_params params;
	struct sirq_ops ops;

	struct sirq_action action[SIRQ_MAX_VECTORS];
	/* Vectors the layer above runs itself: sirq_register() refuses them. */
	uint32_t owned;
	/* Vectors registered SIRQ_VEC_BH_SAFE. */
	uint32_t bh_safe;

	struct sirq_cpu_conf conf;
	char name[SIRQ_CPU_NAME_LEN];

	struct sirq_stats stats __attribute__((aligned(SIRQ_CACHE_LINE)));
} __attribute__((aligned(SIRQ_CACHE_LINE)));

/*
 * An overload policy: data plus the decisions that differ between the
 * kernel versions. Every callback runs with the execution lock held.
 */
struct sirq_policy {
	const char *name;
	/*
	 * ksoftirqd_should_handle(): leave @pending to the worker instead of
	 * running it here? @now_j is the quantised time; @from_irq: asked
	 * at the dispatcher's irq_exit(), not at a bottom-half enable.
	 */
	bool (*worker_should_handle)(struct sirq_cpu *cpu, uint32_t pending,
				     uint64_t now_j, bool from_irq);
	/*
	 * The same decision as a question, without its side effects
	 * (counters, closing a window), from any thread: would @pending be
	 * left to the worker at @now_j?
	 */
	bool (*would_defer)(const struct sirq_cpu *cpu, uint32_t pending,
			    uint64_t now_j, bool from_irq);
	/*
	 * Test the time and restart limits before need_resched() when a
	 * pass looks for more work (patch 2 of the Dec 2022 set); the
	 * kernels before and since test need_resched() before the restart
	 * count.
	 */
	bool limits_before_need_resched;
	/* May need_resched() end a pass in @ctx that still has @pending? */
	bool (*need_resched_yields)(const struct sirq_cpu *cpu,
				    enum sirq_ctx ctx, uint32_t pending);
	/*
	 * Optional: the softirq thread (its lead vector) that runs @vec
	 * under this model, or -1 for none (the worker and the dispatcher).
	 */
	int (*thread_of)(unsigned int vec);
	/* Vectors that run without the BH lock in their thread, of @safe. */
	uint32_t (*bh_safe)(uint32_t safe);
	/*
	 * Vectors whose raise outside a pass is noted in irq_raised for
	 * would_defer() (SIRQ_POLICY_RT: the interrupt's own NET_RX/NET_TX
	 * put its irq thread in a pass); 0 for the others.
	 */
	uint32_t irq_raise_mask;
	/* Optional: a pass ended with work left, for @why, at @now_j. */
	void (*work_left)(struct sirq_cpu *cpu, enum sirq_exit why,
			  uint64_t now_j);
	/* Optional: the worker found nothing to do and goes idle. */
	void (*worker_idle)(struct sirq_cpu *cpu);
	/* Optional: the parameters were (re)applied: forget the state. */
	void (*reset)(struct sirq_cpu *cpu);
};

extern const struct sirq_policy *const sirq_policies[SIRQ_POLICY_MAX];

/* Helpers shared by the engine's files. */

static inline uint64_t
sirq_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Copy a block of counters for another thread, each read atomically. */
static inline void
sirq_counters_copy(void *dst, const void *src, size_t bytes)
{
	const uint64_t *s = src;
	uint64_t *d = dst;
	size_t i;

	for (i = 0; i < bytes / sizeof(uint64_t); i++)
		d[i] = sirq_load(&s[i]);
}

/* Counter with one writer at a time (the lock holder, or the dispatcher). */
static inline void
sirq_stat_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

/* Counter with concurrent writers. */
static inline void
sirq_stat_add_atomic(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static inline bool
sirq_worker_runnable(const struct sirq_cpu *cpu)
{
	return __atomic_load_n(&cpu->worker_state, __ATOMIC_ACQUIRE) ==
		SIRQ_WORKER_RUNNABLE;
}

/*
 * The calling thread's token, as the execution lock records its owner.
 * initial-exec: the default model of a shared object calls
 * __tls_get_addr() on every access, which was 6.5% of the forwarding
 * path (sirq_tx's context check, once per packet). One byte of static
 * TLS also fits glibc's surplus when libsirq is dlopen()ed.
 */
#define SIRQ_TLS_IE __attribute__((tls_model("initial-exec")))
extern _Thread_local char sirq_thread_token SIRQ_TLS_IE;

/*
 * The end of the calling thread's next round, when its CPU time is
 * bounded (a SCHED_DEADLINE softirq thread's runtime left): NET_RX ends
 * its run before a poll that its last poll's time says would pass
 * end_ns, and leaves that time in step_ns. Time on the CPU's clock
 * (sirq_now()); end_ns 0: no bound. Thread-local, set and read only by
 * the thread that runs the round.
 */
struct sirq_round_limit {
	uint64_t end_ns;
	uint64_t step_ns;
};
extern _Thread_local struct sirq_round_limit sirq_round_limit SIRQ_TLS_IE;

/* Does this thread hold @cpu's execution lock (in a handler, or bh off)? */
static inline bool
sirq_exec_lock_is_mine(const struct sirq_cpu *cpu)
{
	return __atomic_load_n(&cpu->lock_owner, __ATOMIC_RELAXED) ==
		(uintptr_t)&sirq_thread_token;
}

/*
 * Does a thread wait for @cpu's lock (sirq_bh_disable(), a parameter
 * change)? Then the lock is theirs when it is next dropped: a pass ends
 * at its next vector boundary, and whoever only tries the lock leaves it.
 */
static inline bool
sirq_exec_lock_contended(const struct sirq_cpu *cpu)
{
	return __atomic_load_n(&cpu->lock_next, __ATOMIC_RELAXED) !=
		__atomic_load_n(&cpu->lock_served, __ATOMIC_RELAXED);
}

/*
 * Does the pass end at this vector boundary: a thread waits for the lock,
 * or the CPU is stopping?
 */
static inline bool
sirq_pass_cut(const struct sirq_cpu *cpu)
{
	return sirq_exec_lock_contended(cpu) ||
		__atomic_load_n(&cpu->stopping, __ATOMIC_RELAXED);
}

/* The token of the thread holding @cpu's execution lock; 0 when free. */
static inline uintptr_t
sirq_exec_lock_owner(const struct sirq_cpu *cpu)
{
	return __atomic_load_n(&cpu->lock_owner, __ATOMIC_SEQ_CST);
}

/* The calling thread's token. */
static inline uintptr_t
sirq_self_token(void)
{
	return (uintptr_t)&sirq_thread_token;
}

/*
 * The CPU's clock, ops.clock_ns: the TSC on an lcore, the simulated
 * clock in sirq-sim, the fake one in the unit tests.
 */
static inline uint64_t
sirq_now(const struct sirq_cpu *cpu)
{
	return cpu->ops.clock_ns(cpu->ops.ctx);
}

uint64_t sirq_jiffies_now(const struct sirq_cpu *cpu);
uint64_t sirq_span(const struct sirq_cpu *cpu, uint64_t ns);

void sirq_pending_drop(struct sirq_cpu *cpu, uint32_t mask);
void sirq_irq_leave(struct sirq_cpu *cpu);
bool sirq_inline_wanted(const struct sirq_cpu *cpu);

void sirq_tasklet_action(struct sirq_cpu *cpu, void *arg);
void sirq_exec_lock(struct sirq_cpu *cpu);
void sirq_exec_unlock(struct sirq_cpu *cpu);
int sirq_register_owned(struct sirq_cpu *cpu, unsigned int vec,
			sirq_handler_t handler, void *arg);

/*
 * The binding's switch for lock_waits_sleep, and a deadline thread's
 * round limit (sirq_worker.h declares these for the binding, which does
 * not include this header).
 */
void sirq_cpu_lock_waits_sleep(struct sirq_cpu *cpu, bool on);
bool sirq_cpu_lock_waits_sleeping(const struct sirq_cpu *cpu);
void sirq_cpu_round_limit(const struct sirq_cpu *cpu, uint64_t left_ns);
uint64_t sirq_round_step_ns(void);

#endif /* SIRQ_PRIVATE_H */
