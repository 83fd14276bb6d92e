/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_ENGINE_H
#define SIRQ_ENGINE_H

/**
 * @file
 * The engine: the Linux softirq machinery, with no DPDK inside.
 *
 * Include this header to run softirqs under any I/O framework or on a
 * simulated clock; a DPDK application includes sirq_lcore.h (which
 * includes this one) and rarely calls more of this header than
 * sirq_vector_alloc(), sirq_raise(), the tasklets and sirq_bh_disable().
 * This header needs nothing but the C library's headers.
 *
 * Each CPU (a DPDK lcore in the binding) owns one struct sirq_cpu: a
 * pending mask of up to 32 vectors, the __do_softirq() loop with its
 * restart and time limits, a deferred worker (the user-space ksoftirqd)
 * and the overload policy that decides who runs pending work. Time, the
 * worker wake-up and need_resched() come in through struct sirq_ops, so
 * the engine runs on a fake clock in tests and under any I/O framework.
 *
 * Threads and roles, per CPU:
 *  - the dispatcher calls sirq_irq_exit() after its "hardirq" polling; only
 *    one thread may act as a CPU's dispatcher;
 *  - the worker thread calls sirq_worker_run() whenever it is woken;
 *  - any thread may call sirq_raise() and the tasklet scheduling calls.
 *
 * Handlers of one CPU never run concurrently: they run under the CPU's
 * execution lock. The dispatcher and the worker only ever try it; a
 * thread that waits for it (sirq_bh_disable(), sirq_cpu_set_params())
 * gets it at the holder's next vector boundary: a pass that sees a waiter
 * ends there and hands the lock over, and waiters get it in the order
 * they came, as PREEMPT_RT's per-CPU BH lock does. So such a wait lasts
 * at most one handler run. Only a CPU's own tasks take or wait for its
 * lock, as in the kernel: a thread on another CPU (ops.remote_caller) is
 * refused with -EXDEV, so that its scheduling can never stop the CPU;
 * it asks the CPU to do the work instead (on a DPDK lcore,
 * sirq_lcore_call()) or uses RCU.
 *
 * Every function's comment has a "Context:" line, as kernel-doc has:
 * from which threads it may be called and what it may wait for.
 *
 * Errors, one convention for the whole library (DPDK's): a function
 * returns 0 or a negative errno; a constructor returns NULL and sets
 * errno here (rte_errno, and errno too, in the binding). Every function
 * takes NULL for any pointer without crashing: -EINVAL, NULL, false or
 * 0, and a void function does nothing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Number of vectors per CPU; bit n of the pending mask is vector n. */
#define SIRQ_MAX_VECTORS 32

/**
 * The kernel's vectors, in the kernel's bit order (lowest runs first).
 * Vectors from SIRQ_NR_KERNEL_VECTORS up to SIRQ_MAX_VECTORS - 1 are free
 * for applications: take one with sirq_vector_alloc(). HI and TASKLET
 * belong to the tasklet machinery; the kernel vectors that have no handler
 * here can still be registered by number (sirq_register()).
 */
enum sirq_vector {
	SIRQ_HI = 0,		/**< high-priority tasklets (tasklet_hi_schedule()) */
	SIRQ_TIMER,		/**< timers; on a DPDK lcore the binding's rte_timer list */
	SIRQ_NET_TX,		/**< TX completion; on a DPDK lcore the binding's */
	SIRQ_NET_RX,		/**< NAPI polls; on a DPDK lcore the binding's */
	SIRQ_BLOCK,		/**< block-layer completion in the kernel; no handler here */
	SIRQ_IRQ_POLL,		/**< irq_poll in the kernel; no handler here */
	SIRQ_TASKLET,		/**< tasklets (tasklet_schedule()) */
	SIRQ_SCHED,		/**< scheduler load balancing in the kernel; no handler here */
	SIRQ_HRTIMER,		/**< softirq hrtimers in the kernel; no handler here */
	SIRQ_RCU,		/**< RCU callbacks in the kernel; no handler here */
	SIRQ_NR_KERNEL_VECTORS,	/**< the first application vector */
};

/** Bit of vector @p v in a pending or expedited mask. */
#define SIRQ_BIT(v) (UINT32_C(1) << (v))

/** The kernel's SOFTIRQ_NOW_MASK: vectors that never wait for the worker. */
#define SIRQ_NOW_MASK_DEFAULT (SIRQ_BIT(SIRQ_HI) | SIRQ_BIT(SIRQ_TASKLET))

/** MAX_SOFTIRQ_RESTART (kernel/softirq.c): rounds per pass. */
#define SIRQ_MAX_RESTART_DEFAULT 10
/** MAX_SOFTIRQ_TIME (kernel/softirq.c): 2 ms per pass. */
#define SIRQ_MAX_TIME_NS_DEFAULT (2ULL * 1000 * 1000)
/** SOFTIRQ_DEFER_TIME of the Dec 2022 patches: 2 ms. */
#define SIRQ_DEFER_WINDOW_NS_DEFAULT (2ULL * 1000 * 1000)
/** SOFTIRQ_OVERLOAD_TIME of the Dec 2022 patches: 100 ms. */
#define SIRQ_OVERLOAD_WINDOW_NS_DEFAULT (100ULL * 1000 * 1000)
/**
 * CONFIG_HZ of the kernels the policies come from, as Debian and most
 * distributions build them for servers: time in 4 ms jiffies.
 */
#define SIRQ_TICK_HZ_DEFAULT 250
/** Stall threshold of the patch author's production tracker: 8 ms. */
#define SIRQ_STALL_THRESHOLD_NS_DEFAULT (8ULL * 1000 * 1000)

/** Who may run pending work while the worker is runnable. */
enum sirq_policy_id {
	/**
	 * Linux >= 6.5: the dispatcher runs pending work whenever it gets the
	 * lock, whatever the worker's state; the worker gets what a pass
	 * leaves after its limits.
	 */
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
	/**
	 * Execution model of PREEMPT_RT before 6.18 (softirq.c's RT
	 * variant, 6.13's ktimers): no vector runs at the dispatcher's
	 * irq_exit(). Work raised there goes to sirqd (ksoftirqd), except
	 * that NET_RX or NET_TX pending makes the dispatcher, standing for
	 * the NIC's forced-threaded handler irq/N (SCHED_FIFO 50), run the
	 * __do_softirq() loop at its bottom-half enable, with the kernel's
	 * limits and yield to ksoftirqd; SCHED_OTHER threads wanting the
	 * CPU do not end that pass. TIMER and HRTIMER run in their own
	 * softirq thread, ktimers (with sirq_thread_ops_set()). Every
	 * vector runs under the per-CPU BH lock, whose waiters are handed
	 * it at the holder's next vector boundary and lend it their
	 * priority (struct sirq_thread_ops, lock_wait).
	 */
	SIRQ_POLICY_RT,
	/**
	 * Weisbecker's pushdown, PREEMPT_RT since 6.18 (the BH lock
	 * dropped): a softirq thread per vector, woken by the raise and
	 * scheduled by the OS; no vector runs at irq_exit() and there is
	 * no 2 ms / 10-restart limit: the scheduler decides. A vector
	 * registered SIRQ_VEC_BH_SAFE runs without the BH lock (a
	 * subsystem that moved to a lock of its own, the kernel's
	 * local_lock_nested_bh()); the others take it per round. Tasklets
	 * run without it when marked safe (sirq_tasklet_set_bh_safe()).
	 * Without softirq threads (no sirq_thread_ops_set()) every vector
	 * goes to sirqd, as under deferred.
	 */
	SIRQ_POLICY_PUSHDOWN,
	/**
	 * The pushdown's first step, and 6.18+ RT with
	 * CONFIG_PREEMPT_RT_NEEDS_BH_LOCK: a thread per vector, every one
	 * of them holding the BH lock for its rounds (SIRQ_VEC_BH_SAFE and
	 * safe tasklets are not honoured).
	 */
	SIRQ_POLICY_PUSHDOWN_LOCKED,
	SIRQ_POLICY_MAX,	/**< number of policies */
};

/**
 * Vectors whose raise puts the dispatcher, as the NIC's threaded
 * interrupt handler, into a pass under SIRQ_POLICY_RT.
 */
#define SIRQ_RT_IRQ_THREAD_MASK (SIRQ_BIT(SIRQ_NET_RX) | SIRQ_BIT(SIRQ_NET_TX))

/** Vectors of SIRQ_POLICY_RT's ktimers thread (Linux 6.13, 49a17639508c). */
#define SIRQ_RT_KTIMERS_MASK (SIRQ_BIT(SIRQ_TIMER) | SIRQ_BIT(SIRQ_HRTIMER))

/**
 * sirq_register_flags(): the handler needs no BH lock. It keeps its data
 * under a lock of its own (the kernel's local_lock_nested_bh()), so the
 * pushdown model runs it in its thread beside a bottom-half section or
 * another vector. The other models ignore the flag.
 */
#define SIRQ_VEC_BH_SAFE UINT32_C(1)

/** Deprecated name of SIRQ_POLICY_DEFERRED. */
#define SIRQ_POLICY_THREADED SIRQ_POLICY_DEFERRED

/** Tunables of one CPU; sirq_params_default() gives the kernel's values. */
struct sirq_params {
	enum sirq_policy_id policy;	/**< overload policy */
	unsigned int max_restart;	/**< MAX_SOFTIRQ_RESTART, 1..1000 */
	uint64_t max_time_ns;		/**< MAX_SOFTIRQ_TIME, 1 us..1 s */
	/**
	 * kicinski: window after need_resched, 0..10 s. 0: the window ends
	 * where it opens, so the next irq exit runs the work itself, as
	 * mainline does.
	 */
	uint64_t defer_window_ns;
	/**
	 * kicinski: window after exhaustion, 0..100 s. 0: no window, as
	 * defer_window_ns.
	 */
	uint64_t overload_window_ns;
	/** SOFTIRQ_NOW_MASK: only vectors that have a handler. */
	uint32_t expedited_mask;
	/**
	 * HZ: the loop's time in jiffies of 1/N s (default
	 * SIRQ_TICK_HZ_DEFAULT), and in the binding's irq mode the
	 * dispatcher's scheduler tick, one of the moments it decides again.
	 * 0: TSC-exact time, and a decision at every look of the irq-mode
	 * dispatcher (the "Gleixner" model: no jiffies anywhere).
	 */
	uint32_t tick_hz;
	uint64_t stall_threshold_ns;	/**< raise-to-run latency counted as stall, 1 us..10 s */
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
	 * looks at the pending mask, and by sirq_thread_run() before each
	 * round it runs under the lock.
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
	/**
	 * Optional: is the calling thread, which does not hold the
	 * execution lock, on another CPU (not one of the CPU's own threads,
	 * and free to run elsewhere)? Only a CPU's own tasks wait for its
	 * bottom halves: a waiter or holder that another CPU's scheduler
	 * keeps off its CPU would stop this one for as long. Returns 0 for
	 * the CPU's own threads; 1 for another CPU's thread while this
	 * CPU's softirq context does not run (before a DPDK lcore's launch:
	 * it may take the lock, and is counted in stats.remote_hold if work
	 * waits behind it); -EXDEV for another CPU's thread while it runs:
	 * sirq_bh_disable() and sirq_cpu_set_params() refuse it. Called
	 * outside the hot path; may make a system call. NULL: every thread
	 * is the CPU's own.
	 */
	int (*remote_caller)(void *ctx);
	void *ctx;			/**< argument of every callback */
};

/** Configuration of one CPU. */
struct sirq_cpu_conf {
	const char *name;		/**< for logs and reports; copied */
	unsigned int id;		/**< caller's identity, e.g. lcore id */
	struct sirq_params params;	/**< policy and limits at start */
	struct sirq_ops ops;		/**< the environment (clock, wake-ups) */
};

/**
 * One CPU's softirq state: pending mask, handlers, worker state, policy,
 * counters. Opaque: made by sirq_cpu_create() or sirq_cpu_init(), or on
 * a DPDK lcore by sirq_lcore_create() (sirq_lcore_cpu()).
 */
struct sirq_cpu;

/**
 * A vector's handler: the kernel's softirq action.
 *
 * Runs with the CPU's execution lock held, never concurrently with another
 * handler of the same CPU. It may raise vectors, including its own.
 *
 * @param cpu  the CPU whose vector runs.
 * @param arg  the argument given at registration.
 */
typedef void (*sirq_handler_t)(struct sirq_cpu *cpu, void *arg);

/** Where a handler ran. */
enum sirq_ctx {
	SIRQ_CTX_INLINE = 0,	/**< dispatcher, or sirq_bh_enable() */
	SIRQ_CTX_WORKER,	/**< the deferred worker (sirqd) */
	SIRQ_CTX_MAX,		/**< number of contexts */
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
	/**
	 * The CPU is stopping (sirq_cpu_set_stopping()): the pass ended at a
	 * vector boundary, with work still pending; no worker is woken and
	 * no window opens.
	 */
	SIRQ_EXIT_STOP,
	SIRQ_EXIT_MAX,		/**< number of reasons */
};

/** Why the worker was woken. */
enum sirq_wake {
	SIRQ_WAKE_RESTART = 0,	/**< a pass hit max_restart */
	SIRQ_WAKE_TIME,		/**< a pass hit max_time */
	SIRQ_WAKE_NEED_RESCHED,	/**< a pass yielded to the application */
	SIRQ_WAKE_HANDOFF,	/**< the policy hands all work to the worker */
	SIRQ_WAKE_EXPLICIT,	/**< sirq_worker_wakeup() */
	SIRQ_WAKE_RAISE,	/**< sirq_raise() in process context (ops.in_task) */
	/**
	 * The worker, going idle, found work raised meanwhile and stayed
	 * runnable (the raise saw it busy and woke nobody).
	 */
	SIRQ_WAKE_RECHECK,
	/**
	 * sirq_worker_run() found the worker idle and made it runnable
	 * itself: the thread's first call, or a call without a wake-up.
	 */
	SIRQ_WAKE_RUN,
	SIRQ_WAKE_MAX,		/**< number of reasons */
};

/** The deferral windows of the kicinski policy. */
enum sirq_window {
	SIRQ_WINDOW_DEFER = 0,	/**< after a need_resched deferral (2 ms) */
	SIRQ_WINDOW_OVERLOAD,	/**< after time/restart exhaustion (100 ms) */
	SIRQ_WINDOW_MAX,	/**< number of windows */
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

/** Raise-to-run latency of one vector (or the length of lock waits). */
struct sirq_latency {
	uint64_t samples;		/**< runs with a known raise time */
	uint64_t sum_ns;		/**< their latencies added up */
	uint64_t max_ns;		/**< the longest of them */
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
	/**
	 * Idle-to-runnable transitions of the worker, by reason. Every pass
	 * the worker starts is the first after one of them, or a
	 * continuation: passes (pass_exit[][SIRQ_CTX_WORKER] summed) =
	 * wakeups summed - worker_wakeups_unused + worker_continuations,
	 * less one while the worker is runnable and has not run a pass yet.
	 */
	uint64_t wakeups[SIRQ_WAKE_MAX];
	/**
	 * Worker passes that started with no wake-up since its last pass:
	 * work was still pending after it (ksoftirqd's loop on
	 * local_softirq_pending()).
	 */
	uint64_t worker_continuations;
	/**
	 * Wake-ups after which the worker went idle again without a pass:
	 * the work was run by someone else first.
	 */
	uint64_t worker_wakeups_unused;
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
	 * The same for the execution models' softirq threads (rt, pushdown,
	 * pushdown-locked) and the threads' unsafe tasklets: the waits the
	 * library's own threads make, apart from the application's.
	 */
	struct sirq_latency thread_lock_wait;
	/**
	 * The most handler runs that one such wait saw. A waiter gets the
	 * lock at the holder's next vector boundary: at most 2 with one
	 * waiter (the run under way, and one more when the holder's check
	 * and the waiter's arrival cross: neither side fences, to keep the
	 * check off the hot path's cost).
	 */
	uint64_t lock_wait_runs_max;
	/**
	 * Episodes in which the CPU's work waited, pending or not yet
	 * fetched, because its execution lock was held by, or reserved
	 * for, a thread on another CPU (ops.remote_caller): from the
	 * dispatcher's first look that found the lock so taken to its
	 * first look that got the lock or found no such claim. Such threads are refused while
	 * the CPU runs, so this stays empty unless one took the lock before
	 * (a section opened before the launch); a bound on it is the bound
	 * on how long another CPU's thread stopped this one.
	 */
	struct sirq_latency remote_hold;
	/**
	 * sirq_bh_disable() and sirq_cpu_set_params() calls refused with
	 * -EXDEV: the caller was a thread on another CPU.
	 */
	uint64_t remote_refused;
};

/**
 * netdev-genl's napi-threaded (Linux 6.19, enum netdev_napi_threaded):
 * who polls a NAPI context. The values are the kernel's.
 */
enum sirq_napi_threaded {
	/** NET_RX polls it: the default, v6.1's NAPI. */
	SIRQ_NAPI_THREADED_DISABLED = 0,
	/**
	 * Threaded NAPI (5.12): its own thread polls it when its interrupt
	 * schedules it, until a poll completes it; then the interrupt is
	 * on again and the thread sleeps.
	 */
	SIRQ_NAPI_THREADED_ENABLED = 1,
	/**
	 * Threaded busy polling (6.19, c18d4b190a46): its own thread polls
	 * it without end, bottom halves off per poll, yielding the CPU
	 * between polls; no poll completes it, so its interrupt is never
	 * turned back on and the thread never sleeps while the mode is on.
	 */
	SIRQ_NAPI_THREADED_BUSY_POLL = 2,
	/** Number of modes; not a mode. */
	SIRQ_NAPI_THREADED_MAX
};

/**
 * One NAPI context's settings, as netdev-genl's napi-set has them (Linux
 * 6.13, struct napi_config). All 0, the default, is v6.1's NAPI: polled
 * by NET_RX, its interrupt on again at every completion.
 *
 * The engine's NAPI accounting runs them (which context is polled, when,
 * and for how much), so they are declared here; the contexts themselves
 * are the DPDK binding's Rx queues (sirq_lcore.h: sirq_napi_set(),
 * sirq_lcore_conf.napi).
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
	 * napi-threaded, an enum sirq_napi_threaded: with
	 * SIRQ_NAPI_THREADED_ENABLED or SIRQ_NAPI_THREADED_BUSY_POLL the
	 * context is polled by its own thread, "napi/<lcore>-<id>",
	 * SCHED_OTHER on the lcore's CPUs, with bottom halves off, instead
	 * of by NET_RX; with busy-poll that thread polls without end.
	 *
	 * A uint8_t for the ABI: it was a bool until threaded busy polling
	 * came, and keeps its size and alignment; code that stores false or
	 * true in it still means disabled or enabled, and code that reads
	 * it as a truth value still learns whether the context is threaded.
	 * Values from SIRQ_NAPI_THREADED_MAX up are refused
	 * (sirq_napi_params_check()).
	 */
	uint8_t threaded;
};

/**
 * Name of a napi-threaded mode, as netdev-genl spells it.
 *
 * Context: any thread; never waits.
 *
 * @param t  the mode.
 * @return "disabled", "enabled" or "busy-poll", a constant string; NULL
 *   if @p t is not a mode.
 */
const char *sirq_napi_threaded_name(enum sirq_napi_threaded t);

/**
 * napi-threaded mode by name: "disabled", "enabled" or "busy-poll", as
 * sirq_napi_threaded_name() gives them; also the enum's values "0", "1"
 * and "2", and "false"/"true" and "no"/"yes" for disabled/enabled, as
 * the boolean setting it replaces was written.
 *
 * Context: any thread; never waits.
 *
 * @param name  the name.
 * @return the mode, or -EINVAL if @p name names none (or is NULL).
 */
int sirq_napi_threaded_from_name(const char *name);

/*
 * Parameters and names.
 */

/**
 * Fill @p p with the kernel's defaults and the build's default policy
 * (meson's default_policy option, kicinski unless set otherwise).
 *
 * Context: any thread; never waits.
 *
 * @param p  the parameters to fill; NULL does nothing.
 */
void sirq_params_default(struct sirq_params *p);

/**
 * The accepted range of one tunable. One table for every entry point: the
 * API (sirq_params_why_invalid(), sirq_lcore_set_params()), telemetry's
 * /sirq/params_set and the applications' options and INI files. The caps
 * keep every pass, window and deadline finite and their arithmetic
 * exact: a value inside its range cannot wrap a deadline or keep a pass
 * from ending.
 */
struct sirq_param_range {
	const char *name;	/**< the field, e.g. "max_time_ns" */
	uint64_t min;		/**< smallest value accepted */
	uint64_t max;		/**< largest value accepted */
	/** The range as every message says it, e.g. "1000..1000000000 ns (1 us..1 s)". */
	const char *range;
	/**
	 * The message for a value outside the range: the name and the range,
	 * "max_time_ns must be in 1000..1000000000 ns (1 us..1 s)".
	 */
	const char *why;
	/** What 0 means where 0 is accepted (the windows, tick_hz); else NULL. */
	const char *zero;
};

/**
 * The range of a tunable, by its field name: the engine's (struct
 * sirq_params: max_restart, max_time_ns, defer_window_ns,
 * overload_window_ns, expedited_mask, tick_hz, stall_threshold_ns) and
 * the NAPI ones the DPDK binding applies (napi_weight, netdev_budget,
 * netdev_budget_us).
 *
 * expedited_mask's numeric range is the whole mask; where a CPU is known
 * it must also name only vectors that have a handler
 * (sirq_cpu_params_why_invalid()).
 *
 * Context: any thread; never waits.
 *
 * @param name  the field's name.
 * @return the entry, valid for the program's life; NULL for an unknown
 *   name or NULL.
 */
const struct sirq_param_range *sirq_param_range(const char *name);

/**
 * The whole range table, for listing (--help, documentation, tests).
 *
 * Context: any thread; never waits.
 *
 * @param nb  set to the number of entries; may be NULL.
 * @return the first entry.
 */
const struct sirq_param_range *sirq_param_ranges(unsigned int *nb);

/**
 * The library's release, as "MAJOR.MINOR.PATCH": the one the process
 * runs, which may be newer than the headers a program was built with.
 *
 * Context: any thread, before or after anything else; never waits.
 *
 * @return a string valid for the program's life.
 */
const char *sirq_version(void);

/**
 * Check a parameter set.
 *
 * Context: any thread; never waits.
 *
 * @param p  the parameters.
 * @return 0 if usable; -EINVAL otherwise (NULL, unknown policy, a field
 *   outside its sirq_param_range()): sirq_params_why_invalid() says
 *   which.
 */
int sirq_params_check(const struct sirq_params *p);

/**
 * Why a parameter set is refused, for an error message.
 *
 * Context: any thread; never waits.
 *
 * @param p  the parameters.
 * @return NULL if sirq_params_check() accepts @p p, else a constant
 *   string naming the first bad field and its range: the field's
 *   sirq_param_range()->why, e.g. "max_restart must be in 1..1000".
 */
const char *sirq_params_why_invalid(const struct sirq_params *p);

/**
 * sirq_params_why_invalid() for the parameters of a given CPU: also
 * refuses an expedited_mask that names a vector without a handler on
 * @p cpu (such a bit would keep nothing, or make a later vector
 * expedited unasked). sirq_cpu_set_params() applies this check;
 * sirq_cpu_init() applies only sirq_params_why_invalid(), since the
 * vectors are registered after it.
 *
 * Context: any thread; never waits.
 *
 * @param cpu  the CPU.
 * @param p    the parameters.
 * @return NULL if usable, else a constant string as
 *   sirq_params_why_invalid(); for a NULL @p cpu, "no CPU (NULL)".
 */
const char *sirq_cpu_params_why_invalid(const struct sirq_cpu *cpu,
					const struct sirq_params *p);

/**
 * Name of a policy.
 *
 * Context: any thread; never waits.
 *
 * @param id  the policy.
 * @return its name ("mainline", "ksoftirqd", "kicinski", "deferred", "rt",
 *   "pushdown", "pushdown-locked"), a
 *   constant string; NULL if @p id is unknown.
 */
const char *sirq_policy_name(enum sirq_policy_id id);

/**
 * Policy by name. "threaded", the old name of "deferred", is still taken.
 *
 * Context: any thread; never waits.
 *
 * @param name  a name as sirq_policy_name() gives it.
 * @return the policy id, or -EINVAL if @p name names no policy.
 */
int sirq_policy_from_name(const char *name);

/**
 * Name of a vector of @p cpu: the registered name, or the kernel's, or
 * "V<n>" for an application vector registered without one.
 *
 * Context: any thread; never waits.
 *
 * @param cpu  the CPU.
 * @param vec  the vector, below SIRQ_MAX_VECTORS.
 * @return the name, valid as long as @p cpu; NULL for a bad vector or a
 *   NULL @p cpu.
 */
const char *sirq_vector_name(const struct sirq_cpu *cpu, unsigned int vec);

/**
 * Name of a pass exit reason, for reports.
 *
 * Context: any thread; never waits.
 *
 * @param e  the reason.
 * @return a constant string ("drained", ...); NULL if @p e is out of range.
 */
const char *sirq_exit_name(enum sirq_exit e);

/**
 * Name of a worker wake-up reason, for reports.
 *
 * Context: any thread; never waits.
 *
 * @param w  the reason.
 * @return a constant string; NULL if @p w is out of range.
 */
const char *sirq_wake_name(enum sirq_wake w);

/**
 * Name of a kicinski deferral window, for reports.
 *
 * Context: any thread; never waits.
 *
 * @param w  the window.
 * @return a constant string; NULL if @p w is out of range.
 */
const char *sirq_window_name(enum sirq_window w);

/**
 * Name of a handler context, for reports.
 *
 * Context: any thread; never waits.
 *
 * @param c  the context.
 * @return "inline" or "worker"; NULL if @p c is out of range.
 */
const char *sirq_ctx_name(enum sirq_ctx c);

/*
 * A CPU's life.
 */

/**
 * Bytes needed for one struct sirq_cpu (for sirq_cpu_init()).
 *
 * Context: any thread; never waits.
 *
 * @return the size in bytes.
 */
size_t sirq_cpu_memsize(void);

/**
 * Initialise a CPU in caller-provided memory, e.g. rte_zmalloc_socket()
 * on the lcore's socket.
 *
 * Context: any thread, before any other thread uses the CPU; never waits.
 *
 * @param mem   sirq_cpu_memsize() bytes, aligned to 64.
 * @param conf  the configuration; copied (the name too).
 * @return the CPU, or NULL with errno EINVAL (NULL argument, bad params,
 *   missing clock_ns, misaligned memory).
 */
struct sirq_cpu *sirq_cpu_init(void *mem, const struct sirq_cpu_conf *conf);

/**
 * Allocate and initialise a CPU.
 *
 * Context: any thread; never waits (it allocates).
 *
 * @param conf  the configuration; copied (the name too).
 * @return the CPU, or NULL with errno EINVAL (as sirq_cpu_init()) or
 *   ENOMEM.
 */
struct sirq_cpu *sirq_cpu_create(const struct sirq_cpu_conf *conf);

/**
 * Free a CPU from sirq_cpu_create().
 *
 * Context: any thread, once no other thread uses the CPU: its
 * dispatcher has stopped and its worker is parked and joined; never waits.
 *
 * @param cpu  the CPU; NULL does nothing.
 */
void sirq_cpu_free(struct sirq_cpu *cpu);

/**
 * The configuration given at init, with the parameters of the last
 * sirq_cpu_set_params().
 *
 * Context: any thread; never waits. A change made meanwhile by another
 * thread may be seen half made.
 *
 * @param cpu  the CPU.
 * @return the configuration (its name points into the CPU), valid as
 *   long as @p cpu; NULL for a NULL @p cpu.
 */
const struct sirq_cpu_conf *sirq_cpu_conf(const struct sirq_cpu *cpu);

/**
 * Mark the CPU stopping, or running again. While it is stopping every
 * pass under way (the dispatcher's, sirq_bh_enable()'s, the worker's)
 * ends at its next vector boundary with SIRQ_EXIT_STOP and leaves the
 * rest pending, as it does for a lock waiter: a stop waits for one
 * handler run, not for a pass of up to max_time_ns and max_restart
 * rounds. No worker is woken and no window opens for it, and the worker
 * begins no pass: sirq_worker_run() returns SIRQ_WORKER_SLEEP.
 * sirq_lcore_stop() sets it; sirq_lcore_main() clears it when it returns.
 *
 * Context: any thread, and a signal handler; never waits.
 *
 * @param cpu       the CPU; NULL does nothing.
 * @param stopping  true to cut passes short, false to let them run.
 */
void sirq_cpu_set_stopping(struct sirq_cpu *cpu, bool stopping);

/**
 * Change policy and parameters of a live CPU. The change is made under
 * the execution lock, so the next pass obeys it; open deferral windows
 * are closed. On a DPDK lcore, sirq_lcore_set_params() changes these
 * and the binding's parameters together, from any thread.
 *
 * Context: a thread of @p cpu's own (ops.remote_caller false), including a
 * handler of @p cpu and a bottom-half section on it (no wait there);
 * elsewhere it waits for the execution lock, at most until the holder's
 * next vector boundary (one handler run).
 *
 * @param cpu  the CPU.
 * @param p    the new parameters; copied.
 * @return 0; -EINVAL for NULL or bad parameters
 *   (sirq_cpu_params_why_invalid() says which; nothing changed);
 *   -EXDEV from a thread on another CPU (ops.remote_caller; nothing
 *   changed, nothing waited for).
 */
int sirq_cpu_set_params(struct sirq_cpu *cpu, const struct sirq_params *p);

/*
 * Vectors.
 */

/**
 * Register the handler of a vector (the kernel's open_softirq()).
 *
 * An application that wants a vector of its own should take one with
 * sirq_vector_alloc() instead of choosing a number. A vector has one
 * handler: to change it, sirq_unregister() first.
 *
 * Context: before the CPU runs (on a DPDK lcore: before
 * sirq_lcore_main() or after it returns), from any thread; while it
 * runs, only from one of the CPU's own threads (ops.remote_caller 0: the
 * dispatcher, its handlers, threads pinned to its CPUs). Never waits.
 *
 * @param cpu      the CPU.
 * @param vec      the vector, below SIRQ_MAX_VECTORS.
 * @param handler  its handler.
 * @param arg      the handler's argument.
 * @param name     short name for reports (copied, truncated to 15
 *   chars); NULL keeps the kernel's name or "V<n>".
 * @return 0; -EINVAL if @p cpu is NULL, @p vec >= SIRQ_MAX_VECTORS or
 *   @p handler is NULL; -EBUSY if the vector has a handler already
 *   (HI and TASKLET have the tasklets'; on a DPDK lcore TIMER, NET_RX
 *   and NET_TX have the binding's), or from another CPU's thread while
 *   the CPU runs (nothing changed).
 */
int sirq_register(struct sirq_cpu *cpu, unsigned int vec,
		  sirq_handler_t handler, void *arg, const char *name);

/**
 * sirq_register() with flags: SIRQ_VEC_BH_SAFE, the handler needs no BH
 * lock (honoured by SIRQ_POLICY_PUSHDOWN only).
 *
 * Context: as sirq_register(); never waits.
 *
 * @param cpu      the CPU.
 * @param vec      the vector, below SIRQ_MAX_VECTORS.
 * @param handler  its handler.
 * @param arg      the handler's argument.
 * @param name     as sirq_register().
 * @param flags    0 or SIRQ_VEC_BH_SAFE.
 * @return as sirq_register(); -EINVAL for an unknown flag too.
 */
int sirq_register_flags(struct sirq_cpu *cpu, unsigned int vec,
			sirq_handler_t handler, void *arg, const char *name,
			uint32_t flags);

/**
 * Remove a vector's handler: the vector can be registered again. A
 * raise of it then fails with -EINVAL; a raise that crossed this call
 * runs nothing.
 *
 * Context: as sirq_register(). From a thread that does not hold the
 * CPU's execution lock it waits for it, at most until the holder's next
 * vector boundary (one handler run); inside a handler it does not wait
 * and refuses (-EBUSY), since a pass is under way.
 *
 * @param cpu  the CPU.
 * @param vec  the vector.
 * @return 0; -EINVAL for a NULL @p cpu or @p vec >= SIRQ_MAX_VECTORS;
 *   -ENOENT if it has no handler; -EBUSY while it is pending, running,
 *   or run by a softirq thread of an execution model, for HI, TASKLET
 *   and the binding's vectors, from inside a pass, and from another
 *   CPU's thread while the CPU runs (nothing changed).
 */
int sirq_unregister(struct sirq_cpu *cpu, unsigned int vec);

/**
 * Take a free application vector (one past the kernel's ten, with no
 * handler yet) and register @p handler on it. Give it back with
 * sirq_vector_free().
 *
 * Context: as sirq_register(); never waits. Two threads allocating at
 * once get two vectors.
 *
 * @param cpu      the CPU.
 * @param handler  its handler.
 * @param arg      the handler's argument.
 * @param name     short name for reports (copied, truncated to 15
 *   chars); NULL keeps "V<n>".
 * @return the vector number (>= SIRQ_NR_KERNEL_VECTORS), to pass to
 *   sirq_raise(); -EINVAL if @p cpu or @p handler is NULL; -ENOSPC when
 *   all SIRQ_MAX_VECTORS are taken; -EBUSY from another CPU's thread
 *   while the CPU runs.
 */
int sirq_vector_alloc(struct sirq_cpu *cpu, sirq_handler_t handler, void *arg,
		      const char *name);

/**
 * sirq_vector_alloc() with flags, in one call: SIRQ_VEC_BH_SAFE for a
 * handler that needs no BH lock (honoured by SIRQ_POLICY_PUSHDOWN).
 *
 * Context: as sirq_vector_alloc().
 *
 * @param cpu      the CPU.
 * @param handler  its handler.
 * @param arg      the handler's argument.
 * @param name     as sirq_vector_alloc().
 * @param flags    0 or SIRQ_VEC_BH_SAFE.
 * @return as sirq_vector_alloc(); -EINVAL for an unknown flag too.
 */
int sirq_vector_alloc_flags(struct sirq_cpu *cpu, sirq_handler_t handler,
			    void *arg, const char *name, uint32_t flags);

/**
 * Give back a vector from sirq_vector_alloc(): sirq_unregister() for an
 * application vector.
 *
 * Context: as sirq_unregister().
 *
 * @param cpu  the CPU.
 * @param vec  the vector sirq_vector_alloc() returned.
 * @return as sirq_unregister(); -EINVAL for a kernel vector
 *   (below SIRQ_NR_KERNEL_VECTORS).
 */
int sirq_vector_free(struct sirq_cpu *cpu, unsigned int vec);

/**
 * Mark a vector pending (raise_softirq()).
 *
 * The time of the first raise since the vector last ran is kept for the
 * raise-to-run latency. From process context on the CPU (ops.in_task) an
 * idle worker is woken (SIRQ_WAKE_RAISE), as raise_softirq() does there;
 * otherwise, if the mask was empty, ops.kick is called.
 *
 * Context: any thread, including handlers; never waits (beyond what
 * ops.kick and ops.wake_worker do).
 *
 * @param cpu  the CPU.
 * @param vec  a vector with a handler.
 * @return 0, or -EINVAL if @p vec has no handler or @p cpu is NULL
 *   (nothing is marked).
 */
int sirq_raise(struct sirq_cpu *cpu, unsigned int vec);

/**
 * Mark a vector pending without calling ops.kick (raise_softirq_irqoff()),
 * for the dispatcher's own polling and for handlers, which run on a
 * thread that looks at the pending mask anyway.
 *
 * Context: any thread; never waits. From a thread that will not look at
 * the pending mask, the work waits for the next raise or look.
 *
 * @param cpu  the CPU.
 * @param vec  a vector with a handler.
 * @return 0, or -EINVAL if @p vec has no handler or @p cpu is NULL.
 */
int sirq_raise_irqoff(struct sirq_cpu *cpu, unsigned int vec);

/**
 * The pending mask now.
 *
 * Context: any thread; never waits. A racy snapshot.
 *
 * @param cpu  the CPU.
 * @return bit n set if vector n is pending; 0 for a NULL @p cpu.
 */
uint32_t sirq_pending(const struct sirq_cpu *cpu);

/**
 * Set or clear the application's need_resched flag, ORed with
 * ops.need_resched: while it is set, a pass may end early and leave its
 * work to the worker, as the policy says.
 *
 * Context: any thread; never waits.
 *
 * @param cpu       the CPU.
 * @param want_cpu  true: the application wants the CPU now.
 */
void sirq_set_need_resched(struct sirq_cpu *cpu, bool want_cpu);

/**
 * Does the application want the CPU now: the flag of
 * sirq_set_need_resched() or ops.need_resched.
 *
 * Context: any thread; never waits (beyond ops.need_resched).
 *
 * @param cpu  the CPU.
 * @return true if it does; false for a NULL @p cpu.
 */
bool sirq_need_resched(const struct sirq_cpu *cpu);

/*
 * The dispatcher and the worker: what a binding calls. On a DPDK lcore
 * sirq_lcore_main() makes these calls.
 */

/**
 * The dispatcher's irq_enter(): take the CPU's execution lock for the
 * "hardirq" that follows, so that it may touch per-CPU state that the
 * handlers share (for a DPDK lcore: its mempool cache, its rte_timer
 * list), whichever thread runs the handlers. sirq_irq_exit() then runs
 * pending work under the same lock and releases it.
 *
 * Context: the CPU's dispatcher thread only; never waits: it only tries
 * the lock, and leaves it to a thread waiting for it.
 *
 * @param cpu  the CPU.
 * @return true if the lock is held by the caller now (taken here, or
 *   already held because bottom halves are off on this thread); false if
 *   another thread holds it (the worker in a pass) or waits for it: the
 *   caller must not touch the shared state and need not call
 *   sirq_irq_exit().
 */
bool sirq_irq_enter(struct sirq_cpu *cpu);

/**
 * The dispatcher's irq_exit(): run pending work as the policy says.
 * After a successful sirq_irq_enter() it runs under the lock taken there
 * and releases it. Called alone it tries the lock itself. A pass that
 * ends with work left wakes the worker with the reason.
 *
 * Context: the CPU's dispatcher thread only. Never waits for the lock:
 * if another thread holds it, returns SIRQ_IRQ_EXIT_BUSY and leaves the
 * work pending (call again later). May run one pass of handlers inline:
 * at most max_restart rounds and max_time_ns plus the handler running
 * then; less if the application wants the CPU or a thread waits for the
 * lock.
 *
 * @param cpu  the CPU.
 * @return what it did; SIRQ_IRQ_EXIT_IDLE for a NULL @p cpu.
 */
enum sirq_irq_exit_result sirq_irq_exit(struct sirq_cpu *cpu);

/**
 * One run of the worker thread (run_ksoftirqd()): one pass of the loop
 * if work is pending, or the worker marked idle when nothing is. The
 * return value tells the thread what to do next; no wake-up is lost
 * between SIRQ_WORKER_SLEEP and the thread's sleep as long as
 * ops.wake_worker leaves a token that the sleep consumes (an eventfd or
 * futex counter). While the CPU is stopping (sirq_cpu_set_stopping()) it
 * begins no pass and returns SIRQ_WORKER_SLEEP, the work left pending.
 *
 * Context: the CPU's worker thread only. Never waits for the lock
 * (SIRQ_WORKER_BUSY while another thread holds it); runs one pass at
 * most, as sirq_irq_exit() does.
 *
 * @param cpu  the CPU.
 * @return what the thread does next; SIRQ_WORKER_EXIT for a NULL @p cpu.
 */
enum sirq_worker_status sirq_worker_run(struct sirq_cpu *cpu);

/**
 * Wake the worker if it is idle (SIRQ_WAKE_EXPLICIT).
 *
 * Context: any thread; never waits (beyond ops.wake_worker).
 *
 * @param cpu  the CPU; NULL does nothing.
 */
void sirq_worker_wakeup(struct sirq_cpu *cpu);

/**
 * Stop the worker: from now on it is never woken nor waited for, and its
 * next sirq_worker_run() returns SIRQ_WORKER_EXIT. The caller then wakes
 * the thread itself and joins it.
 *
 * Context: any thread; never waits.
 *
 * @param cpu  the CPU; NULL does nothing.
 */
void sirq_worker_park(struct sirq_cpu *cpu);

/**
 * Undo sirq_worker_park() before starting a new worker thread. A CPU
 * without ops.wake_worker stays parked.
 *
 * Context: any thread, while no worker thread of the CPU runs; never
 * waits.
 *
 * @param cpu  the CPU; NULL does nothing.
 */
void sirq_worker_unpark(struct sirq_cpu *cpu);

/**
 * The worker's state now.
 *
 * Context: any thread; never waits. A racy snapshot.
 *
 * @param cpu  the CPU.
 * @return the state; SIRQ_WORKER_PARKED for a NULL @p cpu.
 */
enum sirq_worker_state sirq_worker_state(const struct sirq_cpu *cpu);

/*
 * Softirq threads: the execution models' own threads (SIRQ_POLICY_RT's
 * ktimers, SIRQ_POLICY_PUSHDOWN's thread per vector), beside the worker.
 * A thread is named by the lowest vector it runs (its lead): ktimers is
 * SIRQ_TIMER, a pushdown thread its vector. The binding starts the
 * threads that sirq_threads_wanted() names, attaches each, and calls
 * sirq_thread_run() whenever ops.wake is called for it.
 */

/** How the engine reaches the binding's softirq threads. */
struct sirq_thread_ops {
	/**
	 * Make softirq thread @c thread call sirq_thread_run(). Called once
	 * per transition of the thread from idle to runnable, from the
	 * raising thread. Required.
	 */
	void (*wake)(void *ctx, unsigned int thread);
	/**
	 * Optional: the calling thread starts to wait for the BH lock,
	 * which the thread with token @c holder holds (priority
	 * inheritance: lend it the waiter's priority until it drops the
	 * lock, as an rtmutex does). Called once per wait, without the
	 * lock; @c holder may have dropped it already.
	 */
	void (*lock_wait)(void *ctx, uintptr_t holder);
	void *ctx;			/**< argument of every callback */
};

/**
 * Give @p cpu softirq threads. Until then the models that want them
 * leave those vectors to the worker (or to the dispatcher).
 *
 * Context: any thread; waits for the execution lock as
 * sirq_cpu_set_params() does.
 *
 * @param cpu  the CPU.
 * @param ops  the callbacks; copied. NULL takes them away (every
 *   thread detached).
 * @return 0; -EINVAL for a NULL @p cpu or a NULL ops->wake.
 */
int sirq_thread_ops_set(struct sirq_cpu *cpu, const struct sirq_thread_ops *ops);

/**
 * The softirq threads the CPU's model would use for its registered
 * vectors: bit n set for the thread whose lead vector is n.
 *
 * Context: any thread; never waits. A racy snapshot.
 *
 * @param cpu  the CPU.
 * @return the mask; 0 for models without threads and for a NULL @p cpu.
 */
uint32_t sirq_threads_wanted(const struct sirq_cpu *cpu);

/**
 * The softirq thread that runs vector @p vec under the CPU's model.
 *
 * Context: any thread; never waits.
 *
 * @param cpu  the CPU.
 * @param vec  the vector.
 * @return the thread's lead vector; -ENOENT if no thread runs @p vec
 *   (it is attached or not); -EINVAL for a NULL @p cpu or a bad vector.
 */
int sirq_thread_of(const struct sirq_cpu *cpu, unsigned int vec);

/**
 * A softirq thread is ready to run: its vectors go to it from now on.
 *
 * Context: any thread; waits for the execution lock as
 * sirq_cpu_set_params() does.
 *
 * @param cpu     the CPU.
 * @param thread  the thread's lead vector.
 * @return 0; -EINVAL for a NULL @p cpu, a bad @p thread or no
 *   sirq_thread_ops_set() yet.
 */
int sirq_thread_attach(struct sirq_cpu *cpu, unsigned int thread);

/**
 * Stop a softirq thread: its vectors go back to the worker and the
 * dispatcher, its next sirq_thread_run() returns SIRQ_WORKER_EXIT.
 * Waits until a round it runs without the BH lock has ended.
 *
 * Context: any thread but the softirq thread itself; waits for the
 * execution lock as sirq_cpu_set_params() does.
 *
 * @param cpu     the CPU.
 * @param thread  the thread's lead vector.
 * @return 0; -EINVAL for a NULL @p cpu or a bad @p thread.
 */
int sirq_thread_detach(struct sirq_cpu *cpu, unsigned int thread);

/**
 * The body of softirq thread @p thread: one round of its pending
 * vectors, lowest first, under the BH lock unless all of them are safe
 * under the model (SIRQ_VEC_BH_SAFE with SIRQ_POLICY_PUSHDOWN). No time
 * or restart limit: a round runs each pending vector once, and the
 * thread is asked back (SIRQ_WORKER_YIELD) while any is pending again,
 * so the OS scheduler decides how long it runs.
 *
 * Context: the softirq thread only. Waits for the BH lock when its
 * vectors need it (at most until the holder's next vector boundary, the
 * holder lent the caller's priority through ops.lock_wait); never with
 * bottom halves off on the calling thread.
 *
 * @param cpu     the CPU.
 * @param thread  the thread's lead vector.
 * @return SIRQ_WORKER_SLEEP: idle, wait for ops.wake;
 *   SIRQ_WORKER_YIELD: more is pending, call again (after letting the
 *   scheduler in); SIRQ_WORKER_BUSY: the caller has bottom halves off;
 *   SIRQ_WORKER_EXIT: detached, leave the thread loop.
 */
enum sirq_worker_status sirq_thread_run(struct sirq_cpu *cpu,
					unsigned int thread);

/**
 * State of a softirq thread, as the engine sees it.
 *
 * Context: any thread; never waits.
 *
 * @param cpu     the CPU.
 * @param thread  the thread's lead vector.
 * @return SIRQ_WORKER_PARKED when detached, or for bad arguments.
 */
enum sirq_worker_state sirq_thread_state(const struct sirq_cpu *cpu,
					 unsigned int thread);

/*
 * Bottom halves.
 */

/**
 * Disable bottom halves on @p cpu for the calling thread
 * (local_bh_disable()): take the CPU's execution lock, so that no handler
 * of @p cpu runs until the matching sirq_bh_enable(). Nests. Code on
 * the CPU that shares per-CPU state with the handlers (on a DPDK lcore:
 * its mempool cache, its rte_timer list) uses it around that state.
 *
 * As local_bh_disable() in the kernel, it is for the CPU's own tasks:
 * a thread on another CPU (ops.remote_caller: on a DPDK lcore, a thread not
 * pinned to the lcore's CPUs while the lcore runs) is refused, because
 * a section there lasts as long as that thread's scheduler wants, and
 * the CPU's handlers would wait for it. Such a thread asks the CPU to
 * do the work (sirq_lcore_call()) or uses RCU for tables.
 *
 * Context: a thread of @p cpu's own, including a handler of @p cpu and
 * a section already disabled (no wait there). Elsewhere it waits for
 * the execution lock, at most until the holder's next vector boundary
 * (one handler run): a pass that sees a waiter hands the lock over
 * there, and waiters get it in the order they came.
 *
 * @param cpu  the CPU.
 * @return 0 with bottom halves off; -EXDEV from a thread on another
 *   CPU (nothing taken: its sirq_bh_enable() returns -EPERM; counted in
 *   remote_refused); -EINVAL for a NULL @p cpu.
 */
int sirq_bh_disable(struct sirq_cpu *cpu);

/**
 * Re-enable bottom halves (local_bh_enable()). The outermost enable runs
 * pending work through the same policy test as sirq_irq_exit(), on a
 * thread that ops.is_local accepts; elsewhere it calls ops.kick and
 * leaves the work to the CPU's dispatcher. A section opened while the
 * thread held the lock already (a handler, a "hardirq" between
 * sirq_irq_enter() and sirq_irq_exit(), a remote call the dispatcher
 * runs) ends with the lock still held and runs nothing: as in the
 * kernel's interrupt context, the holder runs the pending work.
 *
 * Context: the thread that called sirq_bh_disable(). Never waits; the
 * outermost enable on one of the CPU's own threads may run one pass of
 * handlers inline, as sirq_irq_exit() does.
 *
 * @param cpu  the CPU.
 * @return 0; -EPERM if this thread has no matching sirq_bh_disable();
 *   -EINVAL for a NULL @p cpu.
 */
int sirq_bh_enable(struct sirq_cpu *cpu);

/*
 * Counters.
 */

/**
 * Copy the counters of @p cpu.
 *
 * Context: any thread; never waits. Each counter is read atomically, the
 * set as a whole is not a single snapshot.
 *
 * @param cpu  the CPU; NULL gives all zeros.
 * @param st   where to copy them; NULL does nothing.
 */
void sirq_stats_get(const struct sirq_cpu *cpu, struct sirq_stats *st);

/**
 * Zero the counters.
 *
 * Context: the dispatcher thread with the worker idle or parked, or any
 * thread while neither runs (a counter written meanwhile may keep its
 * value); never waits.
 *
 * @param cpu  the CPU; NULL does nothing.
 */
void sirq_stats_reset(struct sirq_cpu *cpu);

/**
 * Latency percentile from a histogram, as the upper bound of the bucket
 * that holds it (max_ns for the last one).
 *
 * Context: any thread; never waits.
 *
 * @param lat  the histogram, e.g. from sirq_stats_get().
 * @param q    quantile in [0, 1] (clamped).
 * @return nanoseconds; 0 if there are no samples or @p lat is NULL.
 */
uint64_t sirq_latency_quantile(const struct sirq_latency *lat, double q);

/*
 * Tasklets (kernel/softirq.c): deferred functions on HI or TASKLET.
 */

struct sirq_tasklet;

/**
 * A tasklet's function. It runs in a handler of the CPU it was scheduled
 * on, never concurrently with itself.
 *
 * @param t    the tasklet.
 * @param arg  the argument given to sirq_tasklet_init().
 */
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

/**
 * Prepare a tasklet, or revive a killed one.
 *
 * Context: any thread, while the tasklet is neither scheduled nor
 * running; never waits.
 *
 * @param t    the tasklet; NULL does nothing.
 * @param fn   its function.
 * @param arg  the function's argument.
 */
void sirq_tasklet_init(struct sirq_tasklet *t, sirq_tasklet_fn_t fn,
		       void *arg);

/**
 * Schedule @p t on @p cpu's TASKLET vector (tasklet_schedule()).
 *
 * Scheduling an already scheduled tasklet does nothing; a tasklet that
 * schedules itself while running runs once more. It never runs
 * concurrently with itself, even when scheduled on several CPUs.
 *
 * Context: any thread, including handlers and the tasklet itself; never
 * waits.
 *
 * @param cpu  the CPU to run it on.
 * @param t    the tasklet.
 * @return true if this call scheduled it; false if it was already
 *   scheduled, has been killed, or an argument is NULL.
 */
bool sirq_tasklet_schedule(struct sirq_cpu *cpu, struct sirq_tasklet *t);

/**
 * As sirq_tasklet_schedule(), on the HI vector (tasklet_hi_schedule()).
 *
 * Context: any thread, including handlers and the tasklet itself; never
 * waits.
 *
 * @param cpu  the CPU to run it on.
 * @param t    the tasklet.
 * @return as sirq_tasklet_schedule().
 */
bool sirq_tasklet_hi_schedule(struct sirq_cpu *cpu, struct sirq_tasklet *t);

/**
 * Disable a tasklet and wait until it is not running. Nests. While
 * disabled it stays scheduled and runs after the matching enable.
 *
 * Context: any thread but the tasklet itself (which would wait for
 * itself); waits, yielding, until the tasklet is not running: at most
 * the rest of one run of it.
 *
 * @param t  the tasklet; NULL does nothing.
 */
void sirq_tasklet_disable(struct sirq_tasklet *t);

/**
 * Disable without waiting (tasklet_disable_nosync()): a run already
 * started finishes.
 *
 * Context: any thread, including the tasklet itself; never waits.
 *
 * @param t  the tasklet; NULL does nothing.
 */
void sirq_tasklet_disable_nosync(struct sirq_tasklet *t);

/**
 * Undo one disable.
 *
 * Context: any thread; never waits.
 *
 * @param t  the tasklet.
 * @return 0, or -EINVAL if the tasklet was not disabled or is NULL.
 */
int sirq_tasklet_enable(struct sirq_tasklet *t);

/**
 * Kill a tasklet: wait until it is neither scheduled nor running, then
 * refuse further scheduling until sirq_tasklet_init().
 *
 * Context: any thread but a handler of a CPU that the tasklet is
 * scheduled on, and not for a disabled tasklet that is scheduled (either
 * would wait forever); waits, yielding, until the tasklet has run if it
 * was scheduled: at most until that CPU's next pass reaches it.
 *
 * @param t  the tasklet; NULL does nothing.
 */
void sirq_tasklet_kill(struct sirq_tasklet *t);

/**
 * Is the tasklet scheduled (waiting to run)?
 *
 * Context: any thread; never waits. A racy snapshot.
 *
 * @param t  the tasklet.
 * @return true if scheduled; false if not, or NULL.
 */
bool sirq_tasklet_is_scheduled(const struct sirq_tasklet *t);

/**
 * Mark a tasklet safe without the BH lock (its data under a lock of its
 * own): the pushdown model runs it in the TASKLET or HI thread beside a
 * bottom-half section; an unsafe one gets the BH lock around its
 * function there. The other models ignore the mark. sirq_tasklet_init()
 * clears it.
 *
 * Context: any thread, while the tasklet is not scheduled; never waits.
 *
 * @param t     the tasklet; NULL does nothing.
 * @param safe  true: safe without the BH lock.
 */
void sirq_tasklet_set_bh_safe(struct sirq_tasklet *t, bool safe);

#ifdef __cplusplus
}
#endif

#endif /* SIRQ_ENGINE_H */
