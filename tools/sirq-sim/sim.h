/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef SIRQ_SIM_H
#define SIRQ_SIM_H

/*
 * sirq-sim: the overload policies and execution models on simulated time,
 * deterministic.
 * The real engine (sirq_core.c, sirq_policy.c) runs one CPU on a simulated
 * clock read through ops.clock_ns. Nothing sleeps and nothing runs
 * concurrently (the application's bottom-half sections hold the lock on
 * OS threads of their own, called one at a time: bh.c): seconds of
 * simulated time take milliseconds, every run with the
 * same options prints the same numbers, and any packet rate can be played,
 * 100 Gb/s line rate included. Time is kept in picoseconds so that
 * per-packet costs below a nanosecond stay exact.
 *
 * What shares the CPU (irq mode of docs/design.md, "Two dispatcher modes"):
 *
 *  - the NIC: steady arrivals at a rate (pps, or Gb/s of a packet size)
 *    plus optional trains (size and gap from a fixed-seed PRNG) into an
 *    Rx ring; what finds the ring full is dropped. Arrivals are a function
 *    of time only, so every policy sees the same traffic.
 *  - the dispatcher, a hardirq that preempts every task: every irq tick
 *    (and, optionally, on an Rx interrupt with NAPI's re-arm rule) it
 *    schedules the ring's NAPI context if the ring holds packets (which
 *    raises NET_RX unless it was scheduled) and calls sirq_irq_exit().
 *    Its inline work is charged to no task, as with IRQ time accounting.
 *  - NET_RX, net_rx_action(): the engine's own (sirq_napi_core.c, the
 *    one the DPDK binding runs), with the Rx ring as its NAPI context:
 *    weight 64, netdev budget 300, 2 ms. The ring is polled once per
 *    run; a full poll re-raises NET_RX, a short one completes the
 *    context and re-arms the Rx interrupt. Each packet costs --cost-ns
 *    and is forwarded into a TX buffer that is flushed every 32 packets,
 *    as sirq_tx() does; NET_TX flushes the rest.
 *  - tasks under a fair-share scheduler, EEVDF as in Linux >= 6.6:
 *    vruntime weighted by nice, eligibility against the weighted average,
 *    earliest virtual deadline first, a base slice checked at the
 *    scheduler tick (--sched-hz), lag kept across sleep, RUN_TO_PARITY
 *    against wake-up preemption, sched_yield() pushing the deadline one
 *    slice on. The tasks are the application's threads and the worker.
 *  - the application: --app-threads threads; each wakes every
 *    --app-period (gaps drawn in [0, 2 period] with --app-random) and
 *    wants --app-hold of CPU, as apps/common/app_load.c does on the real
 *    scheduler. need_resched is "one of them is runnable". hold = period
 *    makes a steady load.
 *  - the worker: the kernel's ksoftirqd by default (passes charged as fair
 *    time; cond_resched(), which only switches when the scheduler asked),
 *    or libsirq's sirqd with --worker sirqd (each pass boosted above the
 *    fair class, so it does not move its vruntime and the fair class
 *    keeps its lag; sched_yield() between passes).
 *  - the execution models' softirq threads: a task per bit of
 *    sirq_threads_wanted(), attached to the engine, woken by its
 *    ops.wake (a raise), running sirq_thread_run() until it returns
 *    SLEEP, one round per call, charged as the worker's passes are.
 *    rt's ktimers/0 is SCHED_FIFO 1 (a class above the fair one, FIFO
 *    among equals, no slices, no RT throttling); the pushdown's
 *    sirq-<vector>/0 are fair tasks (--thread-sched changes both).
 *    Under rt the dispatcher's pass stands for the NIC's irq thread at
 *    SCHED_FIFO 50: it preempts every task, as the hardirq does.
 *  - TIMER: with --timer-us, a periodic timer that the dispatcher's tick
 *    raises when due (the binding's rte_timer list at its tick).
 *  - the BH lock: passes and rounds run at once, so only the
 *    application's bottom-half sections (--app-bh-us) hold it across
 *    time, each on an OS thread of its own (bh.c) so that the engine
 *    sees another owner. A softirq thread's round (or another section)
 *    that waits for it gets ops.lock_wait: priority inheritance, the
 *    holder runs the rest of its section at once and releases it. The
 *    dispatcher and the worker only try the lock; the worker then sleeps
 *    until the section ends. NET_RX is registered SIRQ_VEC_BH_SAFE, which
 *    the pushdown honours and pushdown-locked does not.
 *
 * Latency is counted per packet from its arrival on the ring to the start
 * of its processing (NET_RX), and from its hand-over to the TX buffer to
 * the flush (NET_TX); stalls are the engine's NET_RX raise-to-run >= 8 ms,
 * as l2fwd-sirq and the patch author's tracker count them. Everything else
 * comes from the engine's counters.
 *
 * A file per part, sharing this header: hist.c (latency histograms),
 * pktq.c (packet FIFOs), sched.c (the scheduler), nic.c (the NIC, its
 * NAPI poll, NET_RX and NET_TX), bh.c (the OS threads that hold the BH
 * lock for the application's sections), sim.c (the engine's environment,
 * the dispatcher, the application, the worker, the softirq threads, the
 * timer, the event loop), report.c (results as JSON and tables), main.c
 * (scenarios, command line).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sirq.h>

#include "sirq_napi_core.h"

#define PS_PER_NS	UINT64_C(1000)
#define PS_PER_US	(1000 * PS_PER_NS)
#define PS_PER_MS	(1000 * PS_PER_US)
#define PS_PER_S	(1000 * PS_PER_MS)
#define NS_PER_US	UINT64_C(1000)
#define NS_PER_MS	(1000 * NS_PER_US)
#define TIME_NEVER	UINT64_MAX

/* Time starts here, not at 0: the engine reads a raise stamp of 0 as "none". */
#define SIM_EPOCH_PS	PS_PER_S

/* Ethernet on the wire: 8 B preamble and SFD, 12 B inter-frame gap. */
#define ETH_WIRE_OVERHEAD	20
#define ETH_MIN_FRAME		64
#define ETH_MAX_FRAME		9216	/* jumbo */
#define BITS_PER_BYTE		8

/* A common NIC ring size (the ethtool -g maximum of ixgbe and i40e). */
#define RX_RING_DEFAULT		4096
#define RX_RING_MAX		(1u << 20)

/* EEVDF (kernel/sched/fair.c): NICE_0_LOAD and the nice-to-weight table. */
#define NICE_0_WEIGHT		1024
#define NICE_MIN		(-20)
#define NICE_MAX		19
/*
 * sysctl_sched_base_slice: 0.75 ms times 1 + ilog2(CPUs), capped at 8
 * CPUs, so 3 ms on the servers the patch was measured on.
 */
#define SCHED_SLICE_US_DEFAULT	3000
/* CONFIG_HZ of Debian's kernels: slices end at a 4 ms tick. */
#define SCHED_HZ_DEFAULT	250
#define SCHED_HZ_MAX		10000

/* Application progress: one unit per microsecond of its CPU time. */
#define APP_WORK_UNIT_PS	PS_PER_US
#define APP_MAX_THREADS		16

#define DURATION_MS_DEFAULT	10000
/* Ten simulated minutes still run in seconds at moderate rates. */
#define DURATION_MS_MAX		600000
#define SEED_DEFAULT		1
/* Second PRNG stream family (the application), independent of the NIC's. */
#define APP_SEED_SALT		UINT64_C(0x5eed5eed5eed5eed)
/* --tick-hz values in one run: 0, 100, 250 and 1000 and a spare. */
#define MAX_TICK_HZ		5

/*
 * Latency histogram: 16 sub-buckets per power of two (6 % resolution),
 * values below 16 ns exact, up to 2^44 ns (4.9 hours).
 */
#define HIST_SUB_BITS		4
#define HIST_SUB		(1u << HIST_SUB_BITS)
#define HIST_OCTAVES		40
#define HIST_BUCKETS		(HIST_SUB + HIST_OCTAVES * HIST_SUB)

/* A uniform draw in [min, max]. */
struct range {
	uint64_t min;
	uint64_t max;
};

enum worker_model {
	WORKER_SIRQD = 0,	/* boosted passes, sched_yield() */
	WORKER_KERNEL,		/* fair-class passes, cond_resched() */
};

/*
 * Scheduling class of the models' softirq threads (sirq_threads_wanted()):
 * as the kernel has them (rt's ktimers SCHED_FIFO 1, the pushdown's
 * threads SCHED_OTHER), or all of them in one class.
 */
enum thread_sched {
	THREAD_SCHED_MODEL = 0,
	THREAD_SCHED_OTHER,
	THREAD_SCHED_FIFO,
};

/* The lowest SCHED_FIFO priority: ktimers/N's, and --thread-sched fifo's. */
#define SCHED_FIFO_PRIO_MIN	1
/* A forced-threaded interrupt handler's priority (irq/N-name). */
#define SCHED_FIFO_PRIO_IRQ	50

/* Everything one run depends on. */
struct sim_conf {
	const char *scenario;
	enum sirq_policy_id policy;
	uint32_t tick_hz;
	uint64_t duration_ps;
	uint64_t seed;
	/* traffic */
	uint64_t rate_pps;
	uint32_t pkt_size;
	struct range train_pkts;	/* max 0: no trains */
	struct range train_gap_ps;
	uint64_t cost_ps;		/* NET_RX per packet, forwarding included */
	uint64_t poll_cost_ps;		/* per NAPI poll and per NET_TX run */
	uint32_t ring;
	/* dispatcher */
	uint64_t irq_tick_ps;
	uint64_t rx_irq_ps;		/* Rx interrupt delay; 0: tick only */
	/* scheduler and tasks */
	uint32_t sched_hz;
	uint64_t slice_ps;
	enum worker_model worker;
	int worker_nice;
	uint32_t app_threads;
	uint64_t app_hold_ps;
	uint64_t app_period_ps;
	bool app_random;
	int app_nice;
	/*
	 * Bottom-half sections of the application: each thread holds
	 * bottom halves off (sirq_bh_disable()) for the first app_bh_ps of
	 * every app_bh_every_ps of its CPU time; 0: never.
	 */
	uint64_t app_bh_ps;
	uint64_t app_bh_every_ps;
	/* the models' softirq threads */
	enum thread_sched thread_sched;
	int thread_nice;
	/* a periodic timer on TIMER; period 0: none */
	uint64_t timer_period_ps;
	uint64_t timer_cost_ps;
};

/* splitmix64 (Steele, Lea, Flood 2014): any seed works, 0 included. */
static inline uint64_t
prng_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t
range_draw(uint64_t *state, struct range r)
{
	if (r.max <= r.min)
		return r.min;
	return r.min + prng_next(state) % (r.max - r.min + 1);
}

static inline uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * Latency histogram in nanoseconds, fed in picoseconds.
 */
struct hist {
	uint64_t count[HIST_BUCKETS];
	uint64_t samples;
	uint64_t max_ns;
	double sum_ns;
};

/*
 * A FIFO of packets as runs of steady spacing: {first time, spacing,
 * count}, in ps. At most @limit packets; what does not fit is dropped.
 */
struct seg {
	uint64_t t0;
	uint64_t dt;
	uint64_t n;
};

struct pktq {
	struct seg *seg;
	uint32_t cap;		/* segments */
	uint32_t head;
	uint32_t nb;
	uint64_t pkts;
	uint64_t limit;
};

/*
 * The scheduler's view of a task, and what it did.
 */
struct task {
	char name[24];
	uint32_t weight;
	int prio;		/* SCHED_FIFO priority; 0: SCHED_OTHER (fair) */
	bool runnable;
	int64_t vruntime;	/* weighted ps */
	int64_t deadline;
	int64_t vlag;		/* kept across sleep */
	bool protect;		/* RUN_TO_PARITY: its current slice is running */
	uint64_t fifo_seq;	/* SCHED_FIFO: the order it became runnable */
	uint64_t exec_ps;
	/* The worker's and the softirq threads' bodies. */
	uint64_t calls;		/* sirq_worker_run() / sirq_thread_run() */
	uint64_t wakeups;	/* woken by the engine */
	/* Found the BH lock held (SIRQ_WORKER_BUSY): asleep until released. */
	bool bh_wait;
	uint64_t bh_busy;
	/* Waits for the BH lock that the engine reported (ops.lock_wait). */
	uint64_t lock_waits;
	uint64_t lock_wait_ps;
	/* Handler runs and time in this task's context, by vector. */
	uint64_t vec_runs[SIRQ_MAX_VECTORS];
	uint64_t vec_ps[SIRQ_MAX_VECTORS];
};

struct bh_agent;

/* One application thread (apps/common/app_load.c, irq mode). */
struct app_thread {
	uint64_t prng;
	uint64_t next_wake;	/* the schedule it sleeps to */
	uint64_t left_ps;	/* CPU time its burst still wants */
	uint64_t bursts;
	/* Its bottom-half sections (conf app_bh_ps). */
	bool bh_in;		/* inside one: holds the BH lock */
	uint64_t bh_left_ps;	/* CPU time left in the section */
	uint64_t bh_until_ps;	/* CPU time to the next one */
	uint64_t bh_sections;
	struct bh_agent *agent;	/* the OS thread that holds the lock for it */
};

struct nic {
	uint16_t napi;		/* its NAPI context */
	uint64_t prng;
	uint64_t steady_next;	/* index of the next steady packet */
	uint64_t dt_ps;		/* steady spacing */
	uint64_t next_train;
	struct pktq ring;
	uint64_t arrived;
	uint64_t dropped;
	bool irq_armed;
	uint64_t irq_at;
};

/*
 * Task slots: application threads first, the worker, then the softirq
 * threads of the model (one per bit of sirq_threads_wanted(), lowest
 * lead vector first). TASK_IRQ is no task: the dispatcher's context,
 * for the handlers' accounting.
 */
#define TASK_WORKER APP_MAX_THREADS
#define TASK_THREAD0 (TASK_WORKER + 1)
/* The pushdown wants five with the simulator's vectors; room to spare. */
#define SIM_MAX_THREADS 8
#define NB_TASKS (TASK_THREAD0 + SIM_MAX_THREADS)
#define TASK_IDLE (-1)
#define TASK_IRQ (-2)

struct sim {
	const struct sim_conf *c;
	struct sirq_cpu *cpu;
	uint64_t now;
	uint64_t start;
	uint64_t end;

	struct nic nic;
	struct sirq_softnet softnet;
	struct pktq txbuf;
	uint64_t tx_flushed;
	uint64_t tx_dropped;
	uint64_t rx_processed;
	uint64_t time_squeeze;
	/* Never, with one context whose weight is below the budget. */
	uint64_t budget_exhausted;
	struct hist lat_rx;
	struct hist lat_tx;

	uint64_t next_irq_tick;
	uint64_t next_sched_tick;
	uint64_t irq_ps;
	uint64_t idle_ps;

	struct task task[NB_TASKS];
	struct app_thread app[APP_MAX_THREADS];
	uint32_t app_runnable;
	int curr;
	bool resched;
	int64_t last_avg;	/* avg_vruntime of the last non-empty queue */
	uint64_t fifo_seq;
	/* The tasks that exist in this run, in slot order. */
	int active[NB_TASKS];
	unsigned int nb_active;

	/* The softirq threads: lead vector of each, task slot per lead. */
	unsigned int nb_threads;
	unsigned int thread_lead[SIM_MAX_THREADS];
	int thread_task[SIRQ_MAX_VECTORS];
	/* Whose context runs engine code now: a task, or TASK_IRQ. */
	int ctx;
	/* The dispatcher's handler runs and time, by vector. */
	uint64_t irq_vec_runs[SIRQ_MAX_VECTORS];
	uint64_t irq_vec_ps[SIRQ_MAX_VECTORS];
	/* sirq_irq_exit() calls that ran a pass (rt: the irq thread's runs). */
	uint64_t irq_passes;

	/* The BH lock: the application thread in a section, or TASK_IDLE. */
	int bh_holder;
	/* Time a lock wait ran the holder for (not the waiter's time). */
	uint64_t pi_ps;
	uint64_t lock_waits;

	/* The periodic timer on TIMER. */
	uint64_t timer_due;	/* TIME_NEVER: raised, not yet run */
	uint64_t timer_raised_due;
	uint64_t timer_runs;
	struct hist lat_timer;	/* due to run */
};

/* One run's results, as report.c prints them. */
struct result {
	const struct sim_conf *c;
	struct sirq_stats st;
	struct hist lat_rx;
	struct hist lat_tx;
	double seconds;
	uint64_t arrived, processed, dropped, tx_flushed, tx_dropped;
	uint64_t time_squeeze;
	uint64_t app_ps, worker_ps, irq_ps, idle_ps;
	uint64_t app_softirq_ps;	/* handlers run at its sirq_bh_enable() */
	uint64_t in_ring, tx_pending;	/* packets still queued at the end */
	uint64_t app_bursts;
	uint64_t app_bh_sections;
	uint64_t threads_ps;
	uint64_t irq_passes;
	uint64_t lock_waits;
	uint64_t timer_runs;
	struct hist lat_timer;
	/* The tasks of the run (copied) and the softirq threads among them. */
	struct task task[NB_TASKS];
	unsigned int nb_threads;
	unsigned int thread_lead[SIM_MAX_THREADS];
	uint32_t thread_vecs[SIM_MAX_THREADS];	/* the model's, by thread */
	uint64_t irq_vec_runs[SIRQ_MAX_VECTORS];
	uint64_t irq_vec_ps[SIRQ_MAX_VECTORS];
	char vec_name[SIRQ_MAX_VECTORS][16];
};

/* hist.c */
uint64_t hist_upper(unsigned int b);
void hist_add_linear(struct hist *h, uint64_t l0, int64_t slope, uint64_t n);
uint64_t hist_quantile(const struct hist *h, double q);

/* pktq.c */
int pktq_init(struct pktq *q, uint64_t limit);
void pktq_fini(struct pktq *q);
uint64_t pktq_push(struct pktq *q, uint64_t t0, uint64_t dt, uint64_t n);
uint64_t pktq_time_of(const struct pktq *q, uint64_t k);
void pktq_pop(struct pktq *q, uint64_t n, uint64_t t, uint64_t cost,
	      struct hist *h, struct pktq *out, uint64_t *out_dropped);

/* sched.c */
uint32_t nice_weight(int nice);
void sched_add_task(struct sim *s, int i);
void schedule(struct sim *s);
void charge(struct sim *s, int i, uint64_t ps, bool fair);
void update_deadline(struct sim *s);
void task_wake(struct sim *s, int i);
void task_sleep(struct sim *s, int i);
void task_yield(struct sim *s, int i);

/* bh.c */
struct bh_agent *bh_agent_start(struct sirq_cpu *cpu);
void bh_agent_disable(struct bh_agent *a);
void bh_agent_enable(struct bh_agent *a);
void bh_agent_stop(struct bh_agent *a);

/* nic.c */
void nic_sync(struct sim *s);
void nic_arm_irq(struct sim *s);
unsigned int nic_napi_poll(void *ctx, uint16_t idx, uint16_t weight);
void net_rx_action(struct sirq_cpu *cpu, void *arg);
void net_tx_action(struct sirq_cpu *cpu, void *arg);

/* sim.c */
void handler_account(struct sim *s, unsigned int vec, uint64_t t0);
int sim_init(struct sim *s, const struct sim_conf *c);
void sim_run(struct sim *s);
void sim_fini(struct sim *s);

/* report.c */
void collect(struct result *r, const struct sim *s);
void json_conf(FILE *f, const struct sim_conf *c);
void json_run(FILE *f, const struct result *r, bool more);
void print_table(const struct result *const *res, unsigned int n);

#endif /* SIRQ_SIM_H */
