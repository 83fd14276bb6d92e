/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_LCORE_H
#define SIRQ_LCORE_H

/**
 * @file
 * The DPDK binding: a softirq dispatcher per lcore, NAPI on its Rx
 * queues, TX, the control plane, telemetry.
 *
 * This is the header a DPDK application includes. It includes the
 * engine's, sirq_engine.h, for what runs on an lcore (your own vectors,
 * sirq_raise(), tasklets, sirq_bh_disable(), the engine's parameters and
 * counters); it needs no DPDK header itself (struct rte_mbuf and struct
 * rte_rcu_qsbr are only declared), but the library links against DPDK.
 *
 * The sequence, from rte_eal_init() to a clean exit: sirq_lcore_conf_default(),
 * sirq_lcore_create(), sirq_lcore_add_rx_queue() and
 * sirq_lcore_add_tx_queue() for each queue, sirq_telemetry_register() if
 * you want the /sirq/ commands, rte_eal_remote_launch(sirq_lcore_main,
 * lc, lcore_id); then sirq_lcore_stop() (or sirq_lcore_stop_all() from a
 * signal handler), rte_eal_wait_lcore(), sirq_lcore_free(). The guide,
 * docs/guide.md in the source tree, walks through it.
 *
 * An lcore's dispatcher polls its "hardirq" sources (NIC Rx queues, the
 * rte_timer deadline), raises their vectors, then calls sirq_irq_exit();
 * in poll mode it then runs the application's slice (conf.app_fn) on the
 * same lcore. Its worker is a pthread "sirqd/<lcore>" sleeping on an
 * eventfd, which runs handlers as the lcore (rte_lcore_id() is the
 * lcore's): every use of the lcore's DPDK state, by either thread, holds
 * the execution lock. Application code on the lcore that touches that
 * state (its mempool cache, its rte_timer list) outside a handler must
 * hold sirq_bh_disable(), as kernel code does for per-CPU data that
 * softirqs share. Threads on other CPUs never take that lock while the
 * lcore runs (sirq_bh_disable() refuses them with -EXDEV): they ask the
 * lcore to do the work (sirq_lcore_call()) or use RCU (conf.qsbr).
 *
 * The binding runs TIMER (the lcore's rte_timer list), NET_RX and NET_TX
 * itself: sirq_register() refuses them. An application takes vectors of
 * its own with sirq_vector_alloc() on sirq_lcore_cpu().
 *
 * Errors follow the engine's convention (sirq_engine.h): 0 or a negative
 * errno; sirq_lcore_create() returns NULL and sets rte_errno and errno.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sirq_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_mbuf;
struct rte_rcu_qsbr;

/**
 * The dispatcher state of one lcore: its engine CPU, Rx queues (NAPI
 * contexts), TX queues, sirqd. Opaque: made by sirq_lcore_create().
 */
struct sirq_lcore;

/** Dispatcher modes (docs/design.md, "Two dispatcher modes"). */
enum sirq_mode {
	SIRQ_MODE_POLL = 0,	/**< busy-poll; the default */
	SIRQ_MODE_IRQ,		/**< SCHED_FIFO, sleeps until Rx or a tick */
	SIRQ_MODE_MAX,		/**< number of modes */
};

/** NAPI weight (net/core/dev.c): packets per queue per poll. */
#define SIRQ_NAPI_WEIGHT_DEFAULT 64
/** netdev_budget (net/core/dev.c): packets per NET_RX run. */
#define SIRQ_NETDEV_BUDGET_DEFAULT 300
/** netdev_budget_usecs (net/core/dev.c): time per NET_RX run, us. */
#define SIRQ_NETDEV_BUDGET_US_DEFAULT 2000
/** irq mode: the interrupt-coalescing analogue when no Rx interrupt comes, us. */
#define SIRQ_IRQ_TICK_US_DEFAULT 100
/** irq mode: the dispatcher's SCHED_FIFO priority. */
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
 * NAPI weight of packets; it owns the mbufs from then on. It runs as a
 * handler of the lcore's CPU (on the dispatcher, sirqd, the queue's NAPI
 * thread or a busy poller, always as the lcore), so it may call
 * sirq_tx() and its variants.
 *
 * @param lc       the lcore.
 * @param port     the queue's port.
 * @param queue    the queue.
 * @param pkts     the packets.
 * @param nb_pkts  how many, 1 or more.
 * @param arg      the argument given to sirq_lcore_add_rx_queue().
 */
typedef void (*sirq_rx_fn_t)(struct sirq_lcore *lc, uint16_t port,
			     uint16_t queue, struct rte_mbuf **pkts,
			     uint16_t nb_pkts, void *arg);

/**
 * The application's slice on a poll-mode lcore (the "process"): called
 * on the lcore's thread after each dispatcher iteration, with bottom
 * halves on.
 *
 * @param lc   the lcore.
 * @param arg  conf.app_arg.
 */
typedef void (*sirq_app_fn_t)(struct sirq_lcore *lc, void *arg);

/**
 * Does the application sharing the lcore want the CPU now? Asked by the
 * dispatcher and by threads ending a bottom-half section: thread-safe,
 * and quick.
 *
 * @param arg  conf.need_resched_arg.
 * @return true if it does.
 */
typedef bool (*sirq_need_resched_fn_t)(void *arg);

/** What sirq_napi_get() reports of one NAPI context (netdev-genl napi-get). */
struct sirq_napi_info {
	unsigned int id;		/**< index on its lcore, in add order */
	uint16_t port;			/**< its Rx queue's port */
	uint16_t queue;			/**< its Rx queue */
	struct sirq_napi_params params;	/**< its settings now */
	int thread_tid;			/**< its thread's TID; -1 without one */
	bool scheduled;			/**< NAPI_STATE_SCHED */
	bool irq_masked;		/**< idle, interrupt left off (deferred) */
	/**
	 * NAPI_STATE_IN_BUSY_POLL: a busy poller holds it, an application
	 * (sirq_napi_busy_poll()) or, in threaded busy-poll mode, its own
	 * thread; no poll completes it meanwhile.
	 */
	bool in_busy_poll;
	uint64_t deferred;		/**< completions that left it masked */
	uint64_t watchdog;		/**< timer expiries that scheduled it */
	uint64_t busy_polls;		/**< polls by busy-polling applications */
	uint64_t busy_packets;		/**< ... packets they took */
	uint64_t thread_polls;		/**< polls by its thread */
	/**
	 * Packets taken from its queue by every poll: NET_RX's, its
	 * thread's and busy pollers' (the per-queue share of rx_packets).
	 */
	uint64_t packets;
	/**
	 * irq mode: its queue's Rx interrupts that woke the dispatcher (the
	 * per-queue share of irq_rx_events); 0 in poll mode and for a queue
	 * without an interrupt.
	 */
	uint64_t irqs;
};

/** The kernel's BUSY_POLL_BUDGET: packets per busy poll by default. */
#define SIRQ_BUSY_POLL_BUDGET_DEFAULT 8

/** Configuration of one lcore; sirq_lcore_conf_default() fills it. */
struct sirq_lcore_conf {
	struct sirq_params params;	/**< engine parameters and policy */
	enum sirq_mode mode;		/**< poll (default) or irq mode; fixed */
	uint16_t napi_weight;		/**< packets per queue per poll, 8..256 */
	uint16_t netdev_budget;		/**< packets per NET_RX run, 1..10000 */
	uint32_t netdev_budget_us;	/**< time per NET_RX run, 1..100000 us */
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
	void *app_arg;			/**< app_fn's argument */
	sirq_need_resched_fn_t need_resched_fn;	/**< optional */
	void *need_resched_arg;		/**< need_resched_fn's argument */
	/**
	 * Optional RCU: the dispatcher reports a quiescent state after every
	 * iteration as @c qsbr_dispatcher_id (online from the start of
	 * sirq_lcore_main() until it returns, offline while it sleeps), the
	 * worker after every pass as @c qsbr_worker_id (and is offline while
	 * it sleeps). Both ids must be registered with
	 * rte_rcu_qsbr_thread_register(). These
	 * are then all the threads that run handlers: the execution models
	 * start no softirq threads (sirqd runs their vectors), and threaded
	 * NAPI is refused (-EINVAL here, -EOPNOTSUPP from sirq_napi_set()).
	 */
	struct rte_rcu_qsbr *qsbr;
	unsigned int qsbr_dispatcher_id;	/**< the dispatcher's thread id in @c qsbr */
	unsigned int qsbr_worker_id;	/**< sirqd's thread id in @c qsbr */
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

/**
 * Bytes and packets of one sender (a socket, a flow) handed to the NIC
 * and not yet released by the PMD: the TCP-small-queues accounting. When
 * tracked packets complete, NET_TX schedules @c tasklet on the lcore, so
 * that the sender can push its next batch.
 */
struct sirq_tx_tracker {
	struct sirq_tasklet *tasklet;	/**< scheduled on completion; may be NULL */
	uint64_t inflight_pkts;		/**< handed to the NIC, not released */
	uint64_t inflight_bytes;	/**< ... their bytes */
	uint64_t completed_pkts;	/**< released by the PMD (sent or dropped) */
	uint64_t completed_bytes;	/**< ... their bytes */
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
	/** Remote calls run on the lcore (sirq_lcore_call()). */
	uint64_t remote_calls;
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

/*
 * Set-up and life of an lcore.
 */

/**
 * Defaults: kernel values, poll mode, worker on the lcore's CPUs.
 *
 * Context: any thread; never waits.
 *
 * @param conf  the configuration to fill; NULL does nothing.
 */
void sirq_lcore_conf_default(struct sirq_lcore_conf *conf);

/**
 * Create the dispatcher state of an lcore, on its socket. It also
 * initialises DPDK's timer subsystem (rte_timer_subsystem_init()) if
 * nothing has yet: the lcore's TIMER vector runs rte_timer_manage().
 *
 * Context: the main lcore (or another EAL thread) after rte_eal_init(),
 * before the lcore is launched; never waits (it allocates).
 *
 * @param lcore_id  an enabled lcore, which will run sirq_lcore_main().
 * @param conf      the configuration; copied (worker_cpus is read here
 *   and not kept).
 * @return the lcore, or NULL with rte_errno and errno set: ENODEV before
 *   rte_eal_init(), EINVAL for a NULL or bad configuration or a lcore
 *   that is not enabled (logged with the bad value), EEXIST if the lcore
 *   has one already, ENOMEM.
 */
struct sirq_lcore *sirq_lcore_create(unsigned int lcore_id,
				     const struct sirq_lcore_conf *conf);

/**
 * Add an Rx queue (a NAPI context) to an lcore. It takes the settings
 * of conf.napi.
 *
 * Context: before the lcore is launched, on one thread at a time; never
 * waits.
 *
 * @param lc     the lcore.
 * @param port   a configured port.
 * @param queue  one of its Rx queues.
 * @param fn     the queue's receive function.
 * @param arg    @p fn's argument.
 * @return 0; -EINVAL for a NULL lcore or function, a bad port or queue;
 *   -ENOSPC beyond SIRQ_LCORE_MAX_NAPI.
 */
int sirq_lcore_add_rx_queue(struct sirq_lcore *lc, uint16_t port,
			    uint16_t queue, sirq_rx_fn_t fn, void *arg);

/**
 * Add a TX queue to an lcore, for sirq_tx() and its variants.
 *
 * Context: before the lcore is launched, on one thread at a time; never
 * waits.
 *
 * @param lc     the lcore.
 * @param port   a configured port.
 * @param queue  one of its TX queues.
 * @return the index for sirq_tx(), or -EINVAL for a NULL lcore, a bad
 *   port or queue, -ENOSPC beyond SIRQ_LCORE_MAX_TXQ, -ENOMEM.
 */
int sirq_lcore_add_tx_queue(struct sirq_lcore *lc, uint16_t port,
			    uint16_t queue);

/**
 * How an Rx queue tells libsirq that it has work without a poll taking
 * it: what NET_RX's "hardirq" looks at between polls.
 */
enum sirq_rx_work {
	/** rte_eth_rx_descriptor_status() (most NIC PMDs); lockless. */
	SIRQ_RX_WORK_DESC,
	/** rte_eth_rx_queue_count() (vmxnet3); lockless. */
	SIRQ_RX_WORK_COUNT,
	/** rte_eth_get_monitor_addr()'s condition (virtio); lockless. */
	SIRQ_RX_WORK_MONITOR,
	/**
	 * None of those: the fallback. The queue is fetched into a staging
	 * array of SIRQ_STAGE_SIZE packets, by the execution lock's holder.
	 */
	SIRQ_RX_WORK_FETCH,
};

/**
 * Which way libsirq will find work on an Rx queue: the choice an lcore
 * makes for each of its queues when it starts (its report's
 * rx_queues_desc_status, rx_queues_count, rx_queues_monitor), made here
 * the same way, for a program to print or check.
 *
 * Context: any thread, once the port is started and before an lcore
 * polls the queue, or while it does (it reads the queue's descriptor
 * status, count or monitor address, which the PMDs allow beside a poll);
 * never waits.
 *
 * @param port   a started port.
 * @param queue  one of its Rx queues.
 * @return an enum sirq_rx_work, or -EINVAL for a bad port or queue.
 */
int sirq_rx_queue_work(uint16_t port, uint16_t queue);

/**
 * The name of a way to find Rx work: "desc_status", "queue_count",
 * "monitor", "fetch".
 *
 * Context: any thread; never waits.
 *
 * @param work  an enum sirq_rx_work.
 * @return a static string; "?" for a value out of range.
 */
const char *sirq_rx_work_name(int work);

/**
 * Whether sirq_tx_tracked()'s completion on a TX queue will come from
 * the PMD (rte_eth_tx_done_cleanup(), which NET_TX calls while a tracked
 * packet waits) or from the fallback, the mbuf's reference count, seen
 * only once the PMD frees the mbuf on a later burst. The lcore makes
 * the same test at the queue's first flush.
 *
 * Context: a control thread, once the port is started and before any
 * thread transmits on the queue: it calls rte_eth_tx_done_cleanup(),
 * which frees what the NIC is done with and must not run beside the
 * queue's rte_eth_tx_burst(). Never waits.
 *
 * @param port   a started port.
 * @param queue  one of its TX queues.
 * @return 1 (the PMD's cleanup), 0 (the reference count), or -EINVAL
 *   for a bad port or queue.
 */
int sirq_tx_queue_cleanup(uint16_t port, uint16_t queue);

/**
 * Dispatcher entry for rte_eal_remote_launch() (or a direct call on the
 * lcore's own thread). Starts sirqd and the threads of threaded NAPI
 * contexts, runs until sirq_lcore_stop(), stops them, then runs what
 * they left once and frees what was fetched and never polled. It can be
 * launched again afterwards.
 *
 * Context: the lcore it was created for, only. Its loop ends within one
 * handler run of a stop (a pass under way ends at its next vector
 * boundary, SIRQ_EXIT_STOP, and the app_fn call running then); it then
 * waits for sirqd and the NAPI threads to end, each within its handler
 * run.
 *
 * @param arg  the struct sirq_lcore of the calling lcore.
 * @return 0; -EINVAL for NULL or the wrong lcore (nothing starts); a
 *   negative errno if a thread could not start or irq mode could not be
 *   set up.
 */
int sirq_lcore_main(void *arg);

/**
 * Ask the dispatcher to return. A stop asked before the launch is kept:
 * the next sirq_lcore_main() returns at once.
 *
 * Context: any thread, and signal handlers (async-signal-safe); never
 * waits. Every softirq pass of the lcore, the dispatcher's and sirqd's,
 * ends at its next vector boundary from here (sirq_cpu_set_stopping()),
 * whatever max_time_ns and max_restart allow: the dispatcher returns
 * within one handler run (NET_RX's is bounded by netdev_budget_us).
 *
 * @param lc  the lcore; NULL does nothing.
 */
void sirq_lcore_stop(struct sirq_lcore *lc);

/**
 * Ask every lcore's dispatcher to return.
 *
 * Context: any thread, and signal handlers (async-signal-safe); never
 * waits.
 */
void sirq_lcore_stop_all(void);

/**
 * Free an lcore: frees the mbufs still staged, unregisters it from
 * telemetry.
 *
 * Context: any thread, once its dispatcher has returned (after
 * rte_eal_wait_lcore()); waits for the lcore registry's spinlock, which
 * telemetry commands and sirq_stats_json() hold while they read.
 *
 * @param lc  the lcore; NULL does nothing.
 */
void sirq_lcore_free(struct sirq_lcore *lc);

/**
 * The engine CPU of an lcore, to take vectors (sirq_vector_alloc()),
 * raise them, schedule tasklets and disable bottom halves.
 *
 * Context: any thread; never waits.
 *
 * @param lc  the lcore.
 * @return its CPU, valid until sirq_lcore_free(); NULL for a NULL @p lc.
 */
struct sirq_cpu *sirq_lcore_cpu(struct sirq_lcore *lc);

/**
 * The lcore's id.
 *
 * Context: any thread; never waits.
 *
 * @param lc  the lcore.
 * @return its lcore id; RTE_MAX_LCORE for a NULL @p lc.
 */
unsigned int sirq_lcore_id(const struct sirq_lcore *lc);

/*
 * Remote calls: work for an lcore from another CPU.
 */

/**
 * Remote calls queued on one lcore at most (sirq_lcore_call_async());
 * the next one is refused with -ENOSPC.
 */
#define SIRQ_LCORE_CALLS_MAX 64

/**
 * A remote call's function: runs on the lcore, with its execution lock
 * held, as a handler does (the kernel's smp_call_function_single() and
 * irq_work_queue_on() run theirs in interrupt context on the target
 * CPU). It may use the lcore's state (its mempool cache, its rte_timer
 * list, sirq_tx()) and must not wait: every packet of the lcore waits
 * for it.
 *
 * @param lc   the lcore it runs on.
 * @param arg  the argument given with the call.
 * @return what the caller gets from sirq_call_wait() or sirq_lcore_call().
 */
typedef int (*sirq_call_fn_t)(struct sirq_lcore *lc, void *arg);

/**
 * A remote call in flight, and its completion. The caller owns it: it
 * passes it to sirq_lcore_call_async() and keeps it valid, neither
 * freed nor reused, until sirq_call_done() has returned true or
 * sirq_call_wait() has returned. The library never frees it. Its
 * fields are the library's while the call is in flight; read the
 * result with sirq_call_wait().
 */
struct sirq_call {
	sirq_call_fn_t fn;		/**< the function */
	void *arg;			/**< its argument */
	int result;			/**< its return value, or -ECANCELED */
	uint32_t state;			/**< internal: queued, done, a waiter */
};

/**
 * Run @p fn(@p lc, @p arg) on lcore @p lc, with its execution lock held,
 * and return at once. Under every policy and execution model the call
 * runs at the lcore's next look (the dispatcher's, or sirqd's or a
 * softirq thread's before its pass, whichever holds the lock then): in
 * one softirq pass at most, never behind the caller's scheduling. A
 * sleeping irq-mode dispatcher is kicked awake for it.
 *
 * Where it runs:
 * - in a handler of @p lc, or with its bottom halves off: at once, on
 *   the caller (the call is done when this returns);
 * - on one of the lcore's own threads (its app_fn, sirqd): at once,
 *   bottom halves off around it;
 * - while the lcore runs (from the start of sirq_lcore_main() until it
 *   returns, as its remote-call mutex orders them): at the lcore's
 *   next look; the calls of one caller run in order;
 * - before the launch or after sirq_lcore_main() returned: at once, on
 *   the caller, bottom halves off around it, under that mutex (a launch
 *   meanwhile waits for it).
 *
 * A call still queued when the dispatcher returns (sirq_lcore_stop())
 * runs then, on the dispatcher, before it returns; one still queued at
 * sirq_lcore_free() fails with -ECANCELED. Their waiters are woken.
 *
 * Context: any thread. Never waits for the lcore: only for the
 * remote-call mutex, which a direct run before the launch or after the
 * return holds.
 *
 * @param lc   the lcore.
 * @param c    the completion, the caller's (struct sirq_call).
 * @param fn   the function.
 * @param arg  its argument.
 * @return 0 (queued, or done already); -EINVAL for a NULL argument;
 *   -ENOSPC when SIRQ_LCORE_CALLS_MAX calls are queued already (nothing
 *   queued; try again after one completes).
 */
int sirq_lcore_call_async(struct sirq_lcore *lc, struct sirq_call *c,
			  sirq_call_fn_t fn, void *arg);

/**
 * Has the call run (or been cancelled)? Then its memory is the caller's
 * again.
 *
 * Context: any thread; never waits.
 *
 * @param c  a call given to sirq_lcore_call_async().
 * @return true once done; false while in flight, or for NULL.
 */
bool sirq_call_done(const struct sirq_call *c);

/**
 * Wait for a call to run, and give its result.
 *
 * Context: any thread but a handler or bottom-half section of any lcore,
 * or an lcore's own thread (its dispatcher and app_fn, sirqd, softirq
 * and NAPI threads): two lcores that waited for each other would both
 * stop. Sleeps (a futex) until the lcore ran the call: one softirq pass
 * at most while it runs.
 *
 * @param c  a call given to sirq_lcore_call_async().
 * @return the function's return value; -ECANCELED if it was cancelled
 *   at sirq_lcore_free(); -EDEADLK from a handler or an lcore's own
 *   thread while the call is in flight (nothing waited; poll it with
 *   sirq_call_done()); -EINVAL for NULL.
 */
int sirq_call_wait(struct sirq_call *c);

/**
 * Run @p fn(@p lc, @p arg) on lcore @p lc, with its execution lock held,
 * and wait until it has run: sirq_lcore_call_async() and
 * sirq_call_wait() with a completion on the caller's stack. This is how
 * a thread on another CPU changes what the lcore's handlers use without
 * ever stopping the lcore: the lcore runs the change between two
 * handlers, and the caller's own scheduling delays only the caller.
 * sirq_lcore_set_params() and sirq_napi_set() use it.
 *
 * Context: as sirq_call_wait(); from a handler or bottom-half section
 * of @p lc itself, or one of its own threads, it runs at once instead.
 *
 * @param lc   the lcore.
 * @param fn   the function.
 * @param arg  its argument.
 * @return the function's return value; -EDEADLK from a handler or
 *   bottom-half section of another lcore, or from another lcore's own
 *   thread (nothing was queued); -ENOSPC for a full queue; -EINVAL for
 *   a NULL argument.
 */
int sirq_lcore_call(struct sirq_lcore *lc, sirq_call_fn_t fn, void *arg);

/*
 * The control plane.
 */

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
	uint16_t napi_weight;		/**< packets per queue per poll, 8..256 */
	uint16_t netdev_budget;		/**< packets per NET_RX run, 1..10000 */
	uint32_t netdev_budget_us;	/**< time per NET_RX run, 1..100000 us */
	uint32_t irq_tick_us;		/**< irq mode: longest sleep */
	/** SCHED_FIFO priority lent to a preempted worker; 0 never. */
	int worker_boost_priority;
};

/**
 * Read an lcore's run-time parameters.
 *
 * Context: any thread; never waits. A change made meanwhile by another
 * thread may be seen half made.
 *
 * @param lc  the lcore.
 * @param p   where to write them.
 * @return 0; -EINVAL if @p lc or @p p is NULL.
 */
int sirq_lcore_get_params(const struct sirq_lcore *lc,
			  struct sirq_lcore_params *p);

/**
 * Change an lcore's run-time parameters, the policy among them, while it
 * runs (or before it is launched). The change is made on the lcore, with
 * its execution lock held (sirq_lcore_call()), so the next softirq pass,
 * on the dispatcher or in sirqd, obeys it; open deferral windows are
 * closed. The execution model's softirq threads are then started or
 * stopped on the caller.
 *
 * Context: any thread but another lcore's handlers, bottom-half
 * sections and own threads (-EDEADLK); from the lcore's app_fn and its
 * handlers it applies at once. Elsewhere it waits for the remote call,
 * which the lcore runs at its next look (one softirq pass at most), then
 * for the softirq threads to start or stop.
 *
 * @param lc  the lcore.
 * @param p   the new parameters, all of them (read them first with
 *   sirq_lcore_get_params() to change a few).
 * @return 0 once applied; -EINVAL if @p lc or @p p is NULL or a value is
 *   out of its sirq_param_range(), or expedited_mask names a vector
 *   without a handler (nothing changed; the log line names the field
 *   and its range);
 *   -EDEADLK from another lcore's handler or thread; -ENOSPC when
 *   SIRQ_LCORE_CALLS_MAX remote calls are queued (nothing changed).
 */
int sirq_lcore_set_params(struct sirq_lcore *lc,
			  const struct sirq_lcore_params *p);

/**
 * The scheduling class and priority of a softirq thread of the execution
 * models (SIRQ_POLICY_RT's ktimers/N, SIRQ_POLICY_PUSHDOWN's
 * sirq-VECTOR/N), named by its lead vector: the vector under pushdown,
 * SIRQ_TIMER for ktimers. By default ktimers is SCHED_FIFO 1 (the lowest,
 * as Linux 6.13 has it) and the pushdown threads SCHED_OTHER. Applied now
 * to a running thread, and at every start of the thread after. A
 * real-time class the process may not have (no CAP_SYS_NICE, no
 * RLIMIT_RTPRIO) falls back to SCHED_OTHER at the thread's start, with a
 * warning.
 *
 * The threads exist while the lcore runs (sirq_lcore_main()) under a
 * model that wants them, one per lead vector registered when the lcore
 * starts or its parameters change; a vector allocated later runs in
 * sirqd until the next sirq_lcore_set_params(). They run the handlers as
 * the lcore, like sirqd. With @c conf.qsbr set there are none.
 *
 * Context: any thread but the softirq threads; never waits for the
 * execution lock.
 *
 * @param lc        the lcore.
 * @param vec       the thread's lead vector.
 * @param policy    SCHED_OTHER, SCHED_FIFO or SCHED_RR; -1 for the
 *   model's default (from the thread's next start).
 * @param priority  1..99 for SCHED_FIFO and SCHED_RR; 0 for SCHED_OTHER.
 * @return 0; -EINVAL for a NULL @p lc, a bad vector, class or priority
 *   (the log line names it); -EPERM if a running thread could not be
 *   moved (it keeps its class; the setting stays for its next start).
 */
int sirq_lcore_thread_sched(struct sirq_lcore *lc, unsigned int vec,
			    int policy, int priority);

#ifndef SCHED_DEADLINE
/** Linux's SCHED_DEADLINE, which <sched.h> may not define. */
#define SCHED_DEADLINE 6
#endif

/** The shortest EEVDF slice sirq_thread_attr_check() takes, in us. */
#define SIRQ_THREAD_SLICE_MIN_US 100
/** The longest: the kernel clamps to 0.1..100 ms without saying so. */
#define SIRQ_THREAD_SLICE_MAX_US 100000

/**
 * What the scheduler is told of a softirq thread: its class and what
 * that class takes. Zeroed, then @c policy and its fields set.
 */
struct sirq_thread_attr {
	/** SCHED_OTHER, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE; -1: the
	 *  model's default (from the thread's next start). */
	int policy;
	/** 1..99 for SCHED_FIFO and SCHED_RR; 0 otherwise. */
	int priority;
	/** SCHED_OTHER: the EEVDF slice (Linux 6.12 on: a shorter one
	 *  picks the thread sooner after it wakes, for the same share),
	 *  SIRQ_THREAD_SLICE_MIN_US..SIRQ_THREAD_SLICE_MAX_US; 0: the
	 *  kernel's. Else 0. */
	uint32_t slice_us;
	/** SCHED_DEADLINE: CPU time per period, >= 1; else 0. */
	uint32_t runtime_us;
	/** SCHED_DEADLINE: runtime_us..period_us; 0: the period. */
	uint32_t deadline_us;
	/** SCHED_DEADLINE: within the kernel's
	 *  /proc/sys/kernel/sched_deadline_period_{min,max}_us. */
	uint32_t period_us;
};

/**
 * Is @p a a setting sirq_lcore_thread_attr() takes? The ranges only; the
 * kernel's own answer (a slice it ignores, a deadline thread's affinity)
 * comes when a thread is moved.
 *
 * Context: any thread; never waits (reads the deadline period limits
 * from /proc).
 *
 * @param a    the attributes.
 * @param why  filled with the reason when not (may be NULL).
 * @param len  size of @p why.
 * @return 0, or -EINVAL with @p why naming the field and its range.
 */
int sirq_thread_attr_check(const struct sirq_thread_attr *a, char *why,
			   size_t len);

/**
 * The scheduling attributes of a softirq thread of the execution models,
 * named by its lead vector as for sirq_lcore_thread_sched(), which is
 * this with only a class and priority. Applied now to a running thread
 * (sched_setattr() on its TID), and at every start of the thread after,
 * by the thread itself before its first pass: a start whose attributes
 * are refused makes the lcore's launch or sirq_lcore_set_params() fail
 * with the errno, the thread not started. (A real-time class without
 * the permission still falls back to SCHED_OTHER, with a warning, as
 * sirq_lcore_thread_sched() says.)
 *
 * SCHED_DEADLINE: the kernel admits a deadline task only when its CPU
 * affinity spans its root domain, while kernel.sched_rt_runtime_us >= 0
 * (else -EPERM), and refuses to narrow a deadline task's affinity after
 * (-EBUSY). A softirq thread is pinned to its lcore's CPU, so it needs
 * an exclusive cpuset for that CPU (cgroup v1 cpuset.cpu_exclusive and
 * no load balancing, or v2 cpuset.cpus.partition=root), or
 * sched_rt_runtime_us = -1. Such a thread is never lent a SCHED_FIFO
 * priority (it outranks every FIFO task). A loan to another class ends
 * with the thread's full attributes restored, slice included.
 *
 * Context: any thread but the softirq threads; never waits for the
 * execution lock.
 *
 * @param lc    the lcore.
 * @param vec   the thread's lead vector.
 * @param a     the attributes (sirq_thread_attr_check()).
 * @return 0; -EINVAL for a NULL @p lc or @p a, a bad vector, or @p a out
 *   of range (the log line names the field); for a running thread,
 *   the kernel's refusal (it keeps its attributes; the setting stays for
 *   its next start): -EPERM or -EBUSY (the deadline affinity rule, the
 *   log line says which), -EOPNOTSUPP when the kernel ignores a fair
 *   task's slice (before Linux 6.12).
 */
int sirq_lcore_thread_attr(struct sirq_lcore *lc, unsigned int vec,
			   const struct sirq_thread_attr *a);

/*
 * NAPI contexts: netdev-genl's napi-get and napi-set, and busy polling.
 */

/**
 * Are @p p usable NAPI settings? A deferral needs its timeout, and
 * timeouts are at most 1 s (the kernel takes any; a masked queue whose
 * re-poll is seconds away is a mistake here).
 *
 * Context: any thread; never waits.
 *
 * @param p  the settings.
 * @return 0, or -EINVAL (NULL, defer_hard_irqs without
 *   gro_flush_timeout_ns, a timeout above 1 s, threaded not an enum
 *   sirq_napi_threaded value).
 */
int sirq_napi_params_check(const struct sirq_napi_params *p);

/**
 * NAPI contexts (Rx queues) of the lcore: ids 0 .. n-1, in the order
 * sirq_lcore_add_rx_queue() added them.
 *
 * Context: any thread; never waits.
 *
 * @param lc  the lcore.
 * @return how many; 0 for a NULL @p lc.
 */
unsigned int sirq_napi_count(const struct sirq_lcore *lc);

/**
 * napi-get: context @p napi_id of the lcore, its settings, state and
 * counters.
 *
 * Context: any thread; never waits. Each field is read atomically, the
 * whole is not one snapshot.
 *
 * @param lc       the lcore.
 * @param napi_id  the context, below sirq_napi_count().
 * @param info     where to write it.
 * @return 0, or -EINVAL for an unknown id or NULL.
 */
int sirq_napi_get(const struct sirq_lcore *lc, unsigned int napi_id,
		  struct sirq_napi_info *info);

/**
 * napi-set: context @p napi_id's settings, at any time, running or not.
 * A context made threaded while the lcore runs gets its thread now;
 * before that (including between the launch and the start of
 * sirq_lcore_main()'s loop) it gets it when the lcore starts. One made
 * unthreaded keeps its idle thread until the lcore stops.
 *
 * Threaded busy-poll (threaded = SIRQ_NAPI_THREADED_BUSY_POLL, Linux
 * 6.19): the context is scheduled for its thread at once (or when the
 * lcore starts), and the thread polls it without end, bottom halves off
 * per poll, never completing it: the queue's Rx interrupt stays off and
 * the thread does not sleep while the mode is on. It gives up the CPU
 * only when the OS scheduler preempts it, as the kernel's thread does at
 * cond_resched(): a fair-class thread shares its CPU by its slice. Set back to enabled, the thread's next poll completes
 * it as usual; set to disabled, NET_RX takes it over at once.
 *
 * A change between NET_RX and a thread is never refused for the
 * context being scheduled (under a constant flood it always is): a
 * context NET_RX holds goes to its thread when NET_RX next comes to it,
 * one its thread holds goes to NET_RX at once.
 *
 * The settings are applied on the lcore, with its execution lock held
 * (sirq_lcore_call()); a thread the context needs is started on the
 * caller first, and stopped again if the settings are refused.
 *
 * Context: any thread but a handler or bottom-half section of the lcore,
 * and another lcore's handlers, sections and own threads (-EDEADLK).
 * Waits for the lcore's napi-set mutexes (another napi-set, a stop
 * joining the NAPI threads), then for the remote call (the lcore's next
 * look: one softirq pass at most); making a context threaded while the
 * lcore runs also waits for its new thread to start.
 *
 * @param lc       the lcore.
 * @param napi_id  the context, below sirq_napi_count().
 * @param p        the settings; copied.
 * @return 0; -EINVAL for NULL, an unknown id or bad settings
 *   (sirq_napi_params_check()); -EAGAIN if its thread could not
 *   start (nothing changed, no thread left behind); -EOPNOTSUPP for threaded with conf.qsbr
 *   (a NAPI thread reports no quiescent state); -EDEADLK, -ENOSPC as
 *   sirq_lcore_call().
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
 * Context: a thread on the lcore's CPU, outside the lcore's handlers and
 * bottom-half sections: the lcore's own thread (its app_fn), or a thread
 * without an lcore id on its CPUs. Waits for the execution lock before
 * each poll (at most the holder's next vector boundary), and spins up to
 * @p busy_poll_us between polls.
 *
 * @param lc                the lcore.
 * @param napi_id           the context, below sirq_napi_count().
 * @param budget            packets per poll, 1..256
 *   (SIRQ_BUSY_POLL_BUDGET_DEFAULT is the kernel's).
 * @param prefer_busy_poll  SO_PREFER_BUSY_POLL, above.
 * @param busy_poll_us      how long to poll while polls find nothing.
 * @return the packets taken (0 or more); -EINVAL for NULL, an unknown id
 *   or a budget not in 1..256; -EPERM from another CPU's thread or
 *   inside a handler; -EAGAIN while the lcore does not run (before
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
 * Context: as sirq_napi_busy_poll(); waits for the execution lock once
 * (at most the holder's next vector boundary).
 *
 * @param lc       the lcore.
 * @param napi_id  the context, below sirq_napi_count().
 * @return 0, -EINVAL for NULL or an unknown id, -EPERM or -EAGAIN as
 *   sirq_napi_busy_poll().
 */
int sirq_napi_suspend_irqs(struct sirq_lcore *lc, unsigned int napi_id);

/**
 * napi_resume_irqs(), as epoll calls it before it sleeps, its busy
 * poll having found nothing: with irq_suspend_timeout set, the context
 * is scheduled now, and its completion turns the interrupt back on, or
 * defers it as defer_hard_irqs says.
 *
 * Context: as sirq_napi_busy_poll(); waits for the execution lock once
 * (at most the holder's next vector boundary).
 *
 * @param lc       the lcore.
 * @param napi_id  the context, below sirq_napi_count().
 * @return as sirq_napi_suspend_irqs().
 */
int sirq_napi_resume_irqs(struct sirq_lcore *lc, unsigned int napi_id);

/*
 * Transmit.
 */

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
 * Context: the lcore's context: a handler of its CPU (an Rx function, a
 * tasklet, a timer callback, a vector of the application's), or a
 * bottom-half section on the lcore's own thread, as the kernel transmits
 * with bottom halves off on its CPU; -EPERM elsewhere. Never waits: a
 * full TX ring drops.
 *
 * @param lc   the lcore.
 * @param txq  the index sirq_lcore_add_tx_queue() returned.
 * @param m    the packet; the library owns it once the call returns 0.
 * @return 0; -EPERM outside that context (the packet is not taken);
 *   -EINVAL for NULL or a bad index.
 */
int sirq_tx(struct sirq_lcore *lc, unsigned int txq, struct rte_mbuf *m);

/**
 * Queue a burst for transmission: as sirq_tx() for each of @p pkts in
 * order, with one context check for the burst, and full buffers handed
 * to the PMD on the way. Ownership of all @p n packets
 * passes to the library (a packet the TX ring refuses is freed and
 * counted in tx_dropped), so the return value is @p n.
 *
 * Context: as sirq_tx(); never waits.
 *
 * @param lc    the lcore.
 * @param txq   the index sirq_lcore_add_tx_queue() returned.
 * @param pkts  the packets.
 * @param n     how many.
 * @return @p n; -EPERM outside the lcore's context (no packet is taken);
 *   -EINVAL for a NULL lcore, a bad index, or NULL @p pkts with @p n > 0.
 */
int sirq_tx_burst(struct sirq_lcore *lc, unsigned int txq,
		  struct rte_mbuf **pkts, uint16_t n);

/**
 * As sirq_tx(), and account the packet to @p t until the PMD releases it
 * (the TX completion, learnt from the mbuf's reference count, so it works
 * with any PMD). Do not use with RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE.
 *
 * Context: as sirq_tx(); never waits.
 *
 * @param lc   the lcore.
 * @param txq  the index sirq_lcore_add_tx_queue() returned.
 * @param m    the packet.
 * @param t    the sender's tracker; it must live until its packets
 *   complete or the lcore is freed.
 * @return as sirq_tx(); -ENOBUFS if SIRQ_TX_TRACK_MAX packets of this
 *   queue are in flight (the packet is not taken).
 */
int sirq_tx_tracked(struct sirq_lcore *lc, unsigned int txq,
		    struct rte_mbuf *m, struct sirq_tx_tracker *t);

/*
 * Counters and telemetry.
 */

/**
 * Copy the binding's counters of an lcore (the engine's are
 * sirq_stats_get() on sirq_lcore_cpu()).
 *
 * Context: any thread; never waits. Each counter is read atomically, the
 * set as a whole is not a single snapshot.
 *
 * @param lc  the lcore; NULL gives all zeros.
 * @param st  where to copy them; NULL does nothing.
 */
void sirq_lcore_stats_get(const struct sirq_lcore *lc,
			  struct sirq_lcore_stats *st);

/**
 * Register the /sirq/ telemetry commands: /sirq/softirqs, /sirq/stats,
 * /sirq/latency, /sirq/config, /sirq/napi, /sirq/napi_set, /sirq/params
 * and /sirq/params_set (dpdk-telemetry.py lists them with their help). A
 * command that fails answers {"error": "<reason>"}.
 *
 * Context: one thread at a time, before or after rte_eal_init(): the
 * commands go into DPDK's table, which DPDK's own libraries fill from
 * constructors before main() runs; the socket that serves them opens
 * in rte_eal_init(). Never waits. Idempotent.
 *
 * @return 0, or the negative error of rte_telemetry_register_cmd().
 */
int sirq_telemetry_register(void);

/**
 * Write the configuration and every counter of every lcore as one JSON
 * object.
 *
 * Context: any thread; it holds the lcore registry's spinlock while
 * writing, so lcores are neither created nor freed meanwhile (those wait
 * for it), and writing may block as @p f does.
 *
 * @param f  an open stream.
 * @return 0; -EINVAL for a NULL @p f; -ENOMEM; -EIO if writing failed.
 */
int sirq_stats_json(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* SIRQ_LCORE_H */
