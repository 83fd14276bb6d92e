/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_H
#define SIRQ_H

/**
 * @file
 * libsirq: the Linux softirq machinery for user-space dataplanes.
 *
 * The engine declared here knows nothing about DPDK. Each CPU (a DPDK lcore
 * in the binding) owns one struct sirq_cpu: a pending mask of up to 32
 * vectors, the __do_softirq() loop with its restart and time limits, a
 * deferred worker (the user-space ksoftirqd) and the overload policy that
 * decides who runs pending work. Time, the worker wake-up and need_resched()
 * come in through struct sirq_ops, so the engine runs on a fake clock in
 * tests and under any I/O framework.
 *
 * Threads and roles, per CPU:
 *  - the dispatcher calls sirq_irq_exit() after its "hardirq" polling; only
 *    one thread may act as a CPU's dispatcher;
 *  - the worker thread calls sirq_worker_run() whenever it is woken;
 *  - any thread may call sirq_raise() and the tasklet scheduling calls.
 * Handlers of one CPU never run concurrently: the dispatcher and the worker
 * share an execution lock, and the dispatcher only ever tries it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Number of vectors per CPU; bit n of the pending mask is vector n. */
#define SIRQ_MAX_VECTORS 32

/**
 * The kernel's vectors, in the kernel's bit order (lowest runs first).
 * Vectors from SIRQ_NR_KERNEL_VECTORS up to SIRQ_MAX_VECTORS - 1 are free
 * for applications. HI and TASKLET belong to the tasklet machinery.
 */
enum sirq_vector {
	SIRQ_HI = 0,
	SIRQ_TIMER,
	SIRQ_NET_TX,
	SIRQ_NET_RX,
	SIRQ_BLOCK,
	SIRQ_IRQ_POLL,
	SIRQ_TASKLET,
	SIRQ_SCHED,
	SIRQ_HRTIMER,
	SIRQ_RCU,
	SIRQ_NR_KERNEL_VECTORS,
};

/** Bit of vector @p v in a pending or expedited mask. */
#define SIRQ_BIT(v) (UINT32_C(1) << (v))

/** The kernel's SOFTIRQ_NOW_MASK: vectors that never wait for the worker. */
#define SIRQ_NOW_MASK_DEFAULT (SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(SIRQ_TASKLET))

/** Kernel defaults (kernel/softirq.c, net/core/dev.c, the Dec 2022 patches). */
#define SIRQ_MAX_RESTART_DEFAULT 10
#define SIRQ_MAX_TIME_NS_DEFAULT (2ULL * 1000 * 1000)		/**< MAX_SOFTIRQ_TIME */
#define SIRQ_DEFER_WINDOW_NS_DEFAULT (2ULL * 1000 * 1000)	/**< SOFTIRQ_DEFER_TIME */
#define SIRQ_OVERLOAD_WINDOW_NS_DEFAULT (100ULL * 1000 * 1000)	/**< SOFTIRQ_OVERLOAD_TIME */
/**
 * CONFIG_HZ of the kernels the policies come from, as Debian and most
 * distributions build them for servers: time in 4 ms jiffies.
 */
#define SIRQ_TICK_HZ_DEFAULT 250
/** Stall threshold of the patch author's production tracker. */
#define SIRQ_STALL_THRESHOLD_NS_DEFAULT (8ULL * 1000 * 1000)

/** Who may run pending work while the worker is runnable. */
enum sirq_policy_id {
	/** Linux >= 6.5: the dispatcher always runs pending work. */
	SIRQ_POLICY_MAINLINE = 0,
	/** Linux 4.9 .. 6.4: a runnable worker gets everything not expedited. */
	SIRQ_POLICY_KSOFTIRQD,
	/** The Dec 2022 patches: the worker is respected only for a window. */
	SIRQ_POLICY_KICINSKI,
	/**
	 * Every vector deferred to the worker, with the kernel's limits:
	 * the dispatcher only notices and raises. No kernel runs this way
	 * (PREEMPT_RT runs softirqs where bottom halves are enabled again,
	 * e.g. the irq thread; threaded NAPI polls without the limits): it
	 * is the far end of "let ksoftirqd do its job". Was "threaded".
	 */
	SIRQ_POLICY_DEFERRED,
	SIRQ_POLICY_MAX,
};

/** Deprecated name of SIRQ_POLICY_DEFERRED. */
#define SIRQ_POLICY_THREADED SIRQ_POLICY_DEFERRED

/** Tunables of one CPU; sirq_params_default() gives the kernel's values. */
struct sirq_params {
	enum sirq_policy_id policy;	/**< overload policy */
	unsigned int max_restart;	/**< MAX_SOFTIRQ_RESTART, >= 1 */
	uint64_t max_time_ns;		/**< MAX_SOFTIRQ_TIME, > 0 */
	uint64_t defer_window_ns;	/**< kicinski: window after need_resched */
	uint64_t overload_window_ns;	/**< kicinski: window after exhaustion */
	uint32_t expedited_mask;	/**< SOFTIRQ_NOW_MASK */
	/**
	 * HZ: the loop's time in jiffies of 1/N s (default
	 * SIRQ_TICK_HZ_DEFAULT), and in the binding's irq mode the
	 * dispatcher's scheduler tick, one of the moments it decides again.
	 * 0: TSC-exact time, and a decision at every look of the irq-mode
	 * dispatcher (the "Gleixner" model: no jiffies anywhere).
	 */
	uint32_t tick_hz;
	uint64_t stall_threshold_ns;	/**< raise-to-run latency counted as stall */
};

/**
 * What the engine needs from its environment. All callbacks get @c ctx.
 */
struct sirq_ops {
	/** Monotonic time in nanoseconds. Required; called from any thread. */
	uint64_t (*clock_ns)(void *ctx);
	/**
	 * Make the worker thread call sirq_worker_run(). Called once per
	 * transition of the worker from idle to runnable, from the thread
	 * that woke it. Required unless the worker is never used.
	 */
	void (*wake_worker)(void *ctx);
	/**
	 * Optional: need_resched() of the dispatcher's loop: is a thread
	 * other than the one the dispatcher interrupted runnable and
	 * waiting for this CPU? ORed with sirq_set_need_resched(). Called
	 * by the dispatcher, and by any thread ending a bottom-half
	 * section: must be thread-safe. Not asked in the worker: see
	 * worker_need_resched.
	 */
	bool (*need_resched)(void *ctx);
	/**
	 * Optional: sirq_raise() made the pending mask non-empty; a
	 * dispatcher that sleeps should wake up and call sirq_irq_exit().
	 */
	void (*kick)(void *ctx);
	/**
	 * Optional: look at the sources that raise vectors (the interrupts
	 * that fire while the worker runs: the tick, a NIC queue). Called
	 * by sirq_worker_run() with the execution lock held, before it
	 * looks at the pending mask.
	 */
	void (*worker_hardirq)(void *ctx);
	/**
	 * Optional: is the calling thread this CPU's own (its dispatcher or
	 * its worker), whose per-CPU state the handlers use? The outermost
	 * sirq_bh_enable() on another thread leaves pending work to them
	 * (ops.kick) instead of running it there. NULL: every thread is.
	 */
	bool (*is_local)(void *ctx);
	/**
	 * Optional: need_resched() of the worker's passes: has the scheduler
	 * marked the worker to be switched out? In the kernel ksoftirqd's
	 * pass ends on need_resched() only when the scheduler wants another
	 * task on the CPU instead of ksoftirqd, not when an application
	 * would like the CPU. A worker thread that the OS scheduler preempts
	 * by itself needs none (NULL: never): its pass is paused, not ended.
	 */
	bool (*worker_need_resched)(void *ctx);
	/**
	 * Optional: is the calling thread, which does not hold the
	 * execution lock, in process context on this CPU (the kernel's
	 * in_task())? sirq_raise() there wakes the worker, as
	 * raise_softirq_irqoff() does outside interrupt context
	 * (!in_interrupt() -> wakeup_softirqd()), instead of kicking the
	 * dispatcher. NULL or false: the raise comes from an "interrupt"
	 * or from another CPU's thread (the kernel's IPI) and kicks.
	 */
	bool (*in_task)(void *ctx);
	void *ctx;			/**< argument of every callback */
};

/** Configuration of one CPU. */
struct sirq_cpu_conf {
	const char *name;		/**< for logs and reports; copied */
	unsigned int id;		/**< caller's identity, e.g. lcore id */
	struct sirq_params params;
	struct sirq_ops ops;
};

struct sirq_cpu;

/**
 * A vector's handler: the kernel's softirq action.
 *
 * Runs with the CPU's execution lock held, never concurrently with another
 * handler of the same CPU. It may raise vectors, including its own.
 */
typedef void (*sirq_handler_t)(struct sirq_cpu *cpu, void *arg);

/** Where a handler ran. */
enum sirq_ctx {
	SIRQ_CTX_INLINE = 0,	/**< dispatcher, or sirq_bh_enable() */
	SIRQ_CTX_WORKER,	/**< the deferred worker (sirqd) */
	SIRQ_CTX_MAX,
};

/** Why one pass of the __do_softirq() loop ended. */
enum sirq_exit {
	SIRQ_EXIT_DRAINED = 0,	/**< nothing pending any more */
	SIRQ_EXIT_RESTART,	/**< max_restart passes done */
	SIRQ_EXIT_TIME,		/**< max_time used up */
	SIRQ_EXIT_NEED_RESCHED,	/**< the application wanted the CPU */
	/**
	 * A thread waited for the execution lock: the pass handed it over
	 * at a vector boundary, with work still pending.
	 */
	SIRQ_EXIT_LOCK_WAITER,
	SIRQ_EXIT_MAX,
};

/** Why the worker was woken. */
enum sirq_wake {
	SIRQ_WAKE_RESTART = 0,	/**< a pass hit max_restart */
	SIRQ_WAKE_TIME,		/**< a pass hit max_time */
	SIRQ_WAKE_NEED_RESCHED,	/**< a pass yielded to the application */
	SIRQ_WAKE_HANDOFF,	/**< the policy hands all work to the worker */
	SIRQ_WAKE_EXPLICIT,	/**< sirq_worker_wakeup() */
	SIRQ_WAKE_RAISE,	/**< sirq_raise() in process context (ops.in_task) */
	SIRQ_WAKE_MAX,
};

/** The deferral windows of the kicinski policy. */
enum sirq_window {
	SIRQ_WINDOW_DEFER = 0,	/**< after a need_resched deferral (2 ms) */
	SIRQ_WINDOW_OVERLOAD,	/**< after time/restart exhaustion (100 ms) */
	SIRQ_WINDOW_MAX,
};

/** State of the deferred worker, as the policy sees it. */
enum sirq_worker_state {
	SIRQ_WORKER_IDLE = 0,	/**< sleeping, nothing to do */
	SIRQ_WORKER_RUNNABLE,	/**< woken and not yet idle again */
	SIRQ_WORKER_PARKED,	/**< stopped; never woken, never respected */
};

/** What the dispatcher did in one sirq_irq_exit() call. */
enum sirq_irq_exit_result {
	SIRQ_IRQ_EXIT_IDLE = 0,	/**< nothing pending */
	SIRQ_IRQ_EXIT_RAN,	/**< ran a pass inline */
	SIRQ_IRQ_EXIT_DEFERRED,	/**< left the work to the worker */
	SIRQ_IRQ_EXIT_BUSY,	/**< the worker holds the execution lock */
	SIRQ_IRQ_EXIT_BH_DISABLED, /**< bottom halves disabled on this thread */
};

/** What the worker thread should do after sirq_worker_run(). */
enum sirq_worker_status {
	SIRQ_WORKER_SLEEP = 0,	/**< went idle (a pass may have drained everything first): wait for the next wake-up */
	SIRQ_WORKER_YIELD,	/**< work remains: yield (cond_resched), call again */
	SIRQ_WORKER_BUSY,	/**< the dispatcher holds the lock: yield, call again */
	SIRQ_WORKER_EXIT,	/**< parked: leave the thread loop */
};

/** log2 latency buckets: bucket b counts latencies in [2^b, 2^(b+1)) ns. */
#define SIRQ_LAT_BUCKETS 40

/** Raise-to-run latency of one vector. */
struct sirq_latency {
	uint64_t samples;		/**< runs with a known raise time */
	uint64_t sum_ns;
	uint64_t max_ns;
	uint64_t stalls;		/**< samples >= stall_threshold_ns */
	uint64_t hist[SIRQ_LAT_BUCKETS];	/**< last bucket is open-ended */
};

/** Counters of one CPU; a snapshot from sirq_stats_get(). */
struct sirq_stats {
	/** Handler runs per vector and context (like /proc/softirqs). */
	uint64_t runs[SIRQ_MAX_VECTORS][SIRQ_CTX_MAX];
	/** Time spent in handlers, per vector and context. */
	uint64_t time_ns[SIRQ_MAX_VECTORS][SIRQ_CTX_MAX];
	/** How each pass of the loop ended, per context. */
	uint64_t pass_exit[SIRQ_EXIT_MAX][SIRQ_CTX_MAX];
	/** Idle-to-runnable transitions of the worker, by reason. */
	uint64_t wakeups[SIRQ_WAKE_MAX];
	/** Deferral windows opened (kicinski), by kind. */
	uint64_t windows_opened[SIRQ_WINDOW_MAX];
	/** Windows that ended with the dispatcher taking the work back. */
	uint64_t window_overrides;
	/** Windows closed early because the worker drained and went idle. */
	uint64_t windows_closed_idle;
	/**
	 * Dispatcher decisions that found a runnable worker whose window had
	 * been closed by going idle while its deadline was still ahead: the
	 * stale limit that would have deferred work without the close.
	 */
	uint64_t stale_windows_ignored;
	/** sirq_irq_exit() calls that left pending work to the worker. */
	uint64_t deferred_to_worker;
	/** sirq_irq_exit() calls that found the worker holding the lock. */
	uint64_t lock_busy;
	/** Raise-to-run latency per vector. */
	struct sirq_latency latency[SIRQ_MAX_VECTORS];
	/**
	 * Waits for the execution lock (sirq_bh_disable(), parameter
	 * changes) that did not get it at once: their length, from the
	 * first try to the lock.
	 */
	struct sirq_latency lock_wait;
	/**
	 * The most handler runs that one such wait saw. A waiter gets the
	 * lock at the holder's next vector boundary: 1 with one waiter.
	 */
	uint64_t lock_wait_runs_max;
};

/**
 * Fill @p p with the kernel's defaults and the build's default policy.
 */
void sirq_params_default(struct sirq_params *p);

/**
 * Check a parameter set.
 *
 * @return 0 if usable; -EINVAL otherwise (unknown policy, max_restart 0,
 *   max_time 0, tick_hz above 1e9, stall threshold 0):
 *   sirq_params_why_invalid() says which.
 */
int sirq_params_check(const struct sirq_params *p);

/**
 * Why a parameter set is refused, for an error message.
 *
 * @return NULL if sirq_params_check() accepts @p p, else a constant
 *   string naming the bad field (e.g. "max_restart is 0: ...").
 */
const char *sirq_params_why_invalid(const struct sirq_params *p);

/** Name of a policy ("mainline", ...), or NULL if @p id is unknown. */
const char *sirq_policy_name(enum sirq_policy_id id);

/**
 * Policy by name.
 *
 * "threaded", the name of "deferred" until issue 13, is still taken.
 *
 * @return the policy id, or -EINVAL if @p name names no policy.
 */
int sirq_policy_from_name(const char *name);

/** Name of a vector of @p cpu: the registered name, or the kernel's. */
const char *sirq_vector_name(const struct sirq_cpu *cpu, unsigned int vec);

/** Name of a pass exit reason, a wake-up reason, a window, a context. */
const char *sirq_exit_name(enum sirq_exit e);
const char *sirq_wake_name(enum sirq_wake w);
const char *sirq_window_name(enum sirq_window w);
const char *sirq_ctx_name(enum sirq_ctx c);

/** Bytes needed for one struct sirq_cpu (for sirq_cpu_init()). */
size_t sirq_cpu_memsize(void);

/**
 * Initialise a CPU in caller-provided memory, e.g. rte_zmalloc_socket()
 * on the lcore's socket.
 *
 * @param mem  sirq_cpu_memsize() bytes, aligned to 64.
 * @return the CPU, or NULL with errno EINVAL (bad params, missing
 *   clock_ns, misaligned memory).
 */
struct sirq_cpu *sirq_cpu_init(void *mem, const struct sirq_cpu_conf *conf);

/**
 * Allocate and initialise a CPU.
 *
 * @return the CPU, or NULL with errno EINVAL or ENOMEM.
 */
struct sirq_cpu *sirq_cpu_create(const struct sirq_cpu_conf *conf);

/** Free a CPU from sirq_cpu_create(). The worker must be parked. NULL is ok. */
void sirq_cpu_free(struct sirq_cpu *cpu);

/** The configuration given at init (name points into the CPU). */
const struct sirq_cpu_conf *sirq_cpu_conf(const struct sirq_cpu *cpu);

/**
 * Change policy and parameters of a live CPU.
 *
 * Call from the dispatcher thread, or while no dispatcher runs. Open
 * windows are closed.
 *
 * @return 0, or -EINVAL for bad parameters (nothing changed).
 */
int sirq_cpu_set_params(struct sirq_cpu *cpu, const struct sirq_params *p);

/**
 * Register the handler of a vector (the kernel's open_softirq()).
 *
 * Register before the dispatcher starts, or from the dispatcher thread.
 * An application that wants a vector of its own should take one with
 * sirq_vector_alloc() instead of choosing a number.
 *
 * @param name  short name for reports (copied, truncated to 15 chars);
 *   NULL keeps the kernel's name or "V<n>".
 * @return 0; -EINVAL if @p cpu is NULL, @p vec >= SIRQ_MAX_VECTORS or
 *   @p handler is NULL; -EBUSY for HI and TASKLET, which the tasklet
 *   machinery owns, and for the vectors a binding runs itself (on a DPDK
 *   lcore: TIMER, NET_RX and NET_TX).
 */
int sirq_register(struct sirq_cpu *cpu, unsigned int vec,
		  sirq_handler_t handler, void *arg, const char *name);

/**
 * Take a free application vector (one past the kernel's ten, with no
 * handler yet) and register @p handler on it.
 *
 * Same context as sirq_register(). Vectors are never given back: take
 * them at start.
 *
 * @param name  short name for reports (copied, truncated to 15 chars);
 *   NULL keeps "V<n>".
 * @return the vector number (>= SIRQ_NR_KERNEL_VECTORS), to pass to
 *   sirq_raise(); -EINVAL if @p cpu or @p handler is NULL; -ENOSPC when
 *   all SIRQ_MAX_VECTORS are taken.
 */
int sirq_vector_alloc(struct sirq_cpu *cpu, sirq_handler_t handler, void *arg,
		      const char *name);

/**
 * Mark a vector pending (raise_softirq()). Safe from any thread.
 *
 * The time of the first raise since the vector last ran is kept for the
 * raise-to-run latency. From process context on the CPU (ops.in_task) an
 * idle worker is woken (SIRQ_WAKE_RAISE), as raise_softirq() does there;
 * otherwise, if the mask was empty, ops.kick is called.
 *
 * @return 0, or -EINVAL if @p vec has no handler (nothing is marked).
 */
int sirq_raise(struct sirq_cpu *cpu, unsigned int vec);

/**
 * Mark a vector pending without calling ops.kick (raise_softirq_irqoff()).
 *
 * For the dispatcher's own polling and for handlers, which run on a
 * thread that looks at the pending mask anyway. Safe from any thread.
 *
 * @return 0, or -EINVAL if @p vec has no handler.
 */
int sirq_raise_irqoff(struct sirq_cpu *cpu, unsigned int vec);

/** The pending mask now (a racy snapshot). */
uint32_t sirq_pending(const struct sirq_cpu *cpu);

/**
 * Set or clear the application's need_resched flag. Any thread.
 * ORed with ops.need_resched.
 */
void sirq_set_need_resched(struct sirq_cpu *cpu, bool want_cpu);

/**
 * Does the application want the CPU now: the flag of
 * sirq_set_need_resched() or ops.need_resched. Any thread.
 */
bool sirq_need_resched(const struct sirq_cpu *cpu);

/**
 * The dispatcher's irq_enter(): take the CPU's execution lock for the
 * "hardirq" that follows, so that it may touch per-CPU state that the
 * handlers share (for a DPDK lcore: its mempool cache, its rte_timer
 * list), whichever thread runs the handlers. sirq_irq_exit() then runs
 * pending work under the same lock and releases it.
 *
 * Dispatcher thread only. Never blocks.
 *
 * @return true if the lock is held by the caller now (taken here, or
 *   already held because bottom halves are off on this thread); false if
 *   another thread holds it (the worker in a pass): the caller must not
 *   touch the shared state and need not call sirq_irq_exit().
 */
bool sirq_irq_enter(struct sirq_cpu *cpu);

/**
 * The dispatcher's irq_exit(): run pending work as the policy says.
 *
 * Dispatcher thread only. After a successful sirq_irq_enter() it runs
 * under the lock taken there and releases it. Called alone it tries the
 * lock itself and never blocks: if the worker holds the execution lock,
 * returns SIRQ_IRQ_EXIT_BUSY and leaves the work pending.
 * A pass that ends with work left wakes the worker with the reason.
 */
enum sirq_irq_exit_result sirq_irq_exit(struct sirq_cpu *cpu);

/**
 * One run of the worker thread (run_ksoftirqd()).
 *
 * Worker thread only. Runs one pass of the loop if work is pending, or
 * marks the worker idle when nothing is. The return value tells the thread
 * what to do next; no wake-up is lost between SIRQ_WORKER_SLEEP and the
 * thread's sleep as long as ops.wake_worker leaves a token that the sleep
 * consumes (an eventfd or futex counter).
 */
enum sirq_worker_status sirq_worker_run(struct sirq_cpu *cpu);

/** Wake the worker if it is idle (SIRQ_WAKE_EXPLICIT). Any thread. */
void sirq_worker_wakeup(struct sirq_cpu *cpu);

/**
 * Stop the worker: from now on it is never woken nor waited for, and its
 * next sirq_worker_run() returns SIRQ_WORKER_EXIT. The caller then wakes
 * the thread itself and joins it. Any thread.
 */
void sirq_worker_park(struct sirq_cpu *cpu);

/** Undo sirq_worker_park() before starting a new worker thread. */
void sirq_worker_unpark(struct sirq_cpu *cpu);

/** The worker's state now. Any thread. */
enum sirq_worker_state sirq_worker_state(const struct sirq_cpu *cpu);

/**
 * Disable bottom halves on @p cpu for the calling thread (local_bh_disable()).
 *
 * Handlers of @p cpu do not run until the matching sirq_bh_enable(). Nests;
 * may be called from a handler of @p cpu. From another thread it waits
 * until the running pass (at most max_time plus one handler) ends.
 */
void sirq_bh_disable(struct sirq_cpu *cpu);

/**
 * Re-enable bottom halves (local_bh_enable()). The outermost enable runs
 * pending work through the same policy test as sirq_irq_exit(), on a
 * thread that ops.is_local accepts; elsewhere it calls ops.kick and
 * leaves the work to the CPU's dispatcher.
 *
 * @return 0, or -EPERM if this thread has no matching sirq_bh_disable().
 */
int sirq_bh_enable(struct sirq_cpu *cpu);

/**
 * Copy the counters of @p cpu. Any thread; each counter is read
 * atomically, the set as a whole is not a single snapshot.
 */
void sirq_stats_get(const struct sirq_cpu *cpu, struct sirq_stats *st);

/** Zero the counters. Dispatcher thread, with the worker idle or parked. */
void sirq_stats_reset(struct sirq_cpu *cpu);

/**
 * Latency percentile from a histogram, as the upper bound of the bucket
 * that holds it (max_ns for the last one).
 *
 * @param q  quantile in [0, 1].
 * @return nanoseconds; 0 if there are no samples.
 */
uint64_t sirq_latency_quantile(const struct sirq_latency *lat, double q);

/*
 * Tasklets (kernel/softirq.c): deferred functions on HI or TASKLET.
 */

struct sirq_tasklet;

/** A tasklet's function. */
typedef void (*sirq_tasklet_fn_t)(struct sirq_tasklet *t, void *arg);

/**
 * A tasklet. Initialise with sirq_tasklet_init(); fields are private.
 */
struct sirq_tasklet {
	struct sirq_tasklet *next;	/**< private */
	uint32_t state;			/**< private */
	uint32_t disable_count;		/**< private */
	sirq_tasklet_fn_t fn;		/**< private */
	void *arg;			/**< private */
};

/** Prepare a tasklet. */
void sirq_tasklet_init(struct sirq_tasklet *t, sirq_tasklet_fn_t fn,
		       void *arg);

/**
 * Schedule @p t on @p cpu's TASKLET vector. Any thread.
 *
 * Scheduling an already scheduled tasklet does nothing; a tasklet that
 * schedules itself while running runs once more. It never runs
 * concurrently with itself, even when scheduled on several CPUs.
 *
 * @return true if this call scheduled it; false if it was already
 *   scheduled or has been killed.
 */
bool sirq_tasklet_schedule(struct sirq_cpu *cpu, struct sirq_tasklet *t);

/** As sirq_tasklet_schedule(), on the HI vector (tasklet_hi_schedule()). */
bool sirq_tasklet_hi_schedule(struct sirq_cpu *cpu, struct sirq_tasklet *t);

/**
 * Disable a tasklet and wait until it is not running. Nests. While
 * disabled it stays scheduled and runs after the matching enable.
 * Must not be called from the tasklet itself.
 */
void sirq_tasklet_disable(struct sirq_tasklet *t);

/** Disable without waiting (tasklet_disable_nosync()). */
void sirq_tasklet_disable_nosync(struct sirq_tasklet *t);

/**
 * Undo one disable.
 *
 * @return 0, or -EINVAL if the tasklet was not disabled.
 */
int sirq_tasklet_enable(struct sirq_tasklet *t);

/**
 * Kill a tasklet: wait until it is neither scheduled nor running, then
 * refuse further scheduling until sirq_tasklet_init(). Must not be called
 * from a handler of a CPU that the tasklet is scheduled on, nor for a
 * disabled tasklet that is scheduled (it would never run).
 */
void sirq_tasklet_kill(struct sirq_tasklet *t);

/** Is the tasklet scheduled (waiting to run)? */
bool sirq_tasklet_is_scheduled(const struct sirq_tasklet *t);

/*
 * The DPDK binding: one dispatcher per lcore (sirq_lcore.c).
 *
 * An lcore's dispatcher polls its "hardirq" sources (NIC Rx queues, the
 * rte_timer deadline), raises their vectors, then calls sirq_irq_exit();
 * in poll mode it then runs the application's slice on the same lcore.
 * Its worker is a pthread "sirqd/<lcore>" sleeping on an eventfd, which
 * runs handlers as the lcore (rte_lcore_id() is the lcore's): every use
 * of the lcore's DPDK state, by either thread, holds the execution lock.
 * Application code on the lcore that touches that state (its mempool
 * cache, its rte_timer list) outside a handler must hold
 * sirq_bh_disable(), as kernel code does for per-CPU data that softirqs
 * share.
 */

struct rte_mbuf;
struct sirq_lcore;

/** Dispatcher modes (docs/design.md, "Two dispatcher modes"). */
enum sirq_mode {
	SIRQ_MODE_POLL = 0,	/**< busy-poll; the default */
	SIRQ_MODE_IRQ,		/**< SCHED_FIFO, sleeps until Rx or a tick */
	SIRQ_MODE_MAX,
};

/** NAPI and net_rx_action defaults (net/core/dev.c). */
#define SIRQ_NAPI_WEIGHT_DEFAULT 64
#define SIRQ_NETDEV_BUDGET_DEFAULT 300
#define SIRQ_NETDEV_BUDGET_US_DEFAULT 2000
/** irq mode: the interrupt-coalescing analogue when no Rx interrupt comes. */
#define SIRQ_IRQ_TICK_US_DEFAULT 100
#define SIRQ_IRQ_PRIORITY_DEFAULT 50
/**
 * SCHED_FIFO priority lent to the worker when the dispatcher finds it
 * preempted inside a pass (priority inheritance on the execution lock,
 * as PREEMPT_RT's softirq lock has). A kernel pass cannot be preempted by
 * tasks; a user-space worker preempted while holding the lock would lock
 * the dispatcher out for as long as the scheduler keeps it off the CPU.
 * The worker is otherwise a SCHED_OTHER thread, like ksoftirqd, and gives
 * the priority back when the pass ends. Below the irq-mode dispatcher's.
 */
#define SIRQ_WORKER_BOOST_PRIORITY_DEFAULT 1
/** Packets fetched per queue to learn that it has work. */
#define SIRQ_STAGE_SIZE 32
/** Rx queues (NAPI contexts) per lcore. */
#define SIRQ_LCORE_MAX_NAPI 64

/**
 * Receive function of one Rx queue, called from NET_RX with up to the
 * NAPI weight of packets; it owns the mbufs from then on.
 */
typedef void (*sirq_rx_fn_t)(struct sirq_lcore *lc, uint16_t port,
			     uint16_t queue, struct rte_mbuf **pkts,
			     uint16_t nb_pkts, void *arg);

/** The application's slice on a poll-mode lcore (the "process"). */
typedef void (*sirq_app_fn_t)(struct sirq_lcore *lc, void *arg);

/** Does the application sharing the lcore want the CPU now? */
typedef bool (*sirq_need_resched_fn_t)(void *arg);

/**
 * One NAPI context's settings, as netdev-genl's napi-set has them (Linux
 * 6.13, struct napi_config). All 0, the default, is v6.1's NAPI: polled
 * by NET_RX, its interrupt on again at every completion.
 */
struct sirq_napi_params {
	/**
	 * napi_defer_hard_irqs: after a poll that found work, this many
	 * completions in a row leave the interrupt masked and re-poll from
	 * a timer after @c gro_flush_timeout_ns; the one after them turns
	 * it back on. Needs @c gro_flush_timeout_ns.
	 */
	uint32_t defer_hard_irqs;
	/** gro_flush_timeout: the deferred re-poll's delay, ns. */
	uint64_t gro_flush_timeout_ns;
	/**
	 * irq_suspend_timeout: while an application's preferred busy poll
	 * (sirq_napi_busy_poll()) keeps finding packets, the interrupt and
	 * NET_RX stay off for this long past each find
	 * (sirq_napi_suspend_irqs()), ns; 0: no suspension.
	 */
	uint64_t irq_suspend_timeout_ns;
	/**
	 * Threaded NAPI: the context is polled by its own thread,
	 * "napi/<lcore>-<id>", SCHED_OTHER on the lcore's CPUs, with bottom
	 * halves off, instead of by NET_RX.
	 */
	bool threaded;
};

/** What sirq_napi_get() reports of one NAPI context (netdev-genl napi-get). */
struct sirq_napi_info {
	unsigned int id;		/**< index on its lcore, in add order */
	uint16_t port;			/**< its Rx queue */
	uint16_t queue;
	struct sirq_napi_params params;
	int thread_tid;			/**< its thread's TID; -1 without one */
	bool scheduled;			/**< NAPI_STATE_SCHED */
	bool irq_masked;		/**< idle, interrupt left off (deferred) */
	bool in_busy_poll;		/**< an application is polling it */
	uint64_t deferred;		/**< completions that left it masked */
	uint64_t watchdog;		/**< timer expiries that scheduled it */
	uint64_t busy_polls;		/**< polls by busy-polling applications */
	uint64_t busy_packets;		/**< ... packets they took */
	uint64_t thread_polls;		/**< polls by its thread */
};

/** The kernel's BUSY_POLL_BUDGET: packets per busy poll by default. */
#define SIRQ_BUSY_POLL_BUDGET_DEFAULT 8

/** Configuration of one lcore; sirq_lcore_conf_default() fills it. */
struct sirq_lcore_conf {
	struct sirq_params params;	/**< engine parameters and policy */
	enum sirq_mode mode;
	uint16_t napi_weight;		/**< packets per queue per poll */
	uint16_t netdev_budget;		/**< packets per NET_RX run */
	uint32_t netdev_budget_us;	/**< time per NET_RX run */
	/**
	 * CPUs of the worker, as a list ("2", "2-3,6"); NULL or "" pins it
	 * to the CPUs of the lcore it serves.
	 */
	const char *worker_cpus;
	uint32_t irq_tick_us;		/**< irq mode: longest sleep */
	int irq_priority;		/**< irq mode: SCHED_FIFO priority */
	/**
	 * SCHED_FIFO priority lent to a worker preempted inside a pass
	 * (SIRQ_WORKER_BOOST_PRIORITY_DEFAULT); 0 never lends it.
	 */
	int worker_boost_priority;
	/**
	 * Deprecated, ignored (a warning is logged): the worker runs its
	 * handlers as the lcore it serves, with that lcore's mempool cache
	 * and rte_timer list, under the execution lock, and no lcore is
	 * registered for it, so DPDK multi-process keeps working.
	 */
	bool worker_register;
	sirq_app_fn_t app_fn;		/**< poll mode: optional slice */
	void *app_arg;
	sirq_need_resched_fn_t need_resched_fn;	/**< optional */
	void *need_resched_arg;
	/**
	 * Optional RCU: the dispatcher reports a quiescent state after every
	 * iteration as @c qsbr_dispatcher_id, the worker after every pass
	 * as @c qsbr_worker_id (and is offline while it sleeps). Both ids
	 * must be registered with rte_rcu_qsbr_thread_register().
	 */
	struct rte_rcu_qsbr *qsbr;
	unsigned int qsbr_dispatcher_id;
	unsigned int qsbr_worker_id;
	/**
	 * Settings of every NAPI context (Rx queue) added to the lcore, as
	 * the device-wide sysfs files napi_defer_hard_irqs,
	 * gro_flush_timeout and threaded set them; sirq_napi_set() changes
	 * one. All 0 by default.
	 */
	struct sirq_napi_params napi;
};

/** TX queues per lcore. */
#define SIRQ_LCORE_MAX_TXQ 64
/** Packets buffered per TX queue before a flush (rte_eth_tx_buffer). */
#define SIRQ_TX_BURST 32
/** Tracked packets in flight per TX queue. */
#define SIRQ_TX_TRACK_MAX 1024

struct rte_rcu_qsbr;

/**
 * Bytes and packets of one sender (a socket, a flow) handed to the NIC
 * and not yet released by the PMD: the TCP-small-queues accounting. When
 * tracked packets complete, NET_TX schedules @c tasklet on the lcore, so
 * that the sender can push its next batch.
 */
struct sirq_tx_tracker {
	struct sirq_tasklet *tasklet;	/**< scheduled on completion; may be NULL */
	uint64_t inflight_pkts;		/**< handed to the NIC, not released */
	uint64_t inflight_bytes;
	uint64_t completed_pkts;	/**< released by the PMD (sent or dropped) */
	uint64_t completed_bytes;
};

/** Per-lcore counters of the binding, beside the engine's. */
struct sirq_lcore_stats {
	uint64_t iterations;		/**< dispatcher loop iterations */
	uint64_t rx_packets;		/**< packets handed to rx functions */
	uint64_t rx_polls;		/**< NAPI poll calls */
	uint64_t time_squeeze;		/**< NET_RX ran out of budget or time */
	uint64_t budget_exhausted;	/**< ... of which packet budget */
	uint64_t irq_sleeps;		/**< irq mode: sleeps */
	uint64_t irq_rx_events;		/**< irq mode: Rx interrupts seen */
	uint64_t worker_passes;		/**< softirq loop passes sirqd ran */
	uint64_t tx_packets;		/**< accepted by tx_burst */
	uint64_t tx_dropped;		/**< refused by a full TX ring */
	uint64_t tx_completions;	/**< tracked packets released by the PMD */
	uint64_t rx_dropped_at_stop;	/**< fetched, never polled: freed at stop */
	/** Queues scheduled because a descriptor was done (no fetch). */
	uint64_t rx_sched_desc;
	/** Queues scheduled because a fetch into the staging array got packets. */
	uint64_t rx_sched_fetch;
	/** Passes in which sirqd was lent SCHED_FIFO after being preempted. */
	uint64_t worker_pi_boosts;
	/** Poll mode without an app slice: sleeps while sirqd had the work. */
	uint64_t poll_waits;
	/**
	 * Queues scheduled because the PMD's power-monitor condition
	 * (rte_eth_get_monitor_addr()) saw a written descriptor (no fetch):
	 * the "is there work" of PMDs without descriptor status, e.g. virtio.
	 */
	uint64_t rx_sched_monitor;
	/**
	 * rte_eth_tx_done_cleanup() calls that the PMD served: one at the
	 * first flush of each queue (the probe), then by NET_TX while a
	 * tracked packet waits (at most one per 50 us per queue).
	 */
	uint64_t tx_done_cleanup_calls;
	/** Packets those calls freed. */
	uint64_t tx_done_cleanup_pkts;
	/**
	 * rte_eth_tx_burst() calls: one per queue at the end of each NAPI
	 * poll that sent to it, one per full buffer, one per send outside
	 * a poll.
	 */
	uint64_t tx_bursts;
	/** irq mode: scheduler ticks (tick_hz) at which the dispatcher decided. */
	uint64_t irq_ticks;
	/**
	 * irq mode: looks at the queues that found no interrupt firing
	 * between ticks, so took no decision (a scheduled queue is masked).
	 */
	uint64_t irq_quiet_looks;
	/**
	 * irq mode: Rx interrupts turned back on at napi_complete_done()
	 * (rte_eth_dev_rx_intr_enable()); a queue's interrupt is off while
	 * its NAPI context is scheduled, where the PMD can turn it off.
	 */
	uint64_t rx_intr_rearms;
	/**
	 * ... of which found work already in the ring when the interrupt
	 * was back on: it came while the interrupt was off and brought none,
	 * so the queue was scheduled again at once.
	 */
	uint64_t rx_intr_rearm_work;
	/**
	 * Queues scheduled because rte_eth_rx_queue_count() counted done
	 * descriptors (no fetch): PMDs without descriptor status, e.g.
	 * vmxnet3.
	 */
	uint64_t rx_sched_count;
	/**
	 * irq mode: sleeps until the next scheduler tick, not irq_tick_us,
	 * because no look was needed: every queue of the lcore had its Rx
	 * interrupt armed, or was masked (its NAPI context scheduled) with
	 * the work at sirqd, which the policy left to it; and no sent packet
	 * was tracked.
	 */
	uint64_t irq_tick_sleeps;
};

/** Defaults: kernel values, poll mode, worker on the lcore's CPUs. */
void sirq_lcore_conf_default(struct sirq_lcore_conf *conf);

/**
 * Are @p p usable NAPI settings? A deferral needs its timeout, and
 * timeouts are at most 1 s (the kernel takes any; a masked queue whose
 * re-poll is seconds away is a mistake here).
 *
 * @return 0, or -EINVAL (defer_hard_irqs without gro_flush_timeout_ns,
 *   a timeout above 1 s).
 */
int sirq_napi_params_check(const struct sirq_napi_params *p);

/** NAPI contexts (Rx queues) of the lcore: ids 0 .. n-1. */
unsigned int sirq_napi_count(const struct sirq_lcore *lc);

/**
 * napi-get: context @p napi_id of the lcore, its settings, state and
 * counters. Any thread.
 *
 * @return 0, or -EINVAL for an unknown id or NULL.
 */
int sirq_napi_get(const struct sirq_lcore *lc, unsigned int napi_id,
		  struct sirq_napi_info *info);

/**
 * napi-set: context @p napi_id's settings, from any thread, at any time
 * (they take the execution lock). A context made threaded while the
 * lcore runs gets its thread now; before that (including between the
 * launch and the start of sirq_lcore_main()'s loop) it gets it when the
 * lcore starts. One made unthreaded keeps its idle thread until the
 * lcore stops.
 *
 * @return 0; -EINVAL for an unknown id or bad settings
 *   (sirq_napi_params_check()); -EBUSY to change threaded while the
 *   context is scheduled (try again); -EAGAIN if its thread could not
 *   start (nothing changed).
 */
int sirq_napi_set(struct sirq_lcore *lc, unsigned int napi_id,
		  const struct sirq_napi_params *p);

/**
 * Busy polling (napi_busy_loop(), SO_BUSY_POLL / epoll busy_poll_usecs):
 * the calling application thread polls context @p napi_id itself, up
 * to @p budget packets a poll, over and over until a poll finds packets
 * or @p busy_poll_us have passed (0: one poll). The packets go to the
 * queue's receive function on the caller's thread, bottom halves off,
 * as the lcore. A context that NET_RX, its thread or another poller
 * holds is left to it.
 *
 * With @p prefer_busy_poll (SO_PREFER_BUSY_POLL), NET_RX stands aside:
 * a full poll of NET_RX completes the context instead of polling it
 * again, and when the call ends its interrupt stays masked under a
 * timer: irq_suspend_timeout if set, else gro_flush_timeout if
 * defer_hard_irqs is; the timer brings NET_RX back if the application
 * does not come back first.
 *
 * The caller runs on the lcore's CPU: the lcore's own thread (its
 * application slice), or a thread without an lcore id on its CPUs.
 *
 * @return the packets taken (0 or more); -EINVAL for an unknown id or a
 *   budget not in 1..256; -EPERM from another CPU's thread or inside a
 *   handler; -EAGAIN while the lcore does not run (before
 *   sirq_lcore_main() starts, once it stops): its queues are left alone.
 */
int sirq_napi_busy_poll(struct sirq_lcore *lc, unsigned int napi_id,
			uint16_t budget, bool prefer_busy_poll,
			uint32_t busy_poll_us);

/**
 * napi_suspend_irqs(), as epoll calls it when a busy poll returned
 * events: with irq_suspend_timeout set, the context's interrupt and
 * NET_RX stay off until that long from now, unless called again.
 *
 * @return 0, -EINVAL for an unknown id, -EPERM or -EAGAIN as
 *   sirq_napi_busy_poll().
 */
int sirq_napi_suspend_irqs(struct sirq_lcore *lc, unsigned int napi_id);

/**
 * napi_resume_irqs(), as epoll calls it before it sleeps, its busy
 * poll having found nothing: with irq_suspend_timeout set, the context
 * is scheduled now, and its completion turns the interrupt back on, or
 * defers it as defer_hard_irqs says.
 *
 * @return as sirq_napi_suspend_irqs().
 */
int sirq_napi_resume_irqs(struct sirq_lcore *lc, unsigned int napi_id);

/**
 * Create the dispatcher state of an lcore, on its socket. Call from the
 * main lcore after rte_eal_init(), before launching.
 *
 * @return the lcore, or NULL with rte_errno / errno set: EINVAL for bad
 *   configuration (logged with the bad value), EEXIST if the lcore has
 *   one already, ENOMEM.
 */
struct sirq_lcore *sirq_lcore_create(unsigned int lcore_id,
				     const struct sirq_lcore_conf *conf);

/**
 * Add an Rx queue (a NAPI context) to an lcore. Before launch only.
 *
 * @return 0; -EINVAL for a bad port, queue or NULL function; -ENOSPC
 *   beyond SIRQ_LCORE_MAX_NAPI.
 */
int sirq_lcore_add_rx_queue(struct sirq_lcore *lc, uint16_t port,
			    uint16_t queue, sirq_rx_fn_t fn, void *arg);

/**
 * Add a TX queue to an lcore, for sirq_tx() and its variants. Before
 * launch only.
 *
 * @return the index for sirq_tx(), or -EINVAL for a bad port or queue,
 *   -ENOSPC beyond SIRQ_LCORE_MAX_TXQ, -ENOMEM.
 */
int sirq_lcore_add_tx_queue(struct sirq_lcore *lc, uint16_t port,
			    uint16_t queue);

/**
 * The run-time parameters of an lcore: what the control plane reads and
 * changes while the lcore runs (sirq_lcore_get_params(),
 * sirq_lcore_set_params(), the /sirq/params and /sirq/params_set
 * telemetry commands). The mode, the queues and the worker's CPUs are
 * fixed at sirq_lcore_create(); NAPI settings per queue have
 * sirq_napi_set().
 */
struct sirq_lcore_params {
	struct sirq_params engine;	/**< policy and the softirq loop's limits */
	uint16_t napi_weight;		/**< packets per queue per poll */
	uint16_t netdev_budget;		/**< packets per NET_RX run */
	uint32_t netdev_budget_us;	/**< time per NET_RX run */
	uint32_t irq_tick_us;		/**< irq mode: longest sleep */
	/** SCHED_FIFO priority lent to a preempted worker; 0 never. */
	int worker_boost_priority;
};

/**
 * Read an lcore's run-time parameters.
 *
 * Context: any thread; never waits.
 *
 * @return 0; -EINVAL if @p lc or @p p is NULL.
 */
int sirq_lcore_get_params(const struct sirq_lcore *lc,
			  struct sirq_lcore_params *p);

/**
 * Change an lcore's run-time parameters, the policy among them, while it
 * runs (or before it is launched). The change is made under the lcore's
 * execution lock, so the next softirq pass, on the dispatcher or in
 * sirqd, obeys it; open deferral windows are closed.
 *
 * Context: any thread, including the lcore's app_fn and its handlers;
 * waits for the execution lock, which a running pass hands over at its
 * next vector boundary (one handler run at most).
 *
 * @return 0 once applied; -EINVAL if @p lc or @p p is NULL or a value is
 *   out of range (nothing changed; the log line names the value).
 */
int sirq_lcore_set_params(struct sirq_lcore *lc,
			  const struct sirq_lcore_params *p);

/**
 * Transmit a packet, as the kernel does inside a NAPI poll. From an Rx
 * function the packet is buffered, and the end of the poll hands each
 * queue's buffer to the PMD in one burst (XDP's flush at the end of the
 * poll: one doorbell); a full buffer goes at once. Anywhere else (a
 * tasklet, a timer, bottom halves off) it goes to the PMD before the call
 * returns (dev_queue_xmit()). NET_TX does not transmit: it completes
 * (sirq_tx_tracked()). A packet the TX ring refuses is freed and counted
 * in tx_dropped.
 *
 * Call in the lcore's context: from a handler of its sirq_cpu, or
 * between sirq_bh_disable() and sirq_bh_enable() on the lcore's own
 * thread, as the kernel transmits with bottom halves off on its CPU.
 *
 * @return 0; -EPERM outside that context (the packet is not taken);
 *   -EINVAL for a bad index.
 */
int sirq_tx(struct sirq_lcore *lc, unsigned int txq, struct rte_mbuf *m);

/**
 * Queue a burst for transmission: as sirq_tx() for each of @p pkts in
 * order, with one context check for the burst, and full buffers handed
 * to the PMD on the way. Ownership of all @p n packets
 * passes to the library (a packet the TX ring refuses is freed and
 * counted in tx_dropped), so the return value is @p n.
 *
 * @return @p n; -EPERM outside handler context (no packet is taken);
 *   -EINVAL for a bad index, or NULL @p pkts with @p n > 0.
 */
int sirq_tx_burst(struct sirq_lcore *lc, unsigned int txq,
		  struct rte_mbuf **pkts, uint16_t n);

/**
 * As sirq_tx(), and account the packet to @p t until the PMD releases it
 * (the TX completion, learnt from the mbuf's reference count, so it works
 * with any PMD). Do not use with RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE.
 *
 * @return as sirq_tx(); -ENOBUFS if SIRQ_TX_TRACK_MAX packets of this
 *   queue are in flight (the packet is not taken).
 */
int sirq_tx_tracked(struct sirq_lcore *lc, unsigned int txq,
		    struct rte_mbuf *m, struct sirq_tx_tracker *t);

/** The engine CPU of an lcore, to register vectors and schedule tasklets. */
struct sirq_cpu *sirq_lcore_cpu(struct sirq_lcore *lc);

/** The lcore's id. */
unsigned int sirq_lcore_id(const struct sirq_lcore *lc);

/**
 * Dispatcher entry for rte_eal_remote_launch() (or a direct call on the
 * main lcore); @p arg is the struct sirq_lcore of the calling lcore.
 * Starts the worker, runs until sirq_lcore_stop(), stops the worker.
 *
 * @return 0, or a negative errno if the worker could not start.
 */
int sirq_lcore_main(void *arg);

/** Ask the dispatcher to return. Any thread, async-signal-safe. */
void sirq_lcore_stop(struct sirq_lcore *lc);

/** Ask every lcore's dispatcher to return. Async-signal-safe. */
void sirq_lcore_stop_all(void);

/** Copy the binding's counters. Any thread. */
void sirq_lcore_stats_get(const struct sirq_lcore *lc,
			  struct sirq_lcore_stats *st);

/**
 * Free an lcore: frees the mbufs still staged, unregisters it from
 * telemetry. Its dispatcher must have returned. NULL is ok.
 */
void sirq_lcore_free(struct sirq_lcore *lc);

/**
 * Register the /sirq/ telemetry commands: /sirq/softirqs, /sirq/stats,
 * /sirq/latency, /sirq/config. Idempotent.
 *
 * @return 0, or the negative error of rte_telemetry_register_cmd().
 */
int sirq_telemetry_register(void);

/**
 * Write the configuration and every counter of every lcore as one JSON
 * object. Any thread; it holds the lcore registry while writing, so
 * lcores are neither created nor freed meanwhile.
 *
 * @return 0, -ENOMEM, or -EIO if writing failed.
 */
int sirq_stats_json(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* SIRQ_H */
